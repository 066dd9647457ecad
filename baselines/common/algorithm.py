"""What a baseline is to the trainer: an advantage estimator and a loss over stored steps.

A method subclasses :class:`Algorithm`, declares how it collects rollouts and what it needs
(a critic, a reference policy), and implements :meth:`~Algorithm.estimate` (write
``step.advantage`` and ``step.ret``) and :meth:`~Algorithm.loss` (the objective of one
mini-batch, to be minimised). Everything else (collection, optimisation, logging, checkpoints,
evaluation) is the shared trainer's.

Loss aggregation is named as in verl (``agg_loss``), a "sequence" being the method's unit (one
step's reply, or LOOP's whole episode):

- ``token-mean``: the sum of the per-token losses of the mini-batch over its number of reply
  tokens (verl's default; a long sequence weighs more);
- ``seq-mean-token-mean``: each sequence's token mean, then the mean over sequences (LOOP,
  VL-DAC);
- ``seq-mean-token-sum``: each sequence's token sum, then the mean over sequences;
- ``seq-mean``: one loss per step, no per-token loss (RL4VLM's single ratio), mean over steps.

A per-step term of a token loss (VL-DAC's value loss) counts once per reply token of its step,
as in VL-DAC's ``(1/n) sum_k [... + L_V]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from rl4vlm_gym.baselines.common.losses import clipped_value_loss
from rl4vlm_gym.baselines.common.policy import Policy, Scores
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["AGGREGATIONS", "Algorithm", "Weights", "aggregation_weights", "padded", "reference_logprobs", "rescore", "value_loss"]

AGGREGATIONS = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


@dataclass(frozen=True)
class Weights:
    """How each row (step) of a mini-batch enters its loss, for :meth:`Algorithm.loss`.

    Attributes:
        token: ``[B]``: the weight of each of the row's reply-token losses (of the row's one loss
            in ``seq-mean``); the loss is the weighted sum.
        tokens: ``[B]``: the row's reply tokens (1 per row in ``seq-mean``).
        share: ``[B]``: the row's share of the mini-batch (sums to 1 over it), for statistics.
    """

    token: torch.Tensor
    tokens: torch.Tensor
    share: torch.Tensor

    def __getitem__(self, rows: slice) -> Weights:
        return Weights(self.token[rows], self.tokens[rows], self.share[rows])

    def to(self, device: torch.device | str) -> Weights:
        return Weights(self.token.to(device), self.tokens.to(device), self.share.to(device))

    def tokens_loss(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The aggregated loss of per-token losses ``x`` (``[B, L]``, ``mask`` the reply tokens)."""
        return (x * mask * self.token[:, None]).sum()

    def rows_loss(self, x: torch.Tensor) -> torch.Tensor:
        """The aggregated loss of per-row losses ``x`` (``[B]``), each counted once per reply token."""
        return (x * self.token * self.tokens).sum()

    def mean(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """A statistic: each row's value (its token mean if ``x`` is ``[B, L]``) weighted by its share."""
        if mask is not None:
            x = (x * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return (x * self.share).sum()


def aggregation_weights(batch: Sequence[Step], mode: str, unit: str = "step") -> Weights:
    """The :class:`Weights` of a mini-batch under aggregation ``mode`` (module docstring); a
    sequence is one step, or one episode if ``unit == "trajectory"``."""
    if mode not in (*AGGREGATIONS, "seq-mean"):
        raise ValueError(f"loss_agg_mode={mode!r} is unknown; choose one of {AGGREGATIONS}")
    keys = [s.episode if unit == "trajectory" else i for i, s in enumerate(batch)]
    n = [float(len(s.response)) for s in batch] if mode != "seq-mean" else [1.0] * len(batch)
    per_sequence: dict[int, float] = {}
    for key, count in zip(keys, n, strict=True):
        per_sequence[key] = per_sequence.get(key, 0.0) + count
    sequences, total = len(per_sequence), sum(n)
    if mode == "token-mean":
        token = [1 / total if total else 0.0 for _ in batch]
    elif mode == "seq-mean-token-mean":
        token = [1 / (sequences * per_sequence[k]) if per_sequence[k] else 0.0 for k in keys]
    else:  # seq-mean-token-sum, seq-mean
        token = [1 / sequences for _ in batch]
    mass = [w * c for w, c in zip(token, n, strict=True)]
    whole = sum(mass)
    share = [m / whole if whole else 0.0 for m in mass]
    return Weights(torch.tensor(token), torch.tensor(n), torch.tensor(share))


class Algorithm:
    """Base class of the five methods.

    Class attributes:
        name: the ``--algo`` name.
        Config: the method's hyperparameters (a frozen dataclass; defaults are the paper's).
        collect: ``"steps"`` (a step budget per update, episodes run on) or ``"episodes"``
            (groups of whole episodes from shared seeds).
        critic: the method learns a value head.
        value_stop_gradient: the value loss does not reach the backbone.
        unit: what a mini-batch is made of: ``"step"`` or ``"trajectory"`` (a sequence of the
            loss aggregation).

    A method whose ``Config`` has a ``loss_agg_mode`` lets the config choose its
    :attr:`aggregation`; otherwise it is ``"seq-mean"``.
    """

    name: ClassVar[str]
    Config: ClassVar[type]
    collect: ClassVar[str] = "steps"
    critic: ClassVar[bool] = False
    value_stop_gradient: ClassVar[bool] = True
    unit: ClassVar[str] = "step"

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

    @property
    def aggregation(self) -> str:
        """How :meth:`loss` aggregates (module docstring)."""
        return str(getattr(self.config, "loss_agg_mode", "seq-mean"))

    def weights(self, batch: Sequence[Step]) -> Weights:
        """The :class:`Weights` of a mini-batch under this method's aggregation."""
        return aggregation_weights(batch, self.aggregation, self.unit)

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        """Write every step's ``advantage`` (and ``ret`` for a critic); return statistics to log."""
        raise NotImplementedError

    def select(self, buffer: RolloutBuffer) -> list[list[Step]]:
        """The units (lists of steps) the update trains on, by default every step alone."""
        if self.unit == "trajectory":
            return buffer.trajectories()
        return [[step] for step in buffer.steps]

    def loss(
        self, policy: Policy, batch: Sequence[Step], update: int, weights: Weights | None = None
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """The loss of one mini-batch (``update`` counts from 0) and statistics to log.

        With ``weights`` (the rows' part of a larger mini-batch's :class:`Weights`), the part of
        that mini-batch's loss and statistics that these rows contribute."""
        raise NotImplementedError

    def backward(
        self, policy: Policy, batch: Sequence[Step], update: int, *, micro_batch: int | None = None, scale: float = 1.0
    ) -> tuple[float, dict[str, float]]:
        """Backpropagate ``scale`` times the mini-batch's loss, in forward passes of at most
        ``micro_batch`` steps (all at once if ``None``); returns the loss and the statistics.

        The aggregation weights are those of the whole mini-batch, and each micro-batch's loss is
        its rows' part of the mini-batch's loss, so the parts sum to the one-pass loss and
        gradient in every aggregation mode, even when a micro-batch splits a sequence. (A
        statistic over the mini-batch, such as RL4VLM's ``ratio_guard``, is taken per
        micro-batch.)
        """
        size = micro_batch or len(batch)
        weights = self.weights(batch)
        total = 0.0
        stats: dict[str, float] = {}
        for k in range(0, len(batch), size):
            loss, chunk_stats = self.loss(policy, batch[k : k + size], update, weights[k : k + size])
            (loss * scale).backward()
            total += loss.item()
            for key, value in chunk_stats.items():
                stats[key] = stats.get(key, 0.0) + value
        return total, stats


def reference_logprobs(batch: Sequence[Step], width: int, device: torch.device | str) -> torch.Tensor:
    """``[B, width]``: the reference policy's stored log-probs of the mini-batch, zero-padded.

    Raises:
        ValueError: a step was collected without them (the collector's ``reference=True``).
    """
    rows = [s.ref_logprobs for s in batch]
    present = [row for row in rows if row is not None]
    if len(present) < len(rows):
        raise ValueError("a KL penalty needs the reference log-probs of every step (collect with reference=True)")
    return padded(present, width, device)


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


def value_loss(batch: Sequence[Step], values: torch.Tensor | None, clip: float) -> torch.Tensor:
    """``[B]``: :func:`~rl4vlm_gym.baselines.common.losses.clipped_value_loss` of the current
    ``values`` against the stored values and return targets of the mini-batch.

    Raises:
        ValueError: without current values (``rescore(..., values=True)``) or a step without its stored value.
    """
    stored = [s.value for s in batch]
    if values is None or None in stored:
        raise ValueError("the value loss needs a critic: current values (rescore with values=True) and each step's stored value")
    old_values = torch.tensor([float(v) for v in stored if v is not None], device=values.device)
    returns = torch.tensor([s.ret for s in batch], device=values.device)
    return clipped_value_loss(values, old_values, returns, clip)
