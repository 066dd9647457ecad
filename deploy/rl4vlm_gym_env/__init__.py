"""RL4VLM Gym's OpenEnv server as an OpenEnv environment project (see README.md)."""
