"""The agent interface: ``act(obs) -> str``, a batched form, and the model-agent base class.

An agent plays one or more episode *streams* at once: stream ``i`` is one env's episode, started
with :meth:`Agent.begin` and answered by :meth:`Agent.act` (``index=i``) or, for all streams at
once, :meth:`Agent.act_batch`. Before each act the harness hands the agent the ``info`` that came
with the observation (:meth:`Agent.observe`; BALROG's prompt reads its observation text there).
Agents that talk to a model also report the tokens each answer cost in :attr:`Agent.usage`.

:class:`ModelAgent` is the base of every agent that prompts a model: it keeps one
:class:`~rl4vlm_gym.prompts.PromptBuilder` per stream (so history never leaks between episodes)
and asks its subclass only to :meth:`~ModelAgent.complete` a batch of chat conversations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym

from rl4vlm_gym.agents.demos import oracle_demos
from rl4vlm_gym.prompts import BALROG_SAMPLING, BalrogDemo, Message, PromptBuilder, PromptConfig

__all__ = ["Agent", "AgentUnavailableError", "Completion", "ModelAgent", "Usage"]


class AgentUnavailableError(RuntimeError):
    """The agent cannot act at all, for any episode: its model endpoint cannot be reached, or does not
    answer in time. An evaluation stops on it, keeping its finished episodes, instead of recording every
    remaining episode as failed; run again once the model is up, and it resumes."""


@dataclass(frozen=True)
class Usage:
    """Tokens one answer cost: the prompt (images included, as the model counts them) and the reply."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """One model reply and what it cost."""

    text: str
    usage: Usage = Usage()


class Agent:
    """Base class of every agent.

    Subclasses implement :meth:`act_batch` (or :meth:`act`) and may override :meth:`begin` and
    :meth:`close`. ``name`` identifies the agent in results and leaderboards.
    """

    name: str = "agent"

    def __init__(self) -> None:
        self.usage: dict[int, Usage] = {}

    def begin(self, env: gym.Env, seed: int | None, index: int = 0) -> None:
        """A new episode of ``env`` (reset with ``seed``) starts in stream ``index``."""

    def observe(self, info: Mapping[str, Any], index: int = 0) -> None:
        """The ``info`` the env returned (from ``reset`` or ``step``) with the observation that the
        next :meth:`act` of stream ``index`` answers. Optional: agents that need it keep it."""

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        """The output for ``obs`` in stream ``index``: any text; the env parses it."""
        return self.act_batch([obs], [index])[0]

    def act_batch(self, observations: Sequence[Mapping[str, Any]], indices: Sequence[int] | None = None) -> list[str]:
        """Outputs for several streams at once (``indices`` defaults to ``0..n-1``)."""
        indices = range(len(observations)) if indices is None else indices
        if type(self).act is Agent.act:
            raise NotImplementedError(f"{type(self).__name__} must implement act or act_batch")
        return [self.act(obs, i) for obs, i in zip(observations, indices, strict=True)]

    def describe(self) -> dict[str, Any]:
        """What identifies this agent in a result file (JSON-serialisable)."""
        return {"name": self.name}

    def close(self) -> None:
        """Release models, connections and processes; safe to call twice."""


class ModelAgent(Agent):
    """An agent that prompts a model with :mod:`rl4vlm_gym.prompts` and returns its reply.

    Args:
        prompt: the prompt configuration (template, output format, history, images).

    Under the ``balrog`` template the builder gets each observation's ``info`` (from
    :meth:`observe`, used by the next act of the stream only) and, for ``balrog-few-shot``, the
    env's demonstrations (:func:`rl4vlm_gym.agents.demos.oracle_demos`).
    """

    name = "model"
    SAMPLING_ARGS: ClassVar[Mapping[str, str]] = {}
    """BALROG's sampling settings (:data:`~rl4vlm_gym.prompts.BALROG_SAMPLING`) by this agent's
    argument names: ``{"temperature": "temperature", "max_tokens": "max_new_tokens"}``."""

    def __init__(self, prompt: PromptConfig | Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.prompt = prompt if isinstance(prompt, PromptConfig) else PromptConfig(**dict(prompt or {}))
        self._builders: dict[int, PromptBuilder] = {}
        self._infos: dict[int, Mapping[str, Any]] = {}
        self.builder_options: dict[str, Any] = {}
        """Extra :class:`~rl4vlm_gym.prompts.PromptBuilder` arguments for new episodes (BALROG's
        ``icl_episodes``, ``max_icl_history``, ``cot_history``); empty: BALROG's config values."""

    @classmethod
    def protocol_defaults(cls, prompt: PromptConfig | None) -> dict[str, Any]:
        """The arguments this agent takes by default under ``prompt``'s protocol: BALROG's sampling
        settings (temperature 1.0, 8192 new tokens) under the ``balrog`` template, else none."""
        if prompt is None or prompt.template != "balrog":
            return {}
        return {own: BALROG_SAMPLING[name] for name, own in cls.SAMPLING_ARGS.items() if name in BALROG_SAMPLING}

    def begin(self, env: gym.Env, seed: int | None, index: int = 0) -> None:
        base = env.unwrapped
        # a served env (rl4vlm/Remote-v0) is prompted as the env it serves, as it would be locally
        env_id = getattr(base, "served_id", None) or (env.spec.id if env.spec is not None else "")
        obs_mode = getattr(base, "obs_mode", "image+text")
        instructions = base.instruction_prompt() if hasattr(base, "instruction_prompt") else None
        demos = self.demonstrations(env) if self.prompt.output_format == "balrog-few-shot" else ()
        self._infos.pop(index, None)
        self._builders[index] = PromptBuilder(
            self.prompt, env_id=env_id, attach_images=obs_mode != "text", instructions=instructions, demos=demos, **self.builder_options
        )

    def demonstrations(self, env: gym.Env) -> Sequence[BalrogDemo]:
        """The few-shot agent's candidate demonstrations for an episode of ``env``: the oracle's
        (:func:`~rl4vlm_gym.agents.demos.oracle_demos`); override to bring recorded ones."""
        return oracle_demos(env)

    def observe(self, info: Mapping[str, Any], index: int = 0) -> None:
        self._infos[index] = info

    def act_batch(self, observations: Sequence[Mapping[str, Any]], indices: Sequence[int] | None = None) -> list[str]:
        """Replies for several streams; what :meth:`observe` was given for each stream since its
        last act goes to the prompt builder with the observations."""
        indices = list(range(len(observations)) if indices is None else indices)
        infos = [self._infos.pop(i, None) for i in indices]
        builders = [self._builder(i) for i in indices]
        conversations = [b.messages(obs, info) for b, obs, info in zip(builders, observations, infos, strict=True)]
        completions = self.complete(conversations)
        if len(completions) != len(conversations):
            raise RuntimeError(f"{type(self).__name__}.complete returned {len(completions)} replies for {len(conversations)} prompts")
        for builder, obs, info, index, completion in zip(builders, observations, infos, indices, completions, strict=True):
            builder.record(obs, completion.text, info)
            self.usage[index] = completion.usage
        return [c.text for c in completions]

    def complete(self, conversations: Sequence[list[Message]]) -> list[Completion]:
        """One reply per conversation (neutral messages; see :mod:`rl4vlm_gym.prompts`)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "prompt": self.prompt.as_dict()}

    def _builder(self, index: int) -> PromptBuilder:
        if index not in self._builders:  # act without begin: a prompt that names no env
            self._builders[index] = PromptBuilder(self.prompt)
        return self._builders[index]
