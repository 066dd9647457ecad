"""``oracle``: every solvable episode solved in exactly ``optimal_steps``, which no shorter solution beats."""

from __future__ import annotations

import numbers
import pickle
from collections import deque
from collections.abc import Sequence
from contextlib import closing
from typing import Any

from rl4vlm_gym.core import NOT_COMPUTED, VLMEnv
from rl4vlm_gym.registry import EVAL_SEEDS, env_card, env_class, list_envs
from rl4vlm_gym.testing.common import REMOTE, NotCheckable, _base, _is_proxy, _make, _oracle, is_remote
from rl4vlm_gym.testing.remote import _card, _rules

ORACLE_EPISODES = 50
"""Episodes per level the oracle check plays by default."""


SEARCHED_EPISODES = 1
"""Episodes per level whose ``optimal_steps`` the oracle check holds to a breadth-first search for a
shorter solution: the first ones with ``optimal_steps > 1`` (a plan of one move cannot be beaten)."""


ORACLE_EPISODES_EXPENSIVE = 5
"""Episodes per level it plays by default for envs whose every plan is a search (``EXPENSIVE_PLAN``).

A count, not a time budget, so what is checked does not depend on the machine's load."""


TWIN_EPISODES = 1
"""Episodes per level that the check of an id with a view twin (:func:`_view_twin`) plays under both
ids' arguments, step by step alike."""


def check_oracle(
    env_id: str,
    /,
    episodes: int | None = None,
    first_seed: int = 0,
    levels: Sequence[int] | None = None,
    search: int = 200,
    **kwargs: Any,
) -> str:
    """The oracle solves every solvable episode of every level, in exactly ``optimal_steps``.

    ``optimal_steps`` must be an int, or -1 only when there is no plan: an unsolvable episode, an
    env of chance (``CHANCE``), or a search that gave up (``EXPENSIVE_PLAN`` envs, on fewer than
    half the episodes of a level: their oracle may still reach the goal); a breadth-first search trying up to
    ``search`` moves (from each of the first ``SEARCHED_EPISODES`` episodes of every level whose plan is longer
    than one move) must find no shorter solution. ``EXPENSIVE_PLAN`` envs are not searched: their plan is itself a search (MiniWorld's hybrid A* over a continuous pose is
    short, not provably shortest; a copy of an ALFWorld game loads the game), so their
    ``optimal_steps`` is the length their oracle plays, as their docs say. Whether to search is decided by
    the flag, not by timing, so the verdict is the same on every machine. Episodes use EVAL seeds from ``first_seed`` on (offsets into the
    range), played in rounds: one seed at every level, then the next seed; messages print the seed.
    ``episodes`` fixes the episodes per level; by default (``None``) the check plays
    ``ORACLE_EPISODES`` per level, or ``ORACLE_EPISODES_EXPENSIVE`` for ``EXPENSIVE_PLAN`` envs
    (a search per episode: MiniWorld's planner, ALFWorld's Fast Downward).

    Called with its defaults on an id whose episodes another registered id's check plays (its view
    twin, :func:`_view_twin`: arguments that differ only in how the state is shown), the check plays
    ``TWIN_EPISODES`` per level, holds them to the laws above and to play alike under the twin's arguments
    step by step, and leaves the rest of the episodes and the search to the twin's check (it would play
    them a second time)."""
    card = _card(env_id, kwargs)
    twin = _view_twin(env_id) if (episodes, first_seed, levels, search, kwargs) == (None, 0, None, 200, {}) else None
    if is_remote(env_id) and _rules(env_id, kwargs).get("EXPENSIVE_PLAN"):
        kwargs = {"optimal_steps_at_reset": True, **kwargs}  # the server plans only when asked, and cannot be asked
    env = _make(env_id, **{**kwargs, "obs_mode": "text"})
    base = _base(env)
    facts = base.facts()  # CHANCE may depend on the level: read again at each reset
    expensive = facts["EXPENSIVE_PLAN"]
    levels = list(range(len(card.levels)) if levels is None else levels)
    if not facts["HAS_ORACLE"]:
        return _check_oracle_free(env, base, levels, first_seed)
    if not _oracle(base):
        env.close()
        raise NotCheckable("the server hides its oracle and plans: start it with --expose-oracle to check them")
    proxy = _is_proxy(base)
    solvable, solved, played, total, gave_up = (dict.fromkeys(levels, 0) for _ in range(5))
    searched = dict.fromkeys(levels, 0)
    if episodes is None:
        episodes = ORACLE_EPISODES_EXPENSIVE if expensive else ORACLE_EPISODES
    twin_env, twin_id = None, ""
    if twin is not None:  # the twin's check plays the rest, and searches
        twin_id = twin[0]
        episodes, search, twin_env = TWIN_EPISODES, 0, _make(twin_id, obs_mode="text")
        twin_base = _base(twin_env)
    for i in range(first_seed, first_seed + episodes):
        for level in levels:
            seed = EVAL_SEEDS.start + i
            obs, info = env.reset(seed=seed, options={"level": level})
            if twin_env is not None:
                twin_seen = twin_env.reset(seed=seed, options={"level": level})
                _assert_alike(env_id, twin_id, (None, obs["actions"], info["state_key"], base.optimal_steps),
                              (None, twin_seen[0]["actions"], twin_seen[1]["state_key"], twin_base.optimal_steps), f"level {level} seed {seed}")  # fmt: skip
            chance = base.facts()["CHANCE"]
            optimal, ret, steps, done = base.optimal_steps, 0.0, 0, False  # asked for: EXPENSIVE_PLAN envs plan now
            at = f"level {level} seed {seed}"
            assert info["optimal_steps"] in (NOT_COMPUTED, optimal), (
                f"{at}: info['optimal_steps']={info['optimal_steps']} at reset, but optimal_steps={optimal}"
            )
            assert isinstance(optimal, numbers.Integral) and not isinstance(optimal, bool), (
                f"{at}: optimal_steps={optimal!r} is a {type(optimal).__name__}, not an int"
            )
            if chance:
                assert optimal == -1, f"{at}: a game of chance (CHANCE) reports optimal_steps={optimal}; it has no fixed plan"
            if optimal > 1 and searched[level] < SEARCHED_EPISODES and search and not expensive and not proxy:
                _assert_no_shorter_solution(base, info["state_key"], optimal, search, at)
                searched[level] += 1
            if optimal < 0 and expensive:
                played[level] += 1
                gave_up[level] += 1  # a search that gave up (the contract's -1): nothing to hold its oracle to
                continue  # (without a plan it searches again at every step: minutes, checking nothing)
            while not done:
                action = base.oracle_action()
                obs, reward, terminated, truncated, info = env.step(action)
                if twin_env is not None:
                    theirs = twin_base.oracle_action()
                    _assert_alike(env_id, twin_id, (action, *_seen(base, obs, reward, terminated, truncated, info)),
                                  (theirs, *_seen(twin_base, *twin_env.step(theirs))), f"{at}, step {steps + 1}")  # fmt: skip
                assert info["action"]["valid"], f"{at}: oracle action invalid: {info['action']}"
                ret, steps, done = ret + reward, steps + 1, terminated or truncated
            total[level] += ret
            played[level] += 1
            if optimal >= 0:
                solvable[level] += 1
                assert info["success"], f"{at}: the oracle failed a solvable episode"
                assert steps == optimal, f"{at}: the oracle took {steps} steps, but optimal_steps={optimal}"
                solved[level] += 1
            elif not chance:
                assert not info["success"], (
                    f"{at}: optimal_steps is None (-1) but the oracle solved the episode in {steps} steps; "
                    "report that length (or set CHANCE for a game of chance)"
                )
    env.close()
    if twin_env is not None:
        twin_env.close()
    for level in levels:
        assert 2 * gave_up[level] < played[level], (
            f"level {level}: optimal_steps is -1 in {gave_up[level]} of {played[level]} episodes (seeds from "
            f"{EVAL_SEEDS.start + first_seed}); an EXPENSIVE_PLAN env's planner may give up on a few, not on most"
        )
    report = []
    for level in levels:
        solved_text = f"{solved[level]}/{solvable[level]} solvable solved" if solvable[level] else "no fixed solutions"
        if gave_up[level]:
            solved_text += f" ({gave_up[level]} without a plan: the planner gave up)"
        report.append(f"L{level} {solved_text}, mean return {total[level] / max(played[level], 1):+.2f}")
    if twin is not None:
        report.append(
            f"the other episodes, and the search for shorter solutions, are {twin_id}'s oracle check's: {env_id} differs "
            f"only in {', '.join(twin[1])} (VIEW_ARGUMENTS, which change only the view), and the episodes above played alike under both"
        )
    if any(searched.values()):
        report.append(f"no shorter solution found in {sum(searched.values())} episodes searched")
    elif proxy and search and not expensive:
        report.append(f"{REMOTE}shorter solutions (the search copies the env, which stays in the server)")
    elif expensive and search:
        report.append("shorter solutions not searched (EXPENSIVE_PLAN: optimal_steps is the length the oracle plays)")
    return "; ".join(report)


def _view_twin(env_id: str) -> tuple[str, tuple[str, ...]] | None:
    """The registered id whose oracle check plays ``env_id``'s episodes, and the arguments in which the
    two differ; ``None`` if it is ``env_id`` itself or there is none.

    Twins share the entry point, levels, reward variants and step limit, and their registered arguments
    differ only in the env class's ``VIEW_ARGUMENTS`` (how the state is shown: never the rules, the
    episodes or the oracle; the kit plays the oracle with ``obs_mode="text"``, where WebShop-Browser's
    ``renderer`` starts nothing). The twin is the one with the fewest arguments (then the first id), so
    every twin refers to the same one, which needs no extra the id does not need."""
    if is_remote(env_id):
        return None
    card, found = env_card(env_id), env_class(env_id)
    view = frozenset(getattr(found, "VIEW_ARGUMENTS", ()))
    if not view:
        return None

    def plays(other: Any) -> tuple[Any, ...]:
        rules = {key: value for key, value in other.kwargs.items() if key not in view}
        return (
            other.entry_point,
            other.levels,
            other.reward_variants,
            other.max_episode_steps,
            other.timeout_reward,
            sorted(rules.items()),
        )

    twins = [other for other in list_envs() if other.extra in (None, card.extra) and plays(other) == plays(card)]
    twin = min(twins, key=lambda other: (len(other.kwargs), other.id), default=card)
    if twin.id == env_id:
        return None
    differ = tuple(
        sorted(key for key in {*card.kwargs, *twin.kwargs} if card.kwargs.get(key, None) != twin.kwargs.get(key, None))
    )
    return twin.id, differ


def _assert_alike(env_id: str, twin_id: str, mine: tuple[Any, ...], theirs: tuple[Any, ...], at: str) -> None:
    """What the oracle saw and did under ``env_id``'s arguments, and under its view twin's."""
    assert mine == theirs, (
        f"{at}: {env_id} and its view twin {twin_id} part (the oracle's move, then actions, reward, terminated, "
        f"truncated, state_key, success, valid, optimal_steps): {mine} vs {theirs}; an argument in VIEW_ARGUMENTS changes the state"
    )


def _seen(base: VLMEnv, obs: Any, reward: Any, terminated: bool, truncated: bool, info: Any) -> tuple[Any, ...]:
    return (
        obs["actions"],
        reward,
        terminated,
        truncated,
        info["state_key"],
        info["success"],
        info["action"]["valid"],
        base.optimal_steps,
    )


def _assert_no_shorter_solution(base: VLMEnv, start_key: str, optimal: int, budget: int, at: str) -> None:
    """Breadth-first search over copies of the env (its RNG copied too) from the state ``start_key``
    names, trying at most ``budget`` moves, for a solution shorter than ``optimal``: sound (a find is
    a real action sequence), complete only for small envs."""
    frontier: deque[tuple[bytes, tuple[str, ...]]] = deque([(pickle.dumps(base), ())])
    visited = {start_key}
    tried = 0
    while frontier and tried < budget:
        state, path = frontier.popleft()
        if len(path) >= optimal - 1:
            break  # breadth-first: every later path is as long
        # Every copy is closed: a copy may hold what its env holds (a browser window, a server, a game process).
        with closing(pickle.loads(state)) as here:
            actions = here.admissible_actions
        for action in actions:
            tried += 1
            with closing(pickle.loads(state)) as env:
                _, _, terminated, truncated, info = env.step(action)
                if not info["action"]["valid"]:
                    continue
                if info["success"]:
                    raise AssertionError(
                        f"{at}: optimal_steps={optimal}, but {list(path + (action,))} solves the episode in {len(path) + 1} steps "
                        "(optimal_steps counts a detour)"
                    )
                if not (terminated or truncated) and info["state_key"] not in visited:
                    visited.add(info["state_key"])
                    frontier.append((pickle.dumps(env), path + (action,)))


def _check_oracle_free(env: Any, base: VLMEnv, levels: Sequence[int], first_seed: int) -> str:
    """An oracle-free env (``HAS_ORACLE = False``) reports no plan and defines no oracle to skip checks with."""
    facts = base.facts()
    name, defines, says = facts["name"], facts["defines_oracle_action"], facts["says_oracle_free"]
    assert not defines, (
        f"{name} sets HAS_ORACLE = False but defines oracle_action: an env with an oracle may not claim to be oracle-free"
    )
    assert says, f"{name} sets HAS_ORACLE = False but its docstring (the docs page) does not say 'oracle-free'"
    for level in levels:
        seed = EVAL_SEEDS.start + first_seed
        _, info = env.reset(seed=seed, options={"level": level})
        optimal = base.optimal_steps if _oracle(base) or not _is_proxy(base) else info["optimal_steps"]
        assert optimal == -1 and info["optimal_steps"] in (NOT_COMPUTED, -1), (
            f"level {level} seed {seed}: an oracle-free env (HAS_ORACLE = False) reports optimal_steps={optimal}; it must be -1"
        )
    env.close()
    return f"SKIPPED: oracle-free (HAS_ORACLE = False); optimal_steps is -1 on {len(levels)} level(s)"
