"""RL4VLM Gym: rendered environments for training vision-language agents with RL.

Importing the package registers every ``rl4vlm/...`` id with Gymnasium (lazily: no env family is
imported until one of its envs is made)::

    >>> import gymnasium as gym, rl4vlm_gym
    >>> env = gym.make("rl4vlm/NumberLine-v0", obs_mode="text")
    >>> obs, info = env.reset(seed=7)
    >>> sorted(obs)
    ['actions', 'image', 'mission', 'text']
"""

from __future__ import annotations

import gymnasium

from rl4vlm_gym.core import MissingDataError, StepOutcome, VLMEnv
from rl4vlm_gym.parsing import ActionParser, ParseResult
from rl4vlm_gym.registry import (
    EVAL_SEEDS,
    OBS_MODES,
    TEST_SEEDS,
    TRAIN_SEEDS,
    EnvCard,
    env_card,
    list_envs,
    load_plugins,
    register,
)
from rl4vlm_gym.spaces import Unicode, UnicodeTuple

__version__ = "0.1.0"

__all__ = [
    "EVAL_SEEDS",
    "OBS_MODES",
    "TEST_SEEDS",
    "TRAIN_SEEDS",
    "ActionParser",
    "EnvCard",
    "MissingDataError",
    "ParseResult",
    "StepOutcome",
    "Unicode",
    "UnicodeTuple",
    "VLMEnv",
    "env_card",
    "list_envs",
    "register",
]

load_plugins()

# A served env played over OpenEnv's protocol (extra `server`): no card, it is whichever env the server plays.
if "rl4vlm/Remote-v0" not in gymnasium.registry:
    gymnasium.register("rl4vlm/Remote-v0", entry_point="rl4vlm_gym.server.remote:make_remote")
