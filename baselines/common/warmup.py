"""Format warm-up: behaviour cloning of uniformly random admissible actions before RL.

A randomly initialised model almost never writes an admissible action (the tiny model's
vocabulary has 2048 tokens), so RL from it first spends its budget discovering the answer
format. The warm-up teaches the format alone: the targets are *uniformly random* admissible
actions written the way the prompt asks, so the warmed-up policy knows nothing of the task and
plays like the random agent. This is the role of RL4VLM's SFT start (LLaVA fine-tuned on
formatted answers) for a model with no instruction tuning.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig
from rl4vlm_gym.registry import TRAIN_SEEDS

__all__ = ["answer_in_format", "format_warmup"]

logger = logging.getLogger(__name__)


def answer_in_format(prompt: PromptConfig, action: str, actions: Sequence[str]) -> str:
    """``action`` written as the prompt asks for it (with an empty thought)."""
    if prompt.template == "vl-dac":
        return json.dumps({"thoughts": "", "action": list(actions).index(action)})
    if prompt.template == "rl4vlm" or prompt.output_format == "json":
        return json.dumps({"thoughts": "", "action": action})
    if prompt.output_format == "tags":
        return f"<think></think><action>{action}</action>"
    return action


def format_warmup(
    policy: Policy,
    make_env: Callable[[], gym.Env],
    prompt: PromptConfig,
    *,
    env_id: str,
    attach_images: bool,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> list[float]:
    """Train ``policy`` for ``steps`` batches on random formatted actions; returns the losses.

    Observations come from random play of ``make_env()`` (seeds from the training range), so
    they cover the states RL will visit first.
    """
    rng = np.random.default_rng(seed)
    env = make_env()
    builder = PromptBuilder(prompt, env_id=env_id, attach_images=attach_images)
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    losses: list[float] = []
    obs: Mapping[str, Any] | None = None
    policy.model.train()
    try:
        for _ in range(steps):
            conversations, targets = [], []
            for _ in range(batch_size):
                if obs is None:
                    obs, _ = env.reset(seed=int(rng.integers(TRAIN_SEEDS.start, TRAIN_SEEDS.stop)))
                    builder.reset()
                action = str(rng.choice(list(obs["actions"])))
                answer = answer_in_format(prompt, action, obs["actions"])
                conversations.append(builder.messages(obs))
                targets.append(answer)
                builder.record(obs, answer)
                obs, _, terminated, truncated, _ = env.step(answer)
                if terminated or truncated:
                    obs = None
            tokenizer = policy.processor.tokenizer
            replies = [tokenizer.encode(t, add_special_tokens=False) + [tokenizer.eos_token_id] for t in targets]
            inputs = policy.encode(conversations)
            scores = policy.score(policy.prompts(conversations, inputs), replies, values=False, inputs=inputs)
            loss = -(scores.logprobs.sum() / scores.mask.sum())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        env.close()
    logger.info("format warm-up: %d steps, loss %.3f -> %.3f", steps, losses[0] if losses else 0, losses[-1] if losses else 0)
    return losses
