"""Steps/s of NumberLine in RayVectorEnv with 1, 2 and 4 actors vs AsyncVectorEnv with as many workers.

Each configuration runs ``--steps`` vector steps after a reset, ``--runs`` times; medians of env
steps/s are printed side by side: AsyncVectorEnv (one process per env) and RayVectorEnv with one env
per actor (equal parallelism, their ratio), and RayVectorEnv with ``--envs-per-worker`` envs per
actor (what batching buys: one remote call per actor per step).
Ray runs locally (``ray.init(num_cpus=<max workers>)``, one logical CPU per actor; its start-up is
not timed). NumberLine is cheap: this measures the backend's overhead per step, the worst case.

    .venv/bin/python benchmarks/ray_vector.py [--workers 1 2 4] [--envs-per-worker 4] [--steps 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import gymnasium as gym
import numpy as np
import ray

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.backends.ray_vector import LOCAL_RAY_CONFIG, RayVectorEnv

ENV = "rl4vlm/NumberLine-v0"


def _make() -> gym.Env:
    return gym.make(ENV)


def steps_per_second(envs: gym.vector.VectorEnv, steps: int) -> float:
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        obs, *_ = envs.step(tuple(legal[rng.integers(len(legal))] for legal in obs["actions"]))
    return steps * envs.num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--envs-per-worker", type=int, default=4)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token written to ~/.ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    temp = tempfile.mkdtemp(prefix="ray")
    # the config RayVectorEnv gives a local Ray of its own
    ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False, _temp_dir=temp, _system_config=LOCAL_RAY_CONFIG)
    k = args.envs_per_worker
    print(f"{ENV}: env steps/s, {args.steps} vector steps, median of {args.runs} runs, {os.cpu_count()} cores")
    print(f"{'workers':>7} {'Async (1 env/proc)':>19} {'Ray (1 env/actor)':>18} {'Ray/Async':>10} {f'Ray ({k} envs/actor)':>20}")
    try:
        for workers in args.workers:
            figures: dict[str, list[float]] = {"async": [], "ray": [], "ray_batched": []}
            for _ in range(args.runs):
                # AsyncVectorEnv runs one process per env: the equal-parallelism comparison is 1 env per worker.
                for key, make in (
                    ("async", lambda w=workers: gym.vector.AsyncVectorEnv([_make] * w, shared_memory=False)),
                    ("ray", lambda w=workers: RayVectorEnv([_make] * w, num_actors=w)),
                    ("ray_batched", lambda w=workers: RayVectorEnv([_make] * (w * k), num_actors=w)),
                ):
                    envs = make()
                    figures[key].append(steps_per_second(envs, args.steps))
                    envs.close()
            a, r, b = (statistics.median(figures[key]) for key in ("async", "ray", "ray_batched"))
            print(f"{workers:>7} {a:>19.0f} {r:>18.0f} {r / a:>10.2f} {b:>20.0f}")
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
