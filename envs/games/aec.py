"""Tic-Tac-Toe and Connect Four as PettingZoo AEC envs where each agent sees and writes like a VLM.

``tictactoe_env()`` and ``connect_four_env()`` return a :class:`BoardGameAEC`: PettingZoo's
``classic`` env plays the rules underneath, and each agent observes our four keys (its own view:
the board image from PettingZoo's renderer, the same board as text, its mission and its legal
moves in ``actions``) and acts with free text parsed by :class:`rl4vlm_gym.parsing.ActionParser`.

:class:`VLMAgentsAEC`, the base of every AEC env of the family (these, :class:`~.spiel.SpielAEC`'s
card and dice games, :class:`~.referential.ReferentialAEC`), holds that contract once; with it
:func:`agent_spaces`, :func:`check_arguments` and :func:`cached_frame`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from rl4vlm_gym.extras import require

require("games", "The two-player games")  # before importing it: an error naming the extra

from pettingzoo import AECEnv

from rl4vlm_gym.envs.games.boards import CONNECT_FOUR_SIZES, GAMES, Board, BoardGame, connect_four_game
from rl4vlm_gym.envs.games.opponents import exact_player
from rl4vlm_gym.parsing import ActionParser
from rl4vlm_gym.registry import OBS_MODES
from rl4vlm_gym.spaces import Unicode, UnicodeTuple

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rl4vlm_gym.rendering import HumanWindow

__all__ = ["REWARDS", "BoardGameAEC", "VLMAgentsAEC", "VLMObservations", "check_arguments", "connect_four_env", "describe", "mission", "tictactoe_env"]

REWARDS: dict[str, dict[str, float]] = {
    # PettingZoo's: +1 to the winner, -1 to the loser, 0 for a draw; an invalid move costs nothing
    # (PettingZoo's TerminateIllegalWrapper would end the game at -1; we report and let it retry).
    "native": {"move": 0.0, "win": 1.0, "loss": -1.0, "draw": 0.0, "invalid": 0.0},
    "sparse": {"move": 0.0, "win": 1.0, "loss": 0.0, "draw": 0.0, "invalid": 0.0},
    # a small price on output that is no legal move, for training from scratch
    "penalty": {"move": 0.0, "win": 1.0, "loss": -1.0, "draw": 0.0, "invalid": -0.1},
}


def legend(game: BoardGame) -> str:
    """How to read ``game``'s text grid (:attr:`BoardGame.legend`: its own size's columns)."""
    return game.legend


def mission(game: BoardGame, piece: int | None = None) -> str:
    """The goal; with ``piece``, the agent's colour too (the single-agent views leave it out: the
    board tells it, since the first player moves whenever both have as many pieces)."""
    return game.mission(piece)


def describe(game: BoardGame, board: Board, piece: int | None, turn: bool) -> str:
    """The board in words: the same information the image shows (:meth:`BoardGame.describe`)."""
    return game.describe(board, piece, turn)


FRAME_CACHE_BYTES = 16 * 2**20  # per env, as VLMEnv's frame cache


def cached_frame(cache: dict[Any, NDArray[np.uint8]], key: Any, draw: Callable[[], NDArray[np.uint8]]) -> NDArray[np.uint8]:
    """A copy of the frame ``draw`` makes for ``key`` (what one agent may see), drawn once: ``cache``
    is kept in least-recently-used order within :data:`FRAME_CACHE_BYTES`. Card and dice games
    show few distinct pictures, and drawing one costs more than the rest of a step."""
    frame = cache.pop(key, None)  # re-inserted below: the dict is kept in LRU order
    if frame is None:
        frame = draw()
        while cache and (len(cache) + 1) * frame.nbytes > FRAME_CACHE_BYTES:
            del cache[next(iter(cache))]
    cache[key] = frame
    return frame.copy()


def agent_spaces(agents: list[str], side: int, max_actions: int = 16, max_length: int = 16) -> tuple[dict[str, spaces.Space], dict[str, spaces.Space]]:
    """Each agent's observation space (our four keys, a ``side`` x ``side`` image) and action space
    (free text), built once: PettingZoo's api_test wants the same objects on every call."""
    observation: dict[str, spaces.Space] = {
        a: spaces.Dict(
            {
                "image": spaces.Box(0, 255, (side, side, 3), np.uint8),
                "text": Unicode(16384),
                "mission": Unicode(16384),
                "actions": UnicodeTuple(max_actions, max_length),
            }
        )
        for a in agents
    }
    return observation, {a: Unicode(65536) for a in agents}


def check_arguments(
    metadata: dict[str, Any],
    *,
    obs_mode: str,
    image_size: int,
    min_side: int,
    render_mode: str | None,
    max_cycles: int,
    reward_variant: str | None = None,
    rewards: Collection[str] = (),
) -> None:
    """The ``ValueError`` naming the first bad argument shared by the AEC envs of this family."""
    if obs_mode not in OBS_MODES:
        raise ValueError(f"obs_mode={obs_mode!r} is unknown; choose one of {OBS_MODES}")
    if reward_variant is not None and reward_variant not in rewards:
        raise ValueError(f"reward_variant={reward_variant!r} is unknown; choose one of {tuple(rewards)}")
    if isinstance(image_size, bool) or not isinstance(image_size, int) or not min_side <= image_size <= 4096:
        raise ValueError(f"image_size={image_size!r} is not valid: give an int in {min_side}..4096")
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise ValueError(f"render_mode={render_mode!r} is unknown; choose one of {metadata['render_modes']} or None")
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1:
        raise ValueError(f"max_cycles={max_cycles!r} is not valid: give a positive int")


class VLMObservations:
    """An agent's observation in our four keys and its action space's vocabulary (its legal moves),
    from the env's hooks: shared by the family's AEC envs (:class:`VLMAgentsAEC`) and its Parallel
    env (``openspiel_adapter.OpenSpielParallel``)."""

    feedback: dict[str, str]
    obs_mode: str
    image_size: int
    possible_agents: list[str]
    action_spaces: dict[str, spaces.Space]

    if TYPE_CHECKING:  # the env's hooks

        def legal_moves(self, agent: str) -> tuple[str, ...]: ...
        def _text(self, agent: str) -> str: ...
        def _image(self, agent: str) -> NDArray[np.uint8]: ...
        def _mission(self, agent: str) -> str: ...

    def _update_vocabulary(self) -> None:
        for agent in self.possible_agents:
            self.action_spaces[agent].vocabulary = self.legal_moves(agent)  # type: ignore[attr-defined]

    def observe(self, agent: str) -> dict[str, Any]:
        text = [self.feedback[agent]] if self.feedback.get(agent) else []
        if self.obs_mode != "image":
            text.append(self._text(agent))
        image = np.zeros((self.image_size, self.image_size, 3), np.uint8) if self.obs_mode == "text" else self._image(agent)
        return {"image": image, "text": "\n".join(text), "mission": self._mission(agent), "actions": self.legal_moves(agent)}


class VLMAgentsAEC(VLMObservations, AECEnv):
    """The AEC envs of this family share their API here, so that each writes only its rules.

    Each agent observes ``{"image", "text", "mission", "actions"}``: its own view of the state
    (``_image``, ``_text``: only what it may know), after its last feedback in ``text``; its
    ``_mission``; and its ``legal_moves`` (none unless it is its turn and the game is on). It acts
    with free text that ``parser`` reads against those moves: ``_play`` plays a legal one; any
    other changes nothing, keeps the turn, pays ``_invalid_reward()`` and puts the parser's reason
    in the agent's ``infos[agent]["action"]`` and text. ``max_cycles`` cycles, invalid steps
    included, truncate every agent (see :meth:`_count_cycle`). The spaces are built once by :func:`agent_spaces`
    (PettingZoo's api_test wants the same objects on every call), and each action space's
    ``vocabulary`` is kept to the agent's legal moves, so that ``sample()`` draws one. ``render``
    shows the view of the agent to move (``ansi``: its text; ``human``: a window named ``title``).
    """

    MIN_IMAGE_SIDE: ClassVar[int] = 64
    REWARDS: ClassVar[Mapping[str, Mapping[str, float]]] = {}
    """``{variant: {event: reward}}`` of an env with reward variants (``reward_variant`` picks
    one); empty where the rewards are the game's returns."""

    metadata: dict[str, Any]
    _window: HumanWindow | None = None

    def __init__(
        self,
        agents: Sequence[str],
        *,
        obs_mode: str,
        image_size: int,
        render_mode: str | None,
        max_cycles: int,
        render_fps: int,
        action_format: str = "auto",
        action_match: str = "lenient",
        reward_variant: str | None = None,
        synonyms: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        max_actions: int = 16,
        max_length: int = 16,
    ) -> None:
        """The set-up every AEC env of the family shares. A subclass checks its own arguments (its
        game, level...), names its ``agents`` and calls this, then starts a game.

        It refuses the first bad common argument with a ``ValueError`` (:func:`check_arguments`;
        images at least ``MIN_IMAGE_SIDE`` pixels, ``reward_variant`` one of ``REWARDS``), keeps
        the arguments, sets ``render_fps`` in ``metadata``, builds the ``parser`` (with the game's
        ``synonyms``), each agent's spaces (:func:`agent_spaces`: at most ``max_actions`` legal
        moves of ``max_length`` characters) and an unseeded ``np_random`` (``reset(seed=...)``
        seeds it)."""
        super().__init__()
        check_arguments(
            self.metadata, obs_mode=obs_mode, image_size=image_size, min_side=self.MIN_IMAGE_SIDE, render_mode=render_mode,
            max_cycles=max_cycles, reward_variant=reward_variant, rewards=self.REWARDS,
        )
        self.metadata = {**self.metadata, "render_fps": render_fps}
        self.obs_mode, self.image_size, self.reward_variant = obs_mode, image_size, reward_variant
        self.render_mode, self.max_cycles = render_mode, max_cycles
        self.parser = ActionParser(format=action_format, match=action_match, synonyms=dict(synonyms))  # type: ignore[arg-type]
        self.possible_agents = list(agents)
        self.observation_spaces, self.action_spaces = agent_spaces(self.possible_agents, image_size, max_actions, max_length)
        self.np_random, _ = seeding.np_random(None)

    # Set these in every subclass -------------------------------------------------------------------

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        """The names of ``agent``'s legal moves (none unless it is its turn and the game is on)."""
        raise NotImplementedError

    def _play(self, agent: str, move: str) -> None:
        """Play ``agent``'s legal ``move``: the rules' state, turn, feedback, rewards and terminations."""
        raise NotImplementedError

    def _text(self, agent: str) -> str:
        """What ``agent`` may know, in words."""
        raise NotImplementedError

    def _image(self, agent: str) -> NDArray[np.uint8]:
        """What ``agent`` may know, drawn at ``image_size``."""
        raise NotImplementedError

    def _mission(self, agent: str) -> str:
        raise NotImplementedError

    def _oracle_move(self, agent: str) -> str:
        """The oracle's move for ``agent``, whose turn it is."""
        raise NotImplementedError

    def _invalid_reward(self) -> float:
        return 0.0

    @property
    def title(self) -> str:
        """The game's name (the ``human`` window's title)."""
        raise NotImplementedError

    # AEC API ---------------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]  # the same object every call (PettingZoo's api_test)

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _new_game(self) -> None:
        """Every agent in, no reward, feedback or step yet (the subclass then sets up the rules
        and ``agent_selection``)."""
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.feedback = dict.fromkeys(self.agents, "")
        self.num_steps = 0  # agent steps, invalid ones included
        self.num_cycles = 0  # complete cycles (see _count_cycle)
        self._cycle: set[str] = set()  # the agents that have stepped in the cycle under way

    def _may_move(self, agent: str) -> bool:
        return agent == self.agent_selection and not self.terminations.get(agent, True) and not self.truncations.get(agent, True)

    def _count_cycle(self, agent: str) -> None:
        """Count ``agent``'s step towards ``max_cycles``, with PettingZoo's meaning of a cycle: one
        step of every agent (PettingZoo's ``max_cycles_test``: with ``max_cycles=k`` each agent
        steps ``k`` times before the truncation). In a turn-based game an agent may have to move
        twice before another has moved (an invalid move keeps the turn; a betting round may open
        with the player who closed the last), so a cycle also ends when the agent to move next has
        already stepped in it. Before issue 34 ``max_cycles`` counted agent steps; in a game whose
        turns alternate, ``max_cycles=k`` now allows ``k`` steps of each agent, ``len(agents) * k``
        in all (the factories' defaults were halved to keep their step budgets)."""
        self._cycle.add(agent)
        if self._cycle >= set(self.agents) or self.agent_selection in self._cycle:
            self.num_cycles += 1
            self._cycle = set()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        result = self.parser.parse(action if isinstance(action, str) else str(action), self.legal_moves(agent))
        self.infos[agent] = {"action": result.as_info()}
        self.num_steps += 1
        if result.parsed is None:
            self.rewards[agent] = self._invalid_reward()
            self.feedback[agent] = f"Invalid action: {result.error}. Nothing happened."
        else:
            self._play(agent, result.parsed)
        self._count_cycle(agent)
        if self.num_cycles >= self.max_cycles and not any(self.terminations.values()):
            self.truncations = dict.fromkeys(self.agents, True)
        self._update_vocabulary()
        self._accumulate_rewards()
        self._render_human()

    def oracle_action(self, agent: str | None = None) -> str:
        """The oracle's move for ``agent`` (default: the one to move; see the class docstring)."""
        agent = agent or self.agent_selection
        if not self.legal_moves(agent):
            raise ValueError(f"{agent} has no move now (it is {self.agent_selection}'s turn or the game is over)")
        return self._oracle_move(agent)

    # Rendering -------------------------------------------------------------------------------------

    def render(self) -> NDArray[np.uint8] | str | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            return self._text(self.agent_selection) + "\n"
        if self.render_mode == "human":
            self._render_human()
            return None
        return self._image(self.agent_selection)

    def _render_human(self) -> None:
        if self.render_mode != "human":
            return
        if self._window is None:
            from rl4vlm_gym.rendering import HumanWindow

            self._window = HumanWindow(self.title, self.metadata["render_fps"])
        self._window.show(self._image(self.agent_selection))

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None


class BoardGameAEC(VLMAgentsAEC):
    """A two-player board game with VLM observations behind PettingZoo's AEC API.

    ## Description
    PettingZoo's ``classic`` env of the game (``tictactoe_v3`` or ``connect_four_v3``) plays
    every legal move; its pygame renderer draws the board. The agents keep PettingZoo's names
    (``player_1``/``player_2`` in Tic-Tac-Toe, ``player_0``/``player_1`` in Connect Four); the first moves first.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}`` as in every RL4VLM env: the
    board (the same for both agents: no hidden information), the agent's last feedback and the
    board in words, its mission (its colour and goal) and its legal moves (empty when it is not
    its turn).

    ## Action Space
    Free text (``Unicode``), parsed against the legal moves; ``action_space(agent).vocabulary``
    holds them, so ``sample()`` draws a legal move. ``None`` steps an agent that is done.

    ## Rewards
    ``reward_variant`` (see ``REWARDS``): ``native`` is PettingZoo's (+1 win, -1 loss, 0 draw).
    An invalid move changes nothing, keeps the turn, pays that agent the variant's ``invalid``
    reward and puts the parser's reason in its ``infos[agent]["action"]`` and its text.

    ## Levels
    Connect Four's board sizes, the views' ladder (``boards.CONNECT_FOUR_SIZES``): ``level`` 0 is
    4 x 5, 1 (the default) PettingZoo's 6 x 7, 2 is 7 x 9; off 6 x 7 OpenSpiel's
    ``connect_four(rows, columns)`` plays the moves and PettingZoo's art is tiled to the size.
    Tic-Tac-Toe has one level (3 x 3).

    ## Arguments
    ``game``: ``"tictactoe"`` or ``"connect_four"``; ``level`` (above); ``obs_mode``, ``image_size``,
    ``reward_variant``, ``action_format``, ``action_match`` as in ``VLMEnv``; ``render_mode``
    (``rgb_array``, ``ansi``, ``human``); ``max_cycles``: cycles (one step of every agent,
    invalid ones included; see :meth:`VLMAgentsAEC._count_cycle`) after which every agent is
    truncated; ``render_fps``: the pace of the ``human`` window.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "ansi", "human"], "name": "rl4vlm_board_game_v0", "is_parallelizable": False, "render_fps": 2}
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    REWARDS: ClassVar[Mapping[str, Mapping[str, float]]] = REWARDS
    reward_variant: str  # always one of REWARDS (the default "native")

    def __init__(
        self,
        game: str = "tictactoe",
        *,
        level: int | None = None,
        obs_mode: str = "image+text",
        image_size: int = 256,
        reward_variant: str = "native",
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 50,
        render_fps: int = 2,
    ) -> None:
        if game not in GAMES:
            raise ValueError(f"game={game!r} is unknown; choose one of {sorted(GAMES)}")
        self.level, self.game = self._board_game(game, level)
        self.rules = self.game.rules()  # PettingZoo's env (OpenSpiel's off 6 x 7): plays the moves
        super().__init__(
            self.rules.possible_agents,  # PettingZoo's names, first mover first
            obs_mode=obs_mode, image_size=image_size, render_mode=render_mode, max_cycles=max_cycles, render_fps=render_fps,
            action_format=action_format, action_match=action_match, reward_variant=reward_variant,
        )
        self.moves = self.game.moves  # the move names by PettingZoo's action id, named once
        self._painter: Any = None  # PettingZoo's env in rgb_array mode: draws the frames
        self._frames: dict[Board, NDArray[np.uint8]] = {}
        self._oracle = exact_player(self.game)
        self._reset_state()

    @staticmethod
    def _board_game(game: str, level: int | None) -> tuple[int, BoardGame]:
        """The level and board of ``game`` (Connect Four: its size on the ladder)."""
        sizes = CONNECT_FOUR_SIZES if game == "connect_four" else ((3, 3),)
        default = sizes.index((6, 7)) if game == "connect_four" else 0
        level = default if level is None else level
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(sizes):
            raise ValueError(f"level={level!r} is not valid for {game}: give an int in 0..{len(sizes) - 1}")
        if game == "connect_four" and sizes[level] != (6, 7):
            return level, connect_four_game(*sizes[level])
        return level, GAMES[game]

    def _reset_state(self) -> None:
        self._new_game()
        self.rules.reset()
        self.agent_selection = self.agents[0]
        self._update_vocabulary()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a game on the empty board; the game has no randomness of its own (``seed`` seeds
        ``np_random`` for callers that draw from it). ``options`` are accepted and unused, as
        PettingZoo's API asks of every env."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self._reset_state()
        self._render_human()

    @property
    def title(self) -> str:
        return self.game.title

    @property
    def board(self) -> Board:
        return self.game.read(self.rules)

    def piece(self, agent: str) -> int:
        return self.possible_agents.index(agent) + 1

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        if not self._may_move(agent):
            return ()
        return tuple(self.moves[m] for m in self.game.legal(self.board))

    def _text(self, agent: str) -> str:
        turn = agent == self.agent_selection and not self.terminations.get(agent, True)
        return self.game.describe(self.board, self.piece(agent), turn)

    def _image(self, agent: str) -> NDArray[np.uint8]:
        board = self.board  # the same for both agents: no hidden information
        return cached_frame(self._frames, board, lambda: self._draw(board))

    def _draw(self, board: Board) -> NDArray[np.uint8]:
        if self._painter is None:
            self._painter = self.game.painter(self.image_size)
        return self.game.draw(self._painter, board, (self.image_size, self.image_size))

    def _mission(self, agent: str) -> str:
        return self.game.mission(self.piece(agent))

    def _invalid_reward(self) -> float:
        return REWARDS[self.reward_variant]["invalid"]

    def _play(self, agent: str, move: str) -> None:
        other = self.agents[1 - self.agents.index(agent)]
        self.rules.step(self.moves.index(move))  # PettingZoo's env: places the piece, judges the game, passes the turn
        self.agent_selection = other
        self.feedback[agent] = f"You played {move}."
        self.feedback[other] = f"Your opponent played {move}."
        if self.rules.terminations[agent]:
            table, outcome = REWARDS[self.reward_variant], {1.0: "win", -1.0: "loss", 0.0: "draw"}
            for a in self.agents:
                self.rewards[a] = table[outcome[float(self.rules.rewards[a])]]
            self.terminations = dict.fromkeys(self.agents, True)

    def _oracle_move(self, agent: str) -> str:
        """The exact player's move: perfect play in Tic-Tac-Toe, alpha-beta search in Connect Four."""
        return self.moves[self._oracle.best(self.game, self.board)]

    def close(self) -> None:
        super().close()
        self._painter = None

    def __str__(self) -> str:
        return f"BoardGameAEC({self.game.name}, level={self.level})"


def tictactoe_env(**kwargs: Any) -> BoardGameAEC:
    """Tic-Tac-Toe (PettingZoo's ``tictactoe_v3`` rules and art) with VLM observations."""
    return BoardGameAEC("tictactoe", **{"max_cycles": 25, **kwargs})  # 50 agent steps


def connect_four_env(**kwargs: Any) -> BoardGameAEC:
    """Connect Four (PettingZoo's ``connect_four_v3`` rules and art) with VLM observations;
    ``level`` 0 / 1 / 2: a 4 x 5 / 6 x 7 (default) / 7 x 9 board."""
    return BoardGameAEC("connect_four", **{"max_cycles": 100, **kwargs})  # 200 agent steps
