"""The run's timing report attributes each test to the family whose time it is, and a parallel run steals work
from contiguous parts of a collection that keeps each module whole (root conftest.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tests_count_against_their_family() -> None:
    family = _conftest()._family
    assert family("tests/envs/games/test_kuhn.py::test_x") == "games"
    assert family("tests/harness/test_boards.py::test_y[games/20261128_oracle]") == "harness"
    assert family("tests/test_conformance.py::test_kit[rl4vlm/TicTacToe-vs-Random-v0-oracle]") == "games"
    assert family("tests/test_conformance.py::test_kit[balrog/BabyAI-GoTo-v0]") == "balrog"
    assert family("tests/test_conformance.py::test_kit[rl4vlm/NoSuchEnv-v0]") == "core"  # unknown: no crash
    assert family("tests/test_core.py::test_z") == "core"


def test_the_budgets_of_the_registry_s_families_add_up_to_twelve_minutes_on_two_cores() -> None:
    """Each family pays from its own budget, a family not listed yet (just scaffolded) from the default
    one, and together, with the run's own overhead, they fit 12 minutes of 2 workers."""
    import rl4vlm_gym  # noqa: F401  (registers the ids)
    from rl4vlm_gym.registry import list_envs

    conftest = _conftest()
    unlisted = {card.family for card in list_envs()} - set(conftest.TIMING_BUDGETS_S)
    planned = sum(conftest.TIMING_BUDGETS_S.values()) + conftest.NEW_FAMILY_BUDGET_S * len(unlisted)
    assert planned <= (12 * 60 - conftest.RUN_OVERHEAD_S) * 2


def test_a_family_without_a_budget_is_held_to_the_default() -> None:
    conftest = _conftest()
    report = conftest.TimingReport()
    for family, seconds in (("gridgames", conftest.NEW_FAMILY_BUDGET_S + 1), ("cards", 1.0)):
        report.tallies[family] = [1, seconds]
    lines: list[str] = []
    report.pytest_terminal_summary(type("Reporter", (), {"write_sep": lambda *a, **k: None, "write_line": lambda self, line, **k: lines.append(line)})())
    assert any(line.startswith("gridgames") and line.endswith("OVER BUDGET") and f" {conftest.NEW_FAMILY_BUDGET_S} " in line for line in lines), lines
    assert any(line.startswith("cards") and not line.endswith("OVER BUDGET") for line in lines)


def test_a_parallel_run_steals_work_and_an_explicit_dist_is_left_alone() -> None:
    from xdist.scheduler import WorkStealingScheduling

    class Config:  # what the hook and xdist's scheduler read of pytest's config
        def __init__(self, dist: str) -> None:
            self.values = {"dist": dist, "tx": ["2*popen"]}

        def getvalue(self, name: str) -> object:
            return self.values[name]

    hook = _conftest().pytest_xdist_make_scheduler
    scheduler = hook(Config("load"), None)  # `-n N` alone: xdist's default dist
    assert isinstance(scheduler, WorkStealingScheduling) and scheduler.numnodes == 2
    for dist in ("loadscope", "loadfile", "loadgroup", "worksteal", "each"):
        assert hook(Config(dist), None) is None  # xdist's own choice


def test_the_collection_keeps_modules_whole_and_runs_those_with_slow_tests_first() -> None:
    import pytest

    class Item:
        def __init__(self, nodeid: str, slow: bool = False) -> None:
            self.nodeid, self.slow = nodeid, slow

        def get_closest_marker(self, name: str) -> object:
            return pytest.mark.slow if name == "slow" and self.slow else None

    items = [Item("a.py::t1"), Item("b.py::t1"), Item("a.py::t2"), Item("c.py::t1"), Item("c.py::t2", slow=True), Item("b.py::t2")]
    _conftest().pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == ["c.py::t1", "c.py::t2", "a.py::t1", "a.py::t2", "b.py::t1", "b.py::t2"]
