"""Players for the board games: random, a heuristic, perfect Tic-Tac-Toe and alpha-beta Connect Four.

Every player is a probability distribution over the legal moves of a board (``distribution``), so
an opponent's move is drawn from it with the env's own RNG, and the Tic-Tac-Toe oracle can take the
expectation over it exactly. ``best`` is a player's deterministic choice (the first of its best
moves in the game's preference order), used by the oracles.

The opponents are stochastic on purpose: a deterministic opponent lets a deterministic agent meet
the same few games again and again (18 distinct games in 60 seeds against the old alpha-beta
opponent, 7 in 200 against the old Tic-Tac-Toe heuristic; ``benchmarks/games_variety.py``), so a
memorised sequence would win. The heuristic draws its quiet moves with a preference for the
centre (a softmax over how central they are) and the search draws by a softmax over its alpha-beta
values; both still take every win and block every threat they see (a win or loss is worth a
million evaluation points, far beyond any temperature). ``temperature=0`` gives the old,
near-deterministic players (uniform over the top moves only).

The searches are our own: PettingZoo ships no players, and OpenSpiel's ``minimax``/``alpha_beta``
work on its own states, not on PettingZoo's boards, and cost a C++ state copy per node.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rl4vlm_gym.envs.games.boards import GAMES, Board, BoardGame, ConnectFourGame, connect_four_game

Distribution = dict[int, float]

HEURISTIC_TEMPERATURE = 1.0
"""The heuristic's quiet moves: ``P(move)`` proportional to ``exp(-rank / T)``, ``rank`` the move's
distance from the centre (Tic-Tac-Toe: 0 centre, 1 corner, 2 edge; Connect Four: columns from the
middle one)."""
SEARCH_TEMPERATURE = 3.0
"""The alpha-beta opponent: ``P(move)`` proportional to ``exp(value / T)`` over its moves'
search values (evaluation points: a line of three open is worth 64, of two 8)."""


def preference(game: BoardGame) -> tuple[int, ...]:
    """Moves from the most to the least central: centre, then corners, then edges in Tic-Tac-Toe;
    the middle column outwards in Connect Four (the usual opening wisdom), the left one first."""
    if isinstance(game, ConnectFourGame):
        return _column_order(game.cols)
    return (4, 0, 6, 2, 8, 3, 1, 7, 5)


@functools.cache
def _column_order(cols: int) -> tuple[int, ...]:
    return tuple(sorted(range(cols), key=lambda c: (abs(2 * c - (cols - 1)), c)))


def _uniform(moves: list[int]) -> Distribution:
    return {m: 1.0 / len(moves) for m in moves}


def _softmax(scores: dict[int, float], temperature: float) -> Distribution:
    """``exp(score / temperature)``, normalised; ``temperature=0``: uniform over the top scores."""
    top = max(scores.values())
    if temperature <= 0:
        return _uniform([m for m, v in scores.items() if v == top])
    weights = {m: math.exp((v - top) / temperature) for m, v in scores.items()}  # at most 1; far below the top: 0.0
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items() if w > 0.0}


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
    """Win if one move wins; else block the opponent's immediate win; else (in Connect Four never
    handing the opponent a win on top of its piece, if some move avoids it) a move drawn with a
    preference for the centre: ``exp(-rank / temperature)``, ``rank`` the move's distance from the
    centre (:data:`HEURISTIC_TEMPERATURE`; 0: only the most central moves)."""

    name: str = "heuristic"
    temperature: float = HEURISTIC_TEMPERATURE

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
            safe = {m for m in legal if not _wins_now(game, game.play(board, m, piece), 3 - piece)}
            legal = safe or legal
            rank = {m: abs(2 * m - (game.cols - 1)) // 2 for m in legal}
        else:
            rank = {m: 0 if m == 4 else 1 if m in (0, 2, 6, 8) else 2 for m in legal}
        return _softmax({m: -float(r) for m, r in rank.items()}, self.temperature)


# Tic-Tac-Toe: exact values by negamax over every reachable board (5478 of them), memoised.


@functools.cache
def ttt_value(board: Board) -> int:
    """The value of ``board`` for the player to move under perfect play: ``+(1 + empties after
    the win)`` for a win (sooner is better), the negative for a loss, 0 for a draw."""
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


# Connect Four: depth-limited negamax with alpha-beta pruning and a line-counting evaluation, on
# bitboards (bit ``row * cols + col``), since the search visits thousands of boards per move.

_WIN = 1_000_000
_LINE_SCORE = (0, 1, 8, 64)  # a line of four holding 1, 2 or 3 of one player's pieces and none of the other's
_CENTRE_SCORE = 4  # per piece in the centre column (it lies on the most lines)


@dataclass(frozen=True)
class Bitboards:
    """The masks of one board size: every line of four, the lines through each cell, each column."""

    rows: int
    cols: int
    lines: tuple[int, ...]
    through: tuple[tuple[int, ...], ...]
    columns: tuple[int, ...]
    centre: int
    order: tuple[int, ...]  # the columns, the most central first

    @staticmethod
    @functools.cache
    def of(game: ConnectFourGame) -> Bitboards:
        lines = game.lines
        masks = tuple(sum(1 << i for i in line) for line in lines)
        through = tuple(tuple(m for m, line in zip(masks, lines, strict=True) if i in line) for i in range(game.size))
        columns = tuple(sum(1 << (r * game.cols + c) for r in range(game.rows)) for c in range(game.cols))
        order = _column_order(game.cols)
        return Bitboards(game.rows, game.cols, masks, through, columns, columns[order[0]], order)

    def pieces(self, board: Board, piece: int) -> int:
        return sum(1 << i for i, v in enumerate(board) if v == piece)

    def drop(self, filled: int, col: int) -> int:
        """The bit a piece dropped in ``col`` lands on, or 0 if the column is full."""
        height = (filled & self.columns[col]).bit_count()
        return 0 if height == self.rows else 1 << ((self.rows - 1 - height) * self.cols + col)

    def wins(self, bits: int, bit: int) -> bool:
        """Whether ``bits`` holds a line through ``bit`` (a plain loop: the hottest code of the search)."""
        for m in self.through[bit.bit_length() - 1]:
            if bits & m == m:
                return True
        return False


_CLASSIC = Bitboards.of(connect_four_game())


def c4_evaluate(mine: int, theirs: int, bb: Bitboards = _CLASSIC) -> int:
    """Open lines of the player to move minus the opponent's, weighted by how full they are, plus
    the centre column. Memoised per board size: the searches reach most leaves by several move
    orders, and the same openings in every game."""
    cache = _EVALUATIONS.setdefault(id(bb), {})
    score = cache.get((mine, theirs))
    if score is not None:
        return score
    score = _CENTRE_SCORE * ((mine & bb.centre).bit_count() - (theirs & bb.centre).bit_count())
    for m in bb.lines:
        a, b = (mine & m).bit_count(), (theirs & m).bit_count()
        if not b:
            score += _LINE_SCORE[a]
        elif not a:
            score -= _LINE_SCORE[b]
    if len(cache) >= _EVALUATIONS_KEPT:
        cache.clear()  # bounded: about 10 MB per board size
    cache[(mine, theirs)] = score
    return score


_EVALUATIONS: dict[int, dict[tuple[int, int], int]] = {}  # by id() of a Bitboards: they live as long as the process (cached)
_EVALUATIONS_KEPT = 65_536


def c4_negamax(mine: int, theirs: int, depth: int, alpha: int, beta: int, bb: Bitboards = _CLASSIC) -> int:
    """The value for the player to move (pieces ``mine``) searching ``depth`` plies; no one has
    won yet."""
    filled = mine | theirs
    cells = [b for b in (bb.drop(filled, c) for c in bb.order) if b]
    if not cells:
        return 0
    for bit in cells:  # a win now ends the search at once
        if bb.wins(mine | bit, bit):
            return _WIN + depth
    if depth == 0:
        return c4_evaluate(mine, theirs, bb)
    best = -_WIN - 100
    for bit in cells:
        value = -c4_negamax(theirs, mine | bit, depth - 1, -beta, -alpha, bb)
        if value > best:
            best = value
        alpha = max(alpha, value)
        if alpha >= beta:
            break
    return best


def _root(game: ConnectFourGame, board: Board) -> tuple[Bitboards, int, int]:
    bb, piece = Bitboards.of(game), game.to_move(board)
    return bb, bb.pieces(board, piece), bb.pieces(board, 3 - piece)


def c4_move_values(board: Board, depth: int, game: ConnectFourGame | None = None) -> dict[int, int]:
    """Each legal move's exact depth-limited negamax value (a full window per move, so equal
    values are true ties) on ``game``'s board (default: 6 x 7)."""
    game = game or connect_four_game()
    bb, mine, theirs = _root(game, board)
    return dict(_c4_move_values(bb, mine, theirs, depth, tuple(game.legal(board))))


# The searches are pure functions of the position, so they are memoised (bounded): episodes of one
# seed stream meet the same openings, and an opponent and the oracle search the same boards (in the
# kit's oracle check about half of Connect Four's searches repeat one already made).
_SEARCHES_KEPT = 16_384


@functools.lru_cache(maxsize=_SEARCHES_KEPT)
def _c4_move_values(bb: Bitboards, mine: int, theirs: int, depth: int, legal: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    def value(col: int) -> int:
        bit = bb.drop(mine | theirs, col)
        return (
            _WIN + depth + 1
            if bb.wins(mine | bit, bit)
            else -c4_negamax(theirs, mine | bit, depth - 1, -_WIN - 200, _WIN + 200, bb)
        )

    return tuple((col, value(col)) for col in legal)


@functools.lru_cache(maxsize=_SEARCHES_KEPT)
def _c4_best(bb: Bitboards, mine: int, theirs: int, depth: int) -> int:
    # Alpha-beta with the first-best move: cheaper than exact ties, the same top value.
    best, best_value, alpha = None, -_WIN - 300, -_WIN - 200
    for col in bb.order:
        bit = bb.drop(mine | theirs, col)
        if not bit:
            continue
        if bb.wins(mine | bit, bit):
            return col
        value = -c4_negamax(theirs, mine | bit, depth - 1, -_WIN - 200, -alpha, bb)
        if value > best_value:
            best, best_value = col, value
            alpha = max(alpha, value)
    assert best is not None, "no legal move"
    return best


@dataclass(frozen=True)
class SearchPlayer(Player):
    """Connect Four by alpha-beta search ``depth`` plies deep, drawing its move by a softmax over
    the moves' exact search values, ``exp(value / temperature)`` (:data:`SEARCH_TEMPERATURE`; 0:
    uniform over the best-valued moves). ``best`` is the first best-valued move."""

    name: str = "search"
    depth: int = 4
    temperature: float = SEARCH_TEMPERATURE

    def distribution(self, game: BoardGame, board: Board) -> Distribution:
        assert isinstance(game, ConnectFourGame), "the search plays Connect Four"
        return _softmax({m: float(v) for m, v in c4_move_values(board, self.depth, game).items()}, self.temperature)

    def best(self, game: BoardGame, board: Board) -> int:
        assert isinstance(game, ConnectFourGame), "the search plays Connect Four"
        return _c4_best(*_root(game, board), self.depth)


PLAYERS: dict[str, Callable[[], Player]] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
    "perfect": PerfectPlayer,
    "search": SearchPlayer,
}


def exact_player(game: BoardGame, depth: int = 4) -> Player:
    """The game's strongest player: perfect Tic-Tac-Toe, alpha-beta Connect Four."""
    return SearchPlayer(depth=depth) if isinstance(game, ConnectFourGame) else PerfectPlayer()
