"""FrozenLake's held-out wording: the mission and the feedback in sentences training never reads.

Three independent phrasings per template (other sentence structures, not synonyms); the seed picks
one per episode (:mod:`rl4vlm_gym.wording`). The moves keep their names.
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

PHRASES = {
    HELD_OUT: {
        "mission": (
            "Cross the ice to the goal square, keeping clear of the holes.",
            "Get to the goal. Stepping on a hole ends the episode.",
            "Your aim is the goal tile; a hole on the way means failure.",
        ),
        "goal": ("The goal is reached.", "You made it to the goal.", "Arrived: this is the goal tile."),
        "hole": (
            "The ice gave way: you are in a hole.",
            "A hole! The episode is lost.",
            "You dropped through a hole in the ice.",
        ),
        "move": ("One step {action}.", "You head {action}.", "Moving {action} went fine."),
        "slide": (
            "You tried to go {action}, but the ice carried you along.",
            "The slippery ice turned your step {action} into a slide.",
            "Heading {action}, you slipped on the ice.",
        ),
    }
}
