"""The Ray backend against local parallelism: vector-env steps/s and suite wall time, 1-8 workers.

Two envs: NumberLine (a cheap text step: the backend's overhead per step, the worst case) and
MiniWorld OneRoom at 224x224 (an expensive rendered step, about 3-4 ms of CPU). For each worker
count N:

- **vector steps/s**: ``AsyncVectorEnv`` with N envs (one spawned process each; ``async`` sends
  observations pickled through pipes, ``shm`` through shared memory, Gymnasium's default) vs
  ``RayVectorEnv`` with N envs in N actors (equal parallelism, same envs and obs_mode; ``ray``
  as it runs by default, over each actor's socket on this machine, ``rpc`` with Ray remote calls
  as between machines, ``direct=False``; ``ray/async`` and ``ray/shm`` are the overhead) and with
  ``--envs-per-worker`` envs per actor (what batching buys); ``eff`` is the scaling efficiency of
  Ray's steps/s, ``steps/s(N) / (N x steps/s(1))``. MiniWorld renders with Mesa's llvmpipe, which
  by default rasterizes on a thread per core in every process (so one env keeps about 1.3 of our 2
  cores busy); a Ray actor renders with the CPUs it asked for, one here
  (:func:`~rl4vlm_gym.backends.ray_init.set_render_threads_if_unset`), an AsyncVectorEnv worker with
  all the cores. So for MiniWorld two more columns compare like with like: ``shm1`` runs the
  AsyncVectorEnv workers with ``LP_NUM_THREADS=0`` (one render thread each, as the actors), and
  ``mesa`` runs the actors with llvmpipe's default (a thread per core, as the workers), with its
  own ``eff``;
- **CPU ms per env step** of each vector env: the CPU time of this process and all its
  descendants (env workers, actors, Ray's own processes) while stepping, per env step. Unlike
  steps/s it hardly depends on what else runs on the machine: on a busy machine it is the figure
  to compare;
- **transport**: microseconds per vector step of one env that only returns a 224x224 image (what
  carrying a call and its observation costs, without an env's work), AsyncVectorEnv with pipes
  and shared memory vs RayVectorEnv over its socket and with remote calls;
- **suite wall time**: ``run_suite`` (what ``rl4vlm-gym eval`` runs) of a suite of random-agent
  episodes with ``--workers N`` (spawned processes) vs ``--backend ray --workers N`` (actors),
  start-up of the workers included (what a user waits for); Ray's own start is not timed.

Ray runs locally with ``num_cpus=max(N)`` logical CPUs, one per actor, whatever the cores, and the
config ``RayVectorEnv`` gives a local Ray of its own. Medians of ``--runs`` runs. On a machine with fewer cores than N, neither backend can scale past the cores:
read the efficiency up to the core count only.

    .venv/bin/python benchmarks/ray_scaling.py [--workers 1 2 4 8] [--runs 3] [--only transport numberline miniworld] [--no-suite]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial

import gymnasium as gym
import numpy as np
import ray

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.backends.ray_init import _descendants, init_ray
from rl4vlm_gym.backends.ray_vector import LOCAL_RAY_CONFIG, RayVectorEnv
from rl4vlm_gym.harness.runner import AgentSpec, run_suite
from rl4vlm_gym.harness.suite import Suite

# MiniWorld renders with Mesa's llvmpipe: its columns with the other backend's render threads.
RENDERS_WITH_MESA = {"miniworld"}
MESA_DEFAULT = {"runtime_env": {"env_vars": {"LP_NUM_THREADS": str(os.cpu_count())}}}  # a thread per core


def one_render_thread(make: Callable[[], gym.vector.VectorEnv]) -> gym.vector.VectorEnv:
    """``make()`` with ``LP_NUM_THREADS=0`` in the environment its spawned workers inherit."""
    old = os.environ.get("LP_NUM_THREADS")
    os.environ["LP_NUM_THREADS"] = "0"
    try:
        return make()
    finally:
        if old is None:
            del os.environ["LP_NUM_THREADS"]
        else:
            os.environ["LP_NUM_THREADS"] = old


ENVS = {
    # name: (id, make kwargs, vector steps per measurement, suite episodes, episode steps)
    "numberline": ("rl4vlm/NumberLine-v0", {"obs_mode": "text"}, 300, 64, 20),
    "miniworld": ("rl4vlm/MiniWorld-OneRoom-v1", {"image_size": (224, 224)}, 200, 16, 20),
}


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds() -> float:
    """CPU time (user + system) so far of this process and its descendants alive now (from /proc)."""
    total = 0
    for pid in {os.getpid(), *_descendants(os.getpid())}:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass  # ended meanwhile
    return total / _TICK


def steps_per_second(envs: gym.vector.VectorEnv, steps: int) -> tuple[float, float]:
    """Env steps/s and CPU ms per env step, after ``steps // 10`` untimed steps (a new worker's first
    steps are slower: imports, llvmpipe compiling its shaders)."""
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=0)
    for _ in range(steps // 10):
        obs, *_ = envs.step(tuple(legal[rng.integers(len(legal))] for legal in obs["actions"]))
    cpu, start = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        obs, *_ = envs.step(tuple(legal[rng.integers(len(legal))] for legal in obs["actions"]))
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return steps * envs.num_envs / elapsed, 1000 * cpu / (steps * envs.num_envs)


def suite_seconds(suite: Suite, out: str, **kwargs: object) -> float:
    start = time.perf_counter()
    run_suite(suite, AgentSpec("random", {"seed": 0}), out, **kwargs)
    return time.perf_counter() - start


class ImageEcho(gym.Env):
    """Returns a 224x224 image and nothing else: a vector env's cost of carrying a step."""

    observation_space = gym.spaces.Box(0, 255, (224, 224, 3), np.uint8)
    action_space = gym.spaces.Discrete(255)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.full((224, 224, 3), 7, np.uint8), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.full((224, 224, 3), action, np.uint8), 0.0, False, False, {}


def transport(runs: int, steps: int = 1000) -> None:
    def us_per_step(envs: gym.vector.VectorEnv, n: int) -> float:
        envs.reset(seed=0)
        actions = np.ones(1, np.int64)
        for _ in range(n // 10):
            envs.step(actions)
        start = time.perf_counter()
        for _ in range(n):
            envs.step(actions)
        elapsed = time.perf_counter() - start
        envs.close()
        return 1e6 * elapsed / n

    vectors = {
        "async": lambda: gym.vector.AsyncVectorEnv([ImageEcho], shared_memory=False),
        "shm": lambda: gym.vector.AsyncVectorEnv([ImageEcho], shared_memory=True),
        "ray": lambda: RayVectorEnv([ImageEcho], num_actors=1),
        "rpc": lambda: RayVectorEnv([ImageEcho], num_actors=1, direct=False),
    }
    figures: dict[str, list[float]] = {key: [] for key in vectors}
    for _ in range(runs):
        for key, make in vectors.items():
            figures[key].append(us_per_step(make(), steps if key != "rpc" else steps // 4))
    print(f"\ntransport: us per vector step of one env returning a 224x224 image, median of {runs} runs")
    print(" ".join(f"{key:>7}" for key in vectors))
    print(" ".join(f"{statistics.median(figures[key]):>7.0f}" for key in vectors), flush=True)


def bench(name: str, workers: list[int], runs: int, per_worker: int, temp: str, suite_too: bool) -> None:
    env_id, kwargs, steps, episodes, episode_steps = ENVS[name]
    make = partial(gym.make, env_id, **kwargs)
    task = {"name": name, "env": env_id, "seeds": list(range(episodes)), "kwargs": kwargs}
    if "obs_mode" in kwargs:
        task = {**task, "obs_mode": kwargs["obs_mode"], "kwargs": {}}
    suite = Suite.from_dict({"name": f"bench-{name}", "axis": "smoke", "max_steps": episode_steps, "tasks": [task]})
    print(f"\n{env_id} {kwargs}: env steps/s ({steps} vector steps) and wall time of {episodes} episodes x {episode_steps} steps")
    vectors = ("async", "shm", "shm1", "ray", "rpc", "mesa", "batched")  # the columns, in factories' order
    print(
        f"{'N':>3} {'load':>5} {'async':>7} {'shm':>7} {'shm1':>7} {'ray':>7} {'rpc':>7} {'mesa':>7} {'ray/async':>9}"
        f" {'ray/shm':>7} {'ray/shm1':>8} {'mesa/shm':>8} {'eff':>5} {'mesa eff':>8} {f'ray {per_worker}/actor':>11}"
        f" | CPU ms/step: " + " ".join(f"{k:>{max(6, len(k))}}" for k in vectors)
        + (f" | {'local s':>7} {'ray s':>6} {'ray/local':>9}" if suite_too else "")
    )
    base = base_mesa = None
    for n in workers:
        rates: dict[str, list[float]] = {k: [] for k in vectors}
        cpu: dict[str, list[float]] = {k: [] for k in vectors}
        seconds: dict[str, list[float]] = {"local": [], "ray": []}
        load = os.getloadavg()[0]
        shm = partial(gym.vector.AsyncVectorEnv, [make] * n, shared_memory=True, context="spawn")
        factories = {
            # spawn: MiniWorld's OpenGL context does not survive fork (the suite runs render here)
            "async": partial(gym.vector.AsyncVectorEnv, [make] * n, shared_memory=False, context="spawn"),
            "shm": shm,
            "shm1": partial(one_render_thread, shm),
            "ray": partial(RayVectorEnv, [make] * n, num_actors=n),
            "rpc": partial(RayVectorEnv, [make] * n, num_actors=n, direct=False),
            "mesa": partial(RayVectorEnv, [make] * n, num_actors=n, actor_options=MESA_DEFAULT),
            "batched": partial(RayVectorEnv, [make] * (n * per_worker), num_actors=n),
        }
        for run in range(runs):
            for key, vector in factories.items():
                if key in ("shm1", "mesa") and name not in RENDERS_WITH_MESA:
                    rates[key].append(float("nan"))
                    cpu[key].append(float("nan"))
                    continue
                envs = vector()
                rate, ms = steps_per_second(envs, steps)
                rates[key].append(rate)
                cpu[key].append(ms)
                envs.close()
            if suite_too:
                seconds["local"].append(suite_seconds(suite, f"{temp}/{name}-local-{n}-{run}", workers=n))
                seconds["ray"].append(suite_seconds(suite, f"{temp}/{name}-ray-{n}-{run}", workers=n, backend="ray"))
        load = (load + os.getloadavg()[0]) / 2
        med = {k: statistics.median(rates[k]) for k in vectors}
        ray_, mesa = med["ray"], med["mesa"]
        base, base_mesa = base or ray_, base_mesa or mesa
        line = (
            f"{n:>3} {load:>5.1f} " + " ".join(f"{med[k]:>7.0f}" for k in vectors[:-1])
            + f" {ray_ / med['async']:>9.2f} {ray_ / med['shm']:>7.2f} {ray_ / med['shm1']:>8.2f} {mesa / med['shm']:>8.2f}"
            f" {ray_ / (n * base):>5.2f} {mesa / (n * base_mesa):>8.2f} {med['batched']:>11.0f}"
            f" | {'':>12} " + " ".join(f"{statistics.median(cpu[k]):>{max(6, len(k))}.2f}" for k in vectors)
        )
        if suite_too:
            ls, rs = statistics.median(seconds["local"]), statistics.median(seconds["ray"])
            line += f" | {ls:>7.1f} {rs:>6.1f} {rs / ls:>9.2f}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--envs-per-worker", type=int, default=4)
    parser.add_argument("--only", choices=["transport", *ENVS], nargs="+", default=["transport", *sorted(ENVS, reverse=True)])
    parser.add_argument("--no-suite", action="store_true", help="only the vector envs, not the suites' wall time")
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token written to ~/.ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    temp = tempfile.mkdtemp(prefix="ray")
    start = time.perf_counter()
    owned = init_ray(
        num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False, _temp_dir=temp, _system_config=LOCAL_RAY_CONFIG
    )
    print(f"ray.init: {time.perf_counter() - start:.1f} s; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    try:
        for name in args.only:
            if name == "transport":
                transport(args.runs)
            else:
                bench(name, args.workers, args.runs, args.envs_per_worker, temp, not args.no_suite)
    finally:
        ray.shutdown()
        owned.release()
        shutil.rmtree(temp, ignore_errors=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
