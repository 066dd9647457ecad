"""Env families shipped with RL4VLM Gym; installed as ``rl4vlm_gym.envs``.

Each family is a sub-package holding its envs, generator, oracle, renderer and assets, and a
``register`` function named in the ``rl4vlm_gym.envs`` entry-point group of ``setup.cfg``.
"""
