"""A tiny, randomly initialised Qwen2-VL built entirely offline, and the loader of any VLM.

The tiny model (~0.8M parameters, 3 MB) is what CPU runs and the tests use: its tokenizer is a
byte-level BPE trained here on a fixed corpus, its processor and weights are created from configs
(weights seeded), and it is saved and loaded with ``from_pretrained`` exactly like a hub model, so
the real loading, prompting, generation and log-prob code runs on it. The same library versions
give the same bytes on any machine.

:func:`load_vlm` loads any ``transformers`` image-text-to-text model by path or hub id. transformers
5.x needs torchvision for Qwen2-VL's video processor, and the CPU build of torch has none, so
saved tiny models use :class:`ImageOnlyQwen2VLProcessor`; ``AutoProcessor`` would silently return
only the tokenizer for them, so the processor class is read from the saved config and loaded
explicitly.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rl4vlm_gym.cache import cache_dir

if TYPE_CHECKING:  # the class is made on first use (see image_only_processor_class)
    from transformers import Qwen2VLProcessor as ImageOnlyQwen2VLProcessor

__all__ = ["ImageOnlyQwen2VLProcessor", "build_tiny_vlm", "default_tiny_model", "load_vlm"]

SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>",
)  # fmt: skip

# Qwen2-VL's chat template (images as <|vision_start|><|image_pad|><|vision_end|>).
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@functools.cache
def image_only_processor_class() -> type[Any]:
    """The class ``ImageOnlyQwen2VLProcessor``, made on first use (it is also this module's attribute of that name).

    Importing transformers' processors takes seconds, and every process that imports this module would pay
    them (each test worker does, collecting the doctests), most of them without ever loading a model.
    """
    from transformers import Qwen2VLProcessor

    class ImageOnlyQwen2VLProcessor(Qwen2VLProcessor):
        """Qwen2-VL's processor without its video processor (which needs torchvision).

        ``ProcessorMixin`` derives its attributes from the ``__init__`` signature, so leaving
        ``video_processor`` out of it removes the attribute.
        """

        __qualname__ = "ImageOnlyQwen2VLProcessor"  # as if defined at module level (its __module__ is this module's)

        def __init__(self, image_processor: Any = None, tokenizer: Any = None, chat_template: str | None = None, **kwargs: Any) -> None:
            super().__init__(image_processor=image_processor, tokenizer=tokenizer, video_processor=None, chat_template=chat_template, **kwargs)

    return ImageOnlyQwen2VLProcessor


def __getattr__(name: str) -> Any:
    if name == "ImageOnlyQwen2VLProcessor":
        return image_only_processor_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _corpus() -> list[str]:
    """A fixed corpus of env-like text: the tokenizer must not depend on files of the machine."""
    words = (
        "go to take put move open close clean heat cool use look inventory examine search click buy now back next prev "
        "turn left right forward pick up drop stand hit the a of in on from with and or to is you are your task current "
        "target number formula cards card dealer player red green blue yellow purple grey box ball key shelf cabinet "
        "drawer fridge microwave sinkbasin countertop apple plate mug soapbar action thoughts reasoning observation "
        "admissible actions answer json object one step invalid nothing happened mission success reward level image text"
    ).split()
    lines = []
    for i in range(600):
        a, b, c = words[i % len(words)], words[(7 * i + 3) % len(words)], words[(13 * i + 5) % len(words)]
        lines.append(f'{{"thoughts": "{a} {b} {c} {i % 24}", "action": "{b} {c} {i % 10}"}}')
        lines.append(f"<think>{c} {a}</think><action>{a} {b} {i % 7}</action> search[{b} {c} size {i % 13}] click[{a}]")
        lines.append(f"Cards: {i % 10 + 1}, {i % 7 + 2}\nFormula: {i % 9}+{i % 5}*(10-{i % 3})= Target: {i % 24} Current: {i % 17}")
    return lines


def build_tiny_vlm(path: str | Path) -> Path:
    """Build the tiny Qwen2-VL and save it (model, processor, tokenizer, chat template) to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessorPil
    from transformers.utils import logging as hf_logging

    bpe = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bpe.decoder = decoders.ByteLevel()
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=2048, min_frequency=2, special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    bpe.train_from_iterator(_corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=list(SPECIAL_TOKENS[1:]), chat_template=CHAT_TEMPLATE,
    )  # fmt: skip
    tokenizer.padding_side = "left"
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=56 * 56, max_pixels=224 * 224)
    processor = image_only_processor_class()(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    text = dict(
        vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=4096,
        # mrope_section must sum to head_dim / 2 = 128 / 4 / 2
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6]},
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
    )  # fmt: skip
    vision = dict(depth=2, embed_dim=64, hidden_size=128, num_heads=4, mlp_ratio=2, patch_size=14, spatial_merge_size=2, temporal_patch_size=2)
    config = Qwen2VLConfig(
        text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"], tie_word_embeddings=True,
    )  # fmt: skip
    hf_logging.disable_progress_bar()
    torch.manual_seed(0)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    path = Path(path)
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def default_tiny_model() -> Path:
    """The tiny model in the cache (``$RL4VLM_GYM_CACHE``, default ``~/.cache/rl4vlm_gym``), built on
    first use. Concurrent first uses (test workers) each build into a temporary folder and rename."""
    versions = version("transformers")
    cache = cache_dir()
    target = cache / f"tiny-qwen2-vl-{hashlib.sha256(versions.encode()).hexdigest()[:8]}"
    if (target / "config.json").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".tiny-building-", dir=cache))
    try:
        build_tiny_vlm(scratch)
        try:
            scratch.rename(target)
        except OSError:  # another process finished first
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def load_vlm(model: str | Path, device: str = "cpu", dtype: Any = None) -> tuple[Any, Any]:
    """Load an image-text-to-text model and its processor by path or hub id.

    Args:
        model: a local folder or a hub id (hub ids need the files in the local cache when offline);
            a folder of LoRA adapters (``adapter_config.json``, saved by peft) loads its base
            model with the adapters merged in.
        device: ``"cpu"`` or ``"cuda"`` (or ``"cuda:1"``).
        dtype: a ``torch.dtype`` or its name; default float32 on CPU and bfloat16 on CUDA.
    """
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-shard bars would drown an evaluation's own progress
    if dtype is None:
        dtype = torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    elif isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    if (str(model).startswith((".", "/", "~")) or Path(model).is_absolute()) and not Path(model).expanduser().is_dir():
        raise FileNotFoundError(f"no model folder at {str(model)!r} (give a folder saved with save_pretrained, or a hub id)")
    config_path = Path(model) / "processor_config.json"
    processor_class = json.loads(config_path.read_text()).get("processor_class") if config_path.exists() else None
    if processor_class == "ImageOnlyQwen2VLProcessor":
        processor = image_only_processor_class().from_pretrained(model, local_files_only=True)
    else:
        processor = AutoProcessor.from_pretrained(model)
    if getattr(processor, "image_processor", None) is None:
        raise ValueError(
            f"the processor loaded for {str(model)!r} is a {type(processor).__name__} with no image processor: images would be "
            "dropped. Is this an image-text-to-text model?"
        )
    adapter = Path(model) / "adapter_config.json"
    if adapter.exists():  # LoRA adapters saved by a trainer: load the base, apply and merge them
        from peft import PeftModel

        base = json.loads(adapter.read_text())["base_model_name_or_path"]
        vlm = AutoModelForImageTextToText.from_pretrained(base, dtype=dtype)
        vlm = PeftModel.from_pretrained(vlm, model).merge_and_unload()
    else:
        vlm = AutoModelForImageTextToText.from_pretrained(model, dtype=dtype)
    return vlm.to(device).eval(), processor
