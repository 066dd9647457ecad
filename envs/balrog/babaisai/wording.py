"""BALROG's words for BabaIsAI: its instruction prompt and its observation text, byte for byte.

Read (not copied): balrog-ai/BALROG af7d1f17 ``balrog/environments/babaisai/__init__.py``
(``ACTIONS``, ``get_instruction_prompt``) and ``base.py`` (``BabaIsAIWrapper.get_ruleset``,
``get_text_observation``, ``textworld_process_obsv``); checked against the golden transcripts in
``tests/envs/balrog/golden/babaisai``.

The observation text (``long_term_context``; ``short_term_context`` is empty):

    Active rules:
    key is win
    baba is you

    Objects on the map:
    rule `key` 5 step to the left and 4 step up
    key 3 step to the left

- "Active rules:" lists the NOUN IS PROPERTY rules in rule order ("lose" for DEFEAT); NOUN IS NOUN
  rules are not shown.
- "Objects on the map:" lists, row by row, the top object of every cell holding a ball, wall, door,
  key or word block (baba objects and the outer wall are not listed), with its offset from the
  first object (row by row) of the noun of the *last* "X is you" rule. BALROG's wording is kept:
  "step" for every move left or up and for a single step ("5 step to the left"), "steps" for more
  than one step right or down; an object at the YOU object's own cell gives an empty line.
- When no object of that noun is left (the rule broken, or "X is you" for an X that is not on the
  map), BALROG's wrapper resets the level in the middle of the episode, and the text of that step
  is "[...] IS YOU rule was broken, environment reset" followed directly by the rules *before* the
  reset and, as the objects, Python's ``repr`` of the new level's observation dictionary (a
  ``defaultdict`` with the new level's text and a PIL image); :func:`reset_text` writes that repr
  with fixed addresses where CPython prints memory addresses.
"""

from __future__ import annotations

from rl4vlm_gym.envs.balrog.babaisai import engine as E

ACTION_DESCRIPTIONS = (
    ("idle", "wait for one step"),
    ("up", "take one step up"),
    ("right", "take one step to the right"),
    ("down", "take one step down"),
    ("left", "take one step to the left"),
)

_TIPS = """Tips:
- Examine the level carefully, noting all objects and text blocks present.
- Identify the current rules, which are formed by text blocks in the format "[Subject] IS [Property]" (e.g. "BABA IS YOU").
- Consider how you can change or create new rules by moving text blocks around.
- Remember that you can only move objects or text that are not defined as "STOP" or similar immovable properties.
- Your goal is usually to reach an object defined as "WIN", but this can be changed.
- Think creatively about how changing rules can alter the properties and behaviors of objects in unexpected ways.
- If stuck, try breaking apart existing rules or forming completely new ones.
- Sometimes the solution involves making yourself a different object or changing what counts as the win condition.

PLAY!"""

INSTRUCTION_PROMPT = (
    "Baba Is You is a puzzle game where you can manipulate the rules of each level. The following are the possible "
    "actions you can take in the game, followed by a short description of each action:\n\n"
    + ",\n".join(f"{action}: {description}" for action, description in ACTION_DESCRIPTIONS)
    + ".\n\n"
    + _TIPS
)
"""BALROG's ``get_instruction_prompt`` for BabaIsAI (the same for every task)."""

_LISTED = {E.WALL: "wall", E.BALL: "ball", E.KEY: "key", E.DOOR: "door"}
# Stand-ins for the memory addresses CPython prints in the repr BALROG shows after a reset.
FUNCTION_ADDRESS = "0x7f0000000000"
IMAGE_ADDRESS = "0x7F0000000000"


def rules_text(world: E.World) -> str:
    """The lines under "Active rules:"."""
    return "\n".join(f"{E.NOUN_NAMES[rule[0]]} is {E.PROPERTIES[rule[1]]}" for rule in world.rules if len(rule) == 2)


def _steps(n: int) -> str:
    return "steps" if n > 1 else "step"


def _offset(dx: int, dy: int) -> str:
    x = f"{dx} {_steps(dx)} to the right" if dx > 0 else f"{-dx} {_steps(dx)} to the left" if dx < 0 else ""
    y = f"{dy} {_steps(dy)} down" if dy > 0 else f"{-dy} {_steps(dy)} up" if dy < 0 else ""
    if x and y:
        return f"{x} and {y}"
    return x or y


def objects_text(world: E.World, you: tuple[int, int]) -> str:
    """The lines under "Objects on the map:", offsets from ``you``."""
    lines = []
    ux, uy = you
    for x, y, code in world.tops():
        kind = code & E.TYPE_MASK
        if E.is_word(kind):
            name = f"rule `{E.word_name(kind)}`"
        elif kind in _LISTED:
            name = _LISTED[kind]
        else:
            continue
        where = _offset(x - ux, y - uy)
        lines.append(f"{name} {where}" if where else "")
    return "\n".join(lines)


def observation_text(world: E.World, you: tuple[int, int]) -> str:
    """BALROG's ``long_term_context`` of a state whose YOU object is at ``you``."""
    return f"Active rules:\n{rules_text(world)}\n\nObjects on the map:\n{objects_text(world, you)}"


def reset_text(broken_world: E.World, new_text: str, image_size: tuple[int, int]) -> str:
    """BALROG's text of the step after which "X is you" found nothing (see the module docstring):
    ``broken_world``'s rules, then the repr of the new level's observation (``new_text``, an image
    of ``image_size`` = (width, height) pixels)."""
    inner = {"long_term_context": new_text, "short_term_context": ""}
    width, height = image_size
    observation = (
        f"defaultdict(<function BabaIsAIWrapper.textworld_process_obsv.<locals>.<lambda> at {FUNCTION_ADDRESS}>, "
        f"{{'text': {inner!r}, 'image': <PIL.Image.Image image mode=RGB size={width}x{height} at {IMAGE_ADDRESS}>}})"
    )
    return f"[...] IS YOU rule was broken, environment resetActive rules:\n{rules_text(broken_world)}\n\nObjects on the map:\n{observation}"
