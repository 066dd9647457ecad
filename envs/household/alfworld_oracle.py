"""An exact, fast planner for ALFWorld's real games: the household oracle over a game's PDDL facts.

ALFWorld's planner expert (Fast Downward through TextWorld) runs a uniform-cost search over the whole
game: 0.1 s to minutes per plan, and past any bound on a few pick-two games. (Its task has unit
costs where the game's problem declares no metric, as in every game here, so its plans are shortest
too; the domain's action costs, heat, cool, clean and toggle 5, count only under a metric.) This
planner is the env's default oracle, Fast Downward its fallback and cross-check. The game's rules
are those :mod:`~rl4vlm_gym.envs.household.world` implements for the procedural houses, with one
difference: several receptacles may stand at one location, where one ``go to``
reaches all of them. So :class:`Board` holds a game's state as the household oracle reads a
:class:`~rl4vlm_gym.envs.household.world.House` (receptacles, objects, what is in what, open, held,
clean / hot / cool / toggled), with a location as the agent's place, and
:func:`~rl4vlm_gym.envs.household.oracle.plan` gives the shortest command sequence in milliseconds;
:func:`~rl4vlm_gym.envs.household.oracle.optimal_commands` the decision facts.

What it does not model, it says (:attr:`Board.unmodelled`): an object of the goal's kind (or a lamp)
that ALFWorld lists in two receptacles at once (an object inside a receptacle object: taking it
from one leaves it in the other), a goal it does not parse. The tests play its plans in the real
games and compare its distances with Fast Downward's plans.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rl4vlm_gym.envs.household.goals import TREATMENTS, Goal

__all__ = ["Board", "Statics", "goal_of", "statics_of"]

Fact = tuple[str, ...]

_APPLIANCES = {"clean": ("sinkbasin", "sink"), "heat": ("microwave",), "cool": ("fridge",)}
_GOAL_TYPES = re.compile(r"\((objectType|receptacleType) \?(\w+) (\w+)Type\)")
_COMMAND = re.compile(
    r"^(?:(?P<goto>go to) (?P<r0>.+)|(?P<open>open|close) (?P<r1>.+)|take (?P<o2>.+) from (?P<r2>.+)"
    r"|(?:move|put) (?P<o3>.+) (?:to|in/on) (?P<r3>.+)|(?P<treat>heat|cool|clean) (?P<o4>.+) with (?P<r4>.+)|use (?P<o5>.+))$"
)


@dataclass(frozen=True)
class _Spec:
    """What the game's static facts say of a thing (the household kinds' ``spec`` attributes)."""

    pickupable: bool = False
    openable: bool = False
    cleanable: bool = False
    heatable: bool = False
    coolable: bool = False

    def treatable(self, verb: str) -> bool:
        return {"clean": self.cleanable, "heat": self.heatable, "cool": self.coolable}[verb]


@dataclass(frozen=True)
class _Thing:
    kind: str
    spec: _Spec


@dataclass(frozen=True)
class Statics:
    """What no command changes in a game: its receptacles (in listing order), where they stand, the
    objects, their kinds and properties, and which receptacle kinds hold which object kinds."""

    listing: tuple[str, ...]
    location: Mapping[str, str]
    receptacles: Mapping[str, _Thing]
    objects: Mapping[str, _Thing]
    holds: frozenset[tuple[str, str]]
    """``(receptacle kind, object kind)`` pairs of ``canContain``."""
    commands: str
    """``"move"`` or ``"put"``: the game's grammar for putting down."""


def _kind(name: str) -> str:
    return name.rpartition(" ")[0] or name


def _type(name: str) -> str:
    return name.strip().removesuffix("type")


def statics_of(facts: Iterable[Fact], listing: tuple[str, ...], commands: str) -> Statics:
    """The game's :class:`Statics` from its facts at reset (TextWorld's, with ALFWorld's names)."""
    true: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for pred, *args in facts:
        true[pred].add(tuple(args))
    flags = {name: {args[0] for args in true[name]} for name in ("pickupable", "openable", "cleanable", "heatable", "coolable")}

    def spec(name: str) -> _Spec:
        return _Spec(**{flag: name in names for flag, names in flags.items()})

    # sorted: the planner breaks ties between equally short plans in these dicts' order, which must not
    # follow the process's str hashing (the facts come as sets)
    location = {r: loc for r, loc in sorted(true["receptacleatlocation"])}
    receptacles = {r: _Thing(_type(t), spec(r)) for r, t in sorted(true["receptacletype"])}
    objects = {o: _Thing(_type(t), spec(o)) for o, t in sorted(true["objecttype"])}
    holds = frozenset((_type(r), _type(o)) for r, o in true["cancontain"])
    return Statics(listing, location, receptacles, objects, holds, commands)


def goal_of(task: str, problem: str) -> Goal | None:
    """The :class:`Goal` of a game of task type ``task`` from its PDDL problem's ``(:goal ...)``, or
    None if it is not one of the templates the planner knows."""
    if task not in ("look_at_obj_in_light", "pick_and_place_simple", "pick_two_obj_and_place", *TREATMENTS):
        return None
    types: dict[str, str] = {}
    for pred, var, name in _GOAL_TYPES.findall(problem.partition("(:goal")[2]):
        types.setdefault(f"{pred}:{var}", name.lower())
    if task == "look_at_obj_in_light":
        obj, lamp = types.get("objectType:o"), types.get("objectType:ot")
        return Goal(task, obj, lamp=lamp) if obj and lamp else None
    obj = types.get("objectType:o1" if task == "pick_two_obj_and_place" else "objectType:o")
    recep = types.get("receptacleType:r")
    return Goal(task, obj, recep=recep) if obj and recep else None


class Board:
    """A game's state as the household oracle reads a ``House`` (see the module docstring)."""

    def __init__(self, statics: Statics, goal: Goal, facts: Iterable[Fact]) -> None:
        self.statics = statics
        self.goal = goal
        self.receptacles = statics.receptacles
        self.objects = statics.objects
        self.listing = statics.listing
        self.commands = statics.commands
        self.contents: dict[str, list[str]] = {r: [] for r in statics.listing}
        self.place: str | None = None
        self.holding: str | None = None
        self.opened: set[str] = set()
        self.clean: set[str] = set()
        self.hot: set[str] = set()
        self.cool: set[str] = set()
        self.toggled: set[str] = set()
        sets = {"opened": self.opened, "isclean": self.clean, "ishot": self.hot, "iscool": self.cool, "istoggled": self.toggled}
        homes: dict[str, list[str]] = defaultdict(list)
        for pred, *args in facts:
            if pred == "inreceptacle" and args[1] in self.contents:
                self.contents[args[1]].append(args[0])
                homes[args[0]].append(args[1])
            elif pred == "atlocation":
                self.place = args[1]
            elif pred == "holds":
                self.holding = args[1]
            elif pred in sets:
                sets[pred].add(args[0])
        self.where = {o: inside[0] for o, inside in homes.items()}
        relevant = {goal.obj, goal.lamp}
        self.unmodelled: str | None = next(
            (f"{o} is in {' and '.join(inside)} at once" for o, inside in homes.items() if len(inside) > 1 and self.objects[o].kind in relevant),
            None,
        )
        """Why the planner cannot be exact in this state, or None."""

    # What the household oracle reads -----------------------------------------------------------------

    def spot(self, receptacle: str) -> str:
        return self.statics.location[receptacle]

    def around(self) -> list[str]:
        return [o for r in self.listing if self.statics.location[r] == self.place for o in self.contents[r]]

    def of_kind(self, kind: str) -> tuple[str, ...]:
        return tuple(r for r in self.listing if self.receptacles[r].kind == kind)

    def appliances(self, verb: str) -> tuple[str, ...]:
        # ALFWorld's CleanObject takes a sink basin or a sink; heat a microwave, cool a fridge
        kinds = _APPLIANCES[verb]
        return tuple(r for r in self.listing if self.receptacles[r].kind in kinds)

    def kinds(self) -> Iterable[tuple[str, str]]:
        return ((name, thing.kind) for name, thing in self.objects.items())

    def things(self, kind: str) -> tuple[str, ...]:
        return tuple(name for name, thing in self.objects.items() if thing.kind == kind)

    def accepts(self, receptacle: str, obj: str) -> bool:
        return (self.receptacles[receptacle].kind, self.objects[obj].kind) in self.statics.holds

    def put_command(self, obj: str, receptacle: str) -> str:
        return f"move {obj} to {receptacle}" if self.commands == "move" else f"put {obj} in/on {receptacle}"

    # Commands ----------------------------------------------------------------------------------------

    @staticmethod
    def operations(commands: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """ALFWorld's commands as ``(operation, *arguments)``; those that change nothing the goals read
        (``look``, ``examine``, ``inventory``, ``help``, ``slice``) are ``("look",)``."""
        parsed: dict[str, tuple[str, ...]] = {}
        for command in commands:
            m = _COMMAND.match(command)
            if m is None:
                parsed[command] = ("look",)
            elif m["goto"]:
                parsed[command] = ("goto", m["r0"])
            elif m["open"]:
                parsed[command] = (m["open"], m["r1"])
            elif m["o2"]:
                parsed[command] = ("take", m["o2"], m["r2"])
            elif m["o3"]:
                parsed[command] = ("put", m["o3"], m["r3"])
            elif m["treat"]:
                parsed[command] = (m["treat"], m["o4"], m["r4"])
            else:
                parsed[command] = ("use", m["o5"])
        return parsed

    def apply(self, command: str) -> None:
        """Carry out an admissible command as ALFWorld's PDDL domain does, on the parts the goals read."""
        op, *args = self.operations([command])[command]
        if op == "goto":
            self.place = self.spot(args[0])
        elif op == "open":
            self.opened.add(args[0])
        elif op == "close":
            self.opened.discard(args[0])
        elif op == "take":
            self.contents[args[1]].remove(args[0])
            if self.where.get(args[0]) == args[1]:
                del self.where[args[0]]
            self.holding = args[0]
        elif op == "put":
            self.contents[args[1]].append(args[0])
            self.where[args[0]] = args[1]
            self.holding = None
        elif op == "heat":
            self.hot.add(args[0])
            self.cool.discard(args[0])
        elif op == "cool":
            self.cool.add(args[0])
            self.hot.discard(args[0])
        elif op == "clean":
            self.clean.add(args[0])
        elif op == "use":
            self.toggled.add(args[0])

    def copy(self) -> Board:
        twin = object.__new__(Board)
        twin.__dict__.update(self.__dict__)
        twin.contents = {r: list(inside) for r, inside in self.contents.items()}
        twin.where = dict(self.where)
        for name in ("opened", "clean", "hot", "cool", "toggled"):
            setattr(twin, name, set(getattr(self, name)))
        return twin

    def key(self) -> tuple[object, ...]:
        """The state as the planner sees it (equal keys, equal plans)."""
        return (
            self.place,
            self.holding,
            tuple((r, tuple(sorted(inside))) for r, inside in self.contents.items() if inside),
            *(tuple(sorted(s)) for s in (self.opened, self.clean, self.hot, self.cool, self.toggled)),
        )
