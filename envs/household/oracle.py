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
task, phase and objects left, for breaking an agent's errors down.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from rl4vlm_gym.envs.household.world import READ_ONLY

if TYPE_CHECKING:
    from rl4vlm_gym.envs.household.goals import HouseState

__all__ = ["features", "optimal_commands", "plan"]


class _Route:
    """A plan being built: the commands so far and the state parts they change."""

    __slots__ = ("commands", "held", "house", "moved", "opened", "place")

    def __init__(self, house: HouseState, place: str | None) -> None:
        self.house = house
        self.place = place
        self.held = house.holding
        self.opened = set(house.opened)
        self.moved: dict[str, str] = {}  # objects this route has put down, and where
        self.commands: list[str] = []

    def go(self, receptacle: str) -> None:
        spot = self.house.spot(receptacle)
        if self.place != spot:
            self.commands.append(f"go to {receptacle}")
            self.place = spot

    def reach(self, receptacle: str) -> None:
        """Go to ``receptacle`` and open it if it is a closed container."""
        self.go(receptacle)
        if self.house.receptacles[receptacle].spec.openable and receptacle not in self.opened:
            self.commands.append(f"open {receptacle}")
            self.opened.add(receptacle)

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
    for commands in _routes(house, house.place):
        if best is None or len(commands) < len(best):
            best = commands
    return best


def _routes(house: HouseState, place: str | None) -> Iterator[list[str]]:
    """Every candidate plan of the state, the agent standing at ``place``."""
    return _look_routes(house, place) if house.goal.task == "look_at_obj_in_light" else _place_routes(house, place)


def optimal_commands(house: HouseState, steps: int, operations: Mapping[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
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
    """
    if steps <= 0:
        return ()
    shortest, first_go = _distances_after_go(house)
    optimal = []
    if operations is None:
        operations = house.admissible()  # type: ignore[attr-defined]  # a House's; a Board's are given
    useful = {house.goal.obj, house.goal.lamp}
    for command, (op, *args) in operations.items():
        if op in READ_ONLY or (op == "take" and house.objects[args[0]].kind not in useful):
            continue  # taking what the goal does not need is never optimal: see the docstring
        if op == "goto":
            after = min(shortest, first_go.get(house.spot(args[0]), shortest))
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
    shortest = _UNREACHABLE
    first_go: dict[str, int] = {}
    for commands in _routes(house, None):
        shortest = min(shortest, len(commands))
        first = house.spot(commands[0][len("go to ") :])  # from nowhere, every route starts by going somewhere
        first_go[first] = min(first_go.get(first, _UNREACHABLE), len(commands) - 1)
    return shortest, first_go


_UNREACHABLE = 1 << 30


def features(house: HouseState) -> dict[str, int | str]:
    """The state's decision features: ``task`` (ALFWorld's task type), ``phase`` (what the task
    needs next: ``find`` an object of the goal's kind, ``free`` the hands of another object,
    ``clean``/``heat``/``cool`` the one held, ``put`` it in place, or ``light`` a lamp) and
    ``left`` (how many objects must still reach the goal: 0 to 2)."""
    goal, held = house.goal, house.holding
    target = held is not None and house.objects[held].kind == goal.obj
    if goal.task == "look_at_obj_in_light":
        left = 0 if target else 1
        phase = "light" if target else "free" if held is not None else "find"
    else:
        placed = max((goal.placed(house, r) for r in house.of_kind(goal.recep or "")), default=0)
        left = max(goal.count - placed, 0)
        if held is None:
            phase = "find"
        elif not target:
            phase = "free"
        elif goal.treatment and not goal.treated(house, held):
            phase = goal.treatment
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


def _place_routes(house: HouseState, place: str | None) -> Iterator[list[str]]:
    goal = house.goal
    verb = goal.treatment
    appliances = house.appliances(verb) if verb else ("",)
    targets = [
        name
        for name, kind in house.kinds()
        if kind == goal.obj and _reachable(house, name) and (not verb or house.objects[name].spec.treatable(verb))
    ]
    dests = house.of_kind(goal.recep or "")
    spots = {house.spot(r) for r in (*dests, *(house.where[o] for o in targets if o in house.where), *appliances) if r}
    for dest in dests:
        need = goal.count - goal.placed(house, dest)
        counted = {o for o in house.contents[dest] if house.objects[o].kind == goal.obj and goal.treated(house, o)}
        candidates = [o for o in targets if o not in counted]
        for order in itertools.permutations(candidates, need):
            for tools in itertools.product(appliances, repeat=need):
                for route in _free_hands(house, order, place, spots):
                    for obj, appliance in zip(order, tools, strict=True):
                        route.take(obj)
                        if verb and not goal.treated(house, obj):
                            route.treat(verb, obj, appliance)
                        route.put(obj, dest)
                    yield route.commands


def _reachable(house: HouseState, obj: str) -> bool:
    """``obj`` can be had: held, or pickupable in a receptacle (in ALFWorld's games some objects lie in
    none, out of reach)."""
    return obj == house.holding or (house.objects[obj].spec.pickupable and obj in house.where)


def _look_routes(house: HouseState, place: str | None) -> Iterator[list[str]]:
    goal = house.goal
    lamps = [name for name, kind in house.kinds() if kind == goal.lamp and name in house.where]
    targets = [name for name, kind in house.kinds() if kind == goal.obj and _reachable(house, name)]
    spots = {house.spot(house.where[o]) for o in (*lamps, *targets) if o in house.where}
    for lamp, obj in itertools.product(lamps, targets):
        for route in _free_hands(house, (obj,), place, spots):
            route.take(obj)
            route.go(house.where[lamp])
            if lamp not in house.toggled:
                route.commands.append(f"use {lamp}")
            yield route.commands
