"""Rules of the games family: PettingZoo's own tests on the AEC envs, the board model against
PettingZoo, the players and the single-agent views (tests/test_conformance.py runs the kit on them)."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

from pettingzoo.test import api_test, render_test, seed_test

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.aec import BoardGameAEC, connect_four_env, describe, mission, tictactoe_env
from rl4vlm_gym.envs.games.boards import CONNECT_FOUR_SIZES, GAMES, ConnectFourArt, connect_four_game
from rl4vlm_gym.envs.games.opponents import HeuristicPlayer, PerfectPlayer, RandomPlayer, SearchPlayer, c4_move_values, ttt_value
from rl4vlm_gym.envs.games.views import ConnectFourVsSearch

FACTORIES = {"tictactoe": tictactoe_env, "connect_four": connect_four_env}


def small(game: str, **kwargs: Any) -> BoardGameAEC:
    return FACTORIES[game](image_size=32, render_fps=1000, **kwargs)


@pytest.mark.parametrize("game", list(FACTORIES))
def test_pettingzoos_own_api_seed_and_render_tests_pass(game: str) -> None:
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small(game), num_cycles=100)
    seed_test(lambda: small(game), num_cycles=50)
    render_test(lambda render_mode=None: small(game, render_mode=render_mode))


@pytest.mark.parametrize("level", range(len(CONNECT_FOUR_SIZES)))
def test_connect_four_aec_plays_every_board_size_of_the_ladder(level: int) -> None:
    rows, cols = CONNECT_FOUR_SIZES[level]
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small("connect_four", level=level), num_cycles=100)
    seed_test(lambda: small("connect_four", level=level), num_cycles=50)
    env = small("connect_four", level=level)
    env.reset(seed=0)
    agent = env.agent_selection
    assert env.legal_moves(agent) == tuple(str(c + 1) for c in range(cols))
    assert f"1 to {cols}" in env.observe(agent)["mission"] and f"{rows}  " in env.observe(agent)["text"]
    for agent in env.agent_iter(200):  # the exact players finish a game on the board
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else env.oracle_action(agent))
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.observe(env.possible_agents[0])["image"].shape == (32, 32, 3)


def test_a_level_off_the_ladder_is_refused() -> None:
    with pytest.raises(ValueError, match="level=3 is not valid for connect_four"):
        connect_four_env(level=3)
    with pytest.raises(ValueError, match="level=1 is not valid for tictactoe"):
        tictactoe_env(level=1)


@pytest.mark.parametrize("game", list(GAMES))
def test_the_board_model_agrees_with_pettingzoo_move_by_move(game: str) -> None:
    spec, rng = GAMES[game], np.random.default_rng(0)
    for _ in range(30):
        env = spec.pettingzoo_env()
        board = spec.empty()
        while True:
            legal = spec.legal(board)
            mask = env.observe(env.agent_selection)["action_mask"]
            assert legal == [int(i) for i in np.flatnonzero(mask)]
            move = int(rng.choice(legal))
            piece = spec.to_move(board)
            env.step(move)
            board = spec.play(board, move, piece)
            assert board == spec.read(env)
            over = any(env.terminations.values())
            assert over == spec.over(board)
            if over:
                winner = spec.winner(board)
                assert env.rewards[env.possible_agents[0]] == (0 if not winner else 1 if winner == 1 else -1)
                break


def test_perfect_tictactoe_draws_itself_and_never_loses() -> None:
    game = GAMES["tictactoe"]
    assert ttt_value(game.empty()) == 0  # Tic-Tac-Toe is a draw
    rng = np.random.default_rng(1)
    for seat in (1, 2):
        for _ in range(20):
            board = game.empty()
            while not game.over(board):
                player = PerfectPlayer() if game.to_move(board) == seat else RandomPlayer()
                board = game.play(board, player.choose(game, board, rng), game.to_move(board))
            assert game.winner(board) in (0, seat)


def test_players_win_when_they_can_and_block_when_they_must() -> None:
    ttt = GAMES["tictactoe"]
    # column-major squares: X on a1 and a2 (0, 1), O on b1 and b2 (3, 4); X to move wins on a3 (2)
    board = (1, 1, 0, 2, 2, 0, 0, 0, 0)
    for player in (HeuristicPlayer(), PerfectPlayer()):
        assert player.distribution(ttt, board) == {2: 1.0}
    # O to move must block X's a1-a2 line on a3
    board = (1, 1, 0, 0, 0, 0, 2, 0, 0)
    assert HeuristicPlayer().distribution(ttt, board) == {2: 1.0}
    c4 = GAMES["connect_four"]
    board = c4.empty()
    for col in (0, 6, 1, 6, 2):  # red has three along the bottom; black to move must block column 4
        board = c4.play(board, col, c4.to_move(board))
    for player in (HeuristicPlayer(), SearchPlayer(depth=1), SearchPlayer(depth=4)):
        assert player.best(c4, board) == 3, player
    board = c4.play(board, 5, 2)  # black elsewhere: red wins on column 4
    assert SearchPlayer(depth=4).best(c4, board) == 3 and HeuristicPlayer().best(c4, board) == 3


def test_the_search_sees_a_forced_win_within_its_depth() -> None:
    c4 = GAMES["connect_four"]
    board = c4.empty()
    for col in (1, 1, 2, 2):  # red on the bottom of columns 2 and 3, black on top of them; red to move
        board = c4.play(board, col, c4.to_move(board))
    # red in column 4 makes an open three on the bottom row: two threats, a win two plies later
    assert c4_move_values(board, 3)[3] > 1_000_000 > max(c4_move_values(board, 1).values())
    assert SearchPlayer(depth=3).distribution(c4, board) == {3: 1.0}


def test_search_beats_the_heuristic_and_random() -> None:
    c4, rng = GAMES["connect_four"], np.random.default_rng(2)
    for opponent in (RandomPlayer(), HeuristicPlayer()):
        wins = 0
        for game_no in range(4):
            board, seat = c4.empty(), 1 + game_no % 2
            while not c4.over(board):
                piece = c4.to_move(board)
                move = SearchPlayer(depth=4).best(c4, board) if piece == seat else opponent.choose(c4, board, rng)
                board = c4.play(board, move, piece)
            wins += c4.winner(board) == seat
        assert wins >= 3, (opponent, wins)


def test_an_invalid_move_changes_nothing_keeps_the_turn_and_says_why() -> None:
    env = small("tictactoe", reward_variant="penalty")
    env.reset(seed=0)
    env.step("b2")
    assert env.agent_selection == "player_2"
    env.step("b2")  # taken
    assert env.agent_selection == "player_2" and env.board == (0, 0, 0, 0, 1, 0, 0, 0, 0)
    assert env.rewards == {"player_1": 0.0, "player_2": -0.1}
    assert not env.infos["player_2"]["action"]["valid"]
    obs = env.observe("player_2")
    assert obs["text"].startswith("Invalid action") and "b2" not in obs["actions"] and len(obs["actions"]) == 8
    assert env.observe("player_1")["actions"] == ()  # not its turn
    env.step('{"action": "a1"}')
    assert env.agent_selection == "player_1" and env.observe("player_1")["text"].startswith("Your opponent played a1.")


def test_each_agent_sees_its_own_side_and_the_game_ends_with_pettingzoos_rewards() -> None:
    env = small("connect_four")
    env.reset()
    for move in ("4", "1", "4", "2", "4", "3"):
        env.step(move)
    assert "You play red" in env.observe("player_0")["mission"] and "You play black" in env.observe("player_1")["mission"]
    assert env.oracle_action() == "4"  # red wins on top of its column
    env.step("4")
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert "You lost." in env.observe("player_1")["text"] and "You won." in env.observe("player_0")["text"]


def test_perfect_agents_draw_through_the_aec_api() -> None:
    env = small("tictactoe", obs_mode="text", render_mode="ansi")
    env.reset()
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            assert reward == 0.0
            env.step(None)
        else:
            env.step(env.oracle_action(agent))
    assert GAMES["tictactoe"].winner(env.board) == 0 and not GAMES["tictactoe"].legal(env.board)
    assert env.agents == [] and "The game is a draw." in env.render()  # every agent has left


def test_max_cycles_truncates_a_game_of_invalid_moves() -> None:
    env = small("tictactoe", max_cycles=3)
    env.reset()
    for _ in range(3):
        env.step("pass")
    assert all(env.truncations.values()) and not any(env.terminations.values())


# Single-agent views


def test_the_seed_draws_the_seat_and_the_opponent_opens_when_we_play_second() -> None:
    env = gym.make("rl4vlm/TicTacToe-vs-Heuristic-v0", image_size=32)
    seats, openings = set(), set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        base = env.unwrapped
        seats.add(base.seat)
        if base.seat == 1:
            assert base.board == (0,) * 9 and base.history == []
        else:  # one cross, where the history says
            assert sorted(base.board) == [0] * 8 + [1] and base.history == [base.board.index(1)]
            openings.add(base.board.index(1))
        assert f"you play {'X' if base.seat == 1 else 'O'}" in obs["text"]
    assert seats == {1, 2} and 4 in openings and len(openings) > 1  # mostly the centre, not always


def test_a_view_step_is_our_move_and_the_opponents_reply() -> None:
    env = gym.make("rl4vlm/ConnectFour-vs-Random-v0", image_size=32)
    env.reset(seed=0)
    base = env.unwrapped
    before = sum(1 for v in base.board if v)
    obs, reward, terminated, _, info = env.step(obs_action := obs_first(env))
    assert info["action"]["valid"] and not terminated and reward == 0.0
    assert sum(1 for v in base.board if v) == before + 2 and obs["text"].startswith(f"You played {obs_action}. Your opponent played")


def obs_first(env: gym.Env) -> str:
    return env.unwrapped.admissible_actions[0]


def test_the_tictactoe_oracle_maximises_the_expected_return() -> None:
    for env_id, low, high in (("TicTacToe-vs-Random", 0.9, 1.0), ("TicTacToe-vs-Perfect", 0.0, 0.0)):
        env = gym.make(f"rl4vlm/{env_id}-v0", image_size=32, obs_mode="text")
        returns = []
        for seed in range(20):
            env.reset(seed=seed)
            done, total = False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
                total, done = total + reward, terminated or truncated
            returns.append(total)
        assert low <= np.mean(returns) <= high and min(returns) >= 0.0, (env_id, returns)


def test_a_pickled_view_continues_the_game_in_progress() -> None:
    env = gym.make("rl4vlm/TicTacToe-vs-Random-v0", image_size=32)
    env.reset(seed=5)
    env.step(env.unwrapped.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.board == env.unwrapped.board
    action = env.unwrapped.oracle_action()
    a, b = env.step(action), clone.step(action)
    assert a[0]["text"] == b[0]["text"] and a[1:] == b[1:]


# Board sizes, scores and the opponents' variety (issue 34)


@pytest.mark.parametrize(("rows", "cols"), CONNECT_FOUR_SIZES)
def test_the_connect_four_model_agrees_with_openspiel_at_every_size(rows: int, cols: int) -> None:
    import pyspiel

    game, rng = connect_four_game(rows, cols), np.random.default_rng(rows * cols)
    spiel = pyspiel.load_game("connect_four", {"rows": rows, "columns": cols})
    for _ in range(60):
        state, rules, board = spiel.new_initial_state(), game.rules(), game.empty()
        while not state.is_terminal():
            assert game.legal(board) == state.legal_actions()
            move, piece = int(rng.choice(game.legal(board))), game.to_move(board)
            state.apply_action(move)
            rules.step(move)
            board = game.play(board, move, piece)
            assert game.read(rules) == board and all(rules.terminations.values()) == state.is_terminal() == game.over(board)
            assert rules.agent_selection == rules.possible_agents[game.to_move(board) - 1]
        winner = game.winner(board)
        paid = 0 if not winner else 1 if winner == 1 else -1  # to the first player, as PettingZoo pays
        assert game.over(board) and state.returns()[0] == paid
        assert all(rules.terminations.values()) and rules.rewards == {"player_0": paid, "player_1": -paid}


def test_connect_four_boards_of_other_sizes_are_drawn_with_pettingzoos_art() -> None:
    classic = GAMES["connect_four"]
    board, rng = classic.empty(), np.random.default_rng(3)
    for _ in range(20):
        board = classic.play(board, int(rng.choice(classic.legal(board))), classic.to_move(board))
    for side in (32, 256):  # scales 1 and 3: PettingZoo's own frame, pixel for pixel
        ours = ConnectFourArt(6, 7, side)
        classic.load(ours, board)
        assert np.array_equal(ours.render(), classic.draw(classic.painter(side), board, ours.render().shape[:2]))
    small, large = connect_four_game(4, 5), connect_four_game(7, 9)
    assert small.painter(256).render().shape == (4 * (8 + 13 * 4), 4 * (8 + 13 * 5), 3)  # 4 x 5 cells of 13 px, scaled 4 times
    assert large.painter(256).render().shape == (3 * (8 + 13 * 7), 3 * (8 + 13 * 9), 3)
    frame = small.draw(small.painter(64), small.play(small.empty(), 4, 1), (64, 64))
    assert frame.shape == (64, 64, 3) and not np.array_equal(frame, small.draw(small.painter(64), small.empty(), (64, 64)))
    with pytest.raises(ValueError, match="6 x 7"):
        large.pettingzoo_env()
    with pytest.raises(ValueError, match="cols=10"):
        connect_four_game(6, 10)


@pytest.mark.parametrize("game", list(GAMES))
def test_the_boards_describe_a_game_in_the_aec_envs_words(game: str) -> None:
    spec, rng = GAMES[game], np.random.default_rng(4)
    board = spec.empty()
    for _ in range(5):
        board = spec.play(board, int(rng.choice(spec.legal(board))), spec.to_move(board))
    for piece in (None, 1, 2):
        assert spec.mission(piece) == mission(spec, piece)
        for turn in (True, False):
            assert spec.describe(board, piece, turn) == describe(spec, board, piece, turn)


def test_connect_four_levels_are_board_sizes_and_the_default_is_pettingzoos() -> None:
    env = gym.make("rl4vlm/ConnectFour-vs-Search-v0", image_size=32, obs_mode="text")
    obs, info = env.reset(seed=0)
    assert info["level"] == 1 and env.unwrapped.game == GAMES["connect_four"] and "1 to 7" in obs["mission"]
    for level, (rows, cols) in enumerate(CONNECT_FOUR_SIZES):
        obs, info = env.reset(seed=3, options={"level": level})
        assert info["level"] == level and len(env.unwrapped.board) == rows * cols
        assert obs["text"].splitlines()[2].split() == [str(c + 1) for c in range(cols)] and len(obs["text"].splitlines()) == 3 + rows
        assert f"1 to {cols}." in obs["mission"] and obs["actions"] == tuple(str(c + 1) for c in range(cols))
        done = False
        while not done:  # the oracle plays every size to the end
            obs, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            done = terminated or truncated
        assert terminated and info["score"] in (0.0, 0.5, 1.0) and info["success"] == (info["score"] == 1.0)


def _play_out(env: gym.Env, seed: int, policy: str = "oracle") -> dict[str, Any]:
    env.reset(seed=seed)
    base, done = env.unwrapped, False
    while not done:
        action = base.oracle_action() if policy == "oracle" else base.admissible_actions[0]
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return info


def test_a_draw_scores_half_and_success_is_monotone_in_the_score() -> None:
    results = {}
    for opponent in ("Random", "Perfect"):
        env = gym.make(f"rl4vlm/TicTacToe-vs-{opponent}-v0", image_size=32, obs_mode="text")
        for seed in range(40):
            info = _play_out(env, seed)
            assert "score" in info and info["success"] == (info["score"] >= env.unwrapped.SUCCESS_SCORE)
            assert info["progress"] == min(1.0, info["score"] / env.unwrapped.SUCCESS_SCORE)
            results.setdefault(opponent, set()).add((info["score"], info["success"]))
        obs, info = env.reset(seed=0)
        assert "score" not in info and not info["success"] and info["progress"] == 0.0
    # against random a win (1) succeeds and a draw (0.5, just below) does not; against perfect
    # play a draw succeeds (at the threshold) and the oracle never loses (0, below it)
    assert results["Random"] == {(1.0, True), (0.5, False)}
    assert results["Perfect"] == {(0.5, True)}


@pytest.mark.parametrize(("env_id", "successes"), [("TicTacToe-vs-Perfect", ("win", "draw")), ("TicTacToe-vs-Random", ("win",)), ("ConnectFour-vs-Search", ("win",))])
def test_success_is_the_score_at_or_above_the_cards_threshold(env_id: str, successes: tuple[str, ...]) -> None:
    base = gym.make(f"rl4vlm/{env_id}-v0", image_size=32, obs_mode="text").unwrapped
    base.reset(seed=0)
    threshold = 0.5 if len(successes) == 2 else 1.0
    for outcome, score in (("win", 1.0), ("draw", 0.5), ("loss", 0.0)):  # above, at and below 0.5
        base.outcome = outcome
        assert base.score == score and base._success() == (outcome in successes) and base._progress() == min(1.0, score / threshold)


def test_the_oracle_never_fails_against_perfect_tictactoe() -> None:
    env = gym.make("rl4vlm/TicTacToe-vs-Perfect-v0", image_size=32, obs_mode="text")
    assert all(_play_out(env, seed)["success"] for seed in range(100, 160))


def test_the_opponents_vary_so_a_deterministic_agent_meets_many_games() -> None:
    # before issue 34: 7 distinct games in 200 seeds against the heuristic, 18 in 60 against the search
    for env_id, seeds, at_least in (("TicTacToe-vs-Heuristic", 40, 15), ("ConnectFour-vs-Search", 12, 11)):
        env = gym.make(f"rl4vlm/{env_id}-v0", image_size=32, obs_mode="text")
        for policy in ("oracle", "first"):
            games = set()
            for seed in range(seeds):
                _play_out(env, seed, policy)
                games.add((env.unwrapped.seat, tuple(env.unwrapped.history)))
            assert len(games) >= (at_least if policy == "oracle" else 3), (env_id, policy, len(games))


def test_the_opponents_draw_from_softmaxes_of_their_values() -> None:
    ttt = GAMES["tictactoe"]
    dist = HeuristicPlayer(temperature=1.0).distribution(ttt, ttt.empty())
    assert dist[0] / dist[4] == pytest.approx(np.exp(-1)) and dist[1] / dist[4] == pytest.approx(np.exp(-2)) and sum(dist.values()) == pytest.approx(1)
    assert HeuristicPlayer(temperature=0.0).distribution(ttt, ttt.empty()) == {4: 1.0}  # the old player: the centre
    c4 = GAMES["connect_four"]
    board = c4.play(c4.play(c4.empty(), 3, 1), 3, 2)
    values, dist = c4_move_values(board, 3), SearchPlayer(depth=3, temperature=3.0).distribution(c4, board)
    for a in dist:
        assert dist[a] / dist[3] == pytest.approx(np.exp((values[a] - values[3]) / 3.0))
    top = max(values.values())
    assert SearchPlayer(depth=3, temperature=0.0).distribution(c4, board) == {m: 1 / sum(v == top for v in values.values()) for m, v in values.items() if v == top}


@pytest.mark.parametrize(("rows", "cols"), CONNECT_FOUR_SIZES)
def test_the_search_opponent_beats_the_heuristic_and_random_on_every_board(rows: int, cols: int) -> None:
    game, rng, search = connect_four_game(rows, cols), np.random.default_rng(rows), ConnectFourVsSearch.LEVELS[0].player
    for opponent, at_least in ((RandomPlayer(), 6.0), (HeuristicPlayer(), 5.0)):
        score = 0.0
        for game_no in range(8):
            board, seat = game.empty(), 1 + game_no % 2
            while not game.over(board):
                piece = game.to_move(board)
                board = game.play(board, (search if piece == seat else opponent).choose(game, board, rng), piece)
            score += 1.0 if game.winner(board) == seat else 0.5 if not game.winner(board) else 0.0
        assert score >= at_least, (rows, cols, opponent, score)


def test_a_pickled_view_of_another_board_size_continues_the_game() -> None:
    env = gym.make("rl4vlm/ConnectFour-vs-Heuristic-v0", image_size=32, level=2)
    env.reset(seed=7)
    for _ in range(3):
        env.step(env.unwrapped.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.board == env.unwrapped.board and clone.unwrapped.history == env.unwrapped.history
    action = env.unwrapped.oracle_action()
    a, b = env.step(action), clone.step(action)
    assert a[0]["text"] == b[0]["text"] and np.array_equal(a[0]["image"], b[0]["image"]) and a[1:] == b[1:]


def test_the_cards_list_the_board_sizes_of_the_levels() -> None:
    # the cards' module imports no env module, so each card writes the sizes out
    cards = [c for c in rl4vlm_gym.list_envs() if c.id.startswith("rl4vlm/ConnectFour-")]
    assert len(cards) == 3
    for card in cards:
        assert [level.split(" (")[0] for level in card.levels] == [f"{r} rows x {c} columns" for r, c in CONNECT_FOUR_SIZES]
        assert card.default_level == ConnectFourVsSearch.DEFAULT_LEVEL == 1
