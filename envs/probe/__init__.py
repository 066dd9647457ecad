"""Probe family: one-step tasks that check a training pipeline end to end.

``register`` is this family's ``rl4vlm_gym.envs`` entry point; the env module loads when an env
is made.
"""

from __future__ import annotations

from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

CARDS = (
    EnvCard(
        id="rl4vlm/ColourNaming-v0",
        entry_point="rl4vlm_gym.envs.probe.colour:ColourNaming",
        family="probe",
        summary="Name the colour of the image in one step (a check that an RL pipeline learns).",
        skills=("visual-reading",),
        levels=(
            "4 colours filling the whole image",
            "8 colours filling the whole image",
            "8 colours filling a small square on white",
        ),
        default_level=0,
        action_grammar="one colour name: red, green, blue, yellow (level 0; also purple, orange, black, grey)",
        action_examples=('{"thoughts": "the image is red", "action": "red"}', "<action>blue</action>", "green"),
        reward_variants=("default",),
        success="the named colour is the image's",
        max_episode_steps=1,
    ),
)


def register() -> None:
    """Register the probe envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
