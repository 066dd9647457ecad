"""The 40 BabaIsAI levels BALROG evaluates, generated as nacloos/baba-is-ai generates them.

Read for the layouts and the order of the draws (not copied): nacloos/baba-is-ai ad466e027ad0
``baba/envs.py`` (``MakeWinEnv``, ``TwoRoomEnv``, ``TwoRoomMakeYouEnv``, ``TwoRoomMakeWallWinEnv``,
the registered ``env/...`` ids and their arguments; ``put_rule``, ``place_obj``, ``break_rule``)
and ``baba/grid.py`` (``BabaIsYouEnv.place_obj``: rejection sampling with two ``randint`` calls
per try; ``put_rule``).

The original draws from numpy's *global* legacy generator, which BALROG's evaluator seeds with the
episode's seed (``np.random.seed(seed)`` just before ``env.reset``). Every generator here takes a
legacy :class:`numpy.random.RandomState` and makes exactly the original's calls on it, in its
order (``choice`` without replacement for the three object kinds, ``choice`` with replacement for
their colours, ``randint(low, high)`` twice per placement try, ``choice(n)`` for picks from a
list), so ``RandomState(seed)`` gives BALROG's level for ``seed``. Nothing draws from Python's
``random`` (the original does not either).

Placement details kept from the original because they decide the levels: a placement area may
reach into the outer wall (such tries are rejected like any occupied cell); rule blocks put at
fixed cells are stacked on whatever is there (``put_obj`` does not check); a rule is broken by
moving one of its blocks to a free cell of an area (``break_rule``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rl4vlm_gym.envs.balrog.babaisai import engine as E

NAMES = ("ball", "key", "door")
COLORS = ("red", "blue", "green")  # baba/envs.py's order, which the colour draws index


@dataclass(frozen=True)
class Task:
    """One of BALROG's BabaIsAI tasks: the original's generator class and its arguments."""

    task: str  # BALROG's id, e.g. "env/two_room-break_stop-make_win"
    kind: str  # "make_win" (one 8x8 room), "two_room", "make_you", "make_wall_win" (13x9, two rooms)
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.task.removeprefix("env/")


def _t(task: str, kind: str, **args: Any) -> Task:
    return Task(f"env/{task}", kind, args)


_LEFT = {"obj1_pos": "left_anywhere", "obj2_pos": "left_anywhere"}
_RIGHT = {"obj1_pos": "right_anywhere", "obj2_pos": "right_anywhere"}
_ANY = {"obj1_pos": "anywhere", "obj2_pos": "anywhere"}

# BALROG's babaisai_tasks (balrog/config/config.yaml, af7d1f17), in its order, with the arguments
# each registered id passes (baba/envs.py). Unlisted arguments take the class's defaults.
TASKS: tuple[Task, ...] = (
    _t("make_win-distr_obj_rule", "make_win"),
    _t("goto_win-distr_obj_rule", "make_win", break_win_rule=False),
    _t("goto_win", "make_win", break_win_rule=False, distractor_obj=False, distractor_rule_block=False),
    _t("goto_win-distr_obj", "make_win", break_win_rule=False, distractor_obj=True, distractor_rule_block=False),
    _t("goto_win-distr_rule", "make_win", break_win_rule=False, distractor_obj=False, distractor_rule_block=True),
    _t("goto_win-distr_obj-irrelevant_rule", "make_win", break_win_rule=False, distractor_obj=True, distractor_rule_block=True,
       irrelevant_rule_distractor=True),
    _t("make_win-distr_obj", "make_win", distractor_rule_block=False),
    _t("make_win-distr_rule", "make_win", distractor_obj=False),
    _t("make_win", "make_win", distractor_obj=False, distractor_rule_block=False),
    _t("make_win-distr_obj-irrelevant_rule", "make_win", distractor_rule_block=True, irrelevant_rule_distractor=True),
    _t("two_room-goto_win", "two_room", **_LEFT, distractor_obj=False, distractor_rule_block=False, break_stop_rule=True),
    _t("two_room-goto_win-distr_obj_rule", "two_room", **_LEFT, break_stop_rule=True),
    _t("two_room-goto_win-distr_rule", "two_room", **_LEFT, distractor_obj=False, break_stop_rule=True),
    _t("two_room-goto_win-distr_obj", "two_room", **_LEFT, distractor_obj=True, distractor_rule_block=False, break_stop_rule=True),
    _t("two_room-goto_win-distr_obj-irrelevant_rule", "two_room", **_LEFT, distractor_obj=True, distractor_rule_block=True,
       irrelevant_rule_distractor=True, break_stop_rule=True),
    _t("two_room-goto_win-distr_win_rule", "two_room", **_LEFT, distractor_obj=True, distractor_win_rule=True, break_stop_rule=True),
    _t("two_room-break_stop-goto_win-distr_obj_rule", "two_room", break_stop_rule=False, **_RIGHT),
    _t("two_room-break_stop-goto_win-distr_obj", "two_room", break_stop_rule=False, **_RIGHT, distractor_rule_block=False),
    _t("two_room-break_stop-goto_win-distr_rule", "two_room", break_stop_rule=False, **_RIGHT, distractor_obj=False),
    _t("two_room-break_stop-goto_win-distr_obj-irrelevant_rule", "two_room", break_stop_rule=False, **_RIGHT, distractor_obj=True,
       distractor_rule_block=True, irrelevant_rule_distractor=True),
    _t("two_room-break_stop-goto_win", "two_room", break_stop_rule=False, **_RIGHT, distractor_obj=False, distractor_rule_block=False),
    _t("two_room-maybe_break_stop-goto_win-distr_obj_rule", "two_room", break_stop_rule=False, **_ANY),
    _t("two_room-maybe_break_stop-goto_win", "two_room", break_stop_rule=False, **_ANY, distractor_obj=False, distractor_rule_block=False),
    _t("two_room-maybe_break_stop-goto_win-distr_obj", "two_room", break_stop_rule=False, **_ANY, distractor_obj=True,
       distractor_rule_block=False),
    _t("two_room-maybe_break_stop-goto_win-distr_rule", "two_room", break_stop_rule=False, **_ANY, distractor_obj=False,
       distractor_rule_block=True),
    _t("two_room-maybe_break_stop-goto_win-distr_obj-irrelevant_rule", "two_room", break_stop_rule=False, **_ANY, distractor_obj=True,
       distractor_rule_block=True, irrelevant_rule_distractor=True),
    _t("two_room-make_win-distr_obj_rule", "two_room", break_stop_rule=True, break_win_rule=True, **_LEFT),
    _t("two_room-make_win-distr_rule", "two_room", break_stop_rule=True, break_win_rule=True, **_LEFT, distractor_obj=False),
    _t("two_room-make_win", "two_room", break_stop_rule=True, break_win_rule=True, **_LEFT, distractor_obj=False,
       distractor_rule_block=False),
    _t("two_room-make_win-distr_obj-irrelevant_rule", "two_room", break_stop_rule=True, break_win_rule=True, **_LEFT,
       distractor_rule_block=True, irrelevant_rule_distractor=True),
    _t("two_room-make_win-distr_obj", "two_room", break_stop_rule=True, break_win_rule=True, **_LEFT, distractor_rule_block=False),
    _t("two_room-make_win-distr_win_rule", "two_room", **_LEFT, distractor_obj=True, distractor_win_rule=True, break_win_rule=True,
       break_stop_rule=True),
    _t("two_room-break_stop-make_win-distr_obj_rule", "two_room", break_stop_rule=False, break_win_rule=True, **_RIGHT),
    _t("two_room-break_stop-make_win-distr_rule", "two_room", break_stop_rule=False, break_win_rule=True, **_RIGHT, distractor_obj=False),
    _t("two_room-break_stop-make_win", "two_room", break_stop_rule=False, break_win_rule=True, **_RIGHT, distractor_obj=False,
       distractor_rule_block=False),
    _t("two_room-break_stop-make_win-distr_obj-irrelevant_rule", "two_room", break_stop_rule=False, break_win_rule=True, **_RIGHT,
       distractor_rule_block=True, irrelevant_rule_distractor=True),
    _t("two_room-break_stop-make_win-distr_obj", "two_room", break_stop_rule=False, break_win_rule=True, **_RIGHT,
       distractor_rule_block=False),
    _t("two_room-make_you", "make_you"),
    _t("two_room-make_you-make_win", "make_you", break_win_rule=True),
    _t("two_room-make_wall_win", "make_wall_win"),
)  # fmt: skip
TASKS_BY_ID = {task.task: task for task in TASKS}


@dataclass
class Level:
    """A generated level: its world (rules read) and the original's ``target_plan``."""

    world: E.World
    target_plan: str


class _Builder:
    """The original env's placement methods, drawing from ``rs`` as it draws from ``np.random``."""

    def __init__(self, rs: np.random.RandomState, width: int, height: int) -> None:
        self.rs = rs
        self.world = E.World(width, height)
        self.init_rules: dict[tuple[str, str], list[tuple[int, int]]] = {}
        w = self.world
        for x in range(width):  # wall_rect(0, 0, width, height): top, bottom, left, right
            w.put(x, 0, E.make(E.BORDER))
        for x in range(width):
            w.put(x, height - 1, E.make(E.BORDER))
        for y in range(height):
            w.put(0, y, E.make(E.BORDER))
        for y in range(height):
            w.put(width - 1, y, E.make(E.BORDER))

    def free(self, x: int, y: int) -> bool:
        return self.world.top(x, y) is None

    def place(self, code: int | None, top: tuple[int, int] | None = None, size: tuple[int, int] | None = None) -> tuple[int, int]:
        """``BabaIsYouEnv.place_obj``: draw x then y until the cell is free; ``None`` only draws."""
        w = self.world
        tx, ty = (0, 0) if top is None else (max(top[0], 0), max(top[1], 0))
        sx, sy = (w.width, w.height) if size is None else size
        while True:
            x = int(self.rs.randint(tx, min(tx + sx, w.width)))
            y = int(self.rs.randint(ty, min(ty + sy, w.height)))
            if self.free(x, y):
                break
        if code is not None:
            w.put(x, y, code)
        return x, y

    def put_rule(self, noun: str, word: str, at: tuple[int, int]) -> None:
        """Three word blocks from ``at`` to the right: NOUN IS PROPERTY (or NOUN IS NOUN)."""
        x, y = at
        w = self.world
        w.put(x, y, E.make(E.noun_word(E.NOUN_BY_NAME[noun])))
        w.put(x + 1, y, E.make(E.IS))
        if word in E.NOUN_BY_NAME:
            w.put(x + 2, y, E.make(E.noun_word(E.NOUN_BY_NAME[word])))
        else:
            w.put(x + 2, y, E.make(E.property_word(E.PROPERTY_BY_NAME[word])))
        self.init_rules[(noun, word)] = [(x + i, y) for i in range(3)]

    def break_rule(self, rule: tuple[str, str], new_pos: dict | tuple[int, int], block_idx: int | list[int] | None) -> None:
        """Move one block of ``rule`` to ``new_pos`` (a cell, or an area to draw a free cell from)."""
        positions = self.init_rules[rule]
        if isinstance(new_pos, dict):
            new_pos = self.place(None, **new_pos)
        if block_idx is None:
            index = int(self.rs.choice(len(positions)))
        elif isinstance(block_idx, list):
            index = int(self.pick(block_idx))
        else:
            index = block_idx
        self.world.move_top(positions[index], new_pos)

    def pick(self, items: Any) -> Any:
        """One of ``items``, drawn as the original's ``items[np.random.choice(len(items))]``."""
        return items[int(self.rs.choice(len(items)))]

    def sample_objects(self) -> tuple[tuple[str, str], tuple[str, str], tuple[str, str]]:
        """Three different kinds of object, each in a colour drawn with replacement."""
        kinds = self.rs.choice(len(NAMES), size=3, replace=False)
        colors = self.rs.choice(len(COLORS), size=3, replace=True)
        return tuple((COLORS[int(c)], NAMES[int(k)]) for k, c in zip(kinds, colors))  # type: ignore[return-value]

    @staticmethod
    def obj(spec: tuple[str, str]) -> int:
        color, name = spec
        return E.make(E.NOUN_BY_NAME[name], color)

    @staticmethod
    def word(name: str) -> int:
        return E.make(E.noun_word(E.NOUN_BY_NAME[name]))


def _make_win(rs: np.random.RandomState, *, break_win_rule: bool = True, distractor_obj: bool = True,
              distractor_rule_block: bool = True, irrelevant_rule_distractor: bool = False,
              distractor_win_rule: bool = False) -> Level:  # fmt: skip
    """``MakeWinEnv`` (8x8): "baba is you" at the bottom, "X is win" at the top (one block moved
    into the middle when broken), an optional rule block the agent cannot use, the objects."""
    b = _Builder(rs, 8, 8)
    obj1, obj2, obj3 = b.sample_objects()  # the original resamples while obj1 is not a win kind: never here
    b.put_rule("baba", "you", (1, 6))
    win = obj1[1]
    b.put_rule(win, "win", (1, 1))
    if break_win_rule:
        b.break_rule((win, "win"), {"top": (2, 2), "size": (4, 4)}, 0)
    if distractor_rule_block:
        # cells along the edges from where the block can never complete a rule (baba/envs.py)
        cells = ((4, 6), (5, 6), (6, 6), (4, 1), (5, 1), (6, 1), (6, 1), (6, 2), (6, 3), (6, 4), (6, 5), (6, 6))
        x, y = b.pick(cells)
        b.world.put(x, y, b.word(obj3[1] if irrelevant_rule_distractor else obj2[1]))
    b.place(E.make(E.BABA), top=(1, 2))
    b.place(b.obj(obj1), top=(1, 2))
    if distractor_obj:
        b.place(b.obj(obj2), top=(1, 2))
    if distractor_win_rule:
        b.put_rule(obj3[1], "win", (4, 4))
    plan = f"make[{win} is win], goto[{win}]" if break_win_rule else f"goto[{win}]"
    return Level(b.world, plan)


def _areas(width: int, height: int, pushable_width: int, right_pushable_x: int) -> dict[str, Any]:
    """The placement areas of the two-room classes (their ``self.positions``)."""
    size = (pushable_width, height - 6)
    return {
        "left_pushable": {"top": (2, 3), "size": size},
        "right_pushable": {"top": (right_pushable_x, 3), "size": size},
        "right_unpushable": [
            *[(width - 2, 2 + i) for i in range(height - 4)],
            *[(width - 2 - i, height - 2) for i in range(width // 2 - 2)],
        ],
        "left_anywhere": {"top": (1, 1), "size": (width // 2 - 2, height - 2)},
        "right_anywhere": {"top": (width // 2 + 1, 2), "size": (width // 2 - 2, height - 2)},
        "anywhere": {"top": (1, 2), "size": (width - 2, height - 2)},
    }


def _two_rooms(rs: np.random.RandomState, width: int, height: int) -> _Builder:
    b = _Builder(rs, width, height)
    for y in range(1, height - 1):  # the dividing wall is a (flexible) WALL object, STOP while "wall is stop"
        b.world.put(width // 2, y, E.make(E.WALL))
    return b


def _two_room(rs: np.random.RandomState, *, baba_pos: str = "left_pushable", obj1_pos: str = "anywhere", obj2_pos: str = "anywhere",
              break_stop_rule: bool = False, break_win_rule: bool = False, distractor_obj: bool = True,
              distractor_rule_block: bool = True, irrelevant_rule_distractor: bool = False,
              distractor_win_rule: bool = False) -> Level:  # fmt: skip
    """``TwoRoomEnv`` (13x9): baba's room on the left, a wall (STOP while "wall is stop") down the
    middle, "X is win" at the top right."""
    width, height = 13, 9
    areas = _areas(width, height, width // 2 - 2, width // 2 + 1)
    b = _two_rooms(rs, width, height)
    obj1, obj2, obj3 = b.sample_objects()
    b.put_rule("baba", "you", (1, height - 2))
    b.put_rule("wall", "stop", (1, 2))
    b.put_rule(obj1[1], "win", (width - 4, 1))
    if distractor_rule_block:
        if irrelevant_rule_distractor:
            b.place(b.word(obj3[1]), **areas["right_pushable"])
        elif distractor_obj:
            x, y = b.pick(areas["right_unpushable"])
            b.world.put(x, y, b.word(obj2[1]))
        else:
            b.place(b.word(obj2[1]), **areas["right_pushable"])
    if break_stop_rule:
        b.break_rule(("wall", "stop"), areas["left_pushable"], [1, 2])
    if break_win_rule:
        b.break_rule((obj1[1], "win"), areas["right_pushable"], 0)
    b.place(E.make(E.BABA), **areas[baba_pos])
    obj1_at = b.place(b.obj(obj1), **areas[obj1_pos])
    if distractor_obj:
        b.place(b.obj(obj2), **areas[obj2_pos])
    if distractor_win_rule:
        b.put_rule(obj3[1], "win", (width - 4, 4))
    name = obj1[1]
    left = obj1_at[0] < width // 2
    if not break_win_rule and (left or break_stop_rule):
        plan = f"goto[{name}]"
    elif not break_win_rule:
        plan = f"break[wall is stop], goto[{name}]"
    elif break_stop_rule:
        plan = f"make[{name} is win], goto[{name}]"
    else:
        plan = f"break[wall is stop], make[{name} is win], goto[{name}]"
    return Level(b.world, plan)


def _make_you(rs: np.random.RandomState, *, break_win_rule: bool = False) -> Level:
    """``TwoRoomMakeYouEnv`` (13x9): make the other room's object YOU (with the noun block in
    baba's room) and walk it to the win object; optionally "X is win" to rebuild too."""
    width, height = 13, 9
    areas = _areas(width, height, width // 2 - 3, width // 2 + 2)
    b = _two_rooms(rs, width, height)
    obj1, obj2, obj3 = b.sample_objects()
    b.put_rule("baba", "you", (1, height - 3))
    b.put_rule("wall", "stop", (1, 1))
    b.put_rule(obj1[1], "win", (width - 4, 1))
    b.place(b.word(obj2[1]), **areas["left_pushable"])  # distractor_obj and distractor_rule_block: the class's defaults
    if break_win_rule:
        b.break_rule((obj1[1], "win"), areas["right_pushable"], 0)
    b.place(E.make(E.BABA), **areas["left_pushable"])
    b.place(b.obj(obj1), **areas["right_anywhere"])
    b.place(b.obj(obj2), **areas["right_anywhere"])
    if break_win_rule:
        plan = f"make[{obj2[1]} is you], make[{obj1[1]} is win], goto[{obj1[1]}]"
    else:
        plan = f"make[{obj2[1]} is you], goto[{obj1[1]}]"
    return Level(b.world, plan)


def _make_wall_win(rs: np.random.RandomState) -> Level:
    """``TwoRoomMakeWallWinEnv`` (13x9): the win rule's noun is stuck against the far wall; break
    "wall is stop", make "wall is win" and touch a wall."""
    width, height = 13, 9
    areas = _areas(width, height, width // 2 - 3, width // 2 + 2)
    b = _two_rooms(rs, width, height)
    obj1, obj2, obj3 = b.sample_objects()
    b.put_rule("baba", "you", (1, height - 2))
    b.put_rule("wall", "stop", (2, 2))
    b.put_rule(obj1[1], "win", (width - 4, 1))
    b.place(b.word(obj3[1]), **areas["right_pushable"])  # an irrelevant rule block (the class's defaults)
    b.break_rule((obj1[1], "win"), b.pick(areas["right_unpushable"]), 0)
    b.place(E.make(E.BABA), **areas["left_pushable"])
    b.place(b.obj(obj1), **areas["right_anywhere"])
    b.place(b.obj(obj2), **areas["right_anywhere"])
    return Level(b.world, "break[wall is stop], make[wall is win], goto[wall]")


_GENERATORS = {"make_win": _make_win, "two_room": _two_room, "make_you": _make_you, "make_wall_win": _make_wall_win}


def generate(task: Task, rs: np.random.RandomState) -> Level:
    """Generate ``task``'s level from ``rs`` (``RandomState(seed)`` gives BALROG's level for ``seed``)
    and read its rules."""
    level = _GENERATORS[task.kind](rs, **task.args)
    level.world.update_rules()
    return level
