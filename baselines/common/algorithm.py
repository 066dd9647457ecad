"""What a baseline is to the trainer: an advantage estimator and a loss over stored steps.

A method subclasses :class:`Algorithm`, declares how it collects rollouts and what it needs
(a critic, a reference policy), and implements :meth:`~Algorithm.estimate` (write
``step.advantage`` and ``step.ret``) and :meth:`~Algorithm.loss` (the objective of one
mini-batch, to be minimised). Everything else (collection, optimisation, logging, checkpoints,
evaluation) is the shared trainer's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

from rl4vlm_gym.baselines.common.losses import clipped_value_loss
from rl4vlm_gym.baselines.common.policy import Policy, Scores
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["Algorithm", "padded", "rescore", "value_loss"]


class Algorithm:
    """Base class of the four methods.

    Class attributes:
        name: the ``--algo`` name.
        Config: the method's hyperparameters (a frozen dataclass; defaults are the paper's).
        collect: ``"steps"`` (a step budget per update, episodes run on) or ``"episodes"``
            (groups of whole episodes from shared seeds).
        critic: the method learns a value head.
        value_stop_gradient: the value loss does not reach the backbone.
        unit: what a mini-batch is made of: ``"step"`` or ``"trajectory"``.
        aggregation: how :meth:`loss` averages: over steps (``"step"``) or over all reply tokens
            of the mini-batch (``"token"``, verl's token-mean); :meth:`backward` weights
            micro-batches by it.
    """

    name: ClassVar[str]
    Config: ClassVar[type]
    collect: ClassVar[str] = "steps"
    critic: ClassVar[bool] = False
    value_stop_gradient: ClassVar[bool] = True
    unit: ClassVar[str] = "step"
    aggregation: ClassVar[str] = "step"

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        fields = {f.name for f in dataclasses.fields(self.Config)}
        unknown = sorted(set(config or {}) - fields)
        if unknown:
            raise ValueError(f"{self.name} has no hyperparameters {unknown}; it has {sorted(fields)}")
        self.config = self.Config(**dict(config or {}))

    @property
    def reference(self) -> bool:
        """The loss needs reference log-probs (a KL term)."""
        return False

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        """Write every step's ``advantage`` (and ``ret`` for a critic); return statistics to log."""
        raise NotImplementedError

    def select(self, buffer: RolloutBuffer) -> list[list[Step]]:
        """The units (lists of steps) the update trains on, by default every step alone."""
        if self.unit == "trajectory":
            return buffer.trajectories()
        return [[step] for step in buffer.steps]

    def loss(self, policy: Policy, batch: Sequence[Step], update: int) -> tuple[torch.Tensor, dict[str, float]]:
        """The loss of one mini-batch (``update`` counts from 0) and statistics to log."""
        raise NotImplementedError

    def backward(
        self, policy: Policy, batch: Sequence[Step], update: int, *, micro_batch: int | None = None, scale: float = 1.0
    ) -> tuple[float, dict[str, float]]:
        """Backpropagate ``scale`` times the mini-batch's loss, in forward passes of at most
        ``micro_batch`` steps (all at once if ``None``); returns the loss and the statistics.

        Each micro-batch's loss is weighted by its share of the mini-batch (of its steps, or of
        its reply tokens for a token-mean loss), so the gradient is the whole mini-batch's
        whatever the micro-batch size. (A statistic over the mini-batch, such as RL4VLM's
        ``ratio_guard``, is taken per micro-batch.)
        """
        size = micro_batch or len(batch)
        chunks = [batch[k : k + size] for k in range(0, len(batch), size)]
        tokens = sum(len(s.response) for s in batch)
        total, stats = 0.0, {}
        for chunk in chunks:
            if self.aggregation == "token" and tokens:
                share = sum(len(s.response) for s in chunk) / tokens
            else:
                share = len(chunk) / len(batch)
            loss, chunk_stats = self.loss(policy, chunk, update)
            (loss * (share * scale)).backward()
            total += loss.item() * share
            for key, value in chunk_stats.items():
                stats[key] = stats.get(key, 0.0) + value * share
        return total, stats


def padded(rows: Sequence[torch.Tensor], width: int, device: torch.device | str) -> torch.Tensor:
    """Stack 1-D tensors into ``[len(rows), width]``, zero-padded on the right."""
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out.to(device)


def rescore(
    policy: Policy, batch: Sequence[Step], values: bool = False, entropy: bool = False
) -> tuple[Scores, torch.Tensor, torch.Tensor]:
    """A mini-batch under the current policy: its scores (``[B, L]`` log-probs, mask, values,
    entropy), the stored log-probs of the acting policy (``[B, L]``) and the advantages (``[B]``)."""
    scores = policy.score([s.prompt for s in batch], [s.response for s in batch], values=values, entropy=entropy)
    device = scores.logprobs.device
    old = padded([s.logprobs for s in batch], scores.logprobs.shape[1], device)
    advantages = torch.tensor([s.advantage for s in batch], device=device)
    return scores, old, advantages


def value_loss(batch: Sequence[Step], values: torch.Tensor, clip: float) -> torch.Tensor:
    """``[B]``: :func:`~rl4vlm_gym.baselines.common.losses.clipped_value_loss` of the current
    ``values`` against the stored values and return targets of the mini-batch."""
    old_values = torch.tensor([float(s.value) for s in batch], device=values.device)
    returns = torch.tensor([s.ret for s in batch], device=values.device)
    return clipped_value_loss(values, old_values, returns, clip)
