"""Decision facts of rl4vlm/Sokoban-v0 (issue 38): hand-drawn rooms (two ways round, a move away, a
refused move, a room no push sequence solves) and generated rooms along a seeded walk against the
forward solver (an independent search). The kit's ``decisions`` check plays every level."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.sokoban.generator import Room
from rl4vlm_gym.envs.sokoban.oracle import solve


def in_room(*rows: str, **kwargs: Any) -> gym.Env:
    """An env whose episode plays this room (verl-agent's symbols)."""
    env = gym.make("rl4vlm/Sokoban-v0", obs_mode="text", **kwargs)
    env.reset(seed=0)
    cells = {(r, c): ch for r, row in enumerate(rows) for c, ch in enumerate(row)}
    pick = lambda *chars: frozenset(cell for cell, ch in cells.items() if ch in chars)  # noqa: E731
    room = Room(len(rows), len(rows[0]), pick("#"), pick("O", "√", "S"), pick("X", "√"), next(iter(pick("P", "S"))))
    base = env.unwrapped
    base.room, base.boxes, base.player = room, room.boxes, room.player
    return env


def test_two_ways_round_to_the_box_are_both_optimal_and_a_move_away_costs_one_more() -> None:
    env = in_room("######", "#P___#", "#__XO#", "######")  # down-right or right-down, then push: 3
    base = env.unwrapped
    facts = base.decision()
    assert facts["optimal_actions"] == ["down", "right"] and facts["steps_to_go"] == 3
    assert facts["features"] == {"boxes_left": 1}
    _, _, _, _, info = env.step("up")  # a wall: refused, nothing changes
    assert not info["action"]["valid"] and base.decision() == facts
    env.step("right")
    assert base.decision()["optimal_actions"] == ["down"] and base.decision()["steps_to_go"] == 2
    env.step("right")  # away from the square behind the box
    assert base.decision()["steps_to_go"] == 3 and base.decision()["optimal_actions"] == ["left"]
    for action in ("left", "down", "right"):
        env.step(action)
    assert base.decision()["steps_to_go"] == 0  # solved: the episode is over


def test_a_box_the_player_cannot_get_behind_is_unsolvable_from_here() -> None:
    facts = in_room("######", "#_XPO#", "######").unwrapped.decision()  # the box must go right; the player is on its right
    assert facts["optimal_actions"] is None and facts["steps_to_go"] == -1
    assert facts["reason"].startswith("unsolvable from here")


def test_a_push_into_a_corner_is_never_optimal() -> None:
    env = in_room("######", "#____#", "#_XP_#", "#___O#", "######")
    base = env.unwrapped
    assert "left" not in base.decision()["optimal_actions"]
    env.step("left")  # the box against the left wall: it can slide along it, never leave it, and no target is on it
    assert base.decision()["reason"].startswith("unsolvable from here")


def test_generated_rooms_along_a_seeded_walk_agree_with_the_forward_solver() -> None:
    env = gym.make("rl4vlm/Sokoban-v0", obs_mode="text", level=0)
    base, rng, checked = env.unwrapped, np.random.default_rng(7), 0
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        for _ in range(12):
            facts = base.decision()
            plan = solve(base.room.walls, base.room.targets, base.boxes, base.player)
            assert facts["steps_to_go"] == (-1 if plan is None else len(plan))
            assert plan is None or plan[0] in facts["optimal_actions"]
            checked += 1
            obs, _, terminated, truncated, _ = env.step(obs["actions"][int(rng.integers(4))])
            if terminated or truncated:
                break
    assert checked >= 12


def test_a_table_over_the_solvers_bound_gives_no_facts_and_says_why(monkeypatch: Any) -> None:
    from rl4vlm_gym.envs.sokoban import oracle, sokoban

    env = in_room("######", "#P___#", "#__XO#", "######")
    # The bound at, and just below, the number of the room's solvable states: exact at it, none below it.
    size = len(oracle.distances_to_go(env.unwrapped.room.walls, env.unwrapped.room.targets, 1))
    for bound, known in ((size, True), (size - 1, False)):
        monkeypatch.setattr(sokoban, "distances_to_go", lambda *a, b=bound: oracle.distances_to_go(*a, max_states=b))
        env.unwrapped._distances = None
        facts = env.unwrapped.decision()
        assert (facts["steps_to_go"] == 3) is known
        assert known or facts["reason"].startswith("the solver gave up: more than")
