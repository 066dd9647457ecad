"""Loss pieces the methods share: masked means, KL estimators and the clipped value loss."""

from __future__ import annotations

import torch

__all__ = ["clipped_value_loss", "k3_kl", "low_var_kl", "masked_mean"]


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Mean of ``x`` where ``mask`` is 1 (over ``dim``, or over everything)."""
    if dim is None:
        return (x * mask).sum() / mask.sum().clamp(min=1.0)
    return (x * mask).sum(dim) / mask.sum(dim).clamp(min=1.0)


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || ref) per token: ``exp(d) - d - 1`` with
    ``d = log ref - log pi``; unbiased, always >= 0 (VL-DAC's KL term, unclamped as there)."""
    d = ref_logprobs - logprobs
    return torch.exp(d) - d - 1


def low_var_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """verl's ``low_var_kl`` (``core_algos.kl_penalty``): k3 with ``d`` clamped to [-20, 20]
    before the exponential and the result clamped to [-10, 10]. Beyond ``|d| = 11`` or so the value
    is capped, but for ``|d|`` up to there the gradient is k3's (``1 - exp(d)``)."""
    d = (ref_logprobs - logprobs).clamp(-20.0, 20.0)
    return (torch.exp(d) - d - 1).clamp(-10.0, 10.0)


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's pessimistic value loss per sample: ``max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2)``."""
    clipped = old_values + (values - old_values).clamp(-clip, clip)
    return torch.maximum((values - returns) ** 2, (clipped - returns) ** 2)
