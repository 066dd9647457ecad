"""Cards family: RL4VLM's gym-cards (NumberLine, EZPoints, Points24, Blackjack), seeded and fixed.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. It imports only the level ladders;
the env modules load when an env is made.
"""

from __future__ import annotations

from rl4vlm_gym.envs.cards import levels
from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

RL4VLM = "Zhai et al., Fine-Tuning Large Vision-Language Models as Decision-Making Agents via RL, NeurIPS 2024 (gym-cards)"
VERL_AGENT = "Feng et al., Group-in-Group Policy Optimization for LLM Agent Training, NeurIPS 2025 (verl-agent gym_cards)"
_VARIANTS = ("rl4vlm", "verl-agent")
# RL4VLM registers every gym-cards id with max_episode_steps=300; the games' own rules end
# episodes far earlier (see each card's levels).
_MAX_EPISODE_STEPS = 300

CARDS = (
    EnvCard(
        id="rl4vlm/NumberLine-v0",
        entry_point="rl4vlm_gym.envs.cards.numberline:NumberLine",
        family="cards",
        summary="Move the current number to the target number by adding or subtracting one.",
        skills=("visual-reading", "numbers"),
        levels=tuple(level.describe() for level in levels.NUMBERLINE_LEVELS),
        default_level=0,
        action_grammar="one of '-', '+'",
        action_examples=('{"thoughts": "3 < 5, so add one", "action": "+"}', "<action>-</action>", "+"),
        reward_variants=_VARIANTS,
        success="the current number equals the target",
        max_episode_steps=_MAX_EPISODE_STEPS,
        references=(RL4VLM, VERL_AGENT),
    ),
    EnvCard(
        id="rl4vlm/EZPoints-v0",
        entry_point="rl4vlm_gym.envs.cards.ezpoints:EZPoints",
        family="cards",
        summary="Build a formula from the cards, with + and *, that equals the target (12).",
        skills=("visual-reading", "arithmetic", "planning"),
        levels=tuple(level.describe() for level in levels.EZPOINTS_LEVELS),
        default_level=0,
        action_grammar="one token per step: a number 1..10, '+', '*', or '=' to submit; `actions` lists all 13 "
        "tokens every step (RL4VLM's vocabulary), and a number no unused card is worth is refused as an invalid action",
        action_examples=('{"thoughts": "5 + 7", "action": "5"}', "<action>*</action>", "="),
        reward_variants=_VARIANTS,
        success="the submitted formula uses every card once and equals the target",
        max_episode_steps=_MAX_EPISODE_STEPS,
        references=(RL4VLM, VERL_AGENT),
    ),
    EnvCard(
        id="rl4vlm/Points24-v0",
        entry_point="rl4vlm_gym.envs.cards.points24:Points24",
        family="cards",
        summary="Build a formula from the cards with + - * / and parentheses that equals 24.",
        skills=("visual-reading", "arithmetic", "planning"),
        levels=tuple(level.describe() for level in levels.POINTS24_LEVELS),
        default_level=1,
        action_grammar="one token per step: a number (1..10, or 1..13 when faces count 11..13), "
        "'+', '-', '*', '/', '(', ')', or '=' to submit; `actions` lists every token every step (RL4VLM's "
        "vocabulary), and a number no unused card is worth is refused as an invalid action",
        action_examples=('{"thoughts": "start with (", "action": "("}', "<action>10</action>", "/"),
        reward_variants=_VARIANTS,
        success="the submitted formula uses every card once and equals 24 (exact arithmetic)",
        max_episode_steps=_MAX_EPISODE_STEPS,
        references=(RL4VLM, VERL_AGENT),
    ),
    EnvCard(
        id="rl4vlm/Blackjack-v0",
        entry_point="rl4vlm_gym.envs.cards.blackjack:Blackjack",
        family="cards",
        summary="Play a hand of blackjack against the dealer: hit or stand.",
        skills=("visual-reading", "arithmetic", "decision-making"),
        levels=tuple(level.describe() for level in levels.BLACKJACK_LEVELS),
        default_level=0,
        action_grammar="one of 'stand', 'hit' ('stick' is accepted for 'stand' in lenient mode)",
        action_examples=('{"thoughts": "17 against a 6: stand", "action": "stand"}', "<action>hit</action>", "hit"),
        reward_variants=_VARIANTS,
        success="the hand wins against the dealer",
        max_episode_steps=_MAX_EPISODE_STEPS,
        references=(RL4VLM, VERL_AGENT, "Sutton & Barto, Reinforcement Learning: An Introduction, Example 5.1"),
    ),
)


def register() -> None:
    """Register the cards family's ids (the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
