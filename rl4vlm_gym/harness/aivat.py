"""AIVAT: unbiased chip estimates of lower variance for two-player zero-sum OpenSpiel games.

Poker's chips are noisy: in Leduc hold'em one hand's chips have a standard deviation near 4
while strong players differ by a few hundredths of a chip, so ranking them by mean chips takes
over a hundred thousand deals. AIVAT (Burch, Schmid, Moravcik, Morrill and Bowling, "AIVAT: A
New Variance Reduction Technique for Agent Evaluation in Imperfect Information Games", AAAI
2018; used to evaluate DeepStack and Libratus) removes from each game's chips the part that
luck explains, at every node of the game where the distribution of the next action is known:

- every chance node (the deal, the public card: ``state.chance_outcomes()``);
- every decision of a seat whose player's move distribution is known (a built-in player's
  ``policy(state)``, which its moves are drawn from).

With a value function ``v`` of the full history fixed before the game, the estimate of seat 0's
return in a game that ended at ``z`` is

    ``u0(z) - sum over the known nodes h on the path, a the action taken there,
    of [ v(h.a) - sum_b pi(b | h) v(h.b) ]``

and seat 1's is ``u1(z)`` plus the same sum (zero-sum). Each bracket has expectation zero given
the history up to ``h`` (``a`` is drawn from ``pi``), whatever the players do elsewhere, so the
estimate is unbiased for any players, model agents included, whose own decisions are simply
not corrected. Its variance depends on ``v``: the closer ``v`` is to the true values, the more
goes. Here ``v`` is seat 0's exact expected return from each history when each seat plays its
known policy, a seat whose policy is not known valued as playing a *baseline* (the game's
equilibrium): between two known players every game's estimate is then the seating's exact
expected return (the corrections telescope), and with a model agent only its own draws' luck
is left. In Leduc hold'em one fixed ``v`` for every seating (both seats the equilibrium) cut the
per-seed standard deviation of the difference between ``cfr`` and ``always-raise`` from 3.7 to
2.8 only: ``always-raise`` and the best response play far from the equilibrium.

This is the paper's estimator with the value function as its control variate term and no
imaginary-observation term (our players' private information is read from the full history,
which the harness has at the end of every game). The values of a game and seating are computed
once per process by one walk of the game tree (Kuhn: 58 histories; Leduc: 9,457, a fraction of a
second with a policy table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["MAX_HISTORIES", "Estimator", "Policy", "estimator", "uniform", "values"]

Policy = Callable[[Any], Mapping[int, float]]
"""``policy(state) -> {action id: probability}`` at an OpenSpiel state where its seat moves."""

MAX_HISTORIES = 200_000
"""The largest game tree valued (histories): a larger game gets no AIVAT estimate."""

_VALUES: dict[tuple[str, ...], dict[tuple[int, ...], float]] = {}


class TooLarge(ValueError):
    """The game tree has more than :data:`MAX_HISTORIES` histories."""


def uniform(state: Any) -> dict[int, float]:
    """Uniform over the legal actions."""
    legal = state.legal_actions()
    return {int(a): 1.0 / len(legal) for a in legal}


def _load(game: str) -> Any:
    import pyspiel

    return pyspiel.load_game(game)


def values(game: str, policies: Sequence[Policy], keys: Sequence[str]) -> Mapping[tuple[int, ...], float]:
    """Seat 0's exact expected return from every history of ``game`` (an OpenSpiel game string)
    when seat ``i`` plays ``policies[i]``: ``{history (action ids): value}``, terminals included.

    Cached per process by ``(game, *keys)``: ``keys[i]`` names ``policies[i]`` (give each its own).

    Raises:
        TooLarge: the tree has more than :data:`MAX_HISTORIES` histories.
    """
    cached = _VALUES.get((game, *keys))
    if cached is not None:
        return cached
    table: dict[tuple[int, ...], float] = {}

    def walk(state: Any, history: tuple[int, ...]) -> float:
        if len(table) >= MAX_HISTORIES:
            raise TooLarge(f"{game!r} has more than {MAX_HISTORIES} histories: too large to value for AIVAT")
        if state.is_terminal():
            value = float(state.returns()[0])
        else:
            # every legal action is walked, also those the policy never plays: a player may
            probs = dict(state.chance_outcomes()) if state.is_chance_node() else dict(policies[state.current_player()](state))
            value = 0.0
            for a in state.legal_actions():
                child = walk(state.child(a), (*history, a))
                value += float(probs.get(a, 0.0)) * child
        table[history] = value
        return value

    walk(_load(game).new_initial_state(), ())
    _VALUES[(game, *keys)] = table
    return table


class Estimator:
    """AIVAT's correction of the chips of one two-player zero-sum game (see the module docstring).

    The value function of a game is seat 0's exact expected return when each seat plays the
    policy its player is known to play, and ``baseline`` where it is not known (a model agent):
    the closer the values are to the players' own, the more of the luck goes, and between two
    known players all of it (every game's estimate is that seating's exact expected chips).

    Args:
        game: the OpenSpiel game string the histories are of.
        baseline: the policy an unknown seat is valued with.
        name: the baseline's name (for the record: ``cfr``, ``uniform``).
        key: the baseline's cache key (:func:`values`).
    """

    def __init__(self, game: str, baseline: Policy, name: str, key: str) -> None:
        self.game, self.baseline, self.baseline_name, self.key = game, baseline, name, key
        self._game = _load(game)
        values(game, [baseline, baseline], [key, key])  # the tree is valued (or found too large) now

    def table(self, policies: Sequence[Policy | None], keys: Sequence[str | None]) -> Mapping[tuple[int, ...], float]:
        """The values of the seating whose known policies are ``policies`` (``None``: unknown)."""
        known = [p if p is not None else self.baseline for p in policies]
        names = [k if p is not None and k is not None else self.key for p, k in zip(policies, keys, strict=True)]
        return values(self.game, known, names)

    def correction(
        self, history: Sequence[int], policies: Sequence[Policy | None], table: Mapping[tuple[int, ...], float]
    ) -> tuple[float, int]:
        """The sum of seat 0's correction terms along ``history`` with the values ``table``, and
        how many nodes were corrected.

        Args:
            history: the game's actions from the initial state, chance included (``state.history()``).
            policies: each seat's known move distribution, or ``None`` where it is not known (its
                decisions are not corrected).
            table: seat 0's value of every history (:meth:`table`, or any other fixed function).
        """
        state = self._game.new_initial_state()
        total, known = 0.0, 0
        prefix: tuple[int, ...] = ()
        for a in history:
            if state.is_chance_node():
                probs: Mapping[int, float] | None = dict(state.chance_outcomes())
            else:
                policy = policies[state.current_player()]
                probs = None if policy is None else policy(state)
            if probs is not None:
                expected = sum(float(p) * table[(*prefix, int(b))] for b, p in probs.items() if p)
                total += table[(*prefix, int(a))] - expected
                known += 1
            state.apply_action(a)
            prefix = (*prefix, int(a))
        return total, known

    def estimate(
        self, returns: Sequence[float], history: Sequence[int], policies: Sequence[Policy | None], keys: Sequence[str | None]
    ) -> tuple[list[float], int]:
        """Each seat's AIVAT estimate of its return (``returns`` less seat 0's correction, seat 1's
        plus it) and the number of corrected nodes; ``keys[i]`` names ``policies[i]`` (caching)."""
        c, known = self.correction(history, policies, self.table(policies, keys))
        return [float(returns[0]) - c, float(returns[1]) + c], known


def estimator(game: str, baseline: Policy | None = None, *, key: str = "uniform", name: str | None = None) -> Estimator | None:
    """An :class:`Estimator` for ``game`` (an OpenSpiel game string) whose unknown seats are
    valued as playing ``baseline`` (``None``: uniform; ``key`` caches its values, ``name`` is
    what the estimator calls it), or ``None`` where AIVAT does not apply: not two players, not
    zero-sum, or too large to value. A baseline that cannot play every state of this game (a
    table computed for another level) is replaced by uniform."""
    import pyspiel

    spiel = _load(game)
    if spiel.num_players() != 2 or spiel.get_type().utility != pyspiel.GameType.Utility.ZERO_SUM:
        return None
    try:
        if baseline is not None:
            try:
                return Estimator(game, baseline, name or key, key)
            except TooLarge:
                raise
            except Exception:  # noqa: BLE001 - a table for another variant of the game: value with uniform
                pass
        return Estimator(game, uniform, "uniform", "uniform")
    except TooLarge:
        return None
