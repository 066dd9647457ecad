"""BALROG's instruction prompts: the first message of its protocol, per env (``get_instruction_prompt``).

Written from BALROG's structure and wording (reference/balrog.md §3: the game, each action with a
short description, tips or the achievements, then "PLAY!"); BALROG does not install here, so the
texts are not byte-compared with its source.
"""

from __future__ import annotations

__all__ = [
    "TEXTWORLD_STEPS_IN_BALROG",
    "textworld_instructions",
]


def _listed(actions: tuple[tuple[str, str], ...]) -> str:
    return ",\n".join(f"{name}: {what}" for name, what in actions) + "."


# TextWorld's command list, as its games' "help" gives it (BALROG lists these in its prompts).
_TEXTWORLD_COMMANDS = (
    ("look", "describe the current room"),
    ("goal", "print the goal of this game"),
    ("inventory", "print player's inventory"),
    ("go <dir>", "move the player north, east, south or west"),
    ("examine ...", "examine something more closely"),
    ("eat ...", "eat edible food"),
    ("open ...", "open a door or a container"),
    ("close ...", "close a door or a container"),
    ("drop ...", "drop an object on the floor"),
    ("take ...", "take an object that is on the floor"),
    ("put ... on ...", "place an object on a supporter"),
    ("take ... from ...", "take an object from a container or a supporter"),
    ("insert ... into ...", "place an object into a container"),
    ("lock ... with ...", "lock a door or a container with a key"),
    ("unlock ... with ...", "unlock a door or a container with a key"),
)
_TEXTWORLD_GAMES = {
    "treasure_hunter": "You are an agent playing TextWorld's Treasure Hunter, a text-based adventure game: you are in a "
    "randomly generated house of rooms and must find and take a specific object, without taking the wrong one.",
    "the_cooking_game": "You are an agent playing TextWorld's Cooking Game, a text-based adventure game: you must read the "
    "cookbook in the kitchen, gather its ingredients from the rooms, prepare them as the recipe says, cook the meal and eat it.",
    "coin_collector": "You are an agent playing TextWorld's Coin Collector, a text-based adventure game: you must find "
    "the coin at the end of a chain of rooms and take it.",
}
TEXTWORLD_STEPS_IN_BALROG = {"treasure_hunter": 40, "the_cooking_game": 80, "coin_collector": 25}
"""The step counts BALROG's TextWorld prompts state; its step limit is 80 for every task, and our
prompt states the real limit (``textworld_instructions``)."""


def textworld_instructions(task: str, steps: int = 80) -> str:
    """BALROG's TextWorld prompt for ``task``: the game, its commands, the step budget, "PLAY!".
    BALROG's prompts say 40, 80 and 25 steps (``TEXTWORLD_STEPS_IN_BALROG``) where every task
    allows 80; this one states ``steps``, the real limit."""
    return (
        f"{_TEXTWORLD_GAMES[task]} The following are the commands you can type, followed by a short description "
        "of each (replace ... with the names of things in the game):\n\n"
        f"{_listed(_TEXTWORLD_COMMANDS)}\n\n"
        f"You have {steps} steps to complete the task. Restarting is forbidden.\n\n"
        "In a moment I will present you an observation.\n\n"
        "PLAY!"
    )
