"""Reset and step latency of the procedural households beside real ALFWorld games.

    .venv/bin/python benchmarks/household_latency.py [--episodes 300] [--alfworld-resets 12]

One process pinned to one core. Procedural households: ``--episodes`` episodes at every level
of ``rl4vlm/Household-v0``, each reset timed, then the oracle's steps and as many random
admissible commands timed one by one. Real ALFWorld (``rl4vlm/ALFWorld-v0`` on $ALFWORLD_DATA,
else the sample games beside the repository): ``--alfworld-resets`` resets cycling over the
games, each followed by its expert's steps and random commands. Both run in ``text`` and
``image+text`` modes in the same invocation (the machine is shared and noisy); the table gives
medians and 95th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym  # noqa: F401 - registers the ids
from rl4vlm_gym.core import MissingDataError

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "alfworld_sample"  # shipped: tests/data/README.md


def _time(fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - a stopwatch
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1e3, out


def measure(env: gym.Env, episodes: int, rng: np.random.Generator, levels: int) -> tuple[list[float], list[float]]:
    """Reset and step latencies (ms) over ``episodes`` episodes: oracle steps, then random ones."""
    resets: list[float] = []
    steps: list[float] = []
    base = env.unwrapped
    for i in range(episodes):
        ms, (obs, _) = _time(env.reset, seed=i, options={"level": i % levels})
        resets.append(ms)
        done = False
        while not done:  # the oracle's steps: every one changes the state and the frame
            ms, (obs, _, terminated, truncated, _) = _time(env.step, base.oracle_action())
            steps.append(ms)
            done = terminated or truncated
        obs, _ = env.reset(seed=i, options={"level": i % levels})
        for _ in range(8):  # random admissible commands, as an untrained agent plays
            ms, (obs, _, terminated, truncated, _) = _time(env.step, obs["actions"][rng.integers(len(obs["actions"]))])
            steps.append(ms)
            if terminated or truncated:
                break
    return resets, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=300, help="procedural episodes per obs mode")
    parser.add_argument("--alfworld-resets", type=int, default=12, help="real ALFWorld resets per obs mode")
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    if SAMPLE.is_dir():
        os.environ.setdefault("ALFWORLD_DATA", str(SAMPLE))

    table = Table("env", "obs_mode", "resets", "reset p50", "reset p95", "steps", "step p50", "step p95",
                  title="Household latency, ms (one core)")  # fmt: skip
    rng = np.random.default_rng(0)
    for obs_mode in ("text", "image+text"):
        runs = [("rl4vlm/Household-v0", args.episodes, 5), ("rl4vlm/ALFWorld-v0", args.alfworld_resets, 1)]
        for env_id, episodes, levels in runs:
            try:
                env = gym.make(env_id, obs_mode=obs_mode)
            except MissingDataError as err:
                table.add_row(env_id, obs_mode, f"no data: {err}"[:60], "", "", "", "", "")
                continue
            resets, steps = measure(env, episodes, rng, levels)
            env.close()
            table.add_row(
                env_id, obs_mode, str(len(resets)),
                f"{np.median(resets):.3f}", f"{np.percentile(resets, 95):.3f}",
                str(len(steps)), f"{np.median(steps):.3f}", f"{np.percentile(steps, 95):.3f}",
            )  # fmt: skip
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
