"""Collection of the doctests under ``rl4vlm_gym/`` (``--doctest-modules``): a module that needs an
optional extra at import time is left out when the extra is absent, and the header says so; and
``--no-skips``, with which scripts/test.sh (CI) fails a run that skipped anything."""

from __future__ import annotations

import importlib.util

OPTIONAL_MODULES = {
    "rl4vlm_gym/agents/tiny.py": ("transformers", "hf"),
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
    import pytest

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
