"""Household family: ALFWorld's household tasks, procedurally generated and from real games.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. It imports only the level ladder;
the procedural envs need nothing beyond the core install, ``rl4vlm/ALFWorld-v0`` needs the
``household`` extra (``alfworld`` and ``textworld``) and ALFWorld's game files.
"""

from __future__ import annotations

from rl4vlm_gym.envs.household.levels import LEVELS
from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

ALFWORLD = "Shridhar et al., ALFWorld: Aligning Text and Embodied Environments for Interactive Learning, ICLR 2021"
GIGPO = "Feng et al., Group-in-Group Policy Optimization for LLM Agent Training, 2025 (GiGPO, verl-agent)"
_VARIANTS = ("alfworld", "verl-agent")
_GRAMMAR = (
    "ALFWorld's commands: go to R, open R, close R, take O from R, move O to R (or put O in/on R), "
    "heat/cool/clean O with R, use L, slice O with K, examine X, look, inventory, help"
)
_EXAMPLES = (
    '{"thoughts": "the mug may be in a cabinet", "action": "go to cabinet 1"}',
    "<think>I hold the apple</think><action>heat apple 1 with microwave 1</action>",
    "take mug 1 from countertop 2",
)
_STEPS = 50  # ALFWorld's max_nb_steps_per_episode (base_config.yaml)

CARDS = (
    EnvCard(
        id="rl4vlm/Household-v0",
        entry_point="rl4vlm_gym.envs.household.household:Household",
        family="household",
        summary="Accomplish one of ALFWorld's six household tasks in a procedural house.",
        skills=("household-tasks", "exploration", "instruction-following", "multi-task"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="the task's goal holds (as in ALFWorld's PDDL goal)",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-PickPlace-v0",
        entry_point="rl4vlm_gym.envs.household.household:PickPlace",
        family="household",
        summary="Put an object of a named kind in a receptacle of a named kind.",
        skills=("household-tasks", "exploration", "instruction-following"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="an object of the kind is in a receptacle of the kind",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-Look-v0",
        entry_point="rl4vlm_gym.envs.household.household:Look",
        family="household",
        summary="Examine an object of a named kind under a lamp that is switched on.",
        skills=("household-tasks", "exploration", "instruction-following"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="the agent holds the object where a lamp of the kind has been switched on",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-Clean-v0",
        entry_point="rl4vlm_gym.envs.household.household:Clean",
        family="household",
        summary="Clean an object at a sink basin and put it in a receptacle.",
        skills=("household-tasks", "exploration", "instruction-following", "object-state"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="a clean object of the kind is in a receptacle of the kind",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-Heat-v0",
        entry_point="rl4vlm_gym.envs.household.household:Heat",
        family="household",
        summary="Heat an object in a microwave and put it in a receptacle.",
        skills=("household-tasks", "exploration", "instruction-following", "object-state"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="a hot object of the kind is in a receptacle of the kind",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-Cool-v0",
        entry_point="rl4vlm_gym.envs.household.household:Cool",
        family="household",
        summary="Cool an object in a fridge and put it in a receptacle.",
        skills=("household-tasks", "exploration", "instruction-following", "object-state"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="a cool object of the kind is in a receptacle of the kind",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/Household-PickTwo-v0",
        entry_point="rl4vlm_gym.envs.household.household:PickTwo",
        family="household",
        summary="Put two objects of a named kind in the same receptacle.",
        skills=("household-tasks", "exploration", "instruction-following", "counting"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="two objects of the kind are in one receptacle of the kind",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
    ),
    EnvCard(
        id="rl4vlm/ALFWorld-v0",
        entry_point="rl4vlm_gym.envs.household.alfworld:ALFWorld",
        family="household",
        summary="Play real ALFWorld games (TextWorld, PDDL) with a rendered view of the true state.",
        skills=("household-tasks", "exploration", "instruction-following", "transfer"),
        levels=("the real ALFWorld games of the chosen split and task types",),
        default_level=0,
        action_grammar="the game's own grammar: go to R, open R, close R, take O from R, move O to R (or put O in/on R), heat/cool/clean O with R, use L, slice O with K, examine X, look, inventory, help",
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success="TextWorld reports the game won",
        max_episode_steps=_STEPS,
        references=(ALFWORLD, GIGPO),
        extra="household",
    ),
)


def register() -> None:
    """Register the household family's ids (the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
