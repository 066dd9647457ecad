"""The wire types of the OpenEnv server: openenv-core's typed ``Action``, ``Observation`` and ``State``.

An action is the model's raw output (``text``); an observation is our four keys with the image
encoded (PNG, or the raw ``uint8`` bytes when the client asked; an all-black one as its shape
alone), plus the step's result and
``info``. Images travel base64-encoded because OpenEnv's protocol is JSON over HTTP and WebSocket.
"""

from __future__ import annotations

import base64
import io
from typing import Any, Literal

import numpy as np
from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "EXTRA_GROUPS",
    "IMAGE_FORMATS",
    "MAX_ACTION_CHARS",
    "EncodedImage",
    "VLMAction",
    "VLMObservation",
    "VLMState",
    "decode_image",
    "encode_image",
]

MAX_ACTION_CHARS = 1 << 20
"""The longest action text a server accepts (1 Mi characters: the kit's fuzz inputs are 1 M)."""

IMAGE_FORMATS = ("png", "raw")

EXTRA_GROUPS = ("rules", "oracle", "frame")
"""The parts of ``state``'s extras a client may ask to get with a reset or step (``state_extras``): ``rules``
(the card, facts, description, admissible actions, position), ``oracle`` (``oracle_action``,
``optimal_steps``: planning) and ``frame`` (``fresh_frame_sha256``: a fresh render); the last two only
from an ``--expose-oracle`` server. Only the groups asked for are computed; a ``state`` message answers
all three."""


class VLMAction(Action):
    """The model's raw output. Anything that is not a string is passed on, and the env's parser
    reports it as an invalid action (as a local env does)."""

    text: str | int | float | bool | None = Field(default=None, description="The model's output, parsed by the env")

    @field_validator("text")
    @classmethod
    def _bounded(cls, text: object) -> object:
        if isinstance(text, str) and len(text) > MAX_ACTION_CHARS:
            # A PydanticCustomError, not a ValueError: openenv-core sends e.errors() back as JSON, and
            # a ValueError in the error's context cannot be serialized (the session would end).
            raise PydanticCustomError(
                "action_too_long",
                "the action has {length} characters; the limit is {limit}",
                {"length": len(text), "limit": MAX_ACTION_CHARS},
            )
        return text


class EncodedImage(BaseModel):
    """An RGB frame: ``data`` is base64 of a PNG file (``format="png"``) or of the ``uint8`` bytes
    of an array of ``shape`` in C order (``format="raw"``). An all-black frame, which is every
    frame of a text-only observation, travels as its shape alone (``format="black"``, no data),
    whichever format the client asked for."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["png", "raw", "black"]
    shape: tuple[int, int, int]
    data: str


class VLMObservation(Observation):
    """The env's four-key observation and the step's result; ``done`` is ``terminated or truncated``."""

    image: EncodedImage
    text: str
    mission: str
    actions: list[str]
    info: dict[str, Any] = Field(default_factory=dict, description="success, progress, level, state_key, optimal_steps, action")
    terminated: bool = False
    truncated: bool = False
    state: dict[str, Any] | None = Field(
        default=None,
        description="state's extras after this reset or step, when it asked for them (state_extras); their key extras names the groups",
    )


class VLMState(State):
    """The session's env and episode (OpenEnv's ``state``); extra keys describe the env's rules."""

    env_id: str | None = None


def encode_image(image: np.ndarray, fmt: str) -> EncodedImage:
    """Encode a ``uint8[H, W, 3]`` frame; PNG at compression level 1 (fast; lossless either way).
    An all-black frame is sent as ``"black"``: its shape, no data (text mode would else ship a
    300x300 black image each step; scanning a frame costs far less than encoding it)."""
    array = np.ascontiguousarray(image, dtype=np.uint8)
    if not array.any():
        return EncodedImage(format="black", shape=array.shape, data="")
    if fmt == "raw":
        payload = array.tobytes()
    else:
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, format="PNG", compress_level=1)
        payload = buffer.getvalue()
    return EncodedImage(format=fmt, shape=array.shape, data=base64.b64encode(payload).decode("ascii"))  # type: ignore[arg-type]


def decode_image(image: EncodedImage | dict[str, Any], max_pixels: int = 1 << 26) -> np.ndarray:
    """The ``uint8[H, W, 3]`` array of an encoded frame; sizes are checked before decoding."""
    image = EncodedImage.model_validate(image)
    h, w, c = image.shape
    if not (0 < h and 0 < w and c == 3 and h * w <= max_pixels):
        raise ValueError(f"bad image shape {image.shape} (want H, W, 3 with H*W <= {max_pixels})")
    if image.format == "black":
        if image.data:
            raise ValueError(f"a black image carries no data, got {len(image.data)} characters")
        return np.zeros((h, w, c), np.uint8)
    payload = base64.b64decode(image.data, validate=True)
    if image.format == "raw":
        if len(payload) != h * w * c:
            raise ValueError(f"raw image has {len(payload)} bytes, not {h}*{w}*{c}")
        return np.frombuffer(payload, dtype=np.uint8).reshape(h, w, c).copy()
    from PIL import Image

    with Image.open(io.BytesIO(payload)) as png:
        if png.size != (w, h):
            raise ValueError(f"PNG is {png.size[0]}x{png.size[1]}, not the announced {w}x{h}")
        return np.asarray(png.convert("RGB"), dtype=np.uint8).copy()
