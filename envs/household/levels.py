"""The household level ladder: how big the house is, how much hides, which tasks appear.

Level 2 is the size of an ALFWorld room (ALFWorld's games have 10-40 receptacles and 20-60
objects, and every container starts closed); levels 3 and 4 join several rooms into a house.
"""

from __future__ import annotations

from dataclasses import dataclass

from rl4vlm_gym.envs.household.goals import TASK_TYPES

__all__ = ["LEVELS", "HouseLevel"]


@dataclass(frozen=True)
class HouseLevel:
    """One rung of the ladder.

    Attributes:
        rooms: rooms in the house (a kitchen, living room, bedroom or bathroom each).
        receptacles: receptacles per room.
        objects: objects per room besides the task's own.
        distractors: objects of kinds like the target's (a cup when the task names a mug).
        closed: containers (cabinets, drawers, fridge, microwave, safes) start closed.
        hidden: the task's objects may start inside a closed container.
        tasks: the task types ``rl4vlm/Household-v0`` draws from; the one-task ids ignore it.
    """

    rooms: int
    receptacles: int
    objects: int
    distractors: int
    closed: bool
    hidden: bool
    tasks: tuple[str, ...]

    def describe(self) -> str:
        """One line for the env card."""
        rooms = "1 room" if self.rooms == 1 else f"{self.rooms} rooms"
        containers = "containers start closed" if self.closed else "containers start open"
        hidden = ", targets may be shut away" if self.hidden else ""
        tasks = "all six task types" if len(self.tasks) == len(TASK_TYPES) else ", ".join(self.tasks)
        return (
            f"{rooms}, {self.receptacles} receptacles and {self.objects} objects per room, "
            f"{self.distractors} look-alike distractors; {containers}{hidden}; Household-v0 tasks: {tasks}"
        )


_SIMPLE = ("pick_and_place_simple", "look_at_obj_in_light")
_TREATED = ("pick_clean_then_place_in_recep", "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep")

LEVELS = (
    HouseLevel(rooms=1, receptacles=6, objects=4, distractors=0, closed=False, hidden=False, tasks=_SIMPLE),
    HouseLevel(rooms=1, receptacles=10, objects=8, distractors=2, closed=True, hidden=False, tasks=_SIMPLE + _TREATED),
    HouseLevel(rooms=1, receptacles=16, objects=16, distractors=3, closed=True, hidden=True, tasks=TASK_TYPES),
    HouseLevel(rooms=2, receptacles=14, objects=14, distractors=4, closed=True, hidden=True, tasks=TASK_TYPES),
    HouseLevel(rooms=3, receptacles=16, objects=18, distractors=6, closed=True, hidden=True, tasks=TASK_TYPES),
)
