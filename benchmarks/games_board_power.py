"""How many seeds the `games` board's poker tasks need to separate the oracle, random and always-raise.

For each poker view (one seat against a fixed, known opponent) this computes exactly, by walking
OpenSpiel's game tree with the chance probabilities and both policies:

- each agent's expected chips per hand (the seat drawn uniformly) and their standard deviation;
- the same for a duplicate pair (one deal played from both seats: the view's ``duplicate=True``),
  whose card luck largely cancels;
- the pairs a task needs so that the three agents' 95% intervals are disjoint with 80% and 99%
  power: ``n = ((1.96 (sd_a + sd_b) + z sqrt(sd_a^2 + sd_b^2)) / gap)^2`` for each neighbouring
  pair of agents (intervals of half-width 1.96 sd / sqrt(n) each; the observed gap falls short of
  the true one by more than ``z`` standard errors of the difference with probability 20% or 1%).

The agents: the oracle (OpenSpiel's exact best response to the opponent's policy), uniform random,
and always-raise (raise or bet when legal, else call). Run:
``python benchmarks/games_board_power.py``; it prints one table per task (a second or two).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import pyspiel
from open_spiel.python import policy as spiel_policy
from open_spiel.python.algorithms import best_response

from rl4vlm_gym.envs.games import kuhn, leduc
from rl4vlm_gym.envs.games.spiel import uniform

Fn = Callable[[str, Sequence[int]], list[float]]


class _Table(spiel_policy.Policy):
    def __init__(self, game: pyspiel.Game, fn: Fn) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.fn = fn

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        legal = state.legal_actions()
        return dict(zip(legal, self.fn(state.information_state_string(), legal), strict=True))


def _pure(choose: Callable[[str, Sequence[int]], int]) -> Fn:
    return lambda info, legal: [float(a == choose(info, legal)) for a in legal]


def always_raise(order: Sequence[int]) -> Fn:
    return _pure(lambda info, legal: next((a for a in order if a in legal), legal[0]))


def best_response_to(game: pyspiel.Game, opponent: Fn, seat: int) -> Fn:
    br = best_response.BestResponsePolicy(game, seat, _Table(game, opponent))
    return _pure(lambda info, legal: br.best_response_action(info))


def _kuhn_cfr(info: str, legal: Sequence[int]) -> list[float]:
    p = kuhn.KuhnOpponent("cfr").probs(info)
    return [p[a] for a in legal]


def moments(game: pyspiel.Game, seat: int, agent: Fn, opponent: Fn, deck: Sequence[int]) -> tuple[float, float]:
    """Mean and second moment of ``seat``'s chips when chance deals ``deck`` in order."""

    def walk(state: pyspiel.State, p: float, k: int) -> tuple[float, float]:
        if state.is_terminal():
            r = state.returns()[seat]
            return p * r, p * r * r
        if state.is_chance_node():
            return walk(state.child(deck[k]), p, k + 1)
        legal = state.legal_actions()
        fn = agent if state.current_player() == seat else opponent
        m1 = m2 = 0.0
        for a, q in zip(legal, fn(state.information_state_string(), legal), strict=True):
            if q > 0:
                x, y = walk(state.child(a), p * q, k)
                m1, m2 = m1 + x, m2 + y
        return m1, m2

    return walk(game.new_initial_state(), 1.0, 0)


def figures(game: pyspiel.Game, agents: Sequence[Fn], opponent: Fn, cards: int, dealt: int) -> dict[str, float]:
    """Per hand (seat drawn) and per duplicate pair: mean chips and standard deviations."""
    decks = list(itertools.permutations(range(cards), dealt))  # every deal order is equally likely
    hand_m1 = hand_m2 = within = 0.0
    pair_means = []
    for deck in decks:
        seat_moments = [moments(game, s, agents[s], opponent, deck) for s in (0, 1)]
        hand_m1 += sum(m for m, _ in seat_moments) / 2 / len(decks)
        hand_m2 += sum(m2 for _, m2 in seat_moments) / 2 / len(decks)
        within += sum(m2 - m * m for m, m2 in seat_moments) / len(decks)
        pair_means.append(sum(m for m, _ in seat_moments))
    mean_pair = sum(pair_means) / len(decks)
    between = sum((m - mean_pair) ** 2 for m in pair_means) / len(decks)
    return {
        "hand_mean": hand_m1,
        "hand_sd": math.sqrt(hand_m2 - hand_m1**2),
        "pair_mean": mean_pair,  # chips over both hands of a pair
        "pair_sd": math.sqrt(within + between),
    }


def needed(a: dict[str, float], b: dict[str, float], key: str, z: float) -> int:
    gap = abs(a[f"{key}_mean"] - b[f"{key}_mean"])
    sa, sb = a[f"{key}_sd"], b[f"{key}_sd"]
    return math.ceil(((1.96 * (sa + sb) + z * math.hypot(sa, sb)) / gap) ** 2)


TASKS = {
    "kuhn-random": ("kuhn_poker", uniform, (1,), 3, 2),
    "kuhn-cfr": ("kuhn_poker", _kuhn_cfr, (1,), 3, 2),
    "leduc-random": ("leduc_poker", uniform, (2, 1), 6, 3),
    "leduc-cfr": ("leduc_poker", leduc.cfr_policy, (2, 1), 6, 3),
}


def main() -> None:
    for task, (spec, opponent, raise_order, cards, dealt) in TASKS.items():
        game = pyspiel.load_game(spec)
        agents = {
            "oracle": [best_response_to(game, opponent, s) for s in (0, 1)],
            "random": [uniform, uniform],
            "always-raise": [always_raise(raise_order)] * 2,
        }
        rows = {name: figures(game, fns, opponent, cards, dealt) for name, fns in agents.items()}
        print(f"\n{task} ({spec})")
        print(f"  {'agent':<13} {'chips/hand':>11} {'sd':>7} {'chips/pair':>11} {'sd':>7}")
        for name, f in rows.items():
            print(f"  {name:<13} {f['hand_mean']:>11.4f} {f['hand_sd']:>7.3f} {f['pair_mean']:>11.4f} {f['pair_sd']:>7.3f}")
        ordered = sorted(rows, key=lambda n: -rows[n]["pair_mean"])
        worst = {"hand": [0, 0], "pair": [0, 0]}
        for x, y in itertools.pairwise(ordered):
            for key in ("hand", "pair"):
                for i, z in enumerate((0.84, 2.33)):
                    worst[key][i] = max(worst[key][i], needed(rows[x], rows[y], key, z))
            print(f"  {x} > {y}: gap {rows[x]['pair_mean'] - rows[y]['pair_mean']:.4f} chips a pair")
        print(f"  disjoint 95% intervals, 80% / 99% power: {worst['hand'][0]} / {worst['hand'][1]} single hands, "
              f"{worst['pair'][0]} / {worst['pair'][1]} duplicate pairs")  # fmt: skip


if __name__ == "__main__":
    main()
