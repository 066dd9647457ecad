"""Advantage estimators shared by the critic methods (VL-DAC, RL4VLM)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["gae", "normalize", "step_gae"]


def gae(stream: Sequence[Step], gamma: float, lam: float) -> None:
    """Generalised advantage estimation over one env's steps in time order (Schulman et al., 2016).

    With ``V'_t`` the value of the observation after step ``t`` (the next step's value, or the
    stored ``next_value`` after a time limit or at the rollout's end)::

        delta_t = r_t + gamma * (1 - terminated_t) * V'_t - V(s_t)
        A_t     = delta_t + gamma * lam * (1 - done_t) * A_{t+1}
        R_t     = A_t + V(s_t)

    A truncated step bootstraps from its final observation; a terminated one does not; neither
    carries the advantage of the next episode back (``done = terminated or truncated``). Writes
    ``step.advantage`` and ``step.ret``.
    """
    following = 0.0
    for i in reversed(range(len(stream))):
        step = stream[i]
        value = float(step.value or 0.0)
        if step.terminated:
            next_value = 0.0
        elif step.truncated or i == len(stream) - 1:
            next_value = step.next_value
        else:
            next_value = float(stream[i + 1].value or 0.0)
        delta = step.reward + gamma * next_value - value
        carry = 0.0 if step.done or i == len(stream) - 1 else following
        step.advantage = delta + gamma * lam * carry
        step.ret = step.advantage + value
        following = step.advantage


def normalize(steps: Sequence[Step], eps: float = 1e-8) -> None:
    """Standardise the advantages of ``steps`` over the whole buffer as the releases do,
    ``(A - mean) / (torch.std(A) + eps)`` with the sample standard deviation (ddof 1). A buffer
    of one step has no spread: its advantage becomes 0 (``torch.std`` would give NaN)."""
    advantages = np.array([s.advantage for s in steps], dtype=np.float64)
    if len(advantages) == 0:
        return
    mean = advantages.mean()
    std = advantages.std(ddof=1) if len(advantages) > 1 else 1.0
    for step, value in zip(steps, (advantages - mean) / (std + eps), strict=True):
        step.advantage = float(value)


def step_gae(buffer: RolloutBuffer, gamma: float, lam: float, normalise: bool, eps: float = 1e-8) -> None:
    """The critic methods' estimator: :func:`gae` over each env's stream, then (if ``normalise``)
    :func:`normalize` over the whole buffer (``eps``: VL-DAC's 1e-8, RL4VLM's 1e-5)."""
    for stream in buffer.streams():
        gae(stream, gamma, lam)
    if normalise:
        normalize(buffer.steps, eps)
