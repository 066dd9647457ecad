"""The navigation envs' decision facts: exact within ``HORIZON`` steps of the end (``oracle.shortest``).

Text mode, no render process and small images throughout: rendering is not what is tested.
"""

from __future__ import annotations

import importlib.util
import math

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)

from rl4vlm_gym.envs.navigation.oracle import shortest  # noqa: E402 - after the skip, as the nav extra's module


def make(env_id: str, level: int | None = None) -> gym.Env:
    return gym.make(env_id, level=level, obs_mode="text", render_process=False, image_size=(60, 80))


def test_shortest_by_hand_in_an_open_room() -> None:
    # OneRoom level 0: 0.7 m steps, 45-degree turns. The agent in the middle, the box half a step
    # beyond reach in a chosen direction; nothing else near.
    env = make("rl4vlm/MiniWorld-OneRoom-v1", 0)
    env.reset(seed=0)
    base = env.unwrapped
    world, planner = base.world, base.planner
    goal = world.goal_entity()
    reach = goal.radius + world.agent.radius + 1.1 * world.max_forward_step
    centre = np.array([(world.rooms[0].min_x + world.rooms[0].max_x) / 2, 0.0, (world.rooms[0].min_z + world.rooms[0].max_z) / 2])
    others = [e for e in world.entities if e is not world.agent and e is not goal]
    assert all(math.dist(e.pos[[0, 2]], centre[[0, 2]]) > 3 for e in others)

    def facts(box_heading: float, distance: float = reach + 0.5, horizon: int = 6) -> tuple[int, tuple[str, ...]] | None:
        world.agent.pos, world.agent.dir = centre.copy(), 0.0  # facing +x (MiniWorld's dir_vec = cos, -sin)
        goal.pos = centre + distance * np.array([math.cos(box_heading), 0.0, -math.sin(box_heading)])
        found = shortest(planner, base._phases(), base.ACTIONS, horizon)
        assert world.agent.pos.tolist() == centre.tolist() and world.agent.dir == 0.0  # the world is left as it was
        return found

    # Reach is 0.57 + 0.4 + 1.1 * 0.7 = 1.74 m; the box 2.24 m away.
    assert reach == pytest.approx(1.7357, abs=1e-4)
    assert facts(0.0) == (1, ("move forward",))
    assert facts(math.pi) == (1, ("move back",))
    # 45 degrees left: turn and step, or two steps straight on (then 1.60 m from it).
    assert facts(math.pi / 4) == (2, ("turn left", "move forward"))
    assert facts(math.pi / 4, horizon=2) == (2, ("turn left", "move forward"))  # the search's bound cuts neither way
    assert facts(-math.pi / 4) == (2, ("turn right", "move forward"))
    # 90 degrees left: two turns and a step, or a turn right and two steps back; one move first is no shorter.
    assert facts(math.pi / 2) == (3, ("turn left", "turn right"))
    assert facts(3 * math.pi / 4) == (2, ("turn right", "move back"))  # behind, to the left: mirror of 45 degrees
    assert facts(0.0, reach + 0.7 + 0.5) == (2, ("move forward",))  # two steps straight on
    assert facts(0.0, reach + 0.7 + 0.5, horizon=2) == (2, ("move forward",))  # at the horizon
    assert facts(0.0, reach + 0.7 + 0.5, horizon=1) is None  # past it
    assert facts(math.pi / 2, horizon=2) is None
    env.close()


@pytest.mark.slow  # 0.5 s: 84 sequences, each from a fresh reset
def test_facts_equal_every_action_sequence_played_in_the_env() -> None:
    # The reference: every sequence of actions up to steps_to_go, each played from a fresh reset with
    # the env's own step and success; the shortest that succeed, and their first actions.
    env = make("rl4vlm/MiniWorld-OneRoom-v1", 0)
    for seed in (1490961094, 3):
        env.reset(seed=seed)
        facts = env.unwrapped.decision()
        assert 0 < facts["steps_to_go"] <= 3, facts
        actions = list(env.unwrapped.ACTIONS)
        wins: dict[int, set[str]] = {}
        sequences = [[a] for a in actions]
        for _ in range(facts["steps_to_go"]):
            for sequence in sequences:
                env.reset(seed=seed)
                for i, action in enumerate(sequence):
                    _, _, terminated, _, info = env.step(action)
                    if terminated:
                        if info["success"]:
                            wins.setdefault(i + 1, set()).add(sequence[0])
                        break
            sequences = [[*s, a] for s in sequences for a in actions]
        fewest = min(wins)
        assert facts["steps_to_go"] == fewest and facts["optimal_actions"] == [a for a in actions if a in wins[fewest]]
    env.close()


# OneRoom's seed 0 at level 1: the planner's plan ends one step longer than the shortest way, so the
# oracle leaves it within the horizon and optimal_steps counts what it plays (14 -> 13).
@pytest.mark.parametrize(
    ("env_id", "level", "seeds"),
    [("rl4vlm/MiniWorld-OneRoom-v1", 1, 1), pytest.param("rl4vlm/MiniWorld-Sign-v1", 0, 2, marks=pytest.mark.slow)],
)
def test_oracle_play_and_a_random_walk_keep_the_semantics(env_id: str, level: int, seeds: int) -> None:
    env = make(env_id, level)
    base = env.unwrapped
    for seed in range(seeds):
        obs, _ = env.reset(seed=seed)
        before, steps, done = base.decision(), 0, False
        assert before["steps_to_go"] in (-1, base.optimal_steps)
        while not done:  # the oracle: optimal where the facts are known, one step less each time
            action = base.oracle_action()
            assert before["optimal_actions"] is None or action in before["optimal_actions"]
            _, _, done, truncated, info = env.step(action)
            after, steps = base.decision(), steps + 1
            assert before["steps_to_go"] < 0 or after["steps_to_go"] == before["steps_to_go"] - 1
            before, done = after, done or truncated
        assert info["success"] and steps == base.optimal_steps
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:  # the oracle's moves until the facts are known, then random ones
            before = base.decision()
            action = base.oracle_action() if before["steps_to_go"] < 0 else str(rng.choice(obs["actions"]))
            obs, _, done, truncated, info = env.step(action)
            after = base.decision()
            if before["steps_to_go"] >= 0 and (after["steps_to_go"] >= 0 or done):
                assert (after["steps_to_go"] == before["steps_to_go"] - 1) == (action in before["optimal_actions"])
                assert after["steps_to_go"] >= before["steps_to_go"] - 1 or after["steps_to_go"] == -1
            done = done or truncated
    env.close()


@pytest.mark.slow  # 0.6 s: a planner search on PutNext's room (PickupObjects' pick up is the same phase kind)
def test_pick_up_and_drop_keep_the_semantics() -> None:
    env_id = "rl4vlm/MiniWorld-PutNext-v1"
    env = make(env_id, 0)
    base = env.unwrapped
    for seed in range(1):
        obs, _ = env.reset(seed=seed)
        before, steps, done, known = base.decision(), 0, False, []
        while not done:
            action = base.oracle_action()
            assert before["optimal_actions"] is None or action in before["optimal_actions"]
            _, _, done, truncated, info = env.step(action)
            after, steps = base.decision(), steps + 1
            assert before["steps_to_go"] < 0 or after["steps_to_go"] == before["steps_to_go"] - 1
            known.append(action) if before["steps_to_go"] >= 0 else None
            before = after
        assert info["success"] and steps == base.optimal_steps and len(known) == base.HORIZON
        assert known[-1] == "drop"  # the last known step is the task's own action
    env.close()


@pytest.mark.slow  # 0.2 s
def test_pick_up_then_drop_by_hand() -> None:
    # PutNext level 0 (0.15 m steps): the red box just in reach ahead, the yellow one a little beyond where
    # the red one is carried, so pick up and drop it there (two steps; no move in between).
    env = make("rl4vlm/MiniWorld-PutNext-v1", 0)
    env.reset(seed=0)
    base = env.unwrapped
    world = base.world
    red, yellow, agent = world.red_box, world.yellow_box, world.agent
    centre = np.array([(world.rooms[0].min_x + world.rooms[0].max_x) / 2, 0.0, (world.rooms[0].min_z + world.rooms[0].max_z) / 2])
    for entity in world.entities:  # every other box far away, in a corner
        if entity not in (agent, red, yellow):
            entity.pos = np.array([world.rooms[0].min_x + 1.0, 0.0, world.rooms[0].min_z + 1.0])
    agent.pos, agent.dir = centre.copy(), 0.0
    ahead = np.array([1.0, 0.0, 0.0])
    red.pos = centre + ahead * (agent.radius + red.radius + 0.05)
    carried = 1.05 * (agent.radius + red.radius + world.max_forward_step)
    yellow.pos = centre + ahead * (carried + red.radius + yellow.radius + 0.05)
    assert world.in_reach() is red and not base._goal_holds()
    assert shortest(base.planner, base._phases(), base.ACTIONS, 4) == (2, ("pick up",))
    assert shortest(base.planner, base._phases(), base.ACTIONS, 1) is None
    env.close()
