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
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from rl4vlm_gym.agents import Agent, ModelAgent, agent_class
from rl4vlm_gym.games import (
    GAME_ENTRY_POINT_GROUP,
    PAYOFFS,
    BuiltinPlayer,
    GameError,
    GameSpec,
    game_spec,
    list_games,
    load_target,
    register_game,
)
from rl4vlm_gym.harness.runner import AgentSpec, RunError, load_episodes
from rl4vlm_gym.prompts import PromptConfig

__all__ = [
    "GAME_ENTRY_POINT_GROUP",
    "MAX_PLAYERS",
    "MAX_SEEDS",
    "PAYOFFS",
    "BuiltinPlayer",
    "GameError",
    "GameSpec",
    "MatchError",
    "PlayerSpec",
    "aivat_estimator",
    "game_spec",
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

logger = logging.getLogger(__name__)

MAX_PLAYERS = 64
MAX_SEEDS = 100_000
SCHEDULES = ("round-robin", "swiss")
HUMAN = "human"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
_MAX_ITER = 100_000  # agent turns of one game at most, whatever the env's own limit
_PLAYER_STREAM = 1  # the spawn key of the built-in players' streams (the env's: none)
_SYNC_SECONDS = 1.0  # games.jsonl is flushed after every game, synced to disk at most once a second (fsync costs ms)


class MatchError(RunError):
    """A match cannot start or continue; the message says why and what to do."""


def _load(target: str, what: str) -> Callable[..., Any]:
    try:
        return load_target(target, what)
    except GameError as err:
        raise MatchError(str(err)) from None


# Players ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerSpec:
    """A player of a tournament: its ``label`` (the name in records and tables), what plays
    (``kind``: ``builtin`` or ``agent``; ``name``: the built-in's or the agent's name), and
    the agent's keyword arguments (JSON-able)."""

    label: str
    kind: str
    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "kwargs": dict(self.kwargs)}


def parse_player(text: str, game: GameSpec, kwargs: Mapping[str, Any] | None = None) -> PlayerSpec:
    """A player from ``[LABEL=]NAME``: ``NAME`` is a built-in player of ``game``, ``random``,
    ``oracle``, ``human`` (a person at the terminal: :mod:`rl4vlm_gym.harness.human`), an agent
    of :data:`rl4vlm_gym.agents.AGENTS` or ``module:Class``."""
    if not isinstance(text, str) or not text.strip() or len(text) > 512:
        raise MatchError(f"player {text!r:.80}: give [LABEL=]NAME (at most 512 characters)")
    label, sep, name = text.partition("=")
    if not sep:
        label, name = text.rsplit(":", 1)[-1], text
    label, name = label.strip(), name.strip()
    if not _LABEL.match(label):
        raise MatchError(
            f"player label {label!r:.80} is not valid: letters, digits and _.+- (up to 64, not starting with a symbol)"
        )
    if name in game.players:
        if kwargs:
            raise MatchError(f"player {label!r}: the built-in player {name!r} takes no arguments")
        return PlayerSpec(label, "builtin", name)
    if name == HUMAN:
        if kwargs:
            raise MatchError(f"player {label!r}: the human player takes no arguments")
        return PlayerSpec(label, "human", HUMAN)
    try:
        agent_class(name)
    except ValueError as err:
        builtins = ", ".join(sorted(game.players)) or "none"
        raise MatchError(
            f"player {label!r}: {err}; the built-in players of {game.name!r} are: {builtins}; or human (a person at the terminal)"
        ) from None
    return PlayerSpec(label, "agent", name, MappingProxyType(dict(kwargs or {})))


class SeatView:
    """One seat of an AEC game seen as an rl4vlm agent expects an env: ``unwrapped`` with the
    game's ``parser`` and ``obs_mode``, and ``oracle_action()`` for this seat."""

    spec = None

    def __init__(self, env: Any, agent: str) -> None:
        self.env, self.agent = env, agent
        self.parser = getattr(env, "parser", None)
        self.obs_mode = getattr(env, "obs_mode", "image+text")

    @property
    def unwrapped(self) -> SeatView:
        return self

    def oracle_action(self) -> str:
        oracle = getattr(self.env, "oracle_action", None)
        if oracle is None:
            raise RuntimeError(f"{type(self.env).__name__} has no oracle_action")
        return oracle(self.agent)


class _Seat:
    """A player in one process: its built-in player, agent or person, begun per game."""

    def __init__(self, spec: PlayerSpec, game: GameSpec, prompt: PromptConfig, folder: Path | None = None) -> None:
        from rl4vlm_gym.harness.human import HumanPlayer

        self.spec = spec
        self.builtin: BuiltinPlayer | None = None
        self.agent: Agent | None = None
        self.human: HumanPlayer | None = None
        if spec.kind == "builtin":
            self.builtin = game.builtin(spec.name)
        elif spec.kind == "human":
            self.human = HumanPlayer(spec.label, Path(folder or ".") / "human")
        else:
            self.agent = AgentSpec(spec.name, dict(spec.kwargs)).make(prompt)
        self.rng = np.random.default_rng(0)
        # the move distribution the seat's moves are drawn from, where the harness knows it (AIVAT
        # corrects only these decisions, and values by them): a built-in player's policy, and
        # uniform for the registry's random agent (uniform over obs["actions"], the legal moves,
        # as player_policy also counts on); any other agent's is unknown
        self.policy: Callable[[Any], Mapping[int, float]] | None = None
        self.policy_key: str | None = None
        policy = getattr(self.builtin, "policy", None)  # optional in BuiltinPlayer: read as data
        if self.builtin is not None and policy is not None:
            self.policy, self.policy_key = policy, game.players[spec.name]
        elif spec.kind == "agent" and spec.name == "random":
            from rl4vlm_gym.harness.aivat import uniform

            self.policy, self.policy_key = uniform, "uniform"

    def begin(self, env: Any, agent: str, seed: int, seat: int) -> None:
        # The seat enters the stream, so one player in two seats of a seed draws differently; the
        # spawn key keeps it apart from the env's own stream (SeedSequence(seed), which deals the
        # cards): default_rng([seed, 0]) *is* that stream, and a seat-0 player drawing from it
        # moved on the very numbers that dealt its card (in Kuhn, the equilibrium never bluffed).
        seats = len(env.possible_agents)
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_PLAYER_STREAM, seat)))
        self.view = SeatView(env, agent)
        if self.agent is not None:
            self.agent.begin(self.view, seed * seats + seat)  # type: ignore[arg-type]
        if self.human is not None:
            self.human.begin(str(getattr(env, "title", type(env).__name__)), seed, agent, seats)

    def act(self, env: Any, agent: str, obs: Mapping[str, Any]) -> str:
        if self.builtin is not None:
            return self.builtin.act(env, agent, self.rng)
        if self.human is not None:
            return self.human.act(obs)
        assert self.agent is not None
        return self.agent.act(obs)

    def close(self) -> None:
        if self.agent is not None:
            self.agent.close()


# One game -----------------------------------------------------------------------------------------


def play_game(
    env: Any,
    seats: Sequence[_Seat],
    seed: int,
    *,
    cooperative: bool = False,
    folded: Callable[[Any, int], Sequence[float]] | None = None,
    aivat: Any = None,
) -> dict[str, Any]:
    """Play one game of ``env`` (reset with ``seed``), ``seats[i]`` in ``env.possible_agents[i]``.

    A player forfeits when it raises, writes no text, ends its input (a person: EOF), or when the
    step limit ends the game and it wrote more invalid moves than every other seat (it stalled).
    A forfeit in a chip game with a ``folded`` rule (:attr:`GameSpec.folded`) is scored as a fold
    at that point: the returns become ``folded(env, seat)`` (the game's own are kept as
    ``env_returns``). With an ``aivat`` estimator (:class:`rl4vlm_gym.harness.aivat.Estimator`,
    for two-seat chip games played through OpenSpiel), the record's ``aivat`` is each seat's
    AIVAT estimate of its chips, from the OpenSpiel history the env's ``state`` holds at the end
    and the known move distributions (chance; the seats' ``policy``), ``aivat_nodes`` the number
    of nodes corrected and ``spiel_history`` that history (OpenSpiel action ids, chance included).

    Returns:
        The record: each seat's return and score (by return: 1 to a sole best, 0.5 to each of
        tied best, 0 to the others; a forfeiting seat counts below every other; in a
        ``cooperative`` game the team's: 1 to every seat when all returns are positive, else 0),
        the steps (acting seat, raw output, parsed move, validity, parser error, every seat's
        reward), the invalid moves per seat, and ``error``/``forfeit`` (the seat at fault).
    """
    env.reset(seed=seed)
    agents = list(env.possible_agents)
    if len(agents) != len(seats):
        raise MatchError(f"the game has {len(agents)} agents ({agents}); a match seats {len(seats)} players")
    for i, (seat, agent) in enumerate(zip(seats, agents, strict=True)):
        seat.begin(env, agent, seed, i)
    returns = [0.0] * len(agents)
    invalid = [0] * len(agents)
    steps: list[dict[str, Any]] = []
    error = forfeit = None
    truncated = False
    for agent in env.agent_iter(_MAX_ITER):
        i = agents.index(agent)
        # a built-in player reads the env's true state, not the observation: not drawing it saves
        # a quarter of a poker game's time
        obs, _, terminated, trunc, _ = env.last(observe=seats[i].builtin is None)
        if terminated or trunc:
            truncated = truncated or bool(trunc)
            env.step(None)
            continue
        try:
            output = seats[i].act(env, agent, obs)
        except EOFError as err:  # a person ended the input
            error, forfeit = f"{seats[i].spec.label} forfeits: {err}", i
            break
        except Exception as err:  # the player's failure ends the game; the tournament goes on
            error, forfeit = f"{seats[i].spec.label} raised {type(err).__name__}: {err}", i
            break
        if not isinstance(output, str):
            error, forfeit = f"{seats[i].spec.label} returned {type(output).__name__}, not str: {output!r:.200}", i
            break
        env.step(output)
        action = env.infos.get(agent, {}).get("action", {})
        rewards = [float(env.rewards.get(a, 0.0)) for a in agents]
        returns = [r + s for r, s in zip(returns, rewards, strict=True)]
        valid = bool(action.get("valid", True))
        invalid[i] += not valid
        steps.append(
            {
                "seat": i,
                "raw": output,
                "parsed": action.get("parsed"),
                "valid": valid,
                "error": action.get("error"),
                "rewards": rewards,
            }
        )
    most = max(invalid)
    if forfeit is None and truncated and invalid.count(most) == 1:
        forfeit = invalid.index(most)  # the step limit ended a game one player stalled with invalid moves
        error = f"the step limit ended the game; {seats[forfeit].spec.label} wrote {invalid[forfeit]} invalid moves"
    record: dict[str, Any] = {"agents": agents}
    if forfeit is not None and folded is not None and not cooperative:
        record["env_returns"] = returns
        returns = [float(r) for r in folded(env, forfeit)]
    if cooperative:  # one team: a forfeit (either seat's fault) fails it like a wrong answer
        scores = [float(forfeit is None and min(returns) > 0)] * len(agents)
    else:
        place = [(i != forfeit, r) for i, r in enumerate(returns)]
        best = max(place)
        winners = [i for i, p in enumerate(place) if p == best]
        scores = [1.0 if len(winners) == 1 and i in winners else 0.5 if i in winners else 0.0 for i in range(len(agents))]
    for i, seat in enumerate(seats):
        if seat.human is not None and not seat.human.quit:
            try:
                last = env.observe(agents[i])
            except Exception:  # noqa: BLE001 - an env may not observe after its end: the result is enough
                last = {}
            seat.human.end(last, returns, i)
    estimate = _aivat(aivat, env, seats, returns) if aivat is not None and not cooperative else None
    record.update(
        {
            "returns": returns,
            "scores": scores,
            **({"aivat": estimate[0], "aivat_nodes": estimate[1], "spiel_history": estimate[2]} if estimate is not None else {}),
            "num_steps": len(steps),
            "invalid_actions": invalid,
            "truncated": truncated,
            "error": error,
            "forfeit": forfeit,
            "steps": steps,
        }
    )
    return record


def _aivat(aivat: Any, env: Any, seats: Sequence[_Seat], returns: Sequence[float]) -> tuple[list[float], int, list[int]] | None:
    """The seats' AIVAT estimates of ``returns``, the nodes corrected and the OpenSpiel history
    (action ids, chance included: the game can be valued again with other values), or ``None`` where the
    env's state is not a game of ``aivat``'s OpenSpiel game, or a known policy cannot value it
    (the game's record then has no estimate, and the match is ranked by its raw chips)."""
    state = getattr(env, "state", None)
    if len(seats) != 2 or state is None or not hasattr(state, "history") or str(state.get_game()) != aivat.game:
        return None
    history = [int(a) for a in state.history()]
    try:
        estimate, nodes = aivat.estimate(returns, history, [s.policy for s in seats], [s.policy_key for s in seats])
    except Exception as err:  # noqa: BLE001 - an estimate is an extra: the game's result stands without it
        logger.warning("no AIVAT estimate for this game: %s: %s", type(err).__name__, err)
        return None
    return estimate, nodes, history


def aivat_estimator(spec: GameSpec, env: Any) -> Any:
    """The AIVAT estimator of ``spec`` as ``env`` plays it (:attr:`GameSpec.aivat`), or ``None``:
    the game names no baseline, is not played through OpenSpiel (``env.state``), has other than
    two seats, is not zero-sum, or is too large to value."""
    if spec.aivat is None or spec.payoff != "chips" or len(env.possible_agents) != 2:
        return None
    state = getattr(env, "state", None)
    if state is None or not hasattr(state, "get_game"):
        return None
    from rl4vlm_gym.harness import aivat

    game = str(state.get_game())
    if spec.aivat == "uniform":
        return aivat.estimator(game)
    baseline = getattr(spec.builtin(spec.aivat), "policy", None)
    if baseline is None:
        return aivat.estimator(game)
    return aivat.estimator(game, baseline, key=spec.players[spec.aivat], name=spec.aivat)


# The tournament -----------------------------------------------------------------------------------


def schedule(labels: Sequence[str], seeds: Iterable[int], seats: int = 2) -> list[tuple[Any, ...]]:
    """The round robin: for each seed, every group of ``seats`` players (each combination, in the
    order of ``labels``), in each rotation of its seats, as ``(player in seat 0, ..., seed)``.

    Every player of a group so plays every seat on every seed (the duplicate format: a deal or an
    opening is played from each side, so luck cancels); with two seats, each pair in both seat
    orders. A seed holds ``C(players, seats) * seats`` games (4 players, 2 seats: 12; 5 players,
    3 seats: 30).
    """
    if seats < 2:
        raise MatchError(f"a game of {seats} seat(s): a match needs at least two")
    games = []
    for seed in seeds:
        for group in itertools.combinations(labels, seats):
            for k in range(seats):
                games.append((*group[k:], *group[:k], seed))
    return games


def _task(*players: str) -> str:
    return " vs ".join(players)


def _check_seeds(seeds: Sequence[int]) -> list[int]:
    seeds = list(seeds)
    if not seeds:
        raise MatchError("no seeds: give at least one")
    if len(seeds) > MAX_SEEDS:
        raise MatchError(f"{len(seeds)} seeds: at most {MAX_SEEDS}")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**32:
            raise MatchError(f"seed {s!r} is not an int in [0, 2**32)")
    if len(set(seeds)) != len(seeds):
        raise MatchError("seeds repeat: each seed is played once per seating")
    return seeds


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
    seeds = _check_seeds(seeds)
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
        done = _open(out, manifest)
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
    folded = _load(spec.folded, f"folded rule of {spec.name!r}") if spec.folded and spec.payoff == "chips" else None
    seats: dict[str, _Seat] = {}
    wanted: list[tuple[Any, ...]] = []
    # Swiss: one round per seed, pairings from the standings of the rounds before (rebuilt from
    # the records on a resume: the games are deterministic, so the pairings are the same).
    rounds = [seeds] if kind == "round-robin" else [[s] for s in seeds]
    total = len(schedule(labels, seeds, n_seats)) if kind == "round-robin" else len(seeds) * 2 * (len(labels) // 2)
    if on_game is not None:
        for record in done.values():
            on_game(record, len(done), total)
    checked = False
    sink: Any = None
    synced = time.monotonic()
    try:
        for round_seeds in rounds:
            games = (
                schedule(labels, round_seeds, n_seats)
                if kind == "round-robin"
                else swiss_pairings(
                    labels, [done[(_task(*g[:-1]), g[-1])] for g in wanted], round_seeds[0], chips=spec.payoff == "chips"
                )
            )
            wanted += games
            todo = [g for g in games if (_task(*g[:-1]), g[-1]) not in done]
            if todo and not checked:
                _check_players(spec, players, env)
                checked = True
            for game in todo:
                seating, seed = list(game[:-1]), game[-1]
                for label in seating:
                    if label not in seats:
                        seats[label] = _Seat(by_label[label], spec, prompt, out)
                record = {"task": _task(*seating), "game": spec.name, "seed": seed, "players": seating}
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
                if sink is None:
                    sink = (out / "games.jsonl").open("a", encoding="utf-8")
                sink.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                sink.flush()  # in the OS's hands: a killed process loses no finished game
                if time.monotonic() - synced >= _SYNC_SECONDS:  # on disk: a crash of the machine loses at most a second
                    os.fsync(sink.fileno())
                    synced = time.monotonic()
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
        if sink is not None:
            os.fsync(sink.fileno())
            sink.close()
        for seat in seats.values():
            seat.close()
    return [done[(_task(*g[:-1]), g[-1])] for g in wanted]


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


def swiss_pairings(
    labels: Sequence[str], records: Sequence[Mapping[str, Any]], seed: int, *, chips: bool = False
) -> list[tuple[str, str, int]]:
    """One Swiss round on ``seed``: players ordered by points so far (ties in the order given;
    with ``chips``, a chip game's, by chips won rather than games won: their AIVAT estimates where
    the records hold them), each paired with the next
    one below it it has not met yet (or, having met all, the next one); with an odd number, the
    last player unpaired sits the round out. Both seat orders are played."""
    points = dict.fromkeys(labels, 0.0)
    met: set[frozenset[str]] = set()
    for r in records:
        for label, score, chip in zip(r["players"], r["scores"], r.get("aivat") or r["returns"], strict=True):
            points[label] += float(chip) if chips else score
        met.add(frozenset(r["players"]))
    free = sorted(labels, key=lambda p: (-points[p], labels.index(p)))
    games = []
    while len(free) >= 2:
        a = free.pop(0)
        b = next((q for q in free if frozenset((a, q)) not in met), free[0])
        free.remove(b)
        games += [(a, b, seed), (b, a, seed)]
    return games


def _open(out: Path, manifest: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """Create ``out`` or check it holds a match of the same game; merge new players and seeds
    into its manifest; read back its finished games."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "match.json"
    if path.exists():
        old = _read_manifest(path)
        for key in ("game", "factory", "game_kwargs", "prompt", "schedule"):
            if old.get(key) != manifest[key]:
                raise MatchError(
                    f"{out} holds a match with another {key} ({old.get(key)!r}, this one: {manifest[key]!r}); pass another --out"
                )
        for label, player in manifest["players"].items():
            if label in old["players"] and old["players"][label] != player:
                raise MatchError(
                    f"{out}: player {label!r} was {old['players'][label]} there, now {player}; give the new one another label"
                )
        if manifest["schedule"] == "swiss" and (old["players"] != manifest["players"] or old["seeds"] != manifest["seeds"]):
            raise MatchError(
                f"{out} holds a Swiss tournament of other players or seeds: its pairings would change; pass another --out"
            )
        manifest = {
            **manifest,
            "players": {**old["players"], **manifest["players"]},
            "seeds": list(dict.fromkeys([*old["seeds"], *manifest["seeds"]])),
        }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    records = load_episodes(out / "games.jsonl", repair=True)
    return {(r["task"], r["seed"]): r for r in records}


def _read_manifest(path: Path) -> dict[str, Any]:
    if path.stat().st_size > 1 << 20:
        raise MatchError(f"{path} is over 1 MiB: not a match manifest")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise MatchError(f"{path} is not valid JSON ({err}); move the folder away or pass another --out") from None
    if not isinstance(data, dict) or not isinstance(data.get("players"), dict) or not isinstance(data.get("seeds"), list):
        raise MatchError(f"{path} is not a match manifest (a JSON object with players and seeds)")
    return data


def load_matches(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A match folder's manifest and its finished games, checked: each record seats the match's
    players (as many as the game's seats, two in folders written before N-player matches), with
    a score of 0, 0.5 or 1 and a finite return per seat. The manifest's ``payoff`` is filled in
    for folders written before it was recorded (a registered game's own; else by ``cooperative``)."""
    folder = Path(folder)
    path = folder / "match.json"
    if not path.exists():
        raise MatchError(f"{folder} holds no match.json: not a match folder (rl4vlm-gym match writes one)")
    manifest = _read_manifest(path)
    if manifest.get("payoff") not in PAYOFFS:
        registered = {g.name: g for g in list_games()}.get(str(manifest.get("game")))
        manifest["payoff"] = (
            "team" if manifest.get("cooperative") else registered.payoff if registered is not None else "win-loss"
        )
    seats = manifest.get("seats", 2)
    if isinstance(seats, bool) or not isinstance(seats, int) or not 2 <= seats <= MAX_PLAYERS:
        raise MatchError(f"{path}: seats {seats!r} is not a number of seats (2 to {MAX_PLAYERS})")
    records = load_episodes(folder / "games.jsonl")
    for n, r in enumerate(records, 1):
        players, scores, returns = r.get("players"), r.get("scores"), r.get("returns")
        if (
            not isinstance(players, list)
            or len(players) != seats
            or any(p not in manifest["players"] for p in players)
            or not isinstance(scores, list)
            or len(scores) != seats
            or any(s not in (0, 0.5, 1) for s in scores)
            or not isinstance(returns, list)
            or len(returns) != seats
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in returns)
        ):
            raise MatchError(
                f"{folder / 'games.jsonl'}: game {n} is not a record of {seats} of the match's players "
                "with scores 0, 0.5 or 1 and finite returns"
            )
    return manifest, records


def is_model_agent(spec: PlayerSpec) -> bool:
    return spec.kind == "agent" and issubclass(agent_class(spec.name), ModelAgent)


# Exploitability of the players of a poker game -----------------------------------------------------


def player_policy(
    game: GameSpec,
    player: PlayerSpec,
    *,
    game_kwargs: Mapping[str, Any] | None = None,
    prompt: PromptConfig | None = None,
    samples: int = 1,
) -> Callable[[Any], Mapping[int, float]] | None:
    """``player``'s move distribution at OpenSpiel states of ``game`` (``None`` where it cannot be
    asked): a built-in player's own ``policy``; uniform for ``random``; any other agent asked
    ``samples`` times per information state through the game's ``spiel_observation``."""
    from types import SimpleNamespace

    from rl4vlm_gym.harness.exploitability import agent_policy, uniform

    if player.kind == "builtin":
        return getattr(game.builtin(player.name), "policy", None)
    if player.kind == "human":
        return None  # a person is not asked at every information state
    if player.name == "random":
        return uniform  # RandomAgent: uniform over obs["actions"], exactly
    if player.name == "oracle" or game.spiel_observation is None:
        return None
    observe_state = _load(game.spiel_observation, f"spiel_observation of {game.name!r}")
    kwargs = dict(game_kwargs or {})
    agent = AgentSpec(player.name, dict(player.kwargs)).make(prompt or PromptConfig())
    current: dict[str, Any] = {}

    def observe(state: Any) -> tuple[Mapping[str, Any], Any]:
        obs, parser = observe_state(state, **kwargs)
        current["view"] = SimpleNamespace(parser=parser, obs_mode=kwargs.get("obs_mode", "image+text"), spec=None)
        current["view"].unwrapped = current["view"]
        return obs, parser

    def act(obs: Mapping[str, Any], k: int) -> str:
        agent.begin(current["view"], k)  # a fresh stream per answer: no history across states
        return agent.act(obs)

    return agent_policy(act, observe, samples)


def match_exploitability(folder: str | Path, *, samples: int = 1) -> dict[str, Any]:
    """Each player's exploitability in the match in ``folder`` (its game must name an OpenSpiel
    game), written to ``exploitability.json``; players that cannot be asked are listed as such."""
    from rl4vlm_gym.harness.exploitability import exploitability

    folder = Path(folder)
    manifest, _ = load_matches(folder)
    spec = (
        game_spec(manifest["game"])
        if manifest["game"] in {g.name for g in list_games()}
        else GameSpec(manifest["game"], manifest["factory"])
    )
    spiel_game = spec.spiel_game_at(manifest.get("game_kwargs"))
    if spiel_game is None:
        players = manifest.get("game_kwargs", {}).get("players", 2)
        if spec.spiel_game is not None and players != 2:
            raise MatchError(f"game {spec.name!r} with {players} players: exploitability is computed for two players")
        if spec.spiel_game is not None:
            levels = [str(i) for i, g in enumerate(spec.spiel_levels) if g]
            raise MatchError(
                f"game {spec.name!r} at level {manifest.get('game_kwargs', {}).get('level', 0)!r} is too large for an exact "
                f"best response: exploitability is computed at level {', '.join(levels)}"
            )
        raise MatchError(f"game {spec.name!r} names no OpenSpiel game: exploitability is defined for the poker games")
    prompt = PromptConfig(**manifest.get("prompt", {}))
    result: dict[str, Any] = {"game": spiel_game, "samples": samples, "players": {}}
    for label, p in manifest["players"].items():
        player = PlayerSpec(label, p["kind"], p["name"], p.get("kwargs", {}))
        policy = player_policy(spec, player, game_kwargs=manifest.get("game_kwargs"), prompt=prompt, samples=samples)
        if policy is None:
            result["players"][label] = None
            continue
        result["players"][label] = exploitability(spiel_game, policy)["exploitability"]
    path = folder / "exploitability.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result
