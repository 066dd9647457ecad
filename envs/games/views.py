"""Single-agent views of the board games: one seat against a built-in opponent, behind ``VLMEnv``.

``gym.make("rl4vlm/TicTacToe-vs-Perfect-v0")`` is an ordinary RL4VLM env, so every agent, suite,
baseline and the conformance kit run on it unchanged. PettingZoo's ``classic`` env plays the
moves and draws the board, as in :mod:`rl4vlm_gym.envs.games.aec`; on Connect Four's other board
sizes (the levels) OpenSpiel's ``connect_four`` plays them and PettingZoo's art draws them
(``game.rules()`` and ``game.painter()`` in :mod:`rl4vlm_gym.envs.games.boards`). A level is a
:class:`Level`: the opponent and the board. The end of a game reports ``info["score"]`` (a draw
counts half) and success is a function of it that each view's card states (:class:`BoardGameView`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.games.aec import REWARDS
from rl4vlm_gym.envs.games.boards import CONNECT_FOUR_SIZES, GAMES, Board, BoardGame, connect_four_game
from rl4vlm_gym.envs.games.decisions import CHANCE_REASON, best_actions
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

SCORES: dict[str, float] = {"win": 1.0, "draw": 0.5, "loss": 0.0}
"""``info["score"]`` at the end of a game: a draw counts half."""


@dataclass(frozen=True)
class Level:
    """A level: the built-in opponent and the board it is played on."""

    player: Player
    game: BoardGame


NATIVE_PAYOFF: tuple[float, float, float] = (1.0, 0.0, -1.0)
"""The native rewards of a win, a draw and a loss (PettingZoo's returns)."""


@functools.cache
def ttt_expectimax(board: Board, piece: int, opponent: Player, payoff: tuple[float, float, float] = NATIVE_PAYOFF) -> float:
    """The expected return of ``piece`` playing best from ``board`` (its turn) against
    ``opponent``'s known move distribution, a win, a draw and a loss paying ``payoff`` (default
    the native +1, 0, -1). Tic-Tac-Toe only."""
    return max(ttt_move_value(board, piece, opponent, m, payoff) for m in GAMES["tictactoe"].legal(board))


def ttt_move_value(board: Board, piece: int, opponent: Player, move: int, payoff: tuple[float, float, float] = NATIVE_PAYOFF) -> float:
    """The expected return of ``piece`` playing ``move`` on ``board``, then best (see :func:`ttt_expectimax`)."""
    game = GAMES["tictactoe"]
    win, draw, loss = payoff
    after = game.play(board, move, piece)
    if game.winner(after):
        return win
    if not game.legal(after):
        return draw
    total = 0.0
    for reply, p in opponent.distribution(game, after).items():
        then = game.play(after, reply, 3 - piece)
        total += p * (loss if game.winner(then) else draw if not game.legal(then) else ttt_expectimax(then, piece, opponent, payoff))
    return total


class BoardGameView(VLMEnv):
    """Base of the single-agent board game views (see the subclasses' docstrings).

    ``info["score"]``, on the step that ends the game only: 1 for a win, 0.5 for a draw, 0 for a
    loss (:data:`SCORES`). ``info["success"]`` is ``score >= SUCCESS_SCORE`` (a win, or not losing
    where the best play draws) and ``info["progress"]`` is ``min(1, score / SUCCESS_SCORE)``, 0
    while the game is on: both monotone in the score. ``history`` holds the moves played so far
    (the rules env's action ids, both players')."""

    CHANCE: ClassVar[bool] = True  # the opponent's moves are drawn during the episode
    REWARDS: ClassVar = REWARDS
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    LEVELS: ClassVar[tuple[Level, ...]]
    SUCCESS_SCORE: ClassVar[float] = 1.0
    _rules_game: BoardGame  # the game whose rules ``rules`` holds
    _painted: tuple[BoardGame, int]  # the game and side ``_painter`` draws
    """The least ``info["score"]`` that counts as success (the cards say it in words)."""

    @property
    def game(self) -> BoardGame:
        return self.LEVELS[self.level].game

    @property
    def opponent(self) -> Player:
        return self.LEVELS[self.level].player

    def _new_episode(self, config: Level) -> None:
        self.seat = int(self.np_random.integers(2)) + 1  # our piece: 1 moves first
        if getattr(self, "rules", None) is None or self._rules_game != config.game:
            self.rules, self._rules_game = config.game.rules(), config.game
        self.rules.reset()
        self.history: list[int] = []
        self.outcome = ""
        if self.seat == 2:
            self._opponent_moves()  # its opening move: the board shows it

    @property
    def board(self) -> Board:
        return self.game.read(self.rules)

    def _play(self, move: int) -> None:
        self.rules.step(move)  # the rules env places the piece, judges the game and passes the turn
        self.history.append(move)

    def _opponent_moves(self) -> str:
        move = self.opponent.choose(self.game, self.board, self.np_random)
        self._play(move)
        return f"Your opponent played {self.game.moves[move]}."

    def _actions(self) -> tuple[str, ...]:
        return tuple(self.game.moves[m] for m in self.game.legal(self.board))

    def _judge(self) -> str:
        winner = self.game.winner(self.board)
        if winner:
            return "win" if winner == self.seat else "loss"
        return "" if self.game.legal(self.board) else "draw"

    def _apply(self, action: str) -> StepOutcome:
        self._play(self.game.moves.index(action))
        feedback = f"You played {action}."
        self.outcome = self._judge()
        if not self.outcome:
            feedback += " " + self._opponent_moves()
            self.outcome = self._judge()
        if self.outcome:
            end = {"win": "You won.", "loss": "You lost.", "draw": "The game is a draw."}[self.outcome]
            return StepOutcome(self.outcome, terminated=True, feedback=f"{feedback} {end}")
        return StepOutcome("move", feedback=feedback)

    @property
    def score(self) -> float | None:
        """1 win, 0.5 draw, 0 loss once the game is over; ``None`` while it is on."""
        return SCORES[self.outcome] if self.outcome else None

    def oracle_action(self) -> str:
        if not self.game.legal(self.board):
            return self.game.moves[0]  # the game is over: any move is refused
        return self.game.moves[self._oracle_move()]

    def _oracle_move(self) -> int:
        raise NotImplementedError

    def _features(self) -> dict[str, int | str]:
        """The marks or pieces on the board, and whether a move wins now or must block one of the
        opponent's (the tactical states where errors cost a game)."""
        game, board = self.game, self.board
        legal = game.legal(board)
        return {
            "pieces": sum(1 for v in board if v),
            "can_win": int(any(game.winner(game.play(board, m, self.seat)) == self.seat for m in legal)),
            "must_block": int(any(game.winner(game.play(board, m, 3 - self.seat)) == 3 - self.seat for m in legal)),
        }

    def _describe(self) -> str:
        return self.game.describe(self.board, None, not self.outcome)

    def _mission(self) -> str:
        return self.game.mission()

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        side = max(height, width)
        painter = getattr(self, "_painter", None)
        if painter is None or self._painted != (self.game, side):
            painter, self._painted = self.game.painter(side), (self.game, side)
            self._painter = painter
        return self.game.draw(painter, self.board, self.image_size)

    def _frame_key(self) -> Any:
        return (self.game, self.board, self.image_size)  # the picture shows the board only

    def _state_key(self) -> str:
        return f"{self.seat}:" + "".join(map(str, self.board))

    def _success(self) -> bool:
        return self.score is not None and self.score >= self.SUCCESS_SCORE

    def _progress(self) -> float:
        return 0.0 if self.score is None else min(1.0, self.score / self.SUCCESS_SCORE)

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        if self.score is not None:
            info["score"] = self.score
        return info

    def _optimal_steps(self) -> int | None:
        return None  # the opponent's moves are drawn as the game goes (CHANCE): no fixed plan

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_painter"] = None  # pygame surfaces cannot cross processes; redrawn on demand
        state["rules"] = None  # rebuilt by replaying the history (PettingZoo's envs pickle empty)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._started:
            self.rules = self._rules_game.rules()
            self.rules.reset()
            for move in self.history:
                self.rules.step(move)


class TicTacToe(BoardGameView):
    """Tic-Tac-Toe against a built-in opponent, on PettingZoo's ``tictactoe_v3``.

    ## Description
    PettingZoo's ``tictactoe_v3`` plays the rules (its raw env: its own ``step`` places each mark,
    finds three in a row and passes the turn) and draws the board. The seed draws your seat
    (X moves first, O second) and every move of the opponent, from the env's own RNG. The
    opponents are stochastic, so a memorised sequence of moves does not win: the heuristic draws
    its quiet moves by a softmax over how central they are, the perfect player uniformly among its
    best moves. The oracle maximises the expected native return exactly: expectimax over every
    board against the opponent's known move distribution (memoised; Tic-Tac-Toe has 5478 boards).
    Winning is a game of chance against the random and heuristic players and impossible against
    the perfect one, so ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: exact. ``values`` are each free square's expected return against the opponent's known
    move distribution, playing best afterwards, on the reward variant's scale (the oracle's
    expectimax, with ``sparse``'s payoffs where that is the variant), ``optimal_actions`` the best
    of them (the oracle's move is one where the variant is ``native`` or ``penalty``);
    ``steps_to_go`` is -1 (chance); features ``pieces`` (marks on the board), ``can_win`` and
    ``must_block`` (1 when a move wins now, or the opponent threatens to).

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
    ``sparse``: 1 for a win only; ``penalty``: ``native`` with -0.1 per invalid action. At the
    end of the game ``info["score"]`` is 1 for a win, 0.5 for a draw, 0 for a loss; success is
    a win (a score of 1), or against the perfect player, who cannot be beaten, not losing (a
    score of at least 0.5); ``progress`` is ``min(1, score / that threshold)``.

    ## Levels
    One level: the id names the opponent (random; heuristic: win, block, else a move drawn with
    weights ``exp(-rank)``, rank 0 for the centre, 1 a corner, 2 an edge; perfect: minimax,
    uniform among its best moves).

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release. Issue 34: the heuristic draws its quiet moves (it played the most
      central one), a draw scores 0.5 (``info["score"]``), and success against the perfect
      player is not losing.
    """

    LEVELS: ClassVar[tuple[Level, ...]] = (Level(RandomPlayer(), GAMES["tictactoe"]),)

    def _oracle_move(self) -> int:
        board, opponent = self.board, self.opponent
        values = {m: ttt_move_value(board, self.seat, opponent, m) for m in self.game.legal(board)}
        top = max(values.values())
        return next(m for m in preference(self.game) if values.get(m, -2.0) >= top - 1e-12)


    def _decision(self) -> Decision:
        """Each free square's expected return against the opponent's known move distribution, on
        the reward variant's scale (:func:`ttt_move_value`); the best are the optimal actions. The
        opponent draws its moves, so there are no steps to go. Kept per board (``_TTT_DECISIONS``)."""
        key = (type(self), self.reward_variant, self.seat, self.board)
        found = _TTT_DECISIONS.get(key)
        if found is None:
            table = self.REWARDS[self.reward_variant]
            payoff = (float(table["win"]), float(table["draw"]), float(table["loss"]))
            board, game = self.board, self.game
            values = {game.moves[m]: ttt_move_value(board, self.seat, self.opponent, m, payoff) for m in game.legal(board)}
            found = _TTT_DECISIONS[key] = Decision(
                best_actions(values, self._actions()), None, values=values, reason=CHANCE_REASON, features=self._features()
            )
        return found


_TTT_DECISIONS: dict[tuple[Any, ...], Decision] = {}  # at most 2 x 5478 boards per class and variant


class TicTacToeVsHeuristic(TicTacToe):
    __doc__ = TicTacToe.__doc__
    LEVELS: ClassVar[tuple[Level, ...]] = (Level(HeuristicPlayer(), GAMES["tictactoe"]),)


class TicTacToeVsPerfect(TicTacToe):
    __doc__ = TicTacToe.__doc__
    LEVELS: ClassVar[tuple[Level, ...]] = (Level(PerfectPlayer(), GAMES["tictactoe"]),)
    SUCCESS_SCORE: ClassVar[float] = 0.5  # perfect play draws: not losing is the best result


def connect_four_levels(player: Player) -> tuple[Level, ...]:
    """``player`` on each board of :data:`CONNECT_FOUR_SIZES`, the smallest first."""
    return tuple(Level(player, connect_four_game(rows, cols)) for rows, cols in CONNECT_FOUR_SIZES)


class ConnectFour(BoardGameView):
    """Connect Four against a built-in opponent, on PettingZoo's ``connect_four_v3`` (6 x 7) or on a
    smaller or larger board.

    ## Description
    On the default 6 x 7 board PettingZoo's ``connect_four_v3`` plays the rules (its raw env drops
    each piece, finds four in a line and passes the turn) and draws the board; on the other
    sizes OpenSpiel's ``connect_four(rows, columns)`` plays the rules and PettingZoo's art (its
    board cell and chips, tiled) draws the board. The seed draws your seat (red moves first,
    black second) and every move of the opponent, from the env's own RNG. The opponents are
    stochastic, so a memorised sequence of moves does not win: the heuristic draws its quiet
    moves by a softmax over how central they are, the search by a softmax over its alpha-beta
    values. The oracle is an alpha-beta search 4 plies deep with a line-counting evaluation
    (exact search of the whole game is out of reach here): it takes every win within its horizon
    and never misses a block of an immediate threat, but it maximises the worst case, not the
    expected return. Winning is a game of chance, so ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: none exact: the expected return against these opponents needs a search of the whole
    game, out of reach here, and the oracle's worst-case search is no best response, so
    ``optimal_actions`` and ``steps_to_go`` are -1/None with the reason; features ``pieces``,
    ``can_win`` and ``must_block`` (1 when a move wins now, or the opponent threatens to).

    ## Observation
    - ``image``: PettingZoo's own pygame frame of the board (red and black chips; on other sizes
      the same art tiled, pixel for pixel as PettingZoo draws 6 x 7), resized to ``image_size``.
    - ``text``: the moves of the step and the result, then the board as a grid (``R``, ``B``,
      ``.``; columns 1-7 on the default board, row 1 at the top) and your colour, or who won; in
      ``image`` mode only the moves.
    - ``mission``: the goal, how to tell your colour (red moves first) and the columns.
    - ``actions``: the columns that are not full, ``1`` .. ``7`` (to ``5`` or ``9`` on the other boards).

    ## Actions
    One column that is not full; anything else is invalid (nothing happens, the reason is reported).

    ## Rewards
    ``native``: PettingZoo's, +1 for a win, -1 for a loss, 0 for a draw and every other move;
    ``sparse``: 1 for a win only; ``penalty``: ``native`` with -0.1 per invalid action. At the
    end of the game ``info["score"]`` is 1 for a win, 0.5 for a draw, 0 for a loss; success is
    a win (a score of 1); ``progress`` is the score.

    ## Levels
    The board: level 0 is 4 rows x 5 columns, level 1 (the default) PettingZoo's 6 x 7, level 2
    7 rows x 9 columns. The id names the opponent: random; heuristic (wins, blocks, avoids giving
    a win away, else a column drawn with weights ``exp(-distance from the middle column)``);
    search: alpha-beta 3 plies deep, drawing its move with weights ``exp(value / 3)`` over the
    moves' search values (a line of three open is worth 64), so it takes every win and block it
    sees and varies among moves of about equal value (deeper searches open in the same column,
    so depths would not make levels that differ from the first observation on).

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release. Issue 34: board sizes as levels (the default level 1 is the old
      game), the heuristic and the search draw their moves (they played the first best move
      or one of equals), and a draw scores 0.5 (``info["score"]``).
    """

    LEVELS: ClassVar[tuple[Level, ...]] = connect_four_levels(RandomPlayer())
    DEFAULT_LEVEL: ClassVar[int] = CONNECT_FOUR_SIZES.index((6, 7))
    ORACLE: ClassVar[Player] = SearchPlayer(depth=4)

    def _oracle_move(self) -> int:
        return self.ORACLE.best(self.game, self.board)

    def _decision(self) -> Decision:
        return Decision(None, None, reason=C4_REASON, features=self._features())


C4_REASON = (
    "no exact solver: the expected return against this opponent needs a search of the whole game, out of reach "
    "here (the oracle searches 4 plies by alpha-beta, maximising the worst case, which is no best response)"
)


class ConnectFourVsHeuristic(ConnectFour):
    __doc__ = ConnectFour.__doc__
    LEVELS: ClassVar[tuple[Level, ...]] = connect_four_levels(HeuristicPlayer())


class ConnectFourVsSearch(ConnectFour):
    __doc__ = ConnectFour.__doc__
    LEVELS: ClassVar[tuple[Level, ...]] = connect_four_levels(SearchPlayer(depth=3))
