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
       l_j   = -min(rho_j A, g(A)),   g(A) = (1 + eps) A if A >= 0 else A / (1 + eps)

   i.e. ``clip(rho, 1/(1+eps), 1+eps)``. No KL, no critic.
5. Aggregation as apple/ml-loop: the token mean inside each rollout (the sum of ``l_j`` over its
   reply tokens, divided by its token count), then the mean over the rollouts of the mini-batch::

       L = 1/|B| * sum_{x in B} 1/|a(x)| * sum_{j in a(x)} l_j

   (verl's ``seq-mean-token-mean`` with the episode as the sequence; ``loss_agg_mode`` can choose
   ``token-mean``, which weights long rollouts more, or ``seq-mean-token-sum``). A mini-batch is
   made of whole episodes.

LOOP trains on the whole multi-turn episode as one token sequence with the env's tokens masked.
Here each step's reply is scored under that step's stored prompt: with a prompt ``history``
covering the episode that prompt is the same prefix, and the episode's reply tokens are exactly
LOOP's ``a(x)``; with a shorter history each reply is conditioned on less than in LOOP (the
trainer's prompt, not the loss, decides). ``normalize`` divides by the sample standard deviation
(``torch.std``) of the group's returns. Not reproduced: LOOP's early stop of an iteration when the
KL to the rollout policy exceeds ``high_kl_threshold`` and its early end of rollout collection
(``rollouts_fraction``), both scheduling of a multi-node run rather than the objective.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rl4vlm_gym.baselines.common.algorithm import AGGREGATIONS, Algorithm, Weights, rescore
from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["LOOP", "LOOPConfig", "leave_one_out", "loop_token_loss"]


@dataclass(frozen=True)
class LOOPConfig:
    """LOOP's hyperparameters (``conf/rl/params/default.yaml``).

    Attributes:
        epsilon: the clip epsilon of ``[1/(1+eps), 1+eps]``.
        abs_adv_threshold: rollouts with a smaller ``|A|`` are dropped.
        normalize: divide advantages by ``std(R)`` of the group ("LOOP RwNorm").
        loss_agg_mode: ``"seq-mean-token-mean"`` (LOOP's), ``"token-mean"`` or
            ``"seq-mean-token-sum"``, a sequence being an episode.
    """

    epsilon: float = 0.1
    abs_adv_threshold: float = 0.01
    normalize: bool = False
    loss_agg_mode: str = "seq-mean-token-mean"

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in AGGREGATIONS:
            raise ValueError(f"loop loss_agg_mode={self.loss_agg_mode!r} is unknown; choose one of {AGGREGATIONS}")


def leave_one_out(returns: Sequence[float], normalize: bool = False) -> np.ndarray:
    """``A_k = R_k - mean_{i != k} R_i`` for one group; a group of one has no other rollout and
    gets 0 (and is then dropped by ``abs_adv_threshold``). ``normalize`` divides by the sample
    standard deviation of the returns plus 1e-8."""
    r = np.asarray(returns, dtype=np.float64)
    k = len(r)
    if k < 2:
        return np.zeros(k)
    advantages = r - (r.sum() - r) / (k - 1)
    if normalize:
        advantages = advantages / (r.std(ddof=1) + 1e-8)
    return advantages


def loop_token_loss(logprobs: torch.Tensor, old: torch.Tensor, advantages: torch.Tensor, eps: float) -> torch.Tensor:
    """``[B, L]``: ``-min(rho A, g(A))`` per token, ``advantages`` being ``[B, 1]``."""
    ratio = torch.exp(logprobs - old)
    bound = torch.where(advantages >= 0, (1 + eps) * advantages, advantages / (1 + eps))  # g(A)
    return -torch.minimum(ratio * advantages, bound)


class LOOP(Algorithm):
    name = "loop"
    Config = LOOPConfig
    collect = "episodes"
    unit = "trajectory"

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

    def loss(
        self, policy: Policy, batch: Sequence[Step], update: int, weights: Weights | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        eps = self.config.epsilon
        scores, old, advantages = rescore(policy, batch)
        logprobs, mask = scores.logprobs, scores.mask
        w = (self.weights(batch) if weights is None else weights).to(logprobs.device)
        loss = w.tokens_loss(loop_token_loss(logprobs, old, advantages[:, None], eps), mask)
        ratio = torch.exp(logprobs - old)
        clipped = ((ratio > 1 + eps) | (ratio < 1 / (1 + eps))).float()
        return loss, {"policy_loss": loss.item(), "clip_fraction": w.mean(clipped, mask).item()}
