"""Matches between agents on multi-agent games (PettingZoo's AEC API): a resumable round robin.

A *game* is a PettingZoo ``AECEnv`` whose agents observe our four keys (``image``, ``text``,
``mission``, ``actions``) and act with free text, as the games family's envs do. Games are found
by name in the game registry (:mod:`rl4vlm_gym.games`, at the core level: families fill it through
the entry-point group ``rl4vlm_gym.games``, loaded only when a match needs it; its names are
importable from here too) or given as a ``"module:factory"`` path to any such env: a new game
plugs in without a change here.

A *player* (a seat's occupant) is one of:

- a built-in player of the game (its :class:`GameSpec` names them: ``heuristic``, ``perfect``,
  ``cfr``, ...), which reads the true state and draws its moves from its own seeded RNG;
- ``random``: uniform over ``obs["actions"]`` (:class:`rl4vlm_gym.agents.simple.RandomAgent`);
- ``oracle``: the env's ``oracle_action(agent)``, where the game has one;
- any rl4vlm agent (``hf``, ``openai``, ``module:Class``): it sees its seat's observations and
  writes text through the same prompt machinery as ``rl4vlm-gym eval``; the game's parser reads it;
- ``human``: a person at the terminal (:mod:`rl4vlm_gym.harness.human`), whose lines the game's
  parser reads the same way.

:func:`run_matches` plays a round robin: every group of as many players as the game has seats,
every seed, each rotation of the group's seats (with two seats, both seat orders: each deal or
opening is played from every side, the duplicate format); or, for two-seat games, a Swiss
tournament, one round per seed, each player meeting one of similar points it has not met yet
(both seat orders). Each game is scored by its :attr:`GameSpec.payoff` (chips, win-loss or team;
a forfeit in a chip game is a fold: :attr:`GameSpec.folded`) and the standings are fitted over
all games at once (:mod:`rl4vlm_gym.harness.ratings`). A match folder holds ``match.json`` (the
game, its arguments, the players, the payoff and the seats) and ``games.jsonl``, one line per
finished game, appended and flushed as each ends. Re-running on the same folder resumes: finished
games are read back and never replayed; adding players or seeds plays only the new games. A game
depends only on its seed, its players and their seats, so a resumed tournament has the same
records as an uninterrupted one, in any process.

The match harness, one module per job (the names of ``__all__`` are importable from here):

- :mod:`~rl4vlm_gym.harness.match_players`: the players (:class:`PlayerSpec`, :func:`parse_player`)
  and their seats in one process;
- :mod:`~rl4vlm_gym.harness.match_game`: one game (:func:`play_game`) and its AIVAT estimate;
- :mod:`~rl4vlm_gym.harness.match_schedule`: the round robin (:func:`schedule`) and Swiss pairings;
- :mod:`~rl4vlm_gym.harness.match_store`: the match folder (``match.json``, ``games.jsonl``,
  :func:`load_matches`);
- :mod:`~rl4vlm_gym.harness.match_exploitability`: the players' exploitability in poker games;
- :mod:`~rl4vlm_gym.harness.match_errors`: :class:`MatchError`;
- this module: the tournament, :func:`run_matches`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rl4vlm_gym.games import (
    GAME_ENTRY_POINT_GROUP,
    PAYOFFS,
    BuiltinPlayer,
    GameError,
    GameSpec,
    game_spec,
    list_games,
    register_game,
)
from rl4vlm_gym.harness.match_errors import MatchError, load_part
from rl4vlm_gym.harness.match_exploitability import match_exploitability, player_policy
from rl4vlm_gym.harness.match_game import aivat_estimator, play_game
from rl4vlm_gym.harness.match_players import HUMAN, MAX_PLAYERS, PlayerSpec, Seat, SeatView, is_model_agent, parse_player
from rl4vlm_gym.harness.match_schedule import MAX_SEEDS, SCHEDULES, check_seeds, schedule, swiss_pairings, task_name
from rl4vlm_gym.harness.match_store import GameLog, load_matches, open_match
from rl4vlm_gym.prompts import PromptConfig

__all__ = [
    "GAME_ENTRY_POINT_GROUP",
    "HUMAN",
    "MAX_PLAYERS",
    "MAX_SEEDS",
    "PAYOFFS",
    "SCHEDULES",
    "BuiltinPlayer",
    "GameError",
    "GameSpec",
    "MatchError",
    "PlayerSpec",
    "SeatView",
    "aivat_estimator",
    "game_spec",
    "is_model_agent",
    "list_games",
    "load_matches",
    "match_exploitability",
    "parse_player",
    "play_game",
    "player_policy",
    "register_game",
    "run_matches",
    "schedule",
    "swiss_pairings",
]

# The private names these had before the harness was split into modules (tests use them).
_load, _Seat = load_part, Seat


def run_matches(
    game: str | GameSpec,
    players: Sequence[PlayerSpec],
    seeds: Sequence[int],
    out: str | Path,
    *,
    game_kwargs: Mapping[str, Any] | None = None,
    prompt: PromptConfig | None = None,
    on_game: Callable[[dict[str, Any], int, int], None] | None = None,
    kind: str = "round-robin",
) -> list[dict[str, Any]]:
    """Play the round robin (or the Swiss tournament, ``kind="swiss"``) of ``players`` over ``seeds`` on ``game`` into ``out`` (resumable).

    The number of seats is the game's (``len(env.possible_agents)``): a round robin plays every
    group of that many players in every rotation of its seats on every seed (:func:`schedule`).

    Args:
        game: a registered game's name, a ``"module:factory"`` path, or a :class:`GameSpec`.
        players: at least as many players as the game has seats, with distinct labels.
        seeds: the games' seeds (each group plays each seed in each rotation of its seats; in a
            Swiss tournament, two-seat games only, one round per seed, each pairing in both
            seat orders).
        out: the match folder (created; resumed if it holds the same game).
        game_kwargs: the env's keyword arguments (``obs_mode``, ``image_size``, ...).
        prompt: the prompt of model agents (default: :class:`PromptConfig`'s).
        on_game: called with each record (first those read back), the games done and the total.
        kind: ``"round-robin"`` or ``"swiss"`` (cheaper for many players: ``n/2`` pairings a
            round instead of ``n(n-1)/2``; it cannot take new players or seeds once started).

    Returns:
        The records of every scheduled game, in schedule order.

    Raises:
        MatchError: the game or the players cannot start, the game broke, or a person at the
            terminal ended the input (its game is recorded as a forfeit; the rest resume).
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    labels = [p.label for p in players]
    if len(players) < 2:
        raise MatchError("a match needs at least two players")
    if len(players) > MAX_PLAYERS:
        raise MatchError(f"{len(players)} players: at most {MAX_PLAYERS}")
    if len(set(labels)) != len(labels):
        raise MatchError(f"player labels repeat ({labels}); give each its own label as LABEL=NAME")
    seeds = check_seeds(seeds)
    game_kwargs = dict(game_kwargs or {})
    prompt = prompt or PromptConfig()
    out = Path(out)
    if kind not in SCHEDULES:
        raise MatchError(f"schedule {kind!r} is unknown; choose one of {SCHEDULES}")
    env = _make_env(spec, game_kwargs)
    n_seats = len(env.possible_agents)
    try:
        if len(players) < n_seats:
            raise MatchError(f"{spec.name!r} seats {n_seats} players: give at least {n_seats}, not {len(players)}")
        if kind == "swiss" and n_seats != 2:
            raise MatchError(f"a Swiss tournament pairs players: {spec.name!r} seats {n_seats}; play a round robin")
        manifest = {
            "game": spec.name,
            "factory": spec.factory,
            "game_kwargs": game_kwargs,
            "players": {p.label: p.as_dict() for p in players},
            "prompt": prompt.as_dict(),
            "schedule": kind,
            "seeds": seeds,
            "cooperative": spec.cooperative,
            "payoff": spec.payoff,
            "seats": n_seats,
        }
        estimator = aivat_estimator(spec, env)
        if estimator is not None:  # what the games' AIVAT estimates are computed with (the report says it)
            manifest["aivat"] = {"game": estimator.game, "baseline": estimator.baseline_name}
        done = open_match(out, manifest)
        return _play_all(spec, players, seeds, out, env, done, prompt, on_game, kind, estimator)
    finally:
        env.close()


def _play_all(
    spec: GameSpec,
    players: Sequence[PlayerSpec],
    seeds: list[int],
    out: Path,
    env: Any,
    done: dict[tuple[str, int], dict[str, Any]],
    prompt: PromptConfig,
    on_game: Callable[[dict[str, Any], int, int], None] | None,
    kind: str,
    estimator: Any = None,
) -> list[dict[str, Any]]:
    """The games of :func:`run_matches` not in ``done``, played and appended to ``games.jsonl``."""
    labels = [p.label for p in players]
    n_seats = len(env.possible_agents)
    by_label = {p.label: p for p in players}
    folded = load_part(spec.folded, f"folded rule of {spec.name!r}") if spec.folded and spec.payoff == "chips" else None
    seats: dict[str, Seat] = {}
    wanted: list[tuple[Any, ...]] = []
    # Swiss: one round per seed, pairings from the standings of the rounds before (rebuilt from
    # the records on a resume: the games are deterministic, so the pairings are the same).
    rounds = [seeds] if kind == "round-robin" else [[s] for s in seeds]
    total = len(schedule(labels, seeds, n_seats)) if kind == "round-robin" else len(seeds) * 2 * (len(labels) // 2)
    if on_game is not None:
        for record in done.values():
            on_game(record, len(done), total)
    checked = False
    log = GameLog(out)
    try:
        for round_seeds in rounds:
            games = (
                schedule(labels, round_seeds, n_seats)
                if kind == "round-robin"
                else swiss_pairings(
                    labels, [done[(task_name(*g[:-1]), g[-1])] for g in wanted], round_seeds[0], chips=spec.payoff == "chips"
                )
            )
            wanted += games
            todo = [g for g in games if (task_name(*g[:-1]), g[-1]) not in done]
            if todo and not checked:
                _check_players(spec, players, env)
                checked = True
            for game in todo:
                seating, seed = list(game[:-1]), game[-1]
                for label in seating:
                    if label not in seats:
                        seats[label] = Seat(by_label[label], spec, prompt, out)
                record = {"task": task_name(*seating), "game": spec.name, "seed": seed, "players": seating}
                try:
                    record.update(
                        play_game(
                            env, [seats[p] for p in seating], seed, cooperative=spec.cooperative, folded=folded, aivat=estimator
                        )
                    )
                except MatchError:
                    raise
                except Exception as err:  # the game broke (a player's errors are recorded in play_game)
                    raise MatchError(
                        f"the game {spec.name!r} raised {type(err).__name__}: {err} in {record['task']}, seed {seed}; "
                        f"the {len(done)} finished games are saved in {out}"
                    ) from None
                log.append(record)  # flushed: a killed process loses no finished game
                done[(record["task"], seed)] = record
                if on_game is not None:
                    on_game(record, len(done), total)
                quit = [p for p in seating if (human := seats[p].human) is not None and human.quit]
                if quit:
                    raise MatchError(
                        f"{quit[0]} (human) ended the input: it forfeits {record['task']} on seed {seed}, and the match stops; "
                        f"the {len(done)} finished games are saved in {out}: run the same command again to play on"
                    )
    finally:
        log.close()
        for seat in seats.values():
            seat.close()
    return [done[(task_name(*g[:-1]), g[-1])] for g in wanted]


def _make_env(spec: GameSpec, game_kwargs: Mapping[str, Any]) -> Any:
    try:
        env = spec.make(**game_kwargs)
    except (MatchError, GameError):
        raise
    except Exception as err:
        raise MatchError(f"making the game {spec.name!r} with {dict(game_kwargs)} raised {type(err).__name__}: {err}") from None
    missing = [a for a in ("possible_agents", "reset", "agent_iter", "last", "step", "infos", "rewards") if not hasattr(env, a)]
    if missing:
        raise MatchError(f"{spec.factory} made a {type(env).__name__}, not a PettingZoo AEC env (it has no {', '.join(missing)})")
    return env


def _check_players(spec: GameSpec, players: Sequence[PlayerSpec], env: Any) -> None:
    """Stop before the first game if a built-in player cannot play this variant of the game."""
    for p in players:
        if p.kind != "builtin":
            continue
        check = getattr(spec.builtin(p.name), "check", None)
        try:
            if check is not None:
                check(env)
        except ValueError as err:
            raise MatchError(f"player {p.label!r} ({p.name}) cannot play {spec.name!r} here: {err}") from None
