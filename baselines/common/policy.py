"""The policy the five baselines train: a VLM that writes each step's reply and scores its tokens.

One :class:`Policy` wraps any ``transformers`` image-text-to-text model (loaded by
:func:`rl4vlm_gym.agents.tiny.load_vlm`, so the tiny offline Qwen2-VL on CPU and Qwen2-VL-7B on
GPU go through the same code), optionally with LoRA adapters (peft) and a value head:

- :meth:`Policy.generate`: the reply tokens to a batch of stored prompts, through a
  :class:`Generator` (Hugging Face ``generate`` here; a faster engine can replace it);
- :meth:`Policy.score`: per-token log-probabilities of a reply given its *stored* prompt
  (``log softmax(logits / T)`` at the reply's positions, ``T`` the sampling temperature), and the
  value of the prompt: an MLP on the last prompt token's final hidden state, optionally behind a
  stop-gradient (VL-DAC) or not (RL4VLM);
- ``score(..., reference=True)``: the same log-probs under the reference policy: the base model
  with the adapters disabled, or a frozen copy of the initial weights when training all of them.

Prompts are left-padded and replies right-padded, so in a batch every prompt ends at the same
position ``P``: token ``k`` of a reply is predicted by the logits at ``P - 1 + k``, and the value
reads the hidden state at ``P - 1``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import torch
from torch import nn

from rl4vlm_gym.agents.hf import encode, generate_tokens
from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm
from rl4vlm_gym.prompts import Message

__all__ = ["Generator", "HFGenerator", "LoraSettings", "Policy", "PolicySettings", "Prompt", "Scores"]

logger = logging.getLogger(__name__)

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The language model's linear layers (VL-DAC and LOOP adapt all of them)."""


@dataclass(frozen=True)
class LoraSettings:
    """LoRA adapters (peft) on the layers named ``target_modules``; the rest of the model is frozen."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: tuple[str, ...] = LORA_TARGETS


@dataclass(frozen=True)
class PolicySettings:
    """What to load and what to train.

    Attributes:
        model: a local folder or hub id of an image-text-to-text model; ``None`` is the tiny
            offline Qwen2-VL.
        device: ``"cpu"`` or ``"cuda"``.
        dtype: the backbone's dtype; ``None`` is float32 on CPU and bfloat16 on CUDA.
        autocast: compute in this dtype under ``torch.autocast`` (``"bfloat16"``) while the
            weights stay in ``dtype``: mixed precision for full fine-tuning, where updates of
            lr 1e-6 would be rounded away in bfloat16 weights (verl keeps float32 master weights).
        lora: adapters to train; ``None`` trains every weight (the tiny model on CPU).
        value_head: hidden widths of the value MLP (VL-DAC: ``(3072, 2048)``); ``None``: no critic.
        value_stop_gradient: the value loss trains the head only, not the backbone (VL-DAC).
        gradient_checkpointing: trade compute for memory on large models.
    """

    model: str | None = None
    device: str = "cpu"
    dtype: str | None = None
    autocast: str | None = None
    lora: LoraSettings | None = None
    value_head: tuple[int, ...] | None = None
    value_stop_gradient: bool = True
    gradient_checkpointing: bool = False


@dataclass
class Prompt:
    """A step's prompt exactly as the policy saw it: the chat messages (images included) and the
    token ids they encoded to. Updates re-encode the messages and check the ids still match."""

    messages: list[Message]
    ids: list[int] = field(default_factory=list)


class Scores(NamedTuple):
    """What :meth:`Policy.score` returns for a batch of ``B`` replies of at most ``L`` tokens."""

    logprobs: torch.Tensor
    """``[B, L]`` log-probabilities of the reply tokens (0 at padding)."""
    mask: torch.Tensor
    """``[B, L]`` 1.0 at reply tokens, 0.0 at padding."""
    values: torch.Tensor | None
    """``[B]`` values of the prompts, or ``None``."""
    entropy: torch.Tensor | None = None
    """``[B, L]`` entropy of the sampling distribution at each reply position (0 at padding), if asked."""


class Generator(Protocol):
    """Writes replies: the one seam a faster inference engine (vLLM on GPU) plugs into."""

    def __call__(
        self,
        policy: Policy,
        prompts: Sequence[Prompt],
        *,
        inputs: Any,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
    ) -> list[list[int]]:
        """The reply tokens (each ending at the end-of-turn token, if reached) to each prompt.
        ``inputs`` is the prompts' encoding by :meth:`Policy.encode` when the caller has it (else
        ``None``); an engine with its own preprocessing ignores it."""
        ...


class HFGenerator:
    """Hugging Face ``generate`` on the policy's own (adapted) weights."""

    def __call__(
        self,
        policy: Policy,
        prompts: Sequence[Prompt],
        *,
        inputs: Any,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
    ) -> list[list[int]]:
        if inputs is None:
            inputs = policy.encode([p.messages for p in prompts])
        inputs = {k: v.to(policy.device) for k, v in inputs.items()}  # the caller's copy stays where it is
        was_training = policy.model.training
        policy.model.eval()
        try:
            with policy.autocast():
                return generate_tokens(
                    policy.model,
                    policy.processor,
                    inputs,
                    max_new_tokens=max_new_tokens,
                    temperature=temperature,
                    top_p=top_p,
                    seed=seed,
                )
        finally:
            policy.model.train(was_training)


class Policy(nn.Module):
    """A VLM policy with optional LoRA adapters and value head (see the module docstring).

    Args:
        settings: what to load and train.
        temperature: the sampling temperature; log-probs are those of ``softmax(logits / T)``,
            the distribution replies are drawn from (``T = 0`` scores at ``T = 1``).
        generator: how replies are written (default :class:`HFGenerator`).
    """

    def __init__(self, settings: PolicySettings, temperature: float = 1.0, generator: Generator | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.temperature = float(temperature) if temperature > 0 else 1.0
        self.generator = generator or HFGenerator()
        self.model_id = settings.model or str(default_tiny_model())
        model, self.processor = load_vlm(self.model_id, device=settings.device, dtype=settings.dtype)
        if settings.lora is not None:
            from peft import LoraConfig, get_peft_model

            lora = settings.lora
            config = LoraConfig(
                r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=list(lora.target_modules)
            )
            model = get_peft_model(model, config)
        if settings.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if settings.lora is not None:
                model.enable_input_require_grads()
        self.model = model
        if settings.lora is None and next(model.parameters()).dtype in (torch.bfloat16, torch.float16):
            logger.warning(
                "training every weight in %s: small updates are rounded away; load float32 weights "
                "and compute in half precision with autocast='bfloat16'",
                next(model.parameters()).dtype,
            )
        self._reference: nn.Module | None = None
        self.value_head: nn.Module | None = None
        if settings.value_head is not None:
            width = _hidden_size(model)
            layers: list[nn.Module] = []
            for hidden in settings.value_head:
                layers += [nn.Linear(width, hidden), nn.ReLU()]
                width = hidden
            layers.append(nn.Linear(width, 1))
            self.value_head = nn.Sequential(*layers).to(settings.device, torch.float32)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The context every forward pass runs in: ``torch.autocast`` to ``settings.autocast``, if set."""
        if self.settings.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=getattr(torch, self.settings.autocast))

    # Prompts and replies -----------------------------------------------------------------------

    def encode(self, conversations: Sequence[list[Message]]) -> Any:
        """The processor's left-padded encoding of a batch of conversations (on the CPU).

        The processor pass (chat template, tokenizer, image processor) costs as much as a small
        model's forward pass: a rollout step encodes its prompts once and hands the result to
        :meth:`prompts`, :meth:`generate`, :meth:`score` and :meth:`values` as ``inputs``.
        """
        return encode(self.processor, conversations)

    def prompts(self, conversations: Sequence[list[Message]], inputs: Any = None) -> list[Prompt]:
        """:class:`Prompt` records of conversations, their token ids included (from ``inputs``,
        their :meth:`encode`, if given)."""
        if inputs is None:
            inputs = self.encode(conversations)
        return [
            Prompt(list(c), _unpad(ids, mask))
            for c, ids, mask in zip(conversations, inputs["input_ids"], inputs["attention_mask"], strict=True)
        ]

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        inputs: Any = None,
        max_new_tokens: int,
        temperature: float,
        top_p: float = 1.0,
        seed: int = 0,
    ) -> list[list[int]]:
        """Reply tokens to each prompt (see :class:`Generator`)."""
        return self.generator(
            self, prompts, inputs=inputs, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, seed=seed
        )

    def decode(self, tokens: Sequence[int]) -> str:
        return self.processor.tokenizer.decode(list(tokens), skip_special_tokens=True)

    # Scoring -------------------------------------------------------------------------------------

    def score(
        self,
        prompts: Sequence[Prompt],
        responses: Sequence[Sequence[int]],
        *,
        values: bool = True,
        reference: bool = False,
        entropy: bool = False,
        inputs: Any = None,
    ) -> Scores:
        """Log-probs of each reply given its prompt, the prompts' values and, with ``entropy=True``,
        the entropy of ``softmax(logits / T)`` at each reply position (see the module docstring).

        Gradients flow unless called under ``torch.no_grad()``; with ``reference=True`` they never
        do and no values are computed. ``inputs``: the prompts' :meth:`encode`, if at hand.
        """
        inputs, prompt_length, reply_length = self._batch(prompts, responses, inputs)
        want_values = values and self.value_head is not None and not reference
        if reference:
            context, model = self._reference_model()
            with torch.no_grad(), context, self.autocast():
                output = model(**inputs, logits_to_keep=reply_length + 1)
        else:
            with self.autocast():
                output = self.model(**inputs, output_hidden_states=want_values, logits_to_keep=reply_length + 1)
        # logits[:, j] predicts token j + 1; the kept window starts at the last prompt token.
        logits = output.logits[:, :-1].float() / self.temperature
        targets = inputs["input_ids"][:, prompt_length:]
        mask = inputs["attention_mask"][:, prompt_length:].float()
        log_p = torch.log_softmax(logits, dim=-1)
        logprobs = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1) * mask
        value = None
        if want_values:
            hidden = output.hidden_states[-1][:, prompt_length - 1].float()
            value = self._value(hidden)
        token_entropy = -(log_p.exp() * log_p).sum(-1) * mask if entropy else None
        return Scores(logprobs, mask, value, token_entropy)

    def values(self, prompts: Sequence[Prompt], inputs: Any = None) -> torch.Tensor:
        """Values of prompts alone (bootstrapping past a time limit or the end of a rollout);
        ``inputs``: the prompts' :meth:`encode`, if at hand."""
        if self.value_head is None:
            raise RuntimeError("this policy has no value head (settings.value_head is None)")
        inputs, prompt_length, _ = self._batch(prompts, [[] for _ in prompts], inputs)
        with self.autocast():
            output = self.model(**inputs, output_hidden_states=True, logits_to_keep=1)
        return self._value(output.hidden_states[-1][:, prompt_length - 1].float())

    def _value(self, hidden: torch.Tensor) -> torch.Tensor:
        assert self.value_head is not None
        if self.settings.value_stop_gradient:
            hidden = hidden.detach()
        return self.value_head(hidden).squeeze(-1)

    def _batch(
        self, prompts: Sequence[Prompt], responses: Sequence[Sequence[int]], inputs: Any = None
    ) -> tuple[dict[str, torch.Tensor], int, int]:
        """Left-padded prompts followed by right-padded replies, as one model input. Stored prompts
        are re-encoded and checked against their ids unless their fresh ``inputs`` are given."""
        if inputs is None:
            inputs = self.encode([p.messages for p in prompts])
            for prompt, ids, mask in zip(prompts, inputs["input_ids"], inputs["attention_mask"], strict=True):
                if prompt.ids and _unpad(ids, mask) != prompt.ids:
                    raise RuntimeError(
                        "a stored prompt no longer encodes to the token ids it was generated from (was the processor changed?)"
                    )
        inputs = dict(inputs)
        rows, prompt_length = len(prompts), inputs["input_ids"].shape[1]
        reply_length = max((len(r) for r in responses), default=0)
        pad = self.processor.tokenizer.pad_token_id
        reply = torch.full((rows, reply_length), pad, dtype=torch.long)
        reply_mask = torch.zeros((rows, reply_length), dtype=inputs["attention_mask"].dtype)
        for i, tokens in enumerate(responses):
            reply[i, : len(tokens)] = torch.tensor(list(tokens), dtype=torch.long)
            reply_mask[i, : len(tokens)] = 1
        inputs["input_ids"] = torch.cat([inputs["input_ids"], reply], dim=1)
        inputs["attention_mask"] = torch.cat([inputs["attention_mask"], reply_mask], dim=1)
        for key in ("mm_token_type_ids", "token_type_ids"):  # per-token inputs: replies are text
            if key in inputs:
                inputs[key] = torch.cat([inputs[key], torch.zeros((rows, reply_length), dtype=inputs[key].dtype)], dim=1)
        return {k: v.to(self.device) for k, v in inputs.items()}, prompt_length, reply_length

    def _reference_model(self) -> tuple[Any, nn.Module]:
        """A context and the model that, inside it, is the reference: the base model with the
        adapters disabled, or the frozen copy of the initial weights."""
        if self.settings.lora is not None:
            return self.model.disable_adapter(), self.model
        if self._reference is None:
            raise RuntimeError("call policy.freeze_reference() before scoring with reference=True")
        return contextlib.nullcontext(), self._reference

    def freeze_reference(self) -> None:
        """Keep the current weights as the reference policy (no-op with LoRA: the base is the
        reference)."""
        if self.settings.lora is None and self._reference is None:
            self._reference = copy.deepcopy(self.model).eval().requires_grad_(False)

    # Parameters and files -----------------------------------------------------------------------

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """The weights that training changes (adapters or the whole model, and the value head)."""
        state = {f"model.{k}": v.detach().clone() for k, v in self.model.named_parameters() if v.requires_grad}
        if self.value_head is not None:
            state.update({f"value_head.{k}": v.detach().clone() for k, v in self.value_head.state_dict().items()})
        return state

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for key, value in state.items():
                if key.startswith("model."):
                    params[key.removeprefix("model.")].copy_(value)
        if self.value_head is not None:
            self.value_head.load_state_dict(
                {k.removeprefix("value_head."): v for k, v in state.items() if k.startswith("value_head.")}
            )

    def save_pretrained(self, folder: str | Path) -> Path:
        """Save the model so :func:`~rl4vlm_gym.agents.tiny.load_vlm` (hence the ``hf`` agent) loads
        it: the adapters (with the base model's id) or the full weights, and the processor."""
        folder = Path(folder)
        self.model.save_pretrained(folder)
        self.processor.save_pretrained(folder)
        return folder


def _unpad(ids: torch.Tensor, mask: torch.Tensor) -> list[int]:
    return ids[mask.bool()].tolist()


def _hidden_size(model: nn.Module) -> int:
    config: Any = model.config  # a transformers PretrainedConfig
    text = getattr(config, "text_config", None) or config
    return int(text.hidden_size)
