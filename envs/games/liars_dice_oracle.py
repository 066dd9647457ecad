"""The exact best response in Liar's dice to opponents who read only their dice and the standing bid.

OpenSpiel's ``TabularBestResponse`` walks every information state: one-die two-player Liar's dice
has 24,576 and its tables ship in ``assets/``, but two dice have 2^24 bid sequences a roll, and
three players 2^18 a roll for each of 216 rolls. The random and heuristic opponents
(``liars_dice.MARKOV``) need less: their move depends only on their own dice and the standing
bid, so the history changes nothing but our belief about their dice. :class:`DiceResponse`
searches the game from the current bid with that belief, an expectimax over the public tree
(the standard best-response recursion; e.g. Johanson et al., Accelerating best response
calculation in large extensive games, IJCAI 2011):

- a node's value is the vector of our expected returns given each joint roll of the opponents
  (their sorted dice, weighted by how many ordered rolls give them);
- at our move we take the action of the highest expected value under our belief (the prior of
  the rolls times the chance that the opponents' policy made the bids seen); at an opponent's
  the children are weighted by its policy's probability, roll by roll;
- the value below a node depends only on (our dice, standing bid, player to move, belief
  normalised), so it is computed once for each: against the random player the belief never
  moves, and the search is over at most 25 bids times the players.

Exact: checked equal to OpenSpiel's ``TabularBestResponse`` values on one-die Liar's dice
(``tests/envs/games/test_spiel_players.py``).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rl4vlm_gym.envs.games.liars_dice import FACES, MARKOV, bid_holds, liar_action, reads_no_dice, shape

__all__ = ["DiceResponse", "TabularDiceResponse"]


def hands(numdice: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted roll of ``numdice`` dice and its probability."""
    out = []
    for hand in itertools.combinations_with_replacement(range(1, FACES + 1), numdice):
        orders = math.factorial(numdice) / math.prod(math.factorial(hand.count(f)) for f in set(hand))
        out.append((hand, orders / FACES**numdice))
    return out


class DiceResponse:
    """The exact best response of ``seat`` in the Liar's dice game ``spec`` to opponents who all
    play the policy ``liars_dice.MARKOV[name]`` (see the module docstring). Build it with
    :meth:`of` (cached: the searches done are kept for the next move). ``payoff``: what ``seat``
    is paid when it wins the challenge, loses it, or (three players or more) takes no part in it;
    OpenSpiel's returns by default, the views' ``sparse`` reward (1, 0, 0) maximises wins."""

    def __init__(self, spec: str, seat: int, name: str, payoff: tuple[float, float, float] = (1.0, -1.0, 0.0)) -> None:
        self.payoff = payoff
        self.players, self.numdice = shape(spec)
        self.total, self.seat, self.policy = self.players * self.numdice, seat, MARKOV[name]
        self.liar = liar_action(self.total)
        self.opponents = [p for p in range(self.players) if p != seat]
        rolls = hands(self.numdice)
        self.hands = [hand for hand, _ in rolls]
        joint = list(itertools.product(range(len(rolls)), repeat=len(self.opponents)))
        self.joint = np.array(joint, dtype=np.int64).reshape(len(joint), len(self.opponents))  # hand index of each opponent
        self.prior = np.array([math.prod(rolls[h][1] for h in row) for row in joint])
        self._values: dict[Any, np.ndarray] = {}
        self._moves: dict[Any, dict[int, float]] = {}  # our nodes: each legal move's expected return
        self._blind = reads_no_dice(spec, name)  # then the belief stays the prior whatever the bids
        # one die each and two players: the whole tree at the first question (10-25 ms a seat), so that no
        # later move of any episode searches (larger games search below each node the first time it is asked)
        self._whole = self.players * self.numdice <= 2

    @classmethod
    def of(cls, spec: str, seat: int, name: str, payoff: tuple[float, float, float] = (1.0, -1.0, 0.0)) -> DiceResponse:
        # one instance per game, seat, opponent and payoff however they are passed: the oracle and
        # the decision facts (native) share its searches
        # a class is hashable; mypy checks type[DiceResponse] against its (unhashable, eq=True) instances
        return _response(cls, spec, seat, name, tuple(float(p) for p in payoff))  # type: ignore[arg-type]

    # The search ------------------------------------------------------------------------------------

    def _legal(self, last: int | None) -> list[int]:
        return [*range(0 if last is None else last + 1, self.liar), *([] if last is None else [self.liar])]

    @functools.cache  # noqa: B019  (one instance per game and seat, kept by of())
    def _likelihood(self, k: int, last: int | None) -> np.ndarray:
        """(rolls, legal moves): the chance that opponent ``k`` makes each legal move, roll by roll."""
        table = np.array([self.policy(hand, last, self.total) for hand in self.hands])
        return table[self.joint[:, k]]

    @functools.cache  # noqa: B019
    def _called(self, mine: tuple[int, ...], last: int, caller: int) -> np.ndarray:
        """Our payoff, roll by roll, when ``caller`` calls liar on the bid ``last``."""
        bidder = (caller - 1) % self.players
        out = np.zeros(len(self.joint))
        for i, row in enumerate(self.joint):
            dice = [*mine, *(d for h in row for d in self.hands[h])]
            winner, loser = (bidder, caller) if bid_holds(last, dice) else (caller, bidder)
            out[i] = self.payoff[0] if winner == self.seat else self.payoff[1] if loser == self.seat else self.payoff[2]
        return out

    def _child(self, mine: tuple[int, ...], last: int | None, mover: int, action: int, belief: np.ndarray) -> np.ndarray:
        if action == self.liar:
            return self._called(mine, last, mover)  # Liar follows a bid
        return self._value(mine, action, (mover + 1) % self.players, belief)

    @staticmethod
    def _node(mine: tuple[int, ...], last: int | None, mover: int, belief: np.ndarray) -> tuple[np.ndarray, Any]:
        """The belief normalised, and the node's key: what the value below it depends on."""
        belief = belief / belief.sum()
        return belief, (mine, last, mover, belief.round(12).tobytes())

    def _value(self, mine: tuple[int, ...], last: int | None, mover: int, belief: np.ndarray) -> np.ndarray:
        """Our expected return below the node, given each joint roll of the opponents, playing
        best under ``belief`` (the weights of the rolls). At our own nodes each move's expected
        return is kept too (``_moves``: :meth:`action_values` reads it)."""
        belief, key = self._node(mine, last, mover, belief)
        found = self._values.get(key)
        if found is not None:
            return found
        legal = self._legal(last)
        if mover == self.seat:
            children = [self._child(mine, last, mover, a, belief) for a in legal]
            expected = [float(belief @ v) for v in children]
            self._moves[key] = dict(zip(legal, expected, strict=True))
            value = children[expected.index(max(expected))]  # the first of equals
        else:
            likely = self._likelihood(self.opponents.index(mover), last)
            weights = likely.T * belief  # (move, roll): the belief after each move, a row each
            reached = weights.any(axis=1)  # a move no roll makes adds nothing
            value = np.zeros(len(self.joint))
            for j, action in enumerate(legal):
                if reached[j]:
                    value += likely[:, j] * self._child(mine, last, mover, action, weights[j])
        self._values[key] = value
        return value

    # Reading it ------------------------------------------------------------------------------------

    def belief(self, bids: Sequence[tuple[int, int]]) -> np.ndarray:
        """The weights of the opponents' joint rolls after the bids ``(player, action)`` seen: the
        prior times the chance their policy made their bids."""
        weights, last = self.prior.copy(), None
        for player, action in bids:
            if player != self.seat:
                weights = weights * self._likelihood(self.opponents.index(player), last)[:, self._legal(last).index(action)]
            last = action
        return weights

    def action_values(self, mine: tuple[int, ...], bids: Sequence[tuple[int, int]]) -> dict[int, float]:
        """The expected return of each of our legal moves after ``bids`` (our turn), our dice ``mine``."""
        if self._whole:
            self._whole = False
            for hand in self.hands:  # our dice are rolled as theirs are
                self._value(hand, None, 0, self.prior)
        last, weights = bids[-1][1] if bids else None, self.prior if self._blind else self.belief(bids)
        _, key = self._node(mine, last, self.seat, weights)  # the key _value files the node under
        if key not in self._moves:
            self._value(mine, last, self.seat, weights)
        return self._moves[key]

    def move(self, state: Any) -> int:
        """The best response's move at OpenSpiel ``state`` (our turn): the best expected return,
        the first in OpenSpiel's order among equals."""
        history = [(h.player, h.action) for h in state.full_history()]
        rolls = [a + 1 for p, a in history if p < 0]
        mine = tuple(sorted(rolls[self.seat * self.numdice : (self.seat + 1) * self.numdice]))
        values = self.action_values(mine, [(p, a) for p, a in history if p >= 0])
        top = max(values.values())
        return next(a for a, v in values.items() if v >= top - 1e-12)

    def expected_return(self, given_a_move: bool = False) -> float:
        """The best response's expected return in the game from the roll: over our dice and theirs;
        ``given_a_move``: over the games in which we get to move (with three or more players the
        others may end it first, and then our return is 0), as the single-agent views deal them."""
        total = 0.0
        for mine, p in hands(self.numdice):
            belief = self.prior / self.prior.sum()
            total += p * float(belief @ self._value(mine, None, 0, belief))
        return total / self.reach_probability() if given_a_move else total

    def reach_probability(self, last: int | None = None, mover: int = 0) -> float:
        """The chance that the game reaches our first move from the bid ``last`` with ``mover`` to
        play (our dice play no part: the opponents' moves read only theirs)."""

        def reach(last: int | None, mover: int) -> np.ndarray:
            if mover == self.seat:
                return np.ones(len(self.joint))
            likely, out = self._likelihood(self.opponents.index(mover), last), np.zeros(len(self.joint))
            for j, action in enumerate(self._legal(last)):
                if action != self.liar:  # a call ends the game before us
                    out += likely[:, j] * reach(action, (mover + 1) % self.players)
            return out

        return float(self.prior @ reach(last, mover))


@functools.cache
def _response(cls: type[DiceResponse], spec: str, seat: int, name: str, payoff: tuple[float, ...]) -> DiceResponse:
    return cls(spec, seat, name, (payoff[0], payoff[1], payoff[2]))


class TabularDiceResponse:
    """The exact best response of ``seat`` in one-die two-player Liar's dice to an opponent whose
    policy reads its whole information state (``liars_dice.POLICIES[name]``: the CFR+ table), with
    each legal move's expected ``payoff`` (win, loss), at every information state at once.

    The policy depends on the bids made, so the search walks the public tree of bid sequences
    (2^12 of them) once per seat, values held as 6 x 6 matrices (our die by theirs): the belief
    about their die at a node is the same whatever our die (their moves read only theirs), so the
    best move of each of our dice is taken row by row. :class:`~.decisions.SpielResponse`
    computes the same values over OpenSpiel states, seconds per seat; this is a tenth of that,
    once (``of`` keeps it)."""

    def __init__(self, seat: int, name: str, payoff: tuple[float, float]) -> None:
        from rl4vlm_gym.envs.games.liars_dice import POLICIES, SPECS

        players, self.numdice = shape(SPECS[0])
        assert (players, self.numdice) == (2, 1), "one die each, two players"
        self.seat, self.policy, self.payoff = seat, POLICIES[name], payoff
        self.liar = liar_action(2)
        self.faces = np.arange(1, FACES + 1)
        self._moves: dict[tuple[int, ...], tuple[list[int], np.ndarray]] = {}  # our nodes: legal moves, values (our die x move)
        self._value(())

    @classmethod
    def of(cls, seat: int, name: str, payoff: tuple[float, float] = (1.0, -1.0)) -> TabularDiceResponse:
        return _tabular(cls, seat, name, (float(payoff[0]), float(payoff[1])))  # type: ignore[arg-type]  # see DiceResponse.of

    def _legal(self, bids: tuple[int, ...]) -> list[int]:
        last = bids[-1] if bids else None
        return [*range(0 if last is None else last + 1, self.liar), *([] if last is None else [self.liar])]

    def _called(self, bids: tuple[int, ...]) -> np.ndarray:
        """Our payoff (our die by theirs) when the player to move calls liar on the last bid."""
        return self._call(bids[-1], len(bids) % 2)  # player 0 bids first

    @functools.cache  # noqa: B019  (one instance per seat, opponent and payoff, kept by of())
    def _call(self, last: int, caller: int) -> np.ndarray:
        quantity, face = last // FACES + 1, last % FACES + 1
        counts = (self.faces == face) | ((self.faces == FACES) & (face != FACES))  # a 6 is wild but for a bid on 6
        holds = (counts[:, None].astype(int) + counts[None, :].astype(int)) >= quantity  # our die by theirs
        we_win = holds if caller != self.seat else ~holds  # the bid's maker wins when it holds
        return np.where(we_win, self.payoff[0], self.payoff[1])

    def _value(self, bids: tuple[int, ...], weights: np.ndarray | None = None) -> np.ndarray:
        """Our expected payoff below the node after ``bids`` (our die by theirs), playing best at
        each of our information states; ``weights``: the belief about their die (unnormalised)."""
        weights = np.ones(FACES) if weights is None else weights
        mover, legal = len(bids) % 2, self._legal(bids)
        children = [self._called(bids) if a == self.liar else None for a in legal]
        if mover == self.seat:
            matrices = [c if c is not None else self._value((*bids, a), weights) for a, c in zip(legal, children, strict=True)]
            expected = np.stack([m @ weights for m in matrices], axis=1) / weights.sum()  # our die x move
            self._moves[bids] = (legal, expected)
            top = expected.max(axis=1, keepdims=True)
            best = np.argmax(expected >= top - 1e-9, axis=1)  # the first of equals, per die
            return np.stack([matrices[b][row] for row, b in enumerate(best)])
        text = " ".join(f"{a // FACES + 1}-{a % FACES + 1}" for a in bids)
        probs = np.array([self.policy(f"{die}{' ' if text else ''}{text}", legal) for die in self.faces])  # their die x move
        out = np.zeros((FACES, FACES))
        for j, action in enumerate(legal):
            reach = weights * probs[:, j]
            if reach.sum() > 0:  # a move none of their dice makes adds nothing
                child = children[j] if children[j] is not None else self._value((*bids, action), reach)
                out += child * probs[:, j][None, :]
        return out

    def action_values(self, die: int, bids: Sequence[int]) -> dict[int, float]:
        """Each legal move's expected payoff with our ``die`` after ``bids`` (our turn)."""
        legal, expected = self._moves[tuple(bids)]
        return {a: float(v) for a, v in zip(legal, expected[die - 1], strict=True)}


@functools.cache
def _tabular(cls: type[TabularDiceResponse], seat: int, name: str, payoff: tuple[float, float]) -> TabularDiceResponse:
    return cls(seat, name, payoff)
