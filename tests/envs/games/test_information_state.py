"""``info["state_key"]`` of the hidden-information games is the player's information state: GiGPO
and the kit group steps by it, so it must name what the player may know and nothing it may not
(the opponent's cards or dice, the target or the other role's order in the referential game)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)


def openspiel_information_state(base: Any) -> str | None:
    """OpenSpiel's information state of our seat (``None`` at the end, where the rules reveal
    more than it holds: the kit checks those keys)."""
    return None if base.state.is_terminal() else f"{base.seat}:{base.state.information_state_string(base.seat)}"


def openspiel_deal(base: Any) -> tuple[int, ...]:
    return tuple(base.state.history())  # every action, chance included: the true state


def described(base: Any) -> str:
    return base._describe()  # the role's own text: all it may know (the kit checks the image says no more)


CASES = [
    # env id, seeds, the reference information state, the true state
    ("rl4vlm/KuhnPoker-vs-Random-v0", 30, openspiel_information_state, openspiel_deal),
    ("rl4vlm/LeducHoldem-vs-Random-v0", 30, openspiel_information_state, openspiel_deal),
    ("rl4vlm/LiarsDice-vs-Random-v0", 40, openspiel_information_state, openspiel_deal),
    ("rl4vlm/ReferentialGame-Listener-v0", 300, described, lambda base: base.round),
    ("rl4vlm/ReferentialGame-Speaker-v0", 300, described, lambda base: base.round),
]


@pytest.mark.parametrize(("env_id", "seeds", "known", "truth"), CASES, ids=[c[0].split("/")[1] for c in CASES])
def test_the_state_key_is_the_players_information_state(
    env_id: str, seeds: int, known: Callable[[Any], Any], truth: Callable[[Any], Any]
) -> None:
    """One key per information state, both ways, over random play; and some information state is
    met under two true states (deals differing in what the player cannot see), whose keys agree."""
    env = gym.make(env_id, obs_mode="text")
    base, rng = env.unwrapped, np.random.default_rng(0)
    key_of: dict[Any, str] = {}
    state_of: dict[str, Any] = {}
    truths: dict[Any, set[Any]] = defaultdict(set)
    for seed in range(seeds):
        obs, info = env.reset(seed=seed)
        ended = False
        while True:
            state, key = known(base), info["state_key"]
            if state is not None:
                assert key_of.setdefault(state, key) == key, f"seed {seed}: one information state, two keys: {key_of[state]!r} and {key!r}"
                assert state_of.setdefault(key, state) == state, f"seed {seed}: key {key!r} names two information states"
                truths[state].add(truth(base))
            if ended:
                break
            obs, _, terminated, truncated, info = env.step(str(rng.choice(obs["actions"])))
            ended = terminated or truncated
    shared = sum(len(t) > 1 for t in truths.values())
    assert shared, "no information state was met under two true states: the test shows nothing"
