"""The ``smoke`` suite is what its description says: one small task per env family of this repository."""

from __future__ import annotations

import rl4vlm_gym  # noqa: F401 - registers the families
from rl4vlm_gym.harness.suite import load_suite
from rl4vlm_gym.registry import env_card, list_envs


def test_smoke_has_a_small_task_of_every_family() -> None:
    """Every family registered by this repository's packages (``rl4vlm_gym.envs.*``; an installed plugin's
    family is not ours to cover) has a task in smoke, each on two seeds within a short step budget."""
    ours = {card.family for card in list_envs() if card.entry_point.startswith("rl4vlm_gym.envs.")}
    smoke = load_suite("smoke")
    covered = {env_card(task.env).family for task in smoke.tasks}
    assert len(ours) >= 9 and ours - covered == set(), f"smoke has no task of {sorted(ours - covered)}"
    assert all(len(task.seeds) == 2 and task.max_steps is not None and task.max_steps <= 12 for task in smoke.tasks)
