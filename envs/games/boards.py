"""Tic-Tac-Toe and Connect Four: PettingZoo's ``classic`` envs for the rules and the pictures, plus
an immutable model of each board for the searches.

PettingZoo's envs play every move of an episode (their ``step`` decides legality, wins, draws and
rewards) and draw every frame with their own pygame renderers and art. The searches (minimax,
alpha-beta) need boards they can copy and undo millions of times, which PettingZoo's in-place
envs do not offer, so :class:`BoardGame` keeps a small tuple model of the same board in
PettingZoo's own layout; ``tests/envs/games`` checks that it agrees with PettingZoo move by move.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from rl4vlm_gym.rendering import import_pygame_quietly, offscreen_sdl

if TYPE_CHECKING:
    from numpy.typing import NDArray

Board = tuple[int, ...]
"""A board in PettingZoo's layout: 0 empty, 1 the first player's piece, 2 the second's."""



@dataclass(frozen=True)
class BoardGame:
    """One two-player board game: its names, its moves and a pure model of its rules."""

    name: str
    title: str
    rows: int
    cols: int
    pieces: tuple[str, str]  # how each player's pieces are named in text, e.g. ("X", "O")
    marks: tuple[str, str]  # the one-character marks of the text grid

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def moves(self) -> tuple[str, ...]:
        """The move names, indexed by PettingZoo's action ids."""
        raise NotImplementedError

    def empty(self) -> Board:
        return (0,) * self.size

    def legal(self, board: Board) -> list[int]:
        raise NotImplementedError

    def play(self, board: Board, move: int, piece: int) -> Board:
        raise NotImplementedError

    def winner(self, board: Board) -> int:
        """1 or 2 for a player with a line, else 0."""
        raise NotImplementedError

    def over(self, board: Board) -> bool:
        return self.winner(board) != 0 or not self.legal(board)

    def to_move(self, board: Board) -> int:
        """The piece (1 or 2) whose turn it is: the first player moves on even counts."""
        return 1 if sum(1 for v in board if v) % 2 == 0 else 2

    def cell(self, board: Board, row: int, col: int) -> int:
        raise NotImplementedError

    def grid(self, board: Board) -> list[str]:
        """The board as text rows, top row first."""
        marks = (".",) + self.marks
        return [" ".join(marks[self.cell(board, r, c)] for c in range(self.cols)) for r in range(self.rows)]

    # PettingZoo glue -------------------------------------------------------------------------------

    def pettingzoo_env(self, render_mode: str | None = None, side: int = 256) -> Any:
        """PettingZoo's own raw env of this game (no wrappers: illegal moves never reach it)."""
        raise NotImplementedError

    def load(self, env: Any, board: Board) -> None:
        """Put ``board`` into PettingZoo's env ``env`` (to draw it)."""
        raise NotImplementedError

    def read(self, env: Any) -> Board:
        raise NotImplementedError

    def restore(self, env: Any, board: Board) -> None:
        """Put a game in progress into a fresh PettingZoo env: the board and whose turn it is
        (PettingZoo's ``AgentSelector`` passes the turn in ``step``)."""
        env.reset()
        self.load(env, board)
        if self.to_move(board) == 2:
            env.agent_selection = env._agent_selector.next()

    def draw(self, painter: Any, board: Board, size: tuple[int, int]) -> NDArray[np.uint8]:
        """PettingZoo's ``rgb_array`` frame of ``board``, resized to ``size`` (height, width)."""
        self.load(painter, board)
        with offscreen_sdl():  # its pygame renderer, with or without a screen
            frame = painter.render()
        height, width = size
        if frame.shape[:2] != (height, width):
            frame = np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.BILINEAR))
        return np.ascontiguousarray(frame, dtype=np.uint8)


def _import(module: str) -> Any:
    # PettingZoo deprecates importing classic envs by module for its registry; the module is
    # still where the raw envs (unwrapped, no illegal-move termination) live. Their modules import
    # pygame: quietly, or its pkg_resources warning reaches check_env in a fresh process.
    import_pygame_quietly()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import importlib

        return importlib.import_module(module)


@dataclass(frozen=True)
class TicTacToeGame(BoardGame):
    """PettingZoo's ``tictactoe_v3``: squares are numbered down the columns (0 1 2 is column a)."""

    name: str = "tictactoe"
    title: str = "Tic-Tac-Toe"
    rows: int = 3
    cols: int = 3
    pieces: tuple[str, str] = ("X (crosses)", "O (circles)")
    marks: tuple[str, str] = ("X", "O")

    @property
    def moves(self) -> tuple[str, ...]:
        return tuple(f"{'abc'[i // 3]}{i % 3 + 1}" for i in range(9))

    def legal(self, board: Board) -> list[int]:
        return [] if self.winner(board) else [i for i, v in enumerate(board) if v == 0]

    def play(self, board: Board, move: int, piece: int) -> Board:
        return board[:move] + (piece,) + board[move + 1 :]

    def winner(self, board: Board) -> int:
        for a, b, c in _TTT_LINES:
            if board[a] and board[a] == board[b] == board[c]:
                return board[a]
        return 0

    def cell(self, board: Board, row: int, col: int) -> int:
        return board[col * 3 + row]

    def pettingzoo_env(self, render_mode: str | None = None, side: int = 256) -> Any:
        env = _import("pettingzoo.classic.tictactoe.tictactoe").raw_env(render_mode=render_mode, screen_height=side)
        env.reset()
        return env

    def load(self, env: Any, board: Board) -> None:
        env.board.squares = list(board)

    def read(self, env: Any) -> Board:
        return tuple(env.board.squares)


# PettingZoo's Board.winning_combinations
_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _c4_lines() -> tuple[tuple[int, int, int, int], ...]:
    lines = []
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < 6 and 0 <= cc < 7 for rr, cc in cells):
                    lines.append(tuple(rr * 7 + cc for rr, cc in cells))
    return tuple(lines)


C4_LINES = _c4_lines()  # the 69 lines of four
C4_LINES_THROUGH = tuple(tuple(line for line in C4_LINES if i in line) for i in range(42))


@dataclass(frozen=True)
class ConnectFourGame(BoardGame):
    """PettingZoo's ``connect_four_v3``: 6 rows of 7, row 0 on top, index ``row * 7 + column``."""

    name: str = "connect_four"
    title: str = "Connect Four"
    rows: int = 6
    cols: int = 7
    pieces: tuple[str, str] = ("red", "black")
    marks: tuple[str, str] = ("R", "B")

    @property
    def moves(self) -> tuple[str, ...]:
        return tuple(str(c + 1) for c in range(7))

    def legal(self, board: Board) -> list[int]:
        return [] if self.winner(board) else [c for c in range(7) if board[c] == 0]

    def drop_row(self, board: Board, col: int) -> int:
        return max(r for r in range(6) if board[r * 7 + col] == 0)

    def play(self, board: Board, move: int, piece: int) -> Board:
        i = self.drop_row(board, move) * 7 + move
        return board[:i] + (piece,) + board[i + 1 :]

    def winner(self, board: Board) -> int:
        for a, b, c, d in C4_LINES:
            if board[a] and board[a] == board[b] == board[c] == board[d]:
                return board[a]
        return 0

    def cell(self, board: Board, row: int, col: int) -> int:
        return board[row * 7 + col]

    def pettingzoo_env(self, render_mode: str | None = None, side: int = 256) -> Any:
        # PettingZoo draws 99 x 86 units scaled by an int; the smallest scale at least as wide as
        # the image keeps the frame sharp and cheap.
        env = _import("pettingzoo.classic.connect_four.connect_four").raw_env(render_mode=render_mode, screen_scaling=max(1, -(-side // 99)))
        env.reset()
        return env

    def load(self, env: Any, board: Board) -> None:
        env.board = list(board)

    def read(self, env: Any) -> Board:
        return tuple(env.board)


GAMES: dict[str, BoardGame] = {"tictactoe": TicTacToeGame(), "connect_four": ConnectFourGame()}
