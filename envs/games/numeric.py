"""The games' AEC envs with the numeric interface of PettingZoo's ``classic`` envs, for MARL libraries.

``numeric_env(env)`` wraps any AEC env of the family (or ``numeric_env("kuhn_poker")`` makes one
by name) in a :class:`NumericAEC`: the same game, the same seeding, rewards, terminations and
truncations, but what a standard MARL library reads:

- ``observe(agent)`` is ``{"observation": Box, "action_mask": int8 Box}`` (PettingZoo classic's
  convention; the mask is all zeros unless it is ``agent``'s turn and the game is on);
- ``action_space(agent)`` is ``Discrete(n)``; an action that the mask forbids is an invalid move, as
  free text that names no legal move is in the VLM envs: nothing happens, the agent keeps the turn
  and is paid the env's invalid reward, and ``infos[agent]["action"]["valid"]`` is ``False``
  (PettingZoo's ``TerminateIllegalWrapper`` on top ends the game instead, as in ``classic``);
- ``state()`` and ``state_space``: a global state vector for centralised critics (MAPPO's).

``numeric_parallel_env(env)`` (:class:`NumericParallel`) does the same for a Parallel API env of
the family (a simultaneous-move OpenSpiel game such as Goofspiel, where every live agent acts at
every step); its AEC form (PettingZoo's ``parallel_to_aec``, :class:`~.openspiel_adapter.SimultaneousAEC`)
takes ``numeric_env`` like any AEC env.

Every move is played through the wrapped env's own ``step`` with the move's name, so the numeric
and the VLM interfaces cannot drift apart. A PettingZoo loop::

    env = numeric_env("leduc")  # or numeric_env(leduc_env(...)), numeric_env("liars_dice", players=3)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        env.step(action)

MARL libraries take it as they take PettingZoo's ``classic`` envs: Tianshou's ``PettingZooEnv``
(``tests/envs/games/test_marl_smoke.py`` trains DQN by self-play on it), or any loop that reads
``action_mask``; ``state()`` serves a centralised critic.

Encoders (what the wrapper reads from the env; the first that fits is used)
---------------------------------------------------------------------------
``env.numeric_encoder()``, where the env defines it, returns an :class:`Encoder`. Otherwise:

- **OpenSpiel-backed envs** (:class:`SpielEncoder`, duck-typed: :class:`~.spiel.SpielAEC` and any
  adapter of another OpenSpiel game get it for free). The env must have
  ``env.state``: the ``pyspiel.State`` being played, never at a chance node between steps;
  ``env.possible_agents[k]``: OpenSpiel's player ``k`` (N from ``possible_agents``);
  ``env.legal_moves(agent)``: the names of ``agent``'s legal moves, empty unless it may move now,
  else aligned with OpenSpiel's actions of its player ``k`` (``legal_moves(agent)[i]`` names
  ``env.state.legal_actions(k)[i]``); ``env.step(name)`` plays the move so named (a Parallel
  env: ``env.step({agent: name})``).
  Action ids are OpenSpiel's (``Discrete(game.num_distinct_actions())``). The observation is
  the player's ``information_state_tensor`` where the game provides one (perfect recall, as in
  OpenSpiel's ``rl_environment``), else its ``observation_tensor``; ``tensor="observation"``
  picks the latter. The state is every player's tensor and a flag per player that moves now
  (one, every player at a simultaneous node, none at the end).
- **Board games** (:class:`BoardEncoder`, :class:`~.aec.BoardGameAEC`): action ids are PettingZoo's
  (Tic-Tac-Toe's 9 squares, Connect Four's 7 columns); the observation is the board as
  ``(rows, cols, 3)`` int8 planes: the agent's pieces, the opponent's, the empty cells; the state
  is the planes from the first player's side and a one-hot of the agent to move.
- **Referential game** (:class:`ReferentialEncoder`): the speaker's actions are the level's phrases
  (``Level.phrases()``: its finite vocabulary of messages), the listener's the candidates' numbers.

This module imports no game module at import time: ``numeric_env(name)`` imports the one it makes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from gymnasium import spaces

from rl4vlm_gym.extras import require

require("games", "The games' numeric interface")  # before importing it: an error naming the extra

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import BaseWrapper
from pettingzoo.utils.wrappers import BaseParallelWrapper

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "GAMES",
    "BoardEncoder",
    "Encoder",
    "NumericAEC",
    "NumericParallel",
    "ReferentialEncoder",
    "SpielEncoder",
    "encoder_for",
    "numeric_env",
    "numeric_parallel_env",
]

# name -> "module:factory" of the family's AEC envs (imported when one is made)
GAMES: dict[str, str] = {
    "tictactoe": "rl4vlm_gym.envs.games.aec:tictactoe_env",
    "connect_four": "rl4vlm_gym.envs.games.aec:connect_four_env",
    "kuhn_poker": "rl4vlm_gym.envs.games.kuhn_aec:kuhn_poker_env",
    "leduc": "rl4vlm_gym.envs.games.leduc:leduc_env",
    "liars_dice": "rl4vlm_gym.envs.games.liars_dice:liars_dice_env",
    "referential": "rl4vlm_gym.envs.games.referential:referential_env",
}


class Encoder(Protocol):
    """What :class:`NumericAEC` needs to know of a game: its numbers and how to name a move."""

    @property
    def state_space(self) -> spaces.Box:
        """The space of :meth:`state`."""
        ...

    def observation_box(self, agent: str) -> spaces.Box:
        """The space of ``agent``'s ``observation`` (fixed for the env's life)."""
        ...

    def num_actions(self, agent: str) -> int:
        """``n`` of ``agent``'s ``Discrete(n)``."""
        ...

    def observation(self, agent: str) -> NDArray[Any]:
        """What ``agent`` may know now, as numbers (nothing hidden from it)."""
        ...

    def legal(self, agent: str) -> dict[int, str]:
        """``agent``'s legal action ids now, each with the name of its move (empty unless it may move)."""
        ...

    def state(self) -> NDArray[np.float32]:
        """The global state: what a centralised critic may see."""
        ...


def _one_hot(index: int | None, n: int) -> NDArray[np.float32]:
    out = np.zeros(n, np.float32)
    if index is not None:
        out[index] = 1.0
    return out


class SpielEncoder:
    """The numbers of an OpenSpiel-backed env (see the module docstring for what it reads)."""

    def __init__(self, env: Any, tensor: str = "info_state") -> None:
        if tensor not in ("info_state", "observation"):
            raise ValueError(f"tensor={tensor!r} is unknown; choose 'info_state' or 'observation'")
        self.env = env
        game = env.state.get_game()
        kind = game.get_type()
        self.info_state = tensor == "info_state" and kind.provides_information_state_tensor
        if not self.info_state and not kind.provides_observation_tensor:
            raise ValueError(f"OpenSpiel's {kind.short_name} has no {tensor} tensor")
        self.size = int(np.prod(game.information_state_tensor_shape() if self.info_state else game.observation_tensor_shape()))
        self.actions = int(game.num_distinct_actions())
        self.players = len(env.possible_agents)
        self.box = spaces.Box(-np.inf, np.inf, (self.size,), np.float32)  # OpenSpiel's tensors are not bounded in general
        self.state_space = spaces.Box(-np.inf, np.inf, (self.players * self.size + self.players,), np.float32)

    def observation_box(self, agent: str) -> spaces.Box:
        return self.box

    def num_actions(self, agent: str) -> int:
        return self.actions

    def _tensor(self, player: int) -> NDArray[np.float32]:
        state = self.env.state
        values = state.information_state_tensor(player) if self.info_state else state.observation_tensor(player)
        return np.asarray(values, np.float32)

    def observation(self, agent: str) -> NDArray[np.float32]:
        return self._tensor(self.env.possible_agents.index(agent))

    def legal(self, agent: str) -> dict[int, str]:
        names = self.env.legal_moves(agent)
        if not names:
            return {}
        # the player's own actions: at a simultaneous node legal_actions() lists joint actions
        return dict(zip(self.env.state.legal_actions(self.env.possible_agents.index(agent)), names, strict=True))

    def state(self) -> NDArray[np.float32]:
        state = self.env.state
        # who moves now: one player, every player at a simultaneous node, none at the end
        to_move = np.array([bool(state.legal_actions(p)) for p in range(self.players)], np.float32)
        return np.concatenate([*(self._tensor(p) for p in range(self.players)), to_move])


class BoardEncoder:
    """The numbers of a :class:`~.aec.BoardGameAEC` (Tic-Tac-Toe, Connect Four)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        game = env.game
        self.moves = game.moves
        self.shape = (game.rows, game.cols, 3)
        self.box = spaces.Box(0, 1, self.shape, np.int8)
        self.state_space = spaces.Box(0.0, 1.0, (int(np.prod(self.shape)) + 2,), np.float32)
        # where each (row, col) lies in the board tuple (found through the game's own ``cell``)
        self.index = np.zeros((game.rows, game.cols), np.intp)
        for k in range(game.size):
            single = tuple(int(i == k) for i in range(game.size))
            hit = [(r, c) for r in range(game.rows) for c in range(game.cols) if game.cell(single, r, c)]
            self.index[hit[0]] = k
        # a cell's planes by its value (0 empty, 1 or 2 a piece), for each piece's side
        self.lookup = {
            piece: np.array([[0, 0, 1], [int(piece == 1), int(piece == 2), 0], [int(piece == 2), int(piece == 1), 0]], np.int8)
            for piece in (1, 2)
        }

    def observation_box(self, agent: str) -> spaces.Box:
        return self.box

    def num_actions(self, agent: str) -> int:
        return len(self.moves)

    def _planes(self, piece: int) -> NDArray[np.int8]:
        return self.lookup[piece][np.asarray(self.env.board)[self.index]]

    def observation(self, agent: str) -> NDArray[np.int8]:
        return self._planes(self.env.piece(agent))

    def legal(self, agent: str) -> dict[int, str]:
        if not self.env.legal_moves(agent):
            return {}
        return {m: self.moves[m] for m in self.env.game.legal(self.env.board)}

    def state(self) -> NDArray[np.float32]:
        env = self.env
        on = not any(env.terminations.values()) and not any(env.truncations.values())
        mover = env.possible_agents.index(env.agent_selection) if on else None
        return np.concatenate([self._planes(1).reshape(-1).astype(np.float32), _one_hot(mover, 2)])


class ReferentialEncoder:
    """The numbers of a :class:`~.referential.ReferentialAEC`.

    Both roles see the same layout: their role (one-hot), then each candidate in their own order
    as one-hot values of size, colour and shape plus a target flag (set for the speaker; for the
    listener only once it has picked, when its text, too, says where the target was),
    then the message as one-hot words per attribute and a flag once it is said, then the pick (a
    one-hot of the listener's number, once made). The speaker's actions are the level's phrases
    in ``Level.phrases()`` order, the listener's the numbers ``1..n`` (ids ``0..n-1``).
    """

    ATTRIBUTES: ClassVar[tuple[str, ...]] = ("size", "colour", "shape")

    def __init__(self, env: Any) -> None:
        from rl4vlm_gym.envs.games.referential import LEVELS, VALUES

        self.env = env
        self.config = LEVELS[env.level]
        self.words = [(a, v) for a in self.ATTRIBUTES for v in VALUES[a]]  # every value, in a fixed order
        n = self.config.candidates
        self.size = 2 + n * (len(self.words) + 1) + len(self.words) + 1 + n
        self.box = spaces.Box(0, 1, (self.size,), np.int8)
        self.state_space = spaces.Box(0.0, 1.0, (2 * self.size,), np.float32)
        self.phrases = self.config.phrases()

    def observation_box(self, agent: str) -> spaces.Box:
        return self.box

    def num_actions(self, agent: str) -> int:
        return len(self.phrases) if agent == "speaker" else self.config.candidates

    def _words(self, values: set[str]) -> list[int]:
        return [int(v in values) for _, v in self.words]

    def observation(self, agent: str) -> NDArray[np.int8]:
        r, message, picked = self.env.round, self.env.message, self.env.picked
        speaker = agent == "speaker"
        out = [int(speaker), int(not speaker)]
        for i in r.speaker_order if speaker else r.listener_order:
            out += [*self._words({v for _, v in r.candidates[i]}), int((speaker or picked is not None) and i == r.target)]
        out += [*self._words(set((message or "").split())), int(message is not None)]
        out += [int(picked == k + 1) for k in range(self.config.candidates)]
        return np.asarray(out, np.int8)

    def legal(self, agent: str) -> dict[int, str]:
        moves = set(self.env.legal_moves(agent))
        if not moves:
            return {}
        names = self.phrases if agent == "speaker" else [str(k + 1) for k in range(self.config.candidates)]
        return {i: name for i, name in enumerate(names) if name in moves}

    def state(self) -> NDArray[np.float32]:
        return np.concatenate([self.observation("speaker"), self.observation("listener")]).astype(np.float32)


def encoder_for(env: Any, **kwargs: Any) -> Encoder:
    """The :class:`Encoder` of ``env`` (see the module docstring for the order of the choice)."""
    if hasattr(env, "numeric_encoder"):
        return env.numeric_encoder(**kwargs)
    if hasattr(getattr(env, "state", None), "legal_actions"):
        return SpielEncoder(env, **kwargs)
    if kwargs:
        raise TypeError(f"{env} takes no encoder arguments, got {sorted(kwargs)}")
    from rl4vlm_gym.envs.games.aec import BoardGameAEC
    from rl4vlm_gym.envs.games.referential import ReferentialAEC

    if isinstance(env, BoardGameAEC):
        return BoardEncoder(env)
    if isinstance(env, ReferentialAEC):
        return ReferentialEncoder(env)
    raise TypeError(f"no numeric encoder for {env}: give it a numeric_encoder() method or an OpenSpiel `state`")


def numeric_spaces(
    encoder: Encoder, agents: list[str], pad_actions: bool = False
) -> tuple[dict[str, spaces.Dict], dict[str, spaces.Discrete]]:
    """Each agent's observation space (``observation`` and ``action_mask``) and ``Discrete`` action
    space, built once: PettingZoo's API tests want the same objects on every call. With
    ``pad_actions`` every agent gets the largest ``Discrete(n)`` (the ids past its own are never
    in its mask), as libraries that want one space for all agents ask (Tianshou's
    ``PettingZooEnv``; SuperSuit's ``pad_action_space`` does the same)."""
    sizes = {a: encoder.num_actions(a) for a in agents}
    if pad_actions:
        sizes = dict.fromkeys(agents, max(sizes.values()))
    observation = {
        a: spaces.Dict({"observation": encoder.observation_box(a), "action_mask": spaces.Box(0, 1, (sizes[a],), np.int8)})
        for a in agents
    }
    return observation, {a: spaces.Discrete(sizes[a]) for a in agents}


def numeric_observation(encoder: Encoder, agent: str, n: int) -> dict[str, NDArray[Any]]:
    """``agent``'s ``{"observation", "action_mask"}`` (the mask all zeros unless it may move)."""
    mask = np.zeros(n, np.int8)
    mask[list(encoder.legal(agent))] = 1
    return {"observation": encoder.observation(agent), "action_mask": mask}


def numeric_infos(infos: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``infos`` with each agent's ``action`` record in fixed keys and no ``None``: ``{"raw": the
    id as text, "parsed": the move's name, "valid": bool, "error": str}`` (``""`` where there is
    nothing to say, ``valid`` until an action is refused), since libraries that store infos in
    arrays count a ``None`` or a missing key as a NaN (Tianshou's buffer)."""
    out = {}
    for agent, info in infos.items():
        record = {"raw": "", "parsed": "", "valid": True, "error": "", **info.get("action", {})}
        out[agent] = {**info, "action": {k: "" if v is None else v for k, v in record.items()}}
    return out


def _refused(action: Any, legal: dict[int, str]) -> str:
    return f"action {action} is not legal now (legal: {sorted(legal)}; see the action_mask)"


class _Numeric:
    """What both wrappers hold: the encoder, the numeric spaces, the metadata and ``state()``."""

    encoder: Encoder
    possible_agents: list[str]
    observation_spaces: dict[str, spaces.Dict]
    action_spaces: dict[str, spaces.Discrete]

    def _numeric(self, env: AECEnv | ParallelEnv, pad_actions: bool, encoder_args: dict[str, Any]) -> None:
        self.encoder = encoder_for(env, **encoder_args)
        self.metadata = {**env.metadata, "name": f"{env.metadata.get('name', type(env).__name__)}_numeric"}
        self.render_mode = getattr(env, "render_mode", None)
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces, self.action_spaces = numeric_spaces(self.encoder, self.possible_agents, pad_actions)
        self.state_space = self.encoder.state_space

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def state(self) -> NDArray[np.float32]:
        return self.encoder.state()


class NumericAEC(_Numeric, BaseWrapper):
    """An AEC env of the family with PettingZoo ``classic``'s numeric interface (see the module docstring).

    ## Observation
    ``{"observation": Box, "action_mask": Box(0, 1, (n,), int8)}``: the agent's information as
    numbers (its encoder's), and which of its ``Discrete(n)`` actions are legal now.

    ## Action Space
    ``Discrete(n)`` per agent (the same ids as the game's: OpenSpiel's, PettingZoo's, or the
    referential vocabulary's); ``pad_actions=True`` gives every agent the largest (the
    referential game's speaker and listener then share one space). ``None`` steps an agent that
    is done. An action the mask forbids changes nothing and keeps the turn (the wrapped env's
    invalid move).

    ## State
    ``state()`` (``state_space``): the global state for centralised critics.

    ## Rewards, terminations, seeding
    The wrapped env's, unchanged: ``reset(seed=s)`` deals the same game as the VLM env's
    ``reset(seed=s)``; ``max_cycles`` is the wrapped env's.
    """

    def __init__(self, env: AECEnv, *, pad_actions: bool = False, **encoder_args: Any) -> None:
        super().__init__(env)
        self._numeric(env, pad_actions, encoder_args)

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        return numeric_observation(self.encoder, agent, int(self.action_spaces[agent].n))


    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        if action is None or self.env.terminations[agent] or self.env.truncations[agent]:
            self.env.step(action)
            return
        legal = self.encoder.legal(agent)
        move = legal.get(int(action))
        # "" names no move in any of the family's parsers: the wrapped env's invalid move
        self.env.step("" if move is None else move)
        record = self.env.infos[agent]["action"] = {**self.env.infos[agent].get("action", {}), "raw": str(int(action))}
        if move is None:
            record["error"] = _refused(action, legal)

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """The wrapped env's infos in fixed keys without ``None`` (see :func:`numeric_infos`)."""
        return numeric_infos(self.env.infos)

    def __str__(self) -> str:
        return f"NumericAEC<{self.env!s}>"


class NumericParallel(_Numeric, BaseParallelWrapper):
    """A Parallel API env of the family (a simultaneous-move OpenSpiel game: every live agent acts
    at every step) with the numeric interface of :class:`NumericAEC`: the same observations,
    ``Discrete`` actions, masks, infos and ``state()``, its encoder read from the Parallel env
    (the OpenSpiel protocol of the module docstring: ``state``, ``possible_agents``,
    ``legal_moves``). An agent's action that its mask forbids is that agent's invalid move.
    """

    def __init__(self, env: ParallelEnv, *, pad_actions: bool = False, **encoder_args: Any) -> None:
        super().__init__(env)
        self._numeric(env, pad_actions, encoder_args)

    def _observations(self, agents: Any) -> dict[str, dict[str, NDArray[Any]]]:
        return {a: numeric_observation(self.encoder, a, int(self.action_spaces[a].n)) for a in agents}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._observations(observations), numeric_infos(infos)

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        moves, refused = {}, {}
        for agent, action in actions.items():
            legal = self.encoder.legal(agent)
            move = None if action is None else legal.get(int(action))
            moves[agent] = "" if move is None else move  # "": the agent's invalid move
            if move is None and legal:
                refused[agent] = _refused(action, legal)
        observations, rewards, terminations, truncations, infos = self.env.step(moves)
        infos = numeric_infos(infos)
        for agent, action in actions.items():
            if agent in infos and action is not None:
                infos[agent]["action"]["raw"] = str(int(action))
                if agent in refused:
                    infos[agent]["action"].update(valid=False, error=refused[agent])
        return self._observations(observations), rewards, terminations, truncations, infos


    def __str__(self) -> str:
        return f"NumericParallel<{self.env!s}>"


def numeric_parallel_env(env: ParallelEnv, **wrapper_args: Any) -> NumericParallel:
    """The numeric version of a Parallel API env of the family (see :class:`NumericParallel`)."""
    return NumericParallel(env, **wrapper_args)


def numeric_env(game: str | AECEnv, **kwargs: Any) -> NumericAEC:
    """The numeric version of ``game``: an AEC env of the family, or its name in :data:`GAMES`
    (then ``kwargs`` go to its factory, text observations by default since none is drawn; the
    wrapper's ``pad_actions`` and the encoder's ``tensor`` are taken out first)."""
    wrapper_args = {k: kwargs.pop(k) for k in ("tensor", "pad_actions") if k in kwargs}
    if isinstance(game, str):
        if game not in GAMES:
            raise ValueError(f"game={game!r} is unknown; choose one of {sorted(GAMES)}")
        module, factory = GAMES[game].split(":")
        game = getattr(importlib.import_module(module), factory)(**{"obs_mode": "text", "image_size": 64, **kwargs})
    elif kwargs:
        raise TypeError(f"numeric_env(env) takes no env arguments, got {sorted(kwargs)}")
    return NumericAEC(game, **wrapper_args)
