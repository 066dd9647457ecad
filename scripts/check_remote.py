"""The whole conformance kit through ``rl4vlm/Remote-v0`` on registered ids, with a verdict table.

    python scripts/check_remote.py                        # every registered id, every check
    python scripts/check_remote.py rl4vlm/Sokoban-v0 rl4vlm/FrozenLake-v0 --only oracle
    python scripts/check_remote.py --chunk 2/8 --jsonl results.jsonl   # the 2nd eighth; resumable

One server (``rl4vlm-gym serve``'s app, ``--expose-oracle``, on a free port, in a subprocess that dies with
this one) serves the chosen ids; each id then runs the kit as ``rl4vlm-gym check rl4vlm/Remote-v0
--env-id ID`` does, with the kit's default options. A check that fails remotely is run locally too,
so the verdict says whether the remote path is at fault:

- ``pass``: every check passed remotely;
- ``FAIL``: a check failed remotely that passes on the local env (a bug of the remote path);
- ``fails locally too``: every remote failure is the local env's (``tests/test_conformance.py`` reports it);
- ``not checked``: a check could not run remotely (it says why);
- ``no data``: the id needs downloaded data this machine lacks.

Data as the test suite has it: ``$ALFWORLD_DATA`` defaults to the repository's sample games
(``tests/data/alfworld_sample``) and ``$WEBSHOP_DATA`` to a sample catalog written here.
With ``--jsonl``, each id's results are appended as one JSON line as soon as they are known, and ids
already in the file are not run again (so a long sweep can run in chunks, or resume after a stop).
Exit status: 0 when no id is ``FAIL``, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REMOTE_ID = "rl4vlm/Remote-v0"


def _data() -> None:
    """The test suite's data (tests/conftest.py): ALFWorld's sample games, a WebShop-format sample catalog."""
    os.environ.setdefault("ALFWORLD_DATA", str(ROOT / "tests" / "data" / "alfworld_sample"))
    if "WEBSHOP_DATA" not in os.environ:
        import numpy as np

        from rl4vlm_gym.envs.webshop.generator import write_files
        from rl4vlm_gym.envs.webshop.levels import LEVELS

        folder = tempfile.mkdtemp(prefix="rl4vlm-webshop-sample-")
        write_files(folder, LEVELS[1], np.random.default_rng(0), hints=False)
        os.environ["WEBSHOP_DATA"] = folder  # the server subprocess inherits it


def _serve(ids: list[str]) -> None:
    """The server process: ``ids`` from one catalog, the oracle exposed, on a free port."""
    from rl4vlm_gym.server.app import serve
    from rl4vlm_gym.server.environment import Catalog

    serve(Catalog({i: (i, {}) for i in ids}, expose_oracle=True, title="registered ids"), port=0, max_sessions=64)


def _missing_data(env_id: str) -> str | None:
    import gymnasium as gym

    from rl4vlm_gym.core import MissingDataError

    try:
        gym.make(env_id).close()
    except MissingDataError as err:
        return str(err)
    return None


def check_id(url: str, env_id: str, checks: list[str] | None) -> dict[str, Any]:
    """The kit on ``env_id`` served at ``url``, each remote failure run locally too; one JSON-able record."""
    from rl4vlm_gym.testing import run_checks

    start = time.perf_counter()
    missing = _missing_data(env_id)
    if missing:
        return {"id": env_id, "verdict": "no data", "detail": missing, "checks": {}, "seconds": 0.0}
    remote = {r.check: r for r in run_checks(REMOTE_ID, checks, url=url, env_id=env_id)}
    failed = [c for c, r in remote.items() if not r.passed and not r.not_checked]
    local = {r.check: r for r in run_checks(env_id, failed)} if failed else {}
    record: dict[str, Any] = {"id": env_id, "checks": {}}
    for check, result in remote.items():
        status = "pass" if result.passed else "not checked" if result.not_checked else "FAIL"
        if check in local and not local[check].passed:
            status = "fails locally too"
        record["checks"][check] = {"status": status, "seconds": round(result.seconds, 2), "detail": result.detail[:2000]}
    statuses = {c["status"] for c in record["checks"].values()}
    record["verdict"] = next((s for s in ("FAIL", "not checked", "fails locally too") if s in statuses), "pass")
    record["detail"] = "; ".join(f"{c}: {v['detail'][:300]}" for c, v in record["checks"].items() if v["status"] != "pass")
    record["seconds"] = round(time.perf_counter() - start, 1)
    return record


def _classes_first(cards: list[Any]) -> list[str]:
    """Every id, the first of each env class before the others (a stopped sweep has seen every class)."""
    seen: set[str] = set()
    first, rest = [], []
    for card in cards:
        (rest if card.entry_point in seen else first).append(card.id)
        seen.add(card.entry_point)
    return first + rest


def _table(records: list[dict[str, Any]]) -> str:
    width = max([len(r["id"]) for r in records] + [2])
    lines = [f"{'id':<{width}}  {'verdict':<17} {'seconds':>7}  detail", "-" * (width + 40)]
    for r in records:
        lines.append(f"{r['id']:<{width}}  {r['verdict']:<17} {r['seconds']:>7.1f}  {r['detail'][:400]}")
    counts: dict[str, int] = {}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines.append("-" * (width + 40))
    lines.append(", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) + f" ({len(records)} ids)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*", help="registered ids (default: every one)")
    parser.add_argument("--only", action="append", help="run only these checks (repeatable; default: all)")
    parser.add_argument("--chunk", help="K/N: every N-th id from the K-th on (1-based), so N runs share the classes")
    parser.add_argument("--jsonl", type=Path, help="append each id's record here; skip ids it already holds")
    parser.add_argument("--serve", nargs="+", help=argparse.SUPPRESS)  # the server subprocess
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.serve)
        return 0
    _data()
    import rl4vlm_gym
    from rl4vlm_gym import processes
    from rl4vlm_gym.testing import CHECKS

    unknown = sorted(set(args.only or ()) - set(CHECKS))
    if unknown:
        parser.error(f"unknown checks {unknown}; choose from {sorted(CHECKS)}")
    ids = args.ids or _classes_first(rl4vlm_gym.list_envs())
    if args.chunk:
        k, n = (int(x) for x in args.chunk.split("/"))
        ids = ids[k - 1 :: n]
    done: dict[str, dict[str, Any]] = {}
    if args.jsonl is not None and args.jsonl.exists():
        for line in args.jsonl.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done[record["id"]] = record
    todo = [i for i in ids if i not in done]
    if todo:
        proc, owned = processes.popen([sys.executable, __file__, "--serve", *todo], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            if not line.startswith("serving "):
                print(f"the server did not start: {line!r}", file=sys.stderr)
                return 2
            url = line.split(" on ")[1].split()[0]
            for env_id in todo:
                done[env_id] = record = check_id(url, env_id, args.only)
                print(f"{env_id}: {record['verdict']} ({record['seconds']} s)", file=sys.stderr, flush=True)
                if args.jsonl is not None:
                    with args.jsonl.open("a") as f:
                        f.write(json.dumps(record) + "\n")
        finally:
            processes.kill_group(proc.pid)
            proc.wait()
            owned.release()
    records = [done[i] for i in ids]
    print(_table(records))
    return 1 if any(r["verdict"] == "FAIL" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
