"""The navigation oracle: a planner over MiniWorld's own physics that emits action strings.

Planning is a hybrid A* search (Dolgov et al., 2008) over the agent's continuous pose. Each
successor comes from MiniWorld's own ``turn_agent`` / ``move_agent`` (its collision tests, a carried
object included) with the level's fixed step sizes, so a found plan replays exactly in the env.
Poses are merged on a lattice (two thirds of a step in position, the turn step in heading) to keep
the search finite; the heuristic is the geodesic distance to the goal on a 2-D occupancy grid
plus the turns needed to face down it, weighted by 1.5 (many times faster than plain A* on open
floors). A plan is therefore short, not provably shortest.

Near the end, :func:`shortest` is exact: a breadth-first search of MiniWorld's exact states within a
few steps of accomplishing the task (the decision facts; the oracle takes its way there, so
``optimal_steps`` is the plan's length less what that saves).

A task is a sequence of :class:`Phase`: reach a pose where ``reached`` holds, avoiding poses
where ``forbidden`` holds, then take ``then`` (``"pick up"``, ``"drop"``) or nothing.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Model", "Phase", "Planner", "Unsolvable", "shortest"]

TURN_LEFT, TURN_RIGHT, FORWARD, BACK = "turn left", "turn right", "move forward", "move back"
_GRID = 0.2  # metres per cell of the heuristic's occupancy grid: coarse is fast, and A* corrects it


class Unsolvable(RuntimeError):
    """No plan exists within the search budget; ``nearest`` leads to the pose the search found
    nearest the goal (empty if none beats the start). Raised by :meth:`Planner.plan`, ``partial`` is
    what ``plan(..., partial=True)`` returns from the same state: the phases solved before, then ``nearest``."""

    def __init__(self, message: str, nearest: list[str] | None = None) -> None:
        super().__init__(message)
        self.nearest = nearest or []
        self.partial = list(self.nearest)


@dataclass(frozen=True)
class Phase:
    """One leg of a task: move until ``reached()``, never through ``forbidden()``, then ``then``.

    Both predicates read the world's current state. ``targets()`` gives the floor points the
    heuristic measures the distance to (the goal objects' positions).
    """

    reached: Callable[[], bool]
    targets: Callable[[], Sequence[np.ndarray]]
    then: str | None = None
    forbidden: Callable[[], bool] | None = None
    effect: Callable[[], None] | None = None
    """Applies ``then``'s effect to the world while planning (pick up, drop)."""
    reach: float = math.inf
    """How far (on the floor) the agent may stand from the nearest of ``targets()`` while ``reached()``
    holds: the exact search's lower bound on the moves still needed (``inf``: no bound)."""
    heading_free: bool = False
    """``reached()`` and ``forbidden()`` read the agent's position, never its heading: a turn (carrying
    nothing) leaves both as they were, so the planner does not ask them again after one."""


class Planner:
    """Plans on a MiniWorld world in place, restoring its state afterwards."""

    def __init__(
        self, world: Any, *, forward_step: float, turn_step: float, can_back: bool, weight: float = 1.5, max_expansions: int = 20_000
    ) -> None:
        self.world = world
        self.forward_step = float(forward_step)
        self.turn_step = float(turn_step)
        self.moves = (TURN_LEFT, TURN_RIGHT, FORWARD, BACK) if can_back else (TURN_LEFT, TURN_RIGHT, FORWARD)
        self.max_expansions = max_expansions
        self.weight = weight
        self.cell = self.forward_step * 2 / 3
        self.headings = round(360 / self.turn_step)
        self._turn = math.radians(self.turn_step)
        self._fields: dict[tuple[Any, ...], tuple[Any, Any, Callable[[tuple[np.ndarray, float]], float]]] = {}
        """Heuristics made, by what they are a function of (see :meth:`_field`)."""

    # World state ------------------------------------------------------------------------------------

    def snapshot(self) -> tuple[Any, ...]:
        w = self.world
        return (
            w.agent.pos.copy(),
            w.agent.dir,
            w.agent.carrying,
            list(w.entities),
            [(np.array(ent.pos, dtype=float), ent.dir) for ent in w.entities],
            getattr(w, "num_picked_up", None),
        )

    def restore(self, snap: tuple[Any, ...]) -> None:
        w = self.world
        w.agent.pos, w.agent.dir, w.agent.carrying = snap[0].copy(), snap[1], snap[2]
        w.entities[:] = snap[3]
        for ent, (pos, direction) in zip(snap[3], snap[4], strict=True):
            ent.pos, ent.dir = pos.copy(), direction
        if snap[5] is not None:
            w.num_picked_up = snap[5]

    def _pose(self) -> tuple[np.ndarray, float]:
        return self.world.agent.pos.copy(), self.world.agent.dir

    def _set_pose(self, pose: tuple[np.ndarray, float]) -> None:
        w = self.world
        w.agent.pos, w.agent.dir = pose[0].copy(), pose[1]
        if w.agent.carrying is not None:  # as MiniWorldEnv.step does after every action
            w.agent.carrying.pos = w._get_carry_pos(w.agent.pos, w.agent.carrying)
            w.agent.carrying.dir = w.agent.dir

    def _move(self, action: str) -> bool:
        """Apply a movement as ``MiniWorldEnv.step`` does; False if it was blocked. MiniWorld's
        ``move_agent`` and ``turn_agent`` already leave a carried object where ``_set_pose`` puts it,
        and assign new arrays (never write into the agent's), so nothing is left to redo."""
        w = self.world
        if action == FORWARD:
            moved = w.move_agent(self.forward_step, 0)
        elif action == BACK:
            moved = w.move_agent(-self.forward_step, 0)
        else:
            moved = w.turn_agent(self.turn_step if action == TURN_LEFT else -self.turn_step)
        return bool(moved)

    def _key(self, pose: tuple[np.ndarray, float]) -> tuple[int, int, int]:
        # On Python floats: numpy's scalars round (half to even) and divide the same, many times slower.
        pos, direction = pose
        x, _, z = pos.tolist()
        return round(x / self.cell), round(z / self.cell), round(float(direction) / self._turn) % self.headings

    # Planning ---------------------------------------------------------------------------------------

    def plan(
        self,
        phases: Sequence[Phase],
        rooms: Sequence[Any] | None = None,
        *,
        partial: bool = False,
        max_expansions: int | None = None,
        weight: float | None = None,
    ) -> list[str]:
        """Actions that accomplish every phase from the current state; the world is left unchanged.
        ``max_expansions`` and ``weight`` override the planner's own for this call.

        With ``partial``, a phase the search budget cannot solve ends the plan with the way to the
        pose the search found nearest its goal (by the heuristic) instead of raising
        :class:`Unsolvable`: a plan that makes progress, for an oracle asked from any state."""
        snap = self.snapshot()
        budget = self.max_expansions if max_expansions is None else max_expansions
        weight = self.weight if weight is None else weight
        try:
            actions: list[str] = []
            for phase in phases:
                try:
                    actions += self._search(phase, rooms, budget, weight)
                except Unsolvable as err:
                    err.partial = actions + err.nearest
                    if not partial:
                        raise
                    return err.partial
                if phase.then is not None:
                    actions.append(phase.then)
                    if phase.effect is not None:
                        phase.effect()
            return actions
        finally:
            self.restore(snap)

    def _search(self, phase: Phase, rooms: Sequence[Any] | None, budget: int, weight: float) -> list[str]:
        start = self._pose()
        if phase.reached():
            return []
        field = self._field(phase.targets(), rooms)
        best = {self._key(start): 0}
        # Each node keeps its own parent: poses merged on the lattice differ slightly, and only a
        # node's own chain of actions leads to its exact pose.
        parents: list[tuple[int, str | None]] = [(-1, None)]
        frontier = [(field(start), 0, 0, start, self._key(start))]
        expansions = 0
        nearest, nearest_h = 0, field(start)
        # Turning in place, where the phase reads no heading: every node but the start was pushed with
        # neither predicate holding, so its turns need not ask them.
        turns = (TURN_LEFT, TURN_RIGHT) if phase.heading_free and self.world.agent.carrying is None else ()
        while frontier:
            _, steps, node, pose, key = heapq.heappop(frontier)
            if steps > best.get(key, steps):
                continue
            expansions += 1
            if expansions > budget:
                break
            for action in self.moves:
                self._set_pose(pose)  # a copy of the node's pose: the frontier's own arrays are never the world's
                if not self._move(action):
                    continue
                asked = not node or action not in turns
                if asked and phase.forbidden is not None and phase.forbidden():
                    continue
                child = self.world.agent.pos, self.world.agent.dir  # the move's new array, kept by nothing else
                if asked and phase.reached():
                    self._set_pose(child)
                    return [*_walk_back(parents, node), action]
                child_key = self._key(child)
                if steps + 1 >= best.get(child_key, math.inf):
                    continue
                best[child_key] = steps + 1
                parents.append((node, action))
                h = field(child)
                if h < nearest_h:
                    nearest, nearest_h = len(parents) - 1, h
                heapq.heappush(frontier, (steps + 1 + weight * h, steps + 1, len(parents) - 1, child, child_key))
        self._set_pose(start)
        raise Unsolvable(f"no plan found ({expansions} poses expanded)", _walk_back(parents, nearest))

    def _field(self, targets: Sequence[np.ndarray], rooms: Sequence[Any] | None) -> Callable[[tuple[np.ndarray, float]], float]:
        """:meth:`_distance_field`, made once per set of rooms, walls and targets' floor points: a replan
        after a move off the plan, and the greedier retry, search toward the same goal over the same floor.
        The rooms and walls are held with the heuristic, so their ids cannot be reused while it is kept."""
        w = self.world
        rooms = list(w.rooms if rooms is None else rooms)
        key = (tuple(map(id, rooms)), id(w.wall_segs), float(w.agent.radius), tuple((float(t[0]), float(t[2])) for t in targets))
        made = self._fields.get(key)
        if made is None:
            made = self._fields[key] = (rooms, w.wall_segs, self._distance_field(targets, rooms))
        return made[2]

    def _distance_field(self, targets: Sequence[np.ndarray], rooms: Sequence[Any] | None) -> Callable[[tuple[np.ndarray, float]], float]:
        """Geodesic distance (in steps) from a floor point to the nearest target, on an occupancy grid
        of the rooms: the heuristic of the search. Blocked or unreachable cells fall back to the
        straight-line distance."""
        w = self.world
        rooms = list(w.rooms if rooms is None else rooms)
        lo_x = min(r.min_x for r in rooms) - _GRID
        lo_z = min(r.min_z for r in rooms) - _GRID
        nx = int((max(r.max_x for r in rooms) - lo_x) / _GRID) + 2
        nz = int((max(r.max_z for r in rooms) - lo_z) / _GRID) + 2
        xs, zs = np.meshgrid(lo_x + _GRID * np.arange(nx), lo_z + _GRID * np.arange(nz), indexing="ij")
        points = np.stack([xs.ravel(), np.zeros(xs.size), zs.ravel()], axis=1)
        inside = np.zeros(len(points), bool)
        for room in rooms:
            # Inclusive, with a margin: cells on the edge two rooms share must join them.
            inside |= np.all(points @ room.edge_norms.T > np.sum(room.edge_norms * room.outline, axis=1) - 1e-3, axis=1)
        free = inside & (_segment_distance(points, w.wall_segs) > 0.9 * w.agent.radius)
        free = free.reshape(nx, nz)
        cost = [[math.inf] * nz for _ in range(nx)]  # Python lists: the loop below reads them cell by cell
        open_cells = free.tolist()
        queue: deque[tuple[int, int]] = deque()
        for target in targets:
            i, j = int(round((target[0] - lo_x) / _GRID)), int(round((target[2] - lo_z) / _GRID))
            i, j = min(max(i, 0), nx - 1), min(max(j, 0), nz - 1)
            cost[i][j] = 0.0
            queue.append((i, j))
        # Breadth-first over 8-neighbours with unit cost per cell: cheap, and close enough to the
        # geodesic for a heuristic. Targets sit inside objects, so their own cells count as free.
        while queue:
            i, j = queue.popleft()
            d = cost[i][j] + 1
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)):
                a, b = i + di, j + dj
                if 0 <= a < nx and 0 <= b < nz and open_cells[a][b] and cost[a][b] > d:
                    cost[a][b] = d
                    queue.append((a, b))
        dist = np.array(cost, dtype=float).reshape(nx, nz)
        cells_per_step = self.forward_step / _GRID
        reach = (w.agent.radius + 0.3) / _GRID  # the goal counts as reached this close (roughly)
        target_points = np.array([[t[0], t[2]] for t in targets])
        # The way to go from each cell (down the field), as a MiniWorld heading (dir_vec = cos, -sin).
        finite = np.where(np.isfinite(dist), dist, np.nanmax(np.where(np.isfinite(dist), dist, np.nan)) + 10)
        grad_x, grad_z = np.gradient(finite)
        way = np.arctan2(grad_z, -grad_x)
        turn = math.radians(self.turn_step)
        can_back = BACK in self.moves
        # The search reads the fields cell by cell: Python floats in lists, the same values, read many times faster.
        dist_rows, way_rows, lo_x, lo_z = dist.tolist(), way.tolist(), float(lo_x), float(lo_z)

        def heuristic(pose: tuple[np.ndarray, float]) -> float:
            pos, direction = pose
            x, _, z = pos.tolist()
            i, j = round((x - lo_x) / _GRID), round((z - lo_z) / _GRID)
            if not (0 <= i < nx and 0 <= j < nz):
                return float(np.min(np.hypot(target_points[:, 0] - pos[0], target_points[:, 1] - pos[2]))) / self.forward_step
            d = dist_rows[i][j]
            if not math.isfinite(d):  # a cell the grid calls blocked, but the agent reached it
                return float(np.min(np.hypot(target_points[:, 0] - pos[0], target_points[:, 1] - pos[2]))) / self.forward_step
            # Turns still needed to face the way down the field, less one for the field's coarseness.
            off = abs((way_rows[i][j] - direction + math.pi) % (2 * math.pi) - math.pi)
            if can_back:  # backing up needs no turn to go the other way
                off = min(off, math.pi - off)
            turns = max(0, round(off / turn) - 1) if d > reach else 0
            return max(0.0, d - reach) / cells_per_step + turns

        return heuristic


def _walk_back(parents: list[tuple[int, str | None]], node: int) -> list[str]:
    """The actions from the search's root to ``node``, first to last (``parents[i]``: i's parent and the action to i)."""
    path = []
    parent, action = parents[node]
    while action is not None:
        path.append(action)
        parent, action = parents[parent]
    return path[::-1]


def _segment_distance(points: np.ndarray, segs: np.ndarray) -> np.ndarray:
    """Distance from each point to the nearest segment, on the floor plane."""
    a, b = segs[:, 0, [0, 2]], segs[:, 1, [0, 2]]
    p = points[:, None, [0, 2]]
    ab = b - a
    t = np.clip(np.sum((p - a) * ab, axis=2) / np.sum(ab * ab, axis=1), 0, 1)
    closest = a + t[..., None] * ab
    return np.min(np.linalg.norm(p - closest, axis=2), axis=1)



class Model:
    """The task's phases as an exact model of MiniWorld's steps, for :func:`shortest` and for walking a plan.

    A state is the world's (what :meth:`Planner.snapshot` keeps) and the phase under way."""

    def __init__(self, planner: Planner, phases: Sequence[Phase]) -> None:
        self.planner, self.phases = planner, list(phases)
        self.last = len(self.phases) - 1
        self._thens = [sum(1 for phase in self.phases[k:] if phase.then is not None) for k in range(len(self.phases))]

    def step(self, action: str, k: int) -> int | str | None:
        """Apply ``action`` in phase ``k`` to the world: the phase then under way, "goal" (accomplished),
        "fail" (the episode ends unaccomplished) or None (nothing changed, or an action no shortest way takes)."""
        phase, planner = self.phases[k], self.planner
        if action in planner.moves:
            moved = planner._move(action)
            if phase.forbidden is not None and phase.forbidden():
                return "fail"
            if phase.then is None and phase.reached():  # MiniWorld checks the goal after every step
                return "goal" if k == self.last else k + 1
            return k if moved else None
        if action == phase.then and phase.reached():
            if phase.effect is not None:
                phase.effect()
            return "goal" if k == self.last else k + 1
        return None

    def bound(self, k: int) -> int:
        """A lower bound on the steps still needed from phase ``k``: the ``then`` of every phase left and
        their moves. A move changes the floor distance to any point by one forward step at most; phase ``k``
        must bring a target within its ``reach``, and each later phase must go from within reach of one of
        the phase before's targets to within its own reach of one of its targets (another one, where the
        phase repeats: an object is picked up once)."""
        phase = self.phases[k]
        total = self._thens[k]
        if phase.reach != math.inf and not phase.reached():
            agent = self.planner.world.agent
            x, _, z = agent.pos.tolist()
            targets = [(float(t[0]) - x, float(t[2]) - z) for t in phase.targets()]
            total += self._moves(min(math.hypot(dx, dz) for dx, dz in targets) - phase.reach)
            # Without a turn the agent stays on the line along its heading (MiniWorld's dir_vec: cos, -sin):
            # a line that passes no target within reach needs a turn first.
            ux, uz = math.cos(agent.dir), -math.sin(agent.dir)
            if all(abs(ux * dz - uz * dx) >= phase.reach for dx, dz in targets):
                total += 1
        legs: dict[tuple[int, int], int] = {}  # a phase repeated (PickupObjects' pick-ups): each pair measured once
        for before, after in zip(self.phases[k:], self.phases[k + 1 :]):
            if before.reach == math.inf or after.reach == math.inf:
                continue
            pair = (id(before), id(after))
            if pair not in legs:
                here, there = [(float(t[0]), float(t[2])) for t in before.targets()], [(float(t[0]), float(t[2])) for t in after.targets()]
                gaps = [math.dist(a, b) for i, a in enumerate(here) for j, b in enumerate(there) if after is not before or i != j]
                legs[pair] = self._moves(min(gaps) - before.reach - after.reach) if gaps else 0
            total += legs[pair]
        return total

    def _moves(self, gap: float) -> int:
        """The fewest moves that cover ``gap`` metres (none for a gap of 0 or less; 1e-6 spare for rounding)."""
        return max(0, math.ceil(gap / self.planner.forward_step - 1e-6))

    def key(self, k: int) -> tuple[Any, ...]:
        """The exact state: the pose by its bytes, what is carried, which objects remain, the phase."""
        w = self.planner.world
        return (w.agent.pos.tobytes(), float(w.agent.dir).hex(), id(w.agent.carrying), tuple(map(id, w.entities)), k)



def shortest(planner: Planner, phases: Sequence[Phase], actions: Sequence[str], horizon: int) -> tuple[int, tuple[str, ...]] | None:
    """The fewest steps that accomplish ``phases`` from the world's current state, and the ``actions`` that
    start such a way (in their order), if it takes at most ``horizon`` steps; else None. The world is left
    unchanged.

    Exact in MiniWorld's own dynamics, unlike :meth:`Planner.plan`: a breadth-first search over the
    exact states (poses by their bytes, never merged on a lattice), each successor from MiniWorld's own
    moves as the planner makes them, and a phase's ``then`` where it is reached (its effect applied).
    A move that is blocked changes nothing and an action that is no phase's ``then`` there (a pick up
    with nothing in reach, a drop before the end, Sign's stop) is a step spent or lost: none is on a
    shortest way. States from which the moves a phase still needs (its ``reach`` bound) cannot fit in
    the horizon are cut, which keeps the search exact and small: each step a few moves, so its cost is
    at most ``len(actions) ** horizon`` moves and mostly far less."""
    root = planner.snapshot()
    model = Model(planner, phases)
    try:
        if model.bound(0) > horizon:
            return None
        # Each state keeps the first actions of the shortest ways to it: ways that meet keep all of theirs.
        layer: dict[tuple[Any, ...], tuple[tuple[Any, ...], int, set[str] | None]] = {model.key(0): (root, 0, None)}
        seen = set(layer)
        for depth in range(horizon):
            found: set[str] = set()
            following: dict[tuple[Any, ...], tuple[tuple[Any, ...], int, set[str] | None]] = {}
            for snap, k, firsts in layer.values():
                for action in actions:
                    planner.restore(snap)
                    went = model.step(action, k)
                    if went is None or went == "fail":
                        continue
                    starts = {action} if firsts is None else firsts
                    if went == "goal":
                        found |= starts
                        continue
                    assert isinstance(went, int)
                    if depth + 1 + model.bound(went) > horizon:
                        continue
                    here = model.key(went)
                    if here in following:
                        following[here][2].update(starts)  # type: ignore[union-attr]
                    elif here not in seen:
                        seen.add(here)
                        following[here] = (planner.snapshot(), went, set(starts))
            if found:
                return depth + 1, tuple(a for a in actions if a in found)
            layer = following
        return None
    finally:
        planner.restore(root)
