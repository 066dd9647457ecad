"""Rules of rl4vlm/KuhnPoker-vs-*-v0: OpenSpiel's chips, hidden cards, the shipped equilibrium
and the best-response oracle (tests/test_conformance.py runs the kit on them)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pyspiel
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.kuhn import POLICY_FILE


def hand(env_id: str, seat: int, cards: tuple[int, int], history: tuple[int, ...] = ()) -> gym.Env:
    """An env mid-hand: our OpenSpiel seat, the cards by seat and the moves so far."""
    env = gym.make(env_id, image_size=64)
    env.reset(seed=0)
    base = env.unwrapped
    base.seat, base.cards, base.history = seat, cards, history
    base._replay()
    return env


def test_the_shipped_equilibrium_is_one() -> None:
    table = json.loads(POLICY_FILE.read_text())["policy"]
    assert len(table) == 12  # Kuhn poker's information states
    policy = pyspiel.TabularPolicy({k: [(0, p[0]), (1, p[1])] for k, p in table.items()})
    assert pyspiel.exploitability(pyspiel.load_game("kuhn_poker"), policy) < 1e-3


def test_the_opponents_card_stays_hidden_until_a_showdown() -> None:
    views = [hand("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (theirs, 1), (1,)).unwrapped._observation("") for theirs in (0, 2)]
    assert views[0]["text"] == views[1]["text"] and np.array_equal(views[0]["image"], views[1]["image"])
    assert "hidden" in views[0]["text"] and "King" not in views[1]["text"]
    # they bet, we fold: the card stays hidden
    env = hand("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (2, 0), (1,))
    obs, reward, terminated, _, info = env.step("fold")
    assert terminated and reward == -1.0 and not info["success"] and "hidden" in obs["text"]
    # they bet, we call: showdown, their King beats our Jack for 2 chips (OpenSpiel's returns)
    env = hand("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (2, 0), (1,))
    obs, reward, terminated, _, info = env.step("call")
    assert terminated and reward == -2.0 and "Opponent's card: King" in obs["text"]
    env = hand("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (0, 2), (1,))
    assert env.step("bet")[1] == 2.0


@pytest.mark.parametrize(
    ("env_id", "seat", "cards", "history", "best"),
    [
        ("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (1, 2), (1,), "bet"),  # a King calls every bet
        ("rl4vlm/KuhnPoker-vs-CFR-v0", 1, (1, 0), (1,), "pass"),  # a Jack folds to one
        # a random opponent bets with any card: a Queen's call wins 2 or loses 2 (EV 0) > fold (-1)
        ("rl4vlm/KuhnPoker-vs-Random-v0", 1, (0, 1), (1,), "bet"),
        # the equilibrium bets a Jack only as a bluff and a King for value: a Queen facing its bet
        # after our check calls only at the indifference point; folding is at least as good
        ("rl4vlm/KuhnPoker-vs-CFR-v0", 0, (1, 0), (0, 1), "pass"),
    ],
)
def test_the_oracle_is_the_best_response(env_id: str, seat: int, cards: tuple[int, int], history: tuple[int, ...], best: str) -> None:
    assert hand(env_id, seat, cards, history).unwrapped.oracle_action() == best


def test_against_the_equilibrium_the_best_response_earns_the_game_value() -> None:
    """Exact expectation over every seat and deal: Kuhn poker's value is -1/18 for the first
    player, so a best response to the equilibrium averages 0 over the two seats."""
    game = pyspiel.load_game("kuhn_poker")
    total = 0.0
    for seat in (0, 1):
        base = hand("rl4vlm/KuhnPoker-vs-CFR-v0", seat, (0, 1)).unwrapped
        for mine in range(3):  # our information set: our card, theirs unknown (each 1/2)
            deals = [(mine, theirs) if seat == 0 else (theirs, mine) for theirs in range(3) if theirs != mine]
            total += base._value([(game.new_initial_state().child(a).child(b), 0.5) for a, b in deals]) / 3
    assert total / 2 == pytest.approx(0.0, abs=1e-3)
    assert total > -0.01  # not below the value: a best response never does worse than the equilibrium
