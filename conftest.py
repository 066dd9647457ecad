"""Collection of the doctests under ``rl4vlm_gym/`` (``--doctest-modules``): a module that needs an
optional extra at import time is left out when the extra is absent, and the header says so; and
``--no-skips``, with which scripts/test.sh (CI) fails a run that skipped anything."""

from __future__ import annotations

import importlib.util
import re

import pytest

OPTIONAL_MODULES = {
    "rl4vlm_gym/agents/serve.py": ("flask", "hf"),
    "rl4vlm_gym/server/__init__.py": ("openenv", "server"),
    "rl4vlm_gym/server/_openenv.py": ("openenv", "server"),
    "rl4vlm_gym/server/app.py": ("openenv", "server"),
    "rl4vlm_gym/server/environment.py": ("openenv", "server"),
    "rl4vlm_gym/server/models.py": ("openenv", "server"),
    "rl4vlm_gym/server/remote.py": ("openenv", "server"),
    "rl4vlm_gym/backends/ray_vector.py": ("ray", "ray"),
}
"""Library modules that import an optional package at module level: the package and its extra."""

MISSING = {path: need for path, need in OPTIONAL_MODULES.items() if importlib.util.find_spec(need[0]) is None}
collect_ignore = list(MISSING)


def pytest_report_header() -> list[str]:
    return [f"doctests not collected: {path} (needs {module}: the {extra} extra)" for path, (module, extra) in MISSING.items()]


# -- --no-skips: scripts/test.sh (CI) has every extra and every data file, so a skip there hides a
# missing install step or data the clone lacks: it fails the run, naming each skipped test. -------


def pytest_addoption(parser) -> None:  # noqa: ANN001
    parser.addoption(
        "--no-skips",
        action="store_true",
        help="fail the run if any test or module is skipped (scripts/test.sh: everything is installed)",
    )


def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ANN001
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not session.config.getoption("--no-skips", default=False):
        return
    skipped = [r for r in reporter.stats.get("skipped", []) if not hasattr(r, "wasxfail")]
    if skipped:
        lines = [f"{len(skipped)} skipped under --no-skips (every extra and data file should be here):"]
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            lines.append(f"  {report.nodeid or report.fspath}: {reason}")
        reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- The timing report: every run ends with each family's share of the summed test time (setup,
# call and teardown of every test, on whichever worker ran it) against its budget, so a family that
# adds ids sees what it costs. Tests are attributed by path (tests/envs/<family>/, tests/harness/,
# ...) and, for the conformance kit, by the family of the env id in the test's parameters. -------

TIMING_BUDGETS_S = {
    # Summed seconds of test time per family (every worker's): a plan that, with RUN_OVERHEAD_S, fits 12
    # minutes of scripts/test.sh on a 2-core CI machine. A family over its budget is flagged in the report:
    # speed its tests up, or take the time from another family's budget in review (a new family too: the
    # plan has no time left over). Set from a clean clone at 632e58b (2026-11-29): 1,368 s summed, 704 s
    # (11:44) of wall time; at 3c7e8ef it was 2,519 s (22:17), at cd89ee4 1,469 s (12:42).
    "balrog": 330,  # 327 s at 632e58b
    "navigation": 170,  # 168
    "webshop": 165,  # 162
    "server": 145,  # 141
    "harness": 115,  # 113
    "core": 97,  # 95
    "household": 90,  # 88
    "games": 88,  # 86
    "backends": 55,  # 54
    "baselines": 53,  # 52
    "kit": 29,  # 28
    "cards": 27,  # 26
    "agents": 17,  # 16
    "integrations": 6,  # 5
    "frozenlake": 6,  # 5
    "sokoban": 3,  # 2
    "probe": 2,  # 1
}
RUN_OVERHEAD_S = 20
"""Wall seconds a run spends outside its tests (start-up, collection, the last tests' tail): 704 s of wall
time for 1,368 s summed on 2 workers at 632e58b."""
NEW_FAMILY_BUDGET_S = 10
"""The budget of a family not in TIMING_BUDGETS_S yet (one just scaffolded): review gives it its own."""

_ENV_ID = re.compile(r"(?:^|[\[\-])((?:rl4vlm|balrog)/[A-Za-z0-9_.+-]+?-v\d+)")
_DIRS = {"harness", "baselines", "server", "kit", "backends", "integrations", "agents"}


def _family(nodeid: str) -> str:
    """The family a test's time counts against (see the section's comment)."""
    parts = nodeid.split("::")[0].split("/")
    if len(parts) > 3 and parts[:2] == ["tests", "envs"]:
        return parts[2]
    if len(parts) > 2 and parts[1] in _DIRS:
        return parts[1]
    match = _ENV_ID.search(nodeid.partition("[")[2])
    if match:
        try:
            from rl4vlm_gym.registry import env_card

            return env_card(match.group(1)).family
        except Exception:  # an id that no longer resolves: counted in core rather than crash the report
            return "core"
    return "core"


class TimingReport:
    """Sums each test's setup, call and teardown durations by family; prints the table at the end."""

    def __init__(self) -> None:
        self.tallies: dict[str, list] = {}  # family -> [tests, seconds]

    def pytest_runtest_logreport(self, report) -> None:  # noqa: ANN001
        tally = self.tallies.setdefault(_family(report.nodeid), [0, 0.0])
        tally[0] += report.when == "call"
        tally[1] += float(getattr(report, "duration", 0.0) or 0.0)

    def pytest_terminal_summary(self, terminalreporter) -> None:  # noqa: ANN001
        total = sum(seconds for _, seconds in self.tallies.values())
        if not total:
            return
        terminalreporter.write_sep("-", "test time per family (summed over workers; budget: conftest.TIMING_BUDGETS_S)")
        terminalreporter.write_line(f"{'family':<14} {'tests':>6} {'seconds':>9} {'share':>6} {'budget':>7}")
        for family, (tests, seconds) in sorted(self.tallies.items(), key=lambda item: -item[1][1]):
            budget = TIMING_BUDGETS_S.get(family, NEW_FAMILY_BUDGET_S)
            flag = "" if seconds <= budget else "  OVER BUDGET"
            shown = str(budget)
            line = f"{family:<14} {tests:>6} {seconds:>9.1f} {seconds / total:>6.1%} {shown:>7}{flag}"
            terminalreporter.write_line(line, red=bool(flag))
        terminalreporter.write_line(f"{'all':<14} {sum(t for t, _ in self.tallies.values()):>6} {total:>9.1f}")


def pytest_collection_modifyitems(items) -> None:  # noqa: ANN001
    """The modules holding a ``slow`` test run first, each module's tests kept together and in order.

    Long tests started first pack with the short ones after them, so the run does not end on one long
    test while the other worker idles (longest first is the classic rule for spreading jobs over
    machines). A module's tests stay contiguous because xdist's work stealing (below) gives each worker
    contiguous parts of this order: a module's fixtures are then made in one worker, and the kit's
    checks of one env id (consecutive in test_conformance) share that env's per-process costs. Every
    worker sorts the same collection the same way, as xdist requires."""
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    ordered = sorted(modules.values(), key=lambda group: not any(item.get_closest_marker("slow") for item in group))
    items[:] = [item for group in ordered for item in group]


# -- Scheduling: under `-n` (xdist's default `--dist load`), xdist's work stealing instead. It gives each
# worker one contiguous part of the collection (modules, and a kit id's checks, stay together: see
# pytest_collection_modifyitems), so what a module or an env pays once per process (a Ray cluster, a tiny
# model, a Chromium and spaCy, a planner's caches, a built wheel) is paid by one worker; a worker that runs
# out steals the back half of the other's queue. `load` hands consecutive tests out in turn, so both
# workers paid for nearly every module fixture (inner loop at cc68ef6, one run each on a quiet machine:
# 404 -> 315 s summed, 3:48 -> 2:58 wall; the whole suite 11:44, 11:17 before: within noise). An explicit
# other `--dist` is left alone. ----------------------------------------------------------------------


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent under -p no:xdist
def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


def pytest_configure(config) -> None:  # noqa: ANN001
    if not hasattr(config, "workerinput"):  # the xdist controller (or a plain run) sees every report
        config.pluginmanager.register(TimingReport(), "rl4vlm-timing-report")
