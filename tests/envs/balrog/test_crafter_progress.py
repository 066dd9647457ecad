"""balrog/Crafter-v0's progress in the inner loop: each achievement counts once, however often it is
unlocked again (test_crafter.py's rules tests are ``slow``: most of them generate several worlds).

One world is generated (seed 0, as test_crafter.py's; about 0.1 s once crafter's noise is loaded),
then the game is written on, as test_crafter.py does."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("balrog")


def test_progress_and_success_count_each_achievement_once() -> None:
    env = gym.make("balrog/Crafter-v0", obs_mode="text")
    env.reset(seed=0)
    game = env.unwrapped.game
    world, player = game._world, game._player
    front = player.pos + np.array(player.facing)
    world[front] = "tree"
    _, reward, terminated, _, info = env.step("Do")  # collect_wood: the first achievement
    assert reward == 1.0 and info["progress"] == pytest.approx(1 / 22) and not terminated
    world[front] = "tree"  # collecting wood left grass
    _, reward, _, _, info = env.step("Do")  # wood again: crafter counts 2, no new achievement
    assert player.achievements["collect_wood"] == 2
    assert reward == 0.0 and info["progress"] == pytest.approx(1 / 22)
    assert env.unwrapped.balrog_stats()["score"] == 1.0
    # 21 achievements, each unlocked several times: 21/22, not done; then all 22: success
    names = list(player.achievements)
    for name in names[:21]:
        player.achievements[name] = 3
    _, _, terminated, _, info = env.step("Noop")
    assert info["progress"] == pytest.approx(21 / 22) and not terminated and not info["success"]
    assert env.unwrapped.balrog_stats()["progression"] == pytest.approx(21 / 22)
    player.achievements[names[21]] = 1
    _, _, terminated, _, info = env.step("Noop")
    assert info["progress"] == 1.0 and terminated and info["success"]
    env.close()
