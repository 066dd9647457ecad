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

Both leave out ways through a new level (a move that breaks "X is you" makes BALROG's wrapper draw
one, whose win is the episode's too), so "shortest" above means among the ways within the level.
3. **Decision facts** (:func:`decisions`) count those ways too: the same A* run on until every
   shortest way is found, with every state on one, its moves to go and all its optimal moves.
   A way through a new level can be the shortest (some ``two_room-make_you`` levels, where baba
   starts next to "baba is you"): where :func:`new_level_bound` says one could be, the env's
   ``optimal_steps`` asks :func:`fewest_moves`, and its oracle then follows the facts.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import re
from collections.abc import Callable
from itertools import count
from typing import Any

import numpy as np

from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai import levels
from rl4vlm_gym.envs.balrog.babaisai.game import MAX_STEPS
from rl4vlm_gym.envs.balrog.shortest_paths import moves_on_shortest_paths

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


def _has_you(world: E.World) -> bool:
    """``world.you_position() is not None``, without making the position."""
    noun = world.you_noun()
    return noun is not None and noun in world.kinds


@functools.cache
def _coordinates(width: int, size: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The x and the y of each cell index of a ``width``-wide grid of ``size`` cells."""
    return tuple(k % width for k in range(size)), tuple(k // width for k in range(size))


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
        if world.replace:
            yous = world.find(_closure(world, props[E.YOU]))
            win = _closure(world, props[E.WIN])
        else:  # no NOUN IS NOUN rule: the closures are the kinds themselves
            yous = world.find(props[E.YOU])
            win = props[E.WIN]
        if not yous:
            return 0
        # WIN objects on top, or under a YOU object (0 moves more); word blocks (and PUSH objects)
        # on top (1 more: a covered object only matters once what covers it moves, which costs a
        # move first, and the push itself cannot win). The least over YOU objects and targets of the
        # distance plus that, at least 1 (so any distance up to 1 answers at once).
        if win:
            cells = world.cells
            for y in yous:
                for code in cells[y][:-1]:
                    if code & E.TYPE_MASK in win:
                        return 1
        xs, ys = _coordinates(world.width, len(world.kinds))
        marks = world.kinds.translate(self._target_table(win, props[E.PUSH]))
        best = _FAR
        for mark, extra in ((1, 0), (2, 1)):
            k = marks.find(mark)
            while k >= 0:
                kx, ky = xs[k], ys[k]
                for y in yous:
                    d = abs(xs[y] - kx) + abs(ys[y] - ky) + extra
                    if d < best:
                        if d <= 1:
                            return 1
                        best = d
                k = marks.find(mark, k + 1)
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
        # by state key: (the least g found, the parent's key and the move from it); one dict for both
        reached: dict[tuple, tuple[int, tuple | None, str]] = {key0: (0, None, "")}
        tie = count()
        heap = [(estimate(start), 0, next(tie), start, key0)]
        expanded = 0
        pop, push, seen = heapq.heappop, heapq.heappush, reached.get
        far = (_FAR, None, "")
        while heap:
            _, g, _, world, key = pop(heap)
            if g > reached[key][0]:
                continue
            expanded += 1
            if expanded > budget:
                break
            if g >= steps_left:
                continue
            g1 = g + 1
            for move in MOVES:
                nxt = world.copy()
                win, lose = nxt.step(move)
                if lose or not _has_you(nxt):
                    continue
                if win or (goal is not None and goal(nxt)):
                    plan = [move]
                    _, back, move = reached[key]
                    while back is not None:
                        plan.append(move)
                        _, back, move = reached[back]
                    self.expanded += expanded
                    return plan[::-1], nxt
                nkey = nxt.key()
                if g1 >= seen(nkey, far)[0]:
                    continue
                reached[nkey] = (g1, key, move)
                push(heap, (g1 + estimate(nxt), g1, next(tie), nxt, nkey))
        self.expanded += expanded
        return None

    def plan(self, budget: int = SHORTEST_BUDGET, part_budget: int = PART_BUDGET) -> list[str] | None:
        """A plan that wins within ``max_steps`` moves (shortest when :attr:`shortest`), or ``None``:
        the shortest search with ``budget`` expansions (0: skip it), then the target plan."""
        if budget:
            found = self.shortest_plan(budget)
            if found is not None:
                self.shortest = True
                return found
        self.shortest = False
        parts = re.findall(r"(break|make|goto)\[([^\]]*)\]", self.target_plan)
        best = self._follow(parts, part_budget)
        if any(part == "break" for part, _ in parts):
            # moving a word of the rule to break may make the next rule too (make_wall_win's "wall")
            other = self._follow([p for p in parts if p[0] != "break"], min(part_budget, BREAKLESS_BUDGET))
            if other is not None and (best is None or len(other) < len(best)):
                best = other
        return best

    def shortest_plan(self, budget: int = SHORTEST_BUDGET) -> list[str] | None:
        """A shortest winning plan found within ``budget`` expansions (module docstring, 1.), or None."""
        found = self._search(self.start, None, self.estimate, budget, self.max_steps)
        return None if found is None else found[0]

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
    (see :meth:`Solver.plan`); kept by the process (:func:`_searched`)."""

    def search() -> tuple[tuple[str, ...] | None, bool]:
        solver = Solver(world, max_steps, target_plan)
        moves = solver.plan(budget, part_budget)
        return (None if moves is None else tuple(moves)), solver.shortest

    moves, shortest = _searched(("plan", max_steps, target_plan, budget, part_budget), world, None, search)
    return (None if moves is None else list(moves)), shortest


def shortest_plan(world: E.World, max_steps: int, budget: int = SHORTEST_BUDGET) -> list[str] | None:
    """:meth:`Solver.shortest_plan` from ``world``, kept by the process (:func:`_searched`)."""
    found = _searched(("shortest", max_steps, budget), world, None, lambda: Solver(world, max_steps).shortest_plan(budget))
    return None if found is None else list(found)


# ---- decision facts: every shortest plan from a state --------------------------------------------
DECISION_BUDGET = 16000
"""Expansions a decision search may use from one state before it gives up; each new level it needs
is searched with as many of its own (proving the shortest length expands every state whose bound
is below it, and those at it: three to four times what finding one shortest plan takes)."""
ToGo = dict[tuple, tuple[int, tuple[str, ...]]]
"""Decision facts by state key (:func:`decision_key`): ``(moves to go, the moves after which they
drop by one)``, the moves in :data:`~rl4vlm_gym.envs.balrog.babaisai.engine.ACTIONS` order."""


class GaveUp(Exception):
    """A decision search ran out of its budget before it could prove a shortest length."""


def decision_key(world: E.World, keeps_dir: bool | None = None) -> tuple:
    """The key a decision search files a state under: the grid's types (facing and colour kept
    only when a MOVE word is on the map, as :class:`Solver` does; ``keeps_dir``: whether one is,
    if known). The search keys the states it reaches by their codes, the same but for objects that
    a NOUN IS NOUN rule makes (which have a colour): facts filed under such a key are never looked
    up, and the state is searched anew."""
    if keeps_dir is None:
        keeps_dir = keeps_direction(world)
    return world.key() if keeps_dir else stripped_key(world)


def stripped_key(world: E.World) -> tuple:
    """``world.key(strip=True)``, 20 times faster: each distinct stack is stripped once."""
    return tuple(map(_STRIPPED.__getitem__, world.cells))


class _Stripped(dict[tuple[int, ...], tuple[int, ...]]):
    """Stacks of codes to the same stacks of types (colour and facing dropped), filled as met."""

    def __missing__(self, stack: tuple[int, ...]) -> tuple[int, ...]:
        value = self[stack] = tuple(code & E.TYPE_MASK for code in stack)
        return value


_STRIPPED = _Stripped()


def keeps_direction(world: E.World) -> bool:
    """Whether a MOVE word is on the map (words are never made or unmade: true for the whole level)."""
    return E.property_word(E.MOVE) in {code & E.TYPE_MASK for stack in world.cells for code in stack}


class NextLevels:
    """The levels BALROG's wrapper would draw after this one, each when "X is you" finds nothing
    (from the same generator, whose state changes only when it draws: the same level whichever
    move breaks the rule), drawn and searched only when a decision search needs them.

    A handle: what is drawn and searched of a level is kept by the level's identity (the task and
    the generator's state), shared by every env of the process, for the last
    :data:`NEXT_LEVELS_KEPT` levels. Each level is searched by one A* of its own (:class:`_Search`,
    with its own :data:`DECISION_BUDGET`), paused at the bound asked and resumed when a larger one
    is asked: what it answers depends on the level and the bound alone, never on what was asked
    before (a search that shared its budget with the one asking gave up where that one had spent
    more, and searched the level again at each larger bound)."""

    def __init__(self, task: levels.Task, rs_state: Any) -> None:
        self.task, self.rs_state = task, rs_state
        name, keys, pos, has_gauss, gauss = rs_state
        digest = hashlib.blake2b(np.asarray(keys).tobytes(), digest_size=16)
        digest.update(repr((name, int(pos), int(has_gauss), float(gauss))).encode())
        self.ident = (task.task, digest.hexdigest())
        self._low: int | None = None

    def _drawn(self) -> _Level:
        return _kept(_LEVELS, self.ident, lambda: _Level(self), NEXT_LEVELS_KEPT)

    def level(self) -> tuple[E.World, NextLevels]:
        """The next level's start and the levels after it."""
        drawn = self._drawn()
        return drawn.world, drawn.after

    def lower_bound(self) -> int:
        """At least this many moves win the next level from its start (:func:`_decision_estimate`)."""
        if self._low is None:
            self._low = self._drawn().low
        return self._low

    def to_go_within(self, bound: int) -> float:
        """The fewest moves that win the next level from its start if at most ``bound``, else
        ``inf``; raises :class:`GaveUp` (where the level's search gave up at or below ``bound``)."""
        return self._drawn().to_go_within(bound)


class _Level:
    """A next level as drawn, its lower bound and its search (see :class:`NextLevels`)."""

    def __init__(self, handle: NextLevels) -> None:
        rs = np.random.RandomState()
        rs.set_state(handle.rs_state)
        self.world = levels.generate(handle.task, rs).world
        self.after = NextLevels(handle.task, rs.get_state())
        self.low = max(1, _decision_estimate(Solver(self.world, MAX_STEPS))(self.world))
        self._search: _Search | None = None

    def to_go_within(self, bound: int) -> float:
        if self._search is None:
            self._search = _Search(self.world, self.after, every=False)
        try:
            return self._search.run(bound)
        except GaveUp:
            raise
        except BaseException:  # interrupted half-way (a timeout): searched again when next asked
            self._search = None
            raise


NEXT_LEVELS_KEPT = 8
"""Next levels (drawn, with their searches, paused or done) a process keeps, the last used."""
RESULTS_KEPT = 512
"""Results of searches (:func:`decisions`, :func:`fewest_moves`, :func:`plan`, :func:`shortest_plan`)
a process keeps, the last used."""
_LEVELS: dict[tuple[str, str], _Level] = {}
_RESULTS: dict[tuple, Any] = {}  # (kind, next levels' identity, width, decision key) -> result, or the GaveUp
_MISSING = object()


def _kept(store: dict[Any, Any], key: Any, make: Callable[[], Any], size: int) -> Any:
    """``store[key]``, made first if missing; the store keeps the last ``size`` used."""
    value = store.pop(key, _MISSING)
    if value is _MISSING:
        value = make()
    store[key] = value
    while len(store) > size:
        del store[next(iter(store))]
    return value


def _decision_estimate(solver: Solver) -> Callable[[E.World], int]:
    """:meth:`Solver.estimate`, at most 2 while a YOU object stands on a word block (a level may
    start so): moving off it uncovers the word, which may change the rules in one move (and a new
    level follow), where the estimate counts pushes of words on top. A guard: a rule the uncovered
    word makes has a word on top next to it, so the estimate is at most 2 there already."""

    def estimate(world: E.World) -> int:
        h = solver.estimate(world)
        if h > 2:
            cells = world.cells
            for k in world.find(_closure(world, world.props[E.YOU])):
                if any(code & E.TYPE_MASK >= E.FIRST_WORD for code in cells[k][:-1]):
                    return 2
        return h

    return estimate


def new_level_bound(world: E.World, after: NextLevels) -> int:
    """At least this many moves win through a new level from ``world``: a rule must change first
    (the push of a word on top, as many moves as a YOU object is far from it, or one move off a
    word a YOU object covers), then at least the next level's :meth:`NextLevels.lower_bound`."""
    cells, width = world.cells, world.width
    yous = world.find(_closure(world, world.props[E.YOU]))
    words = [k for k, kind in enumerate(world.kinds) if kind >= E.FIRST_WORD]
    change = min((_distance(y, w, width) for y in yous for w in words), default=_FAR)
    if any(code & E.TYPE_MASK >= E.FIRST_WORD for y in yous for code in cells[y][:-1]):
        change = 1
    return max(1, change) + after.lower_bound()


def _searched(kind: Any, world: E.World, after: NextLevels | None, search: Callable[[], Any]) -> Any:
    """``search()``'s result, a pure function of ``kind`` (the search and its arguments), the state
    as a :class:`Solver` starts from it (:func:`decision_key`) and the levels after it: the process
    keeps the last :data:`RESULTS_KEPT` (a :class:`GaveUp` too, raised again), for every env."""

    def attempt() -> Any:
        try:
            return search()
        except GaveUp as error:
            return error

    key = (kind, None if after is None else after.ident, world.width, decision_key(world))
    result = _kept(_RESULTS, key, attempt, RESULTS_KEPT)
    if isinstance(result, GaveUp):
        raise GaveUp(*result.args)
    return result


def fewest_moves(world: E.World, after: NextLevels) -> int | None:
    """The fewest moves that win from ``world``, through new levels or not (None: no win within
    :data:`~rl4vlm_gym.envs.balrog.babaisai.game.MAX_STEPS`): :func:`decisions`' search, stopped
    at the first shortest way (a prefix of its work); raises :class:`GaveUp`."""
    found = _searched("fewest", world, after, lambda: _Search(world, after, every=False).run(MAX_STEPS))
    return None if found == float("inf") else int(found)


def decisions(world: E.World, after: NextLevels | None) -> ToGo:
    """The decision facts of ``world`` and of every state on a shortest way to a win from it
    (``{}``: no win within :data:`~rl4vlm_gym.envs.balrog.babaisai.game.MAX_STEPS` moves); raises
    :class:`GaveUp` when the search runs out of :data:`DECISION_BUDGET` expansions, or the search
    of a new level it needs does. A pure function of the state and the levels after it: the
    process keeps the last results (:func:`_searched`).

    A way to a win may go through a new level: a move that leaves no object of the last "X is
    you" rule's noun makes BALROG's wrapper draw the next level (``after``; ``None``: such moves
    are pruned), and the way then costs that move plus the next level's moves to go. Those are
    asked for only once their lower bound could beat every way left, and then only up to that bound
    (:meth:`NextLevels.to_go_within`; if they are more, the bound grows by one and waits its turn),
    so each level further in is searched to a smaller bound.

    A* with :meth:`Solver.estimate` (admissible for both ends: a win needs ``d_win`` moves, a new
    level a push of a word block, ``d_push`` moves, then at least one more; capped at 2 while a YOU
    object covers a word, :func:`_decision_estimate`), run on past the first
    win until every state of ``g + h`` at most the shortest length ``C`` is expanded, keeping each
    state's parents at its least ``g``. Every state ``n`` on a shortest way is then expanded at
    its true ``g``, its moves to go are ``C - g``, and a move from ``n`` leaves one move less to go
    exactly when it leads to a state on a shortest way with ``g`` one more: an edge kept in that
    state's parents. Walking those edges back from the winning moves gives every such state and
    move. "idle" changes nothing, so it is never one of them; a move that loses, or that wins as
    it breaks "X is you" (BALROG's wrapper then resets the progression), is pruned."""
    return dict(_searched("decisions", world, after, lambda: _Search(world, after, every=True).facts()))


_GAVE_UP = f"the search spent its {DECISION_BUDGET} expansions before proving the shortest way"
_NEXT_GAVE_UP = f"the search of a level BALROG's wrapper would draw next spent its {DECISION_BUDGET} expansions"


class _Search:
    """:func:`decisions`' A* from ``world`` over ways of at most ``MAX_STEPS`` moves (``every``
    False: stopped at the first shortest way), with :data:`DECISION_BUDGET` expansions of its own.
    :meth:`run` pops what is at most a bound and pauses there, so a level's search asked for a
    larger bound goes on where it stopped; the order it pops in, and so where it gives up, is the
    same however it was paused (a way through a new level waits at the bound it was last asked at
    plus one, whatever that level's search has found since)."""

    def __init__(self, world: E.World, after: NextLevels | None, every: bool) -> None:
        solver = Solver(world, MAX_STEPS)
        start, self.estimate = solver.start, _decision_estimate(solver)
        self.after, self.every = after, every
        key0 = start.key()  # the solver's start is stripped unless a MOVE word is on the map: decision_key's key
        self.best: dict[tuple, int] = {key0: 0}
        self.parents: dict[tuple, list[tuple[tuple, str]]] = {key0: []}
        self.tie = count()
        # (f, 0 for an end and 1 for a state, tie, g, world, key, the move to the end or "", moves after it: -1 not known yet)
        self.heap: list[tuple[float, int, int, int, E.World, tuple, str, float]] = [
            (self.estimate(start), 1, 0, 0, start, key0, "", 0)
        ]
        self.cost = float("inf")
        self.ends: list[tuple[tuple, str]] = []
        self.left = DECISION_BUDGET
        self.gave_up: tuple[float, str] | None = None  # the f it gave up at, and why

    def _give_up(self, f: float, why: str) -> GaveUp:
        self.gave_up = (f, why)
        self._drop()
        return GaveUp(why)

    def _drop(self) -> None:
        """Let go of the search's states (a level's search stays kept, done, for its answer)."""
        self.heap, self.best, self.parents = [], {}, {}

    def run(self, bound: int) -> float:
        """The shortest length if at most ``bound`` (``inf``: none is), popping what is at most
        ``bound`` (and, with ``every``, at most the shortest length); raises :class:`GaveUp` where
        the search gave up at or below ``bound``."""
        if self.gave_up is not None:
            if self.gave_up[0] <= bound:
                raise GaveUp(self.gave_up[1])
            return float("inf")  # every way left is longer than where it gave up
        heap, best, parents, after, inf = self.heap, self.best, self.parents, self.after, float("inf")
        while heap and heap[0][0] <= bound and heap[0][0] <= self.cost:
            f, _, _, g, state, key, move, more = heapq.heappop(heap)
            if move:
                if more < 0:  # a new level: is its bound (f - g - 1) its length, now that it could be the best?
                    try:
                        more = after.to_go_within(int(f) - g - 1)  # type: ignore[union-attr]
                    except GaveUp:
                        raise self._give_up(f, _NEXT_GAVE_UP) from None
                    if more < inf:
                        self._push((g + 1 + more, 0, next(self.tie), g, state, key, move, more))
                    else:  # longer: back when the bound is one more, or its own bound if larger
                        self._push((max(g + 1 + after.lower_bound(), f + 1), 0, next(self.tie), g, state, key, move, -1))  # type: ignore[union-attr]
                    continue
                self.cost = g + 1 + more
                self.ends.append((key, move))
                if not self.every:
                    self._drop()  # found: nothing more to search
                    break
                continue
            if g > best[key]:
                continue
            self.left -= 1
            if self.left < 0:
                raise self._give_up(f, _GAVE_UP)
            if g >= MAX_STEPS:
                continue
            for move in MOVES:
                nxt = state.copy()
                win, lose = nxt.step(move)
                if lose:
                    continue
                if not _has_you(nxt):
                    if not win and after is not None:
                        self._push((g + 1 + after.lower_bound(), 0, next(self.tie), g, state, key, move, -1))
                    continue
                if win:
                    self._push((g + 1, 0, next(self.tie), g, state, key, move, 0))
                    continue
                nkey = nxt.key()  # descends from the stripped start (objects a NOUN IS NOUN rule makes keep their colour)
                known = best.get(nkey)
                if known is None or g + 1 < known:
                    h = self.estimate(nxt)
                    if g + 1 + h > MAX_STEPS:
                        continue
                    best[nkey] = g + 1
                    if self.every:
                        parents[nkey] = [(key, move)]
                    heapq.heappush(heap, (g + 1 + h, 1, next(self.tie), g + 1, nxt, nkey, "", 0))
                elif g + 1 == known and self.every:
                    parents[nkey].append((key, move))
        return self.cost if self.cost <= bound else inf

    def _push(self, entry: tuple[float, int, int, int, E.World, tuple, str, float]) -> None:
        if entry[0] <= MAX_STEPS:  # ways of at most MAX_STEPS moves
            heapq.heappush(self.heap, entry)

    def facts(self) -> ToGo:
        """The facts of every state on a shortest way (``every``; see :func:`decisions`)."""
        self.run(MAX_STEPS)
        if not self.ends:
            return {}
        found = moves_on_shortest_paths(self.ends, self.parents)
        total = int(self.cost)
        return {key: (total - self.best[key], tuple(m for m in E.ACTIONS if m in moves)) for key, moves in found.items()}
