"""TRL's ``GRPOTrainer`` on our envs: multi-turn episodes as GRPO completions, the env's return as the reward.

TRL (1.16) has two hooks for environments. ``environment_factory`` exposes an env's methods as
*tools* the model calls in its chat template's tool-call syntax; it needs a tool-calling model and
chat template, and our actions are free text, not tool calls. ``rollout_func`` lets the caller play
the episodes: :class:`EnvRollout` is one. It plays each dataset row as an episode of the env, turn
after turn: the prompt is built by :class:`~rl4vlm_gym.prompts.PromptBuilder`, each reply goes to
``env.step`` as the action (the env's :class:`~rl4vlm_gym.parsing.ActionParser` reads it), and
the next observation is appended as a user message, so the completion is the whole conversation
of the episode. The observation messages are marked as not the model's (TRL's ``env_mask``), so
only the replies are trained. The episode's return (the sum of the env's rewards) goes to TRL as
the extra field ``env_reward``; pass :func:`env_reward` as the reward function.

**Text observations only.** With ``rollout_func``, TRL 1.16 computes the training log-probs with
the images of the *dataset* rows only (``_generate_and_score_completions`` restores them after the
rollout); images seen during the episode cannot reach the loss. So the prompts here carry no
image and the env must put its state in the text: ``obs_mode="text"`` or ``"image+text"``
(``"image"`` is refused). A VLM trains on the text observation like a language model.

Generation goes through the trainer's own generator (``GRPOTrainer._generate_single_turn``:
``transformers.generate`` on CPU, vLLM when ``use_vllm=True``), so the rollout samples with the
trainer's settings and, with vLLM, returns the sampling log-probs TRL's importance correction
needs. That is a private method of TRL's, which is why the ``trl`` extra pins TRL's version.

Dataset rows name episodes: :func:`episode_dataset` writes each row's ``prompt`` as a small JSON
object ``{"seed": int, "options": {...}}`` (``options`` go to ``reset``, e.g. ``{"level": 2}``);
TRL repeats each row ``num_generations`` times, so a GRPO group plays the same episode.

Example (a tiny run; :mod:`examples/trl_grpo.py` is the worked one)::

    from trl import GRPOConfig, GRPOTrainer
    from rl4vlm_gym.integrations.trl import EnvRollout, env_reward, episode_dataset

    rollout = EnvRollout("rl4vlm/NumberLine-v0", max_turns=4)
    trainer = GRPOTrainer(model=model, processing_class=processor, reward_funcs=env_reward,
                          args=GRPOConfig(...), train_dataset=episode_dataset(range(64)),
                          rollout_func=rollout)
    trainer.train()
    rollout.close()
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from rl4vlm_gym.prompts import PromptBuilder, PromptConfig, to_hf

__all__ = ["EnvRollout", "env_reward", "episode_dataset", "episode_spec", "parse_episode_spec"]

MAX_SPEC_BYTES = 4096
"""A dataset row's prompt is parsed only up to this size (rows may come from anywhere)."""


def episode_spec(seed: int, options: Mapping[str, Any] | None = None) -> str:
    """The ``prompt`` of a dataset row that plays the episode ``reset(seed=seed, options=options)``."""
    return json.dumps({"seed": int(seed), "options": dict(options or {})}, sort_keys=True)


def parse_episode_spec(prompt: Any) -> tuple[int, dict[str, Any]]:
    """``(seed, options)`` from a row's prompt written by :func:`episode_spec`; a clear error otherwise."""
    if not isinstance(prompt, str):
        raise ValueError(
            f"a dataset row's prompt must be an episode spec string (episode_dataset / episode_spec), got {type(prompt).__name__}"
        )
    if len(prompt) > MAX_SPEC_BYTES:
        raise ValueError(f"episode spec of {len(prompt)} characters is over the limit of {MAX_SPEC_BYTES}")
    try:
        spec = json.loads(prompt)
    except json.JSONDecodeError as error:
        raise ValueError(f"episode spec {prompt[:80]!r} is not JSON ({error.msg}); write rows with episode_spec") from None
    if not isinstance(spec, dict) or set(spec) - {"seed", "options"}:
        raise ValueError(f'episode spec {prompt[:80]!r} must be an object with "seed" and optional "options"')
    seed, options = spec.get("seed"), spec.get("options", {})
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ValueError(f"episode spec seed {seed!r} must be an int in [0, 2**32)")
    if not isinstance(options, dict):
        raise ValueError(f"episode spec options {options!r} must be an object")
    return seed, options


def episode_dataset(seeds: Iterable[int], options: Mapping[str, Any] | None = None) -> Any:
    """A ``datasets.Dataset`` with one row per seed, each row's prompt an episode spec."""
    from datasets import Dataset

    return Dataset.from_dict({"prompt": [episode_spec(seed, options) for seed in seeds]})


def env_reward(completions: Sequence[Any], env_reward: Sequence[float], **kwargs: Any) -> list[float]:
    """TRL reward function: each completion's episode return, as :class:`EnvRollout` measured it."""
    if len(env_reward) != len(completions):
        raise ValueError(f"{len(env_reward)} env rewards for {len(completions)} completions: is rollout_func an EnvRollout?")
    return [float(r) for r in env_reward]


class EnvRollout:
    """A ``rollout_func`` for TRL's ``GRPOTrainer`` that plays each row as a multi-turn episode.

    Args:
        env: an env id (made with ``gym.make(env, obs_mode=..., **env_kwargs)``) or a callable
            returning a fresh env, e.g. ``lambda: gym.make("rl4vlm/Remote-v0", url=..., env_id=...,
            obs_mode="text")`` (a callable's env keeps its own ``obs_mode``).
            One env per completion of a batch, kept and reset across batches.
        prompt: the prompt configuration (``images`` is ignored: prompts are text, see the module).
        max_turns: replies per episode at most; an episode still running then is cut there, its
            return what it earned so far.
        obs_mode: ``obs_mode`` for an env made from an id (``"text"`` or ``"image+text"``).
        env_kwargs: more ``gym.make`` arguments for an env made from an id.
        env_id: the id the prompt templates see (the ``rl4vlm`` template picks its text by it);
            default: the id given, or the env's spec id.

    Per completion it returns the extra fields ``env_reward`` (the return), ``env_success`` and
    ``env_turns``, which TRL hands to every reward function as keyword arguments.
    """

    def __init__(
        self,
        env: str | Callable[[], gym.Env],
        *,
        prompt: PromptConfig | None = None,
        max_turns: int = 8,
        obs_mode: str = "text",
        env_kwargs: Mapping[str, Any] | None = None,
        env_id: str | None = None,
    ) -> None:
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns={max_turns!r} must be an int >= 1")
        if obs_mode not in ("text", "image+text"):
            raise ValueError(
                f"obs_mode={obs_mode!r}: TRL's rollout_func trains on text only, so the state must be in the text "
                "('text' or 'image+text')"
            )
        if isinstance(env, str):
            make_kwargs = {"obs_mode": obs_mode, **dict(env_kwargs or {})}
            env_name = env
            self._make: Callable[[], gym.Env] = lambda: gym.make(env_name, **make_kwargs)
            self.env_id: str | None = env_id or env
        elif callable(env):
            self._make = env
            self.env_id = env_id
        else:
            raise TypeError(f"env must be an env id or a callable returning an env, got {type(env).__name__}")
        self.prompt = prompt or PromptConfig()
        self.max_turns = max_turns
        self.envs: list[gym.Env] = []
        self._suffix_cache: dict[str, list[int]] = {}

    # The hook -------------------------------------------------------------------------------------

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        specs = [parse_episode_spec(p) for p in prompts]
        while len(self.envs) < len(specs):
            self.envs.append(self._new_env())
        processing = trainer.processing_class
        tokenizer = getattr(processing, "tokenizer", processing)
        eos = tokenizer.eos_token_id

        episodes = []
        for env, (seed, options) in zip(self.envs, specs, strict=False):
            obs, _ = env.reset(seed=seed, options=options or None)
            builder = PromptBuilder(self.prompt, env_id=self.env_id or "", attach_images=False, instructions=_instructions(env))
            messages, _ = to_hf(builder.messages(obs))
            prompt_ids = self._encode(processing, tokenizer, messages, generation_prompt=True)
            episodes.append(_Episode(env, builder, obs, prompt_ids))

        for turn in range(self.max_turns):
            active = [e for e in episodes if not e.done]
            if not active:
                break
            replies, logprobs = trainer._generate_single_turn(
                [e.prompt_ids + e.completion_ids for e in active], None, {}, num_generations=1
            )
            for i, (episode, reply) in enumerate(zip(active, replies, strict=True)):
                reply = list(reply)
                text = tokenizer.decode(reply, skip_special_tokens=True)
                episode.add(reply, 1, None if logprobs is None else list(logprobs[i]))
                obs, reward, terminated, truncated, info = episode.env.step(text)
                episode.builder.record(episode.obs, text)
                episode.obs = obs
                episode.reward += float(reward)
                episode.turns += 1
                episode.success = bool(info.get("success", False))
                episode.done = terminated or truncated
                if not episode.done and turn + 1 < self.max_turns:
                    # the next observation, as the chat template writes a user turn after the reply
                    closing = [] if reply and reply[-1] == eos else [eos]
                    message = to_hf(episode.builder.messages(obs)[-1:])[0]
                    episode.add(closing + self._user_turn_ids(processing, tokenizer, message[0]), 0, None)

        have_logprobs = all(e.logprobs is not None for e in episodes)
        return {
            "prompt_ids": [e.prompt_ids for e in episodes],
            "completion_ids": [e.completion_ids for e in episodes],
            "logprobs": [e.logprobs for e in episodes] if have_logprobs else None,
            "env_mask": [e.mask for e in episodes],
            "env_reward": [e.reward for e in episodes],
            "env_success": [e.success for e in episodes],
            "env_turns": [e.turns for e in episodes],
        }

    # Helpers --------------------------------------------------------------------------------------

    def _new_env(self) -> gym.Env:
        env = self._make()
        unwrapped = env.unwrapped
        # a local env knows its obs_mode; rl4vlm/Remote-v0 keeps the served env's make arguments
        obs_mode = getattr(unwrapped, "obs_mode", None) or (getattr(unwrapped, "make_kwargs", None) or {}).get("obs_mode")
        if obs_mode == "image":
            env.close()
            raise ValueError(
                "the env's obs_mode is 'image': its state is only in the image, and TRL's rollout_func trains on text "
                "only; make it with obs_mode='text' or 'image+text'"
            )
        if self.env_id is None:  # a served env (rl4vlm/Remote-v0) is prompted as the env it serves
            self.env_id = getattr(unwrapped, "served_id", None) or (env.spec.id if env.spec is not None else "")
        return env

    def _encode(self, processing: Any, tokenizer: Any, messages: list[dict[str, Any]], generation_prompt: bool) -> list[int]:
        if getattr(processing, "image_processor", None) is None:  # a language model's tokenizer: string contents
            messages = [{**m, "content": "".join(p.get("text", "") for p in m["content"])} for m in messages]
        text = processing.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    def _user_turn_ids(self, processing: Any, tokenizer: Any, message: dict[str, Any]) -> list[int]:
        """The tokens of a user turn and the next generation prompt, after an assistant turn's EOS.

        As TRL's ``_get_tool_suffix_ids``: the template renders a dummy exchange with and without the
        new message, and the difference after the assistant's EOS is the suffix."""
        eos = tokenizer.eos_token_id
        dummy = [
            {"role": "user", "content": [{"type": "text", "text": "dummy"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "dummy"}]},
        ]
        prefix = self._encode(processing, tokenizer, dummy, generation_prompt=False)
        full = self._encode(processing, tokenizer, [*dummy, message], generation_prompt=True)
        ends = [i for i, token in enumerate(prefix) if token == eos]
        if ends:
            prefix = prefix[: ends[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError("the chat template does not render a conversation as a prefix of its continuation")
        return full[len(prefix) :]

    def close(self) -> None:
        """Close every env (for remote envs: their server sessions)."""
        for env in self.envs:
            env.close()
        self.envs.clear()

    def __enter__(self) -> EnvRollout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _instructions(env: gym.Env) -> str | None:
    instruction_prompt = getattr(env.unwrapped, "instruction_prompt", None)
    return instruction_prompt() if callable(instruction_prompt) else None


class _Episode:
    """One completion: its env, the tokens so far, which are the model's and the return."""

    def __init__(self, env: gym.Env, builder: PromptBuilder, obs: Mapping[str, Any], prompt_ids: list[int]) -> None:
        self.env, self.builder, self.obs, self.prompt_ids = env, builder, obs, prompt_ids
        self.completion_ids: list[int] = []
        self.mask: list[int] = []
        self.logprobs: list[float] | None = []
        self.reward, self.turns, self.success, self.done = 0.0, 0, False, False

    def add(self, ids: list[int], mask: int, logprobs: list[float] | None) -> None:
        self.completion_ids += ids
        self.mask += [mask] * len(ids)
        if self.logprobs is not None:
            if not mask:
                self.logprobs += [0.0] * len(ids)
            elif logprobs is None:
                self.logprobs = None  # the generator gave none (transformers): TRL then needs none
            else:
                self.logprobs += logprobs
