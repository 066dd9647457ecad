"""Per-module mutation scores from ``mutmut results --all true`` (benchmarks/mutation/run.sh).

Usage: ``python benchmarks/mutation/scores.py results.txt [sample.json]`` prints a markdown table:
per module the mutants, killed (a test failed, or the mutant timed out: see README's timeouts),
survived, no tests (no selected test calls the function), not checked (skipped: left out of the
sample ``requeue.py sample`` drew, listed in ``sample.json``, or marked skipped otherwise; anything
else mutmut reports, by its status), and the score killed / (killed + survived). Where some mutants
were not checked, the score is a sample's, and a 95 % Wilson interval for the module's score over
its mutants with tests follows it.
"""

from __future__ import annotations

import collections
import json
import math
import re
import sys

LINE = re.compile(r"^\s*(?P<name>\S+__mutmut_\d+):\s*(?P<status>.+?)\s*$")
KILLED = {"killed", "timeout", "segfault"}
SURVIVED = {"survived"}


def module_of(name: str) -> str:
    """The module of a mangled mutmut name such as ``rl4vlm_gym.core.xǁEnvǁstep__mutmut_3``."""
    parts = name.partition("__mutmut_")[0].split(".")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i].startswith(("x_", "xǁ")):
            return ".".join(parts[:i])
    return name


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion ``k / n``."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(path: str, sample_path: str | None = None) -> None:
    not_sampled = set(json.load(open(sample_path, encoding="utf-8"))["not_sampled"]) if sample_path else set()
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = LINE.match(line)
            if match:
                status = match["status"]
                if status == "skipped" and match["name"] in not_sampled:
                    status = "not sampled"
                counts[module_of(match["name"])][status] += 1
    print("| module | mutants | killed | survived | no tests | not checked | score | 95% interval |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    total: collections.Counter[str] = collections.Counter()
    for module in sorted(counts):
        c = counts[module]
        total.update(c)
        killed = sum(c[s] for s in KILLED)
        survived = sum(c[s] for s in SURVIVED)
        other = sum(c.values()) - killed - survived - c["no tests"]
        extra = ", ".join(f"{s}: {n}" for s, n in sorted(c.items()) if s not in KILLED | SURVIVED | {"no tests"})
        score = f"{100 * killed / (killed + survived):.1f}%" if killed + survived else "-"
        interval = "-"
        if other and killed + survived:
            low, high = wilson(killed, killed + survived)
            interval = f"{100 * low:.0f}-{100 * high:.0f}% (n={killed + survived})"
        timeouts = f" (timeout: {c['timeout']})" if c["timeout"] else ""
        print(
            f"| {module.removeprefix('rl4vlm_gym.')} | {sum(c.values())} | {killed}{timeouts} | {survived} | "
            f"{c['no tests']} | {other}{f' ({extra})' if extra else ''} | {score} | {interval} |"
        )
    killed, survived = sum(total[s] for s in KILLED), sum(total[s] for s in SURVIVED)
    print(f"\nall: {sum(total.values())} mutants, {killed} killed, {survived} survived, {dict(sorted(total.items()))}")


if __name__ == "__main__":
    main(*sys.argv[1:])
