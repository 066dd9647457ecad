"""Fast frame composition for the card tables: cached opaque tiles copied into a felt frame.

Cards never overlap and always lie on felt, so each card is composited onto a felt tile once
(cached) and a frame is a handful of array copies; text is drawn once per distinct string. This
keeps a 300x300 frame under ~0.1 ms, where drawing it with Pillow each step costs ~1 ms.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.cards import renderer
from rl4vlm_gym.rendering import font

if TYPE_CHECKING:
    from numpy.typing import NDArray

Size = tuple[int, int]  # (width, height), as Pillow and renderer.py use
RGB = tuple[int, int, int]


class Look(NamedTuple):
    """An appearance of the card tables: the cloth, the lettering on it, and NumberLine's page."""

    felt: RGB
    lettering: RGB
    serif: bool
    paper: RGB
    ink: RGB


LOOKS: dict[str, Look] = {
    "default": Look(renderer.FELT, (255, 255, 255), False, (255, 255, 255), (0, 0, 0)),
    # RL4VLM's green felt and sans lettering never change in training: a wine cloth, cream serif
    # lettering and a dark page are a look no training frame shows.
    "held-out": Look((0x5C, 0x22, 0x2E), (0xF2, 0xE3, 0xB6), True, (0x1E, 0x26, 0x33), (0xF2, 0xE3, 0xB6)),
}
"""The cards family's ``APPEARANCES``; the face of each card is the same in every look."""
DEFAULT = LOOKS["default"]


def _frozen(array: NDArray[np.uint8]) -> NDArray[np.uint8]:
    array.flags.writeable = False
    return array


@functools.lru_cache(maxsize=1024)
def card_tile(rank: str, suit: str, size: Size, look: Look = DEFAULT) -> NDArray[np.uint8]:
    """The card face composited on felt: an opaque ``uint8[h, w, 3]`` tile (read-only)."""
    tile = renderer.table(size, look.felt)
    renderer.paste(tile, renderer.card_face(rank, suit, size), (0, 0))
    return _frozen(tile)


@functools.lru_cache(maxsize=16)
def back_tile(size: Size, look: Look = DEFAULT) -> NDArray[np.uint8]:
    """The card back composited on felt (read-only)."""
    tile = renderer.table(size, look.felt)
    renderer.paste(tile, renderer.card_back(size), (0, 0))
    return _frozen(tile)


@functools.lru_cache(maxsize=4096)
def text_tile(text: str, size: Size, font_size: int, bold: bool = False, look: Look = DEFAULT) -> NDArray[np.uint8]:
    """``text`` centred on a felt band of ``size``, in the look's lettering (read-only)."""
    band = Image.fromarray(renderer.table(size, look.felt))
    draw = ImageDraw.Draw(band)
    draw.text((size[0] / 2, size[1] / 2), text, fill=look.lettering, font=font(font_size, bold, look.serif), anchor="mm")
    return _frozen(np.asarray(band).copy())


@functools.lru_cache(maxsize=64)
def labelled_table(size: Size, labels: tuple[tuple[str, float, float, int], ...], look: Look = DEFAULT) -> NDArray[np.uint8]:
    """A felt frame with bold ``(text, x, y, font_size)`` labels in the look's lettering (read-only)."""
    image = Image.fromarray(renderer.table(size, look.felt))
    draw = ImageDraw.Draw(image)
    for text, x, y, font_size in labels:
        draw.text((x, y), text, fill=look.lettering, font=font(font_size, bold=True, serif=look.serif))
    return _frozen(np.asarray(image).copy())


def blit(frame: NDArray[np.uint8], tile: NDArray[np.uint8], xy: tuple[int, int]) -> None:
    """Copy ``tile`` into ``frame`` at ``xy = (x, y)``, clipped to the frame."""
    x, y = xy
    height, width = frame.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + tile.shape[1], width), min(y + tile.shape[0], height)
    if x0 < x1 and y0 < y1:
        frame[y0:y1, x0:x1] = tile[y0 - y : y1 - y, x0 - x : x1 - x]
