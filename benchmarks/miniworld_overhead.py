"""Our navigation wrapper against raw MiniWorld: step time on the same task, resolution and actions.

    .venv/bin/python benchmarks/miniworld_overhead.py [--tasks OneRoom Hallway] [--sizes 60x80 240x320]
    .venv/bin/python benchmarks/miniworld_overhead.py --render-process [--core -1]

Both envs run in this one process, pinned to one core, taking the same random sequence of the
three movement actions (episodes reset when they end, resets untimed); rounds alternate raw and
wrapped so machine noise hits both alike, and each figure is the median over rounds. The wrapper
runs in ``image`` mode (what raw MiniWorld gives: a camera frame) and in ``image+text`` mode (plus
the text description).

``--render-process`` compares instead our env rendering in its own process (``render_process=True``,
the frames drawn by a render process) with in-process rendering, in ``image`` mode: wall time per
step and CPU time per step (this process's plus the render process's, every thread, from
/proc/PID/task/*/schedstat), medians over blocks of ``--steps`` steps, the two envs taking turns.
Pinning (``--core``) pins the render process to the same core. Use many short blocks on a busy
machine (``--rounds 30 --steps 25``), and read the load it prints.

Measured on a 2-core machine loaded by other jobs (issue 37), OneRoom, ``--rounds 30 --steps 25``, runs of
the code before (51936ba) and after interleaved, the frame cache off. Load 3-6, three runs each: 60x80
wall 1.13/1.28/1.23x before, 0.96/1.09/1.03x after; CPU 1.18/1.09/1.40x before, 1.17/1.19/0.92x after;
240x320 wall 1.05/1.02/1.02x before, 0.99/1.00/0.98x after; CPU 1.15/1.11/1.06x before, 1.07/1.02/1.01x
after. At a load of 11-20 the wall figures swing by +-30% between runs of the same code (60x80 before
0.67-1.71x, after 0.90-1.20x). What is left at 60x80 is the CPU of waking the other process twice a
step (~0.1 ms of a ~0.7 ms step); the wall time hides it by drawing while the env finishes its step.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym  # noqa: F401 - registers the ids
from rl4vlm_gym.envs.navigation.gl import import_miniworld

MOVES = ("turn left", "turn right", "move forward")


def _round(step, reset, actions: np.ndarray) -> float:
    """Seconds per step over ``actions`` (resets excluded)."""
    reset()
    spent = 0.0
    for action in actions:
        start = time.perf_counter()
        done = step(int(action))
        spent += time.perf_counter() - start
        if done:
            reset()
    return spent / len(actions)


def measure(task: str, height: int, width: int, rounds: int, steps: int, rng: np.random.Generator) -> dict[str, float]:
    """Median ms/step of raw MiniWorld and of our env in ``image`` and ``image+text`` modes."""
    raw = gym.make(f"MiniWorld-{task}-v0", obs_width=width, obs_height=height, max_episode_steps=10**9).unwrapped
    ours = {mode: gym.make(f"rl4vlm/MiniWorld-{task}-v1", image_size=(height, width), obs_mode=mode).unwrapped for mode in ("image", "image+text")}
    seeds = iter(range(10**6))
    envs = {
        "raw": (lambda a: bool(raw.step(a)[2]), lambda: raw.reset(seed=next(seeds))),
        **{
            mode: (lambda a, env=env: bool(env.step(MOVES[a])[2]), lambda env=env: env.reset(seed=next(seeds)))
            for mode, env in ours.items()
        },
    }
    times: dict[str, list[float]] = {name: [] for name in envs}
    for _ in range(rounds):
        actions = rng.integers(3, size=steps)
        for name, (step, reset) in envs.items():
            times[name].append(_round(step, reset, actions))
    raw.close()
    for env in ours.values():
        env.close()
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def _cpu(pids: list[int]) -> float:
    """CPU seconds used so far by these processes, all their threads, from /proc (nanoseconds; the
    clock ticks of /proc/PID/stat are 10 ms, too coarse for a block of steps)."""
    total = 0
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                total += int(stat.read().split()[0])
    return total / 1e9


def measure_render_process(task: str, height: int, width: int, rounds: int, steps: int, rng: np.random.Generator) -> dict[str, float]:
    """Median ms/step, wall and CPU, of our env in ``image`` mode rendering in-process and in a render
    process: ``rounds`` blocks of ``steps`` steps each, the two envs taking turns (which goes first
    alternates), so load changes hit both alike."""
    envs = {
        name: gym.make(f"rl4vlm/MiniWorld-{task}-v1", image_size=(height, width), obs_mode="image", render_process=remote).unwrapped
        for name, remote in (("in-process", False), ("render process", True))
    }
    seeds = iter(range(10**6))
    for env in envs.values():
        env.reset(seed=0)  # starts the render process
    scene = envs["render process"].world.scene
    helper = [scene.renderer().process_id] if scene is not None else []
    pids = {"in-process": [os.getpid()], "render process": [os.getpid(), *helper]}
    wall: dict[str, list[float]] = {name: [] for name in envs}
    cpu: dict[str, list[float]] = {name: [] for name in envs}
    for block in range(rounds):
        actions = rng.integers(3, size=steps)
        for name, env in list(envs.items())[:: 1 if block % 2 else -1]:
            before = _cpu(pids[name])
            wall[name].append(_round(lambda a, env=env: bool(env.step(MOVES[a])[2]), lambda env=env: env.reset(seed=next(seeds)), actions))
            cpu[name].append((_cpu(pids[name]) - before) / steps)  # resets included (a few per block, the same for both)
    for env in envs.values():
        env.close()
    return {f"{kind} {name}": statistics.median(values[name]) * 1e3 for kind, values in (("wall", wall), ("cpu", cpu)) for name in envs}


def main_render_process(args: argparse.Namespace) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    table = Table("task", "image", "in-process ms/step", "render process ms/step", "ratio", "in-process CPU ms/step",
                  "render process CPU ms/step", "CPU ratio",
                  title=f"Step time, median of {args.rounds} alternating blocks of {args.steps} steps (load {load} at the start)")  # fmt: skip
    rng = np.random.default_rng(0)
    for task in args.tasks:
        for size in args.sizes:
            height, width = (int(v) for v in size.split("x"))
            m = measure_render_process(task, height, width, args.rounds, args.steps, rng)
            a, b, c, d = m["wall in-process"], m["wall render process"], m["cpu in-process"], m["cpu render process"]
            table.add_row(task, f"{height}x{width}", f"{a:.3f}", f"{b:.3f}", f"{b / a:.3f}x", f"{c:.3f}", f"{d:.3f}", f"{d / c:.3f}x")
    Console(width=200).print(table)
    print(f"load at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="*", default=["OneRoom", "Hallway", "FourRooms", "WallGap"])
    parser.add_argument("--sizes", nargs="*", default=["60x80", "240x320"], help="HEIGHTxWIDTH")
    parser.add_argument("--steps", type=int, default=600, help="steps per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    parser.add_argument("--render-process", action="store_true", help="compare in-process rendering with a render process")
    parser.add_argument("--frame-cache", action="store_true", help="with --render-process: keep the render process's frame cache "
                        "on (a random walk revisits poses, so it flatters the render process; off by default)")  # fmt: skip
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    import_miniworld()
    if args.render_process:
        if not args.frame_cache:
            from rl4vlm_gym.envs.navigation import gl_process

            gl_process.FRAME_CACHE_BYTES = 0  # every frame drawn: the drawing path's cost, not the walk's repeats
        main_render_process(args)
        return

    table = Table("task", "image", "raw MiniWorld ms/step", "ours image", "ours image+text", "ratio image", "ratio image+text",
                  title=f"Step time, median of {args.rounds} alternating rounds of {args.steps} steps (one core)")  # fmt: skip
    rng = np.random.default_rng(0)
    for task in args.tasks:
        for size in args.sizes:
            height, width = (int(v) for v in size.split("x"))
            med = measure(task, height, width, args.rounds, args.steps, rng)
            table.add_row(
                task, f"{height}x{width}", f"{med['raw']:.3f}", f"{med['image']:.3f}", f"{med['image+text']:.3f}",
                f"{med['image'] / med['raw']:.3f}x", f"{med['image+text'] / med['raw']:.3f}x",
            )  # fmt: skip
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
