"""``observations``: image and text carry the same information; the mission keeps the state to itself."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import REMOTE, Moves, _assert_fresh_frame, _base, _digest, _is_proxy, _make, _oracle, _state_lines
from rl4vlm_gym.testing.remote import _card


def check_observations(env_id: str, /, seeds: int = 12, steps: int = 3, **kwargs: Any) -> str:
    """Image and text carry the same information, ``image`` mode keeps state out of ``text``, and
    the mission does not give the state away.

    Over the first ``steps`` steps of ``seeds`` episodes, two situations with one mission show the
    same image exactly when they have the same state text (``describe()``; for ``CONTINUOUS`` envs,
    whose text is coarser than the image, only equal images must have equal texts); the text of ``image``
    mode holds no line of the state text, nor the value of a state line that holds two numbers (a position: ``Agent:
    row 1, column 0`` in "You moved to row 1, column 0."), at reset or after any step; the mission stays fixed
    through an episode, and missions seen at more than one reset do not each come with a single
    start state (which would mean the mission tells the state; envs that replay recorded games,
    ``FIXED_EPISODES``, have one start state per game and mission by design, and skip this law), nor
    hold at reset the value of a state line that holds two numbers (the goal's square in words), nor,
    in an env with a cheap oracle (not ``EXPENSIVE_PLAN``, not of ``CHANCE``), each with a single
    ``optimal_steps`` or a single first oracle move that differs between missions (a mission that
    tells the plan: a count, a direction).
    A remote env's frames are compared with fresh renders, and its missions with its plans, only if its server
    exposes them (``--expose-oracle``)."""
    card = _card(env_id, kwargs)
    if "image" not in card.obs_modes:
        return "no image mode: nothing to compare"
    env = _make(env_id, **{**kwargs, "obs_mode": "image"})
    base = _base(env)
    facts = base.facts()
    by_image: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    by_text: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    starts: dict[str, list[str]] = defaultdict(list)
    plans: dict[str, list[tuple[Any, Any]]] = defaultdict(list)  # mission -> (optimal_steps, oracle's first move) per start
    # A remote env's plan only from a server that exposes its oracle (computed there at each reset: no round trip of its own).
    planned = _oracle(base) and not facts["EXPENSIVE_PLAN"] and not facts["FIXED_EPISODES"]
    situations = unframed = 0
    for seed in range(seeds):
        policy = Moves(base, np.random.default_rng(seed))
        obs, info = env.reset(seed=seed)
        mission = obs["mission"]
        starts[mission].append(info["state_key"])
        if planned and not base.facts()["CHANCE"] and base.optimal_steps >= 0:
            plans[mission].append((base.optimal_steps, base.oracle_action()))
        for t in range(steps + 1):
            at = f"seed {seed}, {'reset' if t == 0 else f'step {t}'}"
            described = base.describe()
            leaked = set(_state_lines(described)) & set(_state_lines(obs["text"]))
            assert not leaked, f"{at}: obs_mode='image' carries state text in obs['text']: {sorted(leaked)}"
            told = [line for line, value in _numbered_values(described) if value in obs["text"]]
            assert not told, (
                f"{at}: obs_mode='image' gives the state away in obs['text'] in other words: {obs['text']!r} holds the "
                f"value of the state line {told[0]!r}"
            )
            told = [line for line, value in _numbered_values(described) if value in mission]
            assert t or not told, (
                f"{at}: the mission gives the state away in other words: {mission!r} holds the value of the state line {told[0]!r}"
            )
            assert obs["mission"] == mission, f"{at}: the mission changed during the episode ({mission!r} -> {obs['mission']!r})"
            unframed += not _assert_fresh_frame(base, obs["image"], at)
            image = _digest(obs["image"])
            texts = by_image[(mission, image)]
            texts.setdefault(described, at)
            if len(texts) > 1:
                (text_a, at_a), (text_b, at_b) = list(texts.items())[:2]
                raise AssertionError(
                    f"the image lacks information the text has: {at_a} and {at_b} show the same image (and mission) "
                    f"but their texts differ ({text_a!r} vs {text_b!r})"
                )
            images = by_text[(mission, described)]
            images.setdefault(image, at)
            if len(images) > 1 and not facts["CONTINUOUS"]:
                at_a, at_b = list(images.values())[:2]
                raise AssertionError(
                    f"the text lacks information the image has: {at_a} and {at_b} have the same text "
                    f"{described!r} (and mission) but different images"
                )
            situations += 1
            if t == steps:
                break
            obs, _, terminated, truncated, info = env.step(policy(obs))
            if terminated or truncated:
                break
    env.close()
    repeated = {m: set(keys) for m, keys in starts.items() if len(keys) > 1}
    if facts["FIXED_EPISODES"]:
        mission_law = "missions of replayed games (FIXED_EPISODES) not checked"
    elif repeated and len({k for keys in starts.values() for k in keys}) > 1 and all(len(k) == 1 for k in repeated.values()):
        raise AssertionError(
            f"the mission gives the state away: each of the {len(repeated)} missions seen at several resets comes "
            f"with a single start state (e.g. {next(iter(repeated))!r}); if episodes replay a fixed set of recorded "
            "games, set FIXED_EPISODES = True"
        )
    else:
        _assert_mission_keeps_the_plan(starts, plans)
        mission_law = "mission apart from the state and the plan"
    summary = f"{situations} situations over {seeds} seeds: image and text agree, no state text in image mode, {mission_law}"
    hidden = [f"cached frames against fresh renders in {unframed} situations"] if unframed else []
    if _is_proxy(base) and facts["HAS_ORACLE"] and not (planned or facts["EXPENSIVE_PLAN"] or facts["FIXED_EPISODES"]):
        hidden.append("missions against the plans")
    if hidden:
        summary += f"; {REMOTE}{' and '.join(hidden)} (the server hides them: --expose-oracle)"
    return summary


def _assert_mission_keeps_the_plan(starts: dict[str, list[str]], plans: dict[str, list[tuple[Any, Any]]]) -> None:
    """A mission seen at several resets must not tell the plan: if every such mission comes with
    one ``optimal_steps`` (a count: "the goal is 3 steps away"), or with one first move of the oracle (a
    direction: "the goal lies down and right"), and these differ between missions, the mission gives it away."""
    told = {m: plans[m] for m in plans if len(plans[m]) > 1}
    if not any(len(set(starts[m])) > 1 for m in told):
        return  # every repeated mission has one start state: the law above (a mission that tells the state)
    for i, what in enumerate(("optimal_steps", "first oracle move")):
        values = {m: {plan[i] for plan in told[m]} for m in told}
        if values and all(len(v) == 1 for v in values.values()) and len(set().union(*values.values())) > 1:
            examples = "; ".join(f"{m!r}: {what} {next(iter(v))!r}" for m, v in list(values.items())[:2])
            raise AssertionError(
                f"the mission gives the plan away: each of the {len(values)} missions seen at several resets "
                f"comes with a single {what}, which differs between missions ({examples})"
            )


def _numbered_values(described: str) -> list[tuple[str, str]]:
    """The state lines ``label: value`` whose value holds two numbers or more (a position), with the value: a
    feedback sentence that repeats it ("You moved to row 1, column 0.") tells the state in other words. (One
    number may name a thing, ALFWorld's "statue 1", which feedback names as well.)"""
    found = []
    for line in _state_lines(described):
        _, colon, value = line.partition(": ")
        value = value.strip().rstrip(".")
        if colon and len(re.findall(r"\d+", value)) >= 2:
            found.append((line, value))
    return found
