"""Decision facts of rl4vlm/FrozenLake-v0 (issue 38), on hand-drawn maps: exact moves to go on ice
that does not slip, each action's chance of reaching the goal on slippery ice (against an
independent value iteration). The kit's ``decisions`` check plays every level."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.frozenlake.frozen_lake import ACTIONS


def on_map(*rows: str, slippery: bool = False, level: int = 0) -> gym.Env:
    env = gym.make("rl4vlm/FrozenLake-v0", level=level, image_size=32, obs_mode="text")
    env.reset(seed=0)
    base = env.unwrapped
    base.desc, base.slippery = rows, slippery
    base.lake = FrozenLakeEnv(desc=list(rows), is_slippery=slippery)
    base.lake.reset(seed=0)
    base.position, base.last_action, base._policy = 0, None, None
    return env


def test_the_moves_to_go_fall_by_one_along_the_shortest_path_and_a_bump_keeps_them() -> None:
    env = on_map("SFFF", "HHHF", "FFFF", "GHHH")  # round the right side: 9 moves
    base = env.unwrapped
    assert base.decision() == {"optimal_actions": ["right"], "steps_to_go": 9, "values": None, "reason": None, "features": {"distance": 9}}
    env.step("left")  # off the map: Gymnasium's no-op, valid, no shorter
    assert base.decision()["steps_to_go"] == 9
    for to_go in range(9, 0, -1):
        facts = base.decision()
        assert facts["steps_to_go"] == to_go and base.oracle_action() in facts["optimal_actions"]
        env.step(facts["optimal_actions"][0])
    assert base.decision()["steps_to_go"] == 0  # at the goal: over, solved


def test_two_ways_round_are_both_optimal_and_a_walled_in_start_is_unsolvable() -> None:
    assert on_map("SF", "FG").unwrapped.decision()["optimal_actions"] == ["down", "right"]
    facts = on_map("SH", "HG").unwrapped.decision()
    assert facts["optimal_actions"] is None and facts["reason"] == "unsolvable from here: no path to the goal"
    assert facts["features"] == {"distance": -1}


def test_on_slippery_ice_only_the_move_that_cannot_slide_into_the_hole_is_optimal() -> None:
    env = on_map("SH", "FG", slippery=True, level=3)
    facts = env.unwrapped.decision()
    # From S, 'left' slides down to F or stays, never right into the hole: the goal is certain in the end.
    # Every other move slides (or goes) right into the hole one time in three.
    assert facts["optimal_actions"] == ["left"] and facts["steps_to_go"] == -1 and "chance" in facts["reason"]
    assert facts["values"]["left"] == pytest.approx(1.0, abs=1e-9)
    assert all(facts["values"][a] == pytest.approx(2 / 3, abs=1e-9) for a in ("down", "right", "up"))
    env.unwrapped.position = 2  # F, below S: no move can reach a hole, all four are optimal (ties)
    assert env.unwrapped.decision()["optimal_actions"] == list(ACTIONS)


def reference_values(rows: tuple[str, ...]) -> dict[int, dict[str, float]]:
    """Each action's chance of reaching the goal, by a plain value iteration on Gymnasium's table."""
    table: Any = FrozenLakeEnv(desc=list(rows), is_slippery=True).P
    value = dict.fromkeys(table, 0.0)
    while True:
        q = {s: [sum(p * (r + (0.0 if done else value[s2])) for p, s2, r, done in table[s][a]) for a in range(4)] for s in table}
        new = {s: max(q[s]) for s in table}
        if max(abs(new[s] - value[s]) for s in table) < 1e-13:
            return {s: dict(zip(ACTIONS, q[s], strict=True)) for s in table}
        value = new


def test_slippery_values_match_an_independent_value_iteration() -> None:
    rows = ("SFF", "HFH", "FFG")
    env = on_map(*rows, slippery=True, level=3)
    base = env.unwrapped
    reference = reference_values(rows)
    for position, ch in enumerate("".join(rows)):
        if ch in "HG":
            continue  # the episode would be over
        base.position = position
        facts = base.decision()
        assert facts["values"] == pytest.approx(reference[position], abs=1e-9), position
        best = max(reference[position].values())
        assert facts["optimal_actions"] == [a for a in ACTIONS if reference[position][a] >= best - 1e-9]
