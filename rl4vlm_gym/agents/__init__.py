"""Agents: ``act(obs) -> str`` and a batched form (:mod:`rl4vlm_gym.agents.base`).

Built-in agents are named here and imported only when made, so the model agents' heavy
dependencies (``torch``, ``transformers``, ``openai``) load only when used:

- ``random``: uniform over ``obs["actions"]``, seeded per episode;
- ``oracle``: the env's oracle;
- ``prefer``: the first admissible action of a fixed preference list (``-a moves=raise,bet,call``:
  always-raise in poker), a simple exploitable policy that boards must separate from the oracle;
- ``hf``: a local Hugging Face image-text-to-text model (default: a tiny random Qwen2-VL built
  offline), extra ``hf``;
- ``openai``: any OpenAI-compatible chat endpoint (vLLM, hosted APIs), extra ``eval``.

``make_agent("package.module:Class", **kwargs)`` makes any other :class:`Agent` subclass.
"""

from __future__ import annotations

import importlib
from typing import Any

from rl4vlm_gym.agents.base import Agent, AgentUnavailableError, Completion, ModelAgent, Usage

__all__ = ["AGENTS", "Agent", "AgentUnavailableError", "Completion", "ModelAgent", "Usage", "agent_class", "make_agent"]

AGENTS: dict[str, str] = {
    "random": "rl4vlm_gym.agents.simple:RandomAgent",
    "oracle": "rl4vlm_gym.agents.simple:OracleAgent",
    "prefer": "rl4vlm_gym.agents.simple:PreferenceAgent",
    "hf": "rl4vlm_gym.agents.hf:HFAgent",
    "openai": "rl4vlm_gym.agents.openai_api:OpenAIAgent",
}


def agent_class(name: str) -> type[Agent]:
    """The class of the agent ``name`` (a key of :data:`AGENTS` or ``"module:Class"``)."""
    target = AGENTS.get(name, name)
    if ":" not in target:
        raise ValueError(f"unknown agent {name!r}; choose one of {sorted(AGENTS)} or give 'package.module:Class'")
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot load agent {name!r} ({target}): {err}") from err
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise ValueError(f"agent {name!r} ({target}) is not a subclass of rl4vlm_gym.agents.Agent")
    return cls


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Make the agent ``name`` (a key of :data:`AGENTS` or ``"module:Class"``) with ``kwargs``."""
    cls = agent_class(name)
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise ValueError(f"agent {name!r} does not take these arguments {sorted(kwargs)}: {err}") from err
