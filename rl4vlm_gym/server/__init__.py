"""RL4VLM Gym envs over OpenEnv's protocol (being documented)."""

import rl4vlm_gym.server._openenv  # noqa: F401 - first: openenv-core without its web UI
