"""Every prompt template builds the same prompt over rl4vlm/Remote-v0 as over the local env (issue 37: BALROG's
prompt was 1,078 characters locally and 638 remotely: the served env's instruction prompt did not cross).

The prompts are built as an evaluation builds them, by a model agent (:class:`~rl4vlm_gym.agents.base.ModelAgent`:
``begin`` reads the env's id, obs_mode and instruction prompt, ``observe`` the info, ``act_batch`` builds the
messages); its model is a stub that answers a fixed text. The server runs in a thread of this process, with its
oracle exposed (the few-shot agent's demonstrations are played by the env's oracle)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
from serving import served_here  # noqa: E402 - tests/server (conftest.py puts it on the path)

from rl4vlm_gym.agents.base import Completion, ModelAgent  # noqa: E402
from rl4vlm_gym.prompts import PromptConfig  # noqa: E402
from rl4vlm_gym.server.environment import Catalog  # noqa: E402

# Envs with BALROG's instructions and observation text in info (BabyAI, BabaIsAI), RL4VLM's two prompt families
# (NumberLine, the household's ALFWorld prompt) and generic instructions (NumberLine under balrog).
# The inner loop plays the first two; the full run all (TextWorld: BALROG shows no image for it, 0.7 s a make).
IDS = ["rl4vlm/NumberLine-v0", "balrog/BabyAI-GoTo-v0"]
SLOW_IDS = ["balrog/BabaIsAI-goto_win-v0", "rl4vlm/Household-v0", "balrog/TextWorld-CoinCollector-v0"]
RL4VLM_IDS = {"rl4vlm/NumberLine-v0", "rl4vlm/Household-v0"}  # the games RL4VLM's prompts were written for
CONFIGS = [
    PromptConfig(),
    PromptConfig(output_format="tags", history=2, images=2),
    PromptConfig(output_format="plain", images=0),
    PromptConfig(template="vl-dac", images=2),
    PromptConfig(template="rl4vlm"),
    *(
        PromptConfig(template="balrog", output_format=agent, history=2)
        for agent in ("balrog-naive", "balrog-cot", "balrog-few-shot")
    ),
    PromptConfig(template="balrog", output_format="balrog-robust-cot", images=0),
]
STEPS = 3


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    catalog = Catalog({i: (i, {}) for i in IDS + SLOW_IDS}, expose_oracle=True, title="prompt parity")
    with served_here(catalog) as served:
        yield served


class _Stub(ModelAgent):
    """A model agent whose model answers ``reply``; it keeps every conversation it was asked to complete."""

    def __init__(self, prompt: PromptConfig, reply: str) -> None:
        super().__init__(prompt)
        self.reply, self.conversations = reply, []

    def complete(self, conversations: Sequence[list[Any]]) -> list[Completion]:
        self.conversations += [_comparable(c) for c in conversations]
        return [Completion(self.reply) for _ in conversations]


def _comparable(messages: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each message's role and parts: texts as they are, images by their shape and bytes' digest."""

    def part(p: dict[str, Any]) -> str:
        if p["type"] == "text":
            return p["text"]
        image = np.ascontiguousarray(p["image"])
        return f"image {image.shape} {hashlib.sha256(image.tobytes()).hexdigest()}"

    return [(m["role"], [part(p) for p in m["content"]]) for m in messages]


def _episode(env: gym.Env, config: PromptConfig, seed: int) -> list[Any]:
    """The prompts an agent builds over an episode's reset and first steps (the env plays its first admissible action)."""
    obs, info = env.reset(seed=seed)
    agent = _Stub(config, reply=f'<action>{obs["actions"][0]}</action> {{"action": "{obs["actions"][0]}"}}')
    agent.begin(env, seed)
    for _ in range(STEPS):
        agent.observe(info)
        agent.act_batch([obs])
        obs, _, terminated, truncated, info = env.step(obs["actions"][0])
        if terminated or truncated:
            break
    agent.close()
    return agent.conversations


def _check(url: str, env_id: str) -> None:
    local = gym.make(env_id)
    remote = gym.make("rl4vlm/Remote-v0", url=url, env_id=env_id)
    try:
        for config in CONFIGS:
            if config.template == "rl4vlm" and env_id not in RL4VLM_IDS:
                continue
            if config.output_format == "balrog-few-shot" and not local.unwrapped.HAS_ORACLE:
                continue
            ours = _episode(local, config, seed=11)
            theirs = _episode(remote, config, seed=11)
            assert len(theirs) == len(ours) > 0, (config, len(theirs), len(ours))
            for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
                assert b == a, f"{env_id} {config} step {step}: the remote prompt differs from the local one"
    finally:
        local.close(), remote.close()


@pytest.mark.parametrize("env_id", IDS)
def test_every_prompt_template_builds_the_local_env_s_prompt_over_a_remote_env(url, env_id) -> None:
    _check(url, env_id)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", SLOW_IDS)
def test_every_prompt_template_builds_the_local_env_s_prompt_over_a_remote_env_slow_ids(url, env_id) -> None:
    _check(url, env_id)
