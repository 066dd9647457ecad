"""What decision facts cost: the median time of ``decision()`` and of ``step()`` per id, along the oracle's play.

    .venv/bin/python benchmarks/decision_cost.py [--ids rl4vlm/Sokoban-v0 ...] [--seeds 5] [--min-states 100] [--json out.json]

(ALFWorld needs its games: ``ALFWORLD_DATA=tests/data/alfworld_sample`` plays the six that ship with the tests.)

The harness calls :meth:`~rl4vlm_gym.core.VLMEnv.decision` before every step of an evaluated episode, so
its cost is quoted against a step's: issue 38's goal is a median ``decision()`` under 10% of a median
``step()`` for every family but those whose every plan is a search (``EXPENSIVE_PLAN``: MiniWorld,
ALFWorld), which state theirs. Each id plays ``--seeds`` episodes from the EVAL seeds, and more (the next
EVAL seeds) until it has timed ``--min-states`` states, so that an id of one-step episodes (ColourNaming)
gets a median of many calls rather than of five; with the oracle's moves (``oracle_action()``, not timed;
an oracle-free id plays its admissible actions in turn), up to ``--max-steps`` steps an episode and
``--budget-s`` seconds an id, in its default observation mode (what an evaluation pays for a step) unless
``--obs-mode`` is given. ``decision()`` is timed in every state, the first after reset included (a family
that plans at its first call pays it there), and both medians are over the same episodes and states. The
table gives the decision's median and 95th percentile, the step's median, their ratio (the goal's), the
ratio of their sums (what decisions add to the env's own time over the run: a family whose first calls on
a new hand search shows it there, where the median hides it; on an id of microsecond steps one preempted
call moves it by tens of points, so read it for the searching families), and how many states had facts
(else the most common reason). One process, pinned to one core by default, because this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from typing import Any

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import rl4vlm_gym
from rl4vlm_gym.core import MissingDataError
from rl4vlm_gym.registry import EVAL_SEEDS

GOAL = 0.10
"""The goal: a median decision() under this share of a median step()."""


def measure(env_id: str, seeds: int, max_steps: int, budget_s: float, obs_mode: str | None, min_states: int = 0) -> dict[str, Any]:
    """Time ``decision()`` and ``step()`` along the oracle's play of ``seeds`` episodes of ``env_id``, and of
    more episodes until ``min_states`` states are timed (both within ``budget_s``)."""
    env = gym.make(env_id, **({"obs_mode": obs_mode} if obs_mode else {}))
    base: Any = env.unwrapped
    decide: list[float] = []
    step: list[float] = []
    reasons: Counter[str] = Counter()
    known, cut, start, episodes = 0, False, time.perf_counter(), 0
    try:
        for i in range(len(EVAL_SEEDS)):
            if i >= seeds and len(decide) >= min_states:
                break
            obs, _ = env.reset(seed=EVAL_SEEDS.start + i)
            done, steps = False, 0
            while not done and steps < max_steps:
                t0 = time.perf_counter()
                facts = base.decision()
                decide.append(time.perf_counter() - t0)
                if facts["optimal_actions"] is None:
                    reasons[str(facts["reason"])] += 1
                else:
                    known += 1
                if base.HAS_ORACLE:
                    action = base.oracle_action()
                else:
                    actions = obs["actions"] or ("look",)
                    action = actions[steps % len(actions)]
                t0 = time.perf_counter()
                obs, _, terminated, truncated, _ = env.step(action)
                step.append(time.perf_counter() - t0)
                done, steps = terminated or truncated, steps + 1
            episodes += 1
            if time.perf_counter() - start > budget_s:
                cut = i + 1 < seeds
                break
    finally:
        env.close()
    median_decide, median_step = statistics.median(decide), statistics.median(step)
    return {
        "id": env_id,
        "planner": bool(base.facts()["EXPENSIVE_PLAN"]),
        "episodes": episodes,
        "states": len(decide),
        "known": known,
        "reason": reasons.most_common(1)[0][0] if reasons else None,
        "decision_us_p50": median_decide * 1e6,
        "decision_us_p95": sorted(decide)[int(0.95 * (len(decide) - 1))] * 1e6,
        "step_us_p50": median_step * 1e6,
        "ratio": median_decide / median_step if median_step > 0 else float("inf"),
        "sum_ratio": sum(decide) / sum(step) if sum(step) > 0 else float("inf"),
        "cut": cut,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", help="env ids (default: every registered id)")
    parser.add_argument("--seeds", type=int, default=5, help="episodes per id (EVAL seeds)")
    parser.add_argument("--min-states", type=int, default=100, help="play further EVAL seeds until this many states are timed")
    parser.add_argument("--max-steps", type=int, default=200, help="steps per episode at most")
    parser.add_argument("--budget-s", type=float, default=30.0, help="seconds per id, after which no new episode starts")
    parser.add_argument("--obs-mode", default=None, help="observation mode (default: each id's default)")
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    parser.add_argument("--json", default=None, help="write the rows to this JSON file too")
    args = parser.parse_args()
    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})

    ids = args.ids or [card.id for card in rl4vlm_gym.list_envs()]
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for env_id in ids:
        try:
            rows.append(measure(env_id, args.seeds, args.max_steps, args.budget_s, args.obs_mode, args.min_states))
        except (MissingDataError, ImportError, gym.error.Error) as err:  # data or an extra missing here
            skipped[env_id] = f"{type(err).__name__}: {str(err).splitlines()[0][:100]}"
    table = Table(
        "id", "episodes", "states", "facts", "decision p50 us", "decision p95 us", "step p50 us", "decision/step", "sums", "goal",
        title=f"decision() against step() along the oracle's play ({args.seeds}+ episodes, {args.min_states}+ states an id; goal: under {GOAL:.0%})",
    )  # fmt: skip
    for row in rows:
        goal = "planner" if row["planner"] else ("yes" if row["ratio"] < GOAL else "NO")
        facts = f"{row['known']}/{row['states']}" + ("" if row["reason"] is None else f" ({row['reason'][:40]})")
        table.add_row(
            row["id"] + (" (cut)" if row["cut"] else ""),
            str(row["episodes"]),
            str(row["states"]),
            facts,
            f"{row['decision_us_p50']:,.1f}",
            f"{row['decision_us_p95']:,.1f}",
            f"{row['step_us_p50']:,.1f}",
            f"{row['ratio']:.1%}",
            f"{row['sum_ratio']:.0%}",
            goal,
        )
    Console(width=200).print(table)
    over = [r["id"] for r in rows if not r["planner"] and r["ratio"] >= GOAL]
    print(f"{len(rows)} ids measured; over the goal: {over or 'none'}")
    for env_id, why in skipped.items():
        print(f"skipped {env_id}: {why}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"rows": rows, "skipped": skipped}, out, indent=1)


if __name__ == "__main__":
    main()
