"""The decisions check's own rules beyond its laws (tests/kit/test_kit.py holds the broken envs): where an optimal
action may stand in ``obs["actions"]`` (a filled template of free text), and counts, not time, fix what it plays."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from rl4vlm_gym.testing import check_decisions
from rl4vlm_gym.testing.decisions import _place

sys.path.insert(0, str(Path(__file__).resolve().parent))
kit_walk = importlib.import_module("kit_walk")


@pytest.mark.parametrize(
    ("action", "place"),
    [
        ("click[buy now]", 1),
        ("search[red shoes, size 9]", 0),  # fills the template
        ("search[]", 0),
        ("search[red shoes", None),  # not closed
        ("searches[red]", None),
        ("click[sell]", None),
        ("[...]", None),
        (3, None),
    ],
)
def test_an_optimal_action_is_admissible_or_fills_an_admissible_template(action: object, place: int | None) -> None:
    assert _place(action, ["search[...]", "click[buy now]", "click[< prev]"]) == place


def test_counts_fix_the_states_checked_and_the_summary_repeats(walk: str) -> None:
    short = check_decisions(walk, episodes=1, walk_steps=4)
    assert short == check_decisions(walk, episodes=1, walk_steps=4), "the same counts check the same states"
    longer = check_decisions(walk, episodes=2, walk_steps=12)
    states = [int(report.split("known in ")[1].split("/")[0]) for report in (short, longer)]
    assert states[0] < states[1], (short, longer)
    assert "at most 113 bytes of JSON a state" in longer, longer  # Walk's facts: {"side": 3} and two moves at most
