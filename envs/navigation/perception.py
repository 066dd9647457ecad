"""What the agent's camera would show, as text, computed from the MiniWorld world state.

In "text" observation mode the navigation envs send no image, so the text has to carry what the
first-person frame carries: which objects are in view, roughly in which direction and how far, how
far the wall straight ahead is, and what the agent holds. This module derives that from the true
world state with plain floor-plane geometry (x, z; y is up) instead of reading the rendered frame:
the result is deterministic and needs no OpenGL, so it works headless and is cheap.

Conventions (as in miniworld): ``agent.dir_vec = (cos dir, 0, -sin dir)``, the camera's right is
``agent.right_vec = (sin dir, 0, cos dir)``, and turning left increases ``dir``. Bearings here are in
degrees, 0 straight ahead, positive to the LEFT (so they match ``dir``'s sense of rotation).

Visibility is horizontal only: the field-of-view edges and wall occlusion. Other objects do not
occlude, and objects right at the agent's feet (below the vertical field of view) still count,
which keeps a target from vanishing from the text just before it is reached.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

# Colour names miniworld uses in mesh names such as "key_red" / "ball_green" (miniworld.entity.COLOR_NAMES).
_COLORS = ("red", "green", "blue", "purple", "yellow", "grey")
# Far-away decoration (Sidewalk, WallGap); the description leaves it out.
_SCENERY = ("building",)
# Rays may end this close behind a wall without counting as blocked: signs sit on the wall they hang on.
_END_MARGIN = 0.05


@dataclass(frozen=True)
class Sighting:
    name: str  # "red box", "blue ball", "yellow key", "cone", "sign that reads 'RED'"
    distance: float  # metres from the agent's position to the entity's position (floor plane)
    bearing: float  # degrees; 0 = straight ahead, positive = to the agent's LEFT


def _kinds(ent) -> tuple[str, ...]:
    # Class names along the MRO, so BigKey (a Key subclass) counts as a Key without importing miniworld.
    return tuple(c.__name__ for c in type(ent).__mro__)


def _is_frame(ent) -> bool:
    return any(k in ("TextFrame", "ImageFrame") for k in _kinds(ent))


def _mesh_name(ent) -> str | None:
    if getattr(ent, "mesh_name", None):
        return ent.mesh_name
    mesh = getattr(ent, "mesh", None)
    # miniworld 2.1 keeps no mesh_name on MeshEnt; ObjMesh.cache maps each loaded .obj path to its mesh.
    for path, cached in getattr(type(mesh), "cache", {}).items():
        if cached is mesh:
            return os.path.splitext(os.path.basename(path))[0]
    return None


def entity_name(ent) -> str | None:
    """A short noun phrase for an entity, or None for scenery the description leaves out (the far-away 'building' mesh)."""
    kinds = _kinds(ent)
    if "Agent" in kinds:
        return None
    if "TextFrame" in kinds:
        return f"sign that reads '{ent.str}'"
    if "ImageFrame" in kinds:
        return "picture"
    if "Box" in kinds:
        return f"{ent.color} box"
    mesh = _mesh_name(ent)
    if mesh is not None:
        if mesh in _SCENERY:
            return None
        # Key and Ball store their colour only in the mesh name: "key_red" -> "red key".
        kind, _, color = mesh.partition("_")
        if color in _COLORS:
            return f"{color} {kind}"
        return mesh.replace("_", " ")
    return type(ent).__name__.lower()


def horizontal_fov(cam_fov_y: float, aspect: float) -> float:
    """Horizontal field of view in degrees from the vertical one and width/height aspect (2*atan(tan(fy/2)*aspect))."""
    return math.degrees(2 * math.atan(math.tan(math.radians(cam_fov_y) / 2) * aspect))


def _xz(p) -> np.ndarray:
    return np.array([p[0], p[2]], dtype=float)


def _wrap(deg: float) -> float:
    return (deg + 180.0) % 360.0 - 180.0


def _bearing(eye: np.ndarray, target: np.ndarray, agent_dir: float) -> float:
    v = target - eye
    # World heading of v in miniworld's convention (dir_vec has z = -sin dir), relative to the agent.
    return _wrap(math.degrees(math.atan2(-v[1], v[0]) - agent_dir))


def _segs(world) -> tuple[np.ndarray, np.ndarray]:
    """Wall segments on the floor plane as (start, direction): cached on the world, because the
    walls change only when a reset builds a new ``wall_segs`` array."""
    cached = getattr(world, "_floor_segs", None)
    if cached is not None and cached[0] is world.wall_segs:
        return cached[1], cached[2]
    segs = np.asarray(world.wall_segs, dtype=float).reshape(-1, 2, 3)
    a = segs[:, 0, [0, 2]]
    e = segs[:, 1, [0, 2]] - a
    world._floor_segs = (world.wall_segs, a, e)
    return a, e


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def _hits(origin: np.ndarray, d: np.ndarray, a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Ray parameters t (origin + t*d) where the ray crosses each wall segment; inf where it misses."""
    denom = _cross(d, e)
    ao = a - origin
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _cross(ao, e) / denom
        s = _cross(ao, d) / denom
    ok = (np.abs(denom) > 1e-12) & (s >= 0) & (s <= 1) & (t >= 0)
    return np.where(ok, t, np.inf)


def _clear(eye: np.ndarray, target: np.ndarray, a: np.ndarray, e: np.ndarray) -> bool:
    d = target - eye
    length = float(np.hypot(*d))
    if length < 1e-9 or len(a) == 0:
        return True
    return bool(np.all(_hits(eye, d, a, e) * length >= length - _END_MARGIN))


def _extent(ent, eye: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two edge points the camera sees of an entity, left and right of its centre."""
    if _is_frame(ent):
        # Frames have radius 0 but span their width along the wall (local z = right_vec of their dir).
        side = np.array([math.sin(ent.dir), math.cos(ent.dir)]) * getattr(ent, "width", 0.0) / 2
        return centre - side, centre + side
    # Elsewhere: the bounding circle's extent across the line of sight.
    v = centre - eye
    n = float(np.hypot(*v))
    side = np.array([-v[1], v[0]]) * (float(getattr(ent, "radius", 0.0) or 0.0) / n if n > 1e-9 else 0.0)
    return centre - side, centre + side


def sightings(world, aspect: float) -> list[Sighting]:
    """Entities the camera sees: not the agent, not what it carries, not scenery; inside the horizontal field of view
    (counting the entity's angular half-width from its radius, so an object half in view counts) and with the line of
    sight from the agent to the entity not crossed by a wall segment (test against the two edge rays and the centre ray:
    visible if any of the three is unobstructed). Sorted by distance, then name. Pure numpy geometry on the floor plane."""
    agent = world.agent
    pos = _xz(agent.pos)
    # The camera sits cam_fwd_disp ahead of the agent (0 unless domain randomisation moves it).
    eye = pos + _xz(agent.dir_vec) * float(getattr(agent, "cam_fwd_disp", 0.0) or 0.0)
    half_fov = horizontal_fov(agent.cam_fov_y, aspect) / 2
    a, e = _segs(world)
    found = []
    for ent in world.entities:
        if ent is agent or ent is agent.carrying:
            continue
        name = entity_name(ent)
        if name is None:
            continue
        centre = _xz(ent.pos)
        # A frame faces along its dir_vec; from behind it is the back of a wall.
        if _is_frame(ent) and float(np.dot(eye - centre, [math.cos(ent.dir), -math.sin(ent.dir)])) <= 0:
            continue
        bearing = _bearing(eye, centre, agent.dir)
        edges = _extent(ent, eye, centre)
        half_width = max(abs(_wrap(_bearing(eye, p, agent.dir) - bearing)) for p in edges)
        if abs(bearing) - half_width >= half_fov:
            continue
        if not any(_clear(eye, p, a, e) for p in (centre, *edges)):
            continue
        found.append(Sighting(name, float(np.hypot(*(centre - pos))), bearing))
    return sorted(found, key=lambda s: (s.distance, s.name))


def wall_distance(world) -> float:
    """Distance from the agent's position straight ahead (along dir_vec) to the nearest wall segment (ray cast, floor plane);
    math.inf if none."""
    a, e = _segs(world)
    if len(a) == 0:
        return math.inf
    t = _hits(_xz(world.agent.pos), _xz(world.agent.dir_vec), a, e)  # dir_vec is a unit vector: t is in metres
    return float(t.min())


def _direction(bearing: float) -> str:
    side = "left" if bearing > 0 else "right"
    for limit, words in ((5, "straight ahead"), (15, f"slightly to the {side}"), (30, f"to the {side}")):
        if abs(bearing) < limit:
            return words
    return f"far to the {side}"


def _metres(d: float) -> str:
    return f"{round(d * 2) / 2:.1f} m"


def _a(name: str) -> str:
    return f"{'an' if name[:1] in tuple('aeiou') else 'a'} {name}"


def describe(world, aspect: float) -> str:
    """The text observation, e.g.
    'You see a red box slightly to the left, 3.5 m away, and a blue ball to the right, 1.0 m away. The wall ahead is 2.0 m away.'
    or 'You see no objects. The wall ahead is 0.5 m away.'; append 'You are carrying a red box.' when carrying."""
    items = [f"{_a(s.name)} {_direction(s.bearing)}, {_metres(s.distance)} away" for s in sightings(world, aspect)]
    if not items:
        seen = "You see no objects."
    elif len(items) == 1:
        seen = f"You see {items[0]}."
    else:
        # Items contain commas themselves, so the last one always gets ", and".
        seen = f"You see {', '.join(items[:-1])}, and {items[-1]}."
    wall = wall_distance(world)
    parts = [seen, f"The wall ahead is {_metres(wall)} away." if math.isfinite(wall) else "There is no wall ahead."]
    carrying = world.agent.carrying
    if carrying is not None:
        parts.append(f"You are carrying {_a(entity_name(carrying) or 'object')}.")
    return " ".join(parts)
