"""Shortest plans for BALROG's BabyAI tasks: breadth-first search over an exact model of minigrid.

minigrid's ``BabyAIBot`` plans from what it has seen and explores the rest, so its runs are often
longer than the shortest; ``optimal_steps`` must be the fewest steps, so the oracle searches the true
state instead. Copies of minigrid's env are too dear to search (a deep copy per node), so this
module models the few rules BALROG's rooms use: minigrid's moves, pick up, drop, toggle (a box
opened with nothing inside vanishes; the locked door opens for its key, in one toggle), and its
verifier, quirks included: targets are where the named objects were at the last drop (a picked-up
or vanished object still counts where it was until then), "pick up A, then go to B" and "go to B
after you pick up A" are non-strict (reaching B first fails nothing) and look at B on the step that
picks up A too. tests/envs/balrog checks the model against minigrid under random play and against
searches over real minigrid copies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from minigrid.envs.babyai.core.verifier import BeforeInstr

LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE = range(6)
DIR_TO_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))  # minigrid's: 0 right, 1 down, 2 left, 3 up
Cell = tuple[int, int]


@dataclass(frozen=True)
class Scene:
    """What never changes in an episode: the walls, the locked door (open task), which objects are
    boxes, and which objects each part of the mission names (minigrid's ``obj_set``; the moved or
    picked-up part first)."""

    task: str
    walls: frozenset[Cell]
    door: Cell | None
    boxes: tuple[bool, ...]
    named: tuple[tuple[int, ...], ...]


# (x, y, dir, index of the carried object or -1, each object's cell (None: carried or gone),
#  each part's target cells (the verifier's obj_poss), the sequence's pick-up done)
State = tuple[int, int, int, int, tuple[Cell | None, ...], tuple[tuple[Cell, ...], ...], bool]


def _next_to(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return values[:index] + (value,) + values[index + 1 :]


def step(scene: Scene, state: State, action: int) -> tuple[State, str]:
    """minigrid's step and verifier: the next state and ``"success"`` or ``"continue"`` (these
    missions cannot fail)."""
    x, y, d, carry, cells, targets, picked = state
    dx, dy = DIR_TO_VEC[d]
    front = (x + dx, y + dy)
    holder = cells.index(front) if front in cells else -1
    blocked = front in scene.walls or front == scene.door or holder >= 0
    before = carry
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
        # RoomGridLevel refreshes the verifier's positions on every drop: the named objects on the grid
        targets = tuple(tuple(sorted(cells[i] for i in part if cells[i] is not None)) for part in scene.named)
    elif action == TOGGLE and holder >= 0 and scene.boxes[holder]:
        cells = _set(cells, holder, None)  # an empty box vanishes
    new_front = (x + DIR_TO_VEC[d][0], y + DIR_TO_VEC[d][1])
    picked_now = action == PICKUP and before < 0 and carry >= 0 and carry in scene.named[0]
    task = scene.task
    if task == "open":  # the door is locked until the key opens it, which is the mission
        done = action == TOGGLE and front == scene.door and carry >= 0
    elif task == "goto":
        done = new_front in targets[0]
    elif task == "pickup":
        done = picked_now
    elif task == "putnext":
        done = (
            action == DROP
            and before in scene.named[0]
            and cells[before] is not None
            and any(_next_to(cells[before], t) for t in targets[1])
        )
    else:  # pick_up_seq_go_to
        picked = picked or picked_now
        done = picked and new_front in targets[1]
    return (x, y, d, carry, cells, targets, picked), "success" if done else "continue"


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
            if new not in parents:
                parents[new] = (state, action)
                frontier.append(new)
    return None


def mission_parts(game: Any) -> list[Any]:
    """The object descriptions of the mission (minigrid's ``ObjDesc``), the moved or picked-up one
    first; the door's for the open task."""
    instrs = game.instrs
    if game.task in ("goto", "pickup", "open"):
        return [instrs.desc]
    if game.task == "putnext":
        return [instrs.desc_move, instrs.desc_fixed]
    if isinstance(instrs, BeforeInstr):  # "pick up A, then go to B"
        return [instrs.instr_a.desc, instrs.instr_b.desc]
    return [instrs.instr_b.desc, instrs.instr_a.desc]  # AfterInstr: "go to B after you pick up A"


def objects_of(game: Any) -> list[Any]:
    """Every object the level placed (the key of the open task), in the order placed."""
    return [obj for row in game.room_grid for room in row for obj in room.objs]


def read(game: Any) -> tuple[Scene, State]:
    """The scene and state of a live :class:`~rl4vlm_gym.envs.balrog.babyai_level.MixedLocalLevel`."""
    grid = game.grid
    walls = frozenset(
        (x, y) for x in range(grid.width) for y in range(grid.height) if (c := grid.get(x, y)) is not None and c.type == "wall"
    )
    objs = objects_of(game)
    cells: list[Cell | None] = []
    for obj in objs:
        x, y = (int(v) for v in obj.cur_pos)  # (-1, -1) while carried; where it was once toggled away
        cells.append((x, y) if 0 <= x < grid.width and grid.get(x, y) is obj else None)
    carry = next((i for i, obj in enumerate(objs) if obj is game.carrying), -1)
    if game.carrying is not None and carry < 0:
        raise ValueError("the agent carries an object the level did not place")
    parts = mission_parts(game)
    agent = (int(game.agent_pos[0]), int(game.agent_pos[1]), int(game.agent_dir))
    boxes = tuple(obj.type == "box" for obj in objs)
    if game.task == "open":
        (door,) = parts[0].obj_set
        if not door.is_locked or any(obj.color != door.color for obj in objs):
            raise ValueError("the open task's door is unlocked, or an object is not its key")
        scene = Scene(game.task, walls, tuple(int(v) for v in door.cur_pos), boxes, ((),))  # type: ignore[arg-type]
        return scene, (*agent, carry, tuple(cells), ((),), False)
    named = tuple(tuple(i for i, obj in enumerate(objs) if any(obj is o for o in part.obj_set)) for part in parts)
    targets = tuple(tuple(sorted(tuple(int(v) for v in p) for p in part.obj_poss)) for part in parts)
    picked = False
    if game.task == "pick_up_seq_go_to":
        instrs = game.instrs
        picked = (instrs.a_done if isinstance(instrs, BeforeInstr) else instrs.b_done) == "success"
    return Scene(game.task, walls, None, boxes, named), (*agent, carry, tuple(cells), targets, picked)  # type: ignore[return-value]
