"""Compute the equilibrium opponents shipped in ``assets/``: Leduc hold'em and one-die Liar's dice.

    .venv/bin/python -m rl4vlm_gym.envs.games.spiel_cfr leduc [--iterations 2000]
    .venv/bin/python -m rl4vlm_gym.envs.games.spiel_cfr liars_dice_1 [--iterations 1000]
    .venv/bin/python -m rl4vlm_gym.envs.games.spiel_cfr liars_dice_1_br

OpenSpiel's C++ CFR+ (``pyspiel.CFRPlusSolver``, Tammelin 2014) on its ``leduc_poker`` and
``liars_dice(numdice=1)``; the average policy's exploitability (``pyspiel.exploitability``: the
exact best responses' mean gain, in chips for Leduc, in wins for Liar's dice) is written beside
it. Shipped as gzipped JSON so that making an env never runs a solver; the file is deterministic
(CFR+ is, and ``gzip`` writes no time stamp here). ``liars_dice_1_br`` writes OpenSpiel's exact best
responses (``pyspiel.TabularBestResponse``) to each one-die opponent (random, heuristic, CFR+), the
view's oracle, with their values: building them takes seconds, too slow for a first oracle call.
CFR+ on two-dice Liar's dice is out of reach (its tree holds 2^24 bid sequences per roll), so that
level has no equilibrium opponent; its oracle, the exact best response to the random and
heuristic players, needs no table (``liars_dice_oracle.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("assets")
# name: (OpenSpiel game string, output file, default iterations)
GAMES = {
    "leduc": ("leduc_poker", "leduc_cfr.json.gz", 2000),
    "liars_dice_1": ("liars_dice(numdice=1)", "liars_dice_1_cfr.json.gz", 1000),
}


def policy_table(game: Any, policy: Any) -> dict[str, list[list[float]]]:
    """``{information state: [[action, probability], ...]}`` over the legal actions of every
    information state reachable in ``game``."""
    table: dict[str, list[list[float]]] = {}

    def walk(state: Any) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                walk(state.child(action))
            return
        key = state.information_state_string()
        if key not in table:
            probs = dict(policy.get_state_policy(key))
            table[key] = [[a, round(probs.get(a, 0.0), 5)] for a in state.legal_actions()]
        for action in state.legal_actions():
            walk(state.child(action))

    walk(game.new_initial_state())
    return dict(sorted(table.items()))


def solve(name: str, iterations: int) -> dict[str, object]:
    import pyspiel

    spec, _, _ = GAMES[name]
    game = pyspiel.load_game(spec)
    solver = pyspiel.CFRPlusSolver(game)
    start = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    seconds = time.perf_counter() - start
    policy = solver.average_policy()
    table = policy_table(game, policy)
    # the exploitability of the policy as shipped (rounded), not of the solver's own copy
    shipped = pyspiel.TabularPolicy({k: [(int(a), p) for a, p in v] for k, v in table.items()})
    return {
        "game": spec,
        "solver": f"pyspiel.CFRPlusSolver, {iterations} iterations (average policy), {seconds:.0f} s",
        "exploitability": pyspiel.exploitability(game, shipped),
        "policy": table,
    }


def best_responses() -> dict[str, object]:
    """The best response of each seat to each one-die Liar's dice opponent, and its value."""
    import pyspiel

    from rl4vlm_gym.envs.games.liars_dice import POLICIES, SPECS, equilibrium

    game = pyspiel.load_game(SPECS[0])
    root = game.new_initial_state().history_str()
    actions: dict[str, dict[str, int]] = {}
    values: dict[str, list[float]] = {}
    for name, policy in sorted(POLICIES.items()):
        table = {k: list(zip(p, policy(k, list(p)), strict=True)) for k, p in equilibrium().items()}
        actions[name], values[name] = {}, []
        for seat in (0, 1):
            response = pyspiel.TabularBestResponse(game, seat, table)
            actions[name].update(response.get_best_response_actions())
            values[name].append(response.value(root))
        actions[name] = dict(sorted(actions[name].items()))
    return {
        "game": SPECS[0],
        "solver": "pyspiel.TabularBestResponse of each seat to each opponent's policy at every information state",
        "values": values,
        "actions": actions,
    }


def write(path: Path, data: dict[str, object]) -> None:
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write((json.dumps(data, separators=(",", ":")) + "\n").encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", choices=[*sorted(GAMES), "liars_dice_1_br"])
    parser.add_argument("--iterations", type=int)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    if args.game == "liars_dice_1_br":
        data = best_responses()
        write(DATA / "liars_dice_1_br.json.gz", data)
        logging.info("wrote %s (best response values by seat: %s)", DATA / "liars_dice_1_br.json.gz", data["values"])
        return
    _, filename, default = GAMES[args.game]
    data = solve(args.game, args.iterations or default)
    path = DATA / filename
    write(path, data)
    logging.info("wrote %s (%d information states, exploitability %.6f)", path, len(data["policy"]), data["exploitability"])  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
