"""GiGPO: group-in-group policy optimisation (Feng et al., NeurIPS 2025; verl-agent).

N episodes of a group start from the same seed. With ``r_t`` the step rewards (an invalid
action costs ``invalid_penalty`` at its own step, as verl-agent's ``apply_invalid_action_penalty``):

1. Episode relative advantage (Eq. 3), over the group's episode returns ``R(tau_i) = sum_t r_t``::

       A^E(tau_i) = (R(tau_i) - mean_j R(tau_j)) / F({R(tau_j)})

2. Discounted step returns (Eq. 5): ``R_t = r_t + gamma * R_{t+1}``.
3. Anchor-state groups (Eq. 4/6): within the episode group, the steps whose state has the same
   ``info["state_key"]`` (exact match; an image env's key names its state exactly)::

       G^S(s) = {(a_t^i, R_t^i) | s_t^i = s}

4. Step relative advantage (Eq. 7): ``A^S = (R_t - mean(G^S)) / F(G^S)``; 0 in a group of one.
5. ``A = A^E + omega * A^S`` (Eq. 8) on every token of the step's reply.

``F`` is 1 (``mode="mean_norm"``, verl-agent's default and the paper's "w/o std") or the
standard deviation plus 1e-6 (``"mean_std_norm"``). ``episode_stats="steps"`` takes the episode
mean and std over all step rows of the group as verl-agent's code does
(``compute_mean_std_cross_steps``, issue #138) instead of over the episodes as in Eq. 3.

Loss (verl's ``dp_actor``): PPO's clipped surrogate with the dual clip ``c`` for negative
advantages, token-mean over the mini-batch, minus ``entropy_coef`` times the token-mean entropy
of the policy (``ppo_trainer.yaml``: 0.001), plus ``kl_coef`` times verl's ``low_var_kl`` (k3
clamped to +-10) to the reference policy.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rl4vlm_gym.baselines.common.algorithm import Algorithm, padded, rescore
from rl4vlm_gym.baselines.common.losses import k3_kl, masked_mean
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
        invalid_penalty: subtracted from the reward of a step whose action was invalid.
        clip: the ratio clip epsilon.
        dual_clip: ``c`` of the dual clip (None disables it).
        kl_coef: weight of the low-variance KL to the reference (0 disables it).
        entropy_coef: weight of the entropy bonus (0 disables it).
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

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"gigpo mode={self.mode!r} is unknown; choose one of {MODES}")
        if self.episode_stats not in ("episodes", "steps"):
            raise ValueError(f"gigpo episode_stats={self.episode_stats!r} is unknown; choose 'episodes' or 'steps'")


def _relative(values: np.ndarray, mode: str) -> np.ndarray:
    """``(x - mean) / F`` of one group; a group of one has advantage 0."""
    if len(values) < 2:
        return np.zeros(len(values))
    centred = values - values.mean()
    return centred / (values.std(ddof=1) + 1e-6) if mode == "mean_std_norm" else centred


def gigpo_advantages(group: Sequence[Sequence[Step]], config: GiGPOConfig) -> list[list[float]]:
    """``A^E + omega * A^S`` for every step of one group's episodes (see the module docstring)."""
    rewards = [np.array([s.reward - config.invalid_penalty * (not s.valid) for s in tau]) for tau in group]
    # Episode relative advantage (Eq. 3).
    episode_returns = np.array([r.sum() for r in rewards])
    if config.episode_stats == "episodes":
        episode_adv = [np.full(len(r), a) for r, a in zip(rewards, _relative(episode_returns, config.mode), strict=True)]
    else:  # every step row carries its episode's return; statistics over rows
        rows = np.concatenate([np.full(len(r), R) for r, R in zip(rewards, episode_returns, strict=True)])
        mean, std = rows.mean(), (rows.std(ddof=1) if len(rows) > 1 else 1.0)
        scale = std + 1e-6 if config.mode == "mean_std_norm" else 1.0
        episode_adv = [np.full(len(r), (R - mean) / scale) for r, R in zip(rewards, episode_returns, strict=True)]
    # Discounted step returns (Eq. 5).
    step_returns = []
    for r in rewards:
        returns, following = np.zeros(len(r)), 0.0
        for t in reversed(range(len(r))):
            following = r[t] + config.gamma * following
            returns[t] = following
        step_returns.append(returns)
    # Anchor-state groups and step relative advantage (Eq. 4, 6, 7).
    anchors: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, tau in enumerate(group):
        for t, step in enumerate(tau):
            anchors[step.state_key].append((i, t))
    step_adv = [np.zeros(len(r)) for r in rewards]
    for members in anchors.values():
        values = np.array([step_returns[i][t] for i, t in members])
        for (i, t), a in zip(members, _relative(values, config.mode), strict=True):
            step_adv[i][t] = a
    return [list(e + config.step_weight * s) for e, s in zip(episode_adv, step_adv, strict=True)]


class GiGPO(Algorithm):
    name = "gigpo"
    Config = GiGPOConfig
    collect = "episodes"
    aggregation = "token"

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

    def loss(self, policy: Policy, batch: Sequence[Step], update: int) -> tuple[torch.Tensor, dict[str, Any]]:
        c = self.config
        scores, old, advantages = rescore(policy, batch, entropy=c.entropy_coef > 0)
        logprobs, mask, advantages = scores.logprobs, scores.mask, advantages[:, None]
        device = logprobs.device

        ratio = torch.exp(logprobs - old)
        clip_loss = torch.maximum(-advantages * ratio, -advantages * ratio.clamp(1 - c.clip, 1 + c.clip))
        if c.dual_clip is not None:  # bound the loss of negative advantages at -A * c
            clip_loss = torch.where(advantages < 0, torch.minimum(clip_loss, -advantages * c.dual_clip), clip_loss)
        policy_loss = masked_mean(clip_loss, mask)
        kl = torch.zeros_like(logprobs)
        if self.reference:
            kl = k3_kl(logprobs, padded([s.ref_logprobs for s in batch], logprobs.shape[1], device), clamp=10.0)
        kl_loss = masked_mean(kl, mask)
        entropy = masked_mean(scores.entropy, mask) if scores.entropy is not None else torch.zeros((), device=device)
        stats = {
            "policy_loss": policy_loss.item(),
            "kl": kl_loss.item(),
            "entropy": entropy.item(),
            "clip_fraction": masked_mean(((ratio - 1).abs() > c.clip).float(), mask).item(),
        }
        return policy_loss - c.entropy_coef * entropy + c.kl_coef * kl_loss, stats
