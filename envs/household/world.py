"""The true state of a procedural household and ALFWorld's rules and text over it.

:class:`House` implements the actions of ALFWorld's PDDL domain (``alfred.pddl``) with the
preconditions and feedback of its TextWorld grammar (``alfred.twl2``), so a command that works in
an ALFWorld game works here and answers with the same sentence:

- ``go to R`` reaches any other receptacle in one step; ``open R`` / ``close R`` there;
- ``take O from R`` needs empty hands and ``R`` open (or not openable); ``move O to R`` (or, with
  ``commands="put"``, the older ``put O in/on R``) needs ``R`` open and able to hold ``O``;
- ``heat``/``cool``/``clean O with R`` need ``O`` in hand at a microwave / fridge / sink basin
  (which need not be open, as in ALFWorld); ``use L`` switches a lamp at the agent's place;
- ``slice O with K`` needs a knife in hand and a sliceable object in view;
- ``examine``, ``look``, ``inventory`` (and ``help`` with the current grammar) describe.

The admissible commands are exactly those whose preconditions hold, sorted as TextWorld sorts
them. Only admissible commands reach :meth:`House.apply`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from rl4vlm_gym.envs.household.goals import Goal
from rl4vlm_gym.envs.household.kinds import APPLIANCES, OBJECTS, RECEPTACLES, ObjectKind, ReceptacleKind
from rl4vlm_gym.envs.household.view import Item, View, carrying, overview, receptacle_sentence

__all__ = ["COMMAND_STYLES", "READ_ONLY", "House", "Receptacle", "Thing"]

COMMAND_STYLES = ("move", "put")
"""``"move"``: ``move O to R`` (ALFWorld >= 0.4 games); ``"put"``: ``put O in/on R`` (json_2.1.1)."""

_HELP = (
    "\nAvailable commands:\n"
    "  look:                             look around your current location\n"
    "  inventory:                        check your current inventory\n"
    "  go to (receptacle):               move to a receptacle\n"
    "  open (receptacle):                open a receptacle\n"
    "  close (receptacle):               close a receptacle\n"
    "  take (object) from (receptacle):  take an object from a receptacle\n"
    "  move (object) to (receptacle):  place an object in or on a receptacle\n"
    "  examine (something):              examine a receptacle or an object\n"
    "  use (object):                     use an object\n"
    "  heat (object) with (receptacle):  heat an object using a receptacle\n"
    "  clean (object) with (receptacle): clean an object using a receptacle\n"
    "  cool (object) with (receptacle):  cool an object using a receptacle\n"
    "  slice (object) with (object):     slice an object using a sharp object\n"
)  # ALFWorld 0.4's help text, verbatim


@dataclass(frozen=True)
class Receptacle:
    """A receptacle of the house: its name (``"cabinet 2"``), kind and room."""

    name: str
    kind: str
    room: str

    @property
    def spec(self) -> ReceptacleKind:
        return RECEPTACLES[self.kind]


@dataclass(frozen=True)
class Thing:
    """An object of the house: its name (``"apple 3"``) and kind."""

    name: str
    kind: str

    @property
    def spec(self) -> ObjectKind:
        return OBJECTS[self.kind]


class House:
    """A household's true state, ALFWorld's rules over it, and what the agent sees.

    Args:
        receptacles: every receptacle, in listing order.
        objects: every object.
        placement: the objects in each receptacle at the start, in listing order.
        closed: the openable receptacles that start closed (the others start open).
        goal: the task.
        commands: ``"move"`` or ``"put"`` (see :data:`COMMAND_STYLES`).
    """

    def __init__(
        self,
        receptacles: tuple[Receptacle, ...],
        objects: tuple[Thing, ...],
        placement: dict[str, list[str]],
        closed: frozenset[str],
        goal: Goal,
        commands: str = "move",
    ) -> None:
        self.receptacles = {r.name: r for r in receptacles}
        self.objects = {o.name: o for o in objects}
        self.goal = goal
        self.commands = commands
        self.contents: dict[str, list[str]] = {r.name: list(placement.get(r.name, ())) for r in receptacles}
        self.where = {o: r for r, inside in self.contents.items() for o in inside}
        self.opened = {r.name for r in receptacles if r.spec.openable and r.name not in closed}
        self.place: str | None = None
        self.holding: str | None = None
        self.clean: set[str] = set()
        self.hot: set[str] = set()
        self.cool: set[str] = set()
        self.sliced: set[str] = set()
        self.on: set[str] = set()
        self.toggled: set[str] = set()
        self._admissible: dict[str, tuple[str, ...]] | None = None
        self._view: View | None = None
        self._key: str | None = None
        self.stage = 0
        self.stages: dict[tuple[int, str], int] = {}
        """The stages numbered so far, by (stage before, command): one table that the copies share."""
        self.parents: dict[int, tuple[int, str, tuple[str, ...]]] = {}
        """How each stage was made: (the stage before, the operation, its arguments); shared too."""

    # Queries --------------------------------------------------------------------------------------

    @cached_property
    def listing(self) -> tuple[str, ...]:
        """Every receptacle name, in the order the room overview lists them."""
        return tuple(self.receptacles)

    @cached_property
    def _by_kind(self) -> dict[str, tuple[str, ...]]:
        kinds: dict[str, list[str]] = {}
        for r in self.receptacles.values():
            kinds.setdefault(r.kind, []).append(r.name)
        return {k: tuple(v) for k, v in kinds.items()}

    def of_kind(self, kind: str) -> tuple[str, ...]:
        """The receptacles of a kind."""
        return self._by_kind.get(kind, ())

    def kinds(self) -> Iterator[tuple[str, str]]:
        """``(name, kind)`` of every object."""
        return ((o.name, o.kind) for o in self.objects.values())

    def things(self, kind: str) -> tuple[str, ...]:
        """The objects of a kind, in the order of :meth:`kinds`."""
        return self._things_by_kind.get(kind, ())

    @cached_property
    def _things_by_kind(self) -> dict[str, tuple[str, ...]]:
        kinds: dict[str, list[str]] = {}
        for o in self.objects.values():
            kinds.setdefault(o.kind, []).append(o.name)
        return {k: tuple(v) for k, v in kinds.items()}

    def visible(self, receptacle: str) -> bool:
        """One can see into (and take from, put into) the receptacle: open or not openable."""
        return not self.receptacles[receptacle].spec.openable or receptacle in self.opened

    def accepts(self, receptacle: str, obj: str) -> bool:
        """ALFWorld's ``canContain``: the receptacle's kind can hold the object's kind."""
        return self.objects[obj].kind in self.receptacles[receptacle].spec.contains

    def appliances(self, verb: str) -> tuple[str, ...]:
        """The receptacles that ``verb`` (``"clean"``, ``"heat"``, ``"cool"``) works with."""
        return self.of_kind(APPLIANCES[verb])

    def spot(self, receptacle: str) -> str:
        """Where the agent stands at ``receptacle`` (the planner's place): the receptacle itself, as each
        stands alone here (in ALFWorld's games several may share a location)."""
        return receptacle

    def around(self) -> list[str]:
        """The objects in the receptacle(s) where the agent stands."""
        return self.contents[self.place] if self.place is not None else []

    def item(self, obj: str) -> Item:
        """The object as seen, with its states."""
        return Item(
            obj,
            self.objects[obj].kind,
            clean=obj in self.clean,
            hot=obj in self.hot,
            cool=obj in self.cool,
            sliced=obj in self.sliced,
            on=obj in self.on,
        )

    def view(self) -> View:
        """What the agent sees now (cached until the state changes)."""
        if self._view is None:
            place, holding = self.place, self.holding
            if place is None:
                self._view = View(self.listing, holding=None if holding is None else self.item(holding))
            else:
                r = self.receptacles[place]
                inside = self.contents[place] if self.visible(place) else ()
                self._view = View(
                    self.listing,
                    place=place,
                    kind=r.kind,
                    openable=r.spec.openable,
                    is_open=place in self.opened,
                    contents=tuple(self.item(o) for o in inside),
                    holding=None if holding is None else self.item(holding),
                    lit=any(o in self.on for o in self.contents[place]),
                    room=r.room,
                )
        return self._view

    def copy(self) -> House:
        """A copy whose state changes apart from this one's: what commands change is copied, the
        receptacle and object tables, the goal and the cached layout are shared (none changes), and
        so are the lists of what is in each receptacle until a command changes one (``take`` and
        ``put`` replace the list they change rather than change it: the searches copy often)."""
        twin = object.__new__(House)
        twin.__dict__.update(self.__dict__)
        twin.contents = dict(self.contents)
        twin.where = dict(self.where)
        twin.opened = set(self.opened)
        for name in ("clean", "hot", "cool", "sliced", "on", "toggled"):
            setattr(twin, name, set(getattr(self, name)))
        twin._view = None
        return twin

    def stage_after(self, command: str) -> int:
        """:attr:`stage` after the admissible ``command``, without applying it.

        ``stage`` names the state of everything but the agent's place among this house and its
        copies: equal stages are equal states up to the place and the order of what lies in a
        receptacle (not always the other way round: two orders of commands that reach one state give
        two stages). ``go to`` and the describing commands keep it, and so does a command that changes
        nothing (heating a hot object); putting an object back where it was just taken from returns
        to the stage before the take; any other command makes it the stage numbered for the pair
        (stage before, command) in a table the copies share, since a command names all it changes
        (``take O from R``, ``use L``...), so the pair fixes the state after it. It is a cheap key for
        what depends only on that part of the state, such as the oracle's distances from nowhere
        (``oracle.Lookahead``)."""
        op, *args = self.admissible()[command]
        if op in READ_ONLY or op == "goto" or self._changes_nothing(op, args):
            return self.stage
        made = self.parents.get(self.stage)
        if op == "put" and made is not None and made[1:] == ("take", (args[0], args[1])):
            return made[0]  # put back where it was just taken from: the state before the take
        stage = self.stages.get((self.stage, command))
        if stage is None:
            stage = self.stages[self.stage, command] = len(self.stages) + 1
            self.parents[stage] = (self.stage, op, tuple(args))
        return stage

    def _changes_nothing(self, op: str, args: list[str]) -> bool:
        """A treatment or a slice of an object already in the state it makes leaves the state as it is."""
        if op == "clean":
            return args[0] in self.clean
        if op == "heat":
            return args[0] in self.hot and args[0] not in self.cool
        if op == "cool":
            return args[0] in self.cool and args[0] not in self.hot
        return op == "slice" and args[0] in self.sliced

    def key(self) -> str:
        """A canonical key of the state: equal states of this house give equal keys (cached until
        the state changes)."""
        if self._key is not None:
            return self._key
        parts = (
            self.place,
            self.holding,
            tuple((r, tuple(sorted(inside))) for r, inside in self.contents.items() if inside),
            tuple(sorted(self.opened)),
            *(tuple(sorted(s)) for s in (self.clean, self.hot, self.cool, self.sliced, self.on, self.toggled)),
        )
        self._key = f"{self._identity}:{hashlib.sha1(repr(parts).encode()).hexdigest()[:16]}"
        return self._key

    @cached_property
    def _identity(self) -> str:
        layout = (self.listing, tuple(sorted(self.objects)), self.goal)
        return hashlib.sha1(repr(layout).encode()).hexdigest()[:8]

    # Commands -------------------------------------------------------------------------------------

    def admissible(self) -> dict[str, tuple[str, ...]]:
        """Every admissible command, sorted, mapped to ``(operation, *arguments)``."""
        if self._admissible is None:
            self._admissible = dict(sorted(self._commands()))
        return self._admissible

    def _commands(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        place, held = self.place, self.holding
        yield "inventory", ("inventory",)
        yield "look", ("look",)
        if self.commands == "move":
            yield "help", ("help",)
        for r in self.listing:
            if r != place:
                yield f"go to {r}", ("goto", r)
        if held is not None:
            yield f"examine {held}", ("examine_object", held)
        if place is None:
            return
        spec = self.receptacles[place].spec
        yield f"examine {place}", ("examine_receptacle", place)
        if spec.openable:
            if place in self.opened:
                yield f"close {place}", ("close", place)
            else:
                yield f"open {place}", ("open", place)
        visible = self.visible(place)
        for o in self.contents[place]:
            ospec = self.objects[o].spec
            if ospec.toggleable:
                yield f"use {o}", ("use", o)
            if held is None and visible and ospec.pickupable:
                yield f"take {o} from {place}", ("take", o, place)
            if held is not None and visible and ospec.sliceable and self.objects[held].spec.sharp:
                yield f"slice {o} with {held}", ("slice", o, held)
        if held is None:
            return
        hspec = self.objects[held].spec
        if visible and self.accepts(place, held):
            yield self.put_command(held, place), ("put", held, place)
        verb = spec.appliance
        if verb is not None and hspec.treatable(verb):
            yield f"{verb} {held} with {place}", (verb, held, place)

    def put_command(self, obj: str, receptacle: str) -> str:
        """The command that puts ``obj`` in ``receptacle``, in this house's grammar."""
        return f"move {obj} to {receptacle}" if self.commands == "move" else f"put {obj} in/on {receptacle}"

    def apply(self, command: str) -> str:
        """Carry out an admissible command and return ALFWorld's feedback."""
        op, *args = self.admissible()[command]
        if op not in READ_ONLY and op != "goto":
            self.stage = self.stage_after(command)
        feedback = getattr(self, f"_do_{op}")(*args)
        if op not in READ_ONLY:
            self._admissible = None
            self._view = None
            self._key = None
        return feedback

    def _seen(self, r: str) -> str:
        return receptacle_sentence(r, self.receptacles[r].spec.openable, r in self.opened, self.contents[r])

    def _do_goto(self, r: str) -> str:
        self.place = r
        return f"You arrive at {r}. {self._seen(r)}"

    def _do_open(self, r: str) -> str:
        self.opened.add(r)
        return f"You open the {r}. {self._seen(r)}"

    def _do_close(self, r: str) -> str:
        self.opened.discard(r)
        return f"You close the {r}."

    def _do_take(self, o: str, r: str) -> str:
        self.contents[r] = [x for x in self.contents[r] if x != o]  # a new list: copies share the old one
        del self.where[o]
        self.holding = o
        return f"You pick up the {o} from the {r}."

    def _do_put(self, o: str, r: str) -> str:
        self.contents[r] = [*self.contents[r], o]  # a new list: copies share the old one
        self.where[o] = r
        self.holding = None
        if self.commands == "move":
            return f"You move the {o} to the {r}."
        return f"You put the {o} in/on the {r}."

    def _do_clean(self, o: str, r: str) -> str:
        self.clean.add(o)
        return f"You clean the {o} using the {r}."

    def _do_heat(self, o: str, r: str) -> str:
        self.hot.add(o)
        self.cool.discard(o)
        return f"You heat the {o} using the {r}."

    def _do_cool(self, o: str, r: str) -> str:
        self.cool.add(o)
        self.hot.discard(o)
        return f"You cool the {o} using the {r}."

    def _do_use(self, o: str) -> str:
        self.on ^= {o}
        self.toggled.add(o)
        return f"You turn on the {o}."  # ALFWorld says "on" once a lamp has ever been toggled

    def _do_slice(self, o: str, knife: str) -> str:
        self.sliced.add(o)
        return f"You sliced the {o} with the {knife}."

    def _do_inventory(self) -> str:
        return carrying(self.holding)

    def _do_look(self) -> str:
        if self.place is None:
            return overview(self.listing)
        return f"You are facing the {self.place}. Next to it, you see nothing."

    def _do_help(self) -> str:
        return _HELP

    def _do_examine_receptacle(self, r: str) -> str:
        return self._seen(r)

    def _do_examine_object(self, o: str) -> str:
        spec = self.objects[o].spec
        if spec.holds_things:
            return f"This is a normal {o}. In it, you see nothing."
        states = [s for s, held in (("hot", o in self.hot), ("cool", o in self.cool)) if held]
        if o in self.clean:
            states.append("clean")
        if states:
            sliced = " sliced" if o in self.sliced else ""
            if states == ["cool"] and not sliced:
                return f"This is a cold {o}."  # ALFWorld's one irregular sentence
            return f"This is a {' and '.join(states)}{sliced} {o}."
        if spec.toggleable:
            return f"This {o} is {'on' if o in self.toggled else 'off'}."
        if o in self.sliced:
            return f"This is a sliced {o}."
        return f"There's nothing special about {o}."


READ_ONLY = frozenset({"inventory", "look", "help", "examine_receptacle", "examine_object"})
"""The operations that describe and change nothing."""
