"""The text-mode "camera": geometry in envs/navigation/perception.py checked against real MiniWorld frames.

Poses are set directly on the unwrapped MiniWorld env after a reset, then the same state is both
described (pure geometry) and rendered (``render_obs``, an 80x60 frame) to confirm that what the
text calls left/right/invisible is what the camera shows. Red box pixels: R high, G and B low.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)

import gymnasium as gym  # noqa: E402

from rl4vlm_gym.envs.navigation.gl import import_miniworld  # noqa: E402

import_miniworld()  # headless, and its GL context made when the first world is

from miniworld.entity import Ball, Box, Key, MeshEnt, TextFrame  # noqa: E402

from rl4vlm_gym.envs.navigation import perception  # noqa: E402
from rl4vlm_gym.envs.navigation.perception import (  # noqa: E402
    Sighting,
    describe,
    entity_name,
    horizontal_fov,
    sightings,
    wall_distance,
)

ASPECT = 80 / 60  # render_obs is 80 wide, 60 high
HALF_FOV = horizontal_fov(60, ASPECT) / 2


def _make(env_id: str):
    world = gym.make(env_id).unwrapped
    world.reset(seed=0)
    return world


@pytest.fixture(scope="module")
def _oneroom():
    world = _make("MiniWorld-OneRoom-v0")
    yield world
    world.close()


@pytest.fixture(scope="module")
def _fourrooms():
    world = _make("MiniWorld-FourRooms-v0")
    yield world
    world.close()


@pytest.fixture
def oneroom(_oneroom):
    _oneroom.reset(seed=0)
    return _oneroom


@pytest.fixture
def fourrooms(_fourrooms):
    _fourrooms.reset(seed=0)
    return _fourrooms


def _pose(world, x: float, z: float, direction: float) -> None:
    world.agent.pos = np.array([x, 0.0, z])
    world.agent.dir = direction


def _put(world, ent, bearing: float, dist: float) -> np.ndarray:
    """Place ent at a bearing (degrees, + = left) and floor distance from the agent; returns its position."""
    heading = world.agent.dir + math.radians(bearing)
    ent.pos = world.agent.pos + dist * np.array([math.cos(heading), 0.0, -math.sin(heading)])
    # Turn the box so a corner points sideways: its silhouette is then as wide as its bounding circle.
    ent.dir = heading + math.pi / 4
    return ent.pos


def _red(world) -> np.ndarray:
    img = world.render_obs()
    assert img.shape == (60, 80, 3)
    return (img[..., 0] > 100) & (img[..., 1] < 60) & (img[..., 2] < 60)


def test_horizontal_fov():
    assert horizontal_fov(60, 1.0) == pytest.approx(60)
    assert horizontal_fov(60, ASPECT) == pytest.approx(2 * math.degrees(math.atan(math.tan(math.radians(30)) * 4 / 3)))
    assert 75 < horizontal_fov(60, ASPECT) < 76


@pytest.mark.parametrize("direction", [0.0, 0.7, -2.0])
@pytest.mark.parametrize("bearing", [25.0, 10.0, 0.0, -10.0, -25.0])
def test_bearing_sign_matches_image(oneroom, direction, bearing):
    _pose(oneroom, 5, 5, direction)
    _put(oneroom, oneroom.box, bearing, 3.5)
    (seen,) = sightings(oneroom, ASPECT)
    assert seen.name == "red box"
    assert seen.bearing == pytest.approx(bearing)
    assert seen.distance == pytest.approx(3.5)
    cols = np.nonzero(_red(oneroom))[1]
    assert cols.size > 0
    centre = cols.mean() - 39.5  # < 0: left half of the image
    if bearing > 0:
        assert centre < -5
    elif bearing < 0:
        assert centre > 5
    else:
        assert abs(centre) < 2


def test_object_behind_agent_is_invisible(oneroom):
    _pose(oneroom, 5, 5, 0.3)
    _put(oneroom, oneroom.box, 180, 3.0)
    assert sightings(oneroom, ASPECT) == []
    assert not _red(oneroom).any()
    assert describe(oneroom, ASPECT).startswith("You see no objects.")


@pytest.mark.parametrize("side", [1, -1])
def test_field_of_view_edge_counts_half_visible_objects(oneroom, side):
    _pose(oneroom, 5, 5, 0.4)
    dist = 4.0
    half_width = math.degrees(math.asin(oneroom.box.radius / dist))

    # Centre outside the view but the near edge inside it: reported, and a sliver is on screen at that border.
    _put(oneroom, oneroom.box, side * (HALF_FOV + half_width - 3), dist)
    assert [s.name for s in sightings(oneroom, ASPECT)] == ["red box"]
    assert abs(sightings(oneroom, ASPECT)[0].bearing) > HALF_FOV
    cols = np.nonzero(_red(oneroom))[1]
    assert cols.size > 0
    assert (cols.min() == 0) if side > 0 else (cols.max() == 79)

    # Entirely outside: not reported, and no red on screen.
    _put(oneroom, oneroom.box, side * (HALF_FOV + half_width + 1.5), dist)
    assert sightings(oneroom, ASPECT) == []
    assert not _red(oneroom).any()


def test_wall_occludes_object_in_next_room(fourrooms):
    # FourRooms: rooms at x in [-7, -1] and [1, 7], joined by a corridor at z in [3, 5].
    _pose(fourrooms, 4, 2, math.pi)  # facing -x, at the wall x = 1 below the doorway
    fourrooms.box.pos = np.array([-4.0, 0.0, 2.0])
    assert sightings(fourrooms, ASPECT) == []
    assert not _red(fourrooms).any()
    assert wall_distance(fourrooms) == pytest.approx(3.0)

    # Same offset, but in line with the doorway: seen through it, and the wall ahead is the far room's.
    _pose(fourrooms, 4, 4, math.pi)
    fourrooms.box.pos = np.array([-4.0, 0.0, 4.0])
    (seen,) = sightings(fourrooms, ASPECT)
    assert (seen.name, seen.distance, seen.bearing) == ("red box", pytest.approx(8.0), pytest.approx(0.0, abs=1e-9))
    assert _red(fourrooms).any()
    assert wall_distance(fourrooms) == pytest.approx(11.0)


def test_carried_object_is_excluded(oneroom):
    _pose(oneroom, 5, 5, 0.0)
    box = oneroom.box
    oneroom.agent.carrying = box
    box.pos = oneroom._get_carry_pos(oneroom.agent.pos, box)
    assert sightings(oneroom, ASPECT) == []
    # Held up in front of the camera it is on screen; the text reports it as carried instead.
    assert _red(oneroom).any()
    assert describe(oneroom, ASPECT) == "You see no objects. The wall ahead is 5.0 m away. You are carrying a red box."


def test_wall_distance(oneroom):
    _pose(oneroom, 2, 5, 0.0)  # room is [0, 10] x [0, 10]; facing +x
    assert wall_distance(oneroom) == pytest.approx(8.0)
    _pose(oneroom, 2, 3, math.pi / 2)  # facing -z
    assert wall_distance(oneroom) == pytest.approx(3.0)
    _pose(oneroom, 5, 5, math.pi / 4)  # towards the corner (10, 0)
    assert wall_distance(oneroom) == pytest.approx(5 * math.sqrt(2))
    empty = SimpleNamespace(agent=oneroom.agent, wall_segs=np.zeros((0, 2, 3)))
    assert wall_distance(empty) == math.inf


def test_describe_no_one_two_three_objects(oneroom):
    _pose(oneroom, 5, 5, 0.0)
    _put(oneroom, oneroom.box, 180, 3.0)
    assert describe(oneroom, ASPECT) == "You see no objects. The wall ahead is 5.0 m away."

    _put(oneroom, oneroom.box, 10, 3.4)
    assert describe(oneroom, ASPECT) == "You see a red box slightly to the left, 3.5 m away. The wall ahead is 5.0 m away."

    ball = Ball(color="blue")
    oneroom.entities.append(ball)
    _put(oneroom, ball, -20, 1.0)
    assert describe(oneroom, ASPECT) == (
        "You see a blue ball to the right, 1.0 m away, and a red box slightly to the left, 3.5 m away. "
        "The wall ahead is 5.0 m away."
    )

    key = Key(color="yellow")
    oneroom.entities.append(key)
    _put(oneroom, key, -40, 2.2)
    assert describe(oneroom, ASPECT) == (
        "You see a blue ball to the right, 1.0 m away, a yellow key far to the right, 2.0 m away, "
        "and a red box slightly to the left, 3.5 m away. The wall ahead is 5.0 m away."
    )
    assert [s.name for s in sightings(oneroom, ASPECT)] == ["blue ball", "yellow key", "red box"]


@pytest.mark.parametrize(
    "bearing, words",
    [
        (0.0, "straight ahead"),
        (4.5, "straight ahead"),
        (-4.5, "straight ahead"),
        (5.5, "slightly to the left"),
        (-14.5, "slightly to the right"),
        (15.5, "to the left"),
        (-29.5, "to the right"),
        (30.5, "far to the left"),
        (-40.0, "far to the right"),
    ],
)
def test_direction_words(oneroom, bearing, words):
    _pose(oneroom, 5, 5, 1.0)
    _put(oneroom, oneroom.box, bearing, 3.0)
    assert describe(oneroom, ASPECT).startswith(f"You see a red box {words}, 3.0 m away.")


def test_entity_names(oneroom):
    from miniworld.envs.sign import BigKey

    assert entity_name(Box(color="red")) == "red box"
    assert entity_name(Ball(color="blue")) == "blue ball"
    assert entity_name(Key(color="yellow")) == "yellow key"
    assert entity_name(BigKey(color="green")) == "green key"
    assert entity_name(MeshEnt(mesh_name="cone", height=0.75)) == "cone"
    assert entity_name(MeshEnt(mesh_name="medkit", height=0.4)) == "medkit"
    assert entity_name(MeshEnt(mesh_name="building", height=30)) is None
    assert entity_name(TextFrame(pos=[0, 1.35, 0], dir=0.0, str="RED")) == "sign that reads 'RED'"
    assert entity_name(oneroom.agent) is None


def test_sign_on_its_wall_is_not_hidden_by_that_wall():
    world = _make("MiniWorld-Sign-v0")
    try:
        (sign,) = [e for e in world.entities if type(e).__name__ == "TextFrame"]
        facing = np.array([math.cos(sign.dir), 0.0, -math.sin(sign.dir)])
        world.agent.pos = np.array([sign.pos[0], 0.0, sign.pos[2]]) + 3 * facing
        world.agent.dir = sign.dir + math.pi
        names = {s.name: s for s in sightings(world, ASPECT)}
        seen = names[f"sign that reads '{sign.str}'"]
        assert seen.distance == pytest.approx(3.0)
        assert seen.bearing == pytest.approx(0.0, abs=1e-9)
        assert wall_distance(world) == pytest.approx(3.0)
    finally:
        world.close()


def test_deterministic_and_read_only(fourrooms, oneroom):
    texts = []
    for world in (fourrooms, oneroom):
        for seed in range(4):
            world.reset(seed=seed)
            world.agent.dir = 0.5 * seed  # look around so some seeds see the box
            rng_state = world.np_random.bit_generator.state
            pos = world.agent.pos.copy()
            first = (describe(world, ASPECT), sightings(world, ASPECT))
            assert (describe(world, ASPECT), sightings(world, ASPECT)) == first
            assert world.np_random.bit_generator.state == rng_state
            assert np.array_equal(world.agent.pos, pos)
            texts.append(first[0])
    again = []
    for world in (fourrooms, oneroom):
        for seed in range(4):
            world.reset(seed=seed)
            world.agent.dir = 0.5 * seed
            again.append(describe(world, ASPECT))
    assert again == texts
    assert any(not t.startswith("You see no objects.") for t in texts)


def test_sightings_sorted_by_distance_then_name(oneroom):
    _pose(oneroom, 5, 5, 0.0)
    _put(oneroom, oneroom.box, 10, 3.0)
    ball = Ball(color="blue")
    oneroom.entities.append(ball)
    _put(oneroom, ball, -10, 3.0)
    assert [s.name for s in sightings(oneroom, ASPECT)] == ["blue ball", "red box"]
    assert all(isinstance(s, Sighting) for s in sightings(oneroom, ASPECT))


def test_module_import_needs_no_gl():
    # Load the file on its own (not through the package) and check nothing GL-related came with it.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('perception_alone', {perception.__file__!r})\n"
        "mod = importlib.util.module_from_spec(spec)\n"
        "sys.modules['perception_alone'] = mod\n"
        "spec.loader.exec_module(mod)\n"
        "assert not any(m.split('.')[0] in ('pyglet', 'OpenGL', 'miniworld') for m in sys.modules), sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert importlib.util.find_spec("rl4vlm_gym.envs.navigation.perception") is not None
