"""The rules of BabaIsAI's grid world, written here from the rules of nacloos/baba-is-ai (MIT).

Read for the rules (not copied): nacloos/baba-is-ai ad466e027ad0 ``baba/grid.py``
(``BabaIsYouGrid``, ``BabaIsYouEnv.step`` / ``move`` / ``change_obj_pos`` / ``try_open_shut`` /
``reward`` / ``get_reward``), ``baba/rule.py`` (``extract_ruleset``) and ``baba/world_object.py``
(which objects push, stop, overlap, and the names of words).

The world is a ``width x height`` grid whose cells hold *stacks* of objects (an object moving onto a
cell it may overlap goes on top; only the top object of a cell takes part in rules, pushes and
wins, as in the original). An object is a small int: its type in the low 5 bits, its colour in the
next 3, the direction it faces in the next 2.

- Types: the outer ``BORDER`` wall (the original's ``Wall``: never moves, never overlapped, never
  described), five *nouns* (``BABA``, ``WALL``, ``BALL``, ``KEY``, ``DOOR``: "flexible" objects whose
  properties come from the rules) and *word blocks*: a noun's word, ``IS`` and a property's word.
- Rules: for every ``IS`` block on top of its cell (row by row), the horizontal triple
  (left, IS, right) and then the vertical one (up, IS, down), when both neighbours are inside the
  grid: NOUN IS PROPERTY gives the noun the property, NOUN IS NOUN turns every top object of the
  first noun into the second after each move (a new object stacked on the old one, as the
  original's ``grid.replace``). Word blocks are always pushable and never overlapped.
- Properties: ``you`` (moves with the actions), ``win``, ``stop`` (not overlapped), ``push``,
  ``lose`` (the original's name for DEFEAT), ``pull``, ``move``, ``open``, ``shut``. A noun without
  ``stop`` may be overlapped (walked over).
- A move (``_move``): an OPEN mover meeting a SHUT object (or the reverse) destroys both; a
  pushable object ahead is moved first (recursively, so chains of blocks move together); the
  mover then enters the cell ahead if its top is empty or can be overlapped; win and lose are
  read from the top object of the cell the mover ends in *before* it moves there (so a YOU that
  is also WIN wins by bumping into anything); then a PULL object behind is moved too.
- A step (``step``): "idle" changes nothing (no rule is re-read, nothing wins). Another action
  turns every YOU object to its direction and moves the top YOU objects in row-major order (one
  that already moved this step is not moved again), then the MOVE objects in their own direction;
  the win / lose of the step is that of the *last* YOU object moved, judged with the rules of
  the step's start; then the rules are read again and NOUN IS NOUN rules transform objects.

Differences from the original, none reachable in BALROG's 40 levels (which hold no PULL, MOVE,
OPEN, SHUT or PUSH word and no colour word): colour rules ("red ball is win") are not parsed; an
object revealed during a step under one that moved keeps no stale "has moved" flag (the original
keeps one, or fails with an AttributeError if it never had one); a move out of the grid is blocked
(the original's grid has an outer wall, and fails without one).
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable

# ---- object types -------------------------------------------------------------------------------
BORDER = 1
BABA, WALL, BALL, KEY, DOOR = 2, 3, 4, 5, 6
NOUNS = (BABA, WALL, BALL, KEY, DOOR)
NOUN_NAMES = {BABA: "baba", WALL: "wall", BALL: "ball", KEY: "key", DOOR: "door"}
NOUN_BY_NAME = {name: noun for noun, name in NOUN_NAMES.items()}
_WORD_OFFSET = 5  # the word block of noun n is n + 5 (7..11)
IS = 12
PROPERTIES = ("you", "win", "stop", "push", "lose", "pull", "move", "open", "shut")
YOU, WIN, STOP, PUSH, LOSE, PULL, MOVE, OPEN, SHUT = range(len(PROPERTIES))
_PROP_OFFSET = 13  # the word block of property p is p + 13 (13..21)
PROPERTY_BY_NAME = {name: index for index, name in enumerate(PROPERTIES)}
FIRST_WORD = BABA + _WORD_OFFSET

# ---- colours and directions ---------------------------------------------------------------------
COLOR_NAMES = ("red", "green", "blue", "purple", "yellow", "grey", "white")
COLOR_BY_NAME = {name: index for index, name in enumerate(COLOR_NAMES)}
DEFAULT_COLORS = {BORDER: "grey", BABA: "white", WALL: "grey", BALL: "green", KEY: "blue", DOOR: "red"}
TYPE_MASK, COLOR_SHIFT, DIR_SHIFT = 31, 5, 8
DIR_MASK = 3 << DIR_SHIFT
# The original's DIR_TO_VEC: 0 right, 1 down, 2 left, 3 up.
DIR_VECTORS = ((1, 0), (0, 1), (-1, 0), (0, -1))


@functools.cache
def _neighbours(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """By direction, each cell's neighbour in a ``width`` x ``height`` grid (-1 off the grid)."""
    return tuple(
        tuple(
            (y + dy) * width + x + dx if 0 <= x + dx < width and 0 <= y + dy < height else -1
            for y in range(height)
            for x in range(width)
        )
        for dx, dy in DIR_VECTORS
    )


ACTIONS = ("idle", "up", "right", "down", "left")  # BALROG's names, in baba's action order (0..4)
ACTION_DIRS = {"up": 3, "right": 0, "down": 1, "left": 2}


def noun_word(noun: int) -> int:
    """The word block that names ``noun``."""
    return noun + _WORD_OFFSET


def property_word(prop: int) -> int:
    """The word block that names property ``prop``."""
    return prop + _PROP_OFFSET


def make(kind: int, color: str | None = None, direction: int = 0) -> int:
    """An object code: ``kind`` in its default colour (word blocks: purple) unless ``color``."""
    if color is None:
        color = DEFAULT_COLORS.get(kind, "purple")
    return kind | COLOR_BY_NAME[color] << COLOR_SHIFT | direction << DIR_SHIFT


def kind_of(code: int) -> int:
    return code & TYPE_MASK


def color_of(code: int) -> str:
    return COLOR_NAMES[code >> COLOR_SHIFT & 7]


def direction_of(code: int) -> int:
    return code >> DIR_SHIFT & 3


def is_word(kind: int) -> bool:
    return kind >= FIRST_WORD


def word_name(kind: int) -> str:
    """What a word block says: ``baba``, ``is``, ``win``..."""
    if kind == IS:
        return "is"
    if kind >= _PROP_OFFSET:
        return PROPERTIES[kind - _PROP_OFFSET]
    return NOUN_NAMES[kind - _WORD_OFFSET]


class World:
    """One level's grid, its rules and the moves of a step (see the module docstring).

    ``cells[y * width + x]`` is the stack of object codes at ``(x, y)``, bottom first, and
    ``kinds[y * width + x]`` the type of its top object (0: empty), kept in step with ``cells`` so
    that finding objects is a byte search. ``rules``
    lists the active rules in the original's order as ``(noun, property)`` or ``(noun, None,
    noun2)``; ``props[p]`` is the set of nouns with property ``p``. ``track_dir`` False lets a
    solver leave facing out of the state (facing matters only to MOVE objects and the picture).
    """

    __slots__ = (
        "width",
        "height",
        "cells",
        "kinds",
        "rules",
        "props",
        "replace",
        "agent_dir",
        "track_dir",
        "_dirty",
        "_moved",
        "_touched",
    )

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.cells: list[tuple[int, ...]] = [()] * (width * height)
        self.kinds = bytearray(width * height)
        self.rules: list[tuple] = []
        self.props: tuple[frozenset[int], ...] = tuple(frozenset() for _ in PROPERTIES)
        self.replace: list[tuple[int, int]] = []
        self.agent_dir = 0
        self.track_dir = True
        self._dirty = True
        self._moved: dict[int, int] = {}
        self._touched: list[int] = []

    # ---- building and reading -------------------------------------------------------------------
    def copy(self) -> World:
        other = World.__new__(World)
        other.width, other.height = self.width, self.height
        other.cells = list(self.cells)
        other.kinds = self.kinds[:]
        other.rules, other.props, other.replace = self.rules, self.props, self.replace
        other.agent_dir, other.track_dir, other._dirty = self.agent_dir, self.track_dir, self._dirty
        other._moved = {}
        other._touched = []
        return other

    def put(self, x: int, y: int, code: int) -> None:
        """Stack ``code`` on top of cell ``(x, y)``."""
        k = y * self.width + x
        self.cells[k] = self.cells[k] + (code,)
        self.kinds[k] = code & TYPE_MASK
        self._dirty = True

    def top(self, x: int, y: int) -> int | None:
        stack = self.cells[y * self.width + x]
        return stack[-1] if stack else None

    def move_top(self, src: tuple[int, int], dst: tuple[int, int]) -> None:
        """Move the top object of ``src`` onto ``dst`` without turning it (level generation)."""
        self._change_pos(src[1] * self.width + src[0], dst[1] * self.width + dst[0], None)

    def find(self, kinds: Iterable[int]) -> list[int]:
        """The cells whose top object is of one of ``kinds``, in row-major order."""
        found = []
        tops = self.kinds
        for kind in kinds:
            k = tops.find(kind)
            while k >= 0:
                found.append(k)
                k = tops.find(kind, k + 1)
        found.sort()
        return found

    def find_in(self, table: bytes) -> list[int]:
        """The cells whose top object's type maps to 1 in ``table`` (256 bytes), in row-major order."""
        marks = self.kinds.translate(table)
        found = []
        k = marks.find(1)
        while k >= 0:
            found.append(k)
            k = marks.find(1, k + 1)
        return found

    def tops(self) -> Iterable[tuple[int, int, int]]:
        """``(x, y, code)`` of every non-empty cell's top object, row by row."""
        width = self.width
        for k, stack in enumerate(self.cells):
            if stack:
                yield k % width, k // width, stack[-1]

    def key(self, strip: bool = False) -> tuple:
        """A hashable snapshot of the grid; ``strip`` keeps only the types (colours and facing do
        not change what moves where unless a MOVE rule can form)."""
        if not strip:
            return tuple(self.cells)
        return tuple(tuple(code & TYPE_MASK for code in stack) if stack else () for stack in self.cells)

    # ---- rules ----------------------------------------------------------------------------------
    def update_rules(self) -> None:
        """Read the rules from the word blocks on top of their cells (the original's
        ``extract_ruleset``: each IS block in row-major order, horizontal before vertical)."""
        if not self._dirty:
            return
        self._dirty = False
        cells, width, height = self.cells, self.width, self.height
        rules: list[tuple] = []
        props: list[set[int]] = [set() for _ in PROPERTIES]
        replace: list[tuple[int, int]] = []
        for k in self.find((IS,)):
            x, y = k % width, k // width
            if 0 < x < width - 1:
                self._add_rule(cells[k - 1], cells[k + 1], rules, props, replace)
            if 0 < y < height - 1:
                self._add_rule(cells[k - width], cells[k + width], rules, props, replace)
        self.rules = rules
        self.props = tuple(frozenset(p) for p in props)
        self.replace = replace

    @staticmethod
    def _add_rule(before: tuple[int, ...], after: tuple[int, ...], rules: list, props: list, replace: list) -> None:
        if not before or not after:
            return
        subject, complement = before[-1] & TYPE_MASK, after[-1] & TYPE_MASK
        if not FIRST_WORD <= subject < IS:  # the subject must be a noun's word
            return
        noun = subject - _WORD_OFFSET
        if complement >= _PROP_OFFSET:
            prop = complement - _PROP_OFFSET
            rules.append((noun, prop))
            props[prop].add(noun)
        elif FIRST_WORD <= complement < IS:
            rules.append((noun, None, complement - _WORD_OFFSET))
            replace.append((noun, complement - _WORD_OFFSET))

    def has(self, code: int | None, prop: int) -> bool:
        return code is not None and code & TYPE_MASK in self.props[prop]

    def _pushable(self, code: int) -> bool:
        kind = code & TYPE_MASK
        return kind >= FIRST_WORD or kind in self.props[PUSH]

    def _overlappable(self, code: int) -> bool:
        kind = code & TYPE_MASK
        return BABA <= kind < FIRST_WORD and kind not in self.props[STOP]

    # ---- moves ----------------------------------------------------------------------------------
    def _change_pos(self, k: int, n: int, direction: int | None) -> None:
        """The original's ``change_obj_pos``: the top object of cell ``k`` goes on top of ``n``."""
        cells = self.cells
        stack = cells[k]
        if k == n or not stack:
            return
        code = stack[-1]
        if direction is not None and self.track_dir:
            code = code & ~DIR_MASK | direction << DIR_SHIFT
        moved = self._moved
        if moved.get(k) == len(stack) - 1:  # an object that already moved this step keeps its mark
            del moved[k]
            moved[n] = len(cells[n])
        cells[k] = rest = stack[:-1]
        cells[n] = cells[n] + (code,)
        kinds = self.kinds
        kinds[k] = rest[-1] & TYPE_MASK if rest else 0
        kinds[n] = code & TYPE_MASK
        self._touched += (k, n)
        if code & TYPE_MASK >= FIRST_WORD or (len(stack) > 1 and stack[-2] & TYPE_MASK >= FIRST_WORD):
            self._dirty = True

    def _neighbour(self, k: int, direction: int, sign: int = 1) -> int:
        if sign == 1:
            return _neighbours(self.width, self.height)[direction][k]
        dx, dy = DIR_VECTORS[direction]
        x, y = k % self.width + sign * dx, k // self.width + sign * dy
        if 0 <= x < self.width and 0 <= y < self.height:
            return y * self.width + x
        return -1

    def _move(self, k: int, direction: int) -> tuple[int, bool, bool]:
        """Move the top object of cell ``k`` one cell in ``direction`` if it can; returns the cell
        it ends in and whether the top object found there made it win / lose."""
        cells, props = self.cells, self.props
        f = _neighbours(self.width, self.height)[direction][k]
        if f < 0:
            return k, False, False
        ahead = cells[f]
        if props[OPEN] or props[SHUT]:
            self._open_shut(k, f)
        # as the original, whether to push is judged on the top object seen before open/shut
        if ahead and self._pushable(ahead[-1]):
            self._move(f, direction)
            ahead = cells[f]
        new = f if not ahead or self._overlappable(ahead[-1]) else k
        there = cells[new]
        win = lose = False
        if there:
            kind = there[-1] & TYPE_MASK
            win, lose = kind in props[WIN], kind in props[LOSE]
        self._change_pos(k, new, direction)
        if props[PULL]:
            b = self._neighbour(k, direction, -1)
            if b >= 0 and cells[b] and cells[b][-1] & TYPE_MASK in props[PULL]:
                self._move(b, direction)
        return new, win, lose

    def _open_shut(self, k: int, f: int) -> None:
        cells = self.cells
        here, ahead = cells[k], cells[f]
        if not here or not ahead:
            return
        a, b = here[-1], ahead[-1]
        if (self.has(a, OPEN) and self.has(b, SHUT)) or (self.has(a, SHUT) and self.has(b, OPEN)):
            cells[k], cells[f] = here[:-1], cells[f][:-1]
            for c in (k, f):
                self.kinds[c] = cells[c][-1] & TYPE_MASK if cells[c] else 0
            self._touched += (k, f)
            self._dirty = True

    def _sweep(self, kinds: frozenset[int], direction: int | None) -> tuple[bool, bool]:
        """Move, in row-major order, every cell's top object of ``kinds`` that has not moved this
        step (``direction`` None: each in the direction it faces), reading each cell when the sweep
        reaches it as the original's loop over the grid does: only the cells that hold such an
        object at the start, or that a move touched later in the order, can qualify. Returns the
        win / lose of the last object moved."""
        cells, moved = self.cells, self._moved
        pending = self.find(kinds)
        queued = set(pending)
        touched: list[int] = []
        self._touched = touched
        win = lose = False
        while pending:
            k = heapq.heappop(pending)
            stack = cells[k]
            if not stack or stack[-1] & TYPE_MASK not in kinds or moved.get(k) == len(stack) - 1:
                continue
            if direction is None:
                new, _, _ = self._move(k, stack[-1] >> DIR_SHIFT & 3)
            else:
                if self.track_dir:
                    cells[k] = stack[:-1] + (stack[-1] & ~DIR_MASK | direction << DIR_SHIFT,)
                new, win, lose = self._move(k, direction)
            if cells[new]:
                moved[new] = len(cells[new]) - 1
            tops = self.kinds
            for t in touched:
                if t > k and t not in queued and tops[t] in kinds:
                    queued.add(t)
                    heapq.heappush(pending, t)
            touched.clear()
        return win, lose

    def step(self, action: str) -> tuple[bool, bool]:
        """Play one of :data:`ACTIONS`; returns ``(win, lose)`` as the original's ``reward`` reads
        them. The caller counts the step (the original counts idle steps too)."""
        if action == "idle":
            return False, False
        direction = ACTION_DIRS[action]
        self.agent_dir = direction
        cells, props = self.cells, self.props
        self._moved = {}
        win, lose = self._sweep(props[YOU], direction) if props[YOU] else (False, False)
        if props[MOVE]:
            self._sweep(props[MOVE], None)
        self._moved = {}
        self.update_rules()
        for old, new_kind in self.replace:
            fresh = make(new_kind)
            for k in self.find((old,)):
                cells[k] = cells[k] + (fresh,)
                self.kinds[k] = new_kind
        return win, lose

    # ---- what BALROG's wrapper reads --------------------------------------------------------------
    def you_noun(self) -> int | None:
        """The noun of the *last* active ``X is you`` rule: the only one BALROG's wrapper looks for."""
        noun = None
        for rule in self.rules:
            if len(rule) == 2 and rule[1] == YOU:
                noun = rule[0]
        return noun

    def you_position(self) -> tuple[int, int] | None:
        """Where BALROG's wrapper puts "you": the first top object (row by row) of :meth:`you_noun`;
        ``None`` when there is none (the wrapper then resets the level)."""
        noun = self.you_noun()
        if noun is None:
            return None
        k = self.kinds.find(noun)
        return None if k < 0 else (k % self.width, k // self.width)
