"""Our worlds' collision test is MiniWorld's: the same verdict and the same entity on every pose,
touching ones included (where MiniWorld's own code decides)."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the ids

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)


# PickupObjects: 4 walls and many objects (plain floats); Maze: 36 walls (numpy)
@pytest.mark.parametrize("env_id", ["rl4vlm/MiniWorld-PickupObjects-v1", "rl4vlm/MiniWorld-Maze-v1"])
def test_intersect_is_miniworlds(env_id: str) -> None:
    env = gym.make(env_id, image_size=(32, 32))
    env.reset(seed=2)
    from miniworld.entity import Entity
    from miniworld.miniworld import MiniWorldEnv  # imported headless by the env

    world = env.unwrapped.world
    rng = np.random.default_rng(0)
    lo = np.array([min(r.min_x for r in world.rooms), min(r.min_z for r in world.rooms)]) - 1
    hi = np.array([max(r.max_x for r in world.rooms), max(r.max_z for r in world.rooms)]) + 1
    cases = []
    for i in range(3000):  # anywhere, any size, any mover
        x, z = rng.uniform(lo, hi)
        cases.append((world.entities[i % len(world.entities)], np.array([x, rng.uniform(0, 2), z]), rng.uniform(0.05, 1.0)))
    for other in world.entities:  # exactly touching another entity, and a hair either side
        if other is not world.agent:
            for radius in (0.3 - 1e-12, 0.3, 0.3 + 1e-12):
                cases.append((world.agent, other.pos + np.array([radius + other.radius, 0.0, 0.0]), 0.3))
    a, b = world.wall_segs[0]  # exactly touching a wall, and a hair either side, from its midpoint
    normal = np.array([-(b - a)[2], 0.0, (b - a)[0]]) / np.linalg.norm(b - a)
    for gap in (0.4 - 1e-12, 0.4, 0.4 + 1e-12):
        cases.append((world.agent, (a + b) / 2 + gap * normal, 0.4))
    verdicts = set()
    for mover, pos, radius in cases:
        ours, theirs = world.intersect(mover, pos, radius), MiniWorldEnv.intersect(world, mover, pos, radius)
        assert ours is theirs or (ours is True and theirs is True), (env_id, pos, radius, ours, theirs)
        verdicts.add("wall" if ours is True else "none" if ours is None else "entity")
    assert verdicts == {"wall", "entity", "none"}
    # in_reach (the planner's pick-up test, on Python floats) is MiniWorldEnv.step's, from any pose: random
    # ones, and ones whose probe point exactly touches an object, or a hair either side
    agent, reached = world.agent, set()
    poses = [(np.array([x, 0.0, z]), rng.uniform(-4, 4)) for x, z in rng.uniform(lo, hi, size=(2000, 2))]
    for other in world.entities:
        if other is not agent and not other.is_static:
            heading = rng.uniform(-4, 4)
            facing = np.array([np.cos(heading), 0.0, -np.sin(heading)])
            for gap in (-1e-12, 0.0, 1e-12):
                poses.append((other.pos - facing * (1.5 * agent.radius + 1.2 * agent.radius + other.radius + gap), heading))
    for pos, heading in poses:
        agent.pos, agent.dir = pos, heading
        probe = agent.pos + agent.dir_vec * 1.5 * agent.radius
        assert np.array(world.pick_probe(), dtype=np.float64).tobytes() == probe.tobytes(), (pos, heading)  # bit for bit
        hit = MiniWorldEnv.intersect(world, agent, probe, 1.2 * agent.radius)
        theirs = hit if isinstance(hit, Entity) and not hit.is_static else None
        assert world.in_reach() is theirs, (env_id, pos, heading)
        reached.add(theirs is None)
    assert reached == {True, False}  # some poses reach an object, some none
    env.close()


def test_near_and_in_street_are_miniworlds() -> None:
    # The patch miniworld-proximity: our near and in_street give MiniWorld's verdicts, at the reach's and
    # the street edge's exact distance and a hair either side too (where MiniWorld's own code decides).
    env = gym.make("rl4vlm/MiniWorld-Sidewalk-v1", image_size=(32, 32), level=2)
    env.reset(seed=3)
    from miniworld.miniworld import MiniWorldEnv, Room  # imported headless by the env

    world = env.unwrapped.world
    agent, goal = world.agent, world.goal_entity()
    reach = agent.radius + goal.radius + 1.1 * world.max_forward_step
    rng = np.random.default_rng(0)
    street = world.street
    lo = np.array([min(r.min_x for r in world.rooms), min(r.min_z for r in world.rooms)]) - 1
    hi = np.array([max(r.max_x for r in world.rooms), max(r.max_z for r in world.rooms)]) + 1
    points = [np.array([x, 0.0, z]) for x, z in rng.uniform(lo, hi, size=(3000, 2))]
    direction = rng.normal(size=3) * [1, 0, 1]
    direction /= np.linalg.norm(direction)
    points += [goal.pos + (reach + d) * direction for d in (-1e-12, 0.0, 1e-12)]  # at the reach
    a, norm = street.outline[0], street.edge_norms[0]  # on the street's first edge, and a hair either side
    along = (street.outline[1] - a) / 2
    points += [a + along + d * norm for d in (-1e-12, 0.0, 1e-12)]
    verdicts = set()
    for pos in points:
        agent.pos = pos
        near = world.near(goal)
        assert type(near) is type(MiniWorldEnv.near(world, goal)) and near == MiniWorldEnv.near(world, goal), pos
        assert world.in_street() is bool(Room.point_inside(street, pos)), pos
        verdicts.add((bool(near), world.in_street()))
    assert {(True, False), (False, False), (False, True)} <= verdicts
    env.close()
