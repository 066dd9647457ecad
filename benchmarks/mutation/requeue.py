"""Queue mutants again in a mutmut 3 staging tree, so that a plain ``mutmut run`` checks only them.

Usage (in the staging tree, benchmarks/mutation/run.sh's WORKDIR/stage)::

    python requeue.py survived            # every survivor runs again (after new tests were added)
    python requeue.py timeout             # every timeout runs again (to tell load from a real hang)
    python requeue.py skip-unchecked      # mutants not yet checked are marked skipped (34)
    python requeue.py sample BUDGET_S [SEED]   # check a seeded random sample per module (below)
    python requeue.py sample-n N SEED MODULE...  # extend the sample of some modules to their first N (same order)
    python requeue.py unsample            # the mutants ``sample`` left out are queued again
    python requeue.py mark FILE           # record verify.sh's verdicts ("NAME | killed|survived | ...")

mutmut reruns a mutant only if its recorded exit code is missing (``mutmut run NAMES`` would run
the clean tests by id, which fails for some parametrised ids here). Its exit codes live in
``mutants/**/*.py.meta``: 1 killed, 0 survived, 33 no tests, 34 skipped, 36 timeout.

``sample`` is for a run that cannot check everything in the time it has: run ``mutmut run`` until
its stats are collected (``mutants/mutmut-stats.json``), stop it, then ``sample``. Per module it
orders its N mutants that some test calls at random (``random.Random(f"{SEED}:{module}")``: the
same order on every rerun with the same mutants) and checks the first ones (a larger budget
later extends the sample, with the mutants already checked kept); the others are marked skipped and listed in ``sample.json``
(which ``scores.py`` reads, to report them as not sampled, and each sampled module's score with a
95 % Wilson interval). Each module may spend the same number of seconds (its first mutants that fit),
the most that fits ``BUDGET_S`` seconds of one child in all; a cheap module is checked whole. A mutant's
estimated cost: ``OVERHEAD_S`` plus ``SURVIVAL_GUESS`` times the summed durations (mutmut's stats) of
the tests that call its function.
"""

from __future__ import annotations

import collections
import json
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from scores import module_of  # noqa: E402

OVERHEAD_S = 3.0  # a forked child's pytest start, collection and fixtures (1-6 s measured on a loaded 2-core machine)
SURVIVAL_GUESS = 0.3  # a killed mutant stops at its first failing test (fastest first); a survivor runs them all


def _metas() -> list[tuple[pathlib.Path, dict]]:
    return [(meta, json.loads(meta.read_text())) for meta in sorted(pathlib.Path("mutants").rglob("*.py.meta"))]


def sample(budget_s: float, seed: str) -> None:
    stats = json.loads(pathlib.Path("mutants/mutmut-stats.json").read_text())
    tests_of, duration = stats["tests_by_mangled_function_name"], stats["duration_by_test"]
    earlier = pathlib.Path("sample.json")
    left_before = set(json.loads(earlier.read_text())["not_sampled"]) if earlier.exists() else set()
    metas = _metas()
    cost: dict[str, float] = {}
    by_module: dict[str, list[str]] = collections.defaultdict(list)
    for _, data in metas:
        for key, code in data["exit_code_by_key"].items():
            tests = tests_of.get(key.replace("__init__.", "").partition("__mutmut_")[0], [])
            if tests:  # no tests: mutmut marks it 33 itself
                by_module[module_of(key)].append(key)
                if code is None or (code == 34 and key in left_before):
                    cost[key] = OVERHEAD_S + SURVIVAL_GUESS * sum(duration.get(t, 0.0) for t in tests)
    # One fixed order per module: a larger n extends the sample of a smaller one (a rerun with more time).
    order = {m: random.Random(f"{seed}:{m}").sample(sorted(keys), len(keys)) for m, keys in by_module.items()}

    def taken(keys: list[str], cap: float) -> int:
        """How many of ``keys`` (in order) fit ``cap`` seconds."""
        spent = 0.0
        for i, k in enumerate(keys):
            spent += cost.get(k, 0.0)
            if spent > cap:
                return i
        return len(keys)

    def total(cap: float) -> float:
        return sum(sum(cost.get(k, 0.0) for k in keys[: taken(keys, cap)]) for keys in order.values())

    # Water-filling: every module may spend up to ``cap`` seconds, the largest cap that fits the budget;
    # a cheap module is checked whole and leaves its share to the costly ones.
    low, high = 0.0, budget_s
    for _ in range(60):
        low, high = ((low + high) / 2, high) if total((low + high) / 2) <= budget_s else (low, (low + high) / 2)
    n = {m: taken(keys, low) for m, keys in order.items()}
    # Past its cut a module's mutants are all left out, those already checked too: its sample stays a uniform draw.
    left_out = {k for m, keys in order.items() for k in keys[n[m] :]}
    for meta, data in metas:
        codes = data["exit_code_by_key"]
        for key in codes:
            if key in left_out:
                codes[key] = 34
            elif key in cost:
                codes[key] = None
        meta.write_text(json.dumps(data, indent=4))
    record = {
        "seed": seed,
        "budget_s": budget_s,
        "cap_s_per_module": round(low),
        "estimated_s": round(total(low)),
        "sampled": n,
        "with_tests": {m: len(k) for m, k in sorted(order.items())},
        "not_sampled": sorted(left_out),
    }
    earlier.write_text(json.dumps(record, indent=1))
    print(f"sample: {len(left_out)} mutants left out, ~{record['estimated_s']} s of one child, {round(low)} s a module at most")
    for m, keys in sorted(order.items()):
        print(f"  {m}: {n[m]} of {len(keys)} with tests")


def sample_n(n: int, seed: str, modules: list[str]) -> None:
    """Extend the sample of ``modules`` (e.g. ``rl4vlm_gym.core``) to the first ``n`` mutants with tests of
    ``sample``'s fixed order for ``seed``; the other modules are left as they are. For a module whose
    tests mutmut would run for minutes per mutant, a count is the budget (checked with ``verify_many.py``)."""
    stats = json.loads(pathlib.Path("mutants/mutmut-stats.json").read_text())
    tests_of = stats["tests_by_mangled_function_name"]
    record = json.loads(pathlib.Path("sample.json").read_text())
    assert record["seed"] == seed, f"sample.json was drawn with seed {record['seed']}"
    left_before = set(record["not_sampled"])
    metas = _metas()
    by_module: dict[str, list[str]] = collections.defaultdict(list)
    for _, data in metas:
        for key in data["exit_code_by_key"]:
            if module_of(key) in modules and tests_of.get(key.replace("__init__.", "").partition("__mutmut_")[0]):
                by_module[module_of(key)].append(key)
    drawn = set()
    for m, keys in by_module.items():
        order = random.Random(f"{seed}:{m}").sample(sorted(keys), len(keys))  # sample()'s order
        taken = max(n, record["sampled"].get(m, 0))
        drawn |= set(order[:taken])
        record["sampled"][m] = min(taken, len(keys))
    queued = 0
    for meta, data in metas:
        codes = data["exit_code_by_key"]
        for key in codes:
            if key in drawn and key in left_before:
                codes[key], queued = None, queued + 1
        meta.write_text(json.dumps(data, indent=4))
    record["not_sampled"] = sorted(left_before - drawn)
    record.setdefault("extended", []).append({"n": n, "modules": modules})
    pathlib.Path("sample.json").write_text(json.dumps(record, indent=1))
    print(f"sample-n: {queued} mutants queued; " + ", ".join(f"{m}: {record['sampled'][m]}" for m in sorted(by_module)))


def mark(path: str) -> None:
    """Record ``verify.sh``'s verdicts ("NAME | killed | ..." or "NAME | survived | ...") as mutmut's exit codes."""
    verdicts = {}
    for line in open(path, encoding="utf-8"):
        parts = line.split(" | ")
        if len(parts) >= 2 and parts[1].strip() in ("killed", "survived"):
            verdicts[parts[0].strip()] = 1 if parts[1].strip() == "killed" else 0
    sample = pathlib.Path("sample.json")
    outside = set(json.loads(sample.read_text())["not_sampled"]) if sample.exists() else set()
    changed = 0
    for meta, data in _metas():
        codes = data["exit_code_by_key"]
        for key in codes:
            if key in verdicts and key not in outside and codes[key] != verdicts[key]:  # a sample stays a sample
                codes[key], changed = verdicts[key], changed + 1
        meta.write_text(json.dumps(data, indent=4))
    print(f"mark: {changed} verdicts recorded")


def main(what: str, *args: str) -> None:
    if what == "mark":
        mark(args[0])
        return
    if what == "sample-n":
        sample_n(int(args[0]), args[1], list(args[2:]))
        return
    if what == "sample":
        sample(float(args[0]), args[1] if len(args) > 1 else "36")
        return
    not_sampled = set()
    if what == "unsample":
        not_sampled = set(json.loads(pathlib.Path("sample.json").read_text())["not_sampled"])
    changed = 0
    for meta, data in _metas():
        codes = data["exit_code_by_key"]
        for key, code in codes.items():
            if (
                (what == "survived" and code == 0)
                or (what == "timeout" and code in (36, 24, -24, 152, 255))
                or (what == "unsample" and code == 34 and key in not_sampled)
            ):
                codes[key] = None
            elif what == "skip-unchecked" and code is None:
                codes[key] = 34
            else:
                continue
            changed += 1
        meta.write_text(json.dumps(data, indent=4))
    print(f"{what}: {changed} mutants changed")


if __name__ == "__main__":
    main(*sys.argv[1:])
