"""How fast the cards' formula module evaluates a player's formula and solves a hand.

1. ``evaluate`` on a 23-token formula (what every Points24 / EZPoints step parses).
2. ``solve`` of four-card hands for a target nobody else asks for (the cache cannot answer), and of
   an unsolvable five-number hand, where the whole search runs (the worst case of level generation).

    .venv/bin/python benchmarks/cards_formula.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import time

from rl4vlm_gym.envs.cards import points_oracle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    tokens = "( 1 + 2 ) * 3 - 4 / ( 5 + 6 ) * 7 + 8 - 9 / 10".split()
    start = time.perf_counter()
    for _ in range(args.calls):
        points_oracle.evaluate(tokens)
    print(f"evaluate, {len(tokens)} tokens: {(time.perf_counter() - start) / args.calls * 1e6:.1f} us per call")
    hands = ([3, 3, 8, 8], [1, 5, 5, 5], [4, 7, 9, 13], [2, 2, 11, 13])
    start = time.perf_counter()
    for hand in hands:
        points_oracle.solve(hand, 1009)
    print(f"solve, four cards, uncached target: {(time.perf_counter() - start) / len(hands) * 1e3:.2f} ms per hand")
    start = time.perf_counter()
    points_oracle.solve([7, 9, 10, 11, 13], 100_003)
    print(f"solve, five numbers, unsolvable (full search): {(time.perf_counter() - start) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
