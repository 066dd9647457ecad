"""BabaIsAI's start searches (``oracle.SHORTEST_BUDGET`` expansions, the ones the kit's oracle,
observations and decisions checks run at each episode's start): CPU of this tree's ``oracle.py`` and
``engine.py`` against a revision's (``git show REV:envs/balrog/babaisai/...``, loaded beside them), sides
alternating in one process, medians of ``--rounds``; fails if a start's plan or expansions differ.

    .venv/bin/python benchmarks/balrog_babaisai_search_cost.py --rev HEAD~1 --every 3 --seeds 3 --rounds 3
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import rl4vlm_gym
from rl4vlm_gym.envs.balrog.babaisai import oracle as here
from rl4vlm_gym.envs.balrog.babaisai.game import MAX_STEPS


def _load(rev: str, name: str):  # noqa: ANN202 - a module
    text = subprocess.run(
        ["git", "show", f"{rev}:envs/balrog/babaisai/{name}.py"], check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / f"{name}_rev.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"{name}_rev", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _revision(rev: str):  # noqa: ANN202 - a module
    """The revision's oracle playing on the revision's rules engine."""
    oracle = _load(rev, "oracle")
    oracle.E = _load(rev, "engine")
    return oracle


def _as(engine, world):  # noqa: ANN001, ANN202 - a copy of ``world`` made of ``engine``'s World
    other = engine.World(world.width, world.height)
    for name in engine.World.__slots__:
        value = getattr(world, name)
        setattr(other, name, value.copy() if isinstance(value, (list, dict, bytearray)) else value)
    return other


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="HEAD~1")
    parser.add_argument("--every", type=int, default=1, help="every n-th of the 40 BabaIsAI ids")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rev = _revision(args.rev)
    ids = [card.id for card in rl4vlm_gym.list_envs() if "BabaIsAI" in card.id][:: args.every]
    starts = []
    for env_id in ids:
        env = gym.make(env_id)
        for seed in range(args.seeds):
            env.reset(seed=seed)
            starts.append(env.unwrapped._start_world.copy())
    rev_starts = [_as(rev.E, world) for world in starts]
    times: dict[str, list[float]] = {"rev": [], "here": []}
    results: dict[str, list] = {}
    for _ in range(args.rounds):
        for name, module in (("rev", rev), ("here", here)):
            began, found = time.process_time(), []
            for world in starts if module is here else rev_starts:
                solver = module.Solver(world, MAX_STEPS)
                found.append((solver.shortest_plan(module.SHORTEST_BUDGET), solver.expanded))
            times[name].append(time.process_time() - began)
            results[name] = found
    same = results["rev"] == results["here"]
    gave_up = sum(plan is None for plan, _ in results["here"])
    print(f"{len(starts)} starts ({len(ids)} ids x {args.seeds} seeds), {gave_up} gave up; results equal: {same}")
    for name in times:
        print(f"{name:>5}: median {statistics.median(times[name]):.2f} s CPU  ({', '.join(f'{t:.2f}' for t in times[name])})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
