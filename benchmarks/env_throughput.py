"""Environment throughput: steps/s and reset latency per id, obs mode and image size.

    .venv/bin/python benchmarks/env_throughput.py [--ids rl4vlm/EZPoints-v0 ...] [--steps 3000]

Runs in one process pinned to one core, episode resets included. Two step rates: with the
oracle's actions (every step a new state and frame: the figure to quote) and with random
admissible actions (invalid moves included, as an untrained agent plays). Each figure is the
median of ``--repeats`` runs, all measured side by side in one invocation, because this machine
is shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics

from rich.console import Console
from rich.table import Table

import rl4vlm_gym
from rl4vlm_gym.testing import measure_throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", help="env ids (default: every registered id)")
    parser.add_argument("--modes", nargs="*", default=["image+text", "text"], help="obs modes")
    parser.add_argument("--sizes", nargs="*", type=int, default=[300, 224, 448], help="square image sides")
    parser.add_argument("--steps", type=int, default=3000, help="steps per run")
    parser.add_argument("--resets", type=int, default=200, help="timed resets per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median reported)")
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})

    ids = args.ids or [card.id for card in rl4vlm_gym.list_envs()]
    table = Table(
        "id", "obs_mode", "image", "steps/s oracle", "steps/s random", "reset p50 ms", "reset p95 ms",
        title="Env throughput (one core, median of runs)",
    )
    for env_id in ids:
        for obs_mode in args.modes:
            sizes = args.sizes if obs_mode != "text" else args.sizes[:1]
            for side in sizes:
                runs = {
                    policy: [
                        measure_throughput(
                            env_id, steps=args.steps, resets=args.resets, policy=policy, obs_mode=obs_mode, image_size=side
                        )
                        for _ in range(args.repeats)
                    ]
                    for policy in ("oracle", "random")
                }
                table.add_row(
                    env_id,
                    obs_mode,
                    f"{side}x{side}",
                    f"{statistics.median(r['steps_per_s'] for r in runs['oracle']):,.0f}",
                    f"{statistics.median(r['steps_per_s'] for r in runs['random']):,.0f}",
                    f"{statistics.median(r['reset_ms_p50'] for r in runs['oracle']):.3f}",
                    f"{statistics.median(r['reset_ms_p95'] for r in runs['oracle']):.3f}",
                )
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
