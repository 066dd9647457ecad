"""Tic-Tac-Toe and Connect Four: the rules and pictures of PettingZoo's ``classic`` envs (and of
OpenSpiel's ``connect_four`` at other board sizes), plus an immutable model of each board for the
searches and the text.

PettingZoo's envs play every move of an episode (their ``step`` decides legality, wins, draws and
rewards) and draw every frame with their own pygame renderers and art. PettingZoo's Connect Four
is 6 x 7 only; at the other sizes of the views' level ladder (:data:`CONNECT_FOUR_SIZES`) OpenSpiel's
``connect_four(rows, columns)`` plays the moves (:class:`SpielConnectFour`) and
:class:`ConnectFourArt` draws PettingZoo's own art (its board cell and chips) on the larger or
smaller board, pixel for pixel as PettingZoo draws 6 x 7. The searches (minimax, alpha-beta) need
boards they can copy and undo millions of times, which neither library's envs offer, so
:class:`BoardGame` keeps a small tuple model of the same board in PettingZoo's layout;
``tests/envs/games`` checks that it agrees with PettingZoo and OpenSpiel move by move.

``game.rules()`` is the env that plays a game's moves, ``game.painter(side)`` the one that draws it,
and ``game.mission``/``game.describe`` its text; :func:`connect_four_game` gives the game of a size.
"""

from __future__ import annotations

import functools
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

    # Text ------------------------------------------------------------------------------------------

    @property
    def column_labels(self) -> tuple[str, ...]:
        """The names of the columns in the text grid's header."""
        raise NotImplementedError

    @property
    def legend(self) -> str:
        """How to read the text grid."""
        raise NotImplementedError

    def goal(self) -> str:
        """The rule that wins and how to write a move (the end of the mission)."""
        raise NotImplementedError

    def mission(self, piece: int | None = None) -> str:
        """The goal; with ``piece``, the agent's colour too (the single-agent views leave it out: the
        board tells it, since the first player moves whenever both have as many pieces)."""
        first = self.pieces[0]
        if piece is None:
            seat = f"You play {first} if the board has as many of each piece when it is your turn, else the other"
        else:
            seat = f"You play {self.pieces[piece - 1]}"
        return f"Play {self.title} ({first} moves first). {seat}. {self.goal()}"

    def describe(self, board: Board, piece: int | None, turn: bool) -> str:
        """The board in words: the same information the image shows. With ``piece``, from that
        player's view; without, whose turn it is (the single-agent views: the board tells the seat
        while the game is on, and the end is said without it)."""
        header = "   " + " ".join(self.column_labels)
        rows = [f"{r + 1}  {line}" for r, line in enumerate(self.grid(board))]
        winner = self.winner(board)
        if winner:
            status = f"{self.pieces[winner - 1]} won." if piece is None else "You won." if winner == piece else "You lost."
        elif not self.legal(board):
            status = "The game is a draw."
        elif piece is None:
            status = f"It is your turn: you play {self.pieces[self.to_move(board) - 1]}."
        else:
            status = "It is your turn." if turn else "It is your opponent's turn."
        seat = "" if piece is None else f" You play {self.pieces[piece - 1]}, your opponent {self.pieces[2 - piece]}."
        return f"{self.title}.{seat} {status}\nThe board ({self.legend}):\n" + "\n".join([header, *rows])

    # The envs that play and draw -------------------------------------------------------------------

    def pettingzoo_env(self, render_mode: str | None = None, side: int = 256) -> Any:
        """PettingZoo's own raw env of this game (no wrappers: illegal moves never reach it)."""
        raise NotImplementedError

    def rules(self) -> Any:
        """A fresh env that plays the moves: ``reset()``, ``step(move)`` (it places the piece,
        judges the game and passes the turn), and the board it holds (:meth:`read`)."""
        return self.pettingzoo_env()

    def painter(self, side: int) -> Any:
        """An env that draws this game's boards (:meth:`draw`) about ``side`` pixels wide."""
        return self.pettingzoo_env(render_mode="rgb_array", side=side)

    def load(self, env: Any, board: Board) -> None:
        """Put ``board`` into the painter ``env`` (to draw it)."""
        raise NotImplementedError

    def read(self, env: Any) -> Board:
        raise NotImplementedError

    def draw(self, painter: Any, board: Board, size: tuple[int, int]) -> NDArray[np.uint8]:
        """The painter's ``rgb_array`` frame of ``board``, resized to ``size`` (height, width)."""
        self.load(painter, board)
        with offscreen_sdl():  # PettingZoo's pygame renderer, with or without a screen
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

    @property
    def column_labels(self) -> tuple[str, ...]:
        return ("a", "b", "c")

    @property
    def legend(self) -> str:
        return "columns a-c from the left, rows 1-3 from the top; X crosses, O circles, . empty"

    def goal(self) -> str:
        return "Get three of your marks in a row, column or diagonal. Write the square to mark, a1 to c3."

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


@functools.cache
def c4_lines(rows: int, cols: int) -> tuple[tuple[int, int, int, int], ...]:
    """Every line of four cells on a ``rows`` x ``cols`` board (69 on 6 x 7), as board indices."""
    lines: list[tuple[int, int, int, int]] = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    i0, i1, i2, i3 = (rr * cols + cc for rr, cc in cells)
                    lines.append((i0, i1, i2, i3))
    return tuple(lines)


CONNECT_FOUR_SIZES: tuple[tuple[int, int], ...] = ((4, 5), (6, 7), (7, 9))
"""The (rows, columns) of the Connect Four views' levels, smallest first; 6 x 7 (level 1, the
default) is PettingZoo's and the classic board."""


@dataclass(frozen=True)
class ConnectFourGame(BoardGame):
    """Connect Four on ``rows`` x ``cols`` (PettingZoo's ``connect_four_v3`` is 6 x 7): row 0 on top,
    index ``row * cols + column``, as PettingZoo lays out its board."""

    name: str = "connect_four"
    title: str = "Connect Four"
    rows: int = 6
    cols: int = 7
    pieces: tuple[str, str] = ("red", "black")
    marks: tuple[str, str] = ("R", "B")

    @property
    def classic(self) -> bool:
        """Whether this is PettingZoo's 6 x 7 game."""
        return (self.rows, self.cols) == (6, 7)

    @property
    def lines(self) -> tuple[tuple[int, int, int, int], ...]:
        return c4_lines(self.rows, self.cols)

    @property
    def moves(self) -> tuple[str, ...]:
        return tuple(str(c + 1) for c in range(self.cols))

    def legal(self, board: Board) -> list[int]:
        return [] if self.winner(board) else [c for c in range(self.cols) if board[c] == 0]

    def drop_row(self, board: Board, col: int) -> int:
        return max(r for r in range(self.rows) if board[r * self.cols + col] == 0)

    def play(self, board: Board, move: int, piece: int) -> Board:
        i = self.drop_row(board, move) * self.cols + move
        return board[:i] + (piece,) + board[i + 1 :]

    def winner(self, board: Board) -> int:
        for a, b, c, d in self.lines:
            if board[a] and board[a] == board[b] == board[c] == board[d]:
                return board[a]
        return 0

    def cell(self, board: Board, row: int, col: int) -> int:
        return board[row * self.cols + col]

    @property
    def column_labels(self) -> tuple[str, ...]:
        return self.moves

    @property
    def legend(self) -> str:
        return f"columns 1-{self.cols} from the left, row 1 at the top; R red, B black, . empty; a piece falls to the lowest empty row"

    def goal(self) -> str:
        return f"Get four of your pieces in a row, column or diagonal. Write the column to drop into, 1 to {self.cols}."

    def pettingzoo_env(self, render_mode: str | None = None, side: int = 256) -> Any:
        if not self.classic:
            raise ValueError(f"PettingZoo's connect_four_v3 is 6 x 7, not {self.rows} x {self.cols}: use rules() and painter()")
        # PettingZoo draws 99 x 86 units scaled by an int; the smallest scale at least as wide as
        # the image keeps the frame sharp and cheap.
        env = _import("pettingzoo.classic.connect_four.connect_four").raw_env(render_mode=render_mode, screen_scaling=max(1, -(-side // 99)))
        env.reset()
        return env

    def rules(self) -> Any:
        return self.pettingzoo_env() if self.classic else SpielConnectFour(self.rows, self.cols)

    def painter(self, side: int) -> Any:
        return self.pettingzoo_env(render_mode="rgb_array", side=side) if self.classic else ConnectFourArt(self.rows, self.cols, side)

    def load(self, env: Any, board: Board) -> None:
        env.board = list(board)

    def read(self, env: Any) -> Board:
        return tuple(env.board)


@functools.cache
def connect_four_game(rows: int = 6, cols: int = 7) -> ConnectFourGame:
    """Connect Four on a ``rows`` x ``cols`` board (4 to 9 of each; the default is PettingZoo's 6 x 7)."""
    for name, value in (("rows", rows), ("cols", cols)):
        if isinstance(value, bool) or not isinstance(value, int) or not 4 <= value <= 9:
            raise ValueError(f"{name}={value!r} is not valid: give an int in 4..9")
    return ConnectFourGame(rows=rows, cols=cols)


class SpielConnectFour:
    """OpenSpiel's ``connect_four(rows, columns)`` with the face of PettingZoo's raw env that the envs
    use: ``reset()``, ``step(column)``, ``board`` (a list in PettingZoo's layout, read from
    OpenSpiel's own board string: top row first, ``x`` the first player, ``o`` the second), and
    ``possible_agents``, ``agent_selection``, ``terminations`` and ``rewards`` (OpenSpiel's returns
    at the end: +1, -1 or 0, as PettingZoo pays) under PettingZoo's agent names."""

    _CELLS = {".": 0, "x": 1, "o": 2}
    possible_agents = ("player_0", "player_1")  # PettingZoo's connect_four_v3 names

    def __init__(self, rows: int, cols: int) -> None:
        import pyspiel

        self.game = pyspiel.load_game("connect_four", {"rows": rows, "columns": cols})
        self.reset()

    def reset(self) -> None:
        self.state = self.game.new_initial_state()
        self.board = self._read()
        self.agent_selection = self.possible_agents[0]
        self.terminations = dict.fromkeys(self.possible_agents, False)
        self.rewards = dict.fromkeys(self.possible_agents, 0)

    def step(self, action: int) -> None:
        self.state.apply_action(action)  # OpenSpiel refuses an illegal or late move
        self.board = self._read()
        self.agent_selection = self.possible_agents[self.possible_agents.index(self.agent_selection) ^ 1]
        if self.state.is_terminal():
            self.terminations = dict.fromkeys(self.possible_agents, True)
            self.rewards = {a: int(r) for a, r in zip(self.possible_agents, self.state.returns(), strict=True)}

    def _read(self) -> list[int]:
        return [self._CELLS[ch] for line in str(self.state).split() for ch in line]


class ConnectFourArt:
    """PettingZoo's Connect Four art on a board of any size: its board image (a 13-pixel cell
    repeated, in a 4-pixel rounded frame) tiled to ``rows`` x ``cols`` and its chips placed as its
    renderer places them, then scaled up by the smallest integer that makes the frame at least
    ``side`` pixels on its longer side (nearest neighbour, as ``pygame.transform.scale``). On 6 x 7
    the frame equals PettingZoo's own (tested). ``board`` and ``render()`` as in PettingZoo's env."""

    CELL, FRAME = 13, 4  # PettingZoo's Connect4Board.png: 99 x 86 = 7 x 6 cells of 13 px in a 4 px frame
    CHIP_OFFSET = 2  # its renderer puts a 9 px chip 6/13 of a cell in, i.e. 2 px inside the cell

    def __init__(self, rows: int, cols: int, side: int) -> None:
        self.rows, self.cols = rows, cols
        self.board = [0] * (rows * cols)
        art = _import("pettingzoo.classic.connect_four.connect_four").__file__.rsplit("/", 1)[0] + "/img/"
        source = np.asarray(Image.open(art + "Connect4Board.png").convert("RGBA"))
        height, width = 2 * self.FRAME + self.CELL * rows, 2 * self.FRAME + self.CELL * cols
        ys, xs = self._tile(source.shape[0], height), self._tile(source.shape[1], width)
        board = Image.new("RGBA", (width, height), (0, 0, 0, 255))  # pygame's fresh surface is black
        board.alpha_composite(Image.fromarray(source[ys][:, xs]))
        self._background = board
        self._chips = {piece: Image.open(art + name).convert("RGBA") for piece, name in ((1, "C4RedPiece.png"), (2, "C4BlackPiece.png"))}
        self.scale = max(1, -(-side // max(width, height)))

    def _tile(self, source: int, target: int) -> NDArray[np.intp]:
        """The source pixel of each target pixel along one axis. The frame's shading differs a little
        at each cell's seam, so whole cells are copied: the first and last cells as they are, the
        ones between from the source's inner cells in turn (on 6 x 7, every cell from itself)."""
        cells, have = (target - 2 * self.FRAME) // self.CELL, (source - 2 * self.FRAME) // self.CELL
        i = np.arange(target)
        k, offset = np.divmod(np.clip(i - self.FRAME, 0, None), self.CELL)
        k = np.minimum(k, cells - 1)
        offset = np.where(i - self.FRAME >= cells * self.CELL, i - self.FRAME - (cells - 1) * self.CELL, offset)
        source_k = np.where(k == 0, 0, np.where(k == cells - 1, have - 1, 1 + (k - 1) % (have - 2)))
        inner = self.FRAME + source_k * self.CELL + offset
        return np.where(i < self.FRAME, i, inner)

    def render(self) -> NDArray[np.uint8]:
        frame = self._background.copy()
        for i, piece in enumerate(self.board):
            if piece:
                row, col = divmod(i, self.cols)
                offset = self.FRAME + self.CHIP_OFFSET
                frame.alpha_composite(self._chips[piece], (col * self.CELL + offset, row * self.CELL + offset))
        if self.scale > 1:
            frame = frame.resize((frame.width * self.scale, frame.height * self.scale), Image.Resampling.NEAREST)
        return np.asarray(frame.convert("RGB"))


GAMES: dict[str, BoardGame] = {"tictactoe": TicTacToeGame(), "connect_four": connect_four_game()}
