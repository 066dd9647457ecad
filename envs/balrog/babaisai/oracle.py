"""Plans for BabaIsAI: A* over exact states of the rules engine, shortest where it can prove it.

A state is the grid (every cell's stack of object types; colour and facing are left out, since
they change nothing that moves or wins unless a MOVE rule can form, and then facing is kept).
A successor is one of the four moves played by :meth:`World.step` itself, so a plan is exact for
the env. "idle" is never part of a shortest plan: it changes nothing (it is not even a step of
the rules). A move is pruned when it loses, or when BALROG's wrapper would replace the level (no
object of the last "X is you" rule's noun left: a new level, not a win). A plan wins when its
last move wins without that.

1. **Shortest.** A* with an admissible estimate of the moves left: a win is a YOU object entering
   a cell whose top is WIN, and only pushing a word block changes a rule; so at least
   ``min(d_win, d_push + 1)`` moves remain, where ``d_win`` is the Manhattan distance from a YOU
   object to a WIN object (1 for an object that is both), ``d_push`` the distance from a YOU
   object to the nearest word block (the push itself cannot win under the rule it makes: wins are
   judged with the rules of the step's start). Types that current NOUN IS NOUN rules turn into YOU
   or WIN objects count as such. With PULL or MOVE words on the map (never in BALROG's levels) the
   estimate is 0 (plain breadth-first search). The plan it finds within ``budget`` expansions is a
   shortest one.
2. **Short.** Where that search runs out of its budget (levels that need a rule made far from
   where you start: the two-room make-win levels, most often), the level's own ``target_plan``
   (the original's, e.g. ``break[wall is stop], make[key is win], goto[key]``) is followed one
   part at a time: a breadth-first search until the rule is broken, a guided search until the rule
   holds (guided by the distance of a noun's word to the cell that completes an ``IS <property>``
   pair), then the shortest search above until the win; a win on the way ends it. The same
   without the ``break`` parts is tried too (moving the word of a rule to break may make the next
   rule at once, as "wall" in ``make_wall_win``), and the shorter plan kept. That plan is short,
   not provably shortest.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from itertools import count

from rl4vlm_gym.envs.balrog.babaisai import engine as E

MOVES = ("up", "right", "down", "left")
SHORTEST_BUDGET = 4000
"""Expansions the shortest search may use before the level's target plan is followed."""
PART_BUDGET = 30000
"""Expansions each part of the target plan may use."""
BREAKLESS_BUDGET = 3000
"""Expansions each part may use when the target plan is tried without its ``break`` parts."""
_FAR = 10**6


def _closure(world: E.World, kinds: frozenset[int]) -> frozenset[int]:
    """``kinds`` and every noun that current NOUN IS NOUN rules turn into one of them."""
    if not world.replace:
        return kinds
    out = set(kinds)
    changed = True
    while changed:
        changed = False
        for old, new in world.replace:
            if new in out and old not in out:
                out.add(old)
                changed = True
    return frozenset(out)


def _distance(a: int, b: int, width: int) -> int:
    return abs(a % width - b % width) + abs(a // width - b // width)


class Solver:
    """Plans from a world's current state (see the module docstring)."""

    def __init__(self, world: E.World, max_steps: int, target_plan: str = "") -> None:
        self.max_steps = max_steps
        self.target_plan = target_plan
        kinds = {code & E.TYPE_MASK for stack in world.cells for code in stack}
        keep_dir = E.property_word(E.MOVE) in kinds
        self.blind = keep_dir or E.property_word(E.PULL) in kinds
        start = world.copy()
        if not keep_dir:
            start.cells = [tuple(c & E.TYPE_MASK for c in stack) if stack else () for stack in start.cells]
            start.track_dir = False
        self.start = start
        self._tables: dict[tuple[frozenset[int], frozenset[int]], bytes] = {}
        self.expanded = 0
        self.shortest = False  # whether the last plan is proven shortest

    # ---- estimates --------------------------------------------------------------------------------
    def _target_table(self, win: frozenset[int], push: frozenset[int]) -> bytes:
        """A byte table of what a YOU object heads for, by the type on top of a cell: 1 for ``win``
        nouns (reached, a win), 2 for word blocks and ``push`` nouns (pushed, a move first)."""
        table = self._tables.get((win, push))
        if table is None:
            marks = (1 if k in win else 2 if k >= E.FIRST_WORD or k in push else 0 for k in range(256))
            table = self._tables[win, push] = bytes(marks)
        return table

    def estimate(self, world: E.World) -> int:
        """The admissible estimate of the moves left to a win (module docstring, 1.)."""
        if self.blind:
            return 0
        props = world.props
        yous = world.find(_closure(world, props[E.YOU]))
        if not yous:
            return 0
        win = _closure(world, props[E.WIN])
        # WIN objects on top, or under a YOU object (0 moves more); word blocks (and PUSH objects)
        # on top (1 more: a covered object only matters once what covers it moves, which costs a
        # move first, and the push itself cannot win). The least over YOU objects and targets of the
        # distance plus that, at least 1.
        width = world.width
        marks = world.kinds.translate(self._target_table(win, props[E.PUSH]))
        spots = []
        for mark, extra in ((1, 0), (2, 1)):
            k = marks.find(mark)
            while k >= 0:
                spots.append((k % width, k // width, extra))
                k = marks.find(mark, k + 1)
        if win:
            cells = world.cells
            spots += [(y % width, y // width, 0) for y in yous if any(code & E.TYPE_MASK in win for code in cells[y][:-1])]
        best = _FAR
        for y in yous:
            yx, yy = y % width, y // width
            for wx, wy, extra in spots:
                d = abs(yx - wx) + abs(yy - wy) + extra
                if d < best:
                    if d <= 1:
                        return 1  # the least it can be (0 counts as 1)
                    best = d
        return best

    @staticmethod
    def _make_estimate(noun: int, prop: int) -> Callable[[E.World], int]:
        """A guide (not a bound) toward the rule NOUN IS PROP: how far the noun's word is from a cell
        that completes an ``IS PROP`` pair, plus how far a YOU object is from that word."""
        word, prop_word = E.noun_word(noun), E.property_word(prop)

        def guide(world: E.World) -> int:
            width, kinds = world.width, world.kinds
            slots = []
            for p in world.find((prop_word,)):
                x, y = p % width, p // width
                if x >= 2 and kinds[p - 1] == E.IS:
                    slots.append(p - 2)
                if y >= 2 and kinds[p - width] == E.IS:
                    slots.append(p - 2 * width)
            words = world.find((word,))
            yous = world.find(world.props[E.YOU])
            if not words or not yous:
                return _FAR
            if not slots:  # no IS PROP pair: head for the property's word
                slots = world.find((prop_word,))
            best = _FAR
            for n in words:
                reach = min(_distance(y, n, width) for y in yous)
                for s in slots:
                    best = min(best, 2 * _distance(n, s, width) + max(0, reach - 1))
            return best

        return guide

    # ---- search -----------------------------------------------------------------------------------
    def _search(
        self,
        start: E.World,
        goal: Callable[[E.World], bool] | None,
        estimate: Callable[[E.World], int],
        budget: int,
        steps_left: int,
    ) -> tuple[list[str], E.World] | None:
        """A* from ``start`` until a win (or ``goal``); returns the moves and the state reached."""
        key0 = start.key()
        parents: dict[tuple, tuple[tuple, str] | None] = {key0: None}
        best_g = {key0: 0}
        tie = count()
        heap = [(estimate(start), 0, next(tie), start, key0)]
        expanded = 0
        while heap:
            _, g, _, world, key = heapq.heappop(heap)
            if g > best_g.get(key, _FAR):
                continue
            expanded += 1
            if expanded > budget:
                break
            if g >= steps_left:
                continue
            for move in MOVES:
                nxt = world.copy()
                win, lose = nxt.step(move)
                if lose or nxt.you_position() is None:
                    continue
                if win or (goal is not None and goal(nxt)):
                    plan = [move]
                    back = parents[key]
                    while back is not None:
                        key, move = back
                        plan.append(move)
                        back = parents[key]
                    self.expanded += expanded
                    return plan[::-1], nxt
                nkey = nxt.key()
                if g + 1 >= best_g.get(nkey, _FAR):
                    continue
                best_g[nkey] = g + 1
                parents[nkey] = (key, move)
                heapq.heappush(heap, (g + 1 + estimate(nxt), g + 1, next(tie), nxt, nkey))
        self.expanded += expanded
        return None

    def plan(self, budget: int = SHORTEST_BUDGET, part_budget: int = PART_BUDGET) -> list[str] | None:
        """A plan that wins within ``max_steps`` moves (shortest when :attr:`shortest`), or ``None``:
        the shortest search with ``budget`` expansions (0: skip it), then the target plan."""
        if budget:
            found = self._search(self.start, None, self.estimate, budget, self.max_steps)
            if found is not None:
                self.shortest = True
                return found[0]
        self.shortest = False
        parts = re.findall(r"(break|make|goto)\[([^\]]*)\]", self.target_plan)
        best = self._follow(parts, part_budget)
        if any(part == "break" for part, _ in parts):
            # moving a word of the rule to break may make the next rule too (make_wall_win's "wall")
            other = self._follow([p for p in parts if p[0] != "break"], min(part_budget, BREAKLESS_BUDGET))
            if other is not None and (best is None or len(other) < len(best)):
                best = other
        return best

    def _follow(self, parts: list[tuple[str, str]], budget: int) -> list[str] | None:
        """Moves reaching each part of a target plan in turn (a win on the way ends them)."""
        world = self.start
        moves: list[str] = []
        for part, rule in parts:
            goal: Callable[[E.World], bool] | None = None
            estimate: Callable[[E.World], int] = self.estimate
            if part in ("break", "make"):
                noun_name, _, prop_name = rule.split(" ")
                wanted = (E.NOUN_BY_NAME[noun_name], E.PROPERTY_BY_NAME[prop_name])
                if part == "break":
                    if wanted not in world.rules:
                        continue
                    goal, estimate = (lambda w, r=wanted: r not in w.rules), (lambda w: 0)
                else:
                    if wanted in world.rules:
                        continue
                    goal, estimate = (lambda w, r=wanted: r in w.rules), self._make_estimate(*wanted)
            found = self._search(world, goal, estimate, budget, self.max_steps - len(moves))
            if found is None:
                return None
            moves += found[0]
            world = found[1]
            if part == "goto" or self._won(moves):
                return moves
        return moves if self._won(moves) else None

    def _won(self, moves: list[str]) -> bool:
        world = self.start.copy()
        win = False
        for move in moves:
            win, _ = world.step(move)
        return win


def plan(
    world: E.World, max_steps: int, target_plan: str = "", budget: int = SHORTEST_BUDGET, part_budget: int = PART_BUDGET
) -> tuple[list[str] | None, bool]:
    """A winning plan from ``world`` within ``max_steps`` moves and whether it is proven shortest
    (see :meth:`Solver.plan`)."""
    solver = Solver(world, max_steps, target_plan)
    moves = solver.plan(budget, part_budget)
    return moves, solver.shortest
