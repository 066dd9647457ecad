"""The players of a match: who sits in a seat, read from the command line, and what it does in one process.

A player is a built-in player of the game (its :class:`~rl4vlm_gym.games.GameSpec` names them),
``random``, ``oracle``, any rl4vlm agent, or ``human`` (a person at the terminal:
:mod:`rl4vlm_gym.harness.human`); :func:`parse_player` reads ``[LABEL=]NAME`` into a
:class:`PlayerSpec`, and a :class:`Seat` is the player begun for each game (its own seeded stream,
the agent's view of its seat, the move distribution where the harness knows it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from rl4vlm_gym.agents import Agent, ModelAgent, agent_class
from rl4vlm_gym.games import BuiltinPlayer, GameSpec
from rl4vlm_gym.harness.match_errors import MatchError
from rl4vlm_gym.harness.runner import AgentSpec
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["HUMAN", "MAX_PLAYERS", "PlayerSpec", "Seat", "SeatView", "is_model_agent", "parse_player"]

MAX_PLAYERS = 64
HUMAN = "human"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
_PLAYER_STREAM = 1  # the spawn key of the built-in players' streams (the env's: none)


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


class Seat:
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


def is_model_agent(spec: PlayerSpec) -> bool:
    """Whether ``spec`` is an agent that asks a model (a :class:`~rl4vlm_gym.agents.ModelAgent`)."""
    return spec.kind == "agent" and issubclass(agent_class(spec.name), ModelAgent)
