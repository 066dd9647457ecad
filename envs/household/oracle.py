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
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rl4vlm_gym.envs.household.kinds import APPLIANCES

if TYPE_CHECKING:
    from rl4vlm_gym.envs.household.world import House

__all__ = ["plan"]


class _Route:
    """A plan being built: the commands so far and the state parts they change."""

    __slots__ = ("commands", "held", "house", "moved", "opened", "place")

    def __init__(self, house: House) -> None:
        self.house = house
        self.place = house.place
        self.held = house.holding
        self.opened = set(house.opened)
        self.moved: dict[str, str] = {}  # objects this route has put down, and where
        self.commands: list[str] = []

    def go(self, receptacle: str) -> None:
        if self.place != receptacle:
            self.commands.append(f"go to {receptacle}")
            self.place = receptacle

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


def plan(house: House) -> list[str] | None:
    """The shortest admissible command sequence that wins the game; ``[]`` if it is won, ``None``
    if it cannot be won."""
    goal = house.goal
    if goal.satisfied(house):
        return []
    routes = _look_routes(house) if goal.task == "look_at_obj_in_light" else _place_routes(house)
    best: list[str] | None = None
    for commands in routes:
        if best is None or len(commands) < len(best):
            best = commands
    return best


def _free_hands(house: House, first: str) -> Iterator[_Route]:
    """Routes that start by putting down what the hands hold, unless it is ``first``, the
    object the route fetches first."""
    held = house.holding
    if held is None or held == first:
        yield _Route(house)
        return
    for receptacle in house.listing:
        if house.accepts(receptacle, held):
            route = _Route(house)
            route.put(held, receptacle)
            yield route


def _place_routes(house: House) -> Iterator[list[str]]:
    goal = house.goal
    verb = goal.treatment
    appliances = house.of_kind(APPLIANCES[verb]) if verb else ("",)
    targets = [name for name, kind in house.kinds() if kind == goal.obj and house.objects[name].spec.pickupable]
    for dest in house.of_kind(goal.recep or ""):
        need = goal.count - goal.placed(house, dest)
        counted = {o for o in house.contents[dest] if house.objects[o].kind == goal.obj and goal.treated(house, o)}
        candidates = [o for o in targets if o not in counted]
        for order in itertools.permutations(candidates, need):
            for tools in itertools.product(appliances, repeat=need):
                for route in _free_hands(house, order[0]):
                    for obj, appliance in zip(order, tools, strict=True):
                        route.take(obj)
                        if verb and not goal.treated(house, obj):
                            route.treat(verb, obj, appliance)
                        route.put(obj, dest)
                    yield route.commands


def _look_routes(house: House) -> Iterator[list[str]]:
    goal = house.goal
    lamps = [name for name, kind in house.kinds() if kind == goal.lamp and name in house.where]
    targets = [name for name, kind in house.kinds() if kind == goal.obj and house.objects[name].spec.pickupable]
    for lamp, obj in itertools.product(lamps, targets):
        for route in _free_hands(house, obj):
            route.take(obj)
            route.go(house.where[lamp])
            if lamp not in house.toggled:
                route.commands.append(f"use {lamp}")
            yield route.commands
