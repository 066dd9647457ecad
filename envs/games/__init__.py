"""Games family of RL4VLM Gym.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. Keep this module light: it runs on
every ``import rl4vlm_gym``, so it imports no env module (the entry point string below is
imported only when an env is made).
"""

from __future__ import annotations

from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

CARDS = (
    EnvCard(
        id="rl4vlm/TicTacToe-v0",
        entry_point="rl4vlm_gym.envs.games.tic_tac_toe:TicTacToe",
        family="games",
        summary="Walk to the goal on a small grid.",
        skills=("visual-reading", "navigation"),
        levels=("3x3 grid", "4x4 grid", "5x5 grid"),
        default_level=0,
        action_grammar="one of 'up', 'down', 'left', 'right'",
        action_examples=('{"thoughts": "the goal is above me", "action": "up"}', "<action>left</action>", "down"),
        reward_variants=("native", "sparse"),
        success="the agent stands on the goal",
        max_episode_steps=50,
    ),
)


def register() -> None:
    """Register the games envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
