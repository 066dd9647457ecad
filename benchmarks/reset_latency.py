"""Reset latency with and without the oracle's plan: MiniWorld ids at 60x80, ALFWorld beside ALFWorld.

    .venv/bin/python benchmarks/reset_latency.py [--resets 30] [--planned-resets 8] [--alfworld-rounds 2]

One process pinned to one core. MiniWorld: every navigation id at its default level (``--levels all``
for every level), ``--resets`` resets on seeds 0.. as made (the planner does not run) and
``--planned-resets`` with ``optimal_steps_at_reset=True`` (the planner runs at every reset, as it did
before it became lazy). ALFWorld: ``rl4vlm/ALFWorld-v0`` (``text`` mode, as ALFWorld's own env has
no image) against ALFWorld's ``AlfredTWEnv`` (its ``init_env``, training method ``dqn``: no expert)
on the same games in the same order, ``--alfworld-rounds`` times over the games of $ALFWORLD_DATA
(else the sample games beside the repository), alternating the two envs game by game; and ours
with the oracle asked for at reset, on games whose plan is not cached yet. Medians and 95th
percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym
from rl4vlm_gym.core import MissingDataError

# The sample games beside the repository (or beside the worktrees' folder)
SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "alfworld_sample"  # shipped: tests/data/README.md


def _ms(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1e3, out


def _row(times: list[float]) -> tuple[str, str]:
    return f"{np.median(times):.1f}", f"{np.percentile(times, 95):.1f}"


def miniworld(table: Table, resets: int, planned: int, all_levels: bool) -> None:
    for card in rl4vlm_gym.list_envs(family="navigation"):
        levels = range(len(card.levels)) if all_levels else [card.default_level]
        for level in levels:
            cells = []
            for ask, count in ((False, resets), (True, planned)):
                env = gym.make(card.id, image_size=(60, 80), level=level, optimal_steps_at_reset=ask)
                env.reset(seed=10**6)  # the GL context and MiniWorld's first-use costs: not a reset's
                cells += _row([_ms(env.reset, seed=seed)[0] for seed in range(count)])
                env.close()
            table.add_row(card.id.removeprefix("rl4vlm/"), str(level), *cells)


def _alfred_tw_env(data: Path, games: int) -> Any:
    """ALFWorld's own env over ``data``, as its scripts build it (``init_env(batch_size=1)``)."""
    from alfworld.agents.environment.alfred_tw_env import AlfredTWEnv

    config = {
        "dataset": {"data_path": str(data), "eval_id_data_path": str(data), "eval_ood_data_path": str(data), "num_train_games": -1, "num_eval_games": -1},
        "env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 2, 3, 4, 5, 6], "domain_randomization": False, "expert_type": "handcoded"},
        "general": {"training_method": "dqn"},
        "rl": {"training": {"max_nb_steps_per_episode": 50}},
    }
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress
        tw = AlfredTWEnv(config, train_eval="train")
        assert tw.num_games == games, f"AlfredTWEnv found {tw.num_games} games, we found {games}"
        env = tw.init_env(batch_size=1)
    env.seed(0)
    return env


def alfworld(table: Table, rounds: int) -> None:
    if SAMPLE is not None and SAMPLE.is_dir():
        os.environ.setdefault("ALFWORLD_DATA", str(SAMPLE))
    try:
        ours = gym.make("rl4vlm/ALFWorld-v0", obs_mode="text")
    except MissingDataError as err:
        table.add_row("ALFWorld", f"no data: {err}"[:80], "", "", "")
        return
    base = ours.unwrapped
    theirs = _alfred_tw_env(base.data_dir, len(base.games))
    own, alfred = [], []
    for _ in range(rounds * len(base.games)):
        ms, (_, infos) = _ms(theirs.reset)
        alfred.append(ms)
        game = infos["extra.gamefile"][0]
        own.append(_ms(ours.reset, options={"game": game})[0])
    theirs.close()
    ours.close()
    from rl4vlm_gym.envs.household import alfworld as module

    module._plans.clear()  # the planner's cost, as every reset paid it before it became lazy
    planned_env = gym.make("rl4vlm/ALFWorld-v0", obs_mode="text", optimal_steps_at_reset=True)
    planned = [_ms(planned_env.reset, options={"game": g})[0] for g in range(len(base.games))]
    planned_env.close()
    table.add_row("AlfredTWEnv (ALFWorld's own)", str(len(alfred)), *_row(alfred), "1.00x")
    table.add_row("rl4vlm/ALFWorld-v0", str(len(own)), *_row(own), f"{np.median(own) / np.median(alfred):.2f}x")
    table.add_row("rl4vlm/ALFWorld-v0, oracle asked", str(len(planned)), *_row(planned), f"{np.median(planned) / np.median(alfred):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resets", type=int, default=30, help="MiniWorld resets per id without the plan")
    parser.add_argument("--planned-resets", type=int, default=8, help="MiniWorld resets per id with the plan")
    parser.add_argument("--levels", choices=("default", "all"), default="default")
    parser.add_argument("--alfworld-rounds", type=int, default=2, help="passes over the ALFWorld games")
    parser.add_argument("--skip", choices=("miniworld", "alfworld"), default=None)
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    console = Console(width=160)
    if args.skip != "miniworld":
        table = Table("id", "level", "reset p50", "p95", "oracle asked: p50", "p95", title="MiniWorld reset at 60x80, ms (one core)")
        miniworld(table, args.resets, args.planned_resets, args.levels == "all")
        console.print(table)
    if args.skip != "alfworld":
        table = Table("env", "resets", "reset p50", "p95", "p50 vs AlfredTWEnv", title="ALFWorld reset on the same games, ms (one core)")
        alfworld(table, args.alfworld_rounds)
        console.print(table)


if __name__ == "__main__":
    main()
