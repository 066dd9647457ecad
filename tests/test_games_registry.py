"""The registry of multi-agent games lives in the core (rl4vlm_gym.games); the match harness
re-exports it, and the games family registers into it without importing the harness."""

from __future__ import annotations

import pytest

from rl4vlm_gym import games
from rl4vlm_gym.harness import matches

MOVED = (
    "GAME_ENTRY_POINT_GROUP",
    "PAYOFFS",
    "BuiltinPlayer",
    "GameError",
    "GameSpec",
    "game_spec",
    "list_games",
    "register_game",
)


@pytest.mark.parametrize("name", MOVED)
def test_the_harness_names_the_core_s_registry(name: str) -> None:
    assert getattr(matches, name) is getattr(games, name)
    assert name in matches.__all__ and name in games.__all__


@pytest.mark.extra("games")
def test_a_game_registered_in_the_core_is_the_harness_s(monkeypatch: pytest.MonkeyPatch) -> None:
    games.list_games()  # the entry points, loaded once per process, register into the real registry
    monkeypatch.setattr(games, "_GAMES", dict(games._GAMES))  # this test's registrations stay here
    spec = games.GameSpec(
        "test_tictactoe", "rl4vlm_gym.envs.games.aec:tictactoe_env", players={"perfect": "rl4vlm_gym.envs.games.arena:perfect"}
    )
    games.register_game(spec)
    games.register_game(games.GameSpec(**{f: getattr(spec, f) for f in ("name", "factory", "players")}))  # an equal spec: a no-op
    assert matches.game_spec("test_tictactoe") == spec
    assert spec in matches.list_games() and {"tictactoe", "kuhn_poker", "goofspiel"} <= {g.name for g in games.list_games()}
    with pytest.raises(ValueError, match="'test_tictactoe' is already registered with another spec"):
        games.register_game(games.GameSpec("test_tictactoe", "rl4vlm_gym.envs.games.aec:connect_four_env"))
    env = spec.make(obs_mode="text")
    assert env.possible_agents == ["player_1", "player_2"]
    assert callable(spec.builtin("perfect").act)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: games.game_spec("no_such_game"), "unknown game 'no_such_game': registered games are .*tictactoe"),
        (
            lambda: games.GameSpec("x", "no.such.module:factory").make(),
            "game 'x': cannot load 'no.such.module:factory': ModuleNotFoundError",
        ),
        (lambda: games.GameSpec("x", "rl4vlm_gym.games:no_such_factory").make(), "cannot load .*AttributeError"),
        (
            lambda: games.load_target("rl4vlm_gym.games", "a test"),
            "a test: 'rl4vlm_gym.games' is not a 'package.module:function' path",
        ),
        (lambda: games.GameSpec("x", "m:f", players={"p": ":g"}).builtin("p"), "player 'p' of 'x': ':g' is not a"),
    ],
)
def test_a_game_that_cannot_be_found_or_loaded_says_why(call: object, message: str) -> None:
    with pytest.raises(games.GameError, match=message) as caught:
        call()  # type: ignore[operator]
    assert isinstance(caught.value, ValueError)


def test_the_harness_s_errors_stay_match_errors() -> None:
    with pytest.raises(matches.MatchError, match="cannot load 'no.such.module:f'"):
        matches._load("no.such.module:f", "a folded rule")
    assert games.game_spec("pkg.module:factory") == games.GameSpec("pkg.module:factory", "pkg.module:factory")
