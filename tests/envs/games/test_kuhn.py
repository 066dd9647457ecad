"""Rules of rl4vlm/KuhnPoker-vs-*-v0: OpenSpiel's chips, hidden cards, the shipped equilibrium
and the best-response oracle (tests/test_conformance.py runs the kit on them)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import pyspiel
from pettingzoo.test import api_test, render_test, seed_test

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.kuhn import CARDS, POLICY_FILE, KuhnOpponent, expected_chips, showdown
from rl4vlm_gym.envs.games.kuhn_aec import KuhnPokerAEC, kuhn_poker_env
from rl4vlm_gym.envs.games.spiel import replay


def hand(env_id: str, seat: int, cards: tuple[int, int], history: tuple[int, ...] = ()) -> gym.Env:
    """An env mid-hand: our OpenSpiel seat, the cards by seat and the moves so far."""
    env = gym.make(env_id, image_size=64)
    env.reset(seed=0)
    base = env.unwrapped
    base.seat, base.history = seat, (*cards, *history)  # every action, the deal's included
    base.state = replay(base.config.spec, base.history)
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
    total, cfr = 0.0, KuhnOpponent("cfr")
    for seat in (0, 1):
        for mine in range(3):  # our information set: our card, theirs unknown (each 1/2)
            deals = [(mine, theirs) if seat == 0 else (theirs, mine) for theirs in range(3) if theirs != mine]
            total += expected_chips([(game.new_initial_state().child(a).child(b), 0.5) for a, b in deals], seat, cfr) / 3
    assert total / 2 == pytest.approx(0.0, abs=1e-3)
    assert total > -0.01  # not below the value: a best response never does worse than the equilibrium


# The multi-agent env


def small_aec(**kwargs: object) -> KuhnPokerAEC:
    return kuhn_poker_env(image_size=64, render_fps=1000, **kwargs)


def test_pettingzoos_own_api_seed_and_render_tests_pass() -> None:
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small_aec(), num_cycles=100)
    seed_test(small_aec, num_cycles=50)
    render_test(lambda render_mode=None: small_aec(render_mode=render_mode))


def test_each_agent_sees_only_its_own_card_until_the_showdown() -> None:
    env = small_aec()
    for seed in range(12):
        env.reset(seed=seed)
        names = {agent: CARDS[card] for agent, card in zip(env.possible_agents, env.state.history()[:2], strict=True)}
        for _agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            for viewer, other in (("player_0", "player_1"), ("player_1", "player_0")):
                if viewer in env.agents:
                    text = env.observe(viewer)["text"]
                    assert f"Your card: {names[viewer]}" in text
                    assert (names[other] in text) == (showdown(env.history[2:], env.state.is_terminal())), (seed, viewer, text)
            env.step(None if terminated or truncated else "bet")  # bet, call: always a showdown
    # an agent's image does not change with the card it cannot see
    env.reset(seed=0)
    first = env.observe("player_0")["image"]
    mine, theirs = env.state.history()
    env.state = pyspiel.load_game("kuhn_poker").new_initial_state().child(mine).child(3 - mine - theirs)
    assert np.array_equal(first, env.observe("player_0")["image"])


def test_an_invalid_move_keeps_the_turn_and_the_hand_pays_openspiels_returns() -> None:
    env = small_aec()
    env.reset(seed=1)
    env.state = pyspiel.load_game("kuhn_poker").new_initial_state().child(2).child(0)  # player_0 holds the King
    env.step("raise")
    assert env.agent_selection == "player_0" and not env.infos["player_0"]["action"]["valid"]
    env.step("bet")
    assert env.agent_selection == "player_1" and env.observe("player_1")["actions"] == ("pass", "bet")
    env.step("call")
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 2.0, "player_1": -2.0}


def test_the_aec_oracle_plays_the_equilibriums_moves(tmp_path: object) -> None:
    table = json.loads(POLICY_FILE.read_text())["policy"]
    env = small_aec(obs_mode="text")
    seen = set()
    for seed in range(12):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            other = "player_1" if agent == "player_0" else "player_0"
            with pytest.raises(ValueError, match="has no move now"):
                env.oracle_action(other)
            p = table[env.state.information_state_string()]
            move = env.oracle_action(agent)
            assert p[("pass", "bet").index(move)] > 0  # a move of the equilibrium (sampled: test_spiel_aec.py)
            seen.add((env.state.information_state_string(), move))
            env.step(move)
    assert {m for _, m in seen} == {"pass", "bet"}  # both moves are the equilibrium's somewhere
    from rl4vlm_gym.harness import matches

    spec = matches.game_spec("kuhn_poker")
    records = matches.run_matches(
        spec, [matches.parse_player(n, spec) for n in ("random", "oracle")], range(4), tmp_path, game_kwargs={"obs_mode": "text"}
    )
    assert len(records) == 8 and not any(r["error"] or r["forfeit"] is not None for r in records)


def test_cached_frames_are_the_frames_drawn_for_what_the_agent_knows() -> None:
    from rl4vlm_gym.envs.games.kuhn import KUHN, hand_image

    env = small_aec()
    rng = np.random.default_rng(0)
    for seed in range(10):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            for viewer in env.agents:
                seat = env.possible_agents.index(viewer)
                image = env.observe(viewer)["image"]
                drawn = hand_image(KUHN.view(env.state, seat), (64, 64))
                assert np.array_equal(image, drawn)
                image[:] = 0  # the caller's copy: the cache keeps its own
            env.step(None if terminated or truncated else ("pass", "bet")[int(rng.integers(2))])
    assert 0 < len(env._frames) <= 2 * 3 * 4 * 5
