"""What identifies a prompt in an evaluation's protocol (:mod:`rl4vlm_gym.harness.suite`).

A fingerprint is the config and a sample of the text its template produces on probe
observations, so a change of a template's words changes the protocol hash of the suites that use it.
"""

from __future__ import annotations

import json

import numpy as np

from rl4vlm_gym.prompts.builder import PromptBuilder
from rl4vlm_gym.prompts.config import BalrogDemo, Message, PromptConfig
from rl4vlm_gym.prompts.templates import RL4VLM_ALFWORLD, RL4VLM_BLACKJACK, RL4VLM_NUMBERLINE, RL4VLM_POINTS, vldac_text

__all__ = ["prompt_fingerprint"]


def prompt_fingerprint(config: PromptConfig) -> str:
    """What identifies a prompt in a protocol: the config and the template text it produces."""
    probe = {"image": np.zeros((1, 1, 3), np.uint8), "text": "<text>", "mission": "<mission>", "actions": ("<a>", "<b>")}
    if config.template == "balrog":  # the env's own instructions are versioned with the env
        return json.dumps({"config": config.as_dict(), "sample": _balrog_sample(config.output_format)}, sort_keys=True, default=str)
    builder = PromptBuilder(PromptConfig(template="default", output_format=config.output_format), attach_images=False)
    sample = {"default": builder.messages(probe), "vl-dac": vldac_text(probe, 0)}
    if config.template == "rl4vlm":
        sample["rl4vlm"] = [RL4VLM_NUMBERLINE, RL4VLM_BLACKJACK, RL4VLM_POINTS, RL4VLM_ALFWORLD]
    return json.dumps({"config": config.as_dict(), "sample": sample[config.template]}, sort_keys=True, default=str)


def _balrog_sample(agent: str) -> list[list[Message]]:
    """The ``balrog`` template's messages over three probe steps (history, plans, feedback-free),
    with a probe demonstration for the few-shot agent."""
    demo = BalrogDemo(("<demo 0>", "<demo 1>"), ("<a>",))
    builder = PromptBuilder(
        PromptConfig(template="balrog", output_format=agent, history=2, images=1), instructions="<instructions> PLAY!", demos=[demo]
    )
    samples = []
    for t in range(3):
        obs = {"image": np.zeros((1, 1, 3), np.uint8), "text": f"<text {t}>", "mission": "<mission>", "actions": ("<a>", "<b>")}
        info = {"balrog": {"long_term_context": f"<long {t}>", "short_term_context": f"<short {t}>"}}
        samples.append(builder.messages(obs, info))
        builder.record(obs, f"<thoughts {t}> ACTION: <a>", info)
    return samples
