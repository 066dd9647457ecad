"""Draw a game's text as an image: each character in its own cell of a fixed grid.

OpenSpiel games print their state as monospace text (``observation_string``: Breakthrough's
``bbbbb`` rows, Dots and Boxes' box-drawing lines, Goofspiel's hands). :func:`text_image` draws that
text as a picture for the games that have no renderer of their own, so that image and text carry
the same information. The package ships proportional DejaVu fonts only, so the grid is made here:
every character is centred in a cell as wide as a box-drawing character, which keeps box lines
joined and columns aligned. The same text and size always give the same bytes (one Pillow major
version, as every frame of this project).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.rendering import font

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["text_image"]

BACKGROUND = (250, 248, 240)
INK = (20, 20, 20)
MARGIN = 0.04  # of each side, left blank around the text
_REFERENCE_SIZE = 100  # the font size the cell is measured at, then scaled


@functools.cache
def _cell_ratio() -> tuple[float, float]:
    """(cell width, cell height) per pixel of font size: a box-drawing character's advance, and
    the height of a full vertical box line (ascent plus descent), so that lines join."""
    reference = font(_REFERENCE_SIZE)
    left, top, right, bottom = reference.getbbox("│")
    return reference.getlength("─") / _REFERENCE_SIZE, (bottom - top) / _REFERENCE_SIZE


def _font_size(rows: int, columns: int, size: tuple[int, int]) -> int:
    """The largest font size at which ``rows`` x ``columns`` cells fit ``size`` within the margin."""
    height, width = size
    ratio_w, ratio_h = _cell_ratio()
    fits = min(width * (1 - 2 * MARGIN) / (max(columns, 1) * ratio_w), height * (1 - 2 * MARGIN) / (max(rows, 1) * ratio_h))
    return max(1, int(fits))


_PAD = 2  # pixels around a glyph's cell: box-drawing strokes reach a pixel past it


@functools.lru_cache(maxsize=4096)
def _glyph(char: str, points: int) -> Image.Image:
    """``char`` at ``points``, drawn once as a mask of its cell (plus :data:`_PAD`), centred in the
    cell and placed from the top of a box line: pasting masks is several times cheaper than
    drawing each character anew."""
    face = font(points)
    ratio_w, ratio_h = _cell_ratio()
    cell_w, cell_h = ratio_w * points, ratio_h * points
    mask = Image.new("L", (int(np.ceil(cell_w)) + 2 * _PAD, int(np.ceil(cell_h)) + 2 * _PAD), 0)
    x = _PAD + round((cell_w - face.getlength(char)) / 2)
    ImageDraw.Draw(mask).text((x, _PAD - face.getbbox("│")[1]), char, font=face, fill=255)
    return mask


def text_image(text: str, size: tuple[int, int]) -> NDArray[np.uint8]:
    """``text`` (lines split on newlines, trailing blanks kept) drawn dark on light as
    ``uint8[height, width, 3]``, as large as fits, each character centred in its grid cell."""
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()  # OpenSpiel strings end with a newline: no empty last row
    columns = max((len(line) for line in lines), default=1)
    height, width = size
    points = _font_size(len(lines), columns, size)
    ratio_w, ratio_h = _cell_ratio()
    cell_w, cell_h = ratio_w * points, ratio_h * points
    x0 = (width - columns * cell_w) / 2
    y0 = (height - len(lines) * cell_h) / 2
    image = Image.new("RGB", (width, height), BACKGROUND)
    for row, line in enumerate(lines):
        for column, char in enumerate(line):
            if not char.isspace():
                image.paste(INK, (round(x0 + column * cell_w) - _PAD, round(y0 + row * cell_h) - _PAD), _glyph(char, points))
    return np.asarray(image, dtype=np.uint8).copy()
