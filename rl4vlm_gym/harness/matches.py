"""Matches between agents on multi-agent games (PettingZoo's AEC API): a resumable round robin.

A *game* is a PettingZoo ``AECEnv`` whose agents observe our four keys (``image``, ``text``,
``mission``, ``actions``) and act with free text, as the games family's envs do. Games are found
by name in the game registry (:func:`register_game`; families fill it through the entry-point
group ``rl4vlm_gym.games``, loaded only when a match needs it) or given as a ``"module:factory"``
path to any such env: a new game plugs in without a change here.

A *player* (a seat's occupant) is one of:

- a built-in player of the game (its :class:`GameSpec` names them: ``heuristic``, ``perfect``,
  ``cfr``, ...), which reads the true state and draws its moves from its own seeded RNG;
- ``random``: uniform over ``obs["actions"]`` (:class:`rl4vlm_gym.agents.simple.RandomAgent`);
- ``oracle``: the env's ``oracle_action(agent)``, where the game has one;
- any rl4vlm agent (``hf``, ``openai``, ``module:Class``): it sees its seat's observations and
  writes text through the same prompt machinery as ``rl4vlm-gym eval``; the game's parser reads it.

:func:`run_matches` plays a round robin: every pair of players, every seed, both seat orders (so
each deal or opening is played from both sides); or a Swiss tournament, one round per seed, each
player meeting one of similar points it has not met yet (both seat orders). A match folder holds ``match.json`` (the game,
its arguments and the players) and ``games.jsonl``, one line per finished game, appended and
flushed as each ends. Re-running on the same folder resumes: finished games are read back and
never replayed; adding players or seeds plays only the new games. A game depends only on its
seed, its players and their seats, so a resumed tournament has the same records as an
uninterrupted one, in any process.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from rl4vlm_gym.agents import Agent, ModelAgent, agent_class
from rl4vlm_gym.harness.runner import AgentSpec, RunError, load_episodes
from rl4vlm_gym.prompts import PromptConfig

__all__ = [
    "GAME_ENTRY_POINT_GROUP",
    "MAX_PLAYERS",
    "MAX_SEEDS",
    "BuiltinPlayer",
    "GameSpec",
    "MatchError",
    "PlayerSpec",
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

GAME_ENTRY_POINT_GROUP = "rl4vlm_gym.games"
MAX_PLAYERS = 64
MAX_SEEDS = 100_000
SCHEDULES = ("round-robin", "swiss")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
_MAX_ITER = 100_000  # agent turns of one game at most, whatever the env's own limit


class MatchError(RunError):
    """A match cannot start or continue; the message says why and what to do."""


class BuiltinPlayer(Protocol):
    """A game's own player: reads the env's true state, draws with ``rng``, writes a legal move.

    A player that knows its move distribution at every OpenSpiel state of the game may define
    ``policy(state) -> {action_id: probability}``: its exploitability is then exact. A player
    that cannot play every variant of its game (a level) may define ``check(env)``, raising
    ``ValueError`` saying why: the match then stops before its first game.
    """

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str: ...


@dataclass(frozen=True)
class GameSpec:
    """A multi-agent game the match harness can play.

    Attributes:
        name: the game's name (``tictactoe``).
        factory: lazy ``"module:function"`` returning the PettingZoo ``AECEnv``; it takes the
            env's keyword arguments (``obs_mode``, ``image_size``, ...).
        players: built-in player name -> lazy ``"module:function"`` returning a
            :class:`BuiltinPlayer` (called with no arguments).
        spiel_game: the OpenSpiel game name whose information states the game's hidden
            information follows (``kuhn_poker``), for exploitability; ``None`` for others.
        spiel_observation: lazy ``"module:function"``, ``(state, **env_kwargs) -> (obs, parser)``:
            the observation the player to move at an OpenSpiel state gets (``obs["actions"][i]``
            names ``state.legal_actions()[i]``) and the parser its env reads text with; lets any
            agent be queried at every information state.
        spiel_levels: where the env's ``level`` argument changes the OpenSpiel game, the game of
            each level (``None`` where no exact best response is computed: too large);
            ``spiel_game`` is then level 0's.
        cooperative: the seats play as a team and share the payoff (a signalling game): a game
            scores 1 to both seats when the team succeeded (every seat's return is positive),
            else 0, and ratings are team success rates (:func:`rl4vlm_gym.harness.ratings.standings`).
        summary: one sentence for listings.
    """

    name: str
    factory: str
    players: Mapping[str, str] = field(default_factory=dict)
    spiel_game: str | None = None
    spiel_observation: str | None = None
    spiel_levels: tuple[str | None, ...] = ()
    cooperative: bool = False
    summary: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", MappingProxyType(dict(self.players)))

    def spiel_game_at(self, game_kwargs: Mapping[str, Any] | None = None) -> str | None:
        """The OpenSpiel game played with the env's arguments ``game_kwargs`` (its ``level``)."""
        if not self.spiel_levels:
            return self.spiel_game
        level = (game_kwargs or {}).get("level", 0)
        ok = isinstance(level, int) and not isinstance(level, bool) and 0 <= level < len(self.spiel_levels)
        return self.spiel_levels[level] if ok else None

    def make(self, **kwargs: Any) -> Any:
        """The game's AEC env."""
        return _load(self.factory, f"game {self.name!r}")(**kwargs)

    def builtin(self, name: str) -> BuiltinPlayer:
        return _load(self.players[name], f"player {name!r} of {self.name!r}")()


_GAMES: dict[str, GameSpec] = {}
_loaded = False


def register_game(spec: GameSpec) -> None:
    """Add ``spec`` to the game registry (again with the same spec: a no-op)."""
    old = _GAMES.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"game {spec.name!r} is already registered with another spec")
    _GAMES[spec.name] = spec


def _load_entry_points() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for entry_point in importlib.metadata.entry_points(group=GAME_ENTRY_POINT_GROUP):
        try:
            entry_point.load()()
        except Exception as err:  # noqa: BLE001 - a broken plugin must not hide the other games
            warnings.warn(
                f"rl4vlm_gym: game plugin {entry_point.name!r} ({entry_point.value}) failed to register: {err}",
                RuntimeWarning,
                stacklevel=2,
            )


def list_games() -> list[GameSpec]:
    """The registered games, by name."""
    _load_entry_points()
    return [_GAMES[k] for k in sorted(_GAMES)]


def game_spec(name: str) -> GameSpec:
    """The registered game ``name``, or a spec for a ``"module:factory"`` path (no built-in players)."""
    _load_entry_points()
    if name in _GAMES:
        return _GAMES[name]
    if ":" in name:
        return GameSpec(name=name, factory=name)
    known = ", ".join(sorted(_GAMES)) or "none (install the games extra)"
    raise MatchError(
        f"unknown game {name!r}: registered games are {known}; or give a PettingZoo AEC env factory as 'package.module:function'"
    )


def _load(target: str, what: str) -> Callable[..., Any]:
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise MatchError(f"{what}: {target!r} is not a 'package.module:function' path")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise MatchError(f"{what}: cannot load {target!r}: {type(err).__name__}: {err}") from None


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
    ``oracle``, an agent of :data:`rl4vlm_gym.agents.AGENTS` or ``module:Class``."""
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
    try:
        agent_class(name)
    except ValueError as err:
        builtins = ", ".join(sorted(game.players)) or "none"
        raise MatchError(f"player {label!r}: {err}; the built-in players of {game.name!r} are: {builtins}") from None
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
    """A player in one process: its built-in player or agent, begun per game."""

    def __init__(self, spec: PlayerSpec, game: GameSpec, prompt: PromptConfig) -> None:
        self.spec = spec
        self.builtin: BuiltinPlayer | None = None
        self.agent: Agent | None = None
        if spec.kind == "builtin":
            self.builtin = game.builtin(spec.name)
        else:
            self.agent = AgentSpec(spec.name, dict(spec.kwargs)).make(prompt)
        self.rng = np.random.default_rng(0)

    def begin(self, env: Any, agent: str, seed: int, seat: int) -> None:
        # The seat enters the stream, so one player in both seats of a seed draws differently.
        self.rng = np.random.default_rng([seed, seat])
        self.view = SeatView(env, agent)
        if self.agent is not None:
            self.agent.begin(self.view, seed * 2 + seat)  # type: ignore[arg-type]

    def act(self, env: Any, agent: str, obs: Mapping[str, Any]) -> str:
        if self.builtin is not None:
            return self.builtin.act(env, agent, self.rng)
        assert self.agent is not None
        return self.agent.act(obs)

    def close(self) -> None:
        if self.agent is not None:
            self.agent.close()


# One game -----------------------------------------------------------------------------------------


def play_game(env: Any, seats: Sequence[_Seat], seed: int, *, cooperative: bool = False) -> dict[str, Any]:
    """Play one game of ``env`` (reset with ``seed``), ``seats[i]`` in ``env.possible_agents[i]``.

    Returns the record: each seat's return and score (1 win, 0.5 draw, 0 loss, by return; in a
    ``cooperative`` game the team's: 1 to every seat when all returns are positive, else 0), the
    steps (acting seat, raw output, parsed move, validity, parser error, every seat's reward), the
    invalid moves per seat, and ``error``/``forfeit`` when a player raised or wrote no text, or the
    step limit ended the game and one player wrote more invalid moves (it stalled): that player
    loses the game.
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
        obs, _, terminated, trunc, _ = env.last()
        if terminated or trunc:
            truncated = truncated or bool(trunc)
            env.step(None)
            continue
        i = agents.index(agent)
        try:
            output = seats[i].act(env, agent, obs)
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
    if forfeit is None and truncated and invalid[0] != invalid[1]:
        forfeit = int(invalid[1] > invalid[0])  # the step limit ended a game one player stalled with invalid moves
        error = f"the step limit ended the game; {seats[forfeit].spec.label} wrote {invalid[forfeit]} invalid moves"
    if cooperative:  # one team: a forfeit (either seat's fault) fails it like a wrong answer
        scores = [float(forfeit is None and min(returns) > 0)] * len(agents)
    elif forfeit is not None:
        scores = [0.0 if i == forfeit else 1.0 for i in range(len(agents))]
    else:
        best = max(returns)
        winners = [i for i, r in enumerate(returns) if r == best]
        scores = [1.0 if len(winners) == 1 and i in winners else 0.5 if i in winners else 0.0 for i in range(len(agents))]
    return {
        "agents": agents,
        "returns": returns,
        "scores": scores,
        "num_steps": len(steps),
        "invalid_actions": invalid,
        "truncated": truncated,
        "error": error,
        "forfeit": forfeit,
        "steps": steps,
    }


# The tournament -----------------------------------------------------------------------------------


def schedule(labels: Sequence[str], seeds: Iterable[int]) -> list[tuple[str, str, int]]:
    """Round robin: for each seed, every pair of players in both seat orders, ``(first, second, seed)``."""
    games = []
    for seed in seeds:
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                games += [(a, b, seed), (b, a, seed)]
    return games


def _task(first: str, second: str) -> str:
    return f"{first} vs {second}"


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
        raise MatchError("seeds repeat: each seed is played once per pairing and seat order")
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

    Args:
        game: a registered game's name, a ``"module:factory"`` path, or a :class:`GameSpec`.
        players: two or more players with distinct labels.
        seeds: the games' seeds (each pair plays each seed in both seat orders; in a Swiss
            tournament, one round per seed, each pairing in both seat orders).
        out: the match folder (created; resumed if it holds the same game).
        game_kwargs: the env's keyword arguments (``obs_mode``, ``image_size``, ...).
        prompt: the prompt of model agents (default: :class:`PromptConfig`'s).
        on_game: called with each record (first those read back), the games done and the total.
        kind: ``"round-robin"`` or ``"swiss"`` (cheaper for many players: ``n/2`` pairings a
            round instead of ``n(n-1)/2``; it cannot take new players or seeds once started).

    Returns:
        The records of every scheduled game, in schedule order.
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
    manifest = {
        "game": spec.name,
        "factory": spec.factory,
        "game_kwargs": game_kwargs,
        "players": {p.label: p.as_dict() for p in players},
        "prompt": prompt.as_dict(),
        "schedule": kind,
        "seeds": seeds,
        "cooperative": spec.cooperative,
    }
    done = _open(out, manifest)
    by_label = {p.label: p for p in players}
    seats: dict[str, _Seat] = {}
    env: Any = None
    wanted: list[tuple[str, str, int]] = []
    # Swiss: one round per seed, pairings from the standings of the rounds before (rebuilt from
    # the records on a resume: the games are deterministic, so the pairings are the same).
    rounds = [seeds] if kind == "round-robin" else [[s] for s in seeds]
    total = len(schedule(labels, seeds)) if kind == "round-robin" else len(seeds) * 2 * (len(labels) // 2)
    if on_game is not None:
        for record in done.values():
            on_game(record, len(done), total)
    try:
        for round_seeds in rounds:
            games = (
                schedule(labels, round_seeds)
                if kind == "round-robin"
                else swiss_pairings(labels, [done[(_task(a, b), s)] for a, b, s in wanted], round_seeds[0])
            )
            wanted += games
            todo = [g for g in games if (_task(g[0], g[1]), g[2]) not in done]
            if todo and env is None:
                env = _make_env(spec, game_kwargs)
                _check_players(spec, players, env)
            for first, second, seed in todo:
                for label in (first, second):
                    if label not in seats:
                        seats[label] = _Seat(by_label[label], spec, prompt)
                record = {"task": _task(first, second), "game": spec.name, "seed": seed, "players": [first, second]}
                try:
                    record.update(play_game(env, [seats[first], seats[second]], seed, cooperative=spec.cooperative))
                except MatchError:
                    raise
                except Exception as err:  # the game broke (a player's errors are recorded in play_game)
                    raise MatchError(
                        f"the game {spec.name!r} raised {type(err).__name__}: {err} in {record['task']}, seed {seed}; "
                        f"the {len(done)} finished games are saved in {out}"
                    ) from None
                with (out / "games.jsonl").open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                    sink.flush()
                    os.fsync(sink.fileno())
                done[(record["task"], seed)] = record
                if on_game is not None:
                    on_game(record, len(done), total)
    finally:
        for seat in seats.values():
            seat.close()
        if env is not None:
            env.close()
    return [done[(_task(a, b), s)] for a, b, s in wanted]


def _make_env(spec: GameSpec, game_kwargs: Mapping[str, Any]) -> Any:
    try:
        env = spec.make(**game_kwargs)
    except MatchError:
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


def swiss_pairings(labels: Sequence[str], records: Sequence[Mapping[str, Any]], seed: int) -> list[tuple[str, str, int]]:
    """One Swiss round on ``seed``: players ordered by points so far (ties in the order given),
    each paired with the next one below it it has not met yet (or, having met all, the next one);
    with an odd number, the last player unpaired sits the round out. Both seat orders are played."""
    points = dict.fromkeys(labels, 0.0)
    met: set[frozenset[str]] = set()
    for r in records:
        for label, score in zip(r["players"], r["scores"], strict=True):
            points[label] += score
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
    """A match folder's manifest and its finished games (checked: two known players, scores)."""
    folder = Path(folder)
    path = folder / "match.json"
    if not path.exists():
        raise MatchError(f"{folder} holds no match.json: not a match folder (rl4vlm-gym match writes one)")
    manifest = _read_manifest(path)
    records = load_episodes(folder / "games.jsonl")
    for n, r in enumerate(records, 1):
        players, scores = r.get("players"), r.get("scores")
        if (
            not isinstance(players, list)
            or len(players) != 2
            or any(p not in manifest["players"] for p in players)
            or not isinstance(scores, list)
            or len(scores) != 2
            or any(s not in (0, 0.5, 1) for s in scores)
        ):
            raise MatchError(
                f"{folder / 'games.jsonl'}: game {n} is not a record of two of the match's players with scores 0, 0.5 or 1"
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
