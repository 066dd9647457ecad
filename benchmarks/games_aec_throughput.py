"""Throughput of the multi-agent board games (PettingZoo AEC API): agent steps/s per obs mode.

    .venv/bin/python benchmarks/games_aec_throughput.py [--steps 3000] [--size 256]

Both seats write random legal moves (every step a new board and frame), each agent observes
before it acts as an AEC loop does (``env.last()``), games restart when they end. The single-
agent views (``rl4vlm/TicTacToe-vs-*``, ``rl4vlm/ConnectFour-vs-*``) are measured by
``benchmarks/env_throughput.py`` like every other id.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from rl4vlm_gym.envs.games.aec import connect_four_env, tictactoe_env
from rl4vlm_gym.envs.games.kuhn_aec import kuhn_poker_env


def measure(factory, steps: int, **kwargs) -> float:  # noqa: ANN001
    env = factory(**kwargs)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    start, done = time.perf_counter(), 0
    while done < steps:
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
            done += 1
            if done >= steps:
                break
        env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3000, help="agent steps per figure")
    parser.add_argument("--size", type=int, default=256, help="square image side")
    args = parser.parse_args()
    table = Table("game", "obs_mode", "agent steps/s")
    for name, factory in (("tictactoe", tictactoe_env), ("connect_four", connect_four_env), ("kuhn_poker", kuhn_poker_env)):
        for mode in ("image+text", "text"):
            table.add_row(name, mode, f"{measure(factory, args.steps, obs_mode=mode, image_size=args.size):,.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
