"""Product pictures for the procedural web shop: a drawn object, its brand and its option badges.

WebShop's real products show Amazon photos that cannot be fetched offline, so procedural products
are drawn instead, and the picture follows the product's chosen options: the object (one of
``SILHOUETTES``) is filled with the selected colour, the brand is written under it and the other
selected options ("x-large", "16 fl oz", "vanilla") are written as rounded text chips along the
bottom, because a VLM reads words far more reliably than it tells our little drawings apart.

Shapes are drawn at 2x and box-downsampled for anti-aliasing; text is set at output size with
the packaged DejaVu fonts, scaled to the image (at thumbnail size only the brand is written). The
pixels depend only on the arguments, the font files and the Pillow version (brand colours use
``zlib.crc32``, never ``hash()``). Drawings are cached; the public functions return copies, so
callers may modify what they get.
"""

from __future__ import annotations

import colorsys
import functools
import io
import zlib
from collections.abc import Callable, Sequence
from typing import NamedTuple

from PIL import Image, ImageDraw, ImageFont

from rl4vlm_gym.rendering import font

__all__ = ["SILHOUETTES", "THEMES", "blank_image", "placeholder_image", "png_bytes", "product_image"]

Color = tuple[int, int, int]
Point = tuple[float, float]

SILHOUETTES: tuple[str, ...] = (
    "bottle", "jar", "tube", "shirt", "shoe", "dress", "cap", "backpack", "chair", "table", "lamp", "pillow",
    "curtain", "bag", "box", "headphones", "speaker", "phone", "cable", "watch",
)  # fmt: skip

_WHITE: Color = (255, 255, 255)
_INK: Color = (40, 42, 48)
_DARK: Color = (58, 60, 66)  # caps, stands, plugs: parts that are not the product's colour
_METAL: Color = (196, 200, 206)
_LABEL: Color = (250, 250, 248)
_CHIP: Color = (236, 239, 244)
_CHIP_EDGE: Color = (160, 166, 178)
_CARD: Color = (244, 245, 247)
_CARD_EDGE: Color = (212, 215, 220)
_MIN_FONT = 8


class Theme(NamedTuple):
    """How the pictures look around the product, whose own colour is a fact and never changes."""

    background: Color
    ink: Color  # the brand, the placeholder's title
    chip: Color
    chip_edge: Color
    chip_ink: Color
    card: Color  # the placeholder's card
    card_edge: Color
    serif: bool  # DejaVu Serif instead of DejaVu Sans
    frame: bool  # a double rule round the picture


THEMES: dict[str, Theme] = {
    "default": Theme(_WHITE, _INK, _CHIP, _CHIP_EDGE, _INK, _CARD, _CARD_EDGE, serif=False, frame=False),
    # The held-out theme (the visual transfer axis): kraft paper, brown serif lettering, dark chips
    # with cream text and a framed picture; no training picture has any of them.
    "held-out": Theme((234, 223, 200), (84, 40, 24), (96, 62, 44), (60, 36, 24), (250, 240, 220), (242, 232, 212),
                      (150, 120, 90), serif=True, frame=True),
}  # fmt: skip
"""The shop's picture themes: ``default`` and ``held-out`` (the ``appearance`` argument)."""
_CHIPS_FROM = 110  # below this shorter side (thumbnails) only the brand is written


def _mix(a: Color, b: Color, t: float) -> Color:
    return round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t)


def _brand_color(brand: str) -> Color:
    """A muted colour of its own for a brand whose product has no colour option."""
    h = zlib.crc32(brand.encode())
    r, g, b = colorsys.hsv_to_rgb((h % 360) / 360, 0.22, 0.62 + (h >> 12) % 16 / 100)
    return round(255 * r), round(255 * g), round(255 * b)


class _Pen:
    """Draws in unit coordinates of a square box, with one outline colour for every part."""

    def __init__(self, draw: ImageDraw.ImageDraw, x0: int, y0: int, side: int, fill: Color) -> None:
        self.draw, self.x0, self.y0, self.side = draw, x0, y0, side
        self.fill = fill
        # Dark enough that white and ivory products stay visible on the white background.
        self.edge = _mix(fill, (0, 0, 0), 0.5)
        self.shade = _mix(fill, (0, 0, 0), 0.18)
        self.tint = _mix(fill, _WHITE, 0.35)
        self.lw = max(2, round(side * 0.014))

    def _p(self, x: float, y: float) -> tuple[float, float]:
        return self.x0 + x * self.side, self.y0 + y * self.side

    def _box(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (*self._p(box[0], box[1]), *self._p(box[2], box[3]))

    def poly(self, points: Sequence[Point], fill: Color | None = None) -> None:
        self.draw.polygon([self._p(x, y) for x, y in points], fill=fill or self.fill, outline=self.edge, width=self.lw)

    def rect(self, box: tuple[float, float, float, float], fill: Color | None = None, r: float = 0.0) -> None:
        radius = round(r * self.side)
        self.draw.rounded_rectangle(self._box(box), radius, fill=fill or self.fill, outline=self.edge, width=self.lw)

    def oval(self, box: tuple[float, float, float, float], fill: Color | None = None) -> None:
        self.draw.ellipse(self._box(box), fill=fill or self.fill, outline=self.edge, width=self.lw)

    def line(self, points: Sequence[Point], w: float, fill: Color | None = None) -> None:
        """A stroke ``w`` (unit) wide with an outline around it."""
        pts, width = [self._p(x, y) for x, y in points], round(w * self.side)
        self.draw.line(pts, fill=self.edge, width=width + 2 * self.lw, joint="curve")
        self.draw.line(pts, fill=fill or self.fill, width=width, joint="curve")

    def arc(self, box: tuple[float, float, float, float], start: float, end: float, w: float) -> None:
        """An arc ``w`` (unit) wide inside ``box``, outlined like ``line``."""
        width, inset = round(w * self.side), self.lw / self.side
        self.draw.arc(self._box(box), start, end, fill=self.edge, width=width + 2 * self.lw)
        inner = (box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset)
        self.draw.arc(self._box(inner), start, end, fill=self.fill, width=width)

    def pie(self, box: tuple[float, float, float, float], start: float, end: float) -> None:
        self.draw.pieslice(self._box(box), start, end, fill=self.fill, outline=self.edge, width=self.lw)

    def stroke(self, points: Sequence[Point], color: Color | None = None) -> None:
        """A thin detail line (seams, folds)."""
        self.draw.line([self._p(x, y) for x, y in points], fill=color or self.edge, width=self.lw)


def _bezier(a: Point, c: Point, b: Point, n: int = 8) -> list[Point]:
    """A quadratic curve from ``a`` towards ``b`` (``b`` itself left out), pulled towards ``c``."""
    weights = [((1 - i / n) ** 2, 2 * (1 - i / n) * i / n, (i / n) ** 2) for i in range(n)]
    return [(u * a[0] + v * c[0] + w * b[0], u * a[1] + v * c[1] + w * b[1]) for u, v, w in weights]


# --- silhouettes: each draws in a unit square, the object roughly within 0.06-0.94 --------------


def _bottle(p: _Pen) -> None:
    p.poly([(0.43, 0.2), (0.57, 0.2), (0.57, 0.3), (0.7, 0.42), (0.7, 0.88), (0.66, 0.93), (0.34, 0.93),
            (0.3, 0.88), (0.3, 0.42), (0.43, 0.3)])  # fmt: skip
    p.rect((0.4, 0.08, 0.6, 0.21), _DARK, 0.02)
    p.rect((0.34, 0.55, 0.66, 0.8), _LABEL, 0.02)
    p.rect((0.33, 0.44, 0.37, 0.53), p.tint, 0.02)


def _jar(p: _Pen) -> None:
    p.rect((0.2, 0.32, 0.8, 0.88), r=0.1)
    p.rect((0.24, 0.2, 0.76, 0.34), _DARK, 0.03)
    p.rect((0.28, 0.48, 0.72, 0.74), _LABEL, 0.02)
    p.rect((0.24, 0.38, 0.29, 0.8), p.tint, 0.025)


def _tube(p: _Pen) -> None:
    p.rect((0.28, 0.08, 0.72, 0.16), p.shade, 0.01)
    p.poly([(0.28, 0.15), (0.72, 0.15), (0.64, 0.72), (0.36, 0.72)])
    p.rect((0.38, 0.72, 0.62, 0.92), _DARK, 0.03)
    p.rect((0.4, 0.32, 0.6, 0.52), _LABEL, 0.02)


def _shirt(p: _Pen) -> None:
    neck = _bezier((0.6, 0.14), (0.5, 0.26), (0.4, 0.14))
    p.poly([(0.4, 0.14), (0.22, 0.2), (0.06, 0.38), (0.18, 0.5), (0.27, 0.42), (0.27, 0.9), (0.73, 0.9),
            (0.73, 0.42), (0.82, 0.5), (0.94, 0.38), (0.78, 0.2), *neck])  # fmt: skip
    p.stroke([(0.27, 0.42), (0.24, 0.3)])
    p.stroke([(0.73, 0.42), (0.76, 0.3)])


def _shoe(p: _Pen) -> None:
    collar = _bezier((0.16, 0.34), (0.26, 0.44), (0.36, 0.38))
    toe = _bezier((0.56, 0.5), (0.94, 0.54), (0.94, 0.72))
    p.poly([(0.08, 0.72), (0.07, 0.46), (0.1, 0.36), *collar, (0.42, 0.4), *toe, (0.94, 0.72)])
    p.poly([(0.08, 0.72), (0.07, 0.46), (0.1, 0.36), (0.16, 0.34), (0.2, 0.5), (0.22, 0.72)], p.shade)
    p.rect((0.05, 0.7, 0.96, 0.8), _LABEL, 0.05)
    for i in range(3):
        x = 0.38 + i * 0.07
        p.stroke([(x, 0.42 + i * 0.025), (x + 0.05, 0.5 + i * 0.02)])


def _dress(p: _Pen) -> None:
    p.poly([(0.37, 0.08), (0.42, 0.08), (0.45, 0.2), (0.55, 0.2), (0.58, 0.08), (0.63, 0.08), (0.64, 0.3),
            (0.59, 0.45), (0.82, 0.9), (0.18, 0.9), (0.41, 0.45), (0.36, 0.3)])  # fmt: skip
    p.rect((0.4, 0.43, 0.6, 0.48), p.shade)
    p.stroke([(0.45, 0.5), (0.36, 0.88)])
    p.stroke([(0.55, 0.5), (0.64, 0.88)])


def _cap(p: _Pen) -> None:
    brim = _bezier((0.5, 0.63), (0.82, 0.58), (0.97, 0.7)) + _bezier((0.97, 0.7), (0.8, 0.78), (0.5, 0.73))
    p.poly(brim, p.shade)
    p.pie((0.06, 0.3, 0.7, 1.06), 180, 360)
    p.rect((0.06, 0.62, 0.7, 0.69), p.shade)
    p.stroke([(0.38, 0.31), (0.38, 0.62)])
    p.oval((0.35, 0.27, 0.41, 0.33), p.shade)


def _backpack(p: _Pen) -> None:
    p.arc((0.38, 0.06, 0.62, 0.3), 180, 360, 0.04)
    p.rect((0.22, 0.16, 0.78, 0.92), r=0.14)
    p.rect((0.31, 0.56, 0.69, 0.86), p.shade, 0.06)
    p.stroke([(0.3, 0.36), (0.7, 0.36)])
    p.rect((0.47, 0.53, 0.53, 0.6), _DARK, 0.01)


def _chair(p: _Pen) -> None:
    p.rect((0.47, 0.6, 0.53, 0.8), _DARK)
    p.line([(0.22, 0.88), (0.5, 0.8), (0.78, 0.88)], 0.03, _DARK)
    for x in (0.19, 0.47, 0.75):
        p.oval((x, 0.85 if x != 0.47 else 0.82, x + 0.06, 0.91 if x != 0.47 else 0.88), _DARK)
    p.rect((0.3, 0.08, 0.7, 0.5), r=0.08)
    p.rect((0.22, 0.5, 0.78, 0.61), r=0.04)
    p.line([(0.18, 0.52), (0.18, 0.4), (0.28, 0.4)], 0.025, _DARK)
    p.line([(0.82, 0.52), (0.82, 0.4), (0.72, 0.4)], 0.025, _DARK)


def _table(p: _Pen) -> None:
    for x in (0.11, 0.81):
        p.rect((x, 0.5, x + 0.08, 0.86))
    p.rect((0.11, 0.68, 0.89, 0.74))
    p.poly([(0.18, 0.3), (0.82, 0.3), (0.95, 0.44), (0.05, 0.44)])
    p.rect((0.05, 0.44, 0.95, 0.52), p.shade)


def _lamp(p: _Pen) -> None:
    p.rect((0.48, 0.44, 0.52, 0.84), _DARK)
    p.oval((0.3, 0.8, 0.7, 0.92), _DARK)
    p.poly([(0.32, 0.1), (0.68, 0.1), (0.82, 0.46), (0.18, 0.46)])
    p.stroke([(0.2, 0.41), (0.8, 0.41)], p.shade)


def _pillow(p: _Pen) -> None:
    corners = [(0.08, 0.18), (0.92, 0.18), (0.92, 0.86), (0.08, 0.86)]
    pulls = [(0.5, 0.3), (0.8, 0.52), (0.5, 0.74), (0.2, 0.52)]
    p.poly([q for i in range(4) for q in _bezier(corners[i], pulls[i], corners[(i + 1) % 4])])
    p.oval((0.47, 0.49, 0.53, 0.55), p.shade)


def _curtain(p: _Pen) -> None:
    p.rect((0.12, 0.12, 0.88, 0.9), (214, 232, 246))
    p.poly([(0.08, 0.12), (0.48, 0.12), (0.3, 0.52), (0.4, 0.92), (0.08, 0.92)])
    p.poly([(0.92, 0.12), (0.52, 0.12), (0.7, 0.52), (0.6, 0.92), (0.92, 0.92)])
    for x in (0.16, 0.24):
        p.stroke([(x, 0.14), (x, 0.9)], p.shade)
        p.stroke([(1 - x, 0.14), (1 - x, 0.9)], p.shade)
    p.line([(0.03, 0.1), (0.97, 0.1)], 0.025, _DARK)


def _bag(p: _Pen) -> None:
    p.poly([(0.26, 0.2), (0.74, 0.2), (0.79, 0.9), (0.21, 0.9)])
    p.rect((0.25, 0.1, 0.75, 0.2), p.shade)
    p.stroke([(0.28, 0.15), (0.72, 0.15)])
    p.rect((0.32, 0.5, 0.68, 0.76), _LABEL, 0.02)
    p.oval((0.46, 0.28, 0.54, 0.36), _DARK)


def _box(p: _Pen) -> None:
    p.poly([(0.18, 0.32), (0.68, 0.32), (0.82, 0.18), (0.32, 0.18)], p.tint)
    p.poly([(0.68, 0.32), (0.82, 0.18), (0.82, 0.76), (0.68, 0.9)], p.shade)
    p.rect((0.18, 0.32, 0.68, 0.9))
    p.rect((0.25, 0.5, 0.61, 0.74), _LABEL, 0.02)


def _headphones(p: _Pen) -> None:
    p.arc((0.16, 0.1, 0.84, 0.8), 180, 360, 0.07)
    p.line([(0.2, 0.45), (0.2, 0.56)], 0.06)
    p.line([(0.8, 0.45), (0.8, 0.56)], 0.06)
    for x in (0.08, 0.72):
        p.rect((x, 0.5, x + 0.2, 0.86), r=0.06)
    p.rect((0.26, 0.54, 0.3, 0.82), _DARK, 0.02)
    p.rect((0.7, 0.54, 0.74, 0.82), _DARK, 0.02)


def _speaker(p: _Pen) -> None:
    p.rect((0.08, 0.3, 0.92, 0.8), r=0.2)
    for x in (0.17, 0.55):
        p.oval((x, 0.37, x + 0.28, 0.73), _DARK)
        p.oval((x + 0.09, 0.46, x + 0.19, 0.64), _METAL)
    p.rect((0.44, 0.32, 0.56, 0.36), p.shade, 0.01)


def _phone(p: _Pen) -> None:
    p.rect((0.28, 0.06, 0.72, 0.94), r=0.08)
    p.rect((0.33, 0.12, 0.52, 0.34), _DARK, 0.04)
    for y in (0.14, 0.24):
        p.oval((0.36, y, 0.44, y + 0.08), _METAL)
    p.oval((0.45, 0.56, 0.55, 0.66), p.shade)


def _cable(p: _Pen) -> None:
    for i in range(3):
        d = i * 0.06
        p.arc((0.1 + d, 0.12 + d, 0.62 + d, 0.64 + d), 0, 360, 0.035)
    p.line([(0.72, 0.55), (0.78, 0.66)], 0.035)
    p.rect((0.71, 0.64, 0.85, 0.82), _DARK, 0.02)
    p.rect((0.74, 0.82, 0.82, 0.92), _METAL, 0.01)


def _watch(p: _Pen) -> None:
    p.rect((0.38, 0.04, 0.62, 0.96), r=0.04)
    p.rect((0.69, 0.42, 0.74, 0.52), _DARK, 0.01)
    p.rect((0.28, 0.3, 0.72, 0.7), _DARK, 0.08)
    p.rect((0.33, 0.35, 0.67, 0.65), (24, 26, 30), 0.05)
    p.stroke([(0.5, 0.5), (0.5, 0.4)], p.tint)
    p.stroke([(0.5, 0.5), (0.58, 0.54)], p.tint)


_DRAW: dict[str, Callable[[_Pen], None]] = {
    "bottle": _bottle, "jar": _jar, "tube": _tube, "shirt": _shirt, "shoe": _shoe, "dress": _dress, "cap": _cap,
    "backpack": _backpack, "chair": _chair, "table": _table, "lamp": _lamp, "pillow": _pillow, "curtain": _curtain,
    "bag": _bag, "box": _box, "headphones": _headphones, "speaker": _speaker, "phone": _phone, "cable": _cable,
    "watch": _watch,
}  # fmt: skip
assert tuple(_DRAW) == SILHOUETTES


# --- text ------------------------------------------------------------------------------------------


def _fit(text: str, face: ImageFont.FreeTypeFont, width: float) -> str:
    """``text``, cut short with an ellipsis if it is wider than ``width`` ("" if nothing fits)."""
    if face.getlength(text) <= width:
        return text
    lo, hi = 0, len(text)  # longest prefix that fits with the ellipsis
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if face.getlength(text[:mid].rstrip() + "…") <= width else (lo, mid - 1)
    return text[:lo].rstrip() + "…" if lo else ""


def _chip_rows(
    badges: tuple[str, ...], width: int, pref: int, max_rows: int, serif: bool = False
) -> tuple[ImageFont.FreeTypeFont, list[list[str]]]:
    """The font and rows of chip texts that fit ``width``: the font shrinks before chips are
    dropped, and chips that still do not fit are summed up as a last "+N" chip."""
    sizes = sorted({pref, max(_MIN_FONT, round(pref * 0.85)), max(_MIN_FONT, round(pref * 0.7))}, reverse=True)
    for size in sizes:
        face, gap = font(size, serif=serif), _chip_gap(size)
        texts = [_fit(b, face, width - 1.2 * size) for b in badges]
        rows: list[list[str]] = [[]]
        used, rest = 0.0, 0  # width of the last row, chips left over
        for i, text in enumerate(texts):
            need = _chip_width(text, face) + (gap if rows[-1] else 0)
            if rows[-1] and used + need > width:
                if len(rows) == max_rows:
                    rest = len(texts) - i
                    break
                rows.append([])
                used, need = 0.0, need - gap
            rows[-1].append(text)
            used += need
        if not rest:
            return face, rows
    while rows[-1] and used + gap + _chip_width(f"+{rest}", face) > width:
        dropped = rows[-1].pop()
        used -= _chip_width(dropped, face) + (gap if rows[-1] else 0)
        rest += 1
    rows[-1].append(f"+{rest}")
    return face, rows


def _chip_gap(size: int) -> int:
    return max(2, round(size * 0.4))


def _chip_width(text: str, face: ImageFont.FreeTypeFont) -> float:
    return face.getlength(text) + 1.2 * face.size  # 0.6 em of padding on each side


def _wrap(text: str, face: ImageFont.FreeTypeFont, width: float, max_lines: int) -> list[str]:
    """The first words of ``text`` in at most ``max_lines`` lines, the last cut with an ellipsis."""
    words = text.split()
    lines: list[str] = []
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and face.getlength(f"{line} {words[0]}") <= width:
            line += " " + words.pop(0)
        if len(lines) == max_lines - 1 and words:
            line = f"{line} {' '.join(words)}"
        lines.append(_fit(line, face, width))
    return lines


# --- pictures --------------------------------------------------------------------------------------


def _margin(side: int) -> int:
    return max(2, round(side * 0.04))


# Small caches: a 512x512 picture is 0.8 MB, and a shop page needs a dozen at most.
@functools.lru_cache(maxsize=128)
def _product(
    silhouette: str, color: Color | None, brand: str, badges: tuple[str, ...], h: int, w: int, theme: str = "default"
) -> Image.Image:
    look = THEMES[theme]
    s, m = min(h, w), _margin(min(h, w))
    bottom = h - m
    chips: list[tuple[float, float, float, str]] = []  # (left, top, width, text)
    chip_face, chip_h = None, 0
    if s >= _CHIPS_FROM and badges:
        chip_face, rows = _chip_rows(badges, w - 2 * m, max(_MIN_FONT, round(s * 0.052)), 2 if s >= 200 else 1, look.serif)
        size = int(chip_face.size)
        chip_h, gap, row_gap = round(size * 1.6), _chip_gap(size), round(size * 0.35)
        top = bottom - len(rows) * chip_h - (len(rows) - 1) * row_gap
        for r, row in enumerate(rows):
            widths = [_chip_width(t, chip_face) for t in row]
            x = (w - sum(widths) - gap * (len(row) - 1)) / 2
            for text, cw in zip(row, widths):
                chips.append((x, top + r * (chip_h + row_gap), cw, text))
                x += cw + gap
        bottom = top - m
    brand_face = font(max(_MIN_FONT + 1, round(s * 0.075)), bold=True, serif=look.serif)
    brand_text = _fit(brand.strip(), brand_face, w - 2 * m)
    brand_y = 0.0
    if brand_text:
        line_h = round(brand_face.size * 1.25)
        brand_y, bottom = bottom - line_h / 2, bottom - line_h - m // 2

    # Shapes at 2x, box-downsampled: anti-aliased edges for the price of one reduce().
    canvas = Image.new("RGB", (2 * w, 2 * h), look.background)
    draw = ImageDraw.Draw(canvas)
    if look.frame and s >= 32:
        _frame(draw, 2 * w, 2 * h, m, look.card_edge)
    side = min(bottom - m, w - 2 * m)
    if side >= 8:
        x0, y0 = (w - side) // 2, m + (bottom - m - side) // 2
        _DRAW[silhouette](_Pen(draw, 2 * x0, 2 * y0, 2 * side, color or _brand_color(brand)))
    for x, y, cw, _ in chips:
        draw.rounded_rectangle(
            (2 * x, 2 * y, 2 * (x + cw), 2 * (y + chip_h)), chip_h, fill=look.chip, outline=look.chip_edge, width=2
        )
    image = canvas.reduce(2)
    draw = ImageDraw.Draw(image)
    if brand_text:
        draw.text((w / 2, brand_y), brand_text, fill=look.ink, font=brand_face, anchor="mm")
    for x, y, cw, text in chips:
        draw.text((x + cw / 2, y + chip_h / 2), text, fill=look.chip_ink, font=chip_face, anchor="mm")
    return image


def _frame(draw: ImageDraw.ImageDraw, w: int, h: int, m: int, colour: Color) -> None:
    """The held-out theme's double rule round a picture drawn at 2x (``w`` x ``h``), inside the margin."""
    lw = max(2, m // 2)
    draw.rectangle((m // 2, m // 2, w - 1 - m // 2, h - 1 - m // 2), outline=colour, width=lw)
    draw.rectangle(
        (m // 2 + 2 * lw, m // 2 + 2 * lw, w - 1 - m // 2 - 2 * lw, h - 1 - m // 2 - 2 * lw),
        outline=colour,
        width=max(1, lw // 2),
    )


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    h, w = int(size[0]), int(size[1])
    if h < 1 or w < 1:
        raise ValueError(f"image size must be positive (height, width), got {size!r}")
    return h, w


def product_image(
    silhouette: str,
    color: tuple[int, int, int] | None,
    brand: str,
    badges: Sequence[str],
    size: tuple[int, int],
    theme: str = "default",
) -> Image.Image:
    """The picture of a product: a ``silhouette`` filled with ``color`` (``None``: a muted colour
    of the brand's), the ``brand`` under it and the ``badges`` as text chips along the bottom.

    ``theme`` (one of ``THEMES``) sets everything around the product (background, lettering, chips).

    Returns an RGB image of (height, width) = ``size``, a fresh copy the caller may modify.
    Raises ``ValueError`` for a silhouette not in ``SILHOUETTES`` or an unknown theme.
    """
    if silhouette not in _DRAW:
        raise ValueError(f"unknown product silhouette {silhouette!r}; choose from {', '.join(SILHOUETTES)}")
    _check_theme(theme)
    rgb = None if color is None else (int(color[0]), int(color[1]), int(color[2]))
    shown = tuple(b.strip() for b in badges if b and b.strip())
    return _product(silhouette, rgb, str(brand), shown, *_check_size(size), theme).copy()


def _check_theme(theme: str) -> None:
    if theme not in THEMES:
        raise ValueError(f"theme={theme!r} is unknown; choose one of {tuple(THEMES)}")


@functools.lru_cache(maxsize=64)
def _placeholder(title: str, h: int, w: int, theme: str = "default") -> Image.Image:
    look = THEMES[theme]
    s, m = min(h, w), _margin(min(h, w))
    face = font(max(_MIN_FONT + 1, round(s * 0.07)), serif=look.serif)
    lines = _wrap(title, face, w - 4 * m, 2 if s < 200 else 3)
    line_h = round(face.size * 1.25)
    bottom = h - 2 * m - len(lines) * line_h
    canvas = Image.new("RGB", (2 * w, 2 * h), look.background)
    draw = ImageDraw.Draw(canvas)
    lw = max(2, round(s * 0.012))
    if s > m:
        draw.rounded_rectangle((m, m, 2 * w - m, 2 * h - m), 2 * m, fill=look.card, outline=look.card_edge, width=lw)
    side = round(min(bottom - 2 * m, w - 4 * m) * 0.8)
    if side >= 8:
        # A picture frame with hills and a sun, struck through: "no image".
        x0, y0, k = 2 * ((w - side) // 2), 2 * (m + (bottom - m - side) // 2), 2 * side
        grey, pale = (168, 172, 180), (214, 217, 222)
        draw.rounded_rectangle((x0, y0 + 0.12 * k, x0 + k, y0 + 0.88 * k), round(0.06 * k), fill=(236, 238, 241),
                               outline=grey, width=lw)  # fmt: skip
        draw.polygon([(x0 + 0.08 * k, y0 + 0.8 * k), (x0 + 0.38 * k, y0 + 0.42 * k), (x0 + 0.56 * k, y0 + 0.62 * k),
                      (x0 + 0.7 * k, y0 + 0.5 * k), (x0 + 0.92 * k, y0 + 0.8 * k)], fill=pale)  # fmt: skip
        draw.ellipse((x0 + 0.68 * k, y0 + 0.22 * k, x0 + 0.82 * k, y0 + 0.36 * k), fill=pale)
        draw.line((x0 + 0.1 * k, y0 + 0.92 * k, x0 + 0.9 * k, y0 + 0.08 * k), fill=grey, width=2 * lw)
    image = canvas.reduce(2)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((w / 2, bottom + m + (i + 0.5) * line_h), line, fill=look.ink, font=face, anchor="mm")
    return image


def placeholder_image(title: str, size: tuple[int, int], theme: str = "default") -> Image.Image:
    """A neutral card with a "no image" pictogram and the first words of ``title``, for products
    without a silhouette (real WebShop data, whose photos cannot be fetched offline). Returns a
    fresh RGB image of (height, width) = ``size``."""
    _check_theme(theme)
    return _placeholder(str(title), *_check_size(size), theme).copy()


def blank_image(size: tuple[int, int], theme: str = "default") -> Image.Image:
    """A plain RGB image of (height, width) = ``size`` in the theme's background (white by default)."""
    h, w = _check_size(size)
    _check_theme(theme)
    return Image.new("RGB", (w, h), THEMES[theme].background)


def png_bytes(image: Image.Image) -> bytes:
    """``image`` as PNG bytes: fixed fast compression and no metadata, so equal images give equal
    bytes in any process."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1, optimize=False)
    return buffer.getvalue()
