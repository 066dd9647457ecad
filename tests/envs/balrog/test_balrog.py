"""Rules of the balrog/BabyAI-* ids (tests/test_conformance.py runs the conformance kit on them)."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytest.importorskip("minigrid")

from rl4vlm_gym.envs.balrog import babyai_planner  # noqa: E402
from rl4vlm_gym.envs.balrog.babyai import ACTIONS, describe_view  # noqa: E402

TASKS = {"GoTo": "goto", "Pickup": "pickup", "Open": "open", "PutNext": "putnext", "PickUpSeqGoTo": "pick_up_seq_go_to"}


def make(name: str, **kwargs: Any) -> gym.Env:
    return gym.make(f"balrog/BabyAI-{name}-v0", obs_mode="text", **kwargs)


@pytest.mark.parametrize(("name", "objects", "width", "limit"), [
    ("GoTo", 1, 8, 64), ("Pickup", 1, 8, 64), ("Open", 0, 15, 128), ("PutNext", 2, 8, 128), ("PickUpSeqGoTo", 2, 8, 128),
])
def test_balrog_settings_no_distractors_and_minigrids_step_limits(name: str, objects: int, width: int, limit: int) -> None:
    env = make(name)
    env.reset(seed=4)
    game = env.unwrapped.game
    things = [c for c in game.grid.grid if c is not None and c.type not in ("wall", "door")]
    assert len(things) == objects and game.grid.width == width and game.grid.height == 8
    assert game.max_steps == limit == env.spec.max_episode_steps


def test_the_model_of_minigrid_follows_minigrid_under_random_play() -> None:
    """Every action on the real game and on the planner's model gives the same state and verdict."""
    rng = np.random.default_rng(0)
    for name in TASKS:
        env = make(name)
        for seed in range(6):
            env.reset(seed=seed)
            game = env.unwrapped.game
            scene, state = babyai_planner.read(game)
            for _ in range(60):
                action = int(rng.integers(6))
                state, status = babyai_planner.step(scene, state, action)
                _, reward, terminated, _, _ = game.step(action)
                assert status != "continue" if terminated else status == "continue", (name, seed, action)
                if terminated:
                    assert (reward > 0) == (status == "success")
                    break
                assert babyai_planner.read(game) == (scene, state), (name, seed, ACTIONS[action])


def _search_minigrid(game: Any, depth: int) -> int | None:
    """Fewest steps to success by breadth-first search over deep copies of the real minigrid game."""
    def key(g: Any) -> Any:
        held = None if g.carrying is None else (g.carrying.type, g.carrying.color)
        return (tuple(g.agent_pos), g.agent_dir, held, g.grid.encode().tobytes())

    seen, frontier = {key(game)}, deque([(game, 0)])
    while frontier:
        g, d = frontier.popleft()
        if d >= depth:
            return None
        for action in range(6):
            h = copy.deepcopy(g)
            _, reward, terminated, _, _ = h.step(action)
            if terminated:
                if reward > 0:
                    return d + 1
                continue
            if key(h) not in seen:
                seen.add(key(h))
                frontier.append((h, d + 1))
    return None


@pytest.mark.parametrize(("name", "seed"), [("GoTo", 0), ("Open", 2)])
def test_optimal_steps_equal_a_search_over_real_minigrid_copies(name: str, seed: int) -> None:
    # seeds where minigrid's BabyAIBot takes longer (6 and 11 steps) than the shortest plan
    env = make(name)
    _, info = env.reset(seed=seed)
    assert info["optimal_steps"] == _search_minigrid(env.unwrapped.game, info["optimal_steps"] + 1)


def test_putnext_plans_may_move_the_fixed_object_first() -> None:
    """The verifier tracks the fixed object where it was last dropped, so moving it can be shorter."""
    from rl4vlm_gym.envs.balrog.babyai_planner import DROP, PICKUP, Scene, shortest_plan

    walls = frozenset({(x, y) for x in range(8) for y in range(8) if x in (0, 7) or y in (0, 7)})
    scene = Scene("putnext", walls, None, (False, False))
    # agent at (5, 1) facing down onto the fixed object at (5, 2); the moved object far away at (1, 6)
    start = (5, 1, 1, -1, ((1, 6), (5, 2)), (False, False), ((1, 6), (5, 2)), False)
    plan = shortest_plan(scene, start)
    assert plan is not None and plan[0] == PICKUP and plan.count(PICKUP) == 2 and plan.count(DROP) == 2


def test_text_says_what_the_view_shows_in_balrogs_words() -> None:
    env = make("PickUpSeqGoTo")
    env.reset(seed=2)
    game = env.unwrapped.game
    assert game.grid.get(3, 6) is None
    game.agent_pos, game.agent_dir = np.array((3, 6)), 3  # facing up from the bottom row
    view = game.gen_obs()["image"]
    lines = describe_view(view, None)
    assert "a wall 6 steps forward" in lines and "a wall 3 steps left" in lines and "a wall 4 steps right" not in lines
    for obj in [c for c in game.grid.grid if c is not None and c.type != "wall"]:
        x, y = obj.cur_pos
        side = x - 3
        where = [f"{abs(side)} step{'s' if abs(side) != 1 else ''} {'left' if side < 0 else 'right'}"] if side else []
        where += [f"{6 - y} step{'s' if 6 - y != 1 else ''} forward"] if y != 6 else []
        assert f"a {obj.color} {obj.type} {' and '.join(where)}" in lines
    game.carrying = game.grid.get(*[c for c in game.grid.grid if c is not None and c.type != "wall"][0].cur_pos)
    assert describe_view(view, game.carrying)[0] == f"You carry a {game.carrying.color} {game.carrying.type}"


def test_the_image_is_minigrids_egocentric_view_and_text_follows_the_turn() -> None:
    env = gym.make("balrog/BabyAI-GoTo-v0")
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (112, 112, 3)
    assert np.array_equal(obs["image"], env.unwrapped.game.get_pov_render(tile_size=16))
    before = obs["text"]
    obs, *_ = env.step("turn left")
    assert obs["text"] != before and np.array_equal(obs["image"], env.unwrapped.game.get_pov_render(tile_size=16))


def test_seq_fails_when_the_second_object_is_reached_first() -> None:
    env = make("PickUpSeqGoTo")
    env.reset(seed=1)
    game = env.unwrapped.game
    first, second = babyai_planner.objects_of(game)
    # stand facing the second object without having picked up the first
    for d, (dx, dy) in enumerate(babyai_planner.DIR_TO_VEC):
        cell = (second.cur_pos[0] - dx, second.cur_pos[1] - dy)
        if game.grid.get(*cell) is None:
            game.agent_pos, game.agent_dir = np.array(cell), (d + 1) % 4  # turning left then faces it
            break
    _, reward, terminated, _, info = env.step("turn left")
    assert terminated and reward == 0.0 and not info["success"] and info["progress"] == 0.0


def test_progression_is_one_when_a_reward_was_paid() -> None:
    env = make("Pickup")
    _, info = env.reset(seed=5)
    total, steps = 0.0, 0
    while not info["success"]:
        _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
        total, steps = total + reward, steps + 1
    assert terminated and info["progress"] == 1.0 and total == pytest.approx(1 - 0.9 * steps / 64)


def test_unknown_task_is_named() -> None:
    with pytest.raises(ValueError, match="task='fly' is unknown"):
        gym.make("balrog/BabyAI-GoTo-v0", task="fly")


def test_a_state_with_no_plan_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    env = make("PutNext")
    for seed in range(40):
        env.reset(seed=seed)
        game = env.unwrapped.game
        moved = babyai_planner.objects_of(game)[0]
        if moved.type == "box":
            break
    game.grid.set(*moved.cur_pos, None)  # as if toggled away: nothing can succeed any more
    env.unwrapped.plan = None
    calls = []
    real = babyai_planner.shortest_plan
    monkeypatch.setattr(babyai_planner, "shortest_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert env.unwrapped.oracle_action() == env.unwrapped.oracle_action() == "turn left"
    assert len(calls) == 1
