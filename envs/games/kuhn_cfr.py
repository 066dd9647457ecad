"""Compute the Kuhn poker equilibrium opponent shipped in ``data/kuhn_cfr.json``.

    .venv/bin/python -m rl4vlm_gym.envs.games.kuhn_cfr [--iterations 20000]

OpenSpiel's C++ CFR (``pyspiel.CFRSolver``, Zinkevich et al. 2007) on its ``kuhn_poker``; the
average policy's exploitability (``pyspiel.exploitability``, exact) is written beside it. Shipped
as data so that making the env never runs a solver; the file is deterministic (CFR is).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

DATA = Path(__file__).with_name("data") / "kuhn_cfr.json"


def solve(iterations: int) -> dict[str, object]:
    import pyspiel

    game = pyspiel.load_game("kuhn_poker")
    solver = pyspiel.CFRSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    table: dict[str, list[float]] = {}

    def walk(state: object) -> None:
        if state.is_terminal():  # type: ignore[attr-defined]
            return
        if state.is_chance_node():  # type: ignore[attr-defined]
            for action, _ in state.chance_outcomes():  # type: ignore[attr-defined]
                walk(state.child(action))  # type: ignore[attr-defined]
            return
        key = state.information_state_string()  # type: ignore[attr-defined]
        probs = dict(policy.get_state_policy(key))
        table[key] = [round(probs.get(a, 0.0), 6) for a in (0, 1)]  # pass, bet
        for action in state.legal_actions():  # type: ignore[attr-defined]
            walk(state.child(action))  # type: ignore[attr-defined]

    walk(game.new_initial_state())
    return {
        "game": "kuhn_poker",
        "solver": f"pyspiel.CFRSolver, {iterations} iterations (average policy)",
        "exploitability": pyspiel.exploitability(game, policy),
        "policy": dict(sorted(table.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    data = solve(args.iterations)
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    logging.info("wrote %s (exploitability %.6f)", DATA, data["exploitability"])


if __name__ == "__main__":
    main()
