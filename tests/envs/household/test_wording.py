"""The households' held-out wording translates every sentence of ALFWorld's grammar."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.household.wording import items, reword


def _rollouts(seeds: int = 12, steps: int = 25, **kwargs):
    """Random and oracle commands (every kind of sentence turns up: examine, help, slice...)."""
    env = gym.make("rl4vlm/Household-v0", level=4, image_size=64, **kwargs)
    rng = np.random.default_rng(0)
    for seed in range(seeds):
        obs, _ = env.reset(seed=seed)
        for _ in range(steps):
            actions = obs["actions"]
            action = actions[int(rng.integers(len(actions)))] if rng.random() < 0.6 else env.unwrapped.oracle_action()
            obs, _, terminated, truncated, _ = env.step(action)
            yield action, obs
            if terminated or truncated:
                break
    env.close()


def test_every_train_feedback_is_reworded() -> None:
    kinds = set()
    for action, obs in _rollouts():
        kinds.add(action.split()[0])
        assert reword(obs["text"], lambda key, **fields: f"<{key}>") != obs["text"], f"{action!r}: {obs['text']!r} kept"
    assert {"go", "open", "take", "examine", "inventory", "look", "help"} <= kinds


def test_image_mode_keeps_only_what_the_image_cannot_show() -> None:
    texts = []
    env = gym.make("rl4vlm/Household-v0", level=2, image_size=64, obs_mode="image", wording="held-out")
    obs, _ = env.reset(seed=1)
    for action in obs["actions"]:
        if action.startswith("go to"):
            texts.append(env.step(action)[0]["text"])
    env.close()
    assert texts and all(text.count(".") == 1 and " you see " not in text for text in texts), texts


def test_lists_lose_alfworlds_articles() -> None:
    assert items("a apple 1, a mug 2, and a pen 1") == "apple 1, mug 2 and pen 1"
    assert items("a apple 1") == "apple 1" and items("nothing") == "nothing"
