"""Navigation family: Farama MiniWorld's 3-D tasks with text actions, levels and an oracle planner.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. It imports only the level ladders:
MiniWorld, pyglet and the GL context load when an env is made (extra ``nav``).
"""

from __future__ import annotations

from rl4vlm_gym.envs.navigation.levels import LADDERS
from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

MINIWORLD = "Chevalier-Boisvert et al., Minigrid & Miniworld, NeurIPS 2023 Datasets and Benchmarks (Farama MiniWorld 2.1.0)"
VL_DAC = "Bredis et al., Enhancing Vision-Language Model Training with RL in Synthetic Worlds for Real-World Success, 2025 (VL-DAC)"
_VARIANTS = ("miniworld", "vl-dac")
_TURNS = "'turn left', 'turn right', 'move forward', 'move back'"
_MOVES = f"one of {_TURNS} (or VL-DAC's numbers 0..3)"
_EXAMPLES = ('{"thoughts": "the box is ahead", "action": 2}', "<action>turn left</action>", "move forward")


def _card(task: str, summary: str, max_steps: int, default_level: int = 0, **overrides: object) -> EnvCard:
    fields: dict[str, object] = {
        "id": f"rl4vlm/MiniWorld-{task}-v1",
        "entry_point": f"rl4vlm_gym.envs.navigation.tasks:{task}",
        "family": "navigation",
        "summary": summary,
        "skills": ("3d-navigation", "visual-search", "instruction-following"),
        "levels": tuple(level.describe() for level in LADDERS[task]),
        "default_level": default_level,
        "action_grammar": _MOVES,
        "action_examples": _EXAMPLES,
        "reward_variants": _VARIANTS,
        "success": "the agent reaches the named object",
        # MiniWorld's own limits; VL-DAC trains with gym.make(..., max_episode_steps=128).
        "max_episode_steps": max_steps,
        "references": (MINIWORLD, VL_DAC),
        "extra": "nav",
        "timeout_reward": True,
    }
    fields.update(overrides)
    return EnvCard(**fields)  # type: ignore[arg-type]


CARDS = (
    _card("Hallway", "Walk down a hallway to the named object at its end.", 250),
    _card("OneRoom", "Find the named object in one big room.", 180, default_level=1),
    _card("FourRooms", "Find the named object in one of four connected rooms.", 250),
    _card("WallGap", "Go through the gap in a wall to the named object behind it.", 300),
    _card("TMaze", "Find the named object in one arm of a T junction.", 280),
    _card("YMaze", "Find the named object in one arm of a Y junction.", 280),
    _card("Maze", "Find the named object in a maze of rooms.", 384, default_level=2),  # T of its 4x4 levels
    _card("Sidewalk", "Walk along a sidewalk to the named object without stepping into the street.", 150,
          success="the agent reaches the named object without entering the street"),
    _card("Sign", "Read the sign and go to the box or key of the colour it names.", 20,
          skills=("3d-navigation", "visual-reading", "instruction-following"),
          action_grammar="one of 'turn left', 'turn right', 'move forward', 'stop' (or 0..3)",
          success="the agent touches the object of the sign's colour and the named shape"),
    _card("PickupObjects", "Pick up every object in the yard.", 400, default_level=2,
          action_grammar=f"one of {_TURNS}, 'pick up' (or 0..4)", success="every object is picked up",
          action_examples=('{"thoughts": "the ball is right in front", "action": "pick up"}', "<action>4</action>", "turn right")),
    _card("PutNext", "Carry the red box next to the yellow box.", 250, default_level=1,
          skills=("3d-navigation", "object-manipulation", "instruction-following"),
          action_grammar=f"one of {_TURNS}, 'pick up', 'drop' (or 0..5)",
          success="the red box is put down next to the yellow box",
          action_examples=('{"thoughts": "I hold the red box", "action": "drop"}', "<action>pick up</action>", "move back")),
)  # fmt: skip


def register() -> None:
    """Register the navigation family's ids (the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
