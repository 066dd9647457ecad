"""Loss pieces the methods share: masked means, KL estimators and the clipped value loss."""

from __future__ import annotations

import torch

__all__ = ["clipped_value_loss", "k3_kl", "masked_mean"]


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Mean of ``x`` where ``mask`` is 1 (over ``dim``, or over everything)."""
    if dim is None:
        return (x * mask).sum() / mask.sum().clamp(min=1.0)
    return (x * mask).sum(dim) / mask.sum(dim).clamp(min=1.0)


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, clamp: float | None = None) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || ref) per token: ``exp(d) - d - 1`` with
    ``d = log ref - log pi``; unbiased, always >= 0. verl's ``low_var_kl`` clamps it to ``[-clamp, clamp]``."""
    d = ref_logprobs - logprobs
    if clamp is not None:
        d = d.clamp(-clamp, clamp)
    kl = torch.exp(d) - d - 1
    return kl if clamp is None else kl.clamp(-clamp, clamp)


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's pessimistic value loss per sample: ``max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2)``."""
    clipped = old_values + (values - old_values).clamp(-clip, clip)
    return torch.maximum((values - returns) ** 2, (clipped - returns) ** 2)
