"""Rules of Liar's dice (rl4vlm/LiarsDice-vs-*-v0 and the AEC env): OpenSpiel's results, hidden dice,
the heuristic opponent, the shipped equilibrium and best responses (tests/test_conformance.py runs the kit)."""

from __future__ import annotations

import gzip
import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import pyspiel
from pettingzoo.test import api_test, render_test, seed_test

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.liars_dice import (
    BR_FILE,
    LIARS_DICE,
    POLICY_FILE,
    SPECS,
    LiarsDiceAEC,
    bid_true_probability,
    heuristic,
    liars_dice_env,
)
from rl4vlm_gym.envs.games.spiel import replay


def game_at(env_id: str, seat: int, history: tuple[int, ...], level: int = 0, **kwargs: object) -> gym.Env:
    """An env mid-game: our OpenSpiel seat and every action so far (the dice's included)."""
    env = gym.make(env_id, image_size=64, level=level, **kwargs)
    env.reset(seed=0)
    base = env.unwrapped
    base.seat, base.history = seat, history
    base.state = replay(SPECS[level], history)
    vars(base)["_admissible"] = base._actions()  # as the base class would (it keeps the moves it offered; only it may set them)
    return env


def test_the_shipped_equilibrium_and_best_responses_agree_with_openspiel() -> None:
    data = json.loads(gzip.decompress(POLICY_FILE.read_bytes()))
    assert len(data["policy"]) == 24576  # one-die Liar's dice's information states
    assert 0 < data["exploitability"] < 1e-3
    values = json.loads(gzip.decompress(BR_FILE.read_bytes()))["values"]
    # a best response to the equilibrium gains its exploitability on average over the seats
    assert sum(values["cfr"]) / 2 == pytest.approx(data["exploitability"], abs=1e-6)
    assert sum(values["heuristic"]) / 2 > 0.4 and sum(values["random"]) / 2 > 0.7  # both far from equilibrium


@pytest.mark.slow
def test_the_shipped_exploitability_is_openspiels() -> None:
    data = json.loads(gzip.decompress(POLICY_FILE.read_bytes()))
    policy = pyspiel.TabularPolicy({k: [(int(a), p) for a, p in v] for k, v in data["policy"].items()})
    assert pyspiel.exploitability(pyspiel.load_game(SPECS[0]), policy) == pytest.approx(data["exploitability"], abs=1e-9)


def test_sixes_are_wild_as_in_openspiel_and_the_call_reveals_the_dice() -> None:
    # we (player 0) rolled a 2, they a 6; we bid 2-2 (two dice show 2, the six counting), they call liar
    env = game_at("rl4vlm/LiarsDice-vs-Random-v0", 0, (1, 5))
    assert bid_true_probability(2, 2, [2], 1) == pytest.approx(2 / 6)
    base = env.unwrapped
    assert "Opponent's: hidden" in base._describe()
    base.state.apply_action(7)  # 2-2
    base.state.apply_action(12)  # liar
    assert base.state.returns() == [1.0, -1.0]
    text = LIARS_DICE.text(LIARS_DICE.view(base.state, 0))
    assert "Opponent's: 6" in text and "you won" in text
    # a bid on 6 counts only sixes: two sixes among a 2 and a 6 is false
    state = replay(SPECS[0], (1, 5, 11, 12))
    assert state.returns() == [-1.0, 1.0]


def test_the_opponents_dice_stay_hidden_until_the_call() -> None:
    for level, rolls in ((0, [(2, 0), (2, 4)]), (1, [(2, 3, 0, 1), (2, 3, 5, 5)])):
        views = [game_at("rl4vlm/LiarsDice-vs-Heuristic-v0", 0, roll, level=level).unwrapped._observation("") for roll in rolls]
        assert views[0]["text"] == views[1]["text"] and np.array_equal(views[0]["image"], views[1]["image"])
    env = game_at("rl4vlm/LiarsDice-vs-Heuristic-v0", 0, (2, 4))
    obs, reward, terminated, _, info = env.step("1-3")  # the heuristic holding a 5 doubts a 3 (or raises)
    if not terminated:
        obs, reward, terminated, _, info = env.step("liar")
    assert terminated and "Opponent's: 5" in obs["text"]


def test_the_heuristic_calls_an_impossible_bid_and_bids_what_it_holds() -> None:
    legal = list(range(7, 13))  # after 2-1 with one die each: bids 2-2 .. 2-6 and liar
    # holding a 2, two 5s need the other die to be a 5 or a 6 and the 2 to be... impossible: call
    assert heuristic("2 2-5", [11, 12]) == [0.0, 1.0]
    # holding a 6 (wild) after a 1-1 bid: every 1-f is sure, so it raises to the lowest quantity, uniformly
    probs = heuristic("6 1-1", list(range(1, 13)))
    assert probs[:5] == [0.2] * 5 and sum(probs[5:]) == 0.0
    assert sum(heuristic("3 2-1", legal)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("env_id", "level", "low"),
    [
        ("rl4vlm/LiarsDice-vs-Random-v0", 0, 0.6),  # exact best response: +0.78 a game
        ("rl4vlm/LiarsDice-vs-Heuristic-v0", 0, 0.25),  # exact best response: +0.44
        ("rl4vlm/LiarsDice-vs-CFR-v0", 0, -0.2),  # the equilibrium: about 0
        ("rl4vlm/LiarsDice-vs-Random-v0", 1, 0.5),  # two dice: the heuristic as oracle
    ],
)
def test_the_oracle_beats_the_opponent(env_id: str, level: int, low: float) -> None:
    env = gym.make(env_id, image_size=64, obs_mode="text", level=level)
    total = 0.0
    for seed in range(200):
        env.reset(seed=seed)
        done = False
        while not done:
            _, reward, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
            total, done = total + reward, terminated or truncated
    assert total / 200 > low


def test_an_invalid_bid_changes_nothing() -> None:
    env = game_at("rl4vlm/LiarsDice-vs-CFR-v0", 0, (3, 1), reward_variant="penalty")
    obs, reward, terminated, _, info = env.step("liar")  # no bid stands yet
    assert not info["action"]["valid"] and reward == -0.1 and env.unwrapped.history == (3, 1)
    assert obs["actions"][0] == "1-1" and "liar" not in obs["actions"]
    obs, _, terminated, _, _ = env.step("1-4")
    if not terminated:  # the opponent raised: a bid below the standing one is refused
        obs, _, _, _, info = env.step("1-1")
        assert not info["action"]["valid"] and "1-1" not in obs["actions"]


# The multi-agent env


def small_aec(**kwargs: object) -> LiarsDiceAEC:
    return liars_dice_env(image_size=64, render_fps=1000, **kwargs)


@pytest.mark.parametrize("level", [0, 1])
def test_pettingzoos_own_api_seed_and_render_tests_pass(level: int) -> None:
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small_aec(level=level), num_cycles=100)
    seed_test(lambda: small_aec(level=level), num_cycles=50)
    render_test(lambda render_mode=None: small_aec(level=level, render_mode=render_mode))


def test_each_agent_sees_only_its_dice_and_the_oracle_plays_the_equilibrium() -> None:
    env = small_aec()
    for seed in range(8):
        env.reset(seed=seed)
        results = []
        for _agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                results.append(reward)
                env.step(None)
                continue
            for viewer in env.agents:
                seat = env.possible_agents.index(viewer)
                assert f"Your die: {env.history[seat] + 1}. Opponent's: hidden." in env.observe(viewer)["text"]
            state = env.state
            probs = LIARS_DICE.policy("cfr", env.spec)(state.information_state_string(), state.legal_actions())
            move = env.oracle_action()
            assert probs[LIARS_DICE.name_moves(state, env.spec).index(move)] > 0  # sampled: test_spiel_aec.py
            env.step(move)
        assert sorted(results) == [-1.0, 1.0]
