"""The OpenSpiel AEC envs with any number of players, N-player Liar's dice's rules, the exact dice
best response and the AEC oracle's sampled equilibrium (issue 34)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import pyspiel
from pettingzoo.test import api_test, render_test, seed_test

from rl4vlm_gym.envs.games import liars_dice_rules
from rl4vlm_gym.envs.games.kuhn import KUHN, contenders, equilibrium, showdown
from rl4vlm_gym.envs.games.kuhn_aec import kuhn_poker_env
from rl4vlm_gym.envs.games.leduc import LEDUC, leduc_env
from rl4vlm_gym.envs.games.liars_dice import BR_FILE, LIARS_DICE, SPECS, THREE_PLAYERS, liars_dice_env
from rl4vlm_gym.envs.games.liars_dice_oracle import DiceResponse


@pytest.mark.parametrize("numdice", [1, 2])
def test_the_n_player_rules_are_openspiels_at_two_players(numdice: int) -> None:
    """Move for move on 200 random games: turns, chance, legal actions, information state strings
    and tensors of both players, returns."""
    ours, theirs = pyspiel.load_game(liars_dice_rules.spec(2, numdice)), pyspiel.load_game(f"liars_dice(numdice={numdice})")
    assert (ours.num_distinct_actions(), ours.max_game_length()) == (theirs.num_distinct_actions(), theirs.max_game_length())
    assert ours.information_state_tensor_shape() == theirs.information_state_tensor_shape()
    rng = np.random.default_rng(numdice)
    for _ in range(200):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while not b.is_terminal():
            assert a.current_player() == b.current_player() and not a.is_terminal()
            if b.is_chance_node():
                assert a.chance_outcomes() == b.chance_outcomes()
                action = int(rng.integers(6))
            else:
                assert a.legal_actions() == b.legal_actions()
                for p in (0, 1):
                    assert a.information_state_string(p) == b.information_state_string(p)
                    assert a.information_state_tensor(p) == b.information_state_tensor(p)
                legal = b.legal_actions()
                action = legal[-1] if rng.random() < 0.15 else int(legal[rng.integers(len(legal))])  # Liar now and then
            a.apply_action(action)
            b.apply_action(action)
        assert a.is_terminal() and a.returns() == b.returns()


def test_three_player_liars_dice_pays_the_challenge() -> None:
    game = pyspiel.load_game(liars_dice_rules.spec(3, 1))
    assert (game.num_players(), game.num_distinct_actions()) == (3, 19)
    state = game.new_initial_state()
    for face in (4, 1, 5):  # dice 5, 2, 6
        state.apply_action(face)
    state.apply_action(1)  # player 0 bids 1-2
    state.apply_action(13)  # player 1 bids 3-2: the 2 and the 6 make two
    assert state.legal_actions()[-1] == 18 and state.current_player() == 2
    state.apply_action(18)  # player 2 calls: the bid is false
    assert state.is_terminal() and state.returns() == [0.0, -1.0, 1.0]
    state = game.new_initial_state()
    for face in (4, 1, 5, 12, 18):  # player 0 bids 3-1, player 1 calls
        state.apply_action(face)
    assert state.returns() == [-1.0, 1.0, 0.0]  # one 6, no 1: the bid fails
    with pytest.raises((ValueError, pyspiel.SpielError), match="players"):
        pyspiel.load_game(liars_dice_rules.spec(7, 1))


def test_the_liars_dice_oracle_gives_openspiels_best_response_values() -> None:
    """One die: the same values as OpenSpiel's TabularBestResponse (shipped), for each opponent and seat."""
    values = json.loads(gzip.decompress(BR_FILE.read_bytes()))["values"]
    for name in ("random", "heuristic"):
        for seat in (0, 1):
            assert DiceResponse.of(SPECS[0], seat, name).expected_return() == pytest.approx(values[name][seat], abs=1e-12)
    # three players: the chance that we get to move is 1 as the first two, less as the last
    reach = [DiceResponse.of(THREE_PLAYERS, seat, "random").reach_probability() for seat in range(3)]
    assert reach[:2] == pytest.approx([1.0, 1.0], abs=1e-12) and 0.75 < reach[2] < 0.85


@pytest.mark.parametrize(("make", "players"), [(liars_dice_env, 3), (liars_dice_env, 4), (kuhn_poker_env, 3)])
def test_pettingzoos_api_and_seed_tests_pass_with_more_players(make: object, players: int) -> None:
    api_test(make(players=players, obs_mode="text", image_size=64), num_cycles=60)  # type: ignore[operator]
    seed_test(lambda: make(players=players, obs_mode="text", image_size=64), num_cycles=40)  # type: ignore[operator]
    render_test(lambda render_mode=None: make(players=players, image_size=64, render_mode=render_mode))  # type: ignore[operator]


@pytest.mark.parametrize("players", [0, 1, 7, 2.0, True, "3"])
def test_a_bad_number_of_players_is_refused(players: object) -> None:
    with pytest.raises(ValueError, match="players="):
        liars_dice_env(players=players)
    with pytest.raises(ValueError, match="players="):
        kuhn_poker_env(players=4 if players == 0 else players)
    with pytest.raises(ValueError, match="players="):
        leduc_env(players=3)


def test_each_of_three_players_sees_its_own_dice_every_count_and_every_bid() -> None:
    env = liars_dice_env(players=3, image_size=64)
    env.reset(seed=5)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    dice = [a + 1 for a in env.history]
    images = {a: env.observe(a)["image"] for a in env.agents}
    assert not np.array_equal(images["player_0"], images["player_1"])  # each its own view
    for k in range(3):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        legal = env.state.legal_actions()
        assert env.legal_moves(agent) == tuple(LIARS_DICE.action_name(a, env.spec) for a in legal)  # in OpenSpiel's order
        move = env.legal_moves(agent)[k]
        env.step(move)
        for viewer in env.agents:
            text = env.observe(viewer)["text"]
            me = env.possible_agents.index(viewer)
            assert f"Your die: {dice[me]}." in text
            others = [p for p in range(3) if p != me]
            assert all(f"player {p}: 1 die hidden" in text for p in others)
            said = "You chose" if viewer == agent else f"Player {seat} chose"
            assert text.startswith(f"{said} {move}.")
    bids = ", ".join(
        f"{'you' if p == 1 else f'player {p}'} {LIARS_DICE.action_name(a, env.spec)}" for p, a in enumerate(env.history[3:])
    )
    assert f"Bids: {bids}." in env.observe("player_1")["text"]  # every bid and its bidder


def test_three_player_kuhn_deals_four_cards_and_pays_openspiels_returns() -> None:
    env = kuhn_poker_env(players=3, obs_mode="text")
    for seed in range(30):
        env.reset(seed=seed)
        deal, paid = env.history[:3], {}
        assert len(set(deal)) == 3 and max(deal) <= 3
        for agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                paid[agent] = reward
                env.step(None)
                continue
            text = env.observe(agent)["text"]
            seat = env.possible_agents.index(agent)
            assert sum(f"player {p}: hidden" in text for p in range(3) if p != seat) == 2  # nothing shown before the end
            env.step(env.oracle_action())
        history = tuple(env.history[3:])
        for seat in range(3):  # at a showdown the players still in show their cards, the others not
            shown = KUHN.view(env.state, seat).shown
            still_in = contenders(history, 3) if showdown(history, True, 3) else []
            assert shown == tuple(c if p == seat or p in still_in else None for p, c in enumerate(deal))
        returns = env.state.returns()
        assert [paid[a] for a in env.possible_agents] == list(returns) and sum(returns) == 0


def moves_at(make: object, seed: int, key: str, rounds: int) -> list[str]:
    """The oracle's moves at the information state ``key`` of the first player, over ``rounds``
    draws at that node (the env put back at the deal each time)."""
    env = make(obs_mode="text")  # type: ignore[operator]
    env.reset(seed=seed)
    assert env.state.information_state_string() == key
    return [env.oracle_action() for _ in range(rounds)]


def test_the_aec_oracle_samples_the_equilibrium() -> None:
    """The oracle's moves at one information state follow the equilibrium's probabilities (an
    exact binomial bound), its draws leave the deal alone, and one seed gives the same moves."""
    env = kuhn_poker_env(obs_mode="text")
    for seed in range(50):
        env.reset(seed=seed)
        if env.state.information_state_string() == "0":
            break
    p_bet = equilibrium()["0"][1]  # holding the Jack, first to act: bet (bluff) about 1/3 of the time at most
    assert 0.05 < p_bet < 0.5
    moves = moves_at(kuhn_poker_env, seed, "0", 2000)
    bets = moves.count("bet") / len(moves)
    assert abs(bets - p_bet) < 4 * (p_bet * (1 - p_bet) / len(moves)) ** 0.5, (bets, p_bet)
    assert moves == moves_at(kuhn_poker_env, seed, "0", 2000)  # same seed, same draws
    # the draws come from a generator of their own: the next deal is the same with or without them
    quiet = kuhn_poker_env(obs_mode="text")
    quiet.reset(seed=seed)
    env.reset(seed=seed)
    for _ in range(7):
        env.oracle_action()
    env.step("pass")
    quiet.step("pass")
    env.reset()
    quiet.reset()
    assert env.history == quiet.history
    # Leduc: every move the oracle plays has probability above 0 in the CFR+ table
    env = leduc_env(obs_mode="text")
    env.reset(seed=1)
    state = env.state
    probs = LEDUC.policy("cfr", env.spec)(state.information_state_string(), state.legal_actions())
    drawn = {env.oracle_action() for _ in range(300)}
    support = {m: p for m, p in zip(LEDUC.name_moves(state, env.spec), probs, strict=True) if p > 0}
    assert drawn <= set(support) and {m for m, p in support.items() if p > 0.05} <= drawn


def test_the_three_player_kuhn_table_gives_back_its_recorded_exploitability() -> None:
    """``rl4vlm-gym exploitability`` reads the shipped 3-player table (every table we ship round-trips)."""
    from rl4vlm_gym.envs.games.kuhn import POLICY_FILES
    from rl4vlm_gym.harness.exploitability import exploitability, read_policy

    data = json.loads(POLICY_FILES[3].read_text())
    assert data["game"] == "kuhn_poker(players=3)" and len(data["policy"]) == 48
    table = read_policy(POLICY_FILES[3])
    result = exploitability(data["game"], lambda state: dict(enumerate(table[state.information_state_string()])))
    assert result["exploitability"] == pytest.approx(data["exploitability"], abs=1e-6)
    assert result["nash_conv"] == pytest.approx(data["nash_conv"], abs=1e-6) and data["nash_conv"] < 1e-3
