"""What the evaluation harness costs, and what parallel workers buy.

1. Overhead per step: the same agent and env, the same episodes, played by a bare loop
   (``reset``, ``act``, ``step``) and by ``run_suite`` with one worker (records, JSONL with an
   fsync per episode, resume bookkeeping). Rounds alternate the two, and the medians are quoted.
2. Workers: a suite played by 1 and by 2 worker processes (spawned, each making its own agent and
   envs), wall time end to end.

    .venv/bin/python benchmarks/harness_overhead.py [--episodes 200] [--rounds 5] [--suite navigation]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import rl4vlm_gym  # noqa: F401
from rl4vlm_gym.agents import make_agent
from rl4vlm_gym.harness.runner import AgentSpec, run_suite
from rl4vlm_gym.harness.suite import Suite, load_suite


def bare_loop(suite: Suite, agent_name: str) -> tuple[float, int]:
    """Seconds and steps for every episode of ``suite`` without the harness."""
    agent = make_agent(agent_name)
    steps = 0
    start = time.perf_counter()
    for task in suite.tasks:
        env = gym.make(task.env, **task.make_kwargs)
        for seed in task.seeds:
            obs, _ = env.reset(seed=seed)
            agent.begin(env, seed)
            while True:
                obs, _, terminated, truncated, _ = env.step(agent.act(obs))
                steps += 1
                if terminated or truncated:
                    break
        env.close()
    return time.perf_counter() - start, steps


def harness(suite: Suite, agent_name: str, workers: int = 1) -> float:
    folder = Path(tempfile.mkdtemp(prefix="rl4vlm-bench-"))
    try:
        start = time.perf_counter()
        run_suite(suite, AgentSpec(agent_name), folder, workers=workers)
        return time.perf_counter() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200, help="episodes of the overhead suite")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--suite", default="navigation", help="suite for the 1-vs-2-workers figure")
    args = parser.parse_args()

    overhead_suite = Suite.from_dict(
        {
            "name": "overhead",
            "axis": "smoke",
            "max_steps": 20,
            "tasks": [{"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 2, "obs_mode": "text", "seeds": list(range(args.episodes))}],
        }
    )
    bare, with_harness, n_steps = [], [], 0
    for _ in range(args.rounds):
        seconds, n_steps = bare_loop(overhead_suite, "random")
        bare.append(seconds)
        with_harness.append(harness(overhead_suite, "random"))
    per_step = [(h - b) / n_steps * 1e3 for h, b in zip(with_harness, bare, strict=True)]
    print(f"overhead suite: NumberLine level 2, text, random agent, {args.episodes} episodes, {n_steps} steps, {args.rounds} rounds")
    print(f"  bare loop      median {statistics.median(bare):.3f} s  ({statistics.median(bare) / n_steps * 1e3:.3f} ms/step)")
    print(f"  run_suite (1)  median {statistics.median(with_harness):.3f} s  ({statistics.median(with_harness) / n_steps * 1e3:.3f} ms/step)")
    print(f"  harness overhead per step: median {statistics.median(per_step):.3f} ms (rounds: {', '.join(f'{x:.3f}' for x in per_step)})")

    suite = load_suite(args.suite)
    one, two = [], []
    for _ in range(max(1, args.rounds // 2)):
        one.append(harness(suite, "random", workers=1))
        two.append(harness(suite, "random", workers=2))
    print(f"workers: suite {suite.name!r} ({len(suite.episodes)} episodes), random agent")
    print(f"  1 worker   median {statistics.median(one):.1f} s  ({', '.join(f'{x:.1f}' for x in one)})")
    print(f"  2 workers  median {statistics.median(two):.1f} s  ({', '.join(f'{x:.1f}' for x in two)})")
    print(f"  speed-up {statistics.median(one) / statistics.median(two):.2f}x")


if __name__ == "__main__":
    main()
