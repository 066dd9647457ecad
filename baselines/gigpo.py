"""GiGPO: group-in-group policy optimisation (Feng et al., NeurIPS 2025; verl-agent).

N episodes of a group start from the same seed. Every step is one training row; ``r_t`` are the
env's rewards and ``p`` the invalid-action penalty.

1. Episode relative advantage (Eq. 3). Each row's score is its episode's return minus the penalty
   if *that row's* action was invalid (verl-agent's ``apply_invalid_action_penalty`` on the
   episode reward at the row's last token)::

       s_t^i      = R(tau_i) - p * [a_t^i invalid],   R(tau_i) = sum_t r_t^i
       A^E(t, i)  = (s_t^i - mean) / F

   with ``mean`` and ``F`` over the group's episode returns ``R(tau_j)`` (``episode_stats=
   "episodes"``, Eq. 3) or over all the group's row scores (``"steps"``: verl-agent's
   ``compute_mean_std_cross_steps``, issue #138).
2. Discounted step returns (Eq. 5) from the env's rewards, ``R_t = r_t + gamma * R_{t+1}``; then
   the penalty of an invalid row is subtracted from that row's own return only (verl-agent
   computes ``step_rewards`` before the penalty and subtracts it from the row's ``step_rewards``),
   so it never flows into earlier steps' returns.
3. Anchor-state groups (Eq. 4/6): within the episode group, the steps whose state has the same
   ``info["state_key"]`` (exact match; an image env's key names its state exactly)::

       G^S(s) = {(a_t^i, R_t^i) | s_t^i = s}

4. Step relative advantage (Eq. 7): ``A^S = (R_t - mean(G^S)) / F(G^S)``.
5. ``A = A^E + omega * A^S`` (Eq. 8) on every token of the step's reply.

``F`` is 1 (``mode="mean_norm"``, verl-agent's default and the paper's "w/o std") or the sample
standard deviation (``torch.std``) plus 1e-6 (``"mean_std_norm"``). Groups of one, as in
verl-agent: an episode group of one member takes mean 0 and std 1 (so ``A^E`` is the score
itself), an anchor group of one has ``A^S = 0``.

Loss (verl's ``dp_actor``): PPO's clipped surrogate with the dual clip ``c`` for negative
advantages, minus ``entropy_coef`` times the policy's entropy (``ppo_trainer.yaml``: 0.001),
plus ``kl_coef`` times verl's ``low_var_kl`` to the reference policy (``d = log ref - log pi``
clamped to [-20, 20], ``exp(d) - d - 1`` clamped to [-10, 10]); all three per token, aggregated
by ``loss_agg_mode`` (verl's default ``token-mean`` over the mini-batch).

Where we differ from verl-agent: ``episode_stats`` defaults to Eq. 3's statistics over episodes
(``"steps"`` is verl-agent's default); the reference policy is the base model (LoRA adapters
disabled, or the initial weights of a full fine-tune), which is verl's initial actor unless a
format warm-up ran first (then it is the model before the warm-up).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rl4vlm_gym.baselines.common.algorithm import AGGREGATIONS, Algorithm, Weights, reference_logprobs, rescore
from rl4vlm_gym.baselines.common.losses import low_var_kl
from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["GiGPO", "GiGPOConfig", "gigpo_advantages"]

MODES = ("mean_norm", "mean_std_norm")


@dataclass(frozen=True)
class GiGPOConfig:
    """GiGPO's hyperparameters (``examples/gigpo_trainer/*.sh`` of verl-agent).

    Attributes:
        gamma: discount of the step returns.
        step_weight: ``omega``.
        mode: ``"mean_norm"`` (F = 1) or ``"mean_std_norm"`` (F = std).
        episode_stats: ``"episodes"`` (Eq. 3) or ``"steps"`` (verl-agent's code).
        invalid_penalty: subtracted from the episode score and the step return of the row whose
            action was invalid (not from other rows).
        clip: the ratio clip epsilon.
        dual_clip: ``c`` of the dual clip (None disables it).
        kl_coef: weight of the low-variance KL to the reference (0 disables it).
        entropy_coef: weight of the entropy bonus (0 disables it).
        loss_agg_mode: ``"token-mean"`` (verl's default), ``"seq-mean-token-mean"`` or
            ``"seq-mean-token-sum"``, a sequence being one step's reply.
    """

    gamma: float = 0.95
    step_weight: float = 1.0
    mode: str = "mean_norm"
    episode_stats: str = "episodes"
    invalid_penalty: float = 0.1
    clip: float = 0.2
    dual_clip: float | None = 3.0
    kl_coef: float = 0.01
    entropy_coef: float = 0.001
    loss_agg_mode: str = "token-mean"

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in AGGREGATIONS:
            raise ValueError(f"gigpo loss_agg_mode={self.loss_agg_mode!r} is unknown; choose one of {AGGREGATIONS}")
        if self.mode not in MODES:
            raise ValueError(f"gigpo mode={self.mode!r} is unknown; choose one of {MODES}")
        if self.episode_stats not in ("episodes", "steps"):
            raise ValueError(f"gigpo episode_stats={self.episode_stats!r} is unknown; choose 'episodes' or 'steps'")


def _normalise(values: np.ndarray, mean: float, std: float, mode: str) -> np.ndarray:
    return (values - mean) / (std + 1e-6) if mode == "mean_std_norm" else values - mean


def gigpo_advantages(group: Sequence[Sequence[Step]], config: GiGPOConfig) -> list[list[float]]:
    """``A^E + omega * A^S`` for every step of one group's episodes (see the module docstring)."""
    rewards = [np.array([s.reward for s in tau], dtype=np.float64) for tau in group]
    penalties = [np.array([config.invalid_penalty * (not s.valid) for s in tau]) for tau in group]
    # Episode relative advantage (Eq. 3), on each row's score.
    episode_returns = np.array([r.sum() for r in rewards])
    scores = [R - p for R, p in zip(episode_returns, penalties, strict=True)]
    pool = episode_returns if config.episode_stats == "episodes" else np.concatenate(scores)
    # verl: a group of one member has mean 0 and std 1; otherwise torch.std (ddof=1)
    mean, std = (0.0, 1.0) if len(pool) < 2 else (pool.mean(), pool.std(ddof=1))
    episode_adv = [_normalise(s, mean, std, config.mode) for s in scores]
    # Discounted step returns (Eq. 5) from the env's rewards; the penalty on the row itself.
    step_returns = []
    for r, p in zip(rewards, penalties, strict=True):
        returns, following = np.zeros(len(r)), 0.0
        for t in reversed(range(len(r))):
            following = r[t] + config.gamma * following
            returns[t] = following
        step_returns.append(returns - p)
    # Anchor-state groups and step relative advantage (Eq. 4, 6, 7); a group of one gets 0.
    anchors: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, tau in enumerate(group):
        for t, step in enumerate(tau):
            anchors[step.state_key].append((i, t))
    step_adv = [np.zeros(len(r)) for r in rewards]
    for members in anchors.values():
        if len(members) < 2:
            continue
        values = np.array([step_returns[i][t] for i, t in members])
        for (i, t), a in zip(members, _normalise(values, values.mean(), values.std(ddof=1), config.mode), strict=True):
            step_adv[i][t] = a
    return [list(e + config.step_weight * s) for e, s in zip(episode_adv, step_adv, strict=True)]


class GiGPO(Algorithm):
    name = "gigpo"
    Config = GiGPOConfig
    collect = "episodes"

    @property
    def reference(self) -> bool:
        return self.config.kl_coef > 0

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        sizes = []
        for group in buffer.groups():
            for tau, advantages in zip(group, gigpo_advantages(group, self.config), strict=True):
                for step, advantage in zip(tau, advantages, strict=True):
                    step.advantage = step.ret = advantage
            keys: dict[str, int] = defaultdict(int)
            for tau in group:
                for step in tau:
                    keys[step.state_key] += 1
            sizes += list(keys.values())
        return {"anchor_group_size": float(np.mean(sizes)) if sizes else 0.0}

    def loss(
        self, policy: Policy, batch: Sequence[Step], update: int, weights: Weights | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        c = self.config
        scores, old, advantages = rescore(policy, batch, entropy=c.entropy_coef > 0)
        logprobs, mask, advantages = scores.logprobs, scores.mask, advantages[:, None]
        device = logprobs.device
        w = (self.weights(batch) if weights is None else weights).to(device)

        ratio = torch.exp(logprobs - old)
        clip_loss = torch.maximum(-advantages * ratio, -advantages * ratio.clamp(1 - c.clip, 1 + c.clip))
        if c.dual_clip is not None:  # bound the loss of negative advantages at -A * c
            clip_loss = torch.where(advantages < 0, torch.minimum(clip_loss, -advantages * c.dual_clip), clip_loss)
        policy_loss = w.tokens_loss(clip_loss, mask)
        kl = torch.zeros_like(logprobs)
        if self.reference:
            kl = low_var_kl(logprobs, reference_logprobs(batch, logprobs.shape[1], device))
        kl_loss = w.tokens_loss(kl, mask)
        entropy = w.tokens_loss(scores.entropy, mask) if scores.entropy is not None else torch.zeros((), device=device)
        stats = {
            "policy_loss": policy_loss.item(),
            "kl": kl_loss.item(),
            "entropy": entropy.item(),
            "clip_fraction": w.mean(((ratio - 1).abs() > c.clip).float(), mask).item(),
        }
        return policy_loss - c.entropy_coef * entropy + c.kl_coef * kl_loss, stats
