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
    from rl4vlm_gym.envs.household.world import House

__all__ = ["NEVER_CLOSER", "Lookahead", "features", "optimal_commands", "plan"]


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
    shortest, first_go = _distances_after_go(house) if lookahead is None else lookahead.from_nowhere(house)
    optimal = []
    if operations is None:
        operations = house.admissible()  # type: ignore[attr-defined]  # a House's; a Board's are given
    useful = {house.goal.obj, house.goal.lamp}
    # after "go to R" the distance is min(shortest, first_go[R]), never under steps - 1: one shorter
    # when every route is, or when the shortest that starts at R is
    every_go = shortest == steps - 1
    closer_spots = {spot for spot, rest in first_go.items() if rest == steps - 1}
    for command, parts in operations.items():
        op = parts[0]
        if op == "goto":
            if every_go or house.spot(parts[1]) in closer_spots:
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
    shortest = _UNREACHABLE
    first_go: dict[str, int] = {}
    for commands in _routes(house, None):
        shortest = min(shortest, len(commands))
        first = house.spot(commands[0][len("go to ") :])  # from nowhere, every route starts by going somewhere
        first_go[first] = min(first_go.get(first, _UNREACHABLE), len(commands) - 1)
    return shortest, first_go


_UNREACHABLE = 1 << 30

NEVER_CLOSER = frozenset({"close", "slice"})
"""The operations after which, by the House's rules (``world.py``), the shortest plan is never shorter.
``slice`` changes only what ``examine`` and the image say. ``close R``: no precondition needs a
receptacle closed, so a plan from the closed state, with its first ``open R`` (if any) left out,
wins from the open state too; were the plan after ``close R`` one shorter than now, that would be a
plan shorter than the shortest. (ALFWorld's games, ``alfworld_oracle.py``, search after them as
after any other command.)"""


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
        self._memo: dict[int, tuple[int, dict[str, int]]] = {}
        self._features: dict[int, dict[str, int | str]] = {}

    def features(self, house: House) -> dict[str, int | str]:
        """:func:`features` of the house's state (they do not depend on the place either)."""
        found = self._features.get(house.stage)
        if found is None:
            found = self._features[house.stage] = features(house)
        return found

    def from_nowhere(self, house: House) -> tuple[int, dict[str, int]]:
        """The shortest route's length from nowhere, and per place the shortest that starts by going
        there, that move left out (``_UNREACHABLE`` and none when the game cannot be won; 0 and none
        when it is won)."""
        if house.stages is not self._stages:
            raise ValueError("Lookahead: this house is not the one (or a copy of the one) it was made for")
        found = self._memo.get(house.stage)
        if found is None:
            found = self._memo[house.stage] = (0, {}) if house.goal.satisfied(house) else _distances_after_go(house)
        return found

    def steps(self, house: House) -> int:
        """The shortest plan's length from the house's state (``len(plan(house))``), -1 if none wins."""
        shortest, first_go = self.from_nowhere(house)
        if house.place is not None:
            shortest = min(shortest, first_go.get(house.spot(house.place), shortest))
        return -1 if shortest >= _UNREACHABLE else shortest

    def steps_after(self, house: House, command: str) -> int:
        """:meth:`steps` after the admissible ``command`` (not a ``go to``: it keeps the place), the
        house left as it is (a copy plays the command when its stage is not memoized yet)."""
        found = self._memo.get(house.stage_after(command))
        if found is None:
            twin = house.copy()
            twin.apply(command)
            found = self.from_nowhere(twin)
        shortest, first_go = found
        if house.place is not None:
            shortest = min(shortest, first_go.get(house.spot(house.place), shortest))
        return -1 if shortest >= _UNREACHABLE else shortest


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
        name for name in house.things(goal.obj) if _reachable(house, name) and (not verb or house.objects[name].spec.treatable(verb))
    ]
    dests = house.of_kind(goal.recep or "")
    spots = _spots(house, (*dests, *(house.where[o] for o in targets if o in house.where), *appliances))
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


def _spots(house: HouseState, receptacles: tuple[str, ...]) -> set[str]:
    """The places of the receptacles (``""`` for none), which :func:`_free_hands` reads only when the hands
    hold something."""
    return set() if house.holding is None else {house.spot(r) for r in receptacles if r}


def _reachable(house: HouseState, obj: str) -> bool:
    """``obj`` can be had: held, or pickupable in a receptacle (in ALFWorld's games some objects lie in
    none, out of reach)."""
    return obj == house.holding or (house.objects[obj].spec.pickupable and obj in house.where)


def _look_routes(house: HouseState, place: str | None) -> Iterator[list[str]]:
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
            yield route.commands
