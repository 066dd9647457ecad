"""Exact expected chips of players against the field of a round robin, for the OpenSpiel games.

A *policy* here is what the match harness's players define (:func:`rl4vlm_gym.harness.matches.player_policy`):
``policy(state) -> {action_id: probability}`` at every state where its seat moves. Seating one
policy per seat, each seat's exact expected return is OpenSpiel's ``expected_returns`` over the
game tree, chance included (:func:`rl4vlm_gym.harness.exploitability.expected_returns`).

:func:`field_values` averages those over every seating one seed of a round robin plays (each
group of players, each rotation of its seats: :func:`rl4vlm_gym.harness.matches.schedule`): each
player's exact mean chips per game against the field, the figure a match's mean chips per game
estimates, and so the order its ranks should recover.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Policy", "field_values", "pair_values"]

Policy = Callable[[Any], Mapping[int, float]]


def pair_values(game: str, policies: Mapping[str, Policy]) -> dict[tuple[str, ...], list[float]]:
    """The exact expected returns of every seating of one seed of the round robin:
    ``{(player in seat 0, player in seat 1, ...): [return of each seat]}``, every group of the
    game's number of players in each rotation of its seats."""
    import pyspiel

    from rl4vlm_gym.harness.exploitability import expected_returns

    n = pyspiel.load_game(game).num_players()
    out = {}
    for group in itertools.combinations(list(policies), n):
        for k in range(n):
            seating = group[k:] + group[:k]
            out[seating] = expected_returns(game, [policies[p] for p in seating])
    return out


def field_values(game: str, policies: Mapping[str, Policy]) -> dict[str, float]:
    """Each player's exact mean return per game against the field: its expected return averaged
    over every game it plays in one seed of the round robin (each group, each seat)."""
    totals = dict.fromkeys(policies, 0.0)
    counts = dict.fromkeys(policies, 0)
    for seating, values in pair_values(game, policies).items():
        for p, v in zip(seating, values, strict=True):
            totals[p] += v
            counts[p] += 1
    return {p: totals[p] / counts[p] for p in policies}
