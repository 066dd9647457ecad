"""What leaderboard validation costs, and how far honest runs are from its limits.

1. Margins: over every committed submission, the largest file, inflated episodes, line, JSON depth
   and item count, against the limits of :mod:`rl4vlm_gym.harness.untrusted` (limit / honest).
2. The largest built-in suite's honest submission, validated by ``rl4vlm-gym leaderboard validate``
   in a process of its own: wall time and peak memory (``--replay`` replays every episode: minutes).
3. Hostile submissions sized for that suite, each validated in a process of its own: wall time,
   peak memory and the verdict. Each is the honest submission with ``episodes.jsonl.gz`` replaced:

   - ``bomb``: 2 MiB that inflate to 2 GiB of zeros;
   - ``blanks``: the honest records, then 1.1 GiB of blank lines;
   - ``padded``: every record padded to just under ``MAX_LINE_BYTES`` (valid JSON lines, until the
     inflated total reaches ``MAX_JSONL_BYTES``);
   - ``astral``: the same with one 4-byte character per line (Python then stores 4 bytes per
     character of the line's text).

4. The worst input that replays to the end: an honest smoke run of an agent whose every output
   is a wall of text (one 4-byte character, then ~0.5 MiB), so that each line is close to
   ``MAX_LINE_BYTES``; validated with replay (every env of the suite made, every output parsed).

    .venv/bin/python benchmarks/leaderboard_validation.py [--replay]

Peaks are GNU time's maximum resident set size (``/usr/bin/time``, Debian's ``time`` package).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from rl4vlm_gym.agents import Agent
from rl4vlm_gym.harness import untrusted
from rl4vlm_gym.harness.leaderboard import find_submissions
from rl4vlm_gym.harness.metrics import summarize, timing
from rl4vlm_gym.harness.runner import make_task_env, play_episode
from rl4vlm_gym.harness.suite import builtin_suites, load_suite

ROOT = Path(__file__).resolve().parents[1] / "leaderboards"
MiB = 1 << 20


def _depth_and_items(value: object, depth: int = 0) -> tuple[int, int]:
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return depth, 0
    deepest, items = depth + 1, len(children)
    for child in children:
        d, n = _depth_and_items(child, depth + 1)
        deepest, items = max(deepest, d), items + n
    return deepest, items


def margins() -> None:
    worst = {"metadata.yaml": 0, "run.json": 0, "summary.json": 0, "episodes.jsonl.gz": 0, "inflated": 0, "line": 0, "depth": 0, "items": 0}
    where = dict.fromkeys(worst, "")
    for folder in find_submissions(ROOT):
        sizes = {name: (folder / name).stat().st_size for name in ("metadata.yaml", "run.json", "summary.json", "episodes.jsonl.gz")}
        data = gzip.decompress((folder / "episodes.jsonl.gz").read_bytes())
        lines = data.splitlines()
        documents = [json.loads(line) for line in lines]
        documents += [json.loads((folder / name).read_text()) for name in ("run.json", "summary.json")]
        shapes = [_depth_and_items(d) for d in documents]
        found = {**sizes, "inflated": len(data), "line": max(map(len, lines)), "depth": max(d for d, _ in shapes), "items": max(n for _, n in shapes)}
        for key, value in found.items():
            if value > worst[key]:
                worst[key], where[key] = value, f"{folder.parent.name}/{folder.name}"
    limits = {
        "metadata.yaml": untrusted.MAX_YAML_BYTES,
        "run.json": untrusted.MAX_JSON_BYTES,
        "summary.json": untrusted.MAX_JSON_BYTES,
        "episodes.jsonl.gz": untrusted.MAX_GZ_BYTES,
        "inflated": untrusted.MAX_JSONL_BYTES,
        "line": untrusted.MAX_LINE_BYTES,
        "depth": untrusted.MAX_DEPTH,
        "items": untrusted.MAX_ITEMS,
    }
    print(f"{'largest honest':<20}{'value':>14}{'limit':>14}{'margin':>9}  in")
    for key, value in worst.items():
        print(f"{key:<20}{value:>14,}{limits[key]:>14,}{limits[key] / value:>8.0f}x  {where[key]}")


def _gzip_repeat(prefix: bytes, block: bytes, times: int) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    body = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + head + body * times + deflate.flush() + struct.pack("<II", 0, 0)


def _padded(records: list[bytes], astral: bool) -> bytes:
    """Records padded to just under MAX_LINE_BYTES, enough of them to pass MAX_JSONL_BYTES."""
    out = tempfile.SpooledTemporaryFile()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1) as gz:
        total = 0
        for line in records:
            record = json.loads(line)
            pad = untrusted.MAX_LINE_BYTES - len(line) - 64
            record["steps"][0]["raw"] += ("\U0001f600" if astral else "") + "x" * pad
            data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            gz.write(data)
            total += len(data)
            if total > untrusted.MAX_JSONL_BYTES + untrusted.MAX_LINE_BYTES:
                break
    out.seek(0)
    return out.read()


class _Verbose(Agent):
    """Answers a random admissible action after ``size`` characters of text."""

    name = "random"

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size, self.turn = size, 0

    def act(self, obs, index: int = 0) -> str:
        self.turn += 1
        actions = list(obs["actions"]) or ["noop"]
        return "\U0001f600" + "x" * self.size + " " + actions[self.turn % len(actions)]


def _verbose_smoke(folder: Path) -> None:
    """An honest smoke submission of :class:`_Verbose` (run.json and metadata of the random run)."""
    suite = load_suite("smoke")
    shutil.copytree(ROOT / "submissions" / "smoke" / "20261122_random", folder)
    (folder / "episodes.jsonl.gz").unlink()
    records = []
    for task in suite.tasks:
        env = make_task_env(task)
        budget = task.max_steps or 12
        for seed in task.seeds:
            records.append(play_episode(env, _Verbose((untrusted.MAX_LINE_BYTES - 64 * 1024) // budget - 300), task, seed))
        env.close()
    with gzip.open(folder / "episodes.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    manifest = json.loads((folder / "run.json").read_text())
    summary = {"suite": suite.name, "axis": suite.axis, "protocol_hash": manifest["protocol_hash"], "agent": manifest["agent"]}
    summary.update(complete=True, **summarize(records, [t.name for t in suite.tasks]), timing=timing(records))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1))


def _run(folder: Path, replay: bool) -> tuple[float, float, str]:
    """Seconds, peak MiB and the verdict's last line of ``rl4vlm-gym leaderboard validate folder``.

    GNU time measures the peak: Linux carries a process's peak memory across ``exec``, so a child
    forked from this (large) process would report at least this process's memory; time's own
    child is forked from a small process."""
    command = [str(Path(sys.executable).with_name("rl4vlm-gym")), "leaderboard", "validate", str(folder)]
    if not replay:
        command.append("--no-replay")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", f"{tmp}/rss", "-f", "%M", *command],
            capture_output=True,
            text=True,
            env=dict(os.environ, COLUMNS="400"),
        )
        seconds = time.perf_counter() - start
        peak = int(Path(f"{tmp}/rss").read_text().split()[-1]) / 1024
    verdict = " ".join(done.stdout.splitlines()[-1].split()) if done.returncode else "ok"
    return seconds, peak, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replay", action="store_true", help="replay the honest submission (minutes)")
    args = parser.parse_args()
    margins()

    largest = max(builtin_suites(), key=lambda name: len(load_suite(name).episodes))
    honest = ROOT / "submissions" / largest / "20261122_random"
    print(f"\nlargest suite: {largest} ({len(load_suite(largest).episodes)} episodes); honest submission {honest.name}")
    print(f"{'case':<10}{'seconds':>9}{'peak MiB':>10}  verdict")
    seconds, peak, verdict = _run(honest, args.replay)
    print(f"{'honest':<10}{seconds:>9.1f}{peak:>10.0f}  {verdict} ({'replayed' if args.replay else 'no replay'})")

    records = gzip.decompress((honest / "episodes.jsonl.gz").read_bytes()).splitlines(keepends=True)
    cases = {
        "bomb": lambda: _gzip_repeat(b"", bytes(MiB), 2048),
        "blanks": lambda: _gzip_repeat(b"".join(records), b"\n" * MiB, 1100),
        "padded": lambda: _padded(records, astral=False),
        "astral": lambda: _padded(records, astral=True),
    }
    work = Path(tempfile.mkdtemp(prefix="rl4vlm-lb-bench-"))
    try:
        for name, make in cases.items():
            folder = work / "submissions" / largest / f"20261122_{name}"
            shutil.copytree(honest, folder)
            (folder / "episodes.jsonl.gz").write_bytes(make())
            seconds, peak, verdict = _run(folder, replay=True)
            size = (folder / "episodes.jsonl.gz").stat().st_size / MiB
            print(f"{name:<10}{seconds:>9.1f}{peak:>10.0f}  {verdict} (gz {size:.1f} MiB)")
            shutil.rmtree(folder)
        folder = work / "submissions" / "smoke" / "20261122_verbose"
        _verbose_smoke(folder)
        longest = max(map(len, gzip.decompress((folder / "episodes.jsonl.gz").read_bytes()).splitlines()))
        seconds, peak, verdict = _run(folder, replay=True)
        print(f"{'verbose':<10}{seconds:>9.1f}{peak:>10.0f}  {verdict} (smoke, replayed; longest line {longest / MiB:.1f} MiB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
