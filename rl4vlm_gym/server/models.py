"""The wire types of the OpenEnv server: openenv-core's typed ``Action``, ``Observation`` and ``State``.

An action is the model's raw output (``text``); an observation is our four keys with the image
encoded (PNG, or the raw ``uint8`` bytes when the client asked; an all-black one as its shape
alone), plus the step's result and
``info``. Images travel base64-encoded because OpenEnv's protocol is JSON over HTTP and WebSocket.
"""

from __future__ import annotations

import binascii
import io
import struct
import zlib
from typing import Any, Literal

import numpy as np
from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

__all__ = [
    "EXTRA_GROUPS",
    "IMAGE_FORMATS",
    "MAX_ACTION_CHARS",
    "FRAME_MEMORY_BYTES",
    "FRAME_MEMORY_MIN_HITS",
    "EncodedImage",
    "ReceivedFrames",
    "SentFrames",
    "VLMAction",
    "VLMObservation",
    "VLMState",
    "decode_image",
    "encode_image",
    "png_bytes",
]

MAX_ACTION_CHARS = 1 << 20
"""The longest action text a server accepts (1 Mi characters: the kit's fuzz inputs are 1 M)."""

IMAGE_FORMATS = ("png", "raw")

EXTRA_GROUPS = ("rules", "oracle", "frame")
"""The parts of ``state``'s extras a client may ask to get with a reset or step (``state_extras``): ``rules``
(the card, facts, description, admissible actions, position), ``oracle`` (``oracle_action``,
``optimal_steps``, ``decision``: planning) and ``frame`` (``fresh_frame_sha256``: a fresh render); the last two only
from an ``--expose-oracle`` server. Only the groups asked for are computed; a ``state`` message answers
all three."""


MAX_ERROR_NAME_CHARS = 64
"""A field name in a validation error is cut at this many characters (a client chooses the names it sends)."""


def described(value: Any) -> str:
    """A client's value in an error: its type and size, never the value (a 7 MB action must not come back)."""
    if isinstance(value, (str, bytes)):
        return f"a {type(value).__name__} of {len(value)} characters"
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def _loc(part: int | str) -> int | str:
    return part if isinstance(part, int) or len(part) <= MAX_ERROR_NAME_CHARS else part[:MAX_ERROR_NAME_CHARS] + "..."


class VLMAction(Action):
    """The model's raw output. Anything that is not a string is passed on, and the env's parser
    reports it as an invalid action (as a local env does). A message that is not a valid action is
    refused with errors that name each field and describe what was sent by type and size
    (:func:`described`), never echoing it: openenv-core sends ``errors()`` back to the client."""

    text: str | int | float | bool | None = Field(default=None, description="The model's output, parsed by the env")

    @model_validator(mode="wrap")
    @classmethod
    def _errors_without_input(cls, data: Any, handler: Any) -> Any:
        try:
            return handler(data)
        except ValidationError as err:
            details = [
                InitErrorDetails(
                    type=PydanticCustomError(e["type"], e["msg"].replace("{", "(").replace("}", ")")),
                    loc=tuple(_loc(p) for p in e["loc"]),
                    input=described(e["input"]),
                )
                for e in err.errors(include_url=False)[:10]
            ]
            raise ValidationError.from_exception_data(err.title, details) from None

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


def _as_given(description: str, json_type: str | list[str]) -> Any:
    """A field holding what the env gave, as it gave it (no coercion: the conformance kit checks the
    type the env returned), documented in the schema as ``json_type``."""
    extra: dict[str, Any] = {"type": json_type}
    return Field(default=None, description=description, json_schema_extra=extra)


class VLMState(State):
    """The session's env and episode (OpenEnv's ``state``) and the env's rules, as the protocol
    (:mod:`rl4vlm_gym.server`) lists them. The extras come in groups (``extras`` names those sent):
    a key outside them is absent, not null. Values from the env are sent as the env gave them."""

    env_id: str | None = Field(default=None, description="The served id or suite task the session plays")
    extras: list[str] | None = Field(default=None, description="The groups of extras computed: rules, oracle, frame")
    served_id: str | None = Field(default=None, description="The registered id of the env made")
    make_kwargs: dict[str, Any] | None = Field(default=None, description="The env's gym.make arguments")
    oracle_exposed: bool | None = Field(default=None, description="Whether the server exposes the oracle (--expose-oracle)")
    card: dict[str, Any] | None = Field(default=None, description="The served id's card, its class's name and docstring sections")
    elapsed_steps: Any = _as_given("Steps taken in the episode, as the env counts them", "integer")
    max_episode_steps: Any = _as_given("The served id's registered time limit (null: none)", ["integer", "null"])
    facts: dict[str, Any] | None = Field(default=None, description="The env's rules as JSON data (VLMEnv.facts())")
    has_oracle: Any = _as_given("Whether the env has an oracle (facts' HAS_ORACLE)", "boolean")
    reward_variant: Any = _as_given("The reward variant played", "string")
    rewards: Any = _as_given("The reward tables (facts' REWARDS)", "object")
    invalid_feedback: Any = _as_given("What an invalid action gets (facts' INVALID_FEEDBACK)", "object")
    obs_mode: Any = _as_given("The observation mode", "string")
    admissible: Any = _as_given("The admissible actions now", "array")
    description: Any = _as_given("The state in words (describe())", "string")
    instruction_prompt: Any = _as_given(
        "The episode's BALROG instructions (instruction_prompt(); null: generic)", ["string", "null"]
    )
    oracle_action: Any = _as_given("The oracle's next action (--expose-oracle only)", "string")
    oracle_error: str | None = Field(default=None, description="Why the oracle gave no action (--expose-oracle only)")
    optimal_steps: Any = _as_given("The plan's length once computed (--expose-oracle only)", "integer")
    decision: dict[str, Any] | None = Field(
        default=None,
        description="The decision facts of the state, VLMEnv.decision(): optimal_actions, steps_to_go, values, reason, "
        "features (--expose-oracle only)",
    )
    decision_error: str | None = Field(default=None, description="Why the env gave no decision facts (--expose-oracle only)")
    fresh_frame_sha256: str | None = Field(
        default=None, description="SHA-256 of a fresh render of the state (--expose-oracle only)"
    )

    @model_serializer(mode="wrap")
    def _only_sent(self, handler: Any) -> dict[str, Any]:
        """Extras not computed are left out (as before they were fields), so a client tells "absent" from null."""
        data = handler(self)
        for name in _OPTIONAL_EXTRAS - self.model_fields_set:
            data.pop(name, None)
        return data


_OPTIONAL_EXTRAS = frozenset(VLMState.model_fields) - {"episode_id", "step_count", "env_id"}


def encode_image(image: np.ndarray, fmt: str) -> EncodedImage:
    """Encode a ``uint8[H, W, 3]`` frame (``fmt`` ``"png"`` or ``"raw"``). An all-black frame is sent as
    ``"black"``: its shape, no data (text mode would else ship a 300x300 black image each step; scanning a
    frame costs far less than encoding it). PNG is written by :func:`png_bytes`."""
    array = np.ascontiguousarray(image, dtype=np.uint8)
    if not array.any():
        return EncodedImage(format="black", shape=array.shape, data="")
    payload = array.tobytes() if fmt == "raw" else png_bytes(array)
    return EncodedImage(format=fmt, shape=array.shape, data=binascii.b2a_base64(payload, newline=False).decode("ascii"))  # type: ignore[arg-type]


FRAME_MEMORY_BYTES = 4 << 20
"""What a session's :class:`SentFrames` (server) or :class:`ReceivedFrames` (client) keeps at most: ~26 frames
at 224x224, ~15 at 300x300."""
FRAME_MEMORY_MIN_HITS = 1 / 8
"""A session whose frames repeat less often than this (over its first 32 misses or more: a 3-D view, a video) stops
keeping them, and frees what it kept."""


class _Recent:
    """A least-recently-used mapping bounded by the bytes of what it holds, which gives up (``off``, empty) once its
    lookups hit less than :data:`FRAME_MEMORY_MIN_HITS` of the time."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self.held = max_bytes, 0
        self.items: dict[Any, tuple[Any, Any, int]] = {}
        self.hits = self.misses = 0
        self.off = False

    def take(self, key: Any) -> tuple[Any, Any] | None:
        item = self.items.pop(key, None)
        if item is None:
            return None
        self.items[key] = item  # the most recent again
        return item[0], item[1]

    def hit(self) -> None:
        self.hits += 1

    def put(self, key: Any, check: Any, value: Any, size: int) -> None:
        """Keep ``value`` (found by ``key``, checked against ``check``) after a miss."""
        self.misses += 1
        if self.misses >= 32 and self.hits < self.misses * FRAME_MEMORY_MIN_HITS:
            self.off, self.items, self.held = True, {}, 0
            return
        old = self.items.pop(key, None)
        self.held -= old[2] if old is not None else 0
        if size > self.max_bytes:
            return
        while self.held + size > self.max_bytes:
            self.held -= self.items.pop(next(iter(self.items)))[2]
        self.items[key] = (check, value, size)
        self.held += size


class SentFrames:
    """A server session's frame encoder: a PNG frame equal to one of the last it sent (up to ``max_bytes`` of them)
    is not encoded again. Envs show few distinct frames (a number line, a grid, cards: NumberLine shows 36 in
    1,500 random steps at 224x224, and the env caches its own renders for the same reason), so most steps of
    them cost a comparison (~0.02 ms) instead of an encoding (~0.3 ms). Found by a hash of every eighth row,
    then compared whole: a frame is sent as encoded only when byte for byte the same. A session whose frames
    seldom repeat stops keeping them (:data:`FRAME_MEMORY_MIN_HITS`)."""

    def __init__(self, max_bytes: int = FRAME_MEMORY_BYTES) -> None:
        self._recent = _Recent(max_bytes)

    def encode(self, image: np.ndarray, fmt: str) -> EncodedImage:
        """:func:`encode_image` of ``image`` in ``fmt`` (only PNG frames are kept: raw ones cost no encoding)."""
        array = np.ascontiguousarray(image, dtype=np.uint8)
        if fmt != "png" or array.ndim != 3 or self._recent.off:
            return encode_image(array, fmt)
        key = (array.shape, hash(array[::8].tobytes()))
        pixels = array.tobytes()
        hit = self._recent.take(key)
        if hit is not None and hit[0] == pixels:
            self._recent.hit()
            return hit[1]
        encoded = encode_image(array, fmt)
        self._recent.put(key, pixels, encoded, len(pixels) + len(encoded.data))
        return encoded


class ReceivedFrames:
    """A client session's frame decoder: a PNG payload equal to one of the last it received (up to ``max_bytes`` of
    decoded frames) is not decoded again; each call returns a new writable array, as :func:`decode_image` does. A
    session whose frames seldom repeat stops keeping them (:data:`FRAME_MEMORY_MIN_HITS`)."""

    def __init__(self, max_bytes: int = FRAME_MEMORY_BYTES) -> None:
        self._recent = _Recent(max_bytes)

    def decode(self, image: EncodedImage | dict[str, Any]) -> np.ndarray:
        """:func:`decode_image` of ``image``."""
        image = EncodedImage.model_validate(image)
        if image.format != "png" or self._recent.off:
            return decode_image(image)
        key = (image.shape, image.data)
        hit = self._recent.take(key)
        if hit is not None:
            self._recent.hit()
            return hit[1].copy()
        array = decode_image(image)
        kept = array.copy()
        kept.flags.writeable = False
        self._recent.put(key, None, kept, kept.nbytes + len(image.data))
        return array


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_header(height: int, width: int) -> bytes:
    """The IHDR data of an 8-bit RGB PNG without interlacing."""
    return struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def png_bytes(image: np.ndarray) -> bytes:
    """A ``uint8[H, W, 3]`` frame as a PNG file: every row unfiltered (filter type 0), one IDAT at zlib level 1.

    Lossless, as any PNG; 2 to 4 times faster to write than Pillow at ``compress_level=1`` (which tries five
    filters on every row) and about as small on our frames at 224x224 (NumberLine 4.6 KB against Pillow's
    5.1 KB, Sokoban 2.3 against 2.0, a MiniWorld view 59.5 against 60.0); :func:`decode_image` reads it
    without Pillow, 2 to 3 times faster (benchmarks/server_latency.py)."""
    height, width, _ = image.shape
    rows = np.empty((height, 1 + 3 * width), np.uint8)
    rows[:, 0] = 0  # each row's filter type: none
    rows[:, 1:] = image.reshape(height, 3 * width)
    return b"".join(
        (
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", _png_header(height, width)),
            _png_chunk(b"IDAT", zlib.compress(rows.data, 1)),
            _png_chunk(b"IEND", b""),
        )
    )


def _unfiltered_png(payload: bytes, height: int, width: int) -> np.ndarray | None:
    """The frame of a PNG as :func:`png_bytes` writes it (8-bit RGB of the announced size, every row
    unfiltered), read with zlib alone; None for any other PNG, and for a malformed one (chunk lengths, CRCs,
    zlib data, size), which Pillow then reads or refuses as before."""
    if not payload.startswith(_PNG_SIGNATURE):
        return None
    view, pos, header, data = memoryview(payload), len(_PNG_SIGNATURE), None, []
    while True:
        if pos + 12 > len(payload):
            return None  # no IEND
        length, kind = struct.unpack_from(">I4s", payload, pos)
        end = pos + 8 + length
        if (
            end + 4 > len(payload)
            or zlib.crc32(view[pos + 8 : end], zlib.crc32(kind)) != struct.unpack_from(">I", payload, end)[0]
        ):
            return None
        if kind == b"IHDR":
            header = bytes(view[pos + 8 : end])
        elif kind == b"IDAT":
            data.append(view[pos + 8 : end])
        elif kind == b"IEND":
            break
        elif not kind[0] & 0x20:  # a critical chunk other than these (PLTE...): Pillow's to read
            return None
        pos = end + 4
    if header != _png_header(height, width):
        return None
    size = height * (1 + 3 * width)
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(b"".join(data), size)  # bounded: a bomb inflates no further than the frame
    except zlib.error:
        return None
    if len(raw) != size or not inflate.eof or inflate.unconsumed_tail:
        return None
    rows = np.frombuffer(raw, np.uint8).reshape(height, 1 + 3 * width)
    if rows[:, 0].any():
        return None  # filtered rows (another encoder's PNG): Pillow undoes the filters
    return rows[:, 1:].reshape(height, width, 3).copy()  # writable, as Pillow's


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
    try:  # binascii's strict mode refuses what b64decode(validate=True) refuses, a third faster
        payload = binascii.a2b_base64(image.data, strict_mode=True)
    except binascii.Error as err:
        raise ValueError(f"image data is not valid base64 ({err})") from None
    if image.format == "raw":
        if len(payload) != h * w * c:
            raise ValueError(f"raw image has {len(payload)} bytes, not {h}*{w}*{c}")
        return np.frombuffer(payload, dtype=np.uint8).reshape(h, w, c).copy()  # frombuffer of bytes is read-only
    fast = _unfiltered_png(payload, h, w)
    if fast is not None:
        return fast
    from PIL import Image

    with Image.open(io.BytesIO(payload)) as png:
        if png.size != (w, h):
            raise ValueError(f"PNG is {png.size[0]}x{png.size[1]}, not the announced {w}x{h}")
        return np.array(png if png.mode == "RGB" else png.convert("RGB"), dtype=np.uint8)  # a writable copy, made once
