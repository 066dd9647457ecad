"""BALROG's aggregation (its per-env percentage and standard error, and the overall average)."""

from __future__ import annotations

import math

import pytest

from rl4vlm_gym.harness.metrics import balrog_average, balrog_progression


def test_the_standard_error_uses_the_population_sd_over_sqrt_n() -> None:
    # p = (0, 1, 1, 0.5): m = 0.625, population variance = (0.390625 + 0.140625 * 2 + 0.015625) / 4
    out = balrog_progression([0.0, 1.0, 1.0, 0.5])
    assert out["progression_percentage"] == pytest.approx(62.5)
    assert out["standard_error"] == pytest.approx(100 * math.sqrt(0.171875) / 2)
    assert out["episodes_played"] == 4


def test_one_episode_has_no_error_and_two_have_one() -> None:
    assert balrog_progression([0.4])["standard_error"] == 0.0
    assert balrog_progression([0.0, 1.0])["standard_error"] == pytest.approx(100 * 0.5 / math.sqrt(2))
    assert balrog_progression([])["episodes_played"] == 0


@pytest.mark.parametrize("bad", [-0.01, 1.01])
def test_progressions_outside_the_unit_interval_are_refused(bad: float) -> None:
    assert balrog_progression([0.0, 1.0])["progression_percentage"] == 50.0  # the bounds themselves pass
    with pytest.raises(ValueError, match=r"progressions must be in \[0, 1\]"):
        balrog_progression([0.5, bad])


def test_the_overall_average_is_unweighted_and_its_error_pools_the_envs() -> None:
    envs = {
        "babyai": {"progression_percentage": 80.0, "standard_error": 3.0},
        "crafter": {"progression_percentage": 20.0, "standard_error": 4.0},
    }
    assert balrog_average(envs) == {"average_progress": 50.0, "standard_error": pytest.approx(2.5)}
