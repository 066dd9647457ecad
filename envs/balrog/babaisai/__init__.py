"""BALROG's BabaIsAI, rebuilt: the rules engine, BALROG's 40 level generators, its text, a
renderer and a solver (see :mod:`~rl4vlm_gym.envs.balrog.babaisai.env`)."""
