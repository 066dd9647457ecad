"""Compute the Kuhn poker equilibrium opponents shipped in ``assets/kuhn_cfr.json`` and ``assets/kuhn_3_cfr.json``.

    .venv/bin/python -m rl4vlm_gym.envs.games.kuhn_cfr [--iterations 20000]
    .venv/bin/python -m rl4vlm_gym.envs.games.kuhn_cfr --players 3 [--iterations 20000]

OpenSpiel's C++ CFR (``pyspiel.CFRSolver``, Zinkevich et al. 2007) on its ``kuhn_poker``; the
average policy's exploitability (``pyspiel.exploitability``, exact) is written beside it, and
with three players its NashConv (``pyspiel.nash_conv``: CFR's average policy converges to no Nash
equilibrium in general beyond two players, so the figure is what it is, an approximation's
gain for deviators). Shipped as data so that making the env never runs a solver; the file is
deterministic (CFR is).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

DATA = Path(__file__).with_name("assets") / "kuhn_cfr.json"
DATA_BY_PLAYERS = {2: DATA, 3: Path(__file__).with_name("assets") / "kuhn_3_cfr.json"}


def solve(iterations: int, players: int = 2) -> dict[str, object]:
    import pyspiel

    spec = "kuhn_poker" if players == 2 else f"kuhn_poker(players={players})"
    game = pyspiel.load_game(spec)
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
    data: dict[str, object] = {
        "game": spec,
        "solver": f"pyspiel.CFRSolver, {iterations} iterations (average policy)",
        "exploitability": pyspiel.exploitability(game, policy),
    }
    if players > 2:
        data["nash_conv"] = pyspiel.nash_conv(game, policy)
    return {**data, "policy": dict(sorted(table.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--players", type=int, choices=sorted(DATA_BY_PLAYERS), default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    data = solve(args.iterations, args.players)
    path = DATA_BY_PLAYERS[args.players]
    path.write_text(json.dumps(data, indent=1) + "\n")
    logging.info("wrote %s (exploitability %.6f)", path, data["exploitability"])


if __name__ == "__main__":
    main()
