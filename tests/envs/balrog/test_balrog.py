"""Rules of the balrog/BabyAI-* ids (tests/test_conformance.py runs the conformance kit on them;
test_golden_babyai.py compares them with BALROG's own wrapper)."""

from __future__ import annotations

import copy
from collections import Counter, deque
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytest.importorskip("minigrid")

from rl4vlm_gym.envs.balrog import babyai_oracle  # noqa: E402
from rl4vlm_gym.envs.balrog.babyai import ACTIONS, describe_view  # noqa: E402
from rl4vlm_gym.envs.balrog.babyai_generator import EXCLUDED, LOCKED_DOOR_COLOURS  # noqa: E402

TASKS = {"GoTo": "goto", "Pickup": "pickup", "Open": "open", "PutNext": "putnext", "PickUpSeqGoTo": "pick_up_seq_go_to"}


def make(name: str, **kwargs: Any) -> gym.Env:
    return gym.make(f"balrog/BabyAI-{name}-v0", obs_mode="text", **kwargs)


@pytest.mark.parametrize(("name", "objects", "width", "limit"), [
    ("GoTo", 1, 8, 64), ("Pickup", 1, 8, 64), ("Open", 1, 15, 128), ("PutNext", 2, 8, 128), ("PickUpSeqGoTo", 2, 8, 128),
])  # fmt: skip
def test_balrog_settings_no_distractors_and_minigrids_step_limits(name: str, objects: int, width: int, limit: int) -> None:
    env = make(name)
    env.reset(seed=4)
    game = env.unwrapped.game
    things = [c for c in game.grid.grid if c is not None and c.type not in ("wall", "door")]
    assert len(things) == objects and game.grid.width == width and game.grid.height == 8
    assert game.max_steps == limit == env.spec.max_episode_steps


def test_open_is_a_locked_door_with_its_key_in_the_agents_room_named_by_colour_half_the_time() -> None:
    env = make("Open")
    named = 0
    for seed in range(60):
        env.reset(seed=seed)
        game = env.unwrapped.game
        (door,) = [c for c in game.grid.grid if c is not None and c.type == "door"]
        (key,) = [c for c in game.grid.grid if c is not None and c.type == "key"]
        assert door.is_locked and door.color == key.color and door.color in LOCKED_DOOR_COLOURS
        assert game.room_from_pos(*key.cur_pos) is game.room_from_pos(*game.agent_pos) is not game.locked_room
        assert game.mission in ("open the door", f"open the {door.color} door")
        named += game.mission != "open the door"
    assert 20 <= named <= 40


def test_missions_leave_out_the_forks_held_out_pairs_and_sequences_say_both_orders() -> None:
    missions = [make(name).unwrapped for name in TASKS]
    seen: Counter[str] = Counter()
    for env in missions:
        for seed in range(40):
            env.reset(seed=seed)
            mission = env.game.mission
            assert not any(words in mission for words in EXCLUDED), mission
            seen[", then " in mission and "then" or " after you " in mission and "after" or "other"] += 1
    assert seen["then"] > 5 and seen["after"] > 5


def test_the_model_of_minigrid_follows_minigrid_under_random_play() -> None:
    """Every action on the real game and on the planner's model gives the same state and verdict."""
    rng = np.random.default_rng(0)
    for name in TASKS:
        env = make(name)
        for seed in range(10):
            env.reset(seed=seed)
            game = env.unwrapped.game
            scene, state = babyai_oracle.read(game)
            while True:
                action = int(rng.choice(6, p=[0.15, 0.15, 0.3, 0.15, 0.15, 0.1]))
                state, status = babyai_oracle.step(scene, state, action)
                _, reward, terminated, truncated, _ = game.step(action)
                assert terminated == (status == "success") == (reward > 0), (name, seed, ACTIONS[action])
                if terminated or truncated:
                    break
                assert babyai_oracle.read(game) == (scene, state), (name, seed, ACTIONS[action])


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


@pytest.mark.parametrize(("name", "seed"), [("GoTo", 0), ("Open", 19), ("PickUpSeqGoTo", 1)])
def test_optimal_steps_equal_a_search_over_real_minigrid_copies(name: str, seed: int) -> None:
    # Open 19: fetch the key, unlock and open; PickUpSeqGoTo 1: "go to a yellow key after you pick up
    # a yellow key" (two alike: picking one up faces where it was, which the verifier still counts)
    env = make(name)
    _, info = env.reset(seed=seed)
    assert info["optimal_steps"] == _search_minigrid(env.unwrapped.game, info["optimal_steps"] + 1)


def test_a_star_plans_are_as_short_as_breadth_first_ones() -> None:
    """The planner's A* bound is admissible: at the start and after random play, its plans are as
    short as breadth-first search's and succeed on the model at their last step only."""
    rng = np.random.default_rng(3)
    for name in TASKS:
        env = make(name)
        for seed in range(12):
            env.reset(seed=seed)
            game = env.unwrapped.game
            for _ in range(3):
                scene, state = babyai_oracle.read(game)
                plan, bfs = babyai_oracle.shortest_plan(scene, state), babyai_oracle.shortest_plan_bfs(scene, state)
                assert (plan is None) == (bfs is None) and (plan is None or len(plan) == len(bfs)), (name, seed)
                for i, action in enumerate(plan or []):
                    state, status = babyai_oracle.step(scene, state, action)
                    assert (status == "success") == (i == len(plan) - 1), (name, seed)
                ended = False
                for _ in range(int(rng.integers(3, 20))):
                    _, _, terminated, truncated, _ = game.step(int(rng.choice(6, p=[0.15, 0.15, 0.3, 0.15, 0.15, 0.1])))
                    if terminated or truncated:
                        ended = True
                        break
                if ended:
                    break


def test_the_oracle_solves_every_task_in_optimal_steps() -> None:
    for name in TASKS:
        env = make(name)
        for seed in range(8):
            _, info = env.reset(seed=seed)
            steps, terminated = 0, False
            while not terminated:
                _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
                steps += 1
                assert not truncated
            assert info["success"] and steps == env.unwrapped.optimal_steps, (name, seed)


def test_putnext_plans_may_move_the_fixed_object_first() -> None:
    """The verifier tracks the fixed object where it was last dropped, so moving it can be shorter."""
    from rl4vlm_gym.envs.balrog.babyai_oracle import DROP, PICKUP, Scene, shortest_plan

    walls = frozenset({(x, y) for x in range(8) for y in range(8) if x in (0, 7) or y in (0, 7)})
    scene = Scene("putnext", walls, None, (False, False), ((0,), (1,)))
    # agent at (5, 1) facing down onto the fixed object at (5, 2); the moved object far away at (1, 6)
    start = (5, 1, 1, -1, ((1, 6), (5, 2)), (((1, 6),), ((5, 2),)), False)
    plan = shortest_plan(scene, start)
    assert plan is not None and plan[0] == PICKUP and plan.count(PICKUP) == 2 and plan.count(DROP) == 2


def _view(cells: dict[tuple[int, int], tuple[int, int, int]]) -> np.ndarray:
    view = np.zeros((7, 7, 3), np.uint8)
    view[:, :, 0] = 1  # all seen and empty
    for (x, y), code in cells.items():
        view[x, y] = code
    return view


def test_text_in_the_forks_words_and_order() -> None:
    wall, ball, key, door = 2, 6, 5, 4
    red, green, blue = 0, 1, 2
    view = _view({
        (3, 2): (ball, red, 0),  # ahead: hides the wall behind it
        (3, 0): (wall, 0, 0),
        (0, 6): (wall, 0, 0),  # left
        (5, 6): (door, green, 0),  # right: an open door hides the wall behind it
        (6, 6): (wall, 0, 0),
        (1, 5): (key, blue, 0),
        (3, 6): (key, green, 0),  # carried
    })  # fmt: skip
    assert describe_view(view) == [
        "You carry a green key",
        "a wall 3 steps left",
        "a blue key 2 steps left and 1 step forward",
        "a red ball 4 steps forward",
        "a open green door 2 steps right",
    ]
    view[3, 2] = (1, 0, 0)
    view[3, 1] = (0, 0, 0)  # unseen cells are looked past
    assert describe_view(view)[1] == "a wall 6 steps forward"


def test_the_image_is_minigrids_egocentric_view_and_text_follows_the_turn() -> None:
    env = gym.make("balrog/BabyAI-GoTo-v0")
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (112, 112, 3)
    assert np.array_equal(obs["image"], env.unwrapped.game.get_pov_render(tile_size=16))
    assert obs["text"] == info["balrog"]["long_term_context"] and info["balrog"]["short_term_context"] == ""
    before = obs["text"]
    obs, *_ = env.step("turn left")
    assert obs["text"] != before and np.array_equal(obs["image"], env.unwrapped.game.get_pov_render(tile_size=16))


def test_reset_seed_decides_the_level_and_reset_without_one_draws_the_next() -> None:
    a, b = make("PutNext"), make("PutNext")
    a.reset(seed=123)
    b.reset(seed=123)
    assert a.unwrapped.game.mission == b.unwrapped.game.mission
    first = a.unwrapped._state_key()
    a.reset()
    b.reset()
    assert a.unwrapped._state_key() == b.unwrapped._state_key() != first


def test_seq_does_not_fail_when_the_second_object_is_reached_first() -> None:
    env = make("PickUpSeqGoTo")
    env.reset(seed=3)  # "pick up the grey key, then go to the red box"
    game = env.unwrapped.game
    first, second = (part.obj_set[0] for part in babyai_oracle.mission_parts(game))
    # stand facing the second object without having picked up the first
    for d, (dx, dy) in enumerate(babyai_oracle.DIR_TO_VEC):
        cell = (second.cur_pos[0] - dx, second.cur_pos[1] - dy)
        if game.grid.get(*cell) is None:
            game.agent_pos, game.agent_dir = np.array(cell), (d + 1) % 4  # turning left then faces it
            break
    _, reward, terminated, _, info = env.step("turn left")
    assert not terminated and reward == 0.0 and not info["success"]
    while not info["success"]:
        _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    assert terminated and reward > 0


def test_an_invalid_output_spends_a_step_of_minigrids_clock() -> None:
    env = make("GoTo", action_match="strict")
    env.reset(seed=0)
    for step in range(64):
        _, reward, terminated, truncated, info = env.step("fly")
        assert not info["action"]["valid"] and reward == 0.0 and not terminated
        assert env.unwrapped.game.step_count == step + 1 and truncated == (step == 63)


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
        moved = babyai_oracle.mission_parts(game)[0].obj_set[0]
        if moved.type == "box":
            break
    game.grid.set(*moved.cur_pos, None)  # as if toggled away: nothing can succeed any more
    env.unwrapped.plan = None
    calls = []
    real = babyai_oracle.shortest_plan
    monkeypatch.setattr(babyai_oracle, "shortest_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert env.unwrapped.oracle_action() == env.unwrapped.oracle_action() == "turn left"
    assert len(calls) == 1
