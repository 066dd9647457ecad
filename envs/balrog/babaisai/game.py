"""One BabaIsAI episode as BALROG plays it: the original env's step, reward and step budget, and
BALROG's wrapper around it (its text, its progression, its reset when "X is you" finds nothing).

Read (not copied): nacloos/baba-is-ai ad466e027ad0 ``baba/grid.py`` (``BabaIsYouEnv.reset``,
``step``, ``reward``, ``get_reward``: ``1 - 0.9 * step_count / max_steps`` on a win, -1 on a loss,
``done`` once ``step_count >= max_steps`` = 100) and balrog-ai/BALROG af7d1f17
``balrog/environments/babaisai/base.py`` (``BabaIsAIWrapper.reset`` / ``step`` /
``textworld_process_obsv``: progression 1.0 when a step ends the episode with a reward above 0,
else 0.0; a new level when the wrapper finds no "you" object, drawn from the same global
generator, which resets the env's step count and the progression).
"""

from __future__ import annotations

import numpy as np

from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai import levels, wording

MAX_STEPS = 100  # the original env's max_steps, which BALROG's evaluator takes as the episode's budget
TILE = 32  # the original renders 32-pixel tiles


class Game:
    """A BabaIsAI episode: ``reset(rs)`` draws the level from a legacy ``RandomState`` (BALROG's
    global ``np.random`` after ``np.random.seed(seed)``), ``step(action)`` plays one of
    :data:`~rl4vlm_gym.envs.balrog.babaisai.engine.ACTIONS` and returns ``(reward, done)``;
    ``text`` is BALROG's ``long_term_context`` after it."""

    def __init__(self, task: levels.Task) -> None:
        self.task = task
        self.rs: np.random.RandomState | None = None
        self.world: E.World
        self.target_plan = ""
        self.steps = 0  # the original env's step_count (restarts with a new level)
        self.progression = 0.0
        self.text = ""
        self.resets = 0  # levels drawn in the middle of the episode
        self.won = self.lost = False

    @property
    def image_size(self) -> tuple[int, int]:
        """The original's render size, (width, height) in pixels."""
        return self.world.width * TILE, self.world.height * TILE

    def reset(self, rs: np.random.RandomState) -> None:
        self.rs = rs
        self.resets = 0
        self._new_level()

    def _new_level(self) -> None:
        assert self.rs is not None
        level = levels.generate(self.task, self.rs)
        self.world = level.world
        self.target_plan = level.target_plan
        self.steps = 0
        self.progression = 0.0
        self.won = self.lost = False
        you = self.world.you_position()
        assert you is not None, "every level starts with 'baba is you'"
        self.text = wording.observation_text(self.world, you)

    def step(self, action: str) -> tuple[float, bool]:
        self.steps += 1
        win, lose = self.world.step(action)
        reward, done = 0.0, False
        if action != "idle":
            if win:
                reward, done = 1 - 0.9 * (self.steps / MAX_STEPS), True
            elif lose:
                reward, done = -1.0, True
        if self.steps >= MAX_STEPS:
            done = True
        if done:
            self.progression = 1.0 if reward > 0 else 0.0
        self.won, self.lost = done and reward > 0, done and reward < 0
        you = self.world.you_position()
        if you is None:
            broken = self.world
            self._new_level()  # BALROG's wrapper resets here, whatever the step returned
            self.resets += 1
            self.text = wording.reset_text(broken, self.text, self.image_size)
        else:
            self.text = wording.observation_text(self.world, you)
        return reward, done
