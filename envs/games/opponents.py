"""Players for the board games: random, a heuristic, perfect Tic-Tac-Toe and alpha-beta Connect Four.

Every player is a probability distribution over the legal moves of a board (``distribution``), so
an opponent's move is drawn from it with the env's own RNG, and the Tic-Tac-Toe oracle can take the
expectation over it exactly. ``best`` is a player's deterministic choice (the first of its best
moves in the game's preference order), used by the oracles.

The searches are our own: PettingZoo ships no players, and OpenSpiel's ``minimax``/``alpha_beta``
work on its own states, not on PettingZoo's boards, and cost a C++ state copy per node.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rl4vlm_gym.envs.games.boards import C4_LINES, C4_LINES_THROUGH, Board, BoardGame, ConnectFourGame

Distribution = dict[int, float]


def preference(game: BoardGame) -> tuple[int, ...]:
    """Moves from the most to the least central: centre, then corners, then edges in Tic-Tac-Toe;
    the middle column outwards in Connect Four (the usual opening wisdom)."""
    if isinstance(game, ConnectFourGame):
        return (3, 2, 4, 1, 5, 0, 6)
    return (4, 0, 6, 2, 8, 3, 1, 7, 5)


def _uniform(moves: list[int]) -> Distribution:
    return {m: 1.0 / len(moves) for m in moves}


@dataclass(frozen=True)
class Player:
    """A policy: ``distribution(board)`` over the legal moves for the player to move."""

    name: str

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        raise NotImplementedError

    def choose(self, game: BoardGame, board: Board, rng: np.random.Generator) -> int:
        """A move drawn from ``distribution`` with ``rng`` (in preference order, so the draw is
        the same in every process)."""
        dist = self.distribution(game, board)
        moves = [m for m in preference(game) if m in dist]
        if len(moves) == 1:
            return moves[0]
        return moves[int(rng.choice(len(moves), p=np.array([dist[m] for m in moves])))]

    def best(self, game: BoardGame, board: Board) -> int:
        dist = self.distribution(game, board)
        top = max(dist.values())
        return next(m for m in preference(game) if dist.get(m, -1.0) == top)


@dataclass(frozen=True)
class RandomPlayer(Player):
    """Uniform over the legal moves."""

    name: str = "random"

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        return _uniform(game.legal(board))


def _wins_now(game: BoardGame, board: Board, piece: int) -> list[int]:
    return [m for m in game.legal(board) if game.winner(game.play(board, m, piece)) == piece]


@dataclass(frozen=True)
class HeuristicPlayer(Player):
    """Win if one move wins; else block the opponent's immediate win; else the most central free
    move (ties drawn uniformly)."""

    name: str = "heuristic"

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        piece = game.to_move(board)
        wins = _wins_now(game, board, piece)
        if wins:
            return _uniform(wins)
        blocks = _wins_now(game, board, 3 - piece)
        if blocks:
            return _uniform(blocks)
        legal = set(game.legal(board))
        if isinstance(game, ConnectFourGame):
            # never hand the opponent a win on top of our piece, if some move avoids it
            safe = {m for m in legal if not _wins_now(game, game.play(board, m, piece), 3 - piece)}
            legal = safe or legal
            rank = {m: abs(m - 3) for m in legal}
        else:
            rank = {m: 0 if m == 4 else 1 if m in (0, 2, 6, 8) else 2 for m in legal}
        top = min(rank.values())
        return _uniform([m for m in legal if rank[m] == top])


# Tic-Tac-Toe: exact values by negamax over every reachable board (5478 of them), memoised.


@functools.cache
def ttt_value(board: Board) -> int:
    """The value of ``board`` for the player to move under perfect play: ``+(1 + empties after
    the win)`` for a win (sooner is better), the negative for a loss, 0 for a draw."""
    from rl4vlm_gym.envs.games.boards import GAMES

    game = GAMES["tictactoe"]
    if game.winner(board):
        return -(1 + board.count(0))  # the previous mover won
    legal = game.legal(board)
    if not legal:
        return 0
    piece = game.to_move(board)
    return max(-ttt_value(game.play(board, m, piece)) for m in legal)


@dataclass(frozen=True)
class PerfectPlayer(Player):
    """Perfect Tic-Tac-Toe: uniform over the moves of the best minimax value (winning soonest,
    losing latest); it never loses."""

    name: str = "perfect"

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        piece = game.to_move(board)
        values = {m: -ttt_value(game.play(board, m, piece)) for m in game.legal(board)}
        top = max(values.values())
        return _uniform([m for m, v in values.items() if v == top])


# Connect Four: depth-limited negamax with alpha-beta pruning and a line-counting evaluation.

_WIN = 1_000_000
_LINE_SCORE = (0, 1, 8, 64)  # a line of four holding 1, 2 or 3 of one player's pieces and none of the other's


_MASKS = tuple(sum(1 << i for i in line) for line in C4_LINES)
_MASKS_THROUGH = tuple(tuple(sum(1 << i for i in line) for line in lines) for lines in C4_LINES_THROUGH)
_COLUMN = tuple(sum(1 << (r * 7 + c) for r in range(6)) for c in range(7))
_CENTRE = _COLUMN[3]
_ORDER = (3, 2, 4, 1, 5, 0, 6)


def _bits(board: Board, piece: int) -> int:
    return sum(1 << i for i, v in enumerate(board) if v == piece)


def c4_evaluate(mine: int, theirs: int) -> int:
    """Open lines of the player to move minus the opponent's, weighted by how full they are, plus
    the centre column (it lies on the most lines). Boards are bitboards: bit ``row * 7 + col``."""
    score = 4 * ((mine & _CENTRE).bit_count() - (theirs & _CENTRE).bit_count())
    for m in _MASKS:
        a, b = (mine & m).bit_count(), (theirs & m).bit_count()
        if not b:
            score += _LINE_SCORE[a]
        elif not a:
            score -= _LINE_SCORE[b]
    return score


def _drop(filled: int, col: int) -> int:
    """The bit a piece dropped in ``col`` lands on, or 0 if the column is full."""
    height = (filled & _COLUMN[col]).bit_count()
    return 0 if height == 6 else 1 << ((5 - height) * 7 + col)


def _wins(bits: int, bit: int) -> bool:
    return any(bits & m == m for m in _MASKS_THROUGH[bit.bit_length() - 1])


def c4_negamax(mine: int, theirs: int, depth: int, alpha: int, beta: int) -> int:
    """The value for the player to move (pieces ``mine``) searching ``depth`` plies; no one has
    won yet. Bitboards, since the search visits thousands of boards per move."""
    filled = mine | theirs
    cells = [b for b in (_drop(filled, c) for c in _ORDER) if b]
    if not cells:
        return 0
    for bit in cells:  # a win now ends the search at once
        if _wins(mine | bit, bit):
            return _WIN + depth
    if depth == 0:
        return c4_evaluate(mine, theirs)
    best = -_WIN - 100
    for bit in cells:
        value = -c4_negamax(theirs, mine | bit, depth - 1, -beta, -alpha)
        if value > best:
            best = value
        alpha = max(alpha, value)
        if alpha >= beta:
            break
    return best


def _root(board: Board) -> tuple[int, int]:
    piece = ConnectFourGame().to_move(board)
    return _bits(board, piece), _bits(board, 3 - piece)


def c4_move_values(board: Board, depth: int) -> dict[int, int]:
    """Each legal move's exact depth-limited negamax value (a full window per move, so equal
    values are true ties)."""
    mine, theirs = _root(board)
    values = {}
    for col in ConnectFourGame().legal(board):
        bit = _drop(mine | theirs, col)
        values[col] = _WIN + depth + 1 if _wins(mine | bit, bit) else -c4_negamax(theirs, mine | bit, depth - 1, -_WIN - 200, _WIN + 200)
    return values


@dataclass(frozen=True)
class SearchPlayer(Player):
    """Connect Four by alpha-beta search ``depth`` plies deep; uniform over the best-valued moves."""

    name: str = "search"
    depth: int = 4

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        values = c4_move_values(board, self.depth)
        top = max(values.values())
        return _uniform([m for m, v in values.items() if v == top])

    def best(self, game: BoardGame, board: Board) -> int:
        # Alpha-beta with the first-best move: cheaper than exact ties, the same top value.
        mine, theirs = _root(board)
        best, best_value, alpha = None, -_WIN - 300, -_WIN - 200
        for col in _ORDER:
            bit = _drop(mine | theirs, col)
            if not bit:
                continue
            if _wins(mine | bit, bit):
                return col
            value = -c4_negamax(theirs, mine | bit, self.depth - 1, -_WIN - 200, -alpha)
            if value > best_value:
                best, best_value = col, value
                alpha = max(alpha, value)
        assert best is not None, "no legal move"
        return best


PLAYERS: dict[str, Callable[[], Player]] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
    "perfect": PerfectPlayer,
    "search": SearchPlayer,
}


def exact_player(game: BoardGame, depth: int = 4) -> Player:
    """The game's strongest player: perfect Tic-Tac-Toe, alpha-beta Connect Four."""
    return SearchPlayer(depth=depth) if isinstance(game, ConnectFourGame) else PerfectPlayer()
