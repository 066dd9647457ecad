"""Shortest plans for BALROG's BabyAI tasks: breadth-first search over an exact model of minigrid.

minigrid's ``BabyAIBot`` plans from what it has seen and explores the rest, so its runs are often
longer than the shortest (a quarter of BALROG's goto episodes); ``optimal_steps`` must be the
fewest steps, so the oracle searches the true state instead. Copies of minigrid's env are too
dear to search (a deep copy per node), so this module models the few rules these rooms use:
minigrid's moves, pick up, drop, toggle (a box opened with nothing inside vanishes), and its
verifier, including its quirks (targets are where an object was at the last drop; a strict
"then" fails if the second object is reached first). tests/envs/balrog checks the model against
searches over real minigrid copies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE = range(6)
DIR_TO_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))  # minigrid's: 0 right, 1 down, 2 left, 3 up
NOWHERE = (-1, -1)  # minigrid's cur_pos of a carried object
Cell = tuple[int, int]


@dataclass(frozen=True)
class Scene:
    """What never changes in an episode: walls, the closed door (open task), which objects are boxes."""

    task: str
    walls: frozenset[Cell]
    door: Cell | None
    boxes: tuple[bool, ...]


# (x, y, dir, carrying index or -1, object cells (None: carried or gone), gone flags,
#  the verifier's target cells (None: off the grid at the last drop), the "then" instruction's first part done)
State = tuple[int, int, int, int, tuple[Cell | None, ...], tuple[bool, ...], tuple[Cell | None, ...], bool]


def _next_to(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def step(scene: Scene, state: State, action: int) -> tuple[State, str]:
    """minigrid's step and verifier: the next state and ``"success"``, ``"failure"`` or ``"continue"``."""
    x, y, d, carry, cells, gone, targets, first_done = state
    dx, dy = DIR_TO_VEC[d]
    front = (x + dx, y + dy)
    holder = next((i for i, c in enumerate(cells) if c == front), -1)
    blocked = front in scene.walls or front == scene.door or holder >= 0
    before = carry
    opened = False
    if action == LEFT:
        d = (d - 1) % 4
    elif action == RIGHT:
        d = (d + 1) % 4
    elif action == FORWARD:
        if not blocked:
            x, y = front
    elif action == PICKUP:
        if holder >= 0 and carry < 0:
            carry, cells = holder, _set(cells, holder, None)
    elif action == DROP:
        if carry >= 0 and not blocked:
            cells, carry = _set(cells, carry, front), -1
    elif action == TOGGLE:
        if front == scene.door:
            opened = True
        elif holder >= 0 and scene.boxes[holder]:  # an empty box vanishes; minigrid leaves its cur_pos
            cells, gone = _set(cells, holder, None), _set(gone, holder, True)
    if action == DROP:  # RoomGridLevel refreshes the verifier's object positions on every drop: only objects on the grid have one
        targets = cells
    new_front = (x + DIR_TO_VEC[d][0], y + DIR_TO_VEC[d][1])
    new = (x, y, d, carry, cells, gone, targets, first_done)
    task = scene.task
    if task == "goto":
        return new, "success" if targets[0] == new_front else "continue"
    if task == "pickup":
        return new, "success" if action == PICKUP and before < 0 and carry == 0 else "continue"
    if task == "open":
        return new, "success" if opened else "continue"
    if task == "putnext":
        dropped = action == DROP and before == 0 and cells[0] is not None
        return new, "success" if dropped and targets[1] is not None and _next_to(cells[0], targets[1]) else "continue"
    # pick_up_seq_go_to: minigrid's BeforeInstr(PickupInstr(0), GoToInstr(1), strict=True)
    if not first_done and action == PICKUP and before < 0 and carry == 0:
        new = (x, y, d, carry, cells, gone, targets, True)
        return new, "success" if targets[1] == new_front else "continue"
    if targets[1] == new_front:
        return new, "success" if first_done else "failure"
    return new, "continue"


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return values[:index] + (value,) + values[index + 1 :]


def shortest_plan(scene: Scene, start: State, limit: int = 200_000) -> list[int] | None:
    """The fewest actions that accomplish the mission from ``start`` (ties broken by minigrid's
    action order), or None if none exists within ``limit`` searched states."""
    parents: dict[State, tuple[State, int] | None] = {start: None}
    frontier = deque([start])
    while frontier and len(parents) < limit:
        state = frontier.popleft()
        for action in range(6):
            new, status = step(scene, state, action)
            if status == "success":
                plan = [action]
                while parents[state] is not None:
                    state, taken = parents[state]  # type: ignore[misc]
                    plan.append(taken)
                return plan[::-1]
            if status == "continue" and new not in parents:
                parents[new] = (state, action)
                frontier.append(new)
    return None


def objects_of(game: Any) -> list[Any]:
    """The objects the mission names, in the planner's order (the moved or first one first)."""
    instrs = game.instrs
    if game.task in ("goto", "pickup", "open"):
        descs = [instrs.desc]
    elif game.task == "putnext":
        descs = [instrs.desc_move, instrs.desc_fixed]
    else:
        descs = [instrs.instr_a.desc, instrs.instr_b.desc]
    objs = []
    for desc in descs:
        assert len(desc.obj_set) == 1, f"{desc.surface(game)} names {len(desc.obj_set)} objects; BALROG's rooms hold one of each"
        objs.append(desc.obj_set[0])
    return objs


def read(game: Any) -> tuple[Scene, State]:
    """The scene and state of a live ``MixedLocalLevel`` game."""
    grid = game.grid
    walls = frozenset((x, y) for x in range(grid.width) for y in range(grid.height) if (c := grid.get(x, y)) is not None and c.type == "wall")
    objs = objects_of(game)
    if game.task == "open":
        door = tuple(int(v) for v in objs[0].cur_pos)
        scene = Scene(game.task, walls, door, ())
        return scene, (int(game.agent_pos[0]), int(game.agent_pos[1]), int(game.agent_dir), -1, (), (), (), False)
    cells: list[Cell | None] = []
    gone: list[bool] = []
    for obj in objs:
        pos = tuple(int(v) for v in obj.cur_pos)
        present = pos != NOWHERE and grid.get(*pos) is obj
        cells.append(pos if present else None)
        gone.append(obj is not game.carrying and not present)
    descs = [d.desc for d in ((game.instrs.instr_a, game.instrs.instr_b) if game.task == "pick_up_seq_go_to" else ())] or (
        [game.instrs.desc_move, game.instrs.desc_fixed] if game.task == "putnext" else [game.instrs.desc]
    )
    targets = tuple(tuple(int(v) for v in np.asarray(d.obj_poss[0])) if d.obj_poss else None for d in descs)
    carry = next((i for i, obj in enumerate(objs) if obj is game.carrying), -1)
    if game.carrying is not None and carry < 0:
        raise ValueError("the agent carries an object the mission does not name")
    first_done = game.task == "pick_up_seq_go_to" and game.instrs.a_done == "success"
    boxes = tuple(obj.type == "box" for obj in objs)
    state = (int(game.agent_pos[0]), int(game.agent_pos[1]), int(game.agent_dir), carry, tuple(cells), tuple(gone), targets, first_done)
    return Scene(game.task, walls, None, boxes), state
