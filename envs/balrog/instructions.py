"""BALROG's instruction prompts: the first message of its protocol, per env (``get_instruction_prompt``).

Written from BALROG's structure and wording (reference/balrog.md §3: the game, each action with a
short description, tips or the achievements, then "PLAY!"); BALROG does not install here, so the
texts are not byte-compared with its source.
"""

from __future__ import annotations

__all__ = [
    "TEXTWORLD_STEPS_IN_BALROG",
    "crafter_instructions",
    "textworld_instructions",
]

_CRAFTER_ACTIONS = (
    ("Noop", "do nothing"),
    ("Move West", "move west on flat ground"),
    ("Move East", "move east on flat ground"),
    ("Move North", "move north on flat ground"),
    ("Move South", "move south on flat ground"),
    ("Do", "Multiuse action to collect material, drink from lake and hit creature in front"),
    ("Sleep", "sleep when energy level is below maximum"),
    ("Place Stone", "place a stone in front"),
    ("Place Table", "place a table"),
    ("Place Furnace", "place a furnace"),
    ("Place Plant", "place a plant"),
    ("Make Wood Pickaxe", "craft a wood pickaxe with a nearby table and wood in inventory"),
    ("Make Stone Pickaxe", "craft a stone pickaxe with a nearby table, wood, and stone in inventory"),
    ("Make Iron Pickaxe", "craft an iron pickaxe with a nearby table and furnace, wood, coal, and iron in inventory"),
    ("Make Wood Sword", "craft a wood sword with a nearby table and wood in inventory"),
    ("Make Stone Sword", "craft a stone sword with a nearby table, wood, and stone in inventory"),
    ("Make Iron Sword", "craft an iron sword with a nearby table and furnace, wood, coal, and iron in inventory"),
)


def _listed(actions: tuple[tuple[str, str], ...]) -> str:
    return ",\n".join(f"{name}: {what}" for name, what in actions) + "."


def crafter_instructions(achievements: tuple[str, ...]) -> str:
    """BALROG's Crafter prompt; ``achievements`` in crafter's names (``collect_wood``)."""
    listed = "\n".join(f"{i}. {name.replace('_', ' ').title()}" for i, name in enumerate(achievements, 1))
    return (
        "You are an agent playing Crafter. The following are the only valid actions you can take in the game, "
        "followed by a short description of each action:\n\n"
        f"{_listed(_CRAFTER_ACTIONS)}\n\n"
        f"These are the game achievements you can get:\n{listed}\n\n"
        "In a moment I will present a history of actions and observations from the game.\n"
        "Your goal is to get as far as possible by completing all the achievements.\n\n"
        "PLAY!"
    )


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
