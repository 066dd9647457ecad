"""RL4VLM: PPO with one step-level ratio over lambda-weighted thought and action log-probs
(Zhai et al., NeurIPS 2024; RL4VLM/RL4VLM ``VLM_PPO``).

1. The step's log-likelihood weights the chain of thought by ``lambda`` (``thought_coef``)::

       log pi(a_t | o_t) = lambda * sum_{k in thought} log pi(y_{t,k}) + sum_{k in action} log pi(y_{t,k})

   The reply is split where its action field begins *in the text* (the last ``"action":``
   key), mapped back to tokens. The released code searched for hard-coded token ids of
   ``"action":`` that were wrong for its own tokenizer (issue #17), so its split fell back to
   "the last 4 tokens". A reply with no action key is all action.
2. One ratio per step and the clipped surrogate::

       rho_t = exp(log pi(a_t | o_t) - log pi_old(a_t | o_t))
       L_clip = -min(rho_t A_t, clip(rho_t, 1 - eps, 1 + eps) A_t)

3. Critic: an MLP on the last prompt token's hidden state, *without* a stop-gradient (the value
   loss trains the LoRA backbone too); step-level GAE, normalised over the buffer as the
   release's ``(A - mean) / (torch.std(A) + 1e-5)`` (sample std; a buffer of one step gets 0).
4. ``loss = L_clip + c_v * 0.5 * max((V - R)^2, (V_old + clip(V - V_old, +-eps) - R)^2)``
   (the release's ``0.5 * value_loss`` with the value loss already halved), averaged over the
   steps of the mini-batch (``seq-mean``: there is no per-token loss to aggregate).

Where we differ from the release, on purpose: the split above (by text, not by token ids that
did not match the tokenizer); every reply token is scored (the release dropped the first two
from the sum) under the step's stored prompt (the release scored every step under the run's
first prompt) at the sampling temperature; ``ratio_guard`` reproduces the release's "if any
ratio > 10, use the clipped term only" but is off by default (it is not in the paper).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rl4vlm_gym.baselines.common.advantages import step_gae
from rl4vlm_gym.baselines.common.algorithm import Algorithm, Weights, rescore, value_loss
from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step

__all__ = ["RL4VLM", "RL4VLMConfig", "action_start"]

_ACTION_KEY = re.compile(r"""["']action["']\s*:""", re.IGNORECASE)


@dataclass(frozen=True)
class RL4VLMConfig:
    """RL4VLM's hyperparameters (``scripts/run_*.sh``: lambda 0.5 on gym-cards, 0.2 on ALFWorld).

    Attributes:
        gamma: discount over env steps.
        gae_lambda: GAE's lambda.
        thought_coef: ``lambda``, the weight of the thought tokens' log-probs.
        clip: the ratio clip epsilon.
        value_clip: the value clip epsilon.
        value_coef: ``c_v``.
        normalize_advantages: standardise advantages over the buffer.
        ratio_guard: if set and any ratio of the mini-batch exceeds it, only the clipped term.
    """

    gamma: float = 0.9
    gae_lambda: float = 0.95
    thought_coef: float = 0.5
    clip: float = 0.1
    value_clip: float = 0.1
    value_coef: float = 0.5
    normalize_advantages: bool = True
    ratio_guard: float | None = None


def action_start(pieces: Sequence[str]) -> int:
    """The index of the first token of the action field, given each token's decoded text.

    The action field starts at the last ``"action":`` key of the reply; the token holding its
    first character starts the action. Without a key the whole reply is the action (0).
    """
    text = "".join(pieces)
    matches = list(_ACTION_KEY.finditer(text))
    if not matches:
        return 0
    start, end = matches[-1].start(), 0
    for k, piece in enumerate(pieces):
        end += len(piece)
        if end > start:
            return k
    return len(pieces)


class RL4VLM(Algorithm):
    name = "rl4vlm"
    Config = RL4VLMConfig
    collect = "steps"
    critic = True
    value_stop_gradient = False

    def estimate(self, buffer: RolloutBuffer) -> dict[str, float]:
        step_gae(buffer, self.config.gamma, self.config.gae_lambda, self.config.normalize_advantages, eps=1e-5)
        return {}

    def thought_weights(self, policy: Policy, batch: Sequence[Step], width: int) -> torch.Tensor:
        """``[B, width]``: ``lambda`` on thought tokens, 1 on action tokens, 0 on padding."""
        tokenizer = policy.processor.tokenizer
        out = torch.zeros((len(batch), width))
        for i, step in enumerate(batch):
            pieces = [tokenizer.decode([t]) for t in step.response]
            k = action_start(pieces)
            out[i, :k] = self.config.thought_coef
            out[i, k : len(step.response)] = 1.0
        return out

    def loss(
        self, policy: Policy, batch: Sequence[Step], update: int, weights: Weights | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        c = self.config
        scores, old, advantages = rescore(policy, batch, values=True)
        device = scores.logprobs.device
        w = (self.weights(batch) if weights is None else weights).to(device)
        lam = self.thought_weights(policy, batch, scores.logprobs.shape[1]).to(device)

        new_logp = (lam * scores.logprobs).sum(1)  # lambda * thought + action
        old_logp = (lam * old).sum(1)
        ratio = torch.exp(new_logp - old_logp)  # one rho_t per step
        unclipped = ratio * advantages
        clipped = ratio.clamp(1 - c.clip, 1 + c.clip) * advantages
        guard = c.ratio_guard is not None and bool((ratio > c.ratio_guard).any())
        policy_loss = w.rows_loss(-(clipped if guard else torch.minimum(unclipped, clipped)))
        critic_loss = w.rows_loss(0.5 * value_loss(batch, scores.values, c.value_clip))
        stats = {
            "policy_loss": policy_loss.item(),
            "value_loss": critic_loss.item(),
            "clip_fraction": w.mean(((ratio - 1).abs() > c.clip).float()).item(),
            "thought_tokens": w.mean((lam == c.thought_coef).float().sum(1)).item() if c.thought_coef != 1 else 0.0,
        }
        return policy_loss + c.value_coef * critic_loss, stats
