"""``decisions``: the decision facts (:meth:`~rl4vlm_gym.core.VLMEnv.decision`) keep their laws along the
oracle's play and off it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rl4vlm_gym.core import VLMEnv
from rl4vlm_gym.registry import EVAL_SEEDS
from rl4vlm_gym.testing.common import NotCheckable, _base, _make, _oracle, is_remote
from rl4vlm_gym.testing.remote import _card, _rules

DECISION_EPISODES = 2
"""Episodes per level the check plays with the oracle by default (1 in ``EXPENSIVE_PLAN`` envs)."""

DECISION_WALK_STEPS = 24
"""Steps per level of the check's seeded walk off the oracle's path by default (8 in ``EXPENSIVE_PLAN`` envs)."""

MAX_DECISION_BYTES = 1 << 16
"""The largest decision facts the check accepts, as JSON (64 KiB): they are logged at every step."""

MAX_FEATURES, MAX_FEATURE_CHARS = 16, 64
"""A family declares a few state features, each an int or a short string."""

NO_SOLVER_REASON = VLMEnv._decision(None).reason  # type: ignore[arg-type]  # the base class's default: no solver
"""The reason :class:`~rl4vlm_gym.core.VLMEnv`'s default ``_decision`` gives: an env with an oracle that
still gives it computes no decision facts and has not said why."""

TEMPLATE = "[...]"
"""How an admissible action that takes free text ends (WebShop's ``search[...]``): an optimal action may fill it."""

TIES = 1e-9
"""Values within this of the best are ties: all of them are optimal."""


def check_decisions(
    env_id: str,
    /,
    episodes: int | None = None,
    walk_steps: int | None = None,
    first_seed: int = 0,
    levels: Sequence[int] | None = None,
    **kwargs: Any,
) -> str:
    """The decision facts keep the laws of :class:`~rl4vlm_gym.core.Decision` in every state the check meets.

    In every state: the facts are JSON data of at most ``MAX_DECISION_BYTES``; ``optimal_actions`` are
    distinct admissible actions (or fill an admissible template of free text, ``search[...]``), at least one,
    in the order of ``obs["actions"]``; a field that is None (``steps_to_go`` -1) comes with a
    reason, and in a deterministic env ``optimal_actions`` and ``steps_to_go`` are both given or both None;
    a game of chance (``CHANCE``) gives no ``steps_to_go``; ``values``, when given, are finite returns of
    admissible actions whose argmax set (ties within ``TIES``) is ``optimal_actions``; ``features`` map at
    most ``MAX_FEATURES`` names to ints or strings of at most ``MAX_FEATURE_CHARS`` characters.

    At reset of a deterministic env, a known ``steps_to_go`` is ``optimal_steps`` (which may be -1 there only in
    an ``EXPENSIVE_PLAN`` env whose planner gave up), and an episode with a plan does not start "unsolvable". Before every oracle move
    the oracle's action is among ``optimal_actions``. After every step of a deterministic env from a state
    whose facts are known, to one whose facts are known (or that ended the episode): the action was listed
    optimal exactly when it was valid and ``steps_to_go`` fell by one, and it never fell by more. An invalid
    step leaves the facts as they were, or (having spent a step of the env's own limit: a step budget the plan
    needed, a hand near a step limit) turns them unknown, with a reason.

    The states are those of ``episodes`` oracle episodes per level (``DECISION_EPISODES``, 1 in
    ``EXPENSIVE_PLAN`` envs) and of a seeded walk of ``walk_steps`` steps per level (:func:`_walk`) whose
    moves are, in thirds, the oracle's, one the facts list as optimal and one they do not, from EVAL seeds
    from ``first_seed`` on. An env with an oracle whose ``decision()`` gives the base class's "no solver" fails:
    a family that cannot compute the facts overrides ``_decision`` with its own reason. An oracle-free env
    (``HAS_ORACLE = False``) without facts passes with a note; one with facts has them checked on the walk."""
    card = _card(env_id, kwargs)
    if is_remote(env_id) and _rules(env_id, kwargs).get("EXPENSIVE_PLAN"):
        kwargs = {"optimal_steps_at_reset": True, **kwargs}  # the server plans only when asked, and cannot be asked
    env = _make(env_id, **{**kwargs, "obs_mode": "text"})
    try:
        base = _base(env)
        facts = base.facts()
        has_oracle, expensive, name = facts["HAS_ORACLE"], facts["EXPENSIVE_PLAN"], facts["name"]
        if has_oracle and not _oracle(base):
            raise NotCheckable("the server hides its oracle and its decision facts: start it with --expose-oracle to check them")
        levels = list(range(len(card.levels)) if levels is None else levels)
        episodes = (1 if expensive else DECISION_EPISODES) if episodes is None else episodes
        walk_steps = (DECISION_WALK_STEPS // 3 if expensive else DECISION_WALK_STEPS) if walk_steps is None else walk_steps
        seen = _Seen(name, has_oracle)
        if not has_oracle:
            obs, _ = env.reset(seed=EVAL_SEEDS.start + first_seed, options={"level": levels[0]})
            if _facts(base, obs, bool(base.facts()["CHANCE"]), f"level {levels[0]}, reset", seen)["optimal_actions"] is None:
                return seen.report()  # oracle-free without facts: nothing to walk for
        if has_oracle:
            for i in range(first_seed, first_seed + episodes):
                for level in levels:
                    _oracle_episode(env, base, level, EVAL_SEEDS.start + i, seen)
        for level in levels:
            _walk(env, base, level, EVAL_SEEDS.start + first_seed, walk_steps, has_oracle, seen)
    finally:
        env.close()
    return seen.report()


class _Seen:
    """What the check met: states, states with facts, reasons given for missing ones, checked moves, the largest facts."""

    def __init__(self, name: str, has_oracle: bool) -> None:
        self.name, self.has_oracle = name, has_oracle
        self.states = self.known = self.moves = self.invalid = self.largest = 0
        self.reasons: dict[str, int] = {}

    def count(self, decision: Mapping[str, Any], size: int) -> None:
        assert not (self.has_oracle and decision["reason"] == NO_SOLVER_REASON), (
            f"{self.name} has an oracle but no decision facts; override _decision or give the reason "
            f"(decision() says {NO_SOLVER_REASON!r})"
        )
        self.states, self.largest = self.states + 1, max(self.largest, size)
        if decision["optimal_actions"] is not None:
            self.known += 1
        else:
            self.reasons[decision["reason"]] = self.reasons.get(decision["reason"], 0) + 1

    def report(self) -> str:
        if not self.known and not self.has_oracle:
            return f"SKIPPED: oracle-free (HAS_ORACLE = False) and no decision facts ({_reasons(self.reasons)})"
        text = f"optimal actions known in {self.known}/{self.states} states, {self.moves} moves checked against them"
        if self.invalid:
            text += f" ({self.invalid} invalid)"
        if self.reasons:
            text += f"; none in {self.states - self.known}: {_reasons(self.reasons)}"
        return text + f"; at most {self.largest} bytes of JSON a state"  # what each step of an episode log carries


def _reasons(reasons: Mapping[str, int]) -> str:
    return ", ".join(f"{reason!r} x{n}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])


def _oracle_episode(env: Any, base: VLMEnv, level: int, seed: int, seen: _Seen) -> None:
    """One episode of oracle moves: the facts before each, the oracle's move among the optimal ones."""
    obs, _ = env.reset(seed=seed, options={"level": level})
    chance = bool(base.facts()["CHANCE"])
    at = f"level {level} seed {seed}"
    before = _facts(base, obs, chance, f"{at}, reset", seen)
    if _assert_reset(base, before, chance, at) < 0 and base.facts()["EXPENSIVE_PLAN"]:
        return  # the planner gave up: without a plan its oracle searches again at every step (as the oracle check skips it)
    done, step = False, 0
    while not done:
        action = _oracle_move(base, before, f"{at}, step {step}")
        obs, _, terminated, truncated, info = env.step(action)
        step, done = step + 1, terminated or truncated
        after = _facts(base, obs, chance, f"{at}, step {step}", seen, over=done)
        _assert_move(before, after, action, info, terminated, truncated, chance, f"{at}, step {step}", seen)
        before = after


def _walk(env: Any, base: VLMEnv, level: int, seed: int, steps: int, oracle: bool, seen: _Seen) -> None:
    """``steps`` seeded steps that test the facts off the oracle's path, new episodes as they end: in thirds, the
    oracle's move (held to the facts there too), a move the facts list as optimal, and one they do not (a move
    missing from them is met there). In ``EXPENSIVE_PLAN`` envs, where the facts of each state off the plan are a
    search, no oracle moves and a quarter of unlisted ones, in fewer steps: a move missing from the facts is met
    less surely there (on Walk flagged EXPENSIVE_PLAN, OnlyOracleListed and OracleNotOptimal pass)."""
    rng = np.random.default_rng(seed)
    expensive = bool(base.facts()["EXPENSIVE_PLAN"])
    oracle = oracle and not expensive
    off_plan = 3 / 4 if expensive else 2 / 3  # above it, an unlisted move: in a planner env, a new search per state
    obs: Mapping[str, Any] = {}
    before: dict[str, Any] = {}
    episode, done, chance, at = 0, True, False, ""
    for step in range(steps):
        if done:
            obs, _ = env.reset(seed=seed + 1000 * episode, options={"level": level})
            chance, episode = bool(base.facts()["CHANCE"]), episode + 1
            at = f"level {level} seed {seed + 1000 * (episode - 1)} (walk)"
            before = _facts(base, obs, chance, f"{at}, reset", seen)
        actions, listed = list(obs["actions"]), before["optimal_actions"] or []
        kind = float(rng.random())
        if kind < 1 / 3 and oracle:
            action = _oracle_move(base, before, f"{at}, step {step}")
        else:
            pool = (listed if kind < off_plan else [a for a in actions if a not in listed]) or actions
            action = pool[int(rng.integers(len(pool)))] if pool else "look"
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        after = _facts(base, obs, chance, f"{at}, step {step}", seen, over=done)
        _assert_move(before, after, action, info, terminated, truncated, chance, f"{at}, step {step}", seen)
        before = after


def _place(action: Any, actions: list[str]) -> int | None:
    """Where ``action`` stands in ``actions``: its index, or that of the template it fills (``search[...]``, an
    admissible action whose argument is free text: WebShop's search); None if it is not admissible."""
    if not isinstance(action, str):
        return None
    if action in actions:
        return actions.index(action)
    for i, template in enumerate(actions):
        if template.endswith(TEMPLATE) and action.startswith(template[: -len(TEMPLATE) + 1]) and action.endswith("]"):
            return i
    return None


def _oracle_move(base: VLMEnv, facts: Mapping[str, Any], at: str) -> str:
    """The oracle's move, which must be among the optimal actions when they are known."""
    action = base.oracle_action()
    listed = facts["optimal_actions"]
    assert listed is None or action in listed, f"{at}: the oracle's action {action!r} is not among optimal_actions {listed}"
    return action


def _assert_reset(base: VLMEnv, facts: Mapping[str, Any], chance: bool, at: str) -> int:
    """At reset of a deterministic env, a known ``steps_to_go`` is the episode's ``optimal_steps`` (which may be -1
    only in an ``EXPENSIVE_PLAN`` env, a planner that gave up), and an episode with a plan does not start
    "unsolvable from here" (the facts may still not be known, with another reason); returns ``optimal_steps``."""
    optimal, steps = int(base.optimal_steps), facts["steps_to_go"]
    if steps >= 0:
        agree = optimal == steps or (optimal < 0 and bool(base.facts()["EXPENSIVE_PLAN"]))  # -1 there: the planner gave up
    else:
        agree = optimal < 0 or "unsolvable" not in (facts["reason"] or "")  # a solvable start is not "unsolvable"
    assert chance or agree, (
        f"{at}: steps_to_go={facts['steps_to_go']} at reset, but optimal_steps={optimal}: both count the fewest steps from the start"
    )
    return optimal


def _assert_move(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    action: str,
    info: Mapping[str, Any],
    terminated: bool,
    truncated: bool,
    chance: bool,
    at: str,
    seen: _Seen,
) -> None:
    """The laws of one step between the facts ``before`` and ``after`` it."""
    valid = bool(info["action"]["valid"])
    if not valid:
        seen.invalid += 1
        # It changes no fact, but may spend a step the env's own limit left (a step budget the plan needed: "unsolvable
        # from here"; a hand near the games' step limit): the facts may then turn unknown, with their reason.
        spent = after["optimal_actions"] is None
        if not (terminated or truncated or spent):
            assert after == before, f"{at}: an invalid step ({action!r}) changed the decision facts: {before} -> {after}"
    if chance or before["optimal_actions"] is None or truncated:
        return  # nothing to hold the move to (a cut by the time limit or a rule ends no solution)
    went, came = before["steps_to_go"], after["steps_to_go"]
    if came < 0 and not terminated and "unsolvable" not in (after["reason"] or ""):
        return  # the solver gave up here (a planner's bound): nothing known to compare with
    seen.moves += 1
    listed = action in before["optimal_actions"]
    drops = valid and came == went - 1
    assert listed == drops and (came < 0 or came >= went - 1), (
        f"{at}: {action!r} ({'valid' if valid else 'invalid'}) {'is' if listed else 'is not'} among optimal_actions "
        f"{before['optimal_actions']}, and steps_to_go went {went} -> {came}: exactly the valid moves that lower it by one are optimal"
    )


def _facts(base: VLMEnv, obs: Mapping[str, Any], chance: bool, at: str, seen: _Seen, over: bool = False) -> dict[str, Any]:
    """``decision()`` in the state ``obs`` shows, checked for the laws every state keeps (``over``: after the
    episode's end, where no decision is left: the base class's facts; after a time limit's cut, not checked)."""
    facts = base.decision()
    if over:
        return facts
    size = len(json.dumps(facts, default=repr).encode())  # repr: the features law names what is not JSON
    assert size <= MAX_DECISION_BYTES, f"{at}: the decision facts are {size} bytes of JSON, over {MAX_DECISION_BYTES}"
    optimal, values, reason, features = (facts[k] for k in ("optimal_actions", "values", "reason", "features"))
    steps = facts["steps_to_go"]
    assert (
        isinstance(steps, int)
        and not isinstance(steps, bool)
        and steps >= -1
        and (steps >= 0 or reason)
        and (optimal is not None or reason)
    ), f"{at}: steps_to_go={steps!r}, optimal_actions={optimal!r} without a reason ({reason!r}): say why a fact is missing"
    assert chance or (optimal is None) == (steps < 0), (
        f"{at}: optimal_actions={optimal!r} but steps_to_go={steps}: a deterministic env knows both or neither"
    )
    assert not (chance and steps >= 0), f"{at}: a game of chance (CHANCE) gives steps_to_go={steps}; it has no fixed plan length"
    if optimal is not None:
        actions = list(obs["actions"])
        places = [_place(a, actions) for a in optimal] if isinstance(optimal, list) else [None]
        assert optimal and len(set(optimal)) == len(optimal) and None not in places and places == sorted(places), (  # type: ignore[type-var]
            f"{at}: optimal_actions {optimal} must be distinct admissible actions, at least one, in the order of "
            f"obs['actions'] {actions[:20]}"
        )
    if values is not None:
        best = max(values.values()) if values else math.nan
        argmax = [a for a in values if values[a] >= best - TIES]
        argmax.sort(key=lambda a: _place(a, list(obs["actions"])) or 0)
        assert (
            all(_place(a, list(obs["actions"])) is not None and math.isfinite(v) for a, v in values.items()) and argmax == optimal
        ), (
            f"{at}: values {dict(list(values.items())[:10])} are not finite returns of admissible actions whose argmax "
            f"set is optimal_actions {optimal}"
        )
    if features is not None:
        assert len(features) <= MAX_FEATURES and all(
            isinstance(k, str) and (isinstance(v, int) or (isinstance(v, str) and len(v) <= MAX_FEATURE_CHARS))
            for k, v in features.items()
        ), (
            f"{at}: features {features} must map at most {MAX_FEATURES} names to ints or strings of at most "
            f"{MAX_FEATURE_CHARS} characters"
        )
    seen.count(facts, size)
    return facts
