"""FrozenLake family of RL4VLM Gym: Gymnasium's FrozenLake-v1 with image and text observations.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. Keep this module light: it runs on
every ``import rl4vlm_gym``, so it imports no env module (the entry point string below is
imported only when an env is made).
"""

from __future__ import annotations

from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

CARDS = (
    EnvCard(
        id="rl4vlm/FrozenLake-v0",
        entry_point="rl4vlm_gym.envs.frozenlake.frozen_lake:FrozenLake",
        family="frozenlake",
        summary="Cross a frozen lake to the goal without falling into a hole (Gymnasium's FrozenLake-v1).",
        skills=("visual-reading", "planning", "spatial-reasoning"),
        levels=(
            "4x4 map, not slippery",
            "6x6 map, not slippery",
            "8x8 map, not slippery",
            "4x4 map, slippery",
            "8x8 map, slippery",
        ),
        default_level=0,
        action_grammar="one of 'left', 'down', 'right', 'up'",
        action_examples=("<think>the goal is below</think><action>down</action>", '{"action": "right"}', "up"),
        reward_variants=("native",),
        success="the agent reaches the goal",
        max_episode_steps=100,
        references=("Gymnasium FrozenLake-v1 (Farama Foundation), gymnasium.farama.org/environments/toy_text/frozen_lake",),
    ),
)


def register() -> None:
    """Register the frozenlake envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
