"""A local Hugging Face vision-language model as an agent.

Any ``transformers`` image-text-to-text model, by path or hub id (hub models must already be in
the local cache when offline); by default the tiny random Qwen2-VL of :mod:`.tiny`, built offline.
Prompts come from :mod:`rl4vlm_gym.prompts` in Hugging Face processor form; a batch of
conversations is left-padded and generated in one call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rl4vlm_gym.agents.base import Completion, ModelAgent, Usage
from rl4vlm_gym.prompts import Message, PromptConfig, to_hf

__all__ = ["HFAgent", "encode", "generate", "generate_tokens"]


def generate(
    model: Any,
    processor: Any,
    conversations: Sequence[list[Message]],
    *,
    max_new_tokens: int = 64,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int | None = None,
) -> list[Completion]:
    """Reply to each conversation with one batched ``generate`` call.

    Args:
        model: the model.
        processor: its processor (chat template, tokenizer, image processor).
        conversations: neutral chat messages (:mod:`rl4vlm_gym.prompts`).
        max_new_tokens: the reply's budget.
        temperature: 0 is greedy decoding; above 0 samples.
        top_p: nucleus sampling mass.
        seed: seeds sampling, so a run's replies are reproducible.
    """
    inputs = encode(processor, conversations).to(model.device)
    replies = generate_tokens(
        model, processor, inputs, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, seed=seed
    )
    decode = processor.tokenizer.decode
    return [
        Completion(decode(tokens, skip_special_tokens=True), Usage(int(mask.sum()), len(tokens)))
        for tokens, mask in zip(replies, inputs["attention_mask"], strict=True)
    ]


def encode(processor: Any, conversations: Sequence[list[Message]]) -> Any:
    """The left-padded model inputs of a batch of conversations, ready for the assistant's reply."""
    texts, images = [], []
    for conversation in conversations:
        messages, pictures = to_hf(conversation)
        texts.append(processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        images += pictures
    processor.tokenizer.padding_side = "left"  # new tokens follow every prompt's last token
    return processor(text=texts, images=images or None, return_tensors="pt", padding=True)


def generate_tokens(
    model: Any,
    processor: Any,
    inputs: Mapping[str, Any],
    *,
    max_new_tokens: int = 64,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int | None = None,
) -> list[list[int]]:
    """The reply tokens to left-padded ``inputs`` (from :func:`encode`): each ends at its end-of-turn
    token (kept) or at ``max_new_tokens``. Arguments as in :func:`generate`."""
    import torch

    tokenizer = processor.tokenizer
    # Random or small models may emit vision tokens, which only the processor may place.
    vision = [
        t
        for t in ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|vision_pad|>")
        if t in tokenizer.get_vocab()
    ]
    sampling = (
        {"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0} if temperature > 0 else {"do_sample": False}
    )
    generator_state = None
    if seed is not None and temperature > 0:
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
    try:
        with torch.no_grad():
            output = model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                bad_words_ids=[[tokenizer.convert_tokens_to_ids(t)] for t in vision] or None,
                pad_token_id=tokenizer.pad_token_id,
                **sampling,
            )
    finally:
        if generator_state is not None:
            torch.random.set_rng_state(generator_state)
    # A reply ends at its first stop token (Qwen stops at <|im_end|> or <|endoftext|>); rows that
    # never stopped hold exactly the sampled tokens, pad ids included if the model sampled them.
    stops = model.generation_config.eos_token_id
    stops = {tokenizer.eos_token_id, *(stops if isinstance(stops, list) else [stops])} - {None}
    replies = []
    for row in output[:, inputs["input_ids"].shape[1] :].tolist():
        end = next((i for i, t in enumerate(row) if t in stops), None)
        replies.append(row if end is None else row[: end + 1])
    return replies


class HFAgent(ModelAgent):
    """A local ``transformers`` VLM.

    Args:
        model: a path or hub id; ``None`` for the tiny offline Qwen2-VL (built on first use).
        device: ``"cpu"`` or ``"cuda"``.
        dtype: ``torch`` dtype or its name; default float32 on CPU, bfloat16 on CUDA.
        prompt: the prompt configuration.
        max_new_tokens: the reply's budget; default 64, BALROG's 8192 under the ``balrog`` template.
        temperature: 0 (default) is greedy; above 0 samples; BALROG's 1.0 under the ``balrog``
            template.
        top_p: nucleus sampling mass.
        seed: seeds sampling: call ``n`` uses ``seed + n``, so a run is reproducible.
        batch_size: conversations per ``generate`` call in :meth:`act_batch`.
    """

    name = "hf"
    SAMPLING_ARGS = {"temperature": "temperature", "max_tokens": "max_new_tokens"}

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        dtype: Any = None,
        prompt: PromptConfig | Mapping[str, Any] | None = None,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        seed: int = 0,
        batch_size: int = 8,
    ) -> None:
        super().__init__(prompt)
        from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm

        self.model_id = str(model) if model is not None else "tiny-qwen2-vl"
        self.model, self.processor = load_vlm(model if model is not None else default_tiny_model(), device=device, dtype=dtype)
        defaults = {"max_new_tokens": 64, "temperature": 0.0, **self.protocol_defaults(self.prompt)}
        max_new_tokens = defaults["max_new_tokens"] if max_new_tokens is None else max_new_tokens
        temperature = defaults["temperature"] if temperature is None else temperature
        self.settings: dict[str, Any] = {"max_new_tokens": int(max_new_tokens), "temperature": float(temperature), "top_p": float(top_p)}
        self.seed, self.batch_size, self.device = int(seed), max(1, int(batch_size)), device
        self._calls = 0

    def complete(self, conversations: Sequence[list[Message]]) -> list[Completion]:
        completions: list[Completion] = []
        for start in range(0, len(conversations), self.batch_size):
            chunk = conversations[start : start + self.batch_size]
            completions += generate(self.model, self.processor, chunk, seed=self.seed + self._calls, **self.settings)
            self._calls += 1
        return completions

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model_id, "device": self.device, **self.settings, "seed": self.seed}

    def close(self) -> None:
        self.model = self.processor = None
