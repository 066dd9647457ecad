"""The kit's MiniWorld checks (``oracle``, ``decisions``), CPU per id, this tree's navigation family against
another revision's, and the results must be equal.

    .venv/bin/python benchmarks/navigation_oracle_check.py [--rev HEAD~5] [--checks oracle decisions] [--rounds 3] [--tasks Maze Sidewalk]

Each (round, side, check) runs in a fresh process that plays the check on every id in turn (the order the
suite's worker meets them in, caches warming as they do there); the sides alternate within each round, so
a loaded machine slows both alike. The other side is ``--rev``'s ``envs/navigation`` (``git archive``),
loaded in place of this tree's; everything else is this tree's. Prints the median CPU seconds (user + system
of the process: the checks draw no frame) per id and check, and fails if a check's results differ.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

_CHILD = """
import importlib.util, json, sys, time
root, check, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
import rl4vlm_gym.envs
if root:  # the other revision's family, in place of this tree's
    spec = importlib.util.spec_from_file_location("rl4vlm_gym.envs.navigation", root + "/__init__.py", submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
from rl4vlm_gym.testing import CHECKS
out = {}
for env_id in ids:
    start = time.process_time()
    result = CHECKS[check](env_id)
    out[env_id] = (time.process_time() - start, result)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the revision to compare with (default: HEAD, i.e. uncommitted changes)")
    parser.add_argument("--checks", nargs="+", default=["oracle", "decisions"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", nargs="*", default=None, help="MiniWorld tasks (default: all 11)")
    args = parser.parse_args()
    import rl4vlm_gym

    ids = [card.id for card in rl4vlm_gym.list_envs(family="navigation")]
    if args.tasks:
        ids = [i for i in ids if i.removeprefix("rl4vlm/MiniWorld-").removesuffix("-v1") in args.tasks]
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", args.rev, "envs/navigation"], cwd=repo, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        sides = {args.rev: str(Path(tmp) / "envs" / "navigation"), "tree": ""}
        times: dict[tuple[str, str, str], list[float]] = collections.defaultdict(list)
        results: dict[tuple[str, str], dict[str, str]] = {}
        for _ in range(args.rounds):
            for side, root in sides.items():
                for check in args.checks:
                    run = subprocess.run([sys.executable, "-c", _CHILD, root, check, *ids], capture_output=True, text=True, check=True)
                    for env_id, (cpu, result) in json.loads(run.stdout.splitlines()[-1]).items():
                        times[(side, check, env_id)].append(cpu)
                        assert results.setdefault((check, env_id), {}).setdefault(side, result) == result, (check, env_id)
    for (check, env_id), by_side in results.items():
        assert len(set(by_side.values())) == 1, f"{check} {env_id}: the results differ: {by_side}"
    print(f"{'check':10s} {'id':36s} {args.rev:>10s} {'tree':>8s}  (median CPU s of {args.rounds})")
    for check in args.checks:
        total = dict.fromkeys(sides, 0.0)
        for env_id in ids:
            medians = {side: statistics.median(times[(side, check, env_id)]) for side in sides}
            total = {side: total[side] + medians[side] for side in sides}
            print(f"{check:10s} {env_id:36s} {medians[args.rev]:10.2f} {medians['tree']:8.2f}")
        print(f"{check:10s} {'total':36s} {total[args.rev]:10.2f} {total['tree']:8.2f}")


if __name__ == "__main__":
    main()
