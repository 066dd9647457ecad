"""The MiniWorld tasks' held-out wording: missions and feedback in sentences training never reads.

Three independent phrasings per template (other sentence structures, not synonyms); the seed picks
one per episode (:mod:`rl4vlm_gym.wording`). The actions keep MiniWorld's names, and the goal keeps
its colour and shape (``{goal}``: "red box").
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

PHRASES = {
    HELD_OUT: {
        "goto": (
            "Find the {goal} and walk up to it.",
            "Your destination is the {goal}: get right next to it.",
            "Somewhere here is a {goal}. Reach it.",
        ),
        "sidewalk": (
            "Reach the {goal}, keeping off the street the whole way.",
            "Your destination is the {goal}; the street is off limits.",
            "Walk up to the {goal}. Setting foot on the street ends the episode.",
        ),
        "sign": (
            "The sign names a colour: reach the {shape} of that colour, and touch nothing else.",
            "Read the colour on the sign, then walk to the {shape} that has it. Bumping into another object is a failure.",
            "Of the objects here, only the {shape} in the sign's colour counts; reach it without touching the rest.",
        ),
        "pickup": (
            "Collect every one of the {n} objects in the room.",
            "There are {n} objects here; gather them all.",
            "Your job is done once all {n} objects have been picked up.",
        ),
        "putnext": (
            "Carry the red box over and set it down beside the yellow box.",
            "The red box belongs next to the yellow one: move it there.",
            "Bring the red box to the yellow box and drop it close by.",
        ),
        "street": ("You stepped onto the street.", "Off the sidewalk: the street ends the episode.", "That was the street."),
        "wrong": (
            "Wrong object: the sign asked for another.",
            "The sign named a different object than this one.",
            "This is not what the sign points to.",
        ),
        "stop": ("You halted here.", "Stopping ends the search.", "You chose to stop."),
        "picked": ("Got it: the object is now yours.", "The object is collected.", "You lift the object up."),
        "nothing": (
            "Nothing is within reach to lift.",
            "There is no object right in front of you.",
            "Your hands close on empty air.",
        ),
        "holding": ("The object is in your hands now.", "You carry it.", "Lifted: you hold the object."),
    }
}
