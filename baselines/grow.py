"""GROW: GRPO over state-action samples (Wu et al., arXiv 2605.20246, May 2026).

G episodes of a group start from the same task (here: the same seed and level), as GRPO's G
answers to one prompt. ``r_t`` are the env's rewards and ``p`` the invalid-action penalty.

1. Decomposition. Each trajectory ``tau_i = (s_0, a_0, r_0, ..., s_{T_i-1}, a_{T_i-1}, r_{T_i-1})``
   becomes ``T_i`` state-action samples ``x_t^i = (s_t^i, a_t^i)``. A sample's context is the
   prompt of its state (the trainer's prompt: the current observation plus the configured
   ``history``), never the whole trajectory: the long context GROW removes::

       D_g = {x_t^i | i = 1..G, t = 0..T_i - 1},   N_g = |D_g| = sum_i T_i

2. The reward of a sample: the discounted return from its state, minus the penalty if *its own*
   action was invalid::

       R_t^i = sum_{k >= t} gamma^(k - t) r_k^i  -  p * [a_t^i invalid]

   With ``gamma = 1`` and an outcome reward at the end (the paper's Minecraft tasks, our
   household and navigation families) every sample of an episode carries its episode's outcome.
3. Group: all samples of the task's G trajectories, ``D_g``. They are conditioned on different
   local states (GRPO's group shares one prompt); the paper's surrogate analysis argues that the
   relative signal survives this under simplifying assumptions.
4. Advantage between samples, GRPO's normalisation over the sample group::

       A_t^i = (R_t^i - mean(D_g)) / (std(D_g) + 1e-6)

   ``mean`` and ``std`` over the ``N_g`` samples, so a long trajectory weighs as many samples as it
   has steps (GRPO over trajectories would weigh each episode once). ``std`` is the sample standard
   deviation (``torch.std``, as verl's ``compute_grpo_outcome_advantage``); ``norm_by_std=False``
   keeps only the mean (verl's ``norm_adv_by_std_in_grpo``). A group of one sample takes mean 0
   and std 1 (verl's rule), so its advantage is its reward.
5. Loss: GRPO's clipped surrogate per token of the sample's reply, with ``A_t^i`` on every token,
   minus ``entropy_coef`` times the entropy, plus ``kl_coef`` times the k3 estimate of
   ``KL(pi || pi_ref)`` (verl's ``low_var_kl``); the optional dual clip ``c`` bounds the loss of
   negative advantages. This is exactly :class:`~rl4vlm_gym.baselines.gigpo.GiGPO`'s loss (verl's
   ``dp_actor``), so a comparison of the two differs in the advantage only. Each sample is one
   training unit (a mini-batch is made of samples, not episodes).

Source and what was read: the paper's abstract (arXiv 2605.20246, v1 18 May 2026, v2 21 May
2026) and two summaries of it (bittide.aicompass.dev, article afbfaa53-63d4-47da-b4bf-f3bc9d003dc9,
cached 21 May 2026 from arxiv.org/html/2605.20246; pith.science/paper/2605.20246). They state
steps 1, 3 and 4 (decompose collected trajectories into state-action samples; compute GRPO
advantages between samples rather than between whole trajectories; grouped samples conditioned on
different local states). The method section's equations and the paper's hyperparameters were not
in the stored copies this implementation was written from, so no equation number is cited: the
equations above are that description written out in GRPO's notation (Shao et al. 2024,
DeepSeekMath, section 4.1). Choices the description leaves open, and the ones taken:

- the sample's reward (step 2): the discounted return from the sample, not the trajectory's total
  for every sample, so that ``gamma < 1`` credits shorter paths; ``gamma = 1`` (the default,
  GRPO's undiscounted outcome) makes the two the same for outcome rewards;
- the group (step 3): every sample of one task's G episodes, not samples pooled across tasks
  (GRPO's group is one prompt's answers; pooling tasks would compare easy and hard tasks);
- normalisation (step 4): GRPO's mean and standard deviation over the group's samples;
- the invalid-action penalty: verl-agent's (GiGPO's), on the invalid sample's own reward only,
  default 0 (the configs set verl-agent's 0.1, as GiGPO's);
- the loss and its defaults (step 5): verl-agent's GRPO settings, the same as GiGPO's (clip 0.2,
  dual clip 3, low-variance KL 0.01, entropy bonus 0.001, ``token-mean``), the paper's not being
  available; the KL reference is the base model, as for GiGPO.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rl4vlm_gym.baselines.common.algorithm import AGGREGATIONS
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step
from rl4vlm_gym.baselines.gigpo import GiGPO

__all__ = ["GROW", "GROWConfig", "grow_advantages", "sample_rewards"]


@dataclass(frozen=True)
class GROWConfig:
    """GROW's hyperparameters (see the module docstring for where each default comes from).

    Attributes:
        gamma: discount of a sample's return (1: GRPO's undiscounted outcome).
        norm_by_std: divide by the group's standard deviation (False: subtract the mean only).
        invalid_penalty: subtracted from the reward of the sample whose action was invalid.
        clip: the ratio clip epsilon.
        dual_clip: ``c`` of the dual clip (None disables it).
        kl_coef: weight of the low-variance KL to the reference (0 disables it).
        entropy_coef: weight of the entropy bonus (0 disables it).
        loss_agg_mode: ``"token-mean"``, ``"seq-mean-token-mean"`` (GRPO's as written in
            DeepSeekMath) or ``"seq-mean-token-sum"``, a sequence being one sample's reply.
    """

    gamma: float = 1.0
    norm_by_std: bool = True
    invalid_penalty: float = 0.0
    clip: float = 0.2
    dual_clip: float | None = 3.0
    kl_coef: float = 0.01
    entropy_coef: float = 0.001
    loss_agg_mode: str = "token-mean"

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in AGGREGATIONS:
            raise ValueError(f"grow loss_agg_mode={self.loss_agg_mode!r} is unknown; choose one of {AGGREGATIONS}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"grow gamma={self.gamma} is not in [0, 1]")


def sample_rewards(trajectory: Sequence[Step], gamma: float, invalid_penalty: float) -> np.ndarray:
    """``R_t`` of every sample of one trajectory (step 2): the discounted return from ``t``, minus
    the penalty of the sample's own invalid action (never carried into earlier samples)."""
    rewards = np.array([s.reward for s in trajectory], dtype=np.float64)
    returns, following = np.zeros(len(rewards)), 0.0
    for t in reversed(range(len(rewards))):
        following = rewards[t] + gamma * following
        returns[t] = following
    return returns - invalid_penalty * np.array([not s.valid for s in trajectory], dtype=np.float64)


def grow_advantages(group: Sequence[Sequence[Step]], config: GROWConfig) -> list[np.ndarray]:
    """``A_t^i`` for every sample of one task's trajectories (steps 2-4 of the module docstring)."""
    rewards = [sample_rewards(tau, config.gamma, config.invalid_penalty) for tau in group]
    pool = np.concatenate(rewards) if rewards else np.zeros(0)
    # verl: a group of one has mean 0 and std 1; otherwise the sample standard deviation (torch.std)
    mean, std = (0.0, 1.0) if len(pool) < 2 else (float(pool.mean()), float(pool.std(ddof=1)))
    if config.norm_by_std:
        return [(r - mean) / (std + 1e-6) for r in rewards]
    return [r - mean for r in rewards]


class GROW(GiGPO):
    """GROW on the shared trainer: GiGPO's collection (groups of episodes from shared seeds) and
    loss, with the advantage computed between state-action samples (module docstring)."""

    name = "grow"
    Config = GROWConfig  # type: ignore[assignment]  # GROW reuses GiGPO's loss, which reads only fields both configs have
    collect = "episodes"

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        sizes, zero = [], 0
        for group in buffer.groups():
            for tau, advantages in zip(group, grow_advantages(group, self.config), strict=True):
                for step, advantage in zip(tau, advantages, strict=True):
                    step.advantage = step.ret = float(advantage)
                    zero += advantage == 0.0
            sizes.append(sum(len(tau) for tau in group))
        # samples per group, and the share with no signal (every sample of its group scored the same)
        return {"sample_group_size": float(np.mean(sizes)) if sizes else 0.0, "zero_advantage": zero / max(1, len(buffer))}
