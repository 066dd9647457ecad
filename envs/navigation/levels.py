"""Level ladders of the navigation envs: what each rung changes, as data.

Level parameters map onto MiniWorld's own knobs: the task's size argument, its physics params
(``forward_step``, ``turn_step``) and its domain randomization. Distractors, the start distance and
heading are ours: they make the instruction matter (the goal is named by colour and shape among
objects of other colours and shapes) and move the start away from the goal.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LADDERS", "NavLevel"]


@dataclass(frozen=True)
class NavLevel:
    """One rung of a navigation ladder.

    Attributes:
        size: the task's size argument (room side, hallway length, maze rows and columns, number of
            objects...; ``size_label`` says which); ``None`` keeps MiniWorld's default.
        size_label: ``size`` in words, for the env card.
        distractors: objects of other colours and shapes placed beside the goal; with any, the goal's
            own colour and shape are drawn too, so only the instruction tells them apart.
        min_start_distance: the agent starts at least this far (metres) from the goal.
        random_heading: the agent starts facing a uniformly random direction.
        forward_step: metres per ``move forward`` / ``move back`` (MiniWorld's default: 0.15).
        turn_step: degrees per turn (MiniWorld's default: 15; must divide 360).
        domain_rand: MiniWorld's visual domain randomization (sky, light, textures, object colour
            bias, camera height, pitch and field of view); the dynamics stay fixed.
    """

    size: float | None = None
    size_label: str = ""
    distractors: int = 0
    min_start_distance: float = 0.0
    random_heading: bool = False
    forward_step: float = 0.15
    turn_step: int = 15
    domain_rand: bool = False

    def __post_init__(self) -> None:
        if 360 % self.turn_step:
            raise ValueError(f"turn_step={self.turn_step} must divide 360")

    def describe(self) -> str:
        """The level in one line, for the env card."""
        parts = [self.size_label] if self.size_label else []
        if self.distractors:
            parts.append(f"{self.distractors} distractors (goal drawn by colour and shape)")
        if self.min_start_distance:
            parts.append(f"start at least {self.min_start_distance:g} m from the goal")
        if self.random_heading:
            parts.append("random start heading")
        parts.append(f"forward {self.forward_step:g} m, turn {self.turn_step}°")
        if self.domain_rand:
            parts.append("visual domain randomization")
        return "; ".join(parts)


def _ladder(label: str, sizes: tuple[float | None, ...] = (None,)) -> tuple[NavLevel, ...]:
    """The common ladder: MiniWorld's task, then distractors, a far start and a random heading, then
    visual domain randomization (each rung keeps the previous one's changes). ``sizes`` gives the
    first rungs' size and, optionally, a bigger one for the last two."""
    size, big = sizes[0], sizes[-1]

    def sized(s: float | None) -> str:
        return f"{label} {s:g}" if s is not None and label else label

    far = {"distractors": 4, "min_start_distance": 3.0, "random_heading": True}
    return (
        NavLevel(size=size, size_label=sized(size)),
        NavLevel(size=size, size_label=sized(size), distractors=2),
        NavLevel(size=big, size_label=sized(big), **far),  # type: ignore[arg-type]
        NavLevel(size=big, size_label=sized(big), domain_rand=True, **far),  # type: ignore[arg-type]
    )


_FAST = {"forward_step": 0.7, "turn_step": 45}  # MiniWorld's *Fast variants and Sign

LADDERS: dict[str, tuple[NavLevel, ...]] = {
    "Hallway": _ladder("hallway length", (12, 16)),
    "OneRoom": (NavLevel(size=6, size_label="room side 6", **_FAST), *_ladder("room side", (10, 12))),  # type: ignore[arg-type]
    "FourRooms": _ladder("four 6x6 rooms"),
    "WallGap": _ladder("two rooms joined by a gap"),
    "TMaze": _ladder("T junction"),
    "YMaze": _ladder("Y junction"),
    "Maze": (
        NavLevel(size=2, size_label="maze 2x2", **_FAST),  # type: ignore[arg-type]
        NavLevel(size=3, size_label="maze 3x3", **_FAST),  # type: ignore[arg-type]
        NavLevel(size=3, size_label="maze 3x3"),
        NavLevel(size=3, size_label="maze 3x3", distractors=2),
        NavLevel(size=4, size_label="maze 4x4", distractors=3, random_heading=True),
        NavLevel(size=4, size_label="maze 4x4", distractors=3, random_heading=True, domain_rand=True),
    ),
    "Sidewalk": _ladder("sidewalk beside a street"),
    "Sign": (
        NavLevel(size_label="three boxes, three keys, a sign", **_FAST),  # type: ignore[arg-type]
        NavLevel(size_label="three boxes, three keys, a sign", random_heading=True, **_FAST),  # type: ignore[arg-type]
        NavLevel(size_label="three boxes, three keys, a sign", random_heading=True, domain_rand=True, **_FAST),  # type: ignore[arg-type]
    ),
    "PickupObjects": (
        NavLevel(size=2, size_label="objects to pick up: 2"),
        NavLevel(size=3, size_label="objects to pick up: 3"),
        NavLevel(size=5, size_label="objects to pick up: 5"),
        NavLevel(size=5, size_label="objects to pick up: 5", domain_rand=True),
    ),
    "PutNext": (
        NavLevel(size=8, size_label="room side 8"),
        NavLevel(size=12, size_label="room side 12"),
        NavLevel(size=12, size_label="room side 12", random_heading=True, domain_rand=True),
    ),
}
