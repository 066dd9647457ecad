"""The household drawing's colours: ink, paper and the arithmetic on them.

The renderer (:mod:`~rl4vlm_gym.envs.household.renderer`: the frame, its text and its layout) and
the icon library (:mod:`~rl4vlm_gym.envs.household.icons`: the drawings of receptacles and objects)
share these. Colours are RGB tuples of ints; an unknown kind gets its colour from ``zlib.crc32``
(:func:`hashed`), so the pixels are the same in every process.
"""

from __future__ import annotations

import colorsys
import zlib

__all__ = ["INK", "WHITE", "Color", "dark", "hashed", "ink_on", "light", "luma", "mix"]

Color = tuple[int, int, int]

INK: Color = (28, 30, 36)
WHITE: Color = (255, 255, 255)


def mix(a: Color, b: Color, t: float) -> Color:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t)


def luma(c: Color) -> float:
    """Perceived brightness of ``c`` (ITU-R 601 weights), 0 to 255."""
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def ink_on(c: Color) -> Color:
    """Dark or white text, whichever reads on ``c``."""
    return INK if luma(c) > 140 else WHITE


def dark(c: Color, t: float = 0.35) -> Color:
    """``c`` moved a fraction ``t`` towards black."""
    return mix(c, (0, 0, 0), t)


def light(c: Color, t: float = 0.6) -> Color:
    """``c`` moved a fraction ``t`` towards white."""
    return mix(c, WHITE, t)


def hashed(kind: str) -> Color:
    """A mid-tone colour for an unknown kind from ``zlib.crc32``, which, unlike ``hash()``, is the
    same in every process."""
    h = zlib.crc32(kind.encode())
    r, g, b = colorsys.hsv_to_rgb((h % 360) / 360, 0.45 + (h >> 9) % 25 / 100, 0.6 + (h >> 16) % 25 / 100)
    return round(255 * r), round(255 * g), round(255 * b)
