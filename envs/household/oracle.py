"""The household oracle: a shortest command sequence that accomplishes the task from any state.

In ALFWorld every command costs one step and ``go to`` reaches any receptacle, so a plan is
fixed by a few choices: which object(s) of the target kind to fetch, in which order, which
appliance treats them, which receptacle of the goal's kind (or which lamp) ends the task, and,
when the hands hold something else, where to put it down first. :func:`plan` tries every
combination, replays each on a light copy of the state (place, open containers, hands) that
adds the ``go to`` and ``open`` steps it needs, and keeps the shortest. With no choice left
unexplored the result is optimal, which ``tests/envs/household`` checks against breadth-first
search over the full rules. The search is small (a handful of candidates), so a plan costs
well under a millisecond.

:func:`optimal_commands` gives the decision facts' optimal actions: the commands after which the
shortest plan is one command shorter, found by planning once after each command that changes the
state (one-step lookahead, exact because :func:`plan` is). :func:`features` names the state's
task, phase and objects left, for breaking an agent's errors down. The procedural households'
decisions go through a :class:`Lookahead`, which enumerates each state's routes once (memoized by
``House.stage``) and reads them off the parent state's where a command changes little (``open``),
so that most decisions along an episode enumerate nothing.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from rl4vlm_gym.envs.household.world import READ_ONLY

if TYPE_CHECKING:
    from rl4vlm_gym.envs.household.goals import HouseState
    from rl4vlm_gym.envs.household.world import House

__all__ = ["NEVER_CLOSER", "Lookahead", "features", "optimal_commands", "plan"]


class _Route:
    """A plan being built: the commands so far and the state parts they change."""

    __slots__ = ("commands", "first", "held", "house", "moved", "opened", "opens", "place")

    def __init__(self, house: HouseState, place: str | None) -> None:
        self.house = house
        self.place = place
        self.first = ""  # the place of the first move, when it is a "go to" (from nowhere every route's is)
        self.held = house.holding
        self.opened = house.opened  # the state's own set until the route opens something
        self.opens: list[str] = []  # the receptacles the route opens
        self.moved: dict[str, str] = {}  # objects this route has put down, and where
        self.commands: list[str] = []

    def go(self, receptacle: str) -> None:
        spot = self.house.spot(receptacle)
        if self.place != spot:
            if not self.commands:
                self.first = spot
            self.commands.append(f"go to {receptacle}")
            self.place = spot

    def reach(self, receptacle: str) -> None:
        """Go to ``receptacle`` and open it if it is a closed container."""
        self.go(receptacle)
        if self.house.receptacles[receptacle].spec.openable and receptacle not in self.opened:
            self.commands.append(f"open {receptacle}")
            self.opened = self.opened | {receptacle}
            self.opens.append(receptacle)

    def take(self, obj: str) -> None:
        if self.held != obj:
            home = self.moved.get(obj) or self.house.where[obj]
            self.reach(home)
            self.commands.append(f"take {obj} from {home}")
            self.held = obj

    def put(self, obj: str, receptacle: str) -> None:
        self.reach(receptacle)
        self.commands.append(self.house.put_command(obj, receptacle))
        self.moved[obj] = receptacle
        self.held = None

    def treat(self, verb: str, obj: str, appliance: str) -> None:
        self.go(appliance)  # ALFWorld heats, cools and cleans without opening the appliance
        self.commands.append(f"{verb} {obj} with {appliance}")


def plan(house: HouseState) -> list[str] | None:
    """The shortest admissible command sequence that wins the game; ``[]`` if it is won, ``None``
    if it cannot be won."""
    if house.goal.satisfied(house):
        return []
    best: list[str] | None = None
    for route in _routes(house, house.place):
        if best is None or len(route.commands) < len(best):
            best = route.commands
    return best


def _routes(house: HouseState, place: str | None) -> Iterator[_Route]:
    """Every candidate plan of the state, the agent standing at ``place``."""
    return _look_routes(house, place) if house.goal.task == "look_at_obj_in_light" else _place_routes(house, place)


def optimal_commands(
    house: HouseState,
    steps: int,
    operations: Mapping[str, tuple[str, ...]] | None = None,
    *,
    lookahead: Lookahead | None = None,
    first: str | None = None,
) -> tuple[str, ...]:
    """The admissible commands, in their order, after which the shortest plan has ``steps - 1``
    commands, ``steps`` being the shortest plan's length now (``len(plan(house))``).

    A command that only describes (``look``, ``examine``...) leaves the state, and so the distance,
    as it is. The others are tried one by one (a copy of the state, the command, :func:`plan`),
    except ``go to``, the most numerous: ``go to R`` changes only the agent's place, and a plan's
    place matters only to its first command, which is always a ``go to`` when the agent stands
    nowhere. So one enumeration from nowhere gives every ``go to R``'s distance: the shortest
    route whose first move is ``go to R``, less that move, or any shortest route.

    Nor does taking an object of a kind the goal does not name (nothing in ALFWorld's rules needs
    an object moved out of the way): a plan that takes one must put it down again before it ends,
    and without that take and put, and any treatment of it between, it still holds, two steps
    shorter; so the distance after such a take is at least one more than now.

    ``operations`` maps the admissible commands to ``(operation, *arguments)`` as
    :meth:`House.admissible` does (its default); a state with other commands (ALFWorld's,
    ``alfworld_oracle.py``) gives its own.

    ``first``, the first command of a shortest plan from this state (the oracle's, while the agent
    follows it), is optimal without a search. ``lookahead``, for a
    :class:`~rl4vlm_gym.envs.household.world.House`, memoizes the enumerations from nowhere of this
    house's states and its copies' (:class:`Lookahead`) and uses two facts of the House's rules: ``close``
    and ``slice`` are never optimal (see :data:`NEVER_CLOSER`).
    """
    if steps <= 0:
        return ()
    shortest, first_go = _distances_after_go(house) if lookahead is None else lookahead.from_nowhere(house)  # type: ignore[arg-type]  # a lookahead is given a House
    optimal = []
    if operations is None:
        operations = house.admissible()  # type: ignore[attr-defined]  # a House's; a Board's are given
    useful = {house.goal.obj, house.goal.lamp}
    # after "go to R" the distance is min(shortest, first_go[R]), never under steps - 1: one shorter
    # when every route is, or when the shortest that starts at R is
    every_go = shortest == steps - 1
    closer_spots = {spot for spot, rest in first_go.items() if rest == steps - 1}
    # in a House (a lookahead's) every receptacle is its own place: the commands themselves, no place to look up
    closer_gos = {f"go to {spot}" for spot in closer_spots} if lookahead is not None else None
    for command, parts in operations.items():
        op = parts[0]
        if op == "goto":
            if every_go or (command in closer_gos if closer_gos is not None else house.spot(parts[1]) in closer_spots):
                optimal.append(command)
            continue
        if op in READ_ONLY or (op == "take" and house.objects[parts[1]].kind not in useful):
            continue  # taking what the goal does not need is never optimal: see the docstring
        if command == first:
            optimal.append(command)  # a shortest plan starts with it, so the rest of it is one shorter
            continue
        if lookahead is not None:
            if op in NEVER_CLOSER:
                continue
            after = lookahead.steps_after(house, command)  # type: ignore[arg-type]  # a lookahead is given a House
        else:
            twin = house.copy()
            twin.apply(command)
            rest = plan(twin)
            after = -1 if rest is None else len(rest)
        if after == steps - 1:
            optimal.append(command)
    return tuple(optimal)


def _distances_after_go(house: HouseState) -> tuple[int, dict[str, int]]:
    """From nowhere: the shortest route's length, and per place (:meth:`House.spot`) the length of
    the shortest route that starts by going there, that first move left out."""
    return _Routes.of(house).distances


class _Routes:
    """A state's routes from nowhere, each as (length, the place its first ``go to`` reaches, the
    receptacles it opens), its :func:`_distances_after_go`, and the first shortest route's commands."""

    __slots__ = ("best", "closer", "distances", "routes")

    def __init__(self, routes: list[tuple[int, str, frozenset[str]]], best: list[str] | None = None) -> None:
        self.routes, self.best = routes, best
        self.closer: tuple[str, ...] | None = None  # Lookahead.decide's optimal go to's, made when first asked
        shortest = _UNREACHABLE
        first_go: dict[str, int] = {}
        for length, first, _ in routes:
            if length < shortest:
                shortest = length
            if length <= first_go.get(first, length):  # the shortest that starts there, less its move
                first_go[first] = length - 1
        self.distances = (shortest, first_go)

    @classmethod
    def of(cls, house: HouseState) -> _Routes:
        routes, best = [], None
        for route in _routes(house, None):
            commands = route.commands
            if best is None or len(commands) < len(best):
                best = commands
            routes.append((len(commands), route.first, frozenset(route.opens)))
        return cls(routes, best)

    def opened(self, receptacle: str) -> _Routes:
        """The routes of a :class:`~rl4vlm_gym.envs.household.world.House`'s state once ``receptacle``
        is open: the same routes, those that opened it one command shorter. ``open`` changes nothing
        else a route reads: not the objects, their places and states, the hands or the goal; a closed
        receptacle only costs an ``open`` where a route reaches it; and from nowhere the routes put
        down what the hands hold at the cheapest receptacle of each place, which in a House is that
        receptacle alone (every receptacle is its own place)."""
        routes, changed = [], False
        for n, first, opens in self.routes:
            if receptacle in opens:
                routes.append((n - 1, first, opens - {receptacle}))
                changed = True
            else:
                routes.append((n, first, opens))
        return _Routes(routes) if changed else self  # (the same routes: their distances and closer too)


def _changing(commands: list[str]) -> list[str]:
    """The commands of a House's sorted admissible commands that are neither ``go to`` nor only describe,
    in their order, found by where they sort rather than one by one: from ``examine `` to ``go to!`` lie
    the ``examine ...`` and ``go to ...`` commands, from ``help`` to ``look`` the commands ``help``,
    ``inventory`` and ``look``, the grammar having no other command that sorts there
    (``world.House._commands``; a test checks it along walks)."""
    examine = bisect.bisect_left(commands, "examine ")
    heat = bisect.bisect_left(commands, "go to!", examine)
    help_ = bisect.bisect_left(commands, "help", heat)
    return commands[:examine] + commands[heat:help_] + commands[bisect.bisect_right(commands, "look", help_) :]


def _shapes(house: House) -> list[tuple[int, str, frozenset[str]]]:
    """:attr:`_Routes.routes` of a :class:`~rl4vlm_gym.envs.household.world.House`'s state from nowhere
    without writing the routes' commands: the same routes as :func:`_routes` (``_place_routes`` and
    ``_look_routes`` through ``_free_hands`` and ``_Route``, step for step), each counted as it is
    walked, less the copies that differ only in the appliance of an object they do not treat. From
    nowhere in a House, ``_free_hands`` tries every receptacle that takes what the hands hold (every
    receptacle is its own place, so the cheapest of each place is that receptacle), so it needs no
    ``spots``."""
    goal, held, where = house.goal, house.holding, house.where
    receptacles, opened = house.receptacles, house.opened
    shut: dict[str, bool] = {}  # closed containers, looked up once a receptacle

    def closed(receptacle: str) -> bool:
        found = shut.get(receptacle)
        if found is None:
            found = shut[receptacle] = receptacles[receptacle].spec.openable and receptacle not in opened
        return found

    starts: list[tuple[int, str, tuple[str, ...], str | None]] = []  # after freeing the hands: (length, place, opens, put down)

    def free(first_obj: str) -> list[tuple[int, str, tuple[str, ...], str | None]]:
        if held is None or held == first_obj:
            return [(0, "", (), None)]
        if not starts:
            for receptacle in house.listing:
                if house.accepts(receptacle, held):
                    shut_here = closed(receptacle)
                    starts.append((2 + shut_here, receptacle, (receptacle,) if shut_here else (), receptacle))
        return starts

    shapes: dict[tuple[int, str, frozenset[str]], None] = {}  # a set in the order found
    if goal.task == "look_at_obj_in_light":
        lamps = [name for name in house.things(goal.lamp or "") if name in where]
        targets = [name for name in house.things(goal.obj) if _reachable(house, name)]
        for lamp in lamps:
            lit = lamp in house.toggled
            for obj in targets:
                for n, place, opens, down in free(obj):
                    first = place
                    if held != obj or down is not None:  # take it: it lies where it was (the hands put down another)
                        home = where[obj]
                        if place != home:
                            if not n:
                                first = home
                            n += 1
                            place = home
                        if closed(home) and home not in opens:
                            n += 1
                            opens = (*opens, home)
                        n += 1
                    spot = where[lamp]
                    if place != spot:
                        if not n:
                            first = spot
                        n += 1
                    shapes[n if lit else n + 1, first, frozenset(opens)] = None
        return list(shapes)
    verb = goal.treatment
    appliances = house.appliances(verb) if verb else ()
    if verb and not appliances:
        return []  # as _place_routes: no appliance to choose, no route (even for objects treated already)
    kind = goal.obj
    objects = house.objects
    targets = [o for o in house.things(kind) if _reachable(house, o) and (not verb or objects[o].spec.treatable(verb))]
    untreated = {o for o in targets if verb and not goal.treated(house, o)}
    for dest in house.of_kind(goal.recep or ""):
        counted = {o for o in house.contents[dest] if objects[o].kind == kind and goal.treated(house, o)}  # goal.placed's
        candidates = [o for o in targets if o not in counted]
        for order in itertools.permutations(candidates, goal.count - len(counted)):
            tool_choices = [appliances if o in untreated else _NO_TOOL for o in order]
            for tools in itertools.product(*tool_choices):
                for n, place, opens, down in free(order[0]):
                    first, hand = place, None if down is not None else held
                    moved = {held: down} if down is not None else {}
                    for obj, tool in zip(order, tools, strict=True):
                        if hand != obj:  # take it
                            home = moved.get(obj) or where[obj]
                            if place != home:
                                if not n:
                                    first = home
                                n += 1
                                place = home
                            if closed(home) and home not in opens:
                                n += 1
                                opens = (*opens, home)
                            n += 1
                        if tool is not None:  # treat it
                            if place != tool:
                                if not n:
                                    first = tool
                                n += 1
                                place = tool
                            n += 1
                        if place != dest:  # put it
                            if not n:
                                first = dest
                            n += 1
                            place = dest
                        if closed(dest) and dest not in opens:
                            n += 1
                            opens = (*opens, dest)
                        n += 1
                        moved[obj] = dest
                        hand = None
                    shapes[n, first, frozenset(opens)] = None
    return list(shapes)


_NO_TOOL = (None,)
_UNREACHABLE = 1 << 30
_TREATMENTS = frozenset({"clean", "heat", "cool"})
_WON = _Routes([])
_WON.distances = (0, {})

_SAME_FEATURES = frozenset({"open", "close", "use", "slice"})
"""The operations that change nothing :func:`features` reads (which objects lie where, their treatments, the hands)."""

NEVER_CLOSER = frozenset({"close", "slice"})
"""The operations after which, by the House's rules (``world.py``), the shortest plan is never shorter.
``slice`` changes only what ``examine`` and the image say. ``close R``: no precondition needs a
receptacle closed, so a plan from the closed state, with its first ``open R`` (if any) left out,
wins from the open state too; were the plan after ``close R`` one shorter than now, that would be a
plan shorter than the shortest. (ALFWorld's games, ``alfworld_oracle.py``, search after them as
after any other command.)"""

_NOT_WEIGHED = NEVER_CLOSER | READ_ONLY  # what Lookahead.decide never searches after (READ_ONLY: no change)


class Lookahead:
    """The oracle's distances from the states of one :class:`~rl4vlm_gym.envs.household.world.House`
    and its copies, each state's enumeration from nowhere (:func:`_distances_after_go`) made once.

    The enumeration (and the state's :func:`features`) depends on everything but the agent's place,
    which :attr:`House.stage` names, so it is memoized by stage: a ``go to`` keeps it, and the lookahead of a decision (the states
    one command away, :func:`optimal_commands`) makes the one the agent then reaches. The distance
    from a place is the enumeration's shortest route, or the one that starts by going there less
    that move (a route's place matters only to its first command).

    Args:
        house: the house whose states (and its copies') are asked about.
    """

    def __init__(self, house: House) -> None:
        self._stages = house.stages
        self._memo: dict[int, _Routes] = {}
        self._features: dict[int, dict[str, int | str]] = {}

    def features(self, house: House) -> dict[str, int | str]:
        """:func:`features` of the house's state (they do not depend on the place either), those of the
        stage it was made from after a command they do not read (:data:`_SAME_FEATURES`)."""
        stage = house.stage
        found = self._features.get(stage)
        if found is None:
            made = house.parents.get(stage)
            if made is not None and made[1] in _SAME_FEATURES:
                found = self._features.get(made[0])
            if found is None:
                found = features(house)
            self._features[stage] = found
        return found

    def decide(self, house: House, plan: list[str] | None) -> tuple[tuple[str, ...], int, dict[str, int | str]]:
        """The decision facts of the house's state in one pass: the optimal commands (``optimal_commands(house,
        steps, lookahead=self, first=...)``, the oracle's next command ``plan[0]`` optimal without a search
        while ``plan`` is as long as the shortest), the steps to go (:meth:`steps`; -1 and no command when
        none wins) and the :meth:`features`.

        The same reasoning as :func:`optimal_commands`, read off the routes more directly. After ``go to
        R`` the distance is the shortest route's, or one less when a shortest route starts by going to R;
        so where the agent stands no shortest route starts, the optimal ``go to`` commands are those of
        the places where one does (:attr:`_Routes.closer`, once a stage), and elsewhere none is. Of the
        others only the few that change the state (open, take, put, use, treat...) are weighed
        (:func:`_changing`)."""
        stage = house.stage
        routes = self._memo.get(stage) or self._routes(house)
        found = self._features.get(stage) or self.features(house)
        shortest, first_go = routes.distances
        place = house.place
        steps = shortest if place is None else min(shortest, first_go.get(place, shortest))
        if steps >= _UNREACHABLE:
            return (), -1, found
        if steps == 0:
            return (), 0, found
        admissible = house.admissible()
        first = plan[0] if plan and len(plan) == steps else None
        goal, objects = house.goal, house.objects
        optimal: list[str] = []
        ahead = 0  # how many come before the "go to" commands
        for command in _changing(list(admissible)):
            parts = admissible[command]
            op = parts[0]
            if op == "take" and objects[parts[1]].kind != goal.obj and objects[parts[1]].kind != goal.lamp:
                continue  # taking what the goal does not need is never optimal: see optimal_commands
            if command == first or (op not in _NOT_WEIGHED and self.steps_after(house, command) == steps - 1):
                optimal.append(command)
                ahead += command < "go to "
        if steps == shortest:
            closer = routes.closer
            if closer is None:
                receptacles, before, gos = house.receptacles, shortest - 1, []
                for spot, rest in first_go.items():
                    if rest == before and spot in receptacles:
                        gos.append("go to " + spot)
                gos.sort()
                closer = routes.closer = tuple(gos)
            if closer:
                return (*optimal[:ahead], *closer, *optimal[ahead:]), steps, found
        return tuple(optimal), steps, found

    def _routes(self, house: House) -> _Routes:
        if house.stages is not self._stages:
            raise ValueError("Lookahead: this house is not the one (or a copy of the one) it was made for")
        found = self._memo.get(house.stage)
        if found is None:
            found = self._derived(house, house.stage)
            if found is None:
                found = _WON if house.goal.satisfied(house) else _Routes(_shapes(house))
            self._memo[house.stage] = found
        return found

    def _derived(self, house: House, stage: int) -> _Routes | None:
        """The routes of ``stage`` read off those of the stage it was made from, where its command
        changes nothing a route reads but what :meth:`_Routes.opened` takes into account: ``open``;
        a treatment the goal does not ask for (the routes read the treatments only through
        ``goal.treated``, which reads the goal's own: clean, or hot and cold, which heating and
        cooling trade); ``use`` but in a task of looking under a lamp. None otherwise, or when those
        routes are not memoized."""
        made = house.parents.get(stage)
        if made is None:
            return None
        parent, op, args = made
        before = self._memo.get(parent)
        if before is None:
            return None
        if op == "open":
            return self._memo.setdefault(stage, before.opened(args[0]))
        if op in _TREATMENTS:
            treatment = house.goal.treatment
            if treatment is None or (treatment == "clean") != (op == "clean"):
                return self._memo.setdefault(stage, before)
        elif op == "use" and house.goal.task != "look_at_obj_in_light":
            return self._memo.setdefault(stage, before)
        return None

    def from_nowhere(self, house: House) -> tuple[int, dict[str, int]]:
        """The shortest route's length from nowhere, and per place the shortest that starts by going
        there, that move left out (``_UNREACHABLE`` and none when the game cannot be won; 0 and none
        when it is won)."""
        return self._routes(house).distances

    def plan(self, house: House) -> list[str] | None:
        """:func:`plan`, the enumeration from nowhere memoized on the way when the agent stands nowhere
        (at reset: the plan and the first decision's distances in one pass)."""
        if house.place is not None or house.stage in self._memo or house.goal.satisfied(house):
            return plan(house)
        if house.stages is not self._stages:
            raise ValueError("Lookahead: this house is not the one (or a copy of the one) it was made for")
        found = self._memo[house.stage] = _Routes.of(house)  # with the commands of its first shortest route
        return found.best

    def steps(self, house: House) -> int:
        """The shortest plan's length from the house's state (``len(plan(house))``), -1 if none wins."""
        return self._steps(house, self._routes(house))

    def steps_after(self, house: House, command: str) -> int:
        """:meth:`steps` after the admissible ``command`` (not a ``go to``: it keeps the place), the
        house left as it is: read off the routes now where the command changes little (:meth:`_derived`),
        else a copy plays it and enumerates, once a stage."""
        stage = house.stage_after(command)
        found = self._memo.get(stage) or self._derived(house, stage)
        if found is None:
            twin = house.copy()
            twin.apply(command)
            found = self._routes(twin)
        return self._steps(house, found)

    @staticmethod
    def _steps(house: House, routes: _Routes) -> int:
        """The distance from the house's place by ``routes`` (a route's place matters only to its first command)."""
        shortest, first_go = routes.distances
        if house.place is not None:
            shortest = min(shortest, first_go.get(house.spot(house.place), shortest))
        return -1 if shortest >= _UNREACHABLE else shortest


def features(house: HouseState) -> dict[str, int | str]:
    """The state's decision features: ``task`` (ALFWorld's task type), ``phase`` (what the task
    needs next: ``find`` an object of the goal's kind, ``free`` the hands of another object,
    ``clean``/``heat``/``cool`` the one held, ``put`` it in place, or ``light`` a lamp) and
    ``left`` (how many objects must still reach the goal: 0 to 2)."""
    goal, held, objects = house.goal, house.holding, house.objects
    kind = goal.obj
    target = held is not None and objects[held].kind == kind
    if goal.task == "look_at_obj_in_light":
        left = 0 if target else 1
        phase = "light" if target else "free" if held is not None else "find"
    else:
        # goal.placed and goal.treated by set operations (the decision facts ask every step)
        treatment = goal.treatment
        done = {"clean": house.clean, "heat": house.hot, "cool": house.cool}.get(treatment) if treatment else None
        counted = set(house.things(kind)) if done is None else done.intersection(house.things(kind))
        placed, contents = 0, house.contents
        if counted:
            for receptacle in house.of_kind(goal.recep or ""):
                placed = max(placed, len(counted.intersection(contents[receptacle])))
        left = max(goal.count - placed, 0)
        if held is None:
            phase = "find"
        elif not target:
            phase = "free"
        elif treatment and done is not None and held not in done:
            phase = treatment
        else:
            phase = "put"
    return {"task": goal.task, "phase": phase, "left": left}


def _free_hands(house: HouseState, order: tuple[str, ...], place: str | None, spots: set[str]) -> Iterator[_Route]:
    """Routes that start by putting down what the hands hold, unless it is ``order[0]``, the
    object the route fetches first.

    A receptacle whose place is none of ``spots`` (the places the rest of any route goes to: the
    goal's receptacles, the targets' homes, the appliances, the lamps) changes nothing for the rest
    of the route but what putting down there costs (going there, opening it), unless the object put
    down is one the route fetches later: of those, only the cheapest is tried (from nowhere, the
    cheapest at each place: :func:`_distances_after_go` reads the routes by their first place)."""
    held = house.holding
    if held is None or held == order[0]:
        yield _Route(house, place)
        return
    kept = held in order  # put down, and fetched again from there
    spare: dict[str | None, tuple[int, str]] = {}  # the cheapest receptacle off the routes' places (per place from nowhere)
    for receptacle in house.listing:
        if house.accepts(receptacle, held):
            spot = house.spot(receptacle)
            if not kept and spot not in spots:
                closed = house.receptacles[receptacle].spec.openable and receptacle not in house.opened
                cost = (spot != place) + closed
                group = spot if place is None else None
                if group not in spare or cost < spare[group][0]:
                    spare[group] = (cost, receptacle)
                continue
            route = _Route(house, place)
            route.put(held, receptacle)
            yield route
    for _, receptacle in spare.values():
        route = _Route(house, place)
        route.put(held, receptacle)
        yield route


def _place_routes(house: HouseState, place: str | None) -> Iterator[_Route]:
    goal = house.goal
    verb = goal.treatment
    appliances = house.appliances(verb) if verb else ("",)
    targets = [
        name for name in house.things(goal.obj) if _reachable(house, name) and (not verb or house.objects[name].spec.treatable(verb))
    ]
    dests = house.of_kind(goal.recep or "")
    spots = _spots(house, (*dests, *(house.where[o] for o in targets if o in house.where), *appliances))
    untreated = {o for o in targets if verb and not goal.treated(house, o)}
    for dest in dests:
        counted = {o for o in house.contents[dest] if house.objects[o].kind == goal.obj and goal.treated(house, o)}  # goal.placed's
        candidates = [o for o in targets if o not in counted]
        for order in itertools.permutations(candidates, goal.count - len(counted)):
            for tools in itertools.product(appliances, repeat=len(order)):
                for route in _free_hands(house, order, place, spots):
                    for obj, appliance in zip(order, tools, strict=True):
                        route.take(obj)
                        if obj in untreated:
                            route.treat(verb, obj, appliance)  # type: ignore[arg-type]  # untreated is empty without a verb
                        route.put(obj, dest)
                    yield route


def _spots(house: HouseState, receptacles: tuple[str, ...]) -> set[str]:
    """The places of the receptacles (``""`` for none), which :func:`_free_hands` reads only when the hands
    hold something."""
    return set() if house.holding is None else {house.spot(r) for r in receptacles if r}


def _reachable(house: HouseState, obj: str) -> bool:
    """``obj`` can be had: held, or pickupable in a receptacle (in ALFWorld's games some objects lie in
    none, out of reach)."""
    return obj == house.holding or (house.objects[obj].spec.pickupable and obj in house.where)


def _look_routes(house: HouseState, place: str | None) -> Iterator[_Route]:
    goal = house.goal
    lamps = [name for name in house.things(goal.lamp or "") if name in house.where]
    targets = [name for name in house.things(goal.obj) if _reachable(house, name)]
    spots = _spots(house, tuple(house.where[o] for o in (*lamps, *targets) if o in house.where))
    for lamp, obj in itertools.product(lamps, targets):
        for route in _free_hands(house, (obj,), place, spots):
            route.take(obj)
            route.go(house.where[lamp])
            if lamp not in house.toggled:
                route.commands.append(f"use {lamp}")
            yield route
