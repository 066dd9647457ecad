"""The Ray backend against local parallelism: vector-env steps/s and suite wall time, 1-8 workers.

Two envs: NumberLine (a cheap text step: the backend's overhead per step, the worst case) and
MiniWorld OneRoom at 224x224 (an expensive rendered step, about 3-4 ms of CPU). For each worker
count N:

- **vector steps/s**: ``AsyncVectorEnv`` with N envs (one spawned process each; ``async`` sends
  observations pickled through pipes, ``shm`` through shared memory, Gymnasium's default) vs
  ``RayVectorEnv`` with N envs in N actors (equal parallelism, same envs and obs_mode, called
  through Ray Compiled Graphs; ``ray/async`` and ``ray/shm`` are the overhead) and with
  ``--envs-per-worker`` envs per actor (what batching buys); ``eff`` is the scaling efficiency of
  Ray's steps/s, ``steps/s(N) / (N x steps/s(1))``;
- **suite wall time**: ``run_suite`` (what ``rl4vlm-gym eval`` runs) of a suite of random-agent
  episodes with ``--workers N`` (spawned processes) vs ``--backend ray --workers N`` (actors),
  start-up of the workers included (what a user waits for); Ray's own start is not timed.

Ray runs locally with ``num_cpus=max(N)`` logical CPUs, one per actor, whatever the cores. Medians
of ``--runs`` runs. On a machine with fewer cores than N, neither backend can scale past the cores:
read the efficiency up to the core count only.

    .venv/bin/python benchmarks/ray_scaling.py [--workers 1 2 4 8] [--runs 3] [--only numberline|miniworld]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from functools import partial

import gymnasium as gym
import numpy as np
import ray

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.backends.ray_vector import RayVectorEnv
from rl4vlm_gym.harness.runner import AgentSpec, run_suite
from rl4vlm_gym.harness.suite import Suite

ENVS = {
    # name: (id, make kwargs, vector steps per measurement, suite episodes, episode steps)
    "numberline": ("rl4vlm/NumberLine-v0", {"obs_mode": "text"}, 300, 64, 20),
    "miniworld": ("rl4vlm/MiniWorld-OneRoom-v1", {"image_size": (224, 224)}, 40, 16, 20),
}


def steps_per_second(envs: gym.vector.VectorEnv, steps: int) -> float:
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        obs, *_ = envs.step(tuple(legal[rng.integers(len(legal))] for legal in obs["actions"]))
    return steps * envs.num_envs / (time.perf_counter() - start)


def suite_seconds(suite: Suite, out: str, **kwargs: object) -> float:
    start = time.perf_counter()
    run_suite(suite, AgentSpec("random", {"seed": 0}), out, **kwargs)
    return time.perf_counter() - start


def bench(name: str, workers: list[int], runs: int, per_worker: int, temp: str) -> None:
    env_id, kwargs, steps, episodes, episode_steps = ENVS[name]
    make = partial(gym.make, env_id, **kwargs)
    task = {"name": name, "env": env_id, "seeds": list(range(episodes)), "kwargs": kwargs}
    if "obs_mode" in kwargs:
        task = {**task, "obs_mode": kwargs["obs_mode"], "kwargs": {}}
    suite = Suite.from_dict({"name": f"bench-{name}", "axis": "smoke", "max_steps": episode_steps, "tasks": [task]})
    print(f"\n{env_id} {kwargs}: env steps/s ({steps} vector steps) and wall time of {episodes} episodes x {episode_steps} steps")
    print(
        f"{'N':>3} {'async':>8} {'shm':>8} {'ray':>8} {'ray/async':>9} {'ray/shm':>7} {'eff':>5} {f'ray {per_worker}/actor':>12}"
        f" {'local s':>8} {'ray s':>7} {'ray/local':>9}"
    )
    base = None
    for n in workers:
        figures: dict[str, list[float]] = {k: [] for k in ("async", "shm", "ray", "batched", "local_s", "ray_s")}
        for run in range(runs):
            for key, vector in (
                # spawn: MiniWorld's OpenGL context does not survive fork (the suite runs render here)
                ("async", lambda n=n: gym.vector.AsyncVectorEnv([make] * n, shared_memory=False, context="spawn")),
                ("shm", lambda n=n: gym.vector.AsyncVectorEnv([make] * n, shared_memory=True, context="spawn")),
                ("ray", lambda n=n: RayVectorEnv([make] * n, num_actors=n)),
                ("batched", lambda n=n: RayVectorEnv([make] * (n * per_worker), num_actors=n)),
            ):
                envs = vector()
                figures[key].append(steps_per_second(envs, steps))
                envs.close()
            figures["local_s"].append(suite_seconds(suite, f"{temp}/{name}-local-{n}-{run}", workers=n))
            figures["ray_s"].append(suite_seconds(suite, f"{temp}/{name}-ray-{n}-{run}", workers=n, backend="ray"))
        a, m, r, b, ls, rs = (statistics.median(figures[k]) for k in ("async", "shm", "ray", "batched", "local_s", "ray_s"))
        base = base or r
        print(
            f"{n:>3} {a:>8.0f} {m:>8.0f} {r:>8.0f} {r / a:>9.2f} {r / m:>7.2f} {r / (n * base):>5.2f} {b:>12.0f}"
            f" {ls:>8.1f} {rs:>7.1f} {rs / ls:>9.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--envs-per-worker", type=int, default=4)
    parser.add_argument("--only", choices=sorted(ENVS), nargs="+", default=sorted(ENVS, reverse=True))
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token written to ~/.ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    temp = tempfile.mkdtemp(prefix="ray")
    start = time.perf_counter()
    ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False, _temp_dir=temp)
    print(f"ray.init: {time.perf_counter() - start:.1f} s; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    try:
        for name in args.only:
            bench(name, args.workers, args.runs, args.envs_per_worker, temp)
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
