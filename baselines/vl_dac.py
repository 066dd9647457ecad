"""VL-DAC: token-level PPO with a step-level critic (Bredis et al., AAMAS 2026; corl-team/VL-DAC).

Notation: ``o_t`` is step ``t``'s prompt (images and text), ``y_t = (y_{t,1..n})`` the reply,
``h_t`` the final hidden state of the last prompt token.

1. Critic on a stop-gradient (``models/base.py::VLMValueModel``)::

       V(o_t) = MLP(stopgrad(h_t))            # Linear(H, 3072)-ReLU-Linear(3072, 2048)-ReLU-Linear(2048, 1)

2. Step-level GAE over env steps, normalised over the whole buffer (``storage.py``)::

       delta_t = r_t + gamma * V(o_{t+1}) - V(o_t),   A_t = delta_t + gamma * lambda * A_{t+1}
       A_t     = (A_t - mean(A)) / (std(A) + 1e-8)            # torch.std: sample std (ddof 1)

   (truncation bootstraps, termination does not: :func:`baselines.common.advantages.gae`; a
   buffer of one step gets advantage 0).
3. Per-token ratio with the step advantage on every reply token (``algo/ppo.py``)::

       rho_{t,k}   = pi(y_{t,k} | o_t, y_{t,<k}) / pi_old(y_{t,k} | o_t, y_{t,<k})
       L_clip(t,k) = -min(rho_{t,k} A_t, clip(rho_{t,k}, 1 - eps, 1 + eps) A_t)

4. Per-token k3 KL to the reference (the base model, LoRA disabled), unclamped::

       KL_{t,k} = exp(l_ref - l) - (l_ref - l) - 1

5. Clipped value loss ``L_V(t) = c_v * max((V - R)^2, (V_old + clip(V - V_old, +-eps_v) - R)^2)``.
6. Step loss ``(1/n) sum_k [L_clip(t,k) + beta * KL_{t,k} + L_V(t)]``, averaged over the
   mini-batch (verl's ``seq-mean-token-mean`` with the step's reply as the sequence, what the
   release's one-step mini-batches with gradient accumulation compute; ``loss_agg_mode`` can
   choose another); during the first ``value_warmup_updates`` updates only ``L_V`` (value warm-up).

Where we differ from the release, on purpose:

- the first reply token is scored too (the release's ``log_probs[:, L_in:-1]`` slice dropped it),
  and log-probs use the sampling temperature, so the ratio is that of the distribution replies
  are drawn from (the release sampled with ``top_k=1`` and scored at temperature 1);
- ``L_V`` has no factor 1/2: the release computes ``0.5 * max(...)`` (inherited from RL4VLM) and
  weights it by ``c_v``; we weight ``max(...)`` by ``c_v``, as the paper's objective writes it.
  Behind the stop-gradient only the value head receives this loss, and Adam's step does not
  depend on a constant scale of its gradient, so the 1/2 would matter only through Adam's eps
  and the shared gradient-norm clip;
- the reference is the model RL starts from only without a format warm-up; after one it is the
  model before the warm-up (the adapters disabled), as in the release the LoRA-free base.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rl4vlm_gym.baselines.common.advantages import step_gae
from rl4vlm_gym.baselines.common.algorithm import AGGREGATIONS, Algorithm, Weights, reference_logprobs, rescore, value_loss
from rl4vlm_gym.baselines.common.losses import k3_kl
from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["VLDAC", "VLDACConfig"]


@dataclass(frozen=True)
class VLDACConfig:
    """VL-DAC's hyperparameters (``configs/*.yaml`` of the release; MiniWorld uses gamma 0.9).

    Attributes:
        gamma: discount over env steps.
        gae_lambda: GAE's lambda.
        clip: the ratio clip epsilon.
        value_clip: the value clip epsilon.
        value_coef: ``c_v``.
        kl_beta: weight of the per-token KL to the reference (0 disables it).
        value_warmup_updates: first updates that train only the critic.
        normalize_advantages: standardise advantages over the buffer.
        loss_agg_mode: ``"seq-mean-token-mean"`` (the release's), ``"token-mean"`` or
            ``"seq-mean-token-sum"``, a sequence being one step's reply.
    """

    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.1
    value_clip: float = 0.1
    value_coef: float = 0.5
    kl_beta: float = 0.04
    value_warmup_updates: int = 2
    normalize_advantages: bool = True
    loss_agg_mode: str = "seq-mean-token-mean"

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in AGGREGATIONS:
            raise ValueError(f"vl-dac loss_agg_mode={self.loss_agg_mode!r} is unknown; choose one of {AGGREGATIONS}")


class VLDAC(Algorithm):
    name = "vl-dac"
    Config = VLDACConfig
    collect = "steps"
    critic = True
    value_stop_gradient = True

    @property
    def reference(self) -> bool:
        return self.config.kl_beta > 0

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        step_gae(buffer, self.config.gamma, self.config.gae_lambda, self.config.normalize_advantages)
        return {}

    def loss(
        self, policy: Policy, batch: Sequence[Step], update: int, weights: Weights | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        c = self.config
        scores, old, advantages = rescore(policy, batch, values=True)
        logprobs, mask, values = scores.logprobs, scores.mask, scores.values
        device, advantages = logprobs.device, advantages[:, None]
        w = (self.weights(batch) if weights is None else weights).to(device)

        ratio = torch.exp(logprobs - old)  # rho_{t,k}
        clip_loss = -torch.minimum(ratio * advantages, ratio.clamp(1 - c.clip, 1 + c.clip) * advantages)
        token_loss = clip_loss
        kl = torch.zeros_like(logprobs)
        if self.reference:
            ref = reference_logprobs(batch, logprobs.shape[1], device)
            kl = k3_kl(logprobs, ref)
            token_loss = clip_loss + c.kl_beta * kl
        critic_loss = w.rows_loss(c.value_coef * value_loss(batch, values, c.value_clip))  # once per reply token
        warmup = update < c.value_warmup_updates
        loss = critic_loss if warmup else w.tokens_loss(token_loss, mask) + critic_loss
        stats = {
            "policy_loss": w.tokens_loss(clip_loss, mask).item(),
            "value_loss": critic_loss.item(),
            "kl": w.tokens_loss(kl, mask).item(),
            "clip_fraction": w.mean(((ratio - 1).abs() > c.clip).float(), mask).item(),
            "value_warmup": float(warmup) * w.share.sum().item(),
        }
        return loss, stats
