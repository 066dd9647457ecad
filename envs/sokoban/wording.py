"""Sokoban's held-out wording: the mission and the feedback in sentences training never reads.

Three independent phrasings per template (other sentence structures, not synonyms); the seed picks
one per episode (:mod:`rl4vlm_gym.wording`). The moves keep their names (``up``, ``left``...).
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

PHRASES = {
    HELD_OUT: {
        "mission": (
            "Get each box onto a goal spot by pushing it; boxes can be pushed but never pulled.",
            "The puzzle is solved once all the boxes rest on targets. Walk into a box to shove it.",
            "Shove the boxes around until no box is left off a target.",
        ),
        "wall": ("There is a wall in that direction.", "That way is walled off.", "Blocked: a wall stands there."),
        "box_blocked": (
            "Something behind the box stops it from moving.",
            "That box is stuck on that side.",
            "The push fails: the box has no room to go.",
        ),
        "move": ("One step {action}.", "You walk {action}.", "Moving {action} went fine."),
        "solved": (
            "All the boxes sit on targets: the puzzle is done.",
            "Solved! No box is left off a target.",
            "Every target now holds a box.",
        ),
        "box_on": (
            "The box you pushed {action} now rests on a target.",
            "Pushing {action} put a box on a target.",
            "A box slid {action} onto a target.",
        ),
        "box_off": (
            "The box you pushed {action} has left its target.",
            "Pushing {action} moved a box off a target.",
            "A box slid {action} away from a target.",
        ),
        "push": ("A box moves one square {action}.", "You shove a box {action}.", "Pushing {action}: the box moves with you."),
    }
}
