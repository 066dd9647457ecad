"""ALFWorld's six task types: their goal sentences and when they are accomplished.

Each :class:`Goal` mirrors the ``(:goal ...)`` of an ALFWorld game's PDDL problem:

==============================  ===========================================================
pick_and_place_simple           an object of the kind is in a receptacle of the kind
look_at_obj_in_light            the agent holds an object of the kind at a place where a
                                lamp of the kind has been switched on
pick_clean_then_place_in_recep  a clean object of the kind is in a receptacle of the kind
pick_heat_then_place_in_recep   a hot one (heating makes a cool object warm again)
pick_cool_then_place_in_recep   a cool one (cooling makes a hot object cold again)
pick_two_obj_and_place          two objects of the kind are in the same receptacle of the kind
==============================  ===========================================================

The sentences are the templates of ALFWorld's ``alfworld/gen/goal_library.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["TASK_TYPES", "TREATMENTS", "Goal", "HouseState"]

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""ALFWorld's task types, in the order of its ids 1..6."""

TREATMENTS = {
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
}
"""The appliance verb a task needs before the object is placed."""

_TEMPLATES = {
    "pick_and_place_simple": ("put a {obj} in {recep}.", "put some {obj} on {recep}."),
    "look_at_obj_in_light": ("look at {obj} under the {lamp}.", "examine the {obj} with the {lamp}."),
    "pick_clean_then_place_in_recep": ("put a clean {obj} in {recep}.", "clean some {obj} and put it in {recep}."),
    "pick_heat_then_place_in_recep": ("put a hot {obj} in {recep}.", "heat some {obj} and put it in {recep}."),
    "pick_cool_then_place_in_recep": ("put a cool {obj} in {recep}.", "cool some {obj} and put it in {recep}."),
    "pick_two_obj_and_place": ("put two {obj} in {recep}.", "find two {obj} and put them in {recep}."),
}


class HouseState(Protocol):
    """What the goals and the oracle read of a household's state: a procedural ``House`` or an
    ALFWorld game's ``Board`` (``alfworld_oracle.py``)."""

    @property
    def goal(self) -> Goal: ...
    @property
    def place(self) -> str | None: ...
    @property
    def holding(self) -> str | None: ...
    @property
    def listing(self) -> tuple[str, ...]: ...
    @property
    def receptacles(self) -> Mapping[str, Any]: ...
    @property
    def objects(self) -> Mapping[str, Any]: ...
    @property
    def contents(self) -> Mapping[str, list[str]]: ...
    @property
    def where(self) -> Mapping[str, str]: ...
    @property
    def opened(self) -> set[str]: ...
    @property
    def clean(self) -> set[str]: ...
    @property
    def hot(self) -> set[str]: ...
    @property
    def cool(self) -> set[str]: ...
    @property
    def toggled(self) -> set[str]: ...
    def of_kind(self, kind: str) -> tuple[str, ...]: ...
    def kinds(self) -> Iterable[tuple[str, str]]: ...
    def things(self, kind: str) -> tuple[str, ...]: ...
    def accepts(self, receptacle: str, obj: str) -> bool: ...
    def appliances(self, verb: str) -> tuple[str, ...]: ...
    def spot(self, receptacle: str) -> str: ...
    def around(self) -> list[str]: ...
    def put_command(self, obj: str, receptacle: str) -> str: ...
    def copy(self) -> HouseState: ...
    def apply(self, command: str) -> object: ...


@dataclass(frozen=True)
class Goal:
    """One task: its type, the object kind, the receptacle (or lamp) kind and its wording.

    Attributes:
        task: one of :data:`TASK_TYPES`.
        obj: the object kind to move or look at.
        recep: the receptacle kind to put it in (``None`` for look_at_obj_in_light).
        lamp: the lamp kind to look under (``None`` for the other tasks).
        template: which of ALFWorld's two sentences states the goal.
    """

    task: str
    obj: str
    recep: str | None = None
    lamp: str | None = None
    template: int = 0

    @property
    def treatment(self) -> str | None:
        """``"clean"``, ``"heat"``, ``"cool"`` or ``None``."""
        return TREATMENTS.get(self.task)

    @property
    def count(self) -> int:
        """How many objects must end up in the receptacle."""
        return 2 if self.task == "pick_two_obj_and_place" else 1

    def sentence(self) -> str:
        """The goal as ALFWorld states it, e.g. ``"put a clean mug in coffeemachine."``."""
        return _TEMPLATES[self.task][self.template].format(obj=self.obj, recep=self.recep, lamp=self.lamp)

    def treated(self, house: HouseState, obj: str) -> bool:
        """``obj`` is in the state the goal asks for (always true without a treatment)."""
        treatment = self.treatment
        return (
            treatment is None
            or (treatment == "clean" and obj in house.clean)
            or (treatment == "heat" and obj in house.hot)
            or (treatment == "cool" and obj in house.cool)
        )

    def placed(self, house: HouseState, receptacle: str) -> int:
        """How many objects that count for the goal are in ``receptacle``."""
        return sum(
            house.objects[o].kind == self.obj and self.treated(house, o) for o in house.contents[receptacle]
        )

    def lit_here(self, house: HouseState) -> bool:
        """A lamp of the goal's kind at the agent's place has been switched on."""
        return any(house.objects[o].kind == self.lamp and o in house.toggled for o in house.around())

    def satisfied(self, house: HouseState) -> bool:
        """Whether the game is won."""
        if self.task == "look_at_obj_in_light":
            held = house.holding
            return held is not None and house.objects[held].kind == self.obj and self.lit_here(house)
        return any(self.placed(house, r) >= self.count for r in house.of_kind(self.recep or ""))

    def progress(self, house: HouseState) -> float:
        """The fraction of the goal's conditions that hold, in ``[0, 1]``."""
        if self.task == "look_at_obj_in_light":
            held = house.holding
            holding = held is not None and house.objects[held].kind == self.obj
            return (holding + self.lit_here(house)) / 2
        best = max((self.placed(house, r) for r in house.of_kind(self.recep or "")), default=0)
        if self.treatment is None:
            return min(best, self.count) / self.count
        treated = any(self.treated(house, o) for o, k in house.kinds() if k == self.obj)
        return (treated + min(best, 1)) / 2
