"""MiniWorld's task worlds, with our levels added and two of its rendering limits lifted.

Each class here is MiniWorld's own task class (its world generator, physics and OpenGL renderer)
with :class:`LevelledWorld` mixed in. The mixin:

- runs MiniWorld's generator first, so at a level without additions an episode is the one raw
  MiniWorld draws from the same seed, then adds the level's goal choice, distractors and heading;
- gives each world its static scene back before it renders: MiniWorld compiles every world's walls
  into display list 1 of a GL object space that all pyglet contexts of a process share, so two
  worlds in one process (a ``SyncVectorEnv``) drew each other's rooms;
- skips rendering when nobody looks at the frame (text-only observations);
- makes its GL calls inside :func:`.gl.current`, so a world can be made, reset, stepped and closed
  from any thread (a server's sessions each run in their own), one thread at a time;
- answers MiniWorld's collision test faster (:meth:`LevelledWorld.intersect`, the patch
  ``miniworld-intersect`` of :mod:`rl4vlm_gym.patches`: refused, MiniWorld's own answers), and
  its proximity tests (:meth:`LevelledWorld.near`, :meth:`SidewalkWorld.in_street`: the patch
  ``miniworld-proximity``), which the oracle's planner asks at every pose it reaches.

Importing this module imports MiniWorld; the GL context comes with the first world (see :mod:`.gl`).
"""

from __future__ import annotations

import functools
import itertools
import math
import weakref
from typing import Any, ClassVar

import numpy as np

from rl4vlm_gym import patches
from rl4vlm_gym.envs.navigation import nogl
from rl4vlm_gym.envs.navigation.gl import current, import_miniworld, when_current
from rl4vlm_gym.envs.navigation.gl_process import Scene
from rl4vlm_gym.envs.navigation.levels import NavLevel
from rl4vlm_gym.envs.navigation.textures import remember_paths

import_miniworld()

from miniworld import envs as mw  # noqa: E402 - after the headless set-up above
from miniworld.entity import COLOR_NAMES, Ball, Box, Entity, Key  # noqa: E402
from miniworld.miniworld import MiniWorldEnv, Room  # noqa: E402
from miniworld.params import DEFAULT_PARAMS, DomainParams  # noqa: E402
from pyglet import gl  # noqa: E402

__all__ = ["SHAPES", "WORLDS", "LevelledWorld", "make_entity", "params_for"]

SHAPES: dict[str, type[Entity]] = {"box": Box, "ball": Ball, "key": Key}
COLORS: tuple[str, ...] = tuple(COLOR_NAMES)

_TOUCH = 1e-9
"""Squared metres: closer than this to touching, MiniWorld's own test decides (float rounding)."""
_FEW_WALLS = 12
_WALL_CELL = 0.5
"""Metres per side of a cell of a world's wall index (:class:`_Walls`)."""
_WALL_REACH = 0.75
"""The index answers collision tests of radii up to this (the agent's 0.4, ``pick up``'s 0.48, most
objects'); a bigger radius measures every wall."""
_WALL_INDEX_AFTER = 64
_scene_tokens = itertools.count(1)
_compiled_scene = [0]  # the token of the world whose static scene display list 1 now holds
_RELATIVE = 1e-9
"""Closer than this share of the limit to it, MiniWorld's own proximity tests decide (float rounding)."""
_intersect_checked: list[Any] = [None, False]
"""The ``MiniWorldEnv.intersect`` last checked against the patch ``miniworld-intersect``, and the verdict."""
_proximity_checked: list[Any] = [None, None, False]
"""The ``MiniWorldEnv.near`` and ``Room.point_inside`` last checked against ``miniworld-proximity``, and the verdict."""


def _fast_intersect() -> bool:
    """Whether :meth:`LevelledWorld.intersect` may answer for MiniWorld's: checked again only when
    MiniWorld's method is another object than last time (a dict look-up per call otherwise)."""
    theirs = MiniWorldEnv.__dict__.get("intersect")
    if theirs is not _intersect_checked[0]:
        _intersect_checked[:] = [theirs, patches.guard("miniworld-intersect")]
    return _intersect_checked[1]


def _fast_proximity() -> bool:
    """Whether :meth:`LevelledWorld.near` and :meth:`SidewalkWorld.in_street` may answer for MiniWorld's
    tests (checked again only when one of MiniWorld's methods is another object than last time)."""
    near, inside = MiniWorldEnv.__dict__.get("near"), Room.__dict__.get("point_inside")
    if near is not _proximity_checked[0] or inside is not _proximity_checked[1]:
        _proximity_checked[:] = [near, inside, patches.guard("miniworld-proximity")]
    return _proximity_checked[2]


def make_entity(shape: str, color: str) -> Entity:
    """A MiniWorld object of this shape and colour, at MiniWorld's default size."""
    return SHAPES[shape](color=color)


HELD_OUT_TEXTURES = {"wall": "wood_planks", "floor": "marble", "ceil": "ceiling_tile_noborder"}
"""The ``held-out`` appearance's textures: MiniWorld ships them, and none of its worlds (nor domain
randomization, which draws variants of a world's own textures) uses them."""
HELD_OUT_LIGHT = {"light_color": (0.95, 0.78, 0.55), "light_ambient": (0.62, 0.56, 0.5)}
"""A warm light, outside domain randomization's grey ranges (colour 0.45-0.8, ambient 0.35-0.55)."""


def params_for(level: NavLevel, appearance: str = "default") -> DomainParams:
    """MiniWorld's params for a level: its dynamics fixed, its visual ranges randomized or not;
    the ``held-out`` appearance fixes the light at :data:`HELD_OUT_LIGHT`."""
    params = DEFAULT_PARAMS.copy() if level.domain_rand else DEFAULT_PARAMS.no_random()
    # Dynamics stay fixed under domain randomization, so the oracle's plan is exact.
    for name, value in (("forward_step", level.forward_step), ("turn_step", level.turn_step), ("forward_drift", 0), ("bot_radius", 0.4)):
        params.set(name, value, value, value)
    if appearance == "held-out":
        for name, rgb in HELD_OUT_LIGHT.items():
            params.set(name, list(rgb), list(rgb), list(rgb))
    return params


class LevelledWorld:
    """Mixin over a MiniWorld task class; see the module docstring."""

    GOAL: ClassVar[str | None] = "box"
    """The attribute holding the goal entity that distractor levels redraw (None: no redraw)."""

    level: NavLevel | None = None
    render_enabled: bool = True
    scene: Scene | None = None
    """The world's counterpart in a render process that draws it (None: drawn here, with GL)."""
    defer: bool = False
    """Set by the env around its step: the camera frame asked of the render process comes back as a
    :class:`.gl_process.Pending`, received when the env needs it (it works on meanwhile)."""
    _resetting = _constructing = False
    # MiniWorldEnv's GL objects, set in its constructor (declared for the type checker)
    shadow_window: Any
    obs_fb: Any
    vis_fb: Any

    def __init__(self, *args: Any, appearance: str = "default", scene: Scene | None = None, **kwargs: Any) -> None:
        # Set before MiniWorld's constructor resets: it loads the textures once, at its first reset.
        self.appearance = appearance
        self.scene = scene
        if scene is not None:  # drawn by a render process: no GL object here (see .nogl)
            self._constructing = True  # MiniWorld's constructor resets; nobody sees that frame
            with nogl.swapped():
                super().__init__(*args, **kwargs)
            self.shadow_window, self._constructing = None, False
            return
        with current():  # the world's window, made here, is current until the first reset ends
            super().__init__(*args, **kwargs)
        # Dropped unclosed, the world's window would be closed by pyglet's Window.__del__ outside
        # gl.current, in whichever thread collects it, leaving the shadow context current there (see
        # gl.current). The finalizer holds the window, so that cannot happen, and hands its clean-up
        # to the next GL block (a finalizer may run inside a block, between its GL calls).
        self._finalizer = weakref.finalize(self, when_current, functools.partial(_free_gl, self.shadow_window, (self.obs_fb, self.vis_fb)))

    def configure(self, level: NavLevel) -> None:
        """Set up the next reset for ``level``: its size, MiniWorld's params, domain randomization."""
        self.level = level
        self.set_size(level.size)
        self.params = params_for(level, self.appearance)
        self.domain_rand = level.domain_rand

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if self.scene is None:
            with current(self.shadow_window):  # textures load and the static scene compiles here
                return super().reset(seed=seed, options=options)  # type: ignore[misc]
        # What the reset depends on, for the render process to make the same one: the level, the RNG.
        state = None if seed is not None else dict(self.np_random.bit_generator.state)  # type: ignore[attr-defined]
        self.scene.reset((self.level, seed, state))
        with nogl.swapped():  # holds the GL lock: the frame is asked for after it
            self._resetting = True
            try:
                obs, info = super().reset(seed=seed, options=options)  # type: ignore[misc]
            finally:
                self._resetting = False
        self._numbered = {id(entity): index for index, entity in enumerate(self.entities)}  # type: ignore[attr-defined]
        if self._constructing:
            return obs, info
        frame = self.render_obs()
        return ({**obs, "obs": frame} if isinstance(obs, dict) else frame), info  # Sign's observation is a dict

    def replay(self, replay: tuple[Any, ...]) -> None:
        """Make the reset a world without GL recorded (:meth:`reset`), in the render process: the
        same level and RNG state, so the same world; the objects' list as it was then is kept for :meth:`place`."""
        level, seed, state = replay
        if level is not None:
            self.configure(level)
        if state is not None:
            rng = np.random.Generator(getattr(np.random, state["bit_generator"])())
            rng.bit_generator.state = state
            self._np_random = rng
        enabled, self.render_enabled = self.render_enabled, False  # the frame is drawn after place()
        try:
            self.reset(seed=seed)
        finally:
            self.render_enabled = enabled
        self._at_reset = list(self.entities)  # type: ignore[attr-defined]

    def poses(self) -> tuple[tuple[int, ...], list[tuple[int, Any, Any]]]:
        """Which of the reset's objects are in the world now (by their place in the reset's list), and
        where each that moves is: what :meth:`place` needs to put a replayed world in this one's state."""
        numbered = self._numbered
        entities = self.entities  # type: ignore[attr-defined]
        try:
            present = tuple(numbered[id(entity)] for entity in entities)
        except KeyError:
            raise RuntimeError("an object was added to a MiniWorld world after its reset: a render process cannot draw it") from None
        return present, [(i, entity.pos, entity.dir) for i, entity in zip(present, entities, strict=True) if not entity.is_static]

    def place(self, poses: tuple[tuple[int, ...], list[tuple[int, Any, Any]]]) -> None:
        """Put the objects where :meth:`poses` of the env's world says they are (in the render process)."""
        present, moving = poses
        at_reset = self._at_reset
        self.entities[:] = [at_reset[i] for i in present]  # type: ignore[attr-defined]
        for i, pos, direction in moving:
            at_reset[i].pos, at_reset[i].dir = pos, direction

    def add_room(self, **kwargs: Any) -> Any:
        # Every room is made here (add_rect_room and connect_rooms call it), before the first
        # place_entity loads the textures.
        if self.appearance == "held-out":
            kwargs.update(wall_tex=HELD_OUT_TEXTURES["wall"], floor_tex=HELD_OUT_TEXTURES["floor"], ceil_tex=HELD_OUT_TEXTURES["ceil"])
        room = super().add_room(**kwargs)  # type: ignore[misc]
        remember_paths((room.wall_tex_name, room.floor_tex_name, room.ceil_tex_name))  # before _gen_static_data gets them
        return room

    def _gen_world(self) -> None:
        super()._gen_world()  # type: ignore[misc]
        self.goal_label = "red box"  # the goal in words: MiniWorld's in every go-to task
        level = self.level
        if level is None:
            return
        rng = self.np_random  # type: ignore[attr-defined]
        if level.distractors and self.GOAL:
            kinds = [(color, shape) for shape in SHAPES for color in COLORS]
            picks = rng.choice(len(kinds), size=1 + level.distractors, replace=False)
            old = getattr(self, self.GOAL)
            color, shape = kinds[picks[0]]
            goal = make_entity(shape, color)
            goal.pos, goal.dir = old.pos, old.dir  # no wider than the red box: it fits where that was
            self.entities[self.entities.index(old)] = goal  # type: ignore[attr-defined]
            setattr(self, self.GOAL, goal)
            self.goal_label = f"{color} {shape}"
            for pick in picks[1:]:
                color, shape = kinds[pick]
                self.place_entity(make_entity(shape, color), room=self.distractor_room())  # type: ignore[attr-defined]
        if level.random_heading:
            self.agent.dir = rng.uniform(-math.pi, math.pi)  # type: ignore[attr-defined]

    def set_size(self, size: float | None) -> None:
        """Apply a level's ``size`` (its meaning is the task's); the next reset uses it."""

    def distractor_room(self) -> Any:
        """Where distractors go (None: any room, weighted by area)."""
        return None

    def goal_entity(self) -> Entity | None:
        """The object the agent must reach, if the task has one."""
        return getattr(self, self.GOAL) if self.GOAL else None

    def intersect(self, ent: Any, pos: Any, radius: float) -> Any:
        """MiniWorld's ``intersect``: the same verdict (True for a wall, else the first entity hit,
        else None), decided on the walls' geometry computed once per world where the answer is clear
        by 1e-9 m², and by MiniWorld itself where it is not. MiniWorld's costs 0.14 ms a call in
        numpy on 3-vectors; the oracle's planner makes hundreds of thousands per plan. Written for
        MiniWorld 2.1.0's: MiniWorld's answers every call where that is not the installed one."""
        if not (_intersect_checked[1] and MiniWorldEnv.__dict__.get("intersect") is _intersect_checked[0]) and not _fast_intersect():
            return super().intersect(ent, pos, radius)  # type: ignore[misc]
        # Python floats from arrays by one tolist(): numpy's scalar indexing costs more than the test itself.
        at = pos.tolist() if type(pos) is np.ndarray else pos
        px, pz = float(at[0]), float(at[2])
        limit = radius * radius
        nearest = self._nearest_wall(px, pz, radius)
        if nearest < limit - _TOUCH:
            return True
        if not nearest > limit + _TOUCH:  # touching, or NaN from a zero-length wall
            return super().intersect(ent, pos, radius)  # type: ignore[misc]
        for other in self.entities:  # type: ignore[attr-defined]
            if other is ent:
                continue
            there = other.pos
            if type(there) is np.ndarray and there.shape == (3,):
                ox, _, oz = there.tolist()
            else:
                ox, oz = float(there[0]), float(there[2])
            dx, dz = ox - px, oz - pz
            gap, reach = dx * dx + dz * dz, (radius + other.radius) ** 2
            if gap < reach - _TOUCH:
                return other
            if not gap > reach + _TOUCH:
                return super().intersect(ent, pos, radius)  # type: ignore[misc]
        return None

    def near(self, ent0: Any, ent1: Any = None) -> Any:
        """MiniWorld's ``near`` (is ``ent0`` within reach of ``ent1``, the agent by default): the same
        verdict, as a numpy bool, decided on Python floats where the squared distance is clear of the
        squared reach by a relative 1e-9, by MiniWorld itself where not (its ``norm`` sums in another
        order). Written for MiniWorld 2.1.0's: MiniWorld's answers where that is not the installed one."""
        checked = _proximity_checked
        fast = checked[2] and MiniWorldEnv.__dict__.get("near") is checked[0] and Room.__dict__.get("point_inside") is checked[1]
        if not fast and not _fast_proximity():
            return super().near(ent0, ent1)  # type: ignore[misc]
        other = self.agent if ent1 is None else ent1  # type: ignore[attr-defined]
        a, b = ent0.pos, other.pos
        ax, ay, az = a.tolist() if type(a) is np.ndarray else _floats(a)
        bx, by, bz = b.tolist() if type(b) is np.ndarray else _floats(b)
        reach = ent0.radius + other.radius + 1.1 * self.max_forward_step  # type: ignore[attr-defined]
        gap, limit = (ax - bx) ** 2 + (ay - by) ** 2 + (az - bz) ** 2, reach * reach
        if gap < limit * (1 - _RELATIVE):
            return np.True_
        if gap > limit * (1 + _RELATIVE):
            return np.False_
        return super().near(ent0, ent1)  # type: ignore[misc]

    def _nearest_wall(self, px: float, pz: float, radius: float) -> float:
        """The squared floor distance from (px, pz) to the nearest wall that may lie within ``radius``
        of it (inf: none; NaN: a zero-length wall, for MiniWorld to decide). Walls the index rules out
        are farther than ``radius`` by 0.01 m or more, so the verdict against ``radius`` is the one
        all walls give."""
        segs = self.wall_segs  # type: ignore[attr-defined]
        walls = self.__dict__.get("_walls_of")
        if walls is None or walls.segs is not segs:
            walls = self._walls_of = _Walls(segs)
        rows = walls.near(px, pz, radius)
        if rows is None:
            return math.nan
        if len(rows) > _FEW_WALLS:  # numpy beats plain floats on many walls
            ax, az, abx, abz, abab = walls.columns
            t = np.minimum(np.maximum(((px - ax) * abx + (pz - az) * abz) / abab, 0.0), 1.0)
            dx, dz = ax + t * abx - px, az + t * abz - pz
            return float(np.minimum.reduce(dx * dx + dz * dz))
        nearest = math.inf
        for ax, az, abx, abz, abab in rows:
            t = ((px - ax) * abx + (pz - az) * abz) / abab
            t = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
            dx, dz = ax + t * abx - px, az + t * abz - pz
            d = dx * dx + dz * dz
            if d < nearest:
                nearest = d
        return nearest

    def in_reach(self) -> Entity | None:
        """The object ``pick up`` would take now: MiniWorldEnv.step's own test (a wall in the way
        makes it fail), ``intersect(agent, pos + dir_vec * 1.5 * radius, 1.2 * radius)`` at
        :meth:`pick_probe`'s point (the planner asks at every pose it reaches while a pick-up is next)."""
        agent = self.agent  # type: ignore[attr-defined]
        hit = self.intersect(agent, self.pick_probe(), 1.2 * agent.radius)
        return hit if isinstance(hit, Entity) and not hit.is_static else None

    def pick_probe(self) -> Any:
        """MiniWorldEnv.step's pick-up probe point, ``agent.pos + agent.dir_vec * 1.5 * agent.radius``,
        on Python floats: the same IEEE operations in the same order as numpy's on ``dir_vec``
        (``cos(dir), 0, -sin(dir)``), so the same point, without making three arrays."""
        agent = self.agent  # type: ignore[attr-defined]
        pos, radius = agent.pos, agent.radius
        if type(pos) is not np.ndarray or pos.dtype != np.float64 or pos.shape != (3,):
            return pos + agent.dir_vec * 1.5 * radius
        px, py, pz = pos.tolist()
        x, z = math.cos(agent.dir), -math.sin(agent.dir)
        return (px + x * 1.5 * radius, py + 0.0 * 1.5 * radius, pz + z * 1.5 * radius)

    def _render_static(self) -> None:
        if self.scene is not None:
            return  # the render process compiles it
        super()._render_static()  # type: ignore[misc]
        self._scene_token = next(_scene_tokens)
        _compiled_scene[0] = self._scene_token

    def _own_scene(self) -> None:
        if _compiled_scene[0] != self._scene_token:
            self._render_static()

    def render_obs(self, frame_buffer: Any = None) -> np.ndarray:
        if not self.render_enabled and frame_buffer is None:
            return np.zeros((self.obs_fb.height, self.obs_fb.width, 3), np.uint8)
        if self.scene is not None:
            if self._resetting:  # drawn once the reset is done (see reset)
                return np.zeros((self.obs_fb.height, self.obs_fb.width, 3), np.uint8)
            if self.defer and frame_buffer is None:
                return self.scene.request("obs", "obs", self.obs_fb.height, self.obs_fb.width, self.poses())  # type: ignore[return-value]
            return self._drawn("obs", frame_buffer)
        with current(self.shadow_window):
            self._own_scene()
            return super().render_obs(frame_buffer)  # type: ignore[misc]

    def _drawn(self, view: str, frame_buffer: Any) -> np.ndarray:
        """The frame of ``view``, drawn by the render process (a world without GL)."""
        assert self.scene is not None
        if frame_buffer is None:
            frame_buffer = self.obs_fb
        buffer = "vis" if frame_buffer is self.vis_fb else "obs"
        return self.scene.frame(view, buffer, frame_buffer.height, frame_buffer.width, self.poses())

    def close(self) -> None:
        """Free the GL objects MiniWorld allocates per world and never frees (~12 MB at 240x320)."""
        super().close()  # type: ignore[misc]
        if self.scene is not None:
            self.scene.close()
            return
        if self.shadow_window is None:
            return
        self._finalizer.detach()
        _free_gl(self.shadow_window, (self.obs_fb, self.vis_fb))
        self.shadow_window = None

    def render_top_view(self, frame_buffer: Any = None, render_agent: bool = True, return_scale: bool = False) -> Any:
        if self.scene is not None and render_agent and not return_scale:
            return self._drawn("top", frame_buffer)
        if self.scene is not None:
            raise NotImplementedError("a world drawn by a render process draws its top view with the agent, without scales")
        with current(self.shadow_window):
            self._own_scene()
            return super().render_top_view(frame_buffer, render_agent, return_scale)  # type: ignore[misc]


class _Walls:
    """A world's walls on the floor plane, as rows of Python floats ``(ax, az, abx, abz, |ab|^2)``, and a
    grid that lists, for each ``_WALL_CELL`` square, the walls that may come within ``_WALL_REACH`` of a
    point in it: a collision test then measures two or three walls, not all of them. The grid is
    built at the ``_WALL_INDEX_AFTER``-th test on the same walls (a reset's placements make a few
    dozen; the planner, hundreds of thousands)."""

    def __init__(self, segs: np.ndarray) -> None:
        self.segs = segs
        a, ab = segs[:, 0, :], segs[:, 1, :] - segs[:, 0, :]
        self.columns = (a[:, 0], a[:, 2], ab[:, 0], ab[:, 2], ab[:, 0] ** 2 + ab[:, 2] ** 2)
        self.rows = list(zip(*(column.tolist() for column in self.columns), strict=True))
        self.degenerate = not all(row[4] for row in self.rows)  # a zero-length wall: MiniWorld decides every test
        self.tests = 0
        self.cells: list[list[tuple[float, ...]]] | None = None

    def near(self, px: float, pz: float, radius: float) -> list[tuple[float, ...]] | None:
        """The walls that may lie within ``radius`` of (px, pz): all of them, unless the grid rules some
        out; None when a zero-length wall makes the distance undefined."""
        if self.degenerate:
            return None
        if self.cells is None:
            self.tests += 1
            if self.tests != _WALL_INDEX_AFTER or not self._index():  # built once, at that test
                return self.rows
        if radius > _WALL_REACH:
            return self.rows
        fx, fz = (px - self.x0) / _WALL_CELL, (pz - self.z0) / _WALL_CELL
        if 0.0 <= fx < self.nx and 0.0 <= fz < self.nz:
            return self.cells[int(fx) * self.nz + int(fz)]  # type: ignore[index]
        if math.isfinite(fx) and math.isfinite(fz):
            return []  # off the grid, which spans every wall with _WALL_REACH and a cell to spare
        return self.rows  # NaN or infinite: measured, as MiniWorld would

    def _index(self) -> bool:
        """Build the grid (False: no walls, or a floor too big to grid)."""
        if not self.rows:
            return False
        ends = self.segs[:, :, [0, 2]].reshape(-1, 2)
        pad = _WALL_REACH + _WALL_CELL
        self.x0, self.z0 = float(ends[:, 0].min() - pad), float(ends[:, 1].min() - pad)
        self.nx = int((float(ends[:, 0].max()) + pad - self.x0) / _WALL_CELL) + 1
        self.nz = int((float(ends[:, 1].max()) + pad - self.z0) / _WALL_CELL) + 1
        if self.nx * self.nz > 250_000:
            return False
        xs = self.x0 + _WALL_CELL * (np.arange(self.nx) + 0.5)
        zs = self.z0 + _WALL_CELL * (np.arange(self.nz) + 0.5)
        centres = np.stack(np.meshgrid(xs, zs, indexing="ij"), axis=-1).reshape(-1, 2)
        a, b = self.segs[:, 0, [0, 2]], self.segs[:, 1, [0, 2]]
        ab = b - a
        t = np.clip(np.einsum("cwk,wk->cw", centres[:, None, :] - a, ab) / np.sum(ab * ab, axis=1), 0.0, 1.0)
        gaps = np.linalg.norm(centres[:, None, :] - (a + t[..., None] * ab), axis=2)
        # A point of a cell is within half the cell's diagonal of its centre; 0.01 m to spare for rounding.
        close = gaps <= _WALL_REACH + _WALL_CELL * math.sqrt(0.5) + 0.01
        # Each cell's walls in index order, from one nonzero() over the grid: a flatnonzero() per cell cost
        # 13 ms a reset on Sidewalk's 7,800 cells.
        rows = self.rows
        cell_of, wall_of = np.nonzero(close)
        walls = [rows[w] for w in wall_of.tolist()]
        ends = np.cumsum(np.bincount(cell_of, minlength=len(close))).tolist()
        self.cells = [walls[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]
        return True


def _floats(pos: Any) -> list[float]:
    """A position as Python floats (MiniWorld's are arrays, a few set by worlds are tuples)."""
    return pos.tolist() if isinstance(pos, np.ndarray) else [float(v) for v in pos]


def _free_gl(window: Any, frame_buffers: tuple[Any, ...]) -> None:
    """Delete a world's frame buffers and close its window (its GL context)."""
    with current(window):  # frame buffers are per context: delete them in the world's
        for frame_buffer in frame_buffers:
            _delete_frame_buffer(frame_buffer)
        window.close()


def _delete_frame_buffer(frame_buffer: Any) -> None:
    """Delete a MiniWorld FrameBuffer's FBOs and their attachments (it keeps only the FBO names)."""
    for fbo in (frame_buffer.multi_fbo, frame_buffer.final_fbo):
        for kind, name in attachments(fbo):
            if kind == gl.GL_TEXTURE:
                gl.glDeleteTextures(1, gl.GLuint(name))
            elif kind == gl.GL_RENDERBUFFER:
                gl.glDeleteRenderbuffers(1, gl.GLuint(name))
        gl.glDeleteFramebuffers(1, fbo)


def attachments(fbo: Any) -> list[tuple[int, int]]:
    """The (object type, name) of an FBO's colour and depth attachments, in the current context."""
    found = []
    gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, fbo)
    for attachment in (gl.GL_COLOR_ATTACHMENT0, gl.GL_DEPTH_ATTACHMENT):
        kind, name = gl.GLint(0), gl.GLint(0)
        gl.glGetFramebufferAttachmentParameteriv(gl.GL_FRAMEBUFFER, attachment, gl.GL_FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE, kind)
        gl.glGetFramebufferAttachmentParameteriv(gl.GL_FRAMEBUFFER, attachment, gl.GL_FRAMEBUFFER_ATTACHMENT_OBJECT_NAME, name)
        found.append((kind.value, name.value))
    gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
    return found


class HallwayWorld(LevelledWorld, mw.Hallway):
    def set_size(self, size: float | None) -> None:
        self.length = size or 12


class OneRoomWorld(LevelledWorld, mw.OneRoom):
    def set_size(self, size: float | None) -> None:
        self.size = size or 10


class FourRoomsWorld(LevelledWorld, mw.FourRooms):
    pass


class WallGapWorld(LevelledWorld, mw.WallGap):
    pass


class TMazeWorld(LevelledWorld, mw.TMaze):
    pass


class YMazeWorld(LevelledWorld, mw.YMaze):
    pass


class MazeWorld(LevelledWorld, mw.Maze):
    def set_size(self, size: float | None) -> None:
        self.num_rows = self.num_cols = int(size or 8)
        self.max_episode_steps = self.num_rows * self.num_cols * 24  # MiniWorld's T in 1 - 0.2 t/T


class SidewalkWorld(LevelledWorld, mw.Sidewalk):
    def distractor_room(self) -> Any:
        return self.rooms[0]  # the sidewalk: the street is where the episode ends

    def in_street(self) -> bool:
        """Walking into the street ends the episode with nothing (MiniWorld's rule): the street's
        ``Room.point_inside`` (every edge's normal has the point on its inner side), decided on
        Python floats where each side is clear by 1e-9, by MiniWorld's where a point is that close to an edge."""
        street = self.street
        if not _fast_proximity():
            return bool(street.point_inside(self.agent.pos))
        edges = self.__dict__.get("_street_edges")
        if edges is None or edges[0] is not street.outline:
            rows = list(zip(*(column.tolist() for column in (*street.edge_norms.T, *street.outline.T)), strict=True))
            edges = self._street_edges = (street.outline, rows)
        px, py, pz = self.agent.pos.tolist()
        clear = True
        for nx, ny, nz, ox, oy, oz in edges[1]:
            side = nx * (px - ox) + ny * (py - oy) + nz * (pz - oz)
            if side < -_TOUCH:
                return False
            clear = clear and side > _TOUCH
        return True if clear else bool(street.point_inside(self.agent.pos))


class SignWorld(LevelledWorld, mw.Sign):
    """MiniWorld's Sign with the sign's colour and the goal shape drawn per episode (MiniWorld fixes
    both at construction, so one env instance would always have the same answer)."""

    GOAL = None

    def _gen_world(self) -> None:
        self._color_index = int(self.np_random.integers(3))
        self._goal = int(self.np_random.integers(2))
        super()._gen_world()

    def goal_entity(self) -> Entity:
        return self._objects[self._goal][self._color_index]

    def objects(self) -> list[Entity]:
        """All six objects: touching any ends the episode."""
        return [obj for pair in self._objects for obj in pair]


class PickupObjectsWorld(LevelledWorld, mw.PickupObjects):
    GOAL = None

    def set_size(self, size: float | None) -> None:
        self.num_objs = int(size or 5)


class PutNextWorld(LevelledWorld, mw.PutNext):
    GOAL = None

    def set_size(self, size: float | None) -> None:
        self.size = int(size or 12)


WORLDS: dict[str, type[LevelledWorld]] = {
    "Hallway": HallwayWorld,
    "OneRoom": OneRoomWorld,
    "FourRooms": FourRoomsWorld,
    "WallGap": WallGapWorld,
    "TMaze": TMazeWorld,
    "YMaze": YMazeWorld,
    "Maze": MazeWorld,
    "Sidewalk": SidewalkWorld,
    "Sign": SignWorld,
    "PickupObjects": PickupObjectsWorld,
    "PutNext": PutNextWorld,
}
