"""Reference baselines (VL-DAC, RL4VLM, LOOP, GiGPO) on one shared trainer; installed as
``rl4vlm_gym.baselines``. Nothing is implemented here yet: the baselines issue builds them."""
