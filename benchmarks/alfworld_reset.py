"""Reset latency of rl4vlm/ALFWorld-v0 beside ALFWorld's own TextWorld env, on the same games.

    .venv/bin/python benchmarks/alfworld_reset.py [--rounds 3] [--core 0]

One process pinned to one core, games from $ALFWORLD_DATA, else the sample games beside the
repository. Each side plays the games in turn: the first round is every game's first reset in the
process (a new game: TextWorld loads it), later rounds replay them (what training does), and
"same game" resets one game again right after itself. ALFWorld's side is TextWorld's gym env with
``AlfredTWEnv.init_env``'s wrappers (demangled names, game file in the infos; no expert, as ours
plans only when asked) and the infos our env reads. Medians and maxima in milliseconds.
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

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "alfworld_sample"  # shipped: tests/data/README.md


def _ms(fn, *args, **kwargs) -> float:  # noqa: ANN001, ANN002, ANN003 - a stopwatch
    start = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1e3


def ours(games: tuple[str, ...], rounds: int) -> dict[str, list[float]]:
    env = gym.make("rl4vlm/ALFWorld-v0", obs_mode="text")
    times: dict[str, list[float]] = {"first": [], "replay": [], "same game": []}
    for r in range(rounds):
        for i in range(len(games)):
            times["first" if r == 0 else "replay"].append(_ms(env.reset, options={"game": i}))
    for i in range(len(games)):
        env.reset(options={"game": i})
        times["same game"].append(_ms(env.reset, options={"game": i}))
    env.close()
    return times


def alfworlds(games: tuple[str, ...], rounds: int) -> dict[str, list[float]]:
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    request = textworld.EnvInfos(won=True, admissible_commands=True, facts=True, extras=["gamefile"])
    wrappers = [AlfredDemangler(shuffle=False), AlfredInfos]
    times: dict[str, list[float]] = {"first": [], "replay": [], "same game": []}
    # one env per game, as TextWorld's gym env cycles its game list in its own order
    envs = [textworld.gym.make(textworld.gym.register_game(g, request, max_episode_steps=50, wrappers=wrappers)) for g in games]
    for r in range(rounds):
        for env in envs:
            times["first" if r == 0 else "replay"].append(_ms(env.reset))
    for env in envs:
        times["same game"].append(_ms(env.reset))
        env.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the games (the first is the first reset)")
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    if SAMPLE.is_dir():
        os.environ.setdefault("ALFWORLD_DATA", str(SAMPLE))
    from rl4vlm_gym.envs.household.alfworld import default_data_dir, find_games

    games = find_games(default_data_dir())
    table = Table("env", "resets", "kind", "p50", "max", title=f"ALFWorld reset latency, ms ({len(games)} games, one core)")
    for name, run in (("rl4vlm/ALFWorld-v0", ours), ("ALFWorld's TextWorld env", alfworlds)):
        for kind, times in run(games, args.rounds).items():
            table.add_row(name, str(len(times)), kind, f"{np.median(times):.0f}", f"{np.max(times):.0f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
