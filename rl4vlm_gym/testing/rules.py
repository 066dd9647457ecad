"""``rules``: the step contract under every reward variant."""

from __future__ import annotations

import math
import pickle
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.testing.common import REMOTE, Moves, _assert_fresh_frame, _base, _is_proxy, _make, _move
from rl4vlm_gym.testing.remote import _card


class _NoSpy:
    """A remote env's steps run in its server: no outcome to trace."""

    def take(self) -> tuple[None, None]:
        return None, None


class _OutcomeSpy:
    """Records what ``_end_of_step`` receives and returns, so rewards can be traced to events."""

    def __init__(self, base: VLMEnv) -> None:
        self.original = type(base)._end_of_step.__get__(base)
        self.before: StepOutcome | None = None
        self.after: StepOutcome | None = None
        base._end_of_step = self  # type: ignore[method-assign]

    def __call__(self, outcome: StepOutcome) -> StepOutcome:
        self.before, self.after = outcome, self.original(outcome)
        return self.after

    def take(self) -> tuple[StepOutcome | None, StepOutcome | None]:
        seen, self.before, self.after = (self.before, self.after), None, None
        return seen


def check_rules(
    env_id: str,
    /,
    seeds: int = 2,
    episodes_per_seed: int = 2,
    max_steps: int = 30,
    random_moves: float = 0.7,
    key_probes: int | None = None,
    **kwargs: Any,
) -> str:
    """The step contract, under every reward variant, over episodes that mix oracle and random moves
    (``seeds`` x ``episodes_per_seed`` episodes under the default variant, one under each other).

    Invalid and refused moves change nothing (state_key, state text, image, actions) and pay the
    invalid reward; every reward is ``REWARDS[variant][event] * scale`` with a known event and
    ``0 <= scale <= 1``; ``actions`` has no repeats; progress is in [0, 1]; success is false at
    reset and turns true only on a terminating step; a ``state_key`` seen twice in episodes of one
    seed is one state (same actions, same success; and, for up to ``key_probes`` (default ``KEY_PROBES``) keys
    reached again by other moves in an env neither of ``CHANCE`` nor ``CONTINUOUS`` (whose keys discretize), the same
    ``PROBE_MOVES`` random moves from both situations play alike: a key that leaves out a counter or an
    item is caught when it first matters); every observed image equals a fresh
    ``_render()`` (the frame cache's key holds all that is drawn); and after the episode's end a
    step is an invalid action that changes nothing and repeats the end. A share ``random_moves`` of
    the moves are random words of ``actions``, so that moves the rules refuse are met (in runs, in
    ``EXPENSIVE_PLAN`` envs: :class:`~rl4vlm_gym.testing.common.Moves`).

    A remote env (``KIT_PROXY``) runs in a server: its events cannot be traced (only the rewards' range
    is checked; a copy for a key probe is a new session replaying the episode), and its frames are compared
    with fresh renders only when the server exposes them (``--expose-oracle``); the summary names what was
    not checked."""
    card = _card(env_id, kwargs)
    probes = KEY_PROBES if key_probes is None else key_probes  # read at the call: a test may set KEY_PROBES
    counts = {"steps": 0, "invalid": 0, "unframed": 0, "probed": 0}
    for v, variant in enumerate(card.reward_variants):
        env = _make(env_id, **{**kwargs, "reward_variant": variant})
        base = _base(env)
        spy = _NoSpy() if _is_proxy(base) else _OutcomeSpy(base)
        for seed in range(seeds if v == 0 else 1):  # other variants: one episode, for their tables
            seen: dict[Any, tuple[Any, ...]] = {}
            paths: dict[Any, tuple[str, ...]] = {}  # state_key -> the moves of its episode that first reached it
            met: list[tuple[tuple[str, ...], tuple[str, ...], bytes, Any, str]] = []  # a key reached again, by other moves
            for episode in range(episodes_per_seed if v == 0 else 1):
                policy = Moves(base, np.random.default_rng([seed, episode]), random_moves)
                obs: Mapping[str, Any]
                info: Mapping[str, Any]
                obs, info = env.reset(seed=seed)
                where = f"reward_variant={variant!r}, seed {seed}, episode {episode}"
                _assert_state(base, obs, info, seen, f"{where}, reset")
                assert not info["success"], f"{where}: success reported at reset, before the goal"
                moves: tuple[str, ...] = ()
                paths.setdefault(info["state_key"], moves)
                # Not in games of chance, nor where a key discretizes a continuous state by design (MiniWorld's pose);
                # under the default reward variant only, as long as probes are left. A remote env's copy is a new
                # session that replays the seeded episode (RemoteEnv's pickling): the served env's key is probed too.
                probing = v == 0 and counts["probed"] < probes
                probing &= not (base.facts()["CHANCE"] or base.facts()["CONTINUOUS"])
                if probing and not episode:
                    start = pickle.dumps(base)  # every episode of the seed starts here: replays start from a copy
                for t in range(max_steps):
                    at = f"{where}, step {t + 1}"
                    action = policy(obs)
                    obs, info, ended = _checked_step(env, base, spy, action, obs, info, seen, counts, at)
                    moves += (action,)
                    if ended:
                        break
                    first = paths.setdefault(info["state_key"], moves)
                    if probing and first != moves and len(met) < MET_KEPT:
                        met.append((first, moves, pickle.dumps(base), info["state_key"], at))  # a copy of this situation
            # After the seed's episodes, which the laws above found no fault in: from a few keys met again by
            # other moves, the same moves must play the same (a key that leaves out a counter, a budget, an item).
            # The histories most apart first (what a key leaves out has had the most moves to drift), and of
            # those the shortest first path (a probe replays it).
            met.sort(key=lambda m: (len(m[0]) - len(m[1]), len(m[0])))
            for first, moves, copy, key, at in met[: probes - counts["probed"]]:
                counts["probed"] += _assert_same_behaviour(start, first, moves, copy, key, at)
        env.close()
    summary = (
        f"{counts['steps']} steps under {len(card.reward_variants)} reward variant(s), {counts['invalid']} invalid: "
        "rules, rewards, progress, success, state keys and frames consistent"
    )
    if isinstance(spy, _NoSpy):
        hidden = ["the events behind rewards (only their range in REWARDS)"]
        if counts["unframed"]:
            hidden.append(
                f"cached frames against fresh renders at {counts['unframed']} steps (the server hides them: --expose-oracle)"
            )
        summary += f"; {REMOTE}{'; '.join(hidden)}"
    return summary


KEY_PROBES = 3
"""How many times ``rules`` plays on from two situations with one ``state_key`` (reached by different moves)."""

PROBE_MOVES = 4
"""The moves played from each of the two situations."""

MET_KEPT = 4
"""Keys met again per seed whose situation ``rules`` copies (pickles) for a probe (the first ones met)."""


def _assert_same_behaviour(start: bytes, first: tuple[str, ...], moves: tuple[str, ...], copy: bytes, key: Any, at: str) -> bool:
    """The situation ``first`` reaches from the seed's ``start`` (a pickled env after its reset, replayed in a
    copy) and the one ``moves`` reached (``copy``, pickled then; RNGs included, as the oracle check's search
    copies the env) share ``key``: the same moves from both are accepted or refused alike and give rewards
    of the same sign, the same ends and success, and while their keys stay equal, the same actions (up to
    a truncation: a step budget counts moves, which a key leaves out). False if a replay does not reach
    ``key`` (nothing compared)."""
    here, there = pickle.loads(copy), pickle.loads(start)
    try:
        return _play_alike(here, there, first, moves, key, at)
    finally:  # copies hold what the env holds (a browser window, a server): an unclosed one outlives the check
        here.close()
        there.close()


def _play_alike(here: VLMEnv, there: VLMEnv, first: tuple[str, ...], moves: tuple[str, ...], key: Any, at: str) -> bool:
    for action in first:
        *_, info = there.step(action)
    if first and info["state_key"] != key:
        return False
    rng = np.random.default_rng([len(first), len(moves)])
    played: list[str] = []
    for _ in range(PROBE_MOVES):
        actions = here.admissible_actions
        if not actions:
            break
        action = actions[int(rng.integers(len(actions)))]
        played.append(action)
        a, b = here.step(action), there.step(action)
        if a[3] or b[3]:
            break  # a step budget may count moves the key rightly leaves out
        # A reward's sign, not its size: a reward may shrink with the moves made (BabaIsAI's), which keys leave out.
        # Actions are compared while the keys stay equal: an env may draw what a move does (NetHack's monsters)
        # from an RNG that the key rightly leaves out, and two equal situations then part.
        same_key = a[4]["state_key"] == b[4]["state_key"]
        seen = [
            (i["action"]["valid"], float(np.sign(r)), t, i["success"], o["actions"] if same_key else None)
            for o, r, t, _, i in (a, b)
        ]
        assert seen[0] == seen[1], (
            f"{at}: state_key {key!r} names two different states: after {played}, the situation reached by {list(moves)} "
            f"and the one reached by {list(first)} differ (valid, reward's sign, terminated, success, actions: "
            f"{seen[0]} vs {seen[1]}): the key leaves out part of the state"
        )
        if a[2] or not same_key:
            break
    return True


def _checked_step(
    env: gym.Env,
    base: VLMEnv,
    spy: _OutcomeSpy | _NoSpy,
    action: str,
    obs: Mapping[str, Any],
    info: Mapping[str, Any],
    seen: dict[Any, tuple[Any, ...]],
    counts: dict[str, int],
    at: str,
) -> tuple[Mapping[str, Any], Mapping[str, Any], bool]:
    """One step with every law of ``check_rules`` asserted; returns the new obs, info and whether it ended."""
    facts = base.facts()
    table = facts["REWARDS"][facts["reward_variant"]]
    before = (info["state_key"], base.describe(), obs["image"], obs["actions"], obs["mission"])
    obs, reward, terminated, truncated, info = env.step(action)
    counts["steps"] += 1
    pre, post = spy.take()
    if not info["action"]["valid"]:
        counts["invalid"] += 1
        after = (info["state_key"], base.describe(), obs["image"], obs["actions"], obs["mission"])
        for name, a, b in zip(("state_key", "state text", "image", "actions", "mission"), before, after, strict=True):
            same = np.array_equal(a, b) if name == "image" else a == b
            assert same, f"{at}: an invalid or refused move ({info['action']['error']}) changed the {name}"
    _assert_reward(table, reward, pre, post, info, at, (terminated or truncated) if _is_proxy(base) else None)
    if not _assert_state(base, obs, info, seen, at):
        counts["unframed"] += 1
    if info["success"]:
        assert terminated, f"{at}: success reported on a step that does not terminate the episode (success before the goal)"
    ended = bool(terminated or truncated)
    # The env's own end (not a TimeLimit's): the outcome says so, or remotely `terminated` does.
    if ended and (post.terminated or post.truncated if post is not None else _is_proxy(base) and terminated):
        _assert_end_is_final(base, obs, info, table, at)
    return obs, info, ended


def _assert_state(
    base: VLMEnv, obs: Mapping[str, Any], info: Mapping[str, Any], seen: dict[Any, tuple[Any, ...]], at: str
) -> bool:
    """The state laws at one observation; False if its frame could not be compared with a fresh render."""
    actions = obs["actions"]
    assert len(set(actions)) == len(actions), (
        f"{at}: actions has duplicates: {sorted(a for a in set(actions) if actions.count(a) > 1)}"
    )
    progress = info["progress"]
    assert isinstance(progress, float) and 0.0 <= progress <= 1.0, f"{at}: progress {progress!r} is outside [0, 1]"
    framed = base.obs_mode == "text" or _assert_fresh_frame(base, obs["image"], at)
    facts = (actions, info["success"])
    earlier = seen.setdefault(info["state_key"], facts)
    assert earlier == facts, (
        f"{at}: state_key {info['state_key']!r} names two different states (actions {earlier[0]} vs {facts[0]}, "
        f"success {earlier[1]} vs {facts[1]}): the key leaves out part of the state"
    )
    return framed


def _assert_reward(
    table: Mapping[str, float],
    reward: object,
    pre: StepOutcome | None,
    post: StepOutcome | None,
    info: Mapping[str, Any],
    at: str,
    remote_ended: bool | None = None,
) -> None:
    """``remote_ended``: a remote env's step ended the episode (its outcome is not seen; None locally)."""
    assert isinstance(reward, float) and math.isfinite(reward), f"{at}: reward {reward!r} is not a finite float"
    low, high = min(0.0, *table.values()), max(0.0, *table.values())
    assert low <= reward <= high, f"{at}: reward {reward} is outside the REWARDS table's range [{low}, {high}]"
    if remote_ended is not None and not info["action"]["valid"] and not remote_ended:
        assert reward == table["invalid"], (
            f"{at}: a refused or invalid move ({info['action']['error']}) paid {reward}, not the invalid reward {table['invalid']}"
        )
    if post is None or pre is None:  # the env overrides step() or is remote; only the range can be checked
        return
    assert post.event in table, f"{at}: the event {post.event!r} is not in REWARDS"
    assert 0.0 <= post.scale <= 1.0, f"{at}: StepOutcome.scale={post.scale} is outside [0, 1]"
    assert math.isclose(reward, table[post.event] * post.scale), (
        f"{at}: reward {reward} is not REWARDS[..][{post.event!r}] * scale = {table[post.event] * post.scale}"
    )
    if not info["action"]["valid"] and not (post.terminated or post.truncated):
        assert reward == table["invalid"], (
            f"{at}: a refused or invalid move ({info['action']['error']}) paid {reward}, not the invalid reward {table['invalid']}"
        )


def _assert_end_is_final(
    base: VLMEnv, obs: Mapping[str, Any], info: Mapping[str, Any], table: Mapping[str, float], at: str
) -> None:
    actions = obs["actions"] or ("look",)
    key, described = info["state_key"], base.describe()
    for action in (_move(base), actions[0]):
        _, reward, terminated, truncated, after = base.step(action)
        assert not after["action"]["valid"], f"{at}: a move ({action!r}) was accepted after the episode ended"
        assert after["state_key"] == key and base.describe() == described, (
            f"{at}: a move after the episode ended changed the state"
        )
        assert terminated or truncated, f"{at}: a step after the episode ended did not report the end again"
        assert reward == table["invalid"], f"{at}: a step after the episode ended paid {reward}, not the invalid reward"
