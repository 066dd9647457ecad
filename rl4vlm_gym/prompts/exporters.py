"""The neutral messages in the two forms models take: OpenAI's chat format and Hugging Face's processors.

- :func:`to_openai`: OpenAI chat format, images as base64 PNG ``image_url`` parts (vLLM, hosted
  APIs);
- :func:`to_hf`: Hugging Face processor style, ``{"type": "image"}`` placeholders in the messages
  and the images in a separate list, in order, for ``processor(text=..., images=...)``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from rl4vlm_gym.prompts.config import Message

__all__ = ["png_base64", "to_hf", "to_openai"]


def png_base64(image: np.ndarray, compress_level: int | None = 1) -> str:
    """``image`` as a base64 PNG string (lossless, so the model sees the env's exact pixels).

    ``compress_level`` 1 is fast; ``None`` is Pillow's default (6), what BALROG's clients send
    (``image.save(buffer, format="PNG")``), byte for byte with the same zlib."""
    from PIL import Image

    buffer = io.BytesIO()
    options = {} if compress_level is None else {"compress_level": compress_level}
    Image.fromarray(np.asarray(image, np.uint8)).save(buffer, format="PNG", **options)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def to_openai(messages: Sequence[Message], compress_level: int | None = 1) -> list[dict[str, Any]]:
    """OpenAI chat messages: text parts as ``text``, images as base64 PNG ``image_url`` parts, in
    the messages' order (under the ``balrog`` template, each image after its text, as BALROG's
    OpenAI client sends it; ``compress_level=None`` encodes the PNG as BALROG does)."""

    def image_url(image: np.ndarray) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + png_base64(image, compress_level)}}

    return _export(messages, image_url)


def to_hf(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Hugging Face processor style: ``{"type": "image"}`` placeholders and the PIL images in order."""
    from PIL import Image

    images: list[Any] = []

    def placeholder(image: np.ndarray) -> dict[str, Any]:
        images.append(Image.fromarray(np.asarray(image, np.uint8)))
        return {"type": "image"}

    return _export(messages, placeholder), images


def _export(messages: Sequence[Message], image_part: Any) -> list[dict[str, Any]]:
    return [
        {
            "role": m["role"],
            "content": [{"type": "text", "text": p["text"]} if p["type"] == "text" else image_part(p["image"]) for p in m["content"]],
        }
        for m in messages
    ]
