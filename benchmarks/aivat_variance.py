"""How much of a poker match's noise AIVAT removes (issue 34): the per-seed standard deviation of
the differences between players' mean chips, raw and by AIVAT with several value functions.

    .venv/bin/python benchmarks/aivat_variance.py [--game leduc_poker] [--seeds 300]

Plays the round robin of ``random``, ``always-raise``, ``cfr`` and ``br`` (every seed from both
seats, as ``rl4vlm-gym match`` does) and values each game's recorded OpenSpiel history
(``spiel_history``) again with:

- ``raw``: the chips won;
- ``fixed cfr, random uncorrected``: one value function for every seating (both seats play the
  shipped equilibrium), the random agent's decisions left uncorrected;
- ``fixed cfr, all corrected``: the same values, the random agent's decisions corrected (uniform);
- ``seating, random uncorrected``: each seating's own values, the random agent valued as cfr and
  left uncorrected (what a model agent in its seat gets);
- ``shipped``: the record's ``aivat`` (each seating's own values, every known player corrected).

For each adjacent pair in the order of the exact expected chips it prints the standard deviation
of the per-seed difference of their mean chips, its mean, and the seeds a 3-standard-error
separation of the exact gap would take. Every variant's means agree with the exact values within
their errors (each is unbiased); their variances differ.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from rich.console import Console
from rich.table import Table

from rl4vlm_gym.harness import aivat, matches
from rl4vlm_gym.harness.expected import field_values

POOL = ("random", "always-raise", "cfr", "br")


def _per_seed(records: list[dict[str, Any]], figures: list[list[float]]) -> dict[str, np.ndarray]:
    seeds = sorted({r["seed"] for r in records})
    at = {s: i for i, s in enumerate(seeds)}
    per = {p: np.zeros(len(seeds)) for p in POOL}
    games = len(POOL) - 1
    for r, xs in zip(records, figures, strict=True):
        for p, x in zip(r["players"], xs, strict=True):
            per[p][at[r["seed"]]] += x / (2 * games)
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker", choices=("kuhn_poker", "leduc_poker"))
    parser.add_argument("--seeds", type=int, default=300)
    args = parser.parse_args()
    spec = matches.game_spec(args.game)
    players = [matches.parse_player(n, spec) for n in POOL]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        records = matches.run_matches(spec, players, range(args.seeds), Path(folder), game_kwargs={"obs_mode": "text"})
    played = time.perf_counter() - start
    policies = {p.label: matches.player_policy(spec, p) for p in players}
    exact = field_values(args.game, policies)
    game = str(pyspiel.load_game(args.game))  # the string the env's states report: "leduc_poker()"
    cfr = spec.builtin("cfr").policy
    est = aivat.estimator(game, cfr, key=spec.players["cfr"], name="cfr")
    assert est is not None
    fixed = aivat.values(game, [cfr, cfr], [spec.players["cfr"]] * 2)

    def known(label: str, random: bool) -> Any:
        return None if label == "random" and not random else policies[label]

    def key(label: str) -> str:
        return "uniform" if label == "random" else spec.players[label]

    def revalue(table_of: Any, random: bool) -> list[list[float]]:
        out = []
        for r in records:
            pols = [known(p, random) for p in r["players"]]
            c, _ = est.correction(r["spiel_history"], pols, table_of(r, pols))
            out.append([r["returns"][0] - c, r["returns"][1] + c])
        return out

    variants = {
        "raw": [r["returns"] for r in records],
        "fixed cfr, random uncorrected": revalue(lambda r, pols: fixed, random=False),
        "fixed cfr, all corrected": revalue(lambda r, pols: fixed, random=True),
        "seating, random uncorrected": revalue(
            lambda r, pols: est.table(pols, [None if q is None else key(p) for p, q in zip(r["players"], pols, strict=True)]),
            random=False,
        ),
        "shipped": [r["aivat"] for r in records],
    }
    order = sorted(POOL, key=lambda p: -exact[p])
    table = Table(title=f"{args.game}: {args.seeds} seeds, {len(records)} games (played in {played:.1f} s)")
    table.add_column("estimate")
    for a, b in zip(order, order[1:], strict=False):
        table.add_column(f"{a} - {b} (exact {exact[a] - exact[b]:+.4f}): SD, mean, seeds for 3 SE")
    for name, figures in variants.items():
        per = _per_seed(records, figures)
        cells = []
        for a, b in zip(order, order[1:], strict=False):
            d = per[a] - per[b]
            need = (3 * d.std() / (exact[a] - exact[b])) ** 2
            cells.append(f"{d.std():.3f}, {d.mean():+.4f}, {need:,.0f}")
        table.add_row(name, *cells)
    Console().print(table)


if __name__ == "__main__":
    main()
