"""ALFWorld's two planners agree: the exact planner's plan lengths against Fast Downward's shortest, from
the start and from states along seeded random walks, and every exact plan played to a win.

    .venv/bin/python benchmarks/alfworld_planner_agreement.py [--walk 12] [--fd-bound 90] [--drawer-fd-states 1]
        [--fd-depth D] [--skip-sample]

Games: the sample games (or $ALFWORLD_DATA), then the pick-two-into-drawer variants of the samples'
kitchens (``alfworld_planner.drawer_games``: the class of game on which ALFWorld's expert gives up). In
each game, a seeded walk (60% random admissible commands, 40% the exact oracle's) of ``--walk`` steps;
in every state of it (start included), the exact planner's plan (``planner="exact"``) is

- compared in length with Fast Downward's shortest plan (``ALFWorld._shortest_expert_plan``: the
  expert's uniform-cost search with unit costs, optimal in steps), run in a bounded child process
  (``--fd-bound`` seconds): equal wherever Fast Downward finishes, and both
  say "no plan" in the same states (hands holding what no receptacle takes); in the drawer games only
  the first ``--drawer-fd-states`` states are given to Fast Downward (it gives up on most);
- played, on a copy of the env in that state, to a win in exactly its length.

It exits non-zero at the first disagreement, and prints per game the states compared, the equal
lengths, Fast Downward's give-ups and CPU seconds.

Measured on the 2-core machine (load 10-16), 2026-11-29. ``--walk 12 --fd-bound 120``: 25 games, 318
states; the six sample games' 73 states all compared, equal; the drawer games' starts compared on
6 of 19, equal (Fast Downward past 120 s on the other 13); all 318 exact plans won in exactly their
length; Fast Downward's CPU a plan median 0.12 s, max 6.9 s. ``--skip-sample --drawer-fd-states 13
--fd-depth 5 --fd-bound 60``: the drawer games' 245 walk states, 94 within 5 steps of the goal all
compared, equal (no give-up); all 245 exact plans won.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alfworld_planner import SAMPLE, drawer_games  # noqa: E402


def _child_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _wins(env: object, plan: tuple[str, ...]) -> bool:
    """The plan played on a copy of ``env`` (it replays the episode) wins on its last command, not before."""
    clone = pickle.loads(pickle.dumps(env))
    try:
        for k, command in enumerate(plan):
            if command not in clone.admissible_actions:
                return False
            terminated = clone.step(command)[2]
            if terminated != (k == len(plan) - 1):
                return False
        return bool(clone._won)
    finally:
        clone.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--walk", type=int, default=12, help="steps of the walk in each game")
    parser.add_argument("--fd-bound", type=float, default=90.0, help="Fast Downward's bound per plan, seconds")
    parser.add_argument("--drawer-fd-states", type=int, default=1, help="states per drawer game Fast Downward plans from")
    parser.add_argument("--fd-depth", type=int, default=None, help="only states at most this many steps from the goal")
    parser.add_argument("--skip-sample", action="store_true", help="only the drawer games")
    args = parser.parse_args()
    data = Path(os.environ.get("ALFWORLD_DATA") or SAMPLE)
    os.environ.setdefault("ALFWORLD_DATA", str(data))
    from rl4vlm_gym.envs.household.alfworld import ALFWorld
    from rl4vlm_gym.envs.household.bounded import BoundExceeded

    totals = {"games": 0, "states": 0, "compared": 0, "equal": 0, "no plan (both)": 0, "fd gave up": 0, "unmodelled": 0, "won": 0}
    fd_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        drawer_games(data, Path(tmp))
        folders = [(Path(tmp), args.drawer_fd_states)] if args.skip_sample else [(data, args.walk + 1), (Path(tmp), args.drawer_fd_states)]
        for folder, fd_states in folders:
            env = ALFWorld(data_dir=folder, obs_mode="text", planner="exact", planner_memory_mb=4096)
            for i, game in enumerate(env.games):
                name = Path(game).parent.parent.name
                obs, _ = env.reset(options={"game": i})
                rng = np.random.default_rng(i)
                per = {"states": 0, "compared": 0, "equal": 0, "gave up": 0}
                for k in range(args.walk + 1):
                    exact, reason = env._exact_plan()
                    per["states"] += 1
                    if exact is None and reason != "unsolvable from here":
                        totals["unmodelled"] += 1
                    elif exact is not None:
                        assert _wins(env, exact), f"{name}, state {k}: the exact plan {exact} does not win"
                        totals["won"] += 1
                    near = args.fd_depth is None or (exact is not None and len(exact) <= args.fd_depth)
                    if k < fd_states and near and (exact is not None or reason == "unsolvable from here"):
                        before, start = _child_cpu(), time.perf_counter()
                        try:
                            fd = env._shortest_expert_plan(seconds=args.fd_bound)
                        except BoundExceeded:
                            per["gave up"] += 1
                        else:
                            per["compared"] += 1
                            fd_cpu.append(_child_cpu() - before)
                            fd_n, ex_n = None if fd is None else len(fd), None if exact is None else len(exact)
                            print(f"  {name} state {k}: Fast Downward {fd_n}, exact {ex_n} ({time.perf_counter() - start:.1f} s)", flush=True)
                            assert fd_n == ex_n, f"{name}, state {k}: Fast Downward's shortest plan has {fd_n} steps, the exact planner's {ex_n}"
                            per["equal"] += 1
                            totals["no plan (both)"] += fd is None
                    if env._won:
                        break
                    actions = obs["actions"]
                    action = actions[int(rng.integers(len(actions)))] if rng.random() < 0.6 else env.oracle_action()
                    obs, _, terminated, truncated, _ = env.step(action)
                    if terminated or truncated:
                        if not env._won:
                            break
                totals["games"] += 1
                for key in ("states", "compared", "equal"):
                    totals[key] += per[key]
                totals["fd gave up"] += per["gave up"]
                print(f"{name}: {per}", flush=True)
            env.close()
    print(totals)
    if fd_cpu:
        print(f"Fast Downward CPU per plan: median {np.median(fd_cpu):.2f} s, max {max(fd_cpu):.1f} s, total {sum(fd_cpu):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
