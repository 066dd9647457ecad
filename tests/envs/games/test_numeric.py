"""The numeric interface of the games' AEC envs (issue 34): the same game as the VLM env, as numbers."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pyspiel = pytest.importorskip("pyspiel")

from rl4vlm_gym.envs.games.numeric import GAMES, NumericAEC, numeric_env, numeric_parallel_env  # noqa: E402


def vlm(game: str, **kwargs: Any) -> Any:
    module, factory = GAMES[game].split(":")
    return getattr(importlib.import_module(module), factory)(**{"obs_mode": "text", "image_size": 64, **kwargs})


def ids(env: NumericAEC, agent: str) -> dict[str, int]:
    return {name: i for i, name in env.encoder.legal(agent).items()}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_numeric_env_plays_the_same_game_as_the_vlm_env(game: str) -> None:
    # same seed, same moves: the same deal, turns, rewards and ends, step by step
    rng = np.random.default_rng(7)
    for seed in range(5):
        words, numbers = vlm(game), numeric_env(game)
        words.reset(seed=seed)
        numbers.reset(seed=seed)
        for agent in words.agent_iter(max_iter=200):
            assert numbers.agent_selection == agent
            _, reward, terminated, truncated, _ = words.last()
            obs, reward_n, terminated_n, truncated_n, _ = numbers.last()
            assert (reward_n, terminated_n, truncated_n) == (reward, terminated, truncated)
            if terminated or truncated:
                assert not obs["action_mask"].any()
                words.step(None)
                numbers.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert [numbers.encoder.legal(agent)[i] for i in legal] == sorted(
                words.legal_moves(agent), key=ids(numbers, agent).get
            )
            action = int(rng.choice(legal))
            words.step(numbers.encoder.legal(agent)[action])
            numbers.step(action)
            assert numbers.infos[agent]["action"]["valid"] and numbers.infos[agent]["action"]["raw"] == str(action)
        assert not words.agents and not numbers.agents
        if hasattr(words, "history"):
            assert words.history == numbers.unwrapped.history  # OpenSpiel's actions, chance included


@pytest.mark.parametrize(("game", "players"), [("kuhn_poker", 2), ("leduc", 2), ("liars_dice", 2), ("liars_dice", 3)])
def test_openspiel_games_show_each_player_its_information_state_and_legal_mask(game: str, players: int) -> None:
    env = numeric_env(game, **({"players": players} if players != 2 else {}))
    assert len(env.possible_agents) == players and env.state_space.shape[0] == players * (
        env.observation_space("player_0")["observation"].shape[0] + 1
    )
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter(max_iter=200):
        state, players = env.unwrapped.state, env.possible_agents
        for p, other in enumerate(players):
            obs = env.observe(other)
            np.testing.assert_array_equal(obs["observation"], np.asarray(state.information_state_tensor(p), np.float32))
            moving = not state.is_terminal() and state.current_player() == p
            expected = state.legal_actions_mask(p) if moving else [0] * state.get_game().num_distinct_actions()
            np.testing.assert_array_equal(obs["action_mask"], expected)
        mover = [0.0] * len(players)
        if not state.is_terminal():
            mover[state.current_player()] = 1.0
        tensors = [state.information_state_tensor(p) for p in range(len(players))]
        np.testing.assert_array_equal(env.state(), np.concatenate([*tensors, mover]).astype(np.float32))
        assert env.state().shape == env.state_space.shape
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
        else:
            action, played = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))), len(env.unwrapped.history)
            env.step(action)
            assert env.unwrapped.history[played] == action  # the id is OpenSpiel's action


def test_a_players_observation_does_not_show_the_other_players_card() -> None:
    # Kuhn: player_1's first observation depends on its own card only
    seen: dict[int, set[bytes]] = {}
    for seed in range(40):
        env = numeric_env("kuhn_poker")
        env.reset(seed=seed)
        cards = env.unwrapped.history[:2]  # the deal: player_0's card, then player_1's
        seen.setdefault(cards[1], set()).add(env.observe("player_1")["observation"].tobytes())
    assert sorted(seen) == [0, 1, 2] and all(len(v) == 1 for v in seen.values())
    assert len(set().union(*seen.values())) == 3


def test_the_observation_tensor_can_replace_the_information_state() -> None:
    env = numeric_env("leduc", tensor="observation")
    env.reset(seed=0)
    state = env.unwrapped.state
    assert env.observation_space("player_0")["observation"].shape == (16,)
    np.testing.assert_array_equal(env.observe("player_1")["observation"], np.asarray(state.observation_tensor(1), np.float32))
    with pytest.raises(ValueError, match="tensor='board'"):
        numeric_env("leduc", tensor="board")


def test_board_planes_are_mine_theirs_and_empty() -> None:
    env = numeric_env("tictactoe")
    env.reset(seed=0)
    first, second = env.possible_agents
    env.step(4)  # b2, the centre
    env.step(0)  # a1, the top-left corner
    mine, theirs = env.observe(first)["observation"], env.observe(second)["observation"]
    assert mine.dtype == np.int8 and mine.shape == (3, 3, 3)
    assert mine[1, 1].tolist() == [1, 0, 0] and mine[0, 0].tolist() == [0, 1, 0] and mine[2, 2].tolist() == [0, 0, 1]
    np.testing.assert_array_equal(theirs, mine[..., [1, 0, 2]])  # the other's view swaps the first two planes
    assert env.observe(first)["action_mask"].tolist() == [0, 1, 1, 1, 0, 1, 1, 1, 1]
    assert not env.observe(second)["action_mask"].any()  # not its turn
    state = env.state()
    np.testing.assert_array_equal(state[:27], mine.reshape(-1))  # the first player's side
    assert state[27:].tolist() == [1.0, 0.0]  # the first player to move
    four = numeric_env("connect_four")
    four.reset(seed=0)
    four.step(0)  # a piece falls to the bottom of column 1
    planes = four.observe(four.possible_agents[0])["observation"]
    assert planes.shape == (6, 7, 3) and planes[5, 0, 0] == 1 and planes[..., 0].sum() == 1 and planes[..., 2].sum() == 41


def test_an_illegal_action_is_an_invalid_move() -> None:
    # nothing happens, the turn is kept, the env's invalid reward is paid (tictactoe's penalty)
    env = numeric_env("tictactoe", reward_variant="penalty")
    env.reset(seed=0)
    env.step(4)
    agent = env.agent_selection
    env.step(4)  # taken
    assert env.agent_selection == agent and env.rewards[agent] == -0.1
    info = env.infos[agent]["action"]
    assert info["valid"] is False and info["raw"] == "4" and "not legal" in info["error"]
    assert env.observe(agent)["observation"][..., 2].sum() == 8  # still one mark on the board
    leduc = numeric_env("leduc")
    leduc.reset(seed=0)
    leduc.step(0)  # fold, before any bet: not legal in OpenSpiel's leduc_poker
    assert leduc.unwrapped.history[-1] != 0 and leduc.agent_selection == "player_0" and leduc.rewards["player_0"] == 0.0


def test_infos_have_fixed_keys_and_no_none() -> None:
    env = numeric_env("kuhn_poker")
    env.reset(seed=0)
    assert env.infos["player_0"]["action"] == {"raw": "", "parsed": "", "valid": True, "error": ""}
    env.step(1)
    assert env.infos["player_0"]["action"] == {"raw": "1", "parsed": "bet", "valid": True, "error": ""}
    for info in env.infos.values():
        assert None not in info["action"].values()


def test_the_referential_game_has_a_finite_vocabulary_and_hides_the_target_from_the_listener() -> None:
    env = numeric_env("referential", level=1)
    env.reset(seed=4)
    base = env.unwrapped
    phrases = base.round.config.phrases()
    assert env.action_space("speaker").n == len(phrases) == 74 and env.action_space("listener").n == 4
    assert env.observe("speaker")["action_mask"].all() and not env.observe("listener")["action_mask"].any()
    size = env.observation_space("speaker")["observation"].shape[0]
    assert size == 2 + 4 * 11 + 10 + 1 + 4
    flags = lambda agent: env.observe(agent)["observation"][2 : 2 + 4 * 11].reshape(4, 11)[:, -1]  # noqa: E731
    assert flags("speaker").sum() == 1 and flags("listener").sum() == 0
    env.step(phrases.index(base.oracle_action("speaker")))
    heard = env.observe("listener")["observation"][2 + 4 * 11 :]
    assert heard[-5] == 1 and heard[:10].sum() == len(base.message.split())  # the said flag, then one word per attribute said
    env.step(int(base.oracle_action("listener")) - 1)
    assert env.rewards == {"speaker": 1.0, "listener": 1.0}
    assert env.observe("speaker")["observation"][-4:].sum() == 1  # the pick
    assert flags("listener").sum() == 1  # once it has picked, the listener is told where the target was


def test_numeric_env_refuses_what_it_cannot_make() -> None:
    with pytest.raises(ValueError, match="unknown"):
        numeric_env("chess")
    with pytest.raises(TypeError, match="no env arguments"):
        numeric_env(vlm("kuhn_poker"), max_cycles=3)
    with pytest.raises(TypeError, match="no encoder arguments"):
        numeric_env(vlm("tictactoe"), tensor="observation")


# Other OpenSpiel games through the generic adapter (envs/games/openspiel_adapter.py): the
# numeric interface reads them by the same protocol, turn-based or simultaneous


def adapter(game: str, parallel: bool = False) -> Any:
    from rl4vlm_gym.envs.games.openspiel_adapter import openspiel_env, openspiel_parallel_env

    return (openspiel_parallel_env if parallel else openspiel_env)(game, obs_mode="text", image_size=64)


@pytest.mark.parametrize("game", ["dots_and_boxes", "pig", "goofspiel"])
def test_adapted_openspiel_games_pass_pettingzoos_tests_as_numbers(game: str) -> None:
    from pettingzoo.test import api_test, seed_test

    env = numeric_env(adapter(game))
    spiel = env.encoder.env.state.get_game()
    assert env.action_space("player_0").n == spiel.num_distinct_actions()
    # the information state where the game has one (Goofspiel), else the observation (Dots and Boxes, Pig)
    info_state = spiel.get_type().provides_information_state_tensor
    shape = spiel.information_state_tensor_shape() if info_state else spiel.observation_tensor_shape()
    assert env.observation_space("player_0")["observation"].shape == (int(np.prod(shape)),)
    assert info_state == (game == "goofspiel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=30)
    seed_test(lambda: numeric_env(adapter(game)), num_cycles=20)


def test_goofspiel_as_numbers_in_parallel_plays_the_vlm_game() -> None:
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(numeric_parallel_env(adapter("goofspiel", parallel=True)), num_cycles=30)
    parallel_seed_test(lambda: numeric_parallel_env(adapter("goofspiel", parallel=True)), num_cycles=20)
    words, numbers = adapter("goofspiel", parallel=True), numeric_parallel_env(adapter("goofspiel", parallel=True))
    words.reset(seed=5)
    observations, _ = numbers.reset(seed=5)
    rng = np.random.default_rng(0)
    while numbers.agents:
        state = numbers.unwrapped.state
        assert numbers.state()[-2:].tolist() == [1.0, 1.0]  # both move at every bid
        for p, agent in enumerate(numbers.possible_agents):
            np.testing.assert_array_equal(observations[agent]["action_mask"], state.legal_actions_mask(p))
        ids = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in numbers.agents}
        words_out = words.step({a: numbers.encoder.legal(a)[i] for a, i in ids.items()})
        observations, rewards, terminations, truncations, infos = numbers.step(ids)
        assert (rewards, terminations, truncations) == words_out[1:4]
        assert all(infos[a]["action"]["raw"] == str(i) and infos[a]["action"]["valid"] for a, i in ids.items())
    assert words.state.returns() == numbers.unwrapped.state.returns()
    # a card already played is refused: that agent's invalid move
    observations, _ = numbers.reset(seed=5)
    card = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in numbers.agents}
    observations, *_, infos = numbers.step(card)
    assert observations["player_0"]["action_mask"][card["player_0"]] == 0
    _, *_, infos = numbers.step(card)
    assert infos["player_0"]["action"]["valid"] is False and "not legal" in infos["player_0"]["action"]["error"]


def test_padded_actions_give_every_role_one_space_and_refuse_the_padding() -> None:
    env = numeric_env("referential", pad_actions=True)
    env.reset(seed=2)
    assert env.action_space("speaker") == env.action_space("listener") == env.action_space("speaker").__class__(24)
    assert env.observation_space("speaker") == env.observation_space("listener")
    base = env.unwrapped
    env.step(base.round.config.phrases().index(base.oracle_action("speaker")))
    mask = env.observe("listener")["action_mask"]
    assert mask.shape == (24,) and mask[:3].all() and not mask[3:].any()
    env.step(10)  # past the listener's three candidates: its invalid move
    assert env.agent_selection == "listener" and env.infos["listener"]["action"]["valid"] is False
    env.step(int(base.oracle_action("listener")) - 1)
    assert env.rewards == {"speaker": 1.0, "listener": 1.0}
    unpadded = numeric_env("referential")
    assert unpadded.action_space("speaker").n == 24 and unpadded.action_space("listener").n == 3
    tianshou = pytest.importorskip("tianshou.env.pettingzoo_env")
    tianshou.PettingZooEnv(env)  # it asserts one observation and one action space for all agents
    with pytest.raises(AssertionError, match="spaces for all agents must be identical"):  # the masks differ too
        tianshou.PettingZooEnv(unpadded)
