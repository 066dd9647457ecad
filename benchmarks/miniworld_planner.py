"""The navigation oracle's planner and a process's first MiniWorld reset, before and after our
collision test and texture loader (envs/navigation/worlds.py ``intersect``, envs/navigation/textures.py).

    .venv/bin/python benchmarks/miniworld_planner.py [--tasks PickupObjects PutNext Maze Sidewalk] [--seeds 3] [--rounds 3]

Planner: in this process, the start plan of ``--seeds`` seeds of each task, timed with MiniWorld's own
``intersect`` and with ours in alternating rounds (the plans must be equal). First reset: fresh
processes in turn, with MiniWorld's texture loading and with ours (the frames must be equal).
Medians over rounds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import gymnasium as gym

import rl4vlm_gym  # noqa: F401 - registers the ids

_FIRST_RESET = """
import hashlib, sys, time
start = time.perf_counter()
import gymnasium as gym, rl4vlm_gym
if sys.argv[1] == "pyglet":
    from rl4vlm_gym.envs.navigation import textures
    textures.install = lambda: None
env = gym.make(sys.argv[2])
obs, _ = env.reset(seed=0)
print(time.perf_counter() - start, hashlib.sha256(obs["image"].tobytes()).hexdigest()[:12])
"""


def _plans(task: str, seeds: int) -> tuple[float, list[list[str]]]:
    env = gym.make(f"rl4vlm/MiniWorld-{task}-v1", obs_mode="text")
    base, plans, spent = env.unwrapped, [], 0.0
    for seed in range(seeds):
        env.reset(seed=seed)
        start = time.perf_counter()
        plans.append(base._search())
        spent += time.perf_counter() - start
    env.close()
    return spent / seeds, plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=["PickupObjects", "PutNext", "Maze", "Sidewalk"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from rl4vlm_gym.envs.navigation.gl import import_miniworld
    from rl4vlm_gym.envs.navigation.worlds import LevelledWorld

    MiniWorldEnv = import_miniworld().miniworld.MiniWorldEnv  # noqa: N806 - MiniWorld's class

    ours = LevelledWorld.intersect
    for task in args.tasks:
        times: dict[str, list[float]] = {"miniworld": [], "ours": []}
        found = []
        for _ in range(args.rounds):
            for kind, intersect in (("miniworld", MiniWorldEnv.intersect), ("ours", ours)):
                LevelledWorld.intersect = intersect
                seconds, plans = _plans(task, args.seeds)
                times[kind].append(seconds)
                found.append(plans)
        LevelledWorld.intersect = ours
        same = all(plans == found[0] for plans in found)
        print(f"{task:14} start plan: MiniWorld's intersect {statistics.median(times['miniworld']):6.2f} s, "
              f"ours {statistics.median(times['ours']):6.2f} s; plans equal: {same}")  # fmt: skip
    first: dict[str, list[float]] = {"pyglet": [], "numpy": []}
    frames = set()
    for _ in range(args.rounds):
        for kind in first:
            out = subprocess.run([sys.executable, "-c", _FIRST_RESET, kind, "rl4vlm/MiniWorld-PickupObjects-v1"], capture_output=True, text=True, check=True)
            seconds, frame = out.stdout.split()[-2:]
            first[kind].append(float(seconds))
            frames.add(frame)
    print(f"first PickupObjects reset in a fresh process (imports included): pyglet's texture conversion "
          f"{statistics.median(first['pyglet']):.2f} s, numpy's {statistics.median(first['numpy']):.2f} s; frames equal: {len(frames) == 1}")  # fmt: skip


if __name__ == "__main__":
    main()
