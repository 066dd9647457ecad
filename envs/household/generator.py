"""Seeded procedural households: rooms, receptacles, objects and one ALFWorld task.

:func:`generate` draws everything from the ``numpy`` generator it is given, in a fixed order, so
a seed decides the house. The task is drawn first and the house is built around it, which makes
every task solvable by construction (the oracle then proves it and counts the steps):

1. the task type, its object kind and its receptacle (or lamp) kind, among kinds the task's
   rooms offer (heating and cooling need a kitchen, cleaning a kitchen or bathroom, lamps a
   living room or bedroom);
2. the receptacles of each room: the room's fixed ones, then draws from its optional kinds;
3. the objects: the task's own (never already where the goal wants them), look-alike
   distractors, and the room's ordinary objects (never of the target kind, so the target count
   is the task's); numbered per kind in a shuffled order, so "apple 1" is not always the target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rl4vlm_gym.envs.household.goals import TASK_TYPES, TREATMENTS, Goal
from rl4vlm_gym.envs.household.kinds import LAMPS, LOOKALIKES, OBJECTS, RECEPTACLES, ROOMS, TASK_OBJECTS
from rl4vlm_gym.envs.household.world import House, Receptacle, Thing

if TYPE_CHECKING:
    import numpy as np

    from rl4vlm_gym.envs.household.levels import HouseLevel

__all__ = ["generate"]

_ROOMS_FOR = {
    "pick_heat_then_place_in_recep": ("kitchen",),
    "pick_cool_then_place_in_recep": ("kitchen",),
    "pick_clean_then_place_in_recep": ("kitchen", "bathroom"),
    "look_at_obj_in_light": ("livingroom", "bedroom"),
}


def _pick(rng: np.random.Generator, options: list[str] | tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def generate(level: HouseLevel, task: str | None, rng: np.random.Generator, commands: str = "move") -> House:
    """Draw a house and its task for ``level`` (``task=None`` draws one of ``level.tasks``)."""
    task = _pick(rng, level.tasks) if task is None else task
    if task not in TASK_TYPES:
        raise ValueError(f"task={task!r} is not an ALFWorld task type; choose one of {TASK_TYPES}")

    # 1. rooms: the task's room first
    primary = _pick(rng, _ROOMS_FOR.get(task, tuple(ROOMS)))
    others = [room for room in ROOMS if room != primary]
    rooms = [primary] + [others[i] for i in rng.permutation(len(others))[: level.rooms - 1]]

    # 2. receptacle kinds of each room
    layout: list[tuple[str, str]] = []  # (kind, room)
    for room in rooms:
        spec = ROOMS[room]
        extra = max(level.receptacles - len(spec.fixed), 0)
        kinds = list(spec.fixed) + [spec.optional[i] for i in rng.permutation(len(spec.optional))[:extra]]
        layout += [(kind, room) for kind in kinds]
    present = {kind for kind, _ in layout}

    # 3. the goal
    goal = _draw_goal(task, rooms, present, rng)
    if goal.lamp is not None:
        lamp_homes = sorted({k for k, room in layout if room == primary and goal.lamp in RECEPTACLES[k].contains})
        if not lamp_homes:  # every living room and bedroom has a side table; keep the draw total anyway
            layout.append(("sidetable", primary))
            lamp_homes = ["sidetable"]

    # receptacle names: numbered per kind, listed by kind as ALFWorld's overview does
    counts: dict[str, int] = {}
    named: list[Receptacle] = []
    for kind, room in sorted(layout, key=lambda kr: kr[0]):
        counts[kind] = counts.get(kind, 0) + 1
        named.append(Receptacle(f"{kind} {counts[kind]}", kind, room))
    receptacles = tuple(named)

    # 4. objects: (kind, receptacle name)
    specs = [(r, r.spec) for r in receptacles]  # looked up once: homes() runs a few dozen times a house

    def homes(kind: str, *, room: str | None = None, avoid: str | None = None, hide: bool = True) -> list[str]:
        return [
            r.name
            for r, spec in specs
            if kind in spec.contains and (room is None or r.room == room) and r.kind != avoid and (hide or not spec.openable)
        ]

    placed: list[tuple[str, str]] = []
    shut_away = level.hidden or not level.closed
    for _ in range(goal.count):
        options = homes(goal.obj, avoid=goal.recep, hide=shut_away) or homes(goal.obj, avoid=goal.recep)
        placed.append((goal.obj, _pick(rng, options)))
    if goal.lamp is not None:
        lamp_home = _pick(rng, [r.name for r in receptacles if r.kind in lamp_homes and r.room == primary])
        placed.append((goal.lamp, lamp_home))
    for kind in _distractor_kinds(goal.obj, level.distractors, rng):
        options = homes(kind)
        if options:
            placed.append((kind, _pick(rng, options)))
    for room in rooms:
        pool = [k for k in ROOMS[room].objects if k != goal.obj]
        for _ in range(level.objects):
            kind = _pick(rng, pool)
            options = homes(kind, room=room)
            if options:
                placed.append((kind, _pick(rng, options)))

    objects: list[Thing] = []
    placement: dict[str, list[str]] = {}
    numbers: dict[str, int] = {}
    for i in rng.permutation(len(placed)):
        kind, home = placed[int(i)]
        numbers[kind] = numbers.get(kind, 0) + 1
        thing = Thing(f"{kind} {numbers[kind]}", kind)
        objects.append(thing)
        placement.setdefault(home, []).append(thing.name)
    for inside in placement.values():
        inside.sort(key=_natural)

    closed = frozenset(r.name for r in receptacles if r.spec.openable) if level.closed else frozenset()
    return House(receptacles, tuple(objects), placement, closed, goal, commands)


def _draw_goal(task: str, rooms: list[str], present: set[str], rng: np.random.Generator) -> Goal:
    template = int(rng.integers(2))
    primary = ROOMS[rooms[0]]
    if task == "look_at_obj_in_light":
        kinds = [k for k in TASK_OBJECTS[task] if k in primary.objects]
        return Goal(task, _pick(rng, kinds), lamp=_pick(rng, LAMPS), template=template)
    available = {k for room in rooms for k in ROOMS[room].objects}
    if task in TREATMENTS:
        available &= set(primary.objects)  # treated where the appliance is
    kinds = sorted(present)
    # the object must be able to start somewhere that is not of the goal's kind: a goal kind that holds it
    # is one of the present kinds that do, so a second one must be present
    holders = {obj: [k for k in kinds if obj in RECEPTACLES[k].contains] for obj in TASK_OBJECTS[task] if obj in available}
    choices = [(obj, recep) for obj, homes in holders.items() if len(homes) > 1 for recep in homes]
    obj, recep = choices[int(rng.integers(len(choices)))]
    return Goal(task, obj, recep=recep, template=template)


def _distractor_kinds(target: str, n: int, rng: np.random.Generator) -> list[str]:
    group = next((g for g in LOOKALIKES if target in g), frozenset())
    kinds = sorted(k for k in group if k != target and OBJECTS[k].pickupable)
    return [_pick(rng, kinds) for _ in range(n)] if kinds else []


def _natural(name: str) -> tuple[str, int]:
    kind, _, number = name.rpartition(" ")
    return kind, int(number)
