"""The games family's decision facts (issue 38): the best responses to a known opponent and their
expected returns, at the agent's information state.

Against a fixed opponent a game is a one-player decision problem: the optimal actions are the
best responses to the opponent's policy given what the agent knows, its belief about hidden cards
or dice following from the deal's chance and that policy. The views' ``_decision`` read them here:

- :class:`SpielResponse`: OpenSpiel's card games (Kuhn poker, Leduc hold'em; Liar's dice has its
  own searches, :mod:`.liars_dice_oracle`): the exact expectimax over the worlds the agent cannot tell apart,
  each weighted by the chance that the deal and the opponents' policy produced what it saw
  (:meth:`SpielResponse.worlds`); the best action at every later information state is chosen
  under its own belief, the standard best-response recursion (OpenSpiel's
  ``TabularBestResponse`` computes the same values). Memoised by information state.
- :func:`exact_expectimax`: the perfect-information OpenSpiel games of the generic adapter
  (Goofspiel, Dots and Boxes) against a uniformly random opponent, chance by its probabilities:
  the whole rest of the game, searched where it is small (``TextGame.exact_moves`` says where).
- :func:`best_actions`: the argmax set of a value table, ties within :data:`TIE`.

Values are on the env's reward scale (the reward variant's table times the event's scale), so
``values`` is the expected return of each action and regret in expected value reads off it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rl4vlm_gym.envs.games.spiel import Policy, SpielGame

__all__ = ["CHANCE_REASON", "TIE", "ChipsReward", "SpielResponse", "best_actions", "exact_expectimax"]

TIE = 1e-9
"""Actions whose expected return is within this of the best are all optimal."""

CHANCE_REASON = "chance: the opponent's moves (and the deal) are drawn, so no number of steps to the end is certain"


def best_actions(values: Mapping[str, float], order: Sequence[str]) -> tuple[str, ...]:
    """The actions of ``order`` whose value is within :data:`TIE` of the best, in that order."""
    top = max(values.values())
    return tuple(a for a in order if a in values and values[a] >= top - TIE)


# OpenSpiel's card and dice games against a known policy ------------------------------------------


@dataclass(frozen=True)
class ChipsReward:
    """The reward a card or dice view pays for ``chips`` won at the end of a hand, as its
    ``_apply`` does: the ``won`` (``lost``) event of the variant's table scaled by the chips over
    ``unit``, ``tie`` for none."""

    won: float
    lost: float
    tie: float
    unit: float

    def __call__(self, chips: float) -> float:
        if chips > 0:
            return self.won * chips / self.unit
        if chips < 0:
            return self.lost * -chips / self.unit
        return self.tie


World = tuple[Any, float]  # an OpenSpiel state and its weight (the chance of the deal and the others' moves)


class SpielResponse:
    """The exact best response of ``seat`` to the opponents' policy ``name`` in the OpenSpiel game
    ``spec`` (every seat but ``seat`` plays it), with each action's expected return.

    ``payoff`` maps OpenSpiel's return of ``seat`` at the end (chips, or +-1) to the env's reward
    for it. Build one with :meth:`of` (cached: its searches are kept for the next move, and the
    next episode)."""

    def __init__(self, game: SpielGame, spec: str, name: str, seat: int, payoff: Callable[[float], float]) -> None:
        self.spec, self.seat, self.payoff = spec, seat, payoff
        self.policy: Policy = game.policy(name, spec)
        # our information state -> (each action's expected return, each world's value under the best)
        self._memo: dict[str, tuple[dict[int, float], dict[str, float]]] = {}

    @classmethod
    @functools.cache
    def of(cls, game: SpielGame, spec: str, name: str, seat: int, payoff: Callable[[float], float]) -> SpielResponse:
        return cls(game, spec, name, seat, payoff)

    def worlds(self, history: Sequence[int]) -> list[World]:
        """The states consistent with what ``seat`` knows after ``history`` (every action, chance
        included), each weighted by the chance of its chance outcomes times the chance that the
        opponents' policy made their moves; states of weight 0 are left out."""
        from rl4vlm_gym.envs.games.spiel import load  # spiel imports this module

        actual = load(self.spec).new_initial_state()
        frontier: list[World] = [(actual.clone(), 1.0)]
        for action in history:
            if actual.is_chance_node():
                frontier = [(s.child(o), w * p) for s, w in frontier for o, p in s.chance_outcomes()]
            elif actual.current_player() == self.seat:
                frontier = [(s.child(action), w) for s, w in frontier if action in s.legal_actions()]
            else:
                moved = []
                for s, w in frontier:
                    legal = s.legal_actions()
                    if action in legal:
                        p = self.policy(s.information_state_string(), legal)[legal.index(action)]
                        if p > 0:
                            moved.append((s.child(action), w * p))
                frontier = moved
            actual.apply_action(action)
            if not actual.is_chance_node() and not actual.is_terminal() and actual.current_player() == self.seat:
                mine = actual.information_state_string(self.seat)  # keep the worlds we cannot tell apart
                frontier = [(s, w) for s, w in frontier if s.information_state_string(self.seat) == mine]
        return frontier

    def action_values(self, state: Any) -> dict[int, float]:
        """The expected return of each legal action of ``seat`` at OpenSpiel ``state`` (its turn),
        playing best afterwards, on the env's reward scale: a function of its information state."""
        key = state.information_state_string(self.seat)
        if key not in self._memo:
            self._decide(key, self.worlds(state.history()))
        return self._memo[key][0]

    def _decide(self, key: str, group: list[World]) -> dict[str, float]:
        """Our move at information state ``key``, the worlds ``group``: each action's expected
        return under the belief, and each world's value under the best action (the first of
        equals), by the world's ``history_str``: the same worlds reach an information state
        whichever way the search came, so the memo serves every later arrival."""
        found = self._memo.get(key)
        if found is not None:
            return found[1]
        total = sum(w for _, w in group)
        legal = group[0][0].legal_actions()
        after = {a: self._values([(s.child(a), w) for s, w in group]) for a in legal}
        expected = {a: sum(w * v for (_, w), v in zip(group, after[a], strict=True)) / total for a in legal}
        top = max(expected.values())
        best = next(a for a in legal if expected[a] >= top - TIE)
        chosen = {s.history_str(): v for (s, _), v in zip(group, after[best], strict=True)}
        self._memo[key] = (expected, chosen)
        return chosen

    def _values(self, group: list[World]) -> list[float]:
        """Each world's expected return, in the order of ``group``, ``seat`` playing best from them on."""
        state = group[0][0]
        if state.is_terminal():
            return [self.payoff(float(s.returns()[self.seat])) for s, _ in group]
        out = [0.0] * len(group)
        if state.is_chance_node():
            chances = [dict(s.chance_outcomes()) for s, _ in group]
            for outcome in sorted({o for c in chances for o in c}):
                self._merge(out, group, [c.get(outcome, 0.0) for c in chances], outcome)
            return out
        if state.current_player() == self.seat:
            # worlds that differ only where we cannot see share our information state and our move
            parts: dict[str, list[int]] = {}
            for i, (s, _) in enumerate(group):
                parts.setdefault(s.information_state_string(self.seat), []).append(i)
            for key, members in parts.items():
                chosen = self._decide(key, [group[i] for i in members])
                for i in members:
                    out[i] = chosen[group[i][0].history_str()]
            return out
        legal = state.legal_actions()
        probs = [self.policy(s.information_state_string(), legal) for s, _ in group]
        for j, action in enumerate(legal):
            self._merge(out, group, [p[j] for p in probs], action)
        return out

    def _merge(self, out: list[float], group: list[World], probs: list[float], action: int) -> None:
        """Add to ``out`` each world's chance ``probs`` of ``action`` times its value after it."""
        moved = [i for i, p in enumerate(probs) if p > 0]  # worlds where the move is never made add nothing
        if not moved:
            return
        values = self._values([(group[i][0].child(action), group[i][1] * probs[i]) for i in moved])
        for i, value in zip(moved, values, strict=True):
            out[i] += probs[i] * value


# Perfect-information OpenSpiel games against a uniformly random opponent ---------------------------

_SIMULTANEOUS = -2  # pyspiel.PlayerId.SIMULTANEOUS


def exact_expectimax(
    state: Any,
    seat: int,
    payoff: Callable[[Any], float],
    memo: dict[tuple[str, int], float],
    moves: dict[tuple[str, int], dict[int, float]],
) -> dict[int, float]:
    """The expected return of each legal action of ``seat`` at ``state`` (perfect information: the
    state is what the seat sees) against uniformly random opponents, chance by its probabilities,
    ``payoff(terminal state)`` the env's reward: the whole rest of the game is searched, so call
    it only where that is small. ``memo`` keeps the value of each position (``str(state)`` and
    the mover) across calls: a position's value does not depend on how it was reached; ``moves``
    keeps the move values of each position where the seat moves, so asking about a position
    searched before is a look-up."""

    def value(s: Any) -> float:
        if s.is_terminal():
            return payoff(s)
        key = (str(s), s.current_player())
        found = memo.get(key)
        if found is None:
            found = memo[key] = node(s, key)
        return found

    def move_value(s: Any, action: int) -> float:
        if s.current_player() != _SIMULTANEOUS:
            return value(s.child(action))
        others = [[action] if p == seat else s.legal_actions(p) for p in range(s.num_players())]
        joints: list[list[int]] = [[]]
        for options in others:
            joints = [[*j, int(a)] for j in joints for a in options]
        total = 0.0
        for joint in joints:
            child = s.clone()
            child.apply_actions(joint)
            total += value(child)
        return total / len(joints)

    def ours(s: Any, key: tuple[str, int]) -> dict[int, float]:
        found = moves.get(key)
        if found is None:
            found = moves[key] = {int(a): move_value(s, a) for a in s.legal_actions(seat)}
        return found

    def node(s: Any, key: tuple[str, int]) -> float:
        if s.is_chance_node():
            return sum(p * value(s.child(o)) for o, p in s.chance_outcomes())
        mover = s.current_player()
        if mover in (seat, _SIMULTANEOUS):
            return max(ours(s, key).values())
        legal = s.legal_actions(mover)
        return sum(value(s.child(a)) for a in legal) / len(legal)

    return ours(state, (str(state), state.current_player()))
