"""What the agent sees where it stands, shared by the procedural households and real ALFWorld games.

A :class:`View` is the single source of the household image and of the state in words: both envs
build one from their true state (our own state, or the PDDL facts of a TextWorld game), the
renderer draws it and :func:`describe` says it, so the image and the text carry the same facts.
The sentences are ALFWorld's (its ``alfred.twl2`` grammar), article quirks included ("a apple 1").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Item", "View", "carrying", "describe", "list_things", "overview", "receptacle_sentence", "without_view"]


@dataclass(frozen=True)
class Item:
    """An object as seen: its name (``"apple 3"``), kind (``"apple"``) and visible states."""

    name: str
    kind: str
    clean: bool = False
    hot: bool = False
    cool: bool = False
    sliced: bool = False
    on: bool = False
    """A switched-on lamp."""


@dataclass(frozen=True)
class View:
    """Where the agent is and what it sees there.

    Attributes:
        receptacles: every receptacle of the household, in ALFWorld's listing order.
        place: the receptacle the agent stands at (``"countertop 1"``), or ``None`` in the middle
            of the room, where an episode starts.
        kind: the receptacle's kind (``"countertop"``), ``None`` with ``place``.
        openable: the receptacle opens and closes.
        is_open: it is open (always ``False`` when it is not openable).
        contents: what is in or on it, in listing order; empty when it is closed.
        holding: what the agent carries.
        lit: a lamp at this place is switched on.
        room: the room kind (``"kitchen"``), or ``""`` when unknown.
    """

    receptacles: tuple[str, ...]
    place: str | None = None
    kind: str | None = None
    openable: bool = False
    is_open: bool = False
    contents: tuple[Item, ...] = ()
    holding: Item | None = None
    lit: bool = False
    room: str = ""


def list_things(names: tuple[str, ...] | list[str]) -> str:
    """ALFWorld's list: ``"a X"``, ``"a X, and a Y"``, ``"a X, a Y, and a Z"`` or ``"nothing"``."""
    if not names:
        return "nothing"
    things = [f"a {name}" for name in names]
    if len(things) == 1:
        return things[0]
    return ", ".join(things[:-1]) + ", and " + things[-1]


def receptacle_sentence(place: str, openable: bool, is_open: bool, contents: tuple[str, ...] | list[str]) -> str:
    """ALFWorld's ``examineReceptacle`` feedback: what is on or in the receptacle, or that it is closed."""
    if openable and is_open:
        return f"The {place} is open. In it, you see {list_things(contents)}."
    if openable:
        return f"The {place} is closed."
    return f"On the {place}, you see {list_things(contents)}."


def overview(receptacles: tuple[str, ...]) -> str:
    """ALFWorld's first ``look``: the receptacles of the room."""
    return f"You are in the middle of a room. Looking quickly around you, you see {list_things(receptacles)}."


def carrying(holding: str | None) -> str:
    """ALFWorld's ``inventory`` feedback."""
    return f"You are carrying: a {holding}." if holding else "You are not carrying anything."


_STATE_WORDS = (("clean", "clean"), ("hot", "hot"), ("cool", "cold"), ("sliced", "sliced"), ("on", "switched on"))


def _seen(item: Item) -> str:
    """An item's name with the states the image badges on it: ``"apple 1 (clean, sliced)"``."""
    states = [word for attr, word in _STATE_WORDS if getattr(item, attr)]
    return f"{item.name} ({', '.join(states)})" if states else item.name


def describe(view: View) -> str:
    """The view in ALFWorld's sentences: the same facts the image shows (objects' states too,
    which ALFWorld's own text leaves out)."""
    holding = carrying(_seen(view.holding) if view.holding else None)
    if view.place is None:
        return f"{overview(view.receptacles)} {holding}"
    names = tuple(_seen(item) for item in view.contents)
    lamp = " The lamp here is on." if view.lit else ""
    return f"You are at the {view.place}. {receptacle_sentence(view.place, view.openable, view.is_open, names)}{lamp} {holding}"


_VIEW_PART = re.compile(r"^(You (?:arrive at|open the) [^.]*\.) .*", re.DOTALL)


def without_view(feedback: str) -> str:
    """The feedback without what the image shows, for ``obs_mode="image"``:
    ``"You arrive at desk 1. On the desk 1, you see a pen 1."`` becomes ``"You arrive at desk 1."``."""
    return _VIEW_PART.sub(r"\1", feedback)
