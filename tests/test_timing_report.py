"""The run's timing report attributes each test to the family whose time it is, and the kit's checks of one
id are scheduled together (root conftest.py)."""

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


def test_every_family_of_the_registry_has_a_budget() -> None:
    import rl4vlm_gym  # noqa: F401  (registers the ids)
    from rl4vlm_gym.registry import list_envs

    budgets = _conftest().TIMING_BUDGETS_S
    assert {card.family for card in list_envs()} <= set(budgets)


def test_the_budgets_add_up_to_twelve_minutes_on_two_cores() -> None:
    assert sum(_conftest().TIMING_BUDGETS_S.values()) <= 12 * 60 * 2


def test_the_kit_checks_of_one_id_are_scheduled_as_one_unit() -> None:
    import rl4vlm_gym
    from rl4vlm_gym.testing import CHECKS

    unit = _conftest()._scheduling_unit
    ids = [card.id for card in rl4vlm_gym.list_envs()]
    units = {env_id: {unit(f"tests/test_conformance.py::test_conformance[{env_id}-{check}]") for check in CHECKS} for env_id in ids}
    assert all(len(checks) == 1 for checks in units.values())  # every check of an id: one unit
    assert len({next(iter(checks)) for checks in units.values()}) == len(ids)  # ids: units of their own
    other = "tests/test_core.py::test_reset[rl4vlm/FrozenLake-v0-api]"
    assert unit(other) == other
