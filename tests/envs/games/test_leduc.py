"""Rules of Leduc hold'em (rl4vlm/LeducHoldem-vs-*-v0 and the AEC env): OpenSpiel's chips, hidden
cards, the shipped equilibrium and the best-response oracle (tests/test_conformance.py runs the kit)."""

from __future__ import annotations

import gzip
import json
import pickle

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import pyspiel
from pettingzoo.test import api_test, render_test, seed_test

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.leduc import LEDUC, POLICY_FILE, LeducAEC, card_name, leduc_env
from rl4vlm_gym.envs.games.spiel import replay


def hand(env_id: str, seat: int, history: tuple[int, ...], **kwargs: object) -> gym.Env:
    """An env mid-hand: our OpenSpiel seat and every action so far (the deal's included)."""
    env = gym.make(env_id, image_size=64, **kwargs)
    env.reset(seed=0)
    base = env.unwrapped
    base.seat, base.history = seat, history
    base.state = replay("leduc_poker", history)
    vars(base)["_admissible"] = base._actions()  # as the base class would (it keeps the moves it offered; only it may set them)
    return env


def test_the_shipped_equilibrium_is_one_and_its_exploitability_is_recorded() -> None:
    data = json.loads(gzip.decompress(POLICY_FILE.read_bytes()))
    assert len(data["policy"]) == 936  # Leduc's information states
    policy = pyspiel.TabularPolicy({k: [(int(a), p) for a, p in v] for k, v in data["policy"].items()})
    value = pyspiel.exploitability(pyspiel.load_game("leduc_poker"), policy)
    assert value == pytest.approx(data["exploitability"], abs=1e-9) and value < 1e-3


def test_the_opponents_card_stays_hidden_until_a_showdown() -> None:
    # we (player 1) hold the Jack of spades (0); they hold the Queen (2) or the King (4); they opened with a call
    views = [hand("rl4vlm/LeducHoldem-vs-CFR-v0", 1, (theirs, 0, 1)).unwrapped._observation("") for theirs in (2, 4)]
    assert views[0]["text"] == views[1]["text"] and np.array_equal(views[0]["image"], views[1]["image"])
    assert "hidden" in views[0]["text"] and "Queen" not in views[0]["text"] and "King" not in views[1]["text"]
    # we raise, they re-raise, we fold: still hidden
    env = hand("rl4vlm/LeducHoldem-vs-CFR-v0", 1, (4, 0, 1, 2, 2))
    obs, reward, terminated, _, info = env.step("fold")
    assert terminated and reward == -3.0 and not info["success"] and "Opponent's card: hidden" in obs["text"]


def test_a_pair_with_the_public_card_wins_the_showdown_as_openspiel_pays() -> None:
    # player 0 holds the Jack of spades, player 1 the King; call, call; the public card is the Jack of hearts (1)
    env = hand("rl4vlm/LeducHoldem-vs-Random-v0", 0, (0, 4, 1, 1, 1))
    env.step("raise")  # round 2: we raise 4; the random opponent answers
    base = env.unwrapped
    while not base.state.is_terminal():
        env.step("call")
    returns = base.state.returns()
    assert returns[0] > 0 and base._success()
    text = base._describe()
    assert "Opponent's card: King of spades" in text or base.GAME.view(base.state, 0).folded
    assert "Public card: Jack of hearts" in text


def test_the_pot_agrees_with_openspiel_and_the_reward_is_its_return() -> None:
    game, rng = pyspiel.load_game("leduc_poker"), np.random.default_rng(0)
    for _ in range(40):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(actions, p=probs)))
                continue
            for seat in (0, 1):  # OpenSpiel's "Money" is 100 minus what each has put in
                money = state.information_state_string(seat).split("[Money: ")[1].split("]")[0].split()
                assert LEDUC.view(state, seat).put_in() == tuple(100 - int(m) for m in money)
            state.apply_action(int(rng.choice(state.legal_actions())))
    env = gym.make("rl4vlm/LeducHoldem-vs-Random-v0", image_size=64)
    for seed in range(10):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(env.unwrapped.admissible_actions[-1])
            total, done = total + reward, terminated or truncated
        assert total == env.unwrapped.state.returns()[env.unwrapped.seat]


def test_folding_with_nothing_to_call_is_invalid_and_changes_nothing() -> None:
    env = hand("rl4vlm/LeducHoldem-vs-CFR-v0", 0, (0, 4), reward_variant="penalty")
    obs, reward, terminated, _, info = env.step("fold")
    assert not info["action"]["valid"] and reward == -0.1 and not terminated and env.unwrapped.history == (0, 4)
    assert obs["actions"] == ("call", "raise")
    assert env.step("check")[4]["action"]["parsed"] == "call"  # check means call


@pytest.mark.parametrize(("env_id", "low"), [("rl4vlm/LeducHoldem-vs-Random-v0", 1.5), ("rl4vlm/LeducHoldem-vs-CFR-v0", -0.6)])
def test_the_oracle_exploits_the_opponent(env_id: str, low: float) -> None:
    """The best response earns +2.37 chips a hand on average against random and about 0 against
    the equilibrium (exact values in the docstring); 150 hands keep the mean well above ``low``."""
    env = gym.make(env_id, image_size=64, obs_mode="text")
    total = 0.0
    for seed in range(150):
        env.reset(seed=seed)
        done = False
        while not done:
            _, reward, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
            total, done = total + reward, terminated or truncated
    assert total / 150 > low


def test_a_pickled_view_continues_the_hand() -> None:
    env = gym.make("rl4vlm/LeducHoldem-vs-Random-v0", image_size=64)
    env.reset(seed=3)
    env.step("call")
    if env.unwrapped.state.is_terminal():
        env.reset(seed=4)
    clone = pickle.loads(pickle.dumps(env))
    action = env.unwrapped.admissible_actions[0]
    a, b = env.step(action), clone.step(action)
    assert a[0]["text"] == b[0]["text"] and a[1:] == b[1:]


# The multi-agent env


def small_aec(**kwargs: object) -> LeducAEC:
    return leduc_env(image_size=64, render_fps=1000, **kwargs)


def test_pettingzoos_own_api_seed_and_render_tests_pass() -> None:
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small_aec(), num_cycles=100)
    seed_test(small_aec, num_cycles=50)
    render_test(lambda render_mode=None: small_aec(render_mode=render_mode))


def test_each_agent_sees_only_its_own_card_and_the_oracle_plays_the_equilibrium() -> None:
    env = small_aec()
    for seed in range(6):
        env.reset(seed=seed)
        deal = env.history[:2]
        for _agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            for viewer in env.agents:
                seat = env.possible_agents.index(viewer)
                text = env.observe(viewer)["text"]
                assert f"Your card: {card_name(deal[seat])}." in text and card_name(deal[1 - seat]) not in text
            move = env.oracle_action()
            state = env.state
            probs = LEDUC.policy("cfr", env.spec)(state.information_state_string(), state.legal_actions())
            assert probs[LEDUC.name_moves(state, env.spec).index(move)] > 0  # sampled: test_spiel_aec.py
            env.step(move)
    env.reset(seed=0)
    env.step("fold")  # nothing to call: refused, the turn stays
    assert env.agent_selection == "player_0" and not env.infos["player_0"]["action"]["valid"]
