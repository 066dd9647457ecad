"""The moves on every shortest path, from a best-first search's parent links (BabyAI's and Baba Is
AI's decision facts share it).

A search that keeps, for each state, every ``(parent, move)`` reaching it at its best cost, and
the ``(state, move)`` pairs that win at the optimal cost, describes all shortest paths at once:
walking the parent links back from the winning pairs marks each state on one of them with the
moves that keep to one. The steps to go of such a state are the optimal cost less its own.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["moves_on_shortest_paths"]

S = TypeVar("S", bound=Hashable)
M = TypeVar("M")


def moves_on_shortest_paths(wins: Iterable[tuple[S, M]], parents: Mapping[S, Sequence[tuple[S, M]]]) -> dict[S, set[M]]:
    """Every state on a shortest path to a win, with the moves from it that stay on one.

    Args:
        wins: ``(state, move)`` pairs whose move wins at the optimal cost.
        parents: each state's ``(parent, move)`` pairs that reach it at its best cost (the start
            has none).
    """
    found: dict[S, set[M]] = {}
    for state, move in wins:
        found.setdefault(state, set()).add(move)
    frontier = list(found)
    while frontier:
        state = frontier.pop()
        for parent, move in parents.get(state, ()):
            if parent not in found:
                found[parent] = set()
                frontier.append(parent)
            found[parent].add(move)
    return found
