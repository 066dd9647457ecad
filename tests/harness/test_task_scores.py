"""Suites that score their tasks (chips in poker): the score rule, the summary and the board's rank."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl4vlm_gym.harness import metrics
from rl4vlm_gym.harness.metrics import scored
from rl4vlm_gym.harness.pages import write_leaderboard
from rl4vlm_gym.harness.suite import Suite, SuiteError, TaskScore


def _suite(score: dict[str, Any] | None) -> Suite:
    task: dict[str, Any] = {"name": "kuhn", "env": "rl4vlm/KuhnPoker-vs-CFR-v0", "seeds": [1, 2]}
    if score is not None:
        task["score"] = score
    return Suite.from_dict(
        {"name": "s", "axis": "smoke", "tasks": [task, {"name": "nl", "env": "rl4vlm/NumberLine-v0", "seeds": [3]}]}
    )


def test_a_return_maps_linearly_onto_0_1_between_its_bounds() -> None:
    rule = TaskScore(metric="return", low=-2, high=2, unit="chips")
    assert [rule.normalise(0.0, r) for r in (-2.0, -1.0, 0.0, 2.0)] == [0.0, 0.25, 0.5, 1.0]
    assert rule.normalise(0.0, -2.5) == 0.0 and rule.normalise(1.0, 2.1) == 1.0  # clipped just past the bounds
    assert TaskScore(metric="success").normalise(1.0, -7.0) == 1.0


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ({"metric": "return", "low": 2, "high": 2}, "must be above low"),
        ({"metric": "chips"}, "metric"),
        ({"metric": "return", "extra": 1}, "extra"),
    ],
)
def test_a_malformed_score_is_refused_naming_the_field(score: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        _suite(score)


def test_only_suites_that_score_a_task_change_their_protocol() -> None:
    plain, chips = _suite(None), _suite({"metric": "return", "low": -2, "high": 2, "unit": "chips"})
    assert plain.scores is None and all("score" not in t for t in plain.protocol()["tasks"])
    assert chips.scores == {"kuhn": TaskScore(metric="return", low=-2, high=2, unit="chips"), "nl": TaskScore(metric="success")}
    assert chips.protocol()["tasks"][0]["score"]["unit"] == "chips"
    assert plain.protocol_hash() != chips.protocol_hash()


def _record(task: str, seed: int, success: bool, ret: float) -> dict[str, Any]:
    return {"task": task, "seed": seed, "success": success, "return": ret}


def test_the_summary_scores_each_task_by_its_own_metric() -> None:
    rules = {"nl": TaskScore(metric="success"), "kuhn": TaskScore(metric="return", low=-2, high=2, unit="chips")}
    records = [_record("nl", s, bool(s % 2), 0.0) for s in (1, 2, 3)]
    records += [_record("kuhn", s, r > 0, r) for s, r in zip((4, 5, 6, 7), (2.0, -1.0, 2.0, 0.0), strict=True)]
    result = scored(records, rules, ["nl", "kuhn"])
    nl, kuhn = result["tasks"]["nl"], result["tasks"]["kuhn"]
    assert nl["value"]["mean"] == pytest.approx(2 / 3, abs=1e-6) and nl["score"]["mean"] == nl["value"]["mean"]
    assert kuhn["value"]["mean"] == 0.75 and kuhn["score"]["mean"] == 0.6875 and kuhn["unit"] == "chips"
    assert result["overall"]["mean"] == pytest.approx((2 / 3 + 0.6875) / 2, abs=1e-6)
    low, high = kuhn["value"]["ci95"]
    assert -1.0 <= low < 0.75 < high <= 2.0
    assert scored(list(reversed(records)), rules, ["nl", "kuhn"]) == result  # order-free


def test_blocked_bootstrap_draws_the_same_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.random.default_rng(1).normal(size=1001)
    whole = metrics._bootstrap_means(values, np.random.default_rng(7))
    monkeypatch.setattr(metrics, "_BOOTSTRAP_BLOCK", 3 * values.size + 5)  # blocks of 3 resamples
    assert np.array_equal(metrics._bootstrap_means(values, np.random.default_rng(7)), whole)


def _entry(name: str, success: float, score: float) -> dict[str, Any]:
    estimate = {"mean": success, "ci95": [success, success]}
    overall = {"success": estimate, "progress": estimate, "normalised_steps": None, "invalid_action_rate": 0.0,
               "episodes": 10, "input_tokens": 0, "output_tokens": 0, "return": None}  # fmt: skip
    chips = {"mean": 4 * score - 2, "ci95": [4 * score - 2.1, 4 * score - 1.9]}
    tasks = {
        "kuhn": {
            "metric": "return",
            "unit": "chips",
            "value": chips,
            "score": {"mean": score, "ci95": [score, score]},
            "episodes": 10,
        }
    }
    metadata = {
        "name": name,
        "agent": "random",
        "model": "none",
        "algorithm": "none",
        "env_steps": 0,
        "date": "2026-11-28",
        "verified": False,
    }
    summary = {"overall": overall, "score": {"overall": {"mean": score, "ci95": [score - 0.01, score + 0.01]}, "tasks": tasks}}
    return {
        "id": name.lower(),
        "suite": "poker",
        "axis": "smoke",
        "suite_description": "d",
        "metadata": metadata,
        "summary": summary,
    }


def test_a_scored_board_ranks_by_chips_not_by_hands_won(tmp_path: Path) -> None:
    # Raiser wins more hands (success) but fewer chips than Solver: the board puts Solver first.
    md, _ = write_leaderboard([_entry("Raiser", 0.68, 0.41), _entry("Solver", 0.45, 0.5)], tmp_path)
    text = md.read_text()
    ranked = [line.split(" | ")[1] for line in text.splitlines() if re.match(r"\| \d", line)]
    assert ranked[:2] == ["Solver", "Raiser"]
    assert "score [95% CI]" in text and "| # | name | kuhn (chips) |" in text
    assert "| 1 | Solver | 0.000 [-0.10, 0.10] |" in text and "| 2 | Raiser | -0.360 [-0.46, -0.26] |" in text


def test_a_duplicate_task_lists_whole_deals() -> None:
    rule = {"metric": "return", "low": -2, "high": 2, "duplicate": 2}
    with pytest.raises(SuiteError, match=r"the seeds 0\.\.1 \(one deal\) must all be listed"):
        _suite(rule)  # seeds 1 and 2: deals 0 and 1, each missing a seat
    task = {"name": "kuhn", "env": "rl4vlm/KuhnPoker-vs-CFR-v0", "seeds": [4, 5, 10, 11], "score": rule}
    suite = Suite.from_dict({"name": "s", "axis": "smoke", "tasks": [task]})
    assert suite.scores is not None and suite.scores["kuhn"].duplicate == 2


def test_a_duplicate_interval_resamples_deals_and_keeps_their_cancelled_luck() -> None:
    # Each deal gives one seat +2 and the other -2 plus a small edge: per episode the spread is
    # large, per deal small; resampling deals (as they were played) gives the narrow interval.
    rng = np.random.default_rng(0)
    records = []
    for deal in range(200):
        luck, edge = float(rng.choice([-2.0, 2.0])), float(rng.normal(0.1, 0.05))
        records += [_record("kuhn", 2 * deal, True, luck + edge), _record("kuhn", 2 * deal + 1, True, -luck + edge)]
    paired = scored(records, {"kuhn": TaskScore(metric="return", low=-3, high=3, duplicate=2)})["tasks"]["kuhn"]["value"]
    single = scored(records, {"kuhn": TaskScore(metric="return", low=-3, high=3)})["tasks"]["kuhn"]["value"]
    assert paired["mean"] == single["mean"] == pytest.approx(0.1, abs=0.01)
    width = paired["ci95"][1] - paired["ci95"][0]
    assert width < 0.02 < single["ci95"][1] - single["ci95"][0]
