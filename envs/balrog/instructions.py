"""BALROG's instruction prompts: the first message of its protocol, per env (``get_instruction_prompt``).

Written from BALROG's structure and wording (reference/balrog.md §3: the game, each action with a
short description, tips or the achievements, then "PLAY!"); BALROG does not install here, so the
texts are not byte-compared with its source.
"""

from __future__ import annotations

__all__ = ["babyai_instructions", "crafter_instructions", "minihack_instructions", "nle_instructions"]

_BABYAI_ACTIONS = (
    ("turn left", "turn to the left"),
    ("turn right", "turn to the right"),
    ("go forward", "take one step forward"),
    ("pick up", "pick up the object one step in front of you"),
    ("drop", "drop the object that you are holding"),
    ("toggle", "manipulate the object in front of you"),
)

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


def babyai_instructions(mission: str) -> str:
    """BALROG's BabyAI prompt for ``mission``."""
    return (
        f"You are an agent playing a simple navigation game. Your goal is to {mission}. The following are the "
        "possible actions you can take in the game, followed by a short description of each action:\n\n"
        f"{_listed(_BABYAI_ACTIONS)}\n\n"
        "In a moment I will present you an observation.\n\n"
        "Tips:\n"
        "- Once the desired object you want to interact or pickup in front of you, you can use the 'toggle' action "
        "to interact with it.\n"
        "- It doesn't make sense to repeat the same action over and over if the observation doesn't change.\n\n"
        "PLAY!"
    )


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


_NLE_TIPS = (
    "- When a --More-- would appear, it is dismissed for you; the messages it hid are in the observation.",
    "- A menu or a question waits for its answer: answer with a letter, 'esc' to leave it.",
    "- Prefix-free commands act at once; commands that ask for an item take its inventory letter next.",
    "- It doesn't make sense to repeat the same action over and over if the observation doesn't change.",
)


def nle_instructions() -> str:
    """BALROG's NetHack prompt: the game, the actions (BALROG gives each a description, not
    reproduced here: the names only), tips, "PLAY!"."""
    from rl4vlm_gym.envs.balrog.nethack import NETHACK_ACTIONS

    return (
        "You are an agent playing NetHack. The following are the possible actions you can take in the game:\n\n"
        f"{', '.join(NETHACK_ACTIONS)}.\n\n"
        "In a moment I will present a history of actions and observations from the game.\n"
        "Your goal is to get as far as possible in the game: descend the dungeon and gain experience.\n\n"
        "Tips:\n" + "\n".join(_NLE_TIPS) + "\n\nPLAY!"
    )


def minihack_instructions(goal: str, actions: tuple[str, ...]) -> str:
    """BALROG's MiniHack prompt with its goal line ("reach the stairs down") and the task's actions."""
    return (
        "You are an agent playing MiniHack. The following are the possible actions you can take in the game:\n\n"
        f"{', '.join(actions)}.\n\n"
        "In a moment I will present a history of actions and observations from the game.\n"
        f"Your goal is to {goal}.\n\n"
        "Tips:\n" + "\n".join(_NLE_TIPS) + "\n\nPLAY!"
    )
