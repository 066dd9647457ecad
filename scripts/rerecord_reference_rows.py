"""Record the committed reference rows of the leaderboards again with this version of the harness.

The reference rows (``leaderboards/submissions/<suite>/<id>/``: the oracle, random and other
built-in agents) are runs of the harness like any submission. When the harness records more per
step (issue 38: each step's decision facts), they are played again so the boards show it:

    python scripts/rerecord_reference_rows.py [--suite smoke ...] [--workers 2] [--check-only] [--new-protocol]

For each row: the run is played again into a temporary folder with the row's agent and prompt
(``run.json``), the protocol hash must be the row's (the suite and the envs' protocol facts are
unchanged), and every episode must equal the committed one in every field the old log has
(timings aside): the same agent on the same seeds plays the same moves, so only the new fields
differ; a row whose episodes differ otherwise is left as it was and reported (an env or an agent
changed its behaviour: a finding to look at, not something to overwrite unseen), unless
``--accept-new-play`` says the new play is the reference now (an oracle made shorter, say). When a suite
itself changed (``--new-protocol``: tasks added to ``smoke``, say), the protocol hash is the suite's new one
and only the episodes of the tasks it kept unchanged are compared (those of new or changed tasks are new). Then ``run.json``,
``summary.json`` and the episodes (gzipped without a timestamp where the row had them gzipped) are
written over the row's, ``metadata.yaml`` kept, the row validated (without replay; the board's
tests replay it), and the pages built again (``leaderboards/site``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness.leaderboard import build_leaderboard, find_submissions, validate_submission
from rl4vlm_gym.harness.runner import AgentSpec, load_episodes, run_suite, write_summary
from rl4vlm_gym.harness.suite import SUITES_DIR, load_suite
from rl4vlm_gym.prompts import PromptConfig

ROOT = Path(__file__).resolve().parents[1] / "leaderboards"
_TIMINGS = ("agent_ms", "env_ms")


def _old_fields(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``new`` cut to the fields ``old`` has (steps too), timings aside."""
    cut = {k: v for k, v in new.items() if k in old and k != "steps"}
    cut["steps"] = [{k: v for k, v in s.items() if k in o and k not in _TIMINGS} for s, o in zip(new["steps"], old["steps"], strict=False)]
    return cut


def _same_play(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> str | None:
    """Why the new records are not the old ones plus new fields, or ``None``."""
    if len(new) != len(old):
        return f"{len(new)} episodes, the row has {len(old)}"
    for n, o in zip(new, old, strict=True):
        if len(n["steps"]) != len(o["steps"]):
            return f"episode ({o['task']}, {o['seed']}): {len(n['steps'])} steps, the row has {len(o['steps'])}"
        want = {**o, "steps": [{k: v for k, v in s.items() if k not in _TIMINGS} for s in o["steps"]]}
        if _old_fields(n, o) != want:
            return f"episode ({o['task']}, {o['seed']}) differs in a field the row records"
    return None


def _kept_tasks(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> set[str]:
    """The names of the tasks (expanded, as a run's protocol lists them) that are the same in both."""
    before = {task["name"]: task for task in old}
    return {task["name"] for task in new if before.get(task["name"]) == task}


def rerecord(folder: Path, workers: int, check_only: bool, accept_new_play: bool = False, new_protocol: bool = False) -> str:
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    suite = load_suite(SUITES_DIR / f"{folder.parent.name}.yaml")
    prompt = PromptConfig(**manifest["prompt"])
    agent = AgentSpec(manifest["agent"]["name"], manifest["agent"]["kwargs"])
    gz = (folder / "episodes.jsonl.gz").exists()
    old = load_episodes(folder / ("episodes.jsonl.gz" if gz else "episodes.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        records = run_suite(suite, agent, out, workers=workers, prompt=prompt)
        new_manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
        if new_manifest["protocol_hash"] != manifest["protocol_hash"] and not new_protocol:
            return f"left as it was: protocol hash {new_manifest['protocol_hash'][:12]} is not the row's {manifest['protocol_hash'][:12]}"
        order = {(r["task"], r["seed"]): i for i, r in enumerate(old)}
        records = sorted(records, key=lambda r: order.get((r["task"], r["seed"]), len(order)))
        if new_protocol:  # the episodes of the tasks the suite kept as they were must be played as before
            kept = _kept_tasks(manifest["protocol"]["tasks"], new_manifest["protocol"]["tasks"])
            problem = _same_play([r for r in records if r["task"] in kept], [r for r in old if r["task"] in kept])
        else:
            problem = _same_play(records, old)
        if problem and not accept_new_play:
            return f"left as it was: {problem}"
        if check_only:
            return f"would be recorded again ({'NEW PLAY: ' + problem if problem else 'same play'})"
        write_summary(out, suite, records)
        lines = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode("utf-8")
        if gz:
            (folder / "episodes.jsonl.gz").write_bytes(gzip.compress(lines, compresslevel=9, mtime=0))
        else:
            (folder / "episodes.jsonl").write_bytes(lines)
        for name in ("run.json", "summary.json"):
            shutil.copyfile(out / name, folder / name)
    report = validate_submission(folder, replay=False)
    said = "recorded again" + (f" (NEW PLAY: {problem})" if problem else "")
    return said if report.ok else f"{said} but INVALID: {report.problems[0]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", help="only these suites (repeatable; default: every board)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--check-only", action="store_true", help="play and compare, write nothing")
    parser.add_argument("--accept-new-play", action="store_true", help="write a row whose agent now plays otherwise")
    parser.add_argument(
        "--new-protocol", action="store_true", help="the suite changed: record under its new hash, comparing the episodes the row has"
    )
    args = parser.parse_args()
    failed = False
    for folder in find_submissions(ROOT):
        if args.suite and folder.parent.name not in args.suite:
            continue
        verdict = rerecord(folder, args.workers, args.check_only, args.accept_new_play, args.new_protocol)
        failed |= not verdict.startswith(("recorded again", "would be"))
        print(f"{folder.parent.name}/{folder.name}: {verdict}", flush=True)
    if not args.check_only:
        pages, rejected = build_leaderboard(ROOT, replay=False)
        print("built", ", ".join(str(p) for p in pages), f"({len(rejected)} rows left out)")
        failed |= bool(rejected)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
