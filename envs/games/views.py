"""Single-agent views of the board games: one seat against a built-in opponent, behind ``VLMEnv``.

``gym.make("rl4vlm/TicTacToe-vs-Perfect-v0")`` is an ordinary RL4VLM env, so every agent, suite,
baseline and the conformance kit run on it unchanged. PettingZoo's ``classic`` env plays the
moves and draws the board, as in :mod:`rl4vlm_gym.envs.games.aec`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.envs.games.aec import REWARDS, describe, mission
from rl4vlm_gym.envs.games.boards import GAMES, Board, BoardGame
from rl4vlm_gym.envs.games.opponents import (
    HeuristicPlayer,
    PerfectPlayer,
    Player,
    RandomPlayer,
    SearchPlayer,
    preference,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass(frozen=True)
class Opponent:
    """A level: the built-in opponent."""

    player: Player

    def describe(self) -> str:
        if isinstance(self.player, SearchPlayer):
            return f"alpha-beta search {self.player.depth} plies deep; the seed draws your seat"
        return {"random": "uniformly random moves", "heuristic": "wins, blocks, else the most central move", "perfect": "perfect play (minimax)"}[
            self.player.name
        ] + "; the seed draws your seat"


@functools.cache
def ttt_expectimax(board: Board, piece: int, opponent: Player) -> float:
    """The expected native return (+1 win, -1 loss, 0 draw) of ``piece`` playing best from
    ``board`` (its turn) against ``opponent``'s known move distribution. Tic-Tac-Toe only."""
    return max(_ttt_move_value(board, piece, opponent, m) for m in GAMES["tictactoe"].legal(board))


def _ttt_move_value(board: Board, piece: int, opponent: Player, move: int) -> float:
    game = GAMES["tictactoe"]
    after = game.play(board, move, piece)
    if game.winner(after):
        return 1.0
    if not game.legal(after):
        return 0.0
    total = 0.0
    for reply, p in opponent.distribution(game, after).items():
        then = game.play(after, reply, 3 - piece)
        total += p * (-1.0 if game.winner(then) else 0.0 if not game.legal(then) else ttt_expectimax(then, piece, opponent))
    return total


class BoardGameView(VLMEnv):
    """Base of the single-agent board game views (see the subclasses' docstrings)."""

    GAME: ClassVar[str]
    CHANCE: ClassVar[bool] = True  # the opponent's moves are drawn during the episode
    REWARDS: ClassVar = REWARDS
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 32

    @property
    def game(self) -> BoardGame:
        return GAMES[self.GAME]

    @property
    def opponent(self) -> Player:
        return self.LEVELS[self.level].player

    def _new_episode(self, config: Opponent) -> None:
        self.seat = int(self.np_random.integers(2)) + 1  # our piece: 1 moves first
        if getattr(self, "rules", None) is None:
            self.rules = self.game.pettingzoo_env()
        self.rules.reset()
        self.outcome = ""
        if self.seat == 2:
            self._opponent_moves()  # its opening move: the board shows it

    @property
    def board(self) -> Board:
        return self.game.read(self.rules)

    def _opponent_moves(self) -> str:
        move = self.opponent.choose(self.game, self.board, self.np_random)
        self.rules.step(move)
        return f"Your opponent played {self.game.moves[move]}."

    def _actions(self) -> tuple[str, ...]:
        return tuple(self.game.moves[m] for m in self.game.legal(self.board))

    def _judge(self) -> str:
        winner = self.game.winner(self.board)
        if winner:
            return "win" if winner == self.seat else "loss"
        return "" if self.game.legal(self.board) else "draw"

    def _apply(self, action: str) -> StepOutcome:
        self.rules.step(self.game.moves.index(action))  # PettingZoo's env: places, judges, passes the turn
        feedback = f"You played {action}."
        self.outcome = self._judge()
        if not self.outcome:
            feedback += " " + self._opponent_moves()
            self.outcome = self._judge()
        if self.outcome:
            end = {"win": "You won.", "loss": "You lost.", "draw": "The game is a draw."}[self.outcome]
            return StepOutcome(self.outcome, terminated=True, feedback=f"{feedback} {end}")
        return StepOutcome("move", feedback=feedback)

    def oracle_action(self) -> str:
        if not self.game.legal(self.board):
            return self.game.moves[0]  # the game is over: any move is refused
        return self.game.moves[self._oracle_move()]

    def _oracle_move(self) -> int:
        raise NotImplementedError

    def _describe(self) -> str:
        return describe(self.game, self.board, None, not self.outcome)

    def _mission(self) -> str:
        return mission(self.game)

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        side = max(height, width)
        painter = getattr(self, "_painter", None)
        if painter is None or getattr(self, "_painter_side", None) != side:
            painter = self._painter = self.game.pettingzoo_env(render_mode="rgb_array", side=side)
            self._painter_side = side
        return self.game.draw(painter, self.board, self.image_size)

    def _frame_key(self) -> Any:
        return (self.GAME, self.board, self.image_size)  # the picture shows the board only

    def _state_key(self) -> str:
        return f"{self.seat}:" + "".join(map(str, self.board))

    def _success(self) -> bool:
        return self.outcome == "win"

    def _progress(self) -> float:
        return float(self.outcome == "win")

    def _optimal_steps(self) -> int | None:
        return None  # the opponent's moves are drawn as the game goes (CHANCE): no fixed plan

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_painter"] = None  # pygame surfaces cannot cross processes; redrawn on demand
        # PettingZoo's envs pickle by building themselves anew (EzPickle), empty: keep the board
        state["rules"] = self.board if self._started else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        board = state.pop("rules")
        self.__dict__.update(state)
        self.rules = None
        if board is not None:
            self.rules = self.game.pettingzoo_env()
            self.game.restore(self.rules, board)


class TicTacToe(BoardGameView):
    """Tic-Tac-Toe against a built-in opponent, on PettingZoo's ``tictactoe_v3``.

    ## Description
    PettingZoo's ``tictactoe_v3`` plays the rules (its raw env: its own ``step`` places each mark,
    finds three in a row and passes the turn) and draws the board. The seed draws your seat
    (X moves first, O second) and every move of the opponent, from the env's own RNG. The oracle
    maximises the expected native return exactly: expectimax over every board against the
    opponent's known move distribution (memoised; Tic-Tac-Toe has 5478 boards). Winning is a game
    of chance against the random and heuristic players and impossible against the perfect one,
    so ``optimal_steps`` is -1 (``CHANCE``).

    ## Observation
    - ``image``: PettingZoo's own pygame frame of the board (its crosses and circles), resized to
      ``image_size``.
    - ``text``: the moves of the step (yours and the opponent's reply, and the result), then the
      board as a grid (``X``, ``O``, ``.``; columns a-c, rows 1-3 from the top) and your mark, or
      who won; in ``image`` mode only the moves.
    - ``mission``: the goal and how to tell your mark: X moves first, so you play X when the
      board has as many crosses as circles (the seat is not in the mission, which must not give
      the start state away).
    - ``actions``: the free squares, ``a1`` .. ``c3`` (column letter, row number).

    ## Actions
    One free square; an occupied square or anything else is invalid (nothing happens, the
    parser's reason is reported).

    ## Rewards
    ``native``: PettingZoo's, +1 for a win, -1 for a loss, 0 for a draw and every other move;
    ``sparse``: 1 for a win only; ``penalty``: ``native`` with -0.1 per invalid action.

    ## Levels
    One level: the id names the opponent (random, heuristic: win, block, else centre and
    corners; perfect: minimax, drawing among its best moves).

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    GAME: ClassVar[str] = "tictactoe"
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(RandomPlayer()),)

    def _oracle_move(self) -> int:
        board, opponent = self.board, self.opponent
        values = {m: _ttt_move_value(board, self.seat, opponent, m) for m in self.game.legal(board)}
        top = max(values.values())
        return next(m for m in preference(self.game) if values.get(m, -2.0) >= top - 1e-12)


class TicTacToeVsHeuristic(TicTacToe):
    __doc__ = TicTacToe.__doc__
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(HeuristicPlayer()),)


class TicTacToeVsPerfect(TicTacToe):
    __doc__ = TicTacToe.__doc__
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(PerfectPlayer()),)


class ConnectFour(BoardGameView):
    """Connect Four against a built-in opponent, on PettingZoo's ``connect_four_v3``.

    ## Description
    PettingZoo's ``connect_four_v3`` plays the rules (its raw env drops each piece, finds four in
    a line and passes the turn) and draws the board. The seed draws your seat (red moves first,
    black second) and every move of the opponent, from the env's own RNG. The oracle is an
    alpha-beta search 4 plies deep with a line-counting evaluation (exact search of the whole
    game is out of reach here): it takes every win within its horizon and never misses a block
    of an immediate threat, but it maximises the worst case, not the expected return. Winning is
    a game of chance, so ``optimal_steps`` is -1 (``CHANCE``).

    ## Observation
    - ``image``: PettingZoo's own pygame frame of the board (red and black chips), resized to
      ``image_size``.
    - ``text``: the moves of the step and the result, then the board as a grid (``R``, ``B``,
      ``.``; columns 1-7, row 1 at the top) and your colour, or who won; in ``image`` mode only
      the moves.
    - ``mission``: the goal and how to tell your colour (red moves first).
    - ``actions``: the columns that are not full, ``1`` .. ``7``.

    ## Actions
    One column that is not full; anything else is invalid (nothing happens, the reason is reported).

    ## Rewards
    ``native``: PettingZoo's, +1 for a win, -1 for a loss, 0 for a draw and every other move;
    ``sparse``: 1 for a win only; ``penalty``: ``native`` with -0.1 per invalid action.

    ## Levels
    One level: the id names the opponent: random; heuristic (wins, blocks, avoids giving a win
    away, else the most central column); search: alpha-beta 3 plies deep, drawing among its
    best moves (deeper searches open in the same column, so depths would not make levels that
    differ from the first observation on).

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    GAME: ClassVar[str] = "connect_four"
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(RandomPlayer()),)
    ORACLE: ClassVar[Player] = SearchPlayer(depth=4)

    def _oracle_move(self) -> int:
        return self.ORACLE.best(self.game, self.board)


class ConnectFourVsHeuristic(ConnectFour):
    __doc__ = ConnectFour.__doc__
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(HeuristicPlayer()),)


class ConnectFourVsSearch(ConnectFour):
    __doc__ = ConnectFour.__doc__
    LEVELS: ClassVar[tuple[Opponent, ...]] = (Opponent(SearchPlayer(depth=3)),)
