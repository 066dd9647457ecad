"""PettingZoo's own checks on every AEC env of the games family, VLM and numeric (issue 34).

``api_test`` and ``seed_test`` run on both interfaces of each game; ``max_cycles`` is checked with
PettingZoo's meaning of a cycle (one step of every agent): with ``max_cycles=k`` every agent steps
``k`` times, then once more as a dead step, which is what PettingZoo's ``max_cycles_test`` asserts
of an AEC env (``max(counts) - 1 == median(counts) - 1 == k``). That test itself also needs a
Parallel version of the game, which turn-based games have not, so its AEC half is written here;
numeric Goofspiel (simultaneous bids, with a Parallel form) takes PettingZoo's test itself.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("pyspiel")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from rl4vlm_gym.envs.games.numeric import GAMES, numeric_env  # noqa: E402


def vlm(game: str, **kwargs: Any) -> Any:
    """The game's VLM env, cheap: text observations (the image is blank), a small side."""
    import importlib

    module, factory = GAMES[game].split(":")
    return getattr(importlib.import_module(module), factory)(**{"obs_mode": "text", "image_size": 64, **kwargs})


MAKERS: dict[str, Callable[..., Any]] = {"vlm": vlm, "numeric": numeric_env}


# every game, and Liar's dice with three players (OpenSpiel's rules as a Python game)
CASES: dict[str, tuple[str, dict[str, Any]]] = {**{g: (g, {}) for g in GAMES}, "liars_dice_3": ("liars_dice", {"players": 3})}


@pytest.mark.parametrize("interface", sorted(MAKERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_pettingzoo_api_and_seed_tests_pass(case: str, interface: str) -> None:
    make, (game, kwargs) = MAKERS[interface], CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test warns of what it does not check (e.g. no 'state' for some)
        api_test(make(game, **kwargs), num_cycles=30)
    seed_test(lambda: make(game, **kwargs), num_cycles=20)


# The moves that keep each game going for ``cycles`` cycles (none ends sooner): the first legal
# move, except where that ends the game (a Kuhn hand opened by pass, bet is still on after a cycle).
SCRIPTS: dict[str, tuple[int, tuple[str, ...]]] = {
    "tictactoe": (2, ()),  # four marks: no line yet
    "connect_four": (3, ()),  # six pieces in column 1: no four
    "kuhn_poker": (1, ("pass", "bet")),
    "leduc": (1, ("call", "call")),  # both check: the second round is dealt
    "liars_dice": (3, ()),  # six ever higher bids
    "liars_dice_3": (2, ()),  # three players, six bids
}


def count_steps(env: Any, moves: tuple[str, ...]) -> Counter[str]:
    """Play ``moves`` (then each agent's first legal move) through ``agent_iter``, counting the
    steps of each agent, dead steps included (as PettingZoo's max_cycles_test does)."""
    counts: Counter[str] = Counter()
    script = list(moves)
    numeric = hasattr(env, "encoder")
    for agent in env.agent_iter(max_iter=100):
        counts[agent] += 1
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        name = script.pop(0) if script else env.legal_moves(agent)[0]
        env.step({v: k for k, v in env.encoder.legal(agent).items()}[name] if numeric else name)
    return counts


@pytest.mark.parametrize("interface", sorted(MAKERS))
@pytest.mark.parametrize("game", sorted(SCRIPTS))
def test_max_cycles_counts_cycles_of_every_agent_as_pettingzoo_does(game: str, interface: str) -> None:
    cycles, moves = SCRIPTS[game]
    game, kwargs = CASES[game]
    env = MAKERS[interface](game, max_cycles=cycles, **kwargs)
    env.reset(seed=3)
    counts = count_steps(env, moves)
    assert list(counts.values()) == [cycles + 1] * len(env.possible_agents)  # k steps, then the dead step
    assert max(counts.values()) - 1 == np.median(list(counts.values())) - 1 == cycles
    # one cycle more and the same game is not truncated by then: each agent steps again
    env = MAKERS[interface](game, max_cycles=cycles + 1, **kwargs)
    env.reset(seed=3)
    for agent in env.agent_iter(max_iter=len(env.possible_agents) * cycles):
        name = moves[0] if moves else env.legal_moves(agent)[0]
        moves = moves[1:]
        env.step({v: k for k, v in env.encoder.legal(agent).items()}[name] if interface == "numeric" else name)
    assert not any(env.truncations.values()) and not any(env.terminations.values())


@pytest.mark.parametrize("interface", sorted(MAKERS))
def test_an_agent_that_keeps_the_turn_starts_a_new_cycle(interface: str) -> None:
    # an invalid move keeps the turn: the second step of the same agent is in a new cycle, so
    # three invalid moves are three cycles (truncated), two are not
    env = MAKERS[interface]("tictactoe", max_cycles=3)
    env.reset(seed=0)
    invalid = 0 if interface == "numeric" else "pass"
    if interface == "numeric":
        env.step(4)  # player_1 takes the centre; player_2's action 4 is then illegal
    first = env.agent_selection
    for step in range(3):
        assert not any(env.truncations.values()), step
        env.step(invalid if interface == "vlm" else 4)
        assert env.agent_selection == first  # the turn is kept
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.unwrapped.num_cycles == 3


def test_pettingzoos_max_cycles_and_state_tests_pass_on_numeric_goofspiel() -> None:
    # the one game with a Parallel form (simultaneous bids) takes PettingZoo's test itself
    from types import SimpleNamespace

    from pettingzoo.test import max_cycles_test, state_test

    from rl4vlm_gym.envs.games.numeric import numeric_parallel_env
    from rl4vlm_gym.envs.games.openspiel_adapter import openspiel_env, openspiel_parallel_env

    small = {"obs_mode": "text", "image_size": 64, "level": 2}  # level 2: more bids than max_cycles_test's 4 cycles
    mod = SimpleNamespace(
        parallel_env=lambda **kw: numeric_parallel_env(openspiel_parallel_env("goofspiel", **small, **kw)),
        env=lambda **kw: numeric_env(openspiel_env("goofspiel", **small, **kw)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        max_cycles_test(mod)
        state_test(mod.env(), mod.parallel_env())  # the whole of PettingZoo's state checks


@pytest.mark.parametrize("case", sorted(CASES))
def test_pettingzoos_state_checks_pass_on_the_numeric_envs(case: str) -> None:
    # PettingZoo's state_test without its Parallel part (turn-based games have no Parallel form):
    # a Box state_space, and every state() of a random game inside it
    from pettingzoo.test.state_test import test_state, test_state_space

    game, kwargs = CASES[case]
    env = numeric_env(game, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # OpenSpiel's tensors have no bounds in general: Box(-inf, inf) warns
        test_state_space(env)
        test_state(env, num_cycles=20)
