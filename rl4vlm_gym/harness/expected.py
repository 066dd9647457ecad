"""Exact expected returns of policies seated in an OpenSpiel game, by walking its whole tree.

A *policy* here is what the match harness's players define (:func:`rl4vlm_gym.harness.matches.player_policy`):
``policy(state) -> {action_id: probability}`` at every state where its seat moves. Seating one
policy per seat, the expected return of each seat is the sum over the game tree of the terminal
returns weighted by the chance probabilities (``state.chance_outcomes()``) and the seated
policies' probabilities, as OpenSpiel's ``expected_game_score`` computes it for tabular policies
(we walk the tree ourselves so that any callable policy can sit in any seat, unchanged).

The poker games are tiny (Kuhn: 58 histories, Leduc: about 10,000 once branches of probability
0 are cut), so the walk takes milliseconds to a second. It is what the match harness's ranks are
checked against: :func:`field_values` is each player's exact mean chips per game against the
field over one seed of a round robin, the figure that mean chips per game estimates.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Policy", "expected_returns", "field_values", "pair_values"]

Policy = Callable[[Any], Mapping[int, float]]


def _game(game: Any) -> Any:
    if not isinstance(game, str):
        return game
    import pyspiel

    return pyspiel.load_game(game)


def expected_returns(game: Any, policies: Sequence[Policy]) -> list[float]:
    """The exact expected return of each seat with ``policies[i]`` in seat ``i``.

    Args:
        game: an OpenSpiel game or its name (``"leduc_poker"``): sequential, with chance nodes
            or not, any number of players.
        policies: one policy per seat, each asked only at states where its seat moves.

    Returns:
        The expected returns, seat by seat (they sum to 0 in a zero-sum game).

    Raises:
        ValueError: a policy's probabilities at a state are not a distribution over legal actions.
    """
    game = _game(game)
    n = game.num_players()
    if len(policies) != n:
        raise ValueError(f"{game} has {n} players: give {n} policies, not {len(policies)}")

    def walk(state: Any) -> list[float]:
        if state.is_terminal():
            return [float(r) for r in state.returns()]
        if state.is_chance_node():
            branches = state.chance_outcomes()
        else:
            seat = state.current_player()
            probs = policies[seat](state)
            legal = set(state.legal_actions())
            total = sum(probs.values())
            if any(a not in legal for a, p in probs.items() if p > 0) or abs(total - 1.0) > 1e-3:
                raise ValueError(f"seat {seat}'s policy at {state.history_str()!r} is not a distribution over {sorted(legal)}: {dict(probs)}")
            branches = [(a, p / total) for a, p in probs.items()]  # tables rounded to 5 places sum to 1 +- 1e-4
        value = [0.0] * n
        for action, p in branches:
            if p <= 0:
                continue  # a branch no one plays: cut, it weighs nothing
            child = walk(state.child(action))
            value = [v + p * c for v, c in zip(value, child, strict=True)]
        return value

    return walk(game.new_initial_state())


def pair_values(game: Any, policies: Mapping[str, Policy]) -> dict[tuple[str, ...], list[float]]:
    """The exact expected returns of every seating of the round robin (one seed's games):
    ``{(player in seat 0, player in seat 1, ...): [return of each seat]}``, every group of
    ``num_players`` players in each rotation of its seats (as
    :func:`rl4vlm_gym.harness.matches.schedule` seats them)."""
    game = _game(game)
    n = game.num_players()
    out = {}
    for group in itertools.combinations(list(policies), n):
        for k in range(n):
            seating = group[k:] + group[:k]
            out[seating] = expected_returns(game, [policies[p] for p in seating])
    return out


def field_values(game: Any, policies: Mapping[str, Policy]) -> dict[str, float]:
    """Each player's exact mean return per game against the field: its expected return averaged
    over every game it plays in one seed of the round robin (each group, each seat); what a
    match's mean chips per game estimates."""
    totals = dict.fromkeys(policies, 0.0)
    counts = dict.fromkeys(policies, 0)
    for seating, values in pair_values(game, policies).items():
        for p, v in zip(seating, values, strict=True):
            totals[p] += v
            counts[p] += 1
    return {p: totals[p] / counts[p] for p in policies}
