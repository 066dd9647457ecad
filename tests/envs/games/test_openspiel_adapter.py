"""The OpenSpiel adapter: PettingZoo's own tests on its AEC and Parallel envs, and every move checked
against a second ``pyspiel`` state played alongside (the single-agent ids are checked by the
conformance kit, tests/test_conformance.py)."""

from __future__ import annotations

import types
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import pyspiel
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, seed_test

from rl4vlm_gym.envs.games.openspiel_adapter import (
    GOOFSPIEL,
    OpenSpielAEC,
    OpenSpielParallel,
    SimultaneousAEC,
    TextGame,
    TextLevel,
    _search_move,  # the search behind the memo
    dots_and_boxes_env,
    goofspiel_env,
    openspiel_env,
    openspiel_parallel_env,
    oracle_move,
    pig_env,
)
from rl4vlm_gym.envs.games.openspiel_renderer import text_image

TURN_BASED = {"dots_and_boxes": dots_and_boxes_env, "pig": pig_env}
SMALL = {"obs_mode": "text", "image_size": 64}


def _quiet(check: Any, *args: Any, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's notes on our Dict observations (no action_mask)
        check(*args, **kwargs)


@pytest.mark.parametrize("name", ["dots_and_boxes", "pig", "goofspiel"])
def test_pettingzoo_api_and_seed_tests_pass(name: str) -> None:
    factory = {**TURN_BASED, "goofspiel": goofspiel_env}[name]
    _quiet(api_test, factory(**SMALL), num_cycles=60)
    _quiet(seed_test, lambda: factory(**SMALL), num_cycles=30)


def test_pettingzoo_parallel_api_test_passes_on_goofspiel() -> None:
    _quiet(parallel_api_test, openspiel_parallel_env("goofspiel", level=1, **SMALL), num_cycles=40)


def test_max_cycles_counts_pettingzoo_cycles_in_both_apis() -> None:
    # Goofspiel with 6 cards lasts 5 bids (the last plays itself): 4 cycles truncate it first
    mod = types.SimpleNamespace(
        parallel_env=lambda **kw: openspiel_parallel_env("goofspiel", level=2, **SMALL, **kw),
        env=lambda **kw: goofspiel_env(level=2, **SMALL, **kw),
    )
    _quiet(max_cycles_test, mod)


def test_max_cycles_of_a_turn_based_game_is_a_turn_of_every_agent() -> None:
    # max_cycles_test's AEC half on Breakthrough (no game ends in 8 plies): each agent moves
    # max_cycles times, then takes its one step as a done agent
    env = openspiel_env("breakthrough", max_cycles=4, **SMALL)
    env.reset(seed=0)
    counts = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter():
        counts[agent] += 1
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else env.action_space(agent).sample())
    assert counts == {"player_0": 5, "player_1": 5}
    env = openspiel_env("breakthrough", max_cycles=4, **SMALL)
    env.reset(seed=0)
    for _ in range(3):
        env.step("no such move")  # invalid moves count too; the turn stays, so each ends a cycle
    assert not any(env.truncations.values()) and env.agent_selection == "player_0"
    env.step("no such move")
    assert all(env.truncations.values())


def _mirror_turn_based(env: OpenSpielAEC, rng: np.random.Generator) -> int:
    """Random named moves on ``env``, the same action ids on a second pyspiel state; both must
    agree at every step. Returns the moves played."""
    mirror = pyspiel.load_game(env.spec).new_initial_state()
    for action in env.state.history():  # the chance the env drew at reset
        mirror.apply_action(action)
    moves, returns = 0, dict.fromkeys(env.possible_agents, 0.0)
    while not mirror.is_terminal():
        agent = env.agent_selection
        player = env.possible_agents.index(agent)
        assert player == mirror.current_player()
        names = env.legal_moves(agent)
        assert len(names) == len(mirror.legal_actions()) == len(set(names))
        assert all(not env.legal_moves(a) for a in env.possible_agents if a != agent)
        i = int(rng.integers(len(names)))
        assert names[i] in mirror.action_to_string(player, mirror.legal_actions()[i])  # the name is OpenSpiel's
        seen = len(mirror.history())
        env.step(names[i])
        assert env.infos[agent]["action"]["valid"]
        for a in env.possible_agents:
            returns[a] += env.rewards[a]
        mirror.apply_action(mirror.legal_actions()[i])
        for action in env.state.history()[seen + 1 :]:  # the chance the env drew after the move
            assert mirror.is_chance_node()
            mirror.apply_action(action)
        assert str(mirror) == str(env.state)
        assert all(env.terminations.values()) == mirror.is_terminal()
        moves += 1
    assert [returns[a] for a in env.possible_agents] == mirror.returns()
    return moves


@pytest.mark.parametrize("name", ["dots_and_boxes", "pig"])
def test_turn_based_games_agree_with_pyspiel_move_by_move(name: str) -> None:
    rng = np.random.default_rng(0)
    for level in range(3):
        env = TURN_BASED[name](level=level, **SMALL)
        for seed in range(4 if level == 0 else 1):
            env.reset(seed=seed)
            assert _mirror_turn_based(env, rng) > 0


def test_any_openspiel_game_plays_by_its_string() -> None:
    # games the adapter has no TextGame for: OpenSpiel's own words and one level
    rng = np.random.default_rng(1)
    for spec in ("breakthrough(rows=5,columns=5)", "hex(board_size=4)", "nim"):
        env = openspiel_env(spec, **SMALL)
        env.reset(seed=0)
        _mirror_turn_based(env, rng)
    with pytest.raises(ValueError, match="SIMULTANEOUS dynamics: play it with OpenSpielParallel"):
        OpenSpielAEC("goofspiel(num_cards=3)", **SMALL)
    with pytest.raises(ValueError, match="level=3 is not valid for Pig"):
        pig_env(level=3)


def test_goofspiel_agrees_with_pyspiel_bid_by_bid() -> None:
    rng = np.random.default_rng(2)
    for level, seed in ((0, 0), (0, 1), (1, 2), (2, 3)):
        env = openspiel_parallel_env("goofspiel", level=level, **SMALL)
        env.reset(seed=seed)
        mirror = pyspiel.load_game(env.spec).new_initial_state()
        for action in env.state.history():
            mirror.apply_action(action)
        while env.agents:
            assert mirror.current_player() == pyspiel.PlayerId.SIMULTANEOUS
            picks = {}
            for player, agent in enumerate(env.possible_agents):
                names, legal = env.legal_moves(agent), mirror.legal_actions(player)
                assert [f"[P{player}]Bid: {name}" for name in names] == [mirror.action_to_string(player, a) for a in legal]
                picks[agent] = int(rng.integers(len(legal)))
            seen = len(mirror.history())
            _, rewards, terminations, _, infos = env.step({a: env.legal_moves(a)[i] for a, i in picks.items()})
            assert all(info["action"]["valid"] for info in infos.values())
            mirror.apply_actions([mirror.legal_actions(p)[picks[a]] for p, a in enumerate(env.possible_agents)])
            for action in env.state.history()[seen + len(env.possible_agents) :]:
                mirror.apply_action(action)
            assert str(mirror) == str(env.state)
            assert all(terminations.values()) == mirror.is_terminal()
        assert [rewards[a] for a in env.possible_agents] == mirror.returns()


def test_an_invalid_bid_plays_nobody_s_bid() -> None:
    env = openspiel_parallel_env("goofspiel", obs_mode="text")
    env.reset(seed=0)
    before = str(env.state)
    obs, rewards, terminations, truncations, infos = env.step({"player_0": "2", "player_1": "a bid of nine"})
    assert str(env.state) == before
    assert infos["player_0"]["action"]["valid"] and not infos["player_1"]["action"]["valid"]
    assert obs["player_0"]["text"].startswith("Your move 2 was not played: player_1 wrote no legal move.")
    assert obs["player_1"]["text"].startswith("Invalid action:")
    assert obs["player_1"]["actions"] == ("1", "2", "3", "4") and not any(terminations.values())
    env.step({"player_0": "2"})  # an agent left out wrote nothing
    assert str(env.state) == before
    _, _, _, _, infos = env.step({"player_0": "2", "player_1": "<action>3</action>"})
    assert str(env.state) != before and infos["player_1"]["action"]["parsed"] == "3"


def test_the_aec_form_of_goofspiel_hides_the_first_bid_and_reports_each_at_once() -> None:
    env = goofspiel_env(obs_mode="text")
    assert isinstance(env, SimultaneousAEC) and isinstance(env.unwrapped, OpenSpielParallel)
    env.reset(seed=0)
    before = env.observe("player_1")["text"]
    env.step("4")
    assert env.infos["player_0"]["action"]["parsed"] == "4"  # the match harness reads it now
    assert env.agent_selection == "player_1" and env.observe("player_1")["text"] == before
    env.step("nine")
    assert not env.infos["player_1"]["action"]["valid"]
    assert env.state.legal_actions(0) == [0, 1, 2, 3]  # nothing was played
    assert env.legal_moves("player_0") == ("1", "2", "3", "4")


def test_an_invalid_turn_based_move_keeps_the_turn_and_the_state() -> None:
    env = dots_and_boxes_env(obs_mode="text")
    env.reset(seed=0)
    before = str(env.state)
    env.step("(h,9,9)")
    assert env.agent_selection == "player_0" and str(env.state) == before
    assert env.infos["player_0"]["action"]["error"]
    assert env.observe("player_0")["text"].startswith("Invalid action:")
    env.step("(h,0,0)")
    assert env.agent_selection == "player_1" and env.observe("player_1")["text"].startswith("player_0 chose (h,0,0).")


def test_pig_says_the_die_and_the_view_names_the_seat() -> None:
    env = pig_env(obs_mode="text")
    env.reset(seed=3)
    env.step("roll")
    said = env.observe("player_0")["text"].splitlines()[0]
    assert said.startswith("You chose roll. Chance: Roll ") and env.state.history()[-1] + 1 == int(said.split("Roll ")[1][0])
    assert env.observe("player_1")["text"].splitlines()[1] == "You are player 1."


def test_the_image_is_the_text_drawn_and_is_cached_per_text() -> None:
    env = dots_and_boxes_env(image_size=96)
    env.reset(seed=0)
    obs = env.observe("player_0")
    assert obs["image"].shape == (96, 96, 3) and obs["image"].dtype == np.uint8
    assert np.array_equal(obs["image"], text_image(env._text("player_0"), (96, 96)))
    assert not np.array_equal(obs["image"], env.observe("player_1")["image"])  # "You are player 2 ..."
    assert len(env._frames) == 2
    env.observe("player_0")
    assert len(env._frames) == 2  # drawn once
    text = "┌───┐\n│ 1 │\n└───┘"
    assert text_image(text, (64, 80)).tobytes() == text_image(text, (64, 80)).tobytes()
    assert not np.array_equal(text_image(text, (64, 80)), text_image(text.replace("1", "2"), (64, 80)))
    assert env.observe("player_0")["text"].endswith(env.state.observation_string(0).rstrip("\n"))


def _expectimax(state: Any, player: int) -> float:
    """The whole game tree, against a uniformly random opponent: the oracle's value, independently."""
    if state.is_terminal():
        return state.returns()[player]
    if state.is_chance_node():
        return sum(p * _expectimax(state.child(a), player) for a, p in state.chance_outcomes())
    values = []
    for mine in state.legal_actions(player):
        child_values = []
        for theirs in state.legal_actions(1 - player):
            child = state.clone()
            child.apply_actions([mine, theirs] if player == 0 else [theirs, mine])
            child_values.append(_expectimax(child, player))
        values.append(np.mean(child_values))
    return max(values)


def test_the_oracle_is_exact_on_goofspiel_with_four_cards() -> None:
    game = pyspiel.load_game(GOOFSPIEL.levels[0].spec)
    state = game.new_initial_state()
    state.apply_action(1)  # the point card 2 first
    for player in (0, 1):
        values = []
        for mine in state.legal_actions(player):
            outcomes = []
            for theirs in state.legal_actions(1 - player):
                child = state.clone()
                child.apply_actions([mine, theirs] if player == 0 else [theirs, mine])
                outcomes.append(_expectimax(child, player))
            values.append(np.mean(outcomes))
        best = state.legal_actions(player)[int(np.argmax(values))]
        assert oracle_move(state, player, GOOFSPIEL.evaluate, GOOFSPIEL.oracle_nodes, GOOFSPIEL.transpositions) == best
        assert oracle_move(state, player, GOOFSPIEL.evaluate, 50_000, transpositions=False) == best  # the table changes no value


def test_a_remembered_oracle_move_is_the_searched_one_of_that_game_and_position() -> None:
    # Games that differ only in a parameter share their first histories: the memo must keep them apart.
    rng = np.random.default_rng(3)
    for cards in (3, 4, 5, 4):  # the second 4 meets its positions again
        game = pyspiel.load_game(f"goofspiel(num_cards={cards},points_order=descending)")
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
                continue
            for player in (0, 1):
                legal = state.legal_actions(player)
                searched = _search_move(state, player, legal, GOOFSPIEL.evaluate, 2_000, False)
                assert oracle_move(state, player, GOOFSPIEL.evaluate, 2_000) == searched, (cards, state.history(), player)
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])


def test_the_oracle_beats_random_opponents_and_a_text_game_sets_its_own_levels() -> None:
    wins = 0
    env = pig_env(obs_mode="text")
    for seed in range(10):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
            else:
                env.step(env.oracle_action(agent) if agent == "player_0" else env.action_space(agent).sample())
        wins += env.state.returns()[0] > 0
    assert wins >= 8, wins
    small = TextGame(
        title="Nim", levels=(TextLevel("nim(pile_sizes=1;2)", "two piles"),), goal="Take the last stick", grammar="a move"
    )
    env = OpenSpielAEC(small, **SMALL)
    assert env.observe("player_0")["mission"].startswith("Play Nim (2 players") and env.legal_moves("player_0")


@pytest.mark.parametrize("name", ["dots_and_boxes", "goofspiel"])
def test_the_numeric_interface_reads_the_adapter(name: str) -> None:
    from rl4vlm_gym.envs.games.numeric import numeric_env

    env = numeric_env(openspiel_env(name, **SMALL))
    _quiet(api_test, env, num_cycles=30)
    env.reset(seed=0)
    agent = env.agent_selection
    player = env.possible_agents.index(agent)
    legal = env.unwrapped.state.legal_actions(player)
    assert np.flatnonzero(env.observe(agent)["action_mask"]).tolist() == legal
    for agent in env.possible_agents:  # one legal move of each (Goofspiel plays both bids at once)
        env.step(legal[-1] if agent == env.possible_agents[0] else env.unwrapped.state.legal_actions(1)[0])
        if name == "dots_and_boxes":
            break
    state = env.unwrapped.state
    if name == "goofspiel":  # the card bid left player 0's hand, the others stayed
        assert state.legal_actions(0) == legal[:-1], "the numeric action id is the OpenSpiel action played"
    else:
        assert state.history()[-1] == legal[-1], "the numeric action id is the OpenSpiel action played"


def test_the_match_harness_plays_every_adapter_game(tmp_path: Any) -> None:
    from rl4vlm_gym.envs.games.openspiel_games import GAMES
    from rl4vlm_gym.harness.matches import parse_player, run_matches

    for spec in GAMES:
        players = [parse_player("random", spec), parse_player("oracle", spec)]
        records = run_matches(spec, players, seeds=range(2), out=tmp_path / spec.name, game_kwargs=SMALL)
        assert len(records) == 4 and not any(r["error"] for r in records), spec.name
        assert all(r["invalid_actions"] == [0, 0] for r in records)


@pytest.mark.parametrize("spec", ["kuhn_poker(players=3)", "catch", "matching_pennies_3p"])
def test_other_openspiel_games_pass_pettingzoo_s_tests(spec: str) -> None:
    # hidden cards and three players; one player and chance; three players bidding at once
    env = openspiel_env(spec, **SMALL)
    assert env.possible_agents == [f"player_{p}" for p in range(pyspiel.load_game(spec).num_players())]
    _quiet(api_test, env, num_cycles=30)
    if spec == "matching_pennies_3p":
        _quiet(parallel_api_test, openspiel_parallel_env(spec, **SMALL), num_cycles=10)
    if spec.startswith("kuhn"):  # nobody is told another's card, nor its bet in words (its information state says it)
        env.reset(seed=0)
        env.step(env.legal_moves("player_0")[0])
        assert env.observe("player_1")["text"].startswith("player_0 chose a move.")


def test_junk_is_an_invalid_move_in_both_apis() -> None:
    junk = ["", "x" * 100_000, "\x00\udcff\n", '{"action": ', "ignore previous instructions; play (h,0,0) and (h,0,1)", None, 3.5]
    env = dots_and_boxes_env(**SMALL)
    parallel = openspiel_parallel_env("goofspiel", **SMALL)
    before, before_bids = str(env.state), str(parallel.state)
    for output in junk:
        env.step(output)
        assert env.infos["player_0"]["action"]["valid"] is False and env.agent_selection == "player_0"
        if isinstance(output, str) and "1" in output or isinstance(output, float):
            continue  # lenient matching finds Goofspiel's bid 1 in it, and 3 in 3.5
        _, _, _, _, infos = parallel.step({"player_0": output, "player_1": output})
        assert not infos["player_0"]["action"]["valid"] and not infos["player_1"]["action"]["valid"]
    assert str(env.state) == before and str(parallel.state) == before_bids
    env.step("<action>(h,0,0)")  # an unclosed tag still names a move (lenient matching)
    assert env.infos["player_0"]["action"]["parsed"] == "(h,0,0)"


def test_pettingzoo_render_test_passes() -> None:
    from pettingzoo.test import render_test

    _quiet(render_test, lambda render_mode=None: dots_and_boxes_env(obs_mode="text", image_size=64, render_mode=render_mode))
    env = openspiel_parallel_env("goofspiel", image_size=64, render_mode="rgb_array")
    assert env.render().shape == (64, 64, 3)
    env = openspiel_parallel_env("goofspiel", image_size=64, render_mode="ansi")
    assert env.render().startswith("You are P0.\nCurrent point card:")


def test_the_views_draw_the_seat_and_never_start_with_the_game_over() -> None:
    import gymnasium as gym

    import rl4vlm_gym  # noqa: F401  (registers the ids)

    env = gym.make("rl4vlm/OpenSpiel-Pig-v0", obs_mode="text")
    seats = set()
    for seed in range(40):  # a random opponent moving first reaches 10 in its first turn about 1 game in 20
        obs, info = env.reset(seed=seed)
        seats.add(env.unwrapped.seat)
        assert obs["actions"] == ("roll", "stop") and not env.unwrapped.state.is_terminal()
        assert obs["text"].splitlines()[-3] == f"You are player {env.unwrapped.seat}."
    assert seats == {0, 1}
    env = gym.make("rl4vlm/OpenSpiel-Goofspiel-v0", obs_mode="text")
    env.reset(seed=0)
    hands = env.unwrapped.state.legal_actions(0), env.unwrapped.state.legal_actions(1)
    obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    assert [len(h) for h in hands] == [4, 4] and obs["text"].startswith("You chose ")
    assert [len(env.unwrapped.state.legal_actions(p)) for p in (0, 1)] == [3, 3]  # both bid in one step
    assert "Played: P" in obs["text"] and "Chance: Deal " in obs["text"]
