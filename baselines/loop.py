"""LOOP: leave-one-out PPO over K rollouts per task (Chen et al., 2025; apple/ml-loop).

1. K episodes start from the same task (here: the same seed and level).
2. Leave-one-out advantage of rollout ``k`` with return ``R_k`` (paper Eq. 3)::

       A_k = R_k - 1/(K - 1) * sum_{i != k} R_i          # = K/(K-1) * (R_k - mean_i R_i)

   no standard-deviation normalisation (``adv_normalization: false``; "LOOP RwNorm" divides by
   ``std(R)``: ``normalize=True``).
3. Rollouts with ``|A_k| < abs_adv_threshold`` are dropped before the update.
4. Per-token PPO over every token the model wrote in the episode (Eq. 5/10, ``pg_per_token``),
   with LOOP's asymmetric clip::

       rho_j = pi(x_j | ...) / pi_old(x_j | ...)
       L     = -mean_j min(rho_j A, g(A)),   g(A) = (1 + eps) A if A >= 0 else A / (1 + eps)

   i.e. ``clip(rho, 1/(1+eps), 1+eps)``. No KL, no critic.

LOOP trains on the whole multi-turn episode as one token sequence with the env's tokens masked.
Here each step is scored under its stored prompt; with a prompt ``history`` covering the episode
the prompt is that same prefix, and the loss is the mean over all reply tokens of the episodes in
the mini-batch, as ``loss.mean()`` in LOOP. A mini-batch is made of whole episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rl4vlm_gym.baselines.common.algorithm import Algorithm, rescore
from rl4vlm_gym.baselines.common.losses import masked_mean
from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["LOOP", "LOOPConfig", "leave_one_out"]


@dataclass(frozen=True)
class LOOPConfig:
    """LOOP's hyperparameters (``conf/rl/params/default.yaml``).

    Attributes:
        epsilon: the clip epsilon of ``[1/(1+eps), 1+eps]``.
        abs_adv_threshold: rollouts with a smaller ``|A|`` are dropped.
        normalize: divide advantages by ``std(R)`` of the group ("LOOP RwNorm").
    """

    epsilon: float = 0.1
    abs_adv_threshold: float = 0.01
    normalize: bool = False


def leave_one_out(returns: Sequence[float], normalize: bool = False) -> np.ndarray:
    """``A_k = R_k - mean_{i != k} R_i`` for one group (0 for a group of one)."""
    r = np.asarray(returns, dtype=np.float64)
    k = len(r)
    if k < 2:
        return np.zeros(k)
    advantages = r - (r.sum() - r) / (k - 1)
    if normalize:
        advantages = advantages / (r.std() + 1e-8)
    return advantages


class LOOP(Algorithm):
    name = "loop"
    Config = LOOPConfig
    collect = "episodes"
    unit = "trajectory"
    aggregation = "token"

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        for group in buffer.groups():
            returns = [sum(s.reward for s in trajectory) for trajectory in group]
            for trajectory, advantage in zip(group, leave_one_out(returns, self.config.normalize), strict=True):
                for step in trajectory:
                    step.advantage = step.ret = float(advantage)
        kept = self.select(buffer)
        return {"kept_fraction": len(kept) / max(1, len(buffer.trajectories()))}

    def select(self, buffer: RolloutBuffer) -> list[list[Step]]:
        return [t for t in buffer.trajectories() if abs(t[0].advantage) >= self.config.abs_adv_threshold]

    def loss(self, policy: Policy, batch: Sequence[Step], update: int) -> tuple[torch.Tensor, dict[str, Any]]:
        eps = self.config.epsilon
        scores, old, advantages = rescore(policy, batch)
        logprobs, mask, advantages = scores.logprobs, scores.mask, advantages[:, None]

        ratio = torch.exp(logprobs - old)
        bound = torch.where(advantages >= 0, (1 + eps) * advantages, advantages / (1 + eps))  # g(A)
        loss = -masked_mean(torch.minimum(ratio * advantages, bound), mask)  # mean over all tokens
        clipped = ((ratio > 1 + eps) | (ratio < 1 / (1 + eps))).float()
        return loss, {"policy_loss": loss.item(), "clip_fraction": masked_mean(clipped, mask).item()}
