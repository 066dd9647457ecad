"""Rollout storage: every step exactly as it was played.

A :class:`Step` keeps the prompt the policy saw (messages with their images, and token ids), the
reply tokens, their log-probs under the acting policy (and the reference policy, when a method
has a KL term), the value of the prompt, and what the env returned. Updates recompute log-probs
from these stored prompts, never from a prompt rebuilt later (RL4VLM's released code scored
replies under the first prompt of the run: RL4VLM/RL4VLM at b989b57, ``a2c_ppo_acktr/model.py``'s ``evaluate_actions``).

Advantages and returns are written into the steps by each method's estimator.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from rl4vlm_gym.baselines.common.policy import Prompt

__all__ = ["Episode", "RolloutBuffer", "Step"]


@dataclass
class Step:
    """One env step of one env stream.

    Attributes:
        env: the env's index in the vector env.
        episode: a run-wide episode number (steps of one episode share it).
        group: episodes that started from the same seed share a group (GiGPO, LOOP).
        t: the step's index in its episode.
        prompt: the prompt the policy answered.
        response: the reply tokens (what the log-probs score).
        text: the reply decoded (what the env parsed).
        logprobs: ``[len(response)]`` log-probs under the acting policy.
        ref_logprobs: ``[len(response)]`` log-probs under the reference policy, if needed.
        value: the critic's value of the prompt, if there is a critic.
        next_value: the value of the next observation: for GAE past a time limit or past the
            end of the rollout (0 when the episode terminated).
        reward: the env's reward.
        terminated: the episode reached a terminal state (no bootstrap).
        truncated: a time limit cut the episode (bootstrap from ``next_value``).
        valid: the env parsed the reply into an admissible action.
        state_key: the env's ``info["state_key"]`` at the prompt (GiGPO's anchor state).
        advantage: written by the method's estimator.
        ret: the return target of the value loss, written by the estimator.
    """

    env: int
    episode: int
    group: int
    t: int
    prompt: Prompt
    response: list[int]
    text: str
    logprobs: torch.Tensor
    ref_logprobs: torch.Tensor | None = None
    value: float | None = None
    next_value: float = 0.0
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    valid: bool = True
    state_key: str = ""
    advantage: float = 0.0
    ret: float = 0.0

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class Episode:
    """A finished episode's outcome (for logs and curricula)."""

    env: int
    episode: int
    group: int
    length: int
    ret: float
    success: bool
    invalid: int
    level: int = 0


@dataclass
class RolloutBuffer:
    """The steps of one update's rollouts, in the order they were played."""

    steps: list[Step] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.steps)

    def streams(self) -> list[list[Step]]:
        """Each env's steps in time order (the sequences GAE runs over)."""
        by_env: dict[int, list[Step]] = defaultdict(list)
        for step in self.steps:
            by_env[step.env].append(step)
        return [by_env[e] for e in sorted(by_env)]

    def trajectories(self) -> list[list[Step]]:
        """Each episode's steps in time order."""
        by_episode: dict[int, list[Step]] = defaultdict(list)
        for step in self.steps:
            by_episode[step.episode].append(step)
        return [by_episode[e] for e in sorted(by_episode)]

    def groups(self) -> list[list[list[Step]]]:
        """Trajectories grouped by their shared start seed."""
        by_group: dict[int, list[list[Step]]] = defaultdict(list)
        for trajectory in self.trajectories():
            by_group[trajectory[0].group].append(trajectory)
        return [by_group[g] for g in sorted(by_group)]

    def minibatches(self, size: int, rng: np.random.Generator, steps: Sequence[Step] | None = None) -> Iterator[list[Step]]:
        """The steps (default: all) shuffled by ``rng`` into mini-batches of ``size``."""
        steps = list(self.steps if steps is None else steps)
        order = rng.permutation(len(steps))
        for start in range(0, len(order), size):
            yield [steps[i] for i in order[start : start + size]]
