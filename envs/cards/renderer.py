"""Playing-card artwork drawn in code with Pillow, plus fast numpy compositing onto a felt table.

The card games (NumberLine, EZPoints, Points24, Blackjack) draw RL4VLM gym-cards style frames:
cards on a felt-green table. The artwork here is our own and is tuned for legibility to a
vision-language model rather than for ornament:

* every face carries a bold rank index ("A", "2".."10", "J", "Q", "K") with its suit symbol in the
  top-left corner and, rotated 180 degrees, in the bottom-right corner;
* number cards lay their pips out like real cards, aces show one large pip, and court cards
  (J, Q, K) show a gold framed panel with a large letter so they never look like number cards;
* cards narrower than ``SMALL_WIDTH`` pixels drop the pips and show a large rank and suit in the
  centre, which stays readable at thumbnail sizes.

Faces are drawn at 2-4x resolution and box-downsampled, which anti-aliases shapes and text. They
are cached per ``(rank, suit, size)`` and returned read-only, so after the first call a face costs
a dictionary lookup. Pixels depend only on the arguments, the packaged font and the Pillow version.
Envs composite each card onto felt once (``layout.card_tile``), so ``paste`` favours plain exact
integer blending over speed tricks.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.cards.deck import RANKS, SUITS
from rl4vlm_gym.rendering import font

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "FELT",
    "MIN_SIZE",
    "RANKS",
    "SMALL_WIDTH",
    "SUITS",
    "card_back",
    "card_face",
    "paste",
    "table",
]

FELT: tuple[int, int, int] = (0x35, 0x65, 0x4D)
SMALL_WIDTH = 60
"""Cards narrower than this many pixels show a large centred rank and suit instead of pips."""

MIN_SIZE = 16
"""Smallest card width and height in pixels."""

_SUIT_GLYPHS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
_RED_INK = (204, 22, 36)
_BLACK_INK = (24, 24, 30)
_INK = {"C": _BLACK_INK, "D": _RED_INK, "H": _RED_INK, "S": _BLACK_INK}
_PAPER = (255, 255, 255)
_EDGE = (60, 60, 66)
_COURT_FILL = (250, 233, 178)
_BACK_FILL = (28, 58, 140)
_BACK_LINE = (120, 150, 220)

# Pip centres as (column, row): column -1/0/1 is left/centre/right, row runs 0 (top) to 1 (bottom).
# Positions follow the standard Anglo-American layout; pips below the middle are drawn inverted.
_SIDES_2 = ((-1, 0.0), (1, 0.0), (-1, 1.0), (1, 1.0))
_SIDES_3 = (*_SIDES_2, (-1, 0.5), (1, 0.5))
_SIDES_4 = (*_SIDES_2, (-1, 1 / 3), (1, 1 / 3), (-1, 2 / 3), (1, 2 / 3))
_PIPS: dict[str, tuple[tuple[int, float], ...]] = {
    "2": ((0, 0.0), (0, 1.0)),
    "3": ((0, 0.0), (0, 0.5), (0, 1.0)),
    "4": _SIDES_2,
    "5": (*_SIDES_2, (0, 0.5)),
    "6": _SIDES_3,
    "7": (*_SIDES_3, (0, 0.25)),
    "8": (*_SIDES_3, (0, 0.25), (0, 0.75)),
    "9": (*_SIDES_4, (0, 0.5)),
    "10": (*_SIDES_4, (0, 1 / 6), (0, 5 / 6)),
}


class _Layout(NamedTuple):
    """Card geometry in canvas pixels (the supersampled drawing surface)."""

    width: int
    height: int
    scale: int  # canvas pixels per output pixel
    unit: float  # card "width" used for proportions, robust to odd aspect ratios
    border: int
    radius: int
    inset: float  # margin from the card edge to the corner index
    rank_height: int
    suit_height: int
    index_width: float  # width budget of the corner index column


def _layout(size: tuple[int, int]) -> _Layout:
    """Compute proportions for a card of ``size=(width, height)`` output pixels."""
    width, height = size
    scale = max(2, min(4, 600 // width))
    unit = min(width, height / 1.4) * scale
    rank_height = 0.15 * unit + 3 * scale  # the +3 px keeps the index readable on small cards
    return _Layout(
        width=width * scale,
        height=height * scale,
        scale=scale,
        unit=unit,
        border=max(scale, round(unit / 110)),
        radius=max(4 * scale, round(0.07 * unit)),  # >= 4 px so the corner pixels are clear
        inset=0.045 * unit + scale,
        rank_height=round(rank_height),
        suit_height=round(0.72 * rank_height),
        index_width=1.15 * rank_height,
    )


def _check_size(size: tuple[int, int], minimum: int = MIN_SIZE) -> tuple[int, int]:
    """Validate a ``(width, height)`` pair of integers ``>= minimum`` and return it as ints."""
    try:
        width, height = (int(v) for v in size)
        valid = all(int(v) == v for v in size) and min(width, height) >= minimum
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(
            f"size must be a (width, height) pair of integers, each >= {minimum} px; got {size!r}"
        )
    return width, height


@functools.lru_cache(maxsize=64)
def _ink_ratio(text: str, bold: bool) -> float:
    """Ink height of ``text`` per pixel of font size, measured once at a large reference size."""
    return _render_text(text, 200, bold).height / 200


def _render_text(text: str, font_size: int, bold: bool) -> Image.Image:
    """Render ``text`` into an ``L`` mask cropped tightly to its ink.

    Characters are set individually with a tight gap (about 8% of the font size) instead of the
    font's spacing, so a "10" stays compact enough for a card's corner index.
    """
    face = font(font_size, bold)
    pad = font_size // 4 + 2
    height = int(face.getbbox(text)[3]) + 2 * pad
    gap = round(0.08 * font_size)
    pieces = []
    for char in text:
        left, _, right, _ = face.getbbox(char)
        piece = Image.new("L", (int(right - left) + 2 * pad, height))
        ImageDraw.Draw(piece).text((pad - left, pad), char, font=face, fill=255)
        ink_left, _, ink_right, _ = piece.getbbox() or (0, 0, 1, 0)
        pieces.append(piece.crop((ink_left, 0, ink_right, height)))
    mask = Image.new("L", (sum(p.width for p in pieces) + gap * (len(pieces) - 1), height))
    x = 0
    for piece in pieces:
        mask.paste(piece, (x, 0))
        x += piece.width + gap
    return mask.crop(mask.getbbox())


@functools.lru_cache(maxsize=512)
def _glyph(
    text: str, height: int, bold: bool = False, max_width: int = 0, ref: str = ""
) -> Image.Image:
    """Return an ``L`` mask of ``text`` at the font size that makes ``ref`` ``height`` px tall.

    ``ref`` defaults to ``text``; sizing ranks by a common reference keeps every rank at the same
    font size (a "Q" keeps its tail). Text wider than ``max_width`` is squeezed horizontally, as real cards narrow the "10".
    The cached masks are internal and never mutated.
    """
    font_size = max(1, round(height / _ink_ratio(ref or text, bold)))
    mask = _render_text(text, font_size, bold)
    if max_width and mask.width > max_width:
        mask = mask.resize((max_width, mask.height), Image.Resampling.LANCZOS)
    return mask


def _stamp(
    canvas: Image.Image,
    mask: Image.Image,
    centre: tuple[float, float],
    ink: tuple[int, int, int],
    inverted: bool = False,
) -> None:
    """Paint ``ink`` through ``mask`` centred on ``centre``; ``inverted`` turns it upside down."""
    if inverted:
        mask = mask.transpose(Image.Transpose.ROTATE_180)
    left = round(centre[0] - mask.width / 2)
    top = round(centre[1] - mask.height / 2)
    canvas.paste((*ink, 255), (left, top), mask)


def _blank(lay: _Layout, fill: tuple[int, int, int] = _PAPER) -> Image.Image:
    """A transparent canvas holding the rounded, bordered card shape."""
    canvas = Image.new("RGBA", (lay.width, lay.height), (*_EDGE, 0))
    ImageDraw.Draw(canvas).rounded_rectangle(
        (0, 0, lay.width - 1, lay.height - 1),
        radius=lay.radius,
        fill=(*fill, 255),
        outline=(*_EDGE, 255),
        width=lay.border,
    )
    return canvas


def _finish(canvas: Image.Image, size: tuple[int, int]) -> NDArray[np.uint8]:
    """Downsample the canvas to ``size`` and freeze it as a read-only ``uint8[h, w, 4]`` array."""
    return _freeze(np.array(canvas.resize(size, Image.Resampling.BOX), dtype=np.uint8))


def _draw_index(canvas: Image.Image, lay: _Layout, rank: str, suit: str) -> float:
    """Draw the rank/suit index in the top-left and bottom-right corners.

    Returns:
        The x coordinate (canvas px) of the index column's right edge, which pips must clear.
    """
    ink = _INK[suit]
    rank_mask = _glyph(rank, lay.rank_height, True, round(lay.index_width), ref="K")
    suit_mask = _glyph(_SUIT_GLYPHS[suit], lay.suit_height)
    column_x = lay.inset + lay.index_width / 2
    rank_y = lay.inset + rank_mask.height / 2
    # J and Q reach below the baseline, so the suit hangs from the rank's actual ink.
    suit_y = lay.inset + rank_mask.height + 0.25 * lay.suit_height + lay.suit_height / 2
    for x, y, mask in ((column_x, rank_y, rank_mask), (column_x, suit_y, suit_mask)):
        _stamp(canvas, mask, (x, y), ink)
        _stamp(canvas, mask, (lay.width - x, lay.height - y), ink, inverted=True)
    return lay.inset + lay.index_width


def _draw_pips(
    canvas: Image.Image, lay: _Layout, rank: str, suit: str, index_right: float
) -> None:
    """Lay out the pips of a 2-10 or the single large pip of an ace."""
    ink = _INK[suit]
    glyph = _SUIT_GLYPHS[suit]
    centre_x, centre_y = lay.width / 2, lay.height / 2
    if rank == "A":
        _stamp(canvas, _glyph(glyph, round(0.36 * lay.unit)), (centre_x, centre_y), ink)
        return
    pip = _glyph(glyph, round(0.14 * lay.unit))
    # Side columns sit just clear of the corner index; rows span the middle 60% of the height.
    offset_x = centre_x - (index_right + 0.04 * lay.unit + pip.width / 2)
    top, bottom = 0.2 * lay.height, 0.8 * lay.height
    for column, row in _PIPS[rank]:
        y = top + row * (bottom - top)
        _stamp(canvas, pip, (centre_x + column * offset_x, y), ink, inverted=row > 0.5)


def _draw_court(
    canvas: Image.Image, lay: _Layout, rank: str, suit: str, index_right: float
) -> None:
    """Draw the framed centre panel of a J, Q or K: large letter between two suit pips."""
    ink = _INK[suit]
    left = round(index_right + 0.03 * lay.unit)
    top = round(lay.inset)
    box = (left, top, lay.width - 1 - left, lay.height - 1 - top)
    line = max(lay.scale, round(0.012 * lay.unit))
    draw = ImageDraw.Draw(canvas)
    draw.rectangle(box, fill=(*_COURT_FILL, 255), outline=(*ink, 255), width=line)
    gap = 2 * line
    inner = (box[0] + gap, box[1] + gap, box[2] - gap, box[3] - gap)
    draw.rectangle(inner, outline=(*ink, 255), width=max(1, line // 2))
    panel_w, panel_h = box[2] - box[0], box[3] - box[1]
    centre = (lay.width / 2, lay.height / 2)
    letter_h = round(min(0.3 * panel_h, 0.85 * panel_w))
    letter = _glyph(rank, letter_h, True, round(0.8 * panel_w), ref="K")
    _stamp(canvas, letter, centre, ink)
    pip = _glyph(_SUIT_GLYPHS[suit], round(min(0.13 * panel_h, 0.5 * panel_w)))
    pip_dy = letter.height / 2 + 0.1 * panel_h + pip.height / 2
    _stamp(canvas, pip, (centre[0], centre[1] - pip_dy), ink)
    _stamp(canvas, pip, (centre[0], centre[1] + pip_dy), ink, inverted=True)


def _draw_small(canvas: Image.Image, lay: _Layout, rank: str, suit: str) -> None:
    """Thumbnail design: a large rank above a large suit, centred on the card."""
    ink = _INK[suit]
    rank_mask = _glyph(rank, round(0.34 * lay.height), True, round(0.78 * lay.width), ref="K")
    suit_mask = _glyph(_SUIT_GLYPHS[suit], round(0.26 * lay.height))
    gap = 0.06 * lay.height
    top = (lay.height - rank_mask.height - gap - suit_mask.height) / 2
    x = lay.width / 2
    _stamp(canvas, rank_mask, (x, top + rank_mask.height / 2), ink)
    _stamp(canvas, suit_mask, (x, lay.height - top - suit_mask.height / 2), ink)


@functools.lru_cache(maxsize=256)
def card_face(rank: str, suit: str, size: tuple[int, int]) -> NDArray[np.uint8]:
    """Return the face of a card as a read-only RGBA array.

    Args:
        rank: One of ``RANKS`` ("A", "2".."10", "J", "Q", "K").
        suit: One of ``SUITS``: "C" clubs, "D" diamonds, "H" hearts, "S" spades.
        size: ``(width, height)`` in pixels, each at least 16.

    Returns:
        ``uint8[height, width, 4]``; alpha is 0 outside the rounded corners. The array is
        cached and shared between callers, so it is read-only: copy it before editing.

    Raises:
        ValueError: If ``rank``, ``suit`` or ``size`` is not allowed.
    """
    if rank not in RANKS:
        raise ValueError(f"rank must be one of {', '.join(RANKS)}; got {rank!r}")
    if suit not in SUITS:
        raise ValueError(
            f"suit must be one of {', '.join(SUITS)} (clubs, diamonds, hearts, spades); "
            f"got {suit!r}"
        )
    size = _check_size(size)
    lay = _layout(size)
    court = rank in ("J", "Q", "K")
    if size[0] < SMALL_WIDTH:
        # Court thumbnails keep the gold panel colour so they still read as face cards.
        canvas = _blank(lay, _COURT_FILL if court else _PAPER)
        _draw_small(canvas, lay, rank, suit)
        return _finish(canvas, size)
    canvas = _blank(lay)
    index_right = _draw_index(canvas, lay, rank, suit)
    if court:
        _draw_court(canvas, lay, rank, suit, index_right)
    else:
        _draw_pips(canvas, lay, rank, suit, index_right)
    return _finish(canvas, size)


@functools.lru_cache(maxsize=32)
def card_back(size: tuple[int, int]) -> NDArray[np.uint8]:
    """Return a face-down card (blue lattice inside a white margin) as a read-only RGBA array.

    Args:
        size: ``(width, height)`` in pixels, each at least 16.

    Returns:
        ``uint8[height, width, 4]``, transparent outside the rounded corners; cached, read-only.

    Raises:
        ValueError: If ``size`` is not allowed.
    """
    size = _check_size(size)
    lay = _layout(size)
    canvas = _blank(lay)
    margin = round(0.07 * lay.unit)
    inner_w, inner_h = lay.width - 2 * margin, lay.height - 2 * margin
    pattern = Image.new("RGBA", (inner_w, inner_h), (*_BACK_FILL, 255))
    draw = ImageDraw.Draw(pattern)
    step = max(5 * lay.scale, round(lay.unit / 8))
    line = max(lay.scale, round(lay.unit / 70))  # at least one output pixel, or it washes out
    # Diagonal lattice: lines at +/-45 degrees through points k * step from the panel centre,
    # so the pattern is symmetric; each line spans the panel height plus one step of overhang.
    cx, cy = inner_w / 2, inner_h / 2
    for k in range(-math.ceil((cx + cy) / step), math.ceil((cx + cy) / step) + 1):
        x = cx + k * step
        for slope in (1, -1):
            reach = slope * (cy + step)
            draw.line(
                ((x - reach, -step), (x + reach, inner_h + step)),
                fill=(*_BACK_LINE, 255),
                width=line,
            )
    shape = Image.new("L", pattern.size)
    radius = max(lay.scale, lay.radius - margin)
    ImageDraw.Draw(shape).rounded_rectangle((0, 0, inner_w - 1, inner_h - 1), radius, fill=255)
    canvas.paste(pattern, (margin, margin), shape)
    ImageDraw.Draw(canvas).rounded_rectangle(
        (margin, margin, margin + inner_w - 1, margin + inner_h - 1),
        radius=radius,
        outline=(*_BACK_FILL, 255),
        width=max(lay.scale, 2 * line),
    )
    return _finish(canvas, size)


def _freeze(card: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Make a cached card immutable: a view of a read-only base cannot be made writable again."""
    card.flags.writeable = False
    return card.view()


def paste(frame: NDArray[np.uint8], card_rgba: NDArray[np.uint8], xy: tuple[int, int]) -> None:
    """Alpha-composite an RGBA card onto an RGB frame in place.

    Parts of the card outside the frame are clipped, so cards may hang over any edge.

    Args:
        frame: Writable ``uint8[H, W, 3]`` frame.
        card_rgba: ``uint8[h, w, 4]`` image, e.g. from ``card_face`` (read-only arrays are fine).
        xy: ``(x, y)`` of the card's top-left corner in frame pixels; may be negative.

    Raises:
        ValueError: If the arrays have the wrong shape or dtype.
    """
    if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"frame must be uint8[H, W, 3]; got {frame.dtype}{list(frame.shape)}")
    if card_rgba.dtype != np.uint8 or card_rgba.ndim != 3 or card_rgba.shape[2] != 4:
        raise ValueError(
            f"card_rgba must be uint8[h, w, 4]; got {card_rgba.dtype}{list(card_rgba.shape)}"
        )
    height, width = card_rgba.shape[:2]
    x, y = int(xy[0]), int(xy[1])
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + width, frame.shape[1]), min(y + height, frame.shape[0])
    if x0 >= x1 or y0 >= y1:
        return
    dst = frame[y0:y1, x0:x1]
    src = card_rgba[y0 - y : y1 - y, x0 - x : x1 - x]
    alpha = src[:, :, 3:].astype(np.uint16)
    # round((card * a + frame * (255 - a)) / 255) in exact integer arithmetic
    mixed = src[:, :, :3] * alpha + dst * (255 - alpha) + 128
    dst[...] = (mixed + (mixed >> 8)) >> 8


@functools.lru_cache(maxsize=16)
def _felt(size: tuple[int, int], felt: tuple[int, int, int]) -> NDArray[np.uint8]:
    """Read-only felt template; ``table`` hands out copies (a memcpy beats refilling)."""
    width, height = size
    array = np.empty((height, width, 3), dtype=np.uint8)
    array[...] = felt
    array.flags.writeable = False
    return array


def table(size: tuple[int, int], felt: tuple[int, int, int] = FELT) -> NDArray[np.uint8]:
    """Return a fresh, writable felt frame.

    Args:
        size: ``(width, height)`` in pixels.
        felt: the cloth's colour (``FELT``'s green by default).

    Returns:
        ``uint8[height, width, 3]`` filled with ``felt``; the caller owns it.

    Raises:
        ValueError: If ``size`` is not a pair of positive integers.
    """
    return _felt(_check_size(size, minimum=1), tuple(felt)).copy()
