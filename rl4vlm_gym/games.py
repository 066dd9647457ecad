"""The registry of multi-agent games: :class:`GameSpec`, :func:`register_game`, :func:`list_games`.

A *game* is a PettingZoo ``AECEnv`` whose agents observe our four keys and act with free text.
This registry is to games what :mod:`rl4vlm_gym.registry` is to single-agent ids: a family
describes each of its games with a :class:`GameSpec` (lazy ``"module:function"`` strings for the
env factory, the built-in players and the OpenSpiel hooks, so registering imports nothing of the
game) and registers it from its ``rl4vlm_gym.games`` entry point. The match harness
(:mod:`rl4vlm_gym.harness.matches`, ``rl4vlm-gym match``) reads the registry; no family imports
the harness. The entry points are loaded on the first look-up, never on ``import rl4vlm_gym``.

    >>> from rl4vlm_gym.games import GameSpec
    >>> spec = GameSpec("my_game", "my_package.my_module:make_env", players={"greedy": "my_package.my_module:Greedy"})
    >>> spec.payoff, list(spec.players)
    ('win-loss', ['greedy'])
"""

from __future__ import annotations

import importlib
import importlib.metadata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "GAME_ENTRY_POINT_GROUP",
    "PAYOFFS",
    "BuiltinPlayer",
    "GameError",
    "GameSpec",
    "game_spec",
    "list_games",
    "load_target",
    "register_game",
]

GAME_ENTRY_POINT_GROUP = "rl4vlm_gym.games"
PAYOFFS = ("win-loss", "chips", "team")


class GameError(ValueError):
    """A game cannot be found or loaded; the message says why and what to do."""


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
            Its ``payoff`` is ``"team"``.
        payoff: what a game's result means, and so how players are ranked (:data:`PAYOFFS`):
            ``"win-loss"`` (the default: a game is won, drawn or lost by the returns; ranked by
            a Bradley-Terry fit), ``"chips"`` (a zero-sum game whose returns are an amount, as
            poker's chips: ranked by mean return per game) or ``"team"`` (``cooperative``).
        folded: lazy ``"module:function"``, ``(env, seat) -> returns``: in a ``"chips"`` game,
            the returns of every seat if ``seat`` folded now (it loses what it has put in; the
            others win it), read from the env's true state. A player that forfeits (it raised,
            or stalled with invalid moves until the step limit) is scored so; without it the
            game's returns stand.
        aivat: in a two-player ``"chips"`` game played through OpenSpiel (the env's ``state`` is
            the ``pyspiel.State``), the baseline of AIVAT's value function: the built-in player
            (``cfr``) whose ``policy(state)`` a seat of unknown policy (a model agent) is valued
            as playing, or ``"uniform"``; each game's record then holds ``aivat``, every seat's
            unbiased, lower-variance estimate of its chips (:mod:`rl4vlm_gym.harness.aivat`),
            which the standings rank by. ``None`` (the default): no estimate.
        summary: one sentence for listings.
    """

    name: str
    factory: str
    players: Mapping[str, str] = field(default_factory=dict)
    spiel_game: str | None = None
    spiel_observation: str | None = None
    spiel_levels: tuple[str | None, ...] = ()
    cooperative: bool = False
    payoff: str = "win-loss"
    folded: str | None = None
    aivat: str | None = None
    summary: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", MappingProxyType(dict(self.players)))
        if self.cooperative:
            object.__setattr__(self, "payoff", "team")
        if self.payoff not in PAYOFFS:
            raise ValueError(f"game {self.name!r}: payoff {self.payoff!r} is not one of {PAYOFFS}")
        if self.payoff == "team" and not self.cooperative:
            raise ValueError(f"game {self.name!r}: the team payoff is for cooperative games (cooperative=True)")
        if self.aivat is not None and (self.payoff != "chips" or (self.aivat != "uniform" and self.aivat not in self.players)):
            raise ValueError(
                f"game {self.name!r}: aivat={self.aivat!r} needs the chips payoff and names a built-in player or 'uniform'"
            )

    def spiel_game_at(self, game_kwargs: Mapping[str, Any] | None = None) -> str | None:
        """The OpenSpiel game played with the env's arguments ``game_kwargs`` (its ``level``)."""
        if (game_kwargs or {}).get("players", 2) != 2:
            return None  # exact best responses are computed for two players
        if not self.spiel_levels:
            return self.spiel_game
        level = (game_kwargs or {}).get("level", 0)
        ok = isinstance(level, int) and not isinstance(level, bool) and 0 <= level < len(self.spiel_levels)
        return self.spiel_levels[level] if ok else None

    def make(self, **kwargs: Any) -> Any:
        """The game's AEC env."""
        return load_target(self.factory, f"game {self.name!r}")(**kwargs)

    def builtin(self, name: str) -> BuiltinPlayer:
        """A fresh built-in player ``name`` of this game."""
        return load_target(self.players[name], f"player {name!r} of {self.name!r}")()


_GAMES: dict[str, GameSpec] = {}
_loaded = False


def register_game(spec: GameSpec) -> None:
    """Add ``spec`` to the game registry (again with the same spec: a no-op)."""
    old = _GAMES.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"game {spec.name!r} is already registered with another spec")
    _GAMES[spec.name] = spec


def _load_entry_points() -> None:
    """Call every ``rl4vlm_gym.games`` entry point once; a broken plugin warns and is skipped."""
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
    """The registered game ``name``, or a spec for a ``"module:factory"`` path (no built-in players).

    Raises:
        GameError: ``name`` is neither registered nor a ``"module:factory"`` path.
    """
    _load_entry_points()
    if name in _GAMES:
        return _GAMES[name]
    if ":" in name:
        return GameSpec(name=name, factory=name)
    known = ", ".join(sorted(_GAMES)) or "none (install the games extra)"
    raise GameError(
        f"unknown game {name!r}: registered games are {known}; or give a PettingZoo AEC env factory as 'package.module:function'"
    )


def load_target(target: str, what: str) -> Callable[..., Any]:
    """The object a lazy ``"package.module:attribute"`` string names; ``what`` says whose it is.

    Raises:
        GameError: ``target`` is not such a path, or its module or attribute cannot be loaded.
    """
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise GameError(f"{what}: {target!r} is not a 'package.module:function' path")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise GameError(f"{what}: cannot load {target!r}: {type(err).__name__}: {err}") from None
