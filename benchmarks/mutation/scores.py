"""Per-module mutation scores from ``mutmut results --all true`` (benchmarks/mutation/run.sh).

Usage: ``python benchmarks/mutation/scores.py results.txt`` prints a markdown table: per module the
mutants, killed (a test failed or the mutant timed out), survived, and the score killed / (killed +
survived). Mutants mutmut could not judge (no test calls the function, or skipped) are counted apart.
"""

from __future__ import annotations

import collections
import re
import sys

LINE = re.compile(r"^\s*(?P<name>\S+)__mutmut_\d+:\s*(?P<status>.+?)\s*$")
KILLED = {"killed", "timeout", "segfault"}
SURVIVED = {"survived"}


def module_of(name: str) -> str:
    """The module of a mangled mutmut name such as ``rl4vlm_gym.core.xǁEnvǁstep``."""
    parts = name.split(".")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i].startswith(("x_", "xǁ")):
            return ".".join(parts[:i])
    return name


def main(path: str) -> None:
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = LINE.match(line)
            if match:
                counts[module_of(match["name"])][match["status"]] += 1
    print("| module | mutants | killed | survived | other | score |")
    print("|---|---:|---:|---:|---:|---:|")
    for module in sorted(counts):
        c = counts[module]
        killed = sum(c[s] for s in KILLED)
        survived = sum(c[s] for s in SURVIVED)
        other = sum(c.values()) - killed - survived
        score = f"{100 * killed / (killed + survived):.1f}%" if killed + survived else "-"
        extra = ", ".join(f"{s}: {n}" for s, n in sorted(c.items()) if s not in KILLED | SURVIVED)
        print(f"| {module} | {sum(c.values())} | {killed} | {survived} | {other}{f' ({extra})' if extra else ''} | {score} |")


if __name__ == "__main__":
    main(sys.argv[1])
