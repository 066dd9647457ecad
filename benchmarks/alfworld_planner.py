"""ALFWorld's planners from any state: the exact planner (``alfworld_oracle.py``) beside Fast Downward.

    .venv/bin/python benchmarks/alfworld_planner.py [--walk 20] [--fd-states 0] [--fd-bound 60]

Plays seeded walks (60% random admissible commands, 40% the oracle's) in the sample games (or
$ALFWORLD_DATA) and in pick-two-into-drawer games built from the samples' kitchens (the class of
game on which ALFWorld's Fast Downward expert exceeds its bound: the sample pick-two goal over each
kitchen, for every object kind a drawer holds that the kitchen has two of). In every state it times
the exact planner's plan and the decision facts (uncached), and prints their median and 95th
percentile with the step's. Every game is also played by the oracle with ``planner="exact"``:
the script checks that it wins in exactly ``optimal_steps``. With ``--fd-states N``, Fast Downward
also plans from the first N walk states of each game (bounded by ``--fd-bound`` seconds), and the
lengths are compared with the exact planner's (equal wherever Fast Downward finished).

Measured on the 2-core machine, loaded (load 8-9), ``--walk 12``, 293 states of 25 games: exact plan
median 0.27 ms, p95 5.2 ms; decision facts median 1.2 ms, p95 13.6 ms; step median 29 ms (all 25
games won by the exact oracle in optimal_steps). Fast Downward from 30 walk states of the six sample games: bedroom
games 0.02-1 s, kitchens 14-53 s and once past 60 s, every finished length equal to the exact
planner's; from the start of 19 drawer games it found no plan within 30 s on 13.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "alfworld_sample"  # shipped: tests/data/README.md


def drawer_games(data: Path, out: Path) -> None:
    """Write the pick-two-into-drawer variants of ``data``'s kitchen games under ``out``."""
    two = next(data.rglob("pick_two_obj_and_place-*/*/game.tw-pddl"))
    goal = json.loads(two.read_text(encoding="utf-8"))["pddl_problem"]
    goal = goal[goal.index("(:goal") :]
    for game in sorted(data.rglob("pick_*_then_place_in_recep-*/*/game.tw-pddl")):
        data_ = json.loads(game.read_text(encoding="utf-8"))
        problem = data_["pddl_problem"]
        kinds = re.findall(r"\(objectType \S+ (\w+)Type\)", problem)
        drawer = set(re.findall(r"\(canContain DrawerType (\w+)Type\)", problem))
        scene = game.parent.parent.name.rsplit("-", 1)[1]
        for kind in sorted({k for k in kinds if kinds.count(k) >= 2 and k in drawer}):
            own = goal.replace(two.parent.parent.name.split("-")[1] + "Type", f"{kind}Type").replace("DeskType", "DrawerType")
            path = out / f"pick_two_obj_and_place-{kind}-None-Drawer-{scene}" / "trial_0" / "game.tw-pddl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({**data_, "pddl_problem": problem[: problem.index("(:goal")] + own}), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--walk", type=int, default=20, help="steps of the walk in each game")
    parser.add_argument("--fd-states", type=int, default=0, help="walk states per game Fast Downward plans from")
    parser.add_argument("--fd-bound", type=float, default=60.0, help="Fast Downward's bound per plan, seconds")
    args = parser.parse_args()
    data = Path(os.environ.get("ALFWORLD_DATA") or SAMPLE)
    os.environ.setdefault("ALFWORLD_DATA", str(data))
    from rl4vlm_gym.envs.household import oracle
    from rl4vlm_gym.envs.household.alfworld import ALFWorld

    plans, decisions, steps, fd = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        drawer_games(data, Path(tmp))
        for folder in (data, Path(tmp)):
            env = ALFWorld(data_dir=folder, obs_mode="text", planner="exact", planner_timeout=args.fd_bound)
            for i, game in enumerate(env.games):
                obs, _ = env.reset(options={"game": i})
                optimal, won = env.optimal_steps, 0
                while not env._won and won < 50:
                    env.step(env.oracle_action())
                    won += 1
                assert env._won and won == optimal, f"{game}: the exact oracle took {won} steps, optimal_steps {optimal}"
                obs, _ = env.reset(options={"game": i})
                rng = np.random.default_rng(i)
                for k in range(args.walk):
                    board = env._board()
                    if board is not None and not board.unmodelled:
                        start = time.perf_counter()
                        oracle.plan(board)
                        plans.append(time.perf_counter() - start)
                    env._decided, env._exact_plans = None, {}
                    start = time.perf_counter()
                    facts = env.decision()
                    decisions.append(time.perf_counter() - start)
                    if k < args.fd_states:
                        start = time.perf_counter()
                        found = env._bounded_plan()
                        fd.append(time.perf_counter() - start)
                        same = found is None or len(found) == facts["steps_to_go"]
                        print(f"{Path(game).parent.parent.name}: Fast Downward {fd[-1]:.2f} s, {found and len(found)} vs {facts['steps_to_go']}")
                        assert same, "Fast Downward's length differs from the exact planner's"
                        env._gave_up = False
                    action = obs["actions"][rng.integers(len(obs["actions"]))] if rng.random() < 0.6 else env.oracle_action()
                    start = time.perf_counter()
                    obs, _, terminated, truncated, _ = env.step(action)
                    steps.append(time.perf_counter() - start)
                    if terminated or truncated:
                        break
                print(f"{Path(game).parent.parent.name}: won by the exact oracle in optimal_steps={optimal}", flush=True)
            env.close()

    def line(name: str, times: list[float]) -> str:
        return f"{name}: median {1e3 * statistics.median(times):.2f} ms, p95 {1e3 * float(np.percentile(times, 95)):.2f} ms ({len(times)} states)"

    print(line("exact plan", plans))
    print(line("decision facts (uncached)", decisions))
    print(line("step", steps))
    if fd:
        print(line("Fast Downward plan", fd))


if __name__ == "__main__":
    sys.exit(main())
