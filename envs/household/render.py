"""The household image: a drawing of a :class:`~rl4vlm_gym.envs.household.view.View` for a VLM.

The image carries every fact of :func:`~rl4vlm_gym.envs.household.view.describe`, and the words
that matter are written on it, because a VLM reads text far more reliably than it recognises our
little drawings:

* a dark **header** names the place ("At: countertop 1", or "Middle of the room") with tags for
  the room kind, OPEN / CLOSED for a receptacle that opens, and LAMP ON when a lamp here is lit;
* in the middle of the room the **scene** is a grid of tiles, one per receptacle in listing order,
  each labelled with its name and tinted by kind; at a receptacle it is a drawing of that
  receptacle by archetype (table, seat, bed, cabinet, drawer, safe, fridge, microwave, basin,
  stove, bin, toilet, holder, or a generic crate for kinds we do not know). A closed one shows a
  shut door marked CLOSED and no contents; otherwise its contents stand on a flat panel (the
  table top, the inside of the fridge, ...) as cards: an icon, state badges and the name;
* a **holding strip** at the bottom says "Holding: mug 1" with its icon and badges, or
  "Holding: nothing".

State badges pair a colour with a word ("clean" blue, "hot" red, "cold" pale blue, "sliced"
green, "on" yellow), so they stay distinct in grey scale and in words. A lit lamp also casts a
warm glow over the scene. Grids shrink their tiles and fonts to fit; what cannot fit at a
legible size is summed up as "+N more", never silently dropped.

Looks (the env's ``appearance``): ``default``, and ``held-out`` for the visual transfer axis, which
draws the receptacles and objects as line art (``_LinePen``, the same recipes stroked, not filled)
and turns every colour of the frame 150 degrees round the hue circle at equal luma: the same
layout, words and facts in a style and palette no training frame shows (about 0.9 ms more a frame).

Speed: ``render`` runs on every step whose view changed, so every part is cached with
``functools.lru_cache`` as a read-only array and composited by slice assignment: the scene of a
receptacle kind in a state (shared by cabinet 1 to cabinet 20), the header of a place, one card
per (item, card size, font, panel colour), the holding strip and the room overview. A call then
costs one frame copy plus a slice assignment per part, tens of microseconds; drawing a part the
first time costs about 0.1-1.5 ms. Cards are opaque and drawn on the exact panel colour, so they
need no alpha blending. Drawings and icons are drawn at 2-4x and box-downsampled for
anti-aliasing; text is set at output size with the packaged DejaVu fonts. Colours of unknown
kinds come from ``zlib.crc32``, so the pixels depend only on the view, the size, the font files
and the Pillow version, in any process.
"""

from __future__ import annotations

import colorsys
import functools
import math
import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.household.view import Item, View
from rl4vlm_gym.rendering import font

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LOOKS", "render"]

Color = tuple[int, int, int]
Box = tuple[int, int, int, int]
"""``(left, top, right, bottom)`` in pixels, right and bottom exclusive."""
Frac = tuple[float, float, float, float]
"""A box in fractions of a drawing's box: ``(0, 0, 1, 1)`` is the whole box."""

_INK: Color = (28, 30, 36)
_WHITE: Color = (255, 255, 255)
_HEADER: Color = (38, 50, 66)
_STRIP: Color = (250, 246, 232)
_WALLS: dict[str, Color] = {
    "kitchen": (236, 228, 212),
    "livingroom": (226, 232, 220),
    "bedroom": (232, 226, 238),
    "bathroom": (218, 232, 238),
}
_WALL: Color = (230, 230, 232)
_GLOW: Color = (255, 226, 120)

# Badge colour, word and ink, in the order they are drawn. Clean and cold are both blue-ish, so
# one is dark with white ink and the other pale with dark ink.
_BADGES: tuple[tuple[str, str, Color, Color], ...] = (
    ("clean", "clean", (30, 100, 220), _WHITE),
    ("hot", "hot", (214, 40, 30), _WHITE),
    ("cool", "cold", (150, 214, 244), (10, 40, 90)),
    ("sliced", "sliced", (40, 140, 60), _WHITE),
    ("on", "on", (250, 200, 20), _INK),
)
_ROOM_TAG: Color = (84, 100, 124)
_OPEN_TAG: Color = (46, 150, 80)
_CLOSED_TAG: Color = (190, 60, 50)
_LAMP_TAG: Color = (255, 210, 40)

_MIN_SIDE = 16
_TEXT_HEIGHT = 0.95
"""Height of a line of text ("A" top to "g" bottom) per pixel of font size, for DejaVu Sans."""


# --- colours -------------------------------------------------------------------------------------


def _mix(a: Color, b: Color, t: float) -> Color:
    """``a`` moved a fraction ``t`` towards ``b``."""
    return round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t)


def _luma(c: Color) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def _ink_on(c: Color) -> Color:
    """Dark or white text, whichever reads on ``c``."""
    return _INK if _luma(c) > 140 else _WHITE


def _dark(c: Color, t: float = 0.35) -> Color:
    return _mix(c, (0, 0, 0), t)


def _light(c: Color, t: float = 0.6) -> Color:
    return _mix(c, _WHITE, t)


def _hashed(kind: str) -> Color:
    """A mid-tone colour for an unknown kind from ``zlib.crc32``, which, unlike ``hash()``, is the
    same in every process."""
    h = zlib.crc32(kind.encode())
    r, g, b = colorsys.hsv_to_rgb((h % 360) / 360, 0.45 + (h >> 9) % 25 / 100, 0.6 + (h >> 16) % 25 / 100)
    return round(255 * r), round(255 * g), round(255 * b)


def _kind_of(name: str) -> str:
    """The kind in a receptacle name: ``"cabinet 12"`` -> ``"cabinet"``."""
    return re.sub(r"\s+\d+$", "", name)


# --- text ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _width_per_px(text: str, bold: bool) -> float:
    """Advance width of ``text`` per pixel of font size, measured once at a large size."""
    return max(font(100, bold).getlength(text), 1.0) / 100


def _least_px(unit: int) -> int:
    """The smallest font size for names in a frame of short side ``unit``: 7 px from ~280 px up."""
    return max(5, min(7, round(0.025 * unit)))


def _fit(text: str, bold: bool, max_w: float, max_h: float, least: int = 5) -> int:
    """The largest font size (at least ``least``) at which ``text`` fits ``max_w`` x ``max_h``."""
    return max(least, int(min(max_h / _TEXT_HEIGHT, max_w / _width_per_px(text, bold))))


@functools.lru_cache(maxsize=4096)
def _text(text: str, px: int, bold: bool, max_w: int) -> Image.Image:
    """An ``L`` mask of ``text`` one line high, squeezed horizontally to ``max_w`` if wider (0: never).

    Every mask of a size spans the same "A"-top to "g"-bottom band, so labels share a baseline.
    The cached masks are only ever read (as paste masks).
    """
    face = font(px, bold)
    _, top, _, bottom = face.getbbox("Ag")
    left, _, right, _ = face.getbbox(text)
    mask = Image.new("L", (max(1, int(right - left)), max(1, int(bottom - top))))
    ImageDraw.Draw(mask).text((-left, -top), text, font=face, fill=255)
    if mask.width > max_w > 0:
        mask = mask.resize((max_w, mask.height), Image.Resampling.LANCZOS)
    return mask


def _write(image: Image.Image, text: str, px: int, bold: bool, ink: Color, box: Box, centre: bool = True) -> int:
    """Write ``text`` in ``box``, vertically centred, centred or from the left; return its width."""
    left, top, right, bottom = box
    mask = _text(text, px, bold, max(1, right - left))
    y = top + (bottom - top - mask.height) // 2
    x = left + (right - left - mask.width) // 2 if centre else left
    image.paste(ink, (x, y), mask)
    return mask.width


def _pill(image: Image.Image, text: str, px: int, fill: Color, ink: Color, x: int, box_y: tuple[int, int]) -> int:
    """A rounded tag with ``text`` whose left edge is at ``x``; return its width."""
    top, bottom = box_y
    mask = _text(text, px, True, 0)
    pad = max(2, px // 3)
    width = mask.width + 2 * pad
    ImageDraw.Draw(image).rounded_rectangle((x, top, x + width - 1, bottom - 1), radius=(bottom - top) // 3, fill=fill)
    image.paste(ink, (x + pad, top + (bottom - top - mask.height) // 2), mask)
    return width


def _pill_width(text: str, px: int) -> int:
    return _text(text, px, True, 0).width + 2 * max(2, px // 3)


def _states(item: Item) -> tuple[tuple[str, Color, Color], ...]:
    """The item's badges as (word, fill, ink), in a fixed order."""
    return tuple((word, fill, ink) for field, word, fill, ink in _BADGES if getattr(item, field))


def _badges_width(states: tuple[tuple[str, Color, Color], ...], px: int) -> int:
    return sum(_pill_width(word, px) for word, _, _ in states) + max(1, px // 4) * (len(states) - 1)


def _badge_px(states: tuple[tuple[str, Color, Color], ...], px: int, room: int) -> int:
    """The largest font size up to ``px`` (and at least 4) at which the badges fit ``room`` px."""
    while px > 4 and _badges_width(states, px) > room:
        px -= 1
    return px


def _badges(image: Image.Image, states: tuple[tuple[str, Color, Color], ...], x: int, box_y: tuple[int, int],
            px: int) -> None:
    """State badges in a row from ``x``, as tall as ``box_y`` (top, bottom)."""
    if box_y[1] - box_y[0] >= 4:
        for word, fill, ink in states:
            x += _pill(image, word, px, fill, ink, x, box_y) + max(1, px // 4)


# --- drawing in fractions of a box ---------------------------------------------------------------


class _Pen:
    """Draws shapes in fractional coordinates of ``box`` so one recipe serves every size."""

    def __init__(self, draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float]) -> None:
        self.draw = draw
        self.x, self.y = box[0], box[1]
        self.w, self.h = box[2] - box[0], box[3] - box[1]
        self.lw = max(1, round(min(self.w, self.h) * 0.015))  # outline width

    def at(self, fx: float, fy: float) -> tuple[float, float]:
        return self.x + fx * self.w, self.y + fy * self.h

    def box(self, f: Frac) -> tuple[float, float, float, float]:
        return (*self.at(f[0], f[1]), *self.at(f[2], f[3]))

    def rect(self, f: Frac, fill: Color | None, outline: Color | None = None, radius: float = 0.0) -> None:
        r = radius * min(self.w, self.h)
        width = self.lw if outline else 0
        self.draw.rounded_rectangle(self.box(f), radius=r, fill=fill, outline=outline, width=width)

    def ellipse(self, f: Frac, fill: Color | None, outline: Color | None = None, width: float = 0.0) -> None:
        w = max(1, round(width * min(self.w, self.h))) if width else self.lw
        self.draw.ellipse(self.box(f), fill=fill, outline=outline, width=w if outline else 0)

    def poly(self, points: tuple[tuple[float, float], ...], fill: Color | None, outline: Color | None = None) -> None:
        self.draw.polygon([self.at(*p) for p in points], fill=fill, outline=outline, width=self.lw if outline else 0)

    def line(self, points: tuple[tuple[float, float], ...], fill: Color, width: float) -> None:
        self.draw.line([self.at(*p) for p in points], fill=fill, width=max(1, round(width * min(self.w, self.h))))

    def chord(self, f: Frac, start: float, end: float, fill: Color, outline: Color | None = None) -> None:
        self.draw.chord(self.box(f), start, end, fill=fill, outline=outline, width=self.lw if outline else 0)


class _LinePen(_Pen):
    """The held-out icon set: every drawing as line art. Shapes are strokes in a darker shade of
    their fill colour, twice as thick as the default outlines, and nothing is filled, so the same
    recipes give drawings of another style (a sketch instead of flat shapes) that training never shows."""

    def _stroke(self, fill: Color | None, outline: Color | None) -> Color:
        colour = fill if fill is not None else outline if outline is not None else _INK
        return _dark(colour, 0.45) if _luma(colour) > 90 else colour

    def rect(self, f: Frac, fill: Color | None, outline: Color | None = None, radius: float = 0.0) -> None:
        r = radius * min(self.w, self.h)
        self.draw.rounded_rectangle(self.box(f), radius=r, outline=self._stroke(fill, outline), width=2 * self.lw)

    def ellipse(self, f: Frac, fill: Color | None, outline: Color | None = None, width: float = 0.0) -> None:
        w = max(1, round(width * min(self.w, self.h))) if width else 2 * self.lw
        self.draw.ellipse(self.box(f), outline=self._stroke(fill, outline), width=w)

    def poly(self, points: tuple[tuple[float, float], ...], fill: Color | None, outline: Color | None = None) -> None:
        self.draw.polygon([self.at(*p) for p in points], outline=self._stroke(fill, outline), width=2 * self.lw)

    def line(self, points: tuple[tuple[float, float], ...], fill: Color, width: float) -> None:
        super().line(points, self._stroke(fill, None), width)

    def chord(self, f: Frac, start: float, end: float, fill: Color, outline: Color | None = None) -> None:
        self.draw.chord(self.box(f), start, end, outline=self._stroke(fill, outline), width=2 * self.lw)


_PENS: dict[str, type[_Pen]] = {"default": _Pen, "held-out": _LinePen}
LOOKS = tuple(_PENS)
"""The household's ``APPEARANCES``: ``default`` (flat shapes in the training palette) and
``held-out`` (line-art drawings, and every colour turned round the hue circle: see :func:`render`)."""

# The held-out palette: YIQ's rotation of the chroma plane by 150 degrees. It keeps each colour's
# luma (Y), so text keeps its contrast, and turns every hue (walls, tags, badges, objects) to one
# no training frame uses. A matrix on the frame, not a second colour table: it reaches every colour,
# the anti-aliased edges between them included.
_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])
_TURN = math.radians(150)
_HUE = (
    np.linalg.inv(_YIQ)
    @ np.array([[1, 0, 0], [0, math.cos(_TURN), -math.sin(_TURN)], [0, math.sin(_TURN), math.cos(_TURN)]])
    @ _YIQ
)


_HUE_MATRIX = tuple(float(x) for row in _HUE for x in (*row, 0.0))  # Pillow's 3x4 colour matrix


def _held_out_palette(frame: NDArray[np.uint8]) -> NDArray[np.uint8]:
    # Pillow's matrix conversion: the same bytes as rounding and clipping frame @ _HUE.T, ten times faster
    return np.array(Image.fromarray(frame).convert("RGB", _HUE_MATRIX), dtype=np.uint8)


# --- receptacles ---------------------------------------------------------------------------------


class _Drawn(NamedTuple):
    """Where a receptacle drawing puts its contents (or, when closed, its CLOSED sign)."""

    box: Frac
    colour: Color


def _surface(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A table or counter seen from the front and a little above: top, front edge, legs."""
    for x in (0.05, 0.9):
        p.rect((x, 0.86, x + 0.05, 1.0), _dark(c, 0.45))
    p.rect((0.0, 0.76, 1.0, 0.88), _dark(c, 0.25), _dark(c, 0.5))
    p.rect((0.0, 0.0, 1.0, 0.78), c, _dark(c, 0.5), radius=0.03)
    return _Drawn((0.03, 0.04, 0.97, 0.74), _light(c, 0.55))


def _shelf(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A bookcase frame: the contents sit on its bottom plank against the back."""
    p.rect((0.0, 0.0, 1.0, 1.0), c, _dark(c, 0.5))
    p.rect((0.0, 0.88, 1.0, 0.95), _dark(c, 0.2), _dark(c, 0.5))
    return _Drawn((0.05, 0.05, 0.95, 0.86), _light(c, 0.65))


def _seat(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A sofa or armchair: backrest, two arms and a cushion the contents lie on."""
    for x in (0.06, 0.9):
        p.rect((x, 0.9, x + 0.04, 1.0), _dark(c, 0.6))
    p.rect((0.04, 0.0, 0.96, 0.4), _dark(c, 0.1), _dark(c, 0.5), radius=0.08)
    for x in (0.0, 0.87):
        p.rect((x, 0.18, x + 0.13, 0.92), _dark(c, 0.2), _dark(c, 0.5), radius=0.06)
    p.rect((0.12, 0.22, 0.88, 0.92), c, _dark(c, 0.5), radius=0.05)
    return _Drawn((0.15, 0.26, 0.85, 0.88), _light(c, 0.6))


def _bed(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A bed: wooden headboard, mattress (where the contents lie) and the blanket's folded edge."""
    wood = (120, 80, 50)
    p.rect((0.02, 0.0, 0.98, 0.5), wood, _dark(wood), radius=0.06)
    for x in (0.04, 0.92):
        p.rect((x, 0.9, x + 0.04, 1.0), _dark(wood))
    p.rect((0.0, 0.14, 1.0, 0.92), (246, 244, 238), (150, 150, 150), radius=0.03)
    p.rect((0.0, 0.8, 1.0, 0.92), c, _dark(c), radius=0.02)
    return _Drawn((0.03, 0.17, 0.97, 0.78), (246, 244, 238))


def _door(p: _Pen, c: Color, face: Frac, hinge_left: bool, shelves: bool = False) -> None:
    """A door swung open towards the viewer: a quadrilateral in perspective, taller at its free edge."""
    x0, y0, x1, y1 = face
    hinge, free = (x0, x1) if hinge_left else (x1, x0)
    p.poly(((hinge, y0 + 0.04), (free, y0), (free, y1), (hinge, y1 - 0.04)), _dark(c, 0.1), _dark(c, 0.5))
    if shelves:  # a fridge door's racks
        for y in (0.3, 0.55, 0.8):
            p.line(((x0 + 0.01, y), (x1 - 0.01, y)), _dark(c, 0.25), 0.015)
    else:
        knob = free + (0.025 if hinge_left else -0.025) - 0.015
        p.ellipse((knob, 0.47, knob + 0.03, 0.53), (200, 200, 205), _dark(c, 0.6))


def _cavity(p: _Pen, c: Color, body: Frac) -> Frac:
    """The open inside of a box: dark side walls converging on a lit back panel (returned)."""
    x0, y0, x1, y1 = body
    mx, my = 0.06 * (x1 - x0), 0.07 * (y1 - y0)
    walls = _dark(c, 0.45)
    p.rect(body, walls)
    back = (x0 + mx, y0 + my, x1 - mx, y1 - my)
    for corner, inner in zip(((x0, y0), (x1, y0), (x1, y1), (x0, y1)), ((back[0], back[1]), (back[2], back[1]),
                                                                      (back[2], back[3]), (back[0], back[3]))):
        p.line((corner, inner), _dark(c, 0.6), 0.008)
    return back


def _box(variant: str) -> Callable[[_Pen, Color, bool, bool], _Drawn]:
    """Cabinets, drawers and safes: a shut front, or an open door and the inside."""

    def draw(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
        swings = door and variant != "drawer"
        body = (0.0, 0.0, 0.84, 1.0) if swings and is_open else (0.06, 0.0, 0.94, 1.0)
        p.rect(body, c, _dark(c, 0.5))
        x0, y0, x1, y1 = body
        if door and not is_open:
            face = (x0 + 0.03, y0 + 0.04, x1 - 0.03, y1 - 0.04)
            p.rect(face, _light(c, 0.12), _dark(c, 0.4), radius=0.02)
            sign = face
            if variant == "drawer":
                p.rect((0.4, 0.84, 0.6, 0.9), (200, 200, 205), _dark(c, 0.6), radius=0.3)
            elif variant == "safe":
                p.ellipse((0.74, 0.42, 0.86, 0.62), (190, 190, 196), (60, 60, 64))
                p.line(((0.8, 0.44), (0.8, 0.52)), (60, 60, 64), 0.012)
                sign = (face[0], face[1], 0.72, face[3])  # CLOSED is written left of the dial
            else:
                p.ellipse((0.84, 0.46, 0.88, 0.54), (200, 200, 205), _dark(c, 0.6))
            return _Drawn(sign, _light(c, 0.12))
        if variant == "drawer" and door:
            # pulled out: the tray seen from above, its front below it
            p.rect((x0, 0.8, x1, 1.0), _light(c, 0.12), _dark(c, 0.4))
            p.rect((0.4, 0.86, 0.6, 0.92), (200, 200, 205), _dark(c, 0.6), radius=0.3)
            return _Drawn(_cavity(p, c, (x0, y0, x1, 0.8)), _light(c, 0.6))
        back = _cavity(p, c, (x0 + 0.02, y0 + 0.03, x1 - 0.02, y1 - 0.03))
        if swings:
            _door(p, c, (0.85, 0.02, 1.0, 0.98), hinge_left=True)
        return _Drawn(back, _light(c, 0.65))

    return draw


def _fridge(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A white fridge: freezer and main doors with handles, or a lit inside and the open door."""
    grey = (150, 155, 160)
    if door and not is_open:
        p.rect((0.06, 0.0, 0.94, 1.0), c, grey, radius=0.03)
        p.line(((0.06, 0.3), (0.94, 0.3)), grey, 0.01)
        for y0, y1 in ((0.08, 0.24), (0.38, 0.7)):
            p.rect((0.12, y0, 0.15, y1), (175, 180, 186), radius=0.3)
        return _Drawn((0.2, 0.34, 0.88, 0.96), c)
    p.rect((0.0, 0.0, 0.84, 1.0), c, grey, radius=0.02)
    back = _cavity(p, (200, 212, 222), (0.03, 0.03, 0.81, 0.97))
    if door:
        _door(p, c, (0.85, 0.01, 1.0, 0.99), hinge_left=True, shelves=True)
    return _Drawn(back, (226, 240, 250))


def _microwave(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A microwave: a dark window and a control panel, or its warm-lit inside and the door."""
    body = (0.14, 0.04, 1.0, 0.96) if door and is_open else (0.02, 0.04, 0.98, 0.96)
    p.rect(body, c, _dark(c, 0.5), radius=0.03)
    panel_x = body[2] - 0.2
    p.rect((panel_x, 0.12, body[2] - 0.03, 0.24), (60, 190, 110))  # the clock display
    for i in range(3):
        for j in range(2):
            x, y = panel_x + 0.02 + j * 0.08, 0.34 + i * 0.14
            p.rect((x, y, x + 0.06, y + 0.08), _light(c, 0.3), radius=0.2)
    window = (body[0] + 0.03, 0.12, panel_x - 0.03, 0.88)
    if door and not is_open:
        p.rect(window, (34, 38, 44), _dark(c, 0.6), radius=0.03)
        p.line(((window[0] + 0.05, 0.3), (window[0] + 0.15, 0.2)), (90, 96, 104), 0.015)
        return _Drawn(window, (34, 38, 44))
    back = _cavity(p, (120, 110, 80), window)
    if door:
        _door(p, c, (0.0, 0.06, 0.13, 0.94), hinge_left=False)
    return _Drawn(back, (250, 238, 200))


def _basin(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A sink or bathtub set in a counter, with its faucet: the contents lie in the basin."""
    steel = (150, 160, 172)
    p.rect((0.0, 0.0, 1.0, 1.0), (208, 204, 196), (140, 136, 130), radius=0.03)
    p.rect((0.46, 0.03, 0.54, 0.1), steel)
    p.line(((0.5, 0.06), (0.5, 0.14)), steel, 0.05)
    p.rect((0.05, 0.14, 0.95, 0.96), _dark(c, 0.2), _dark(c, 0.5), radius=0.12)
    return _Drawn((0.1, 0.2, 0.9, 0.9), c)


def _stove(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A stove burner: a dark top, a glowing ring round the pan panel and a row of knobs."""
    p.rect((0.0, 0.0, 1.0, 1.0), c, _dark(c, 0.5), radius=0.03)
    p.ellipse((0.08, -0.02, 0.92, 0.86), None, (230, 90, 30), width=0.02)
    p.ellipse((0.14, 0.04, 0.86, 0.8), None, (90, 92, 98), width=0.015)
    for i in range(4):
        x = 0.2 + i * 0.18
        p.ellipse((x, 0.88, x + 0.06, 0.97), (200, 200, 205), (60, 60, 64))
    return _Drawn((0.22, 0.12, 0.78, 0.72), (214, 214, 218))


def _bin(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A garbage can or hamper: a tapered body under a rim; the contents show inside."""
    p.poly(((0.08, 0.06), (0.92, 0.06), (0.84, 1.0), (0.16, 1.0)), c, _dark(c, 0.5))
    p.rect((0.04, 0.0, 0.96, 0.08), _dark(c, 0.2), _dark(c, 0.5), radius=0.2)
    return _Drawn((0.16, 0.12, 0.84, 0.9), _light(c, 0.7))


def _toilet(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A toilet: the contents stand on the tank above the bowl."""
    grey = (150, 150, 155)
    p.poly(((0.4, 0.82), (0.6, 0.82), (0.57, 1.0), (0.43, 1.0)), c, grey)
    p.ellipse((0.26, 0.6, 0.74, 0.9), c, grey)
    p.ellipse((0.33, 0.63, 0.67, 0.8), (220, 232, 240), grey)
    p.rect((0.08, 0.0, 0.92, 0.62), c, grey, radius=0.04)
    return _Drawn((0.11, 0.04, 0.89, 0.58), c)


def _holder(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """A towel holder or paper hanger: a wall bar the contents hang from."""
    p.rect((0.08, 0.12, 0.92, 1.0), _light(c, 0.75), _light(c, 0.2))
    for x in (0.08, 0.88):
        p.rect((x, 0.0, x + 0.04, 0.1), _dark(c, 0.2))
    p.rect((0.06, 0.03, 0.94, 0.08), c, _dark(c, 0.4), radius=0.3)
    return _Drawn((0.1, 0.14, 0.9, 0.98), _light(c, 0.75))


def _crate(p: _Pen, c: Color, is_open: bool, door: bool) -> _Drawn:
    """Any other kind: a crate in the kind's colour with a light inside."""
    p.rect((0.02, 0.0, 0.98, 1.0), c, _dark(c, 0.5), radius=0.04)
    return _Drawn((0.07, 0.07, 0.93, 0.93), _light(c, 0.7))


_Archetype = Callable[[_Pen, Color, bool, bool], _Drawn]
_CABINET, _DRAWER, _SAFE = _box("cabinet"), _box("drawer"), _box("safe")
_OPENING = frozenset({_CABINET, _DRAWER, _SAFE, _fridge, _microwave})
"""Archetypes that draw a door; any other kind that opens is drawn as a cabinet."""
_RECEPTACLES: dict[str, tuple[_Archetype, Color]] = {
    "countertop": (_surface, (150, 150, 156)),
    "diningtable": (_surface, (160, 110, 70)),
    "desk": (_surface, (130, 92, 62)),
    "sidetable": (_surface, (170, 122, 80)),
    "coffeetable": (_surface, (140, 100, 70)),
    "dresser": (_surface, (152, 104, 72)),
    "tvstand": (_surface, (96, 96, 102)),
    "cart": (_surface, (120, 124, 130)),
    "shelf": (_shelf, (150, 110, 75)),
    "sofa": (_seat, (74, 104, 146)),
    "armchair": (_seat, (146, 84, 64)),
    "ottoman": (_seat, (120, 96, 140)),
    "bed": (_bed, (90, 120, 172)),
    "cabinet": (_CABINET, (176, 132, 86)),
    "drawer": (_DRAWER, (186, 142, 96)),
    "safe": (_SAFE, (110, 116, 122)),
    "fridge": (_fridge, (236, 239, 242)),
    "microwave": (_microwave, (72, 74, 80)),
    "sinkbasin": (_basin, (200, 208, 216)),
    "sink": (_basin, (200, 208, 216)),
    "bathtubbasin": (_basin, (238, 242, 246)),
    "bathtub": (_basin, (238, 242, 246)),
    "stoveburner": (_stove, (56, 58, 64)),
    "garbagecan": (_bin, (90, 112, 96)),
    "laundryhamper": (_bin, (172, 152, 112)),
    "toilet": (_toilet, (244, 244, 244)),
    "towelholder": (_holder, (176, 182, 188)),
    "handtowelholder": (_holder, (176, 182, 188)),
    "toiletpaperhanger": (_holder, (176, 182, 188)),
}


def _receptacle(kind: str, openable: bool) -> tuple[_Archetype, Color]:
    """The drawing and colour of a receptacle kind (a crate in a hashed colour when unknown)."""
    archetype, colour = _RECEPTACLES.get(kind, (_crate, _hashed(kind)))
    if openable and archetype not in _OPENING:
        archetype = _CABINET
    return archetype, colour


# --- objects -------------------------------------------------------------------------------------

_Icon = Callable[[_Pen, Color, bool], None]


def _fruit(leaf: Color) -> _Icon:
    def draw(p: _Pen, c: Color, on: bool) -> None:
        p.ellipse((0.14, 0.22, 0.86, 0.92), c, _dark(c))
        p.ellipse((0.3, 0.36, 0.42, 0.5), _light(c, 0.6))
        p.line(((0.5, 0.28), (0.55, 0.08)), (100, 70, 40), 0.06)
        p.ellipse((0.55, 0.06, 0.8, 0.2), leaf)

    return draw


def _oval(tall: bool) -> _Icon:
    def draw(p: _Pen, c: Color, on: bool) -> None:
        p.ellipse((0.24, 0.08, 0.76, 0.92) if tall else (0.06, 0.26, 0.94, 0.8), c, _dark(c))
        if not tall:  # a potato's eyes
            for x, y in ((0.3, 0.45), (0.55, 0.6), (0.7, 0.4)):
                p.ellipse((x, y, x + 0.05, y + 0.05), _dark(c, 0.4))

    return draw


def _lettuce(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.08, 0.12, 0.92, 0.92), c, _dark(c))
    p.ellipse((0.28, 0.3, 0.72, 0.74), _light(c, 0.35))
    for end in ((0.2, 0.3), (0.8, 0.3), (0.5, 0.12)):
        p.line(((0.5, 0.85), end), _light(c, 0.6), 0.03)


def _loaf(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.06, 0.36, 0.94, 0.84), c, _dark(c), radius=0.12)
    p.ellipse((0.06, 0.18, 0.94, 0.6), c, _dark(c))
    for x in (0.3, 0.5, 0.7):
        p.line(((x - 0.06, 0.3), (x + 0.06, 0.44)), _dark(c, 0.25), 0.03)


def _bowl(p: _Pen, c: Color, on: bool) -> None:
    p.chord((0.06, 0.05, 0.94, 0.9), 0, 180, c, _dark(c))
    p.ellipse((0.06, 0.38, 0.94, 0.56), _light(c, 0.4), _dark(c))


def _cup(p: _Pen, c: Color, on: bool) -> None:
    p.poly(((0.24, 0.18), (0.76, 0.18), (0.66, 0.9), (0.34, 0.9)), c, _dark(c))
    p.ellipse((0.24, 0.12, 0.76, 0.24), _light(c, 0.4), _dark(c))


def _mug(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.52, 0.34, 0.9, 0.74), None, _dark(c, 0.1), width=0.08)
    p.rect((0.14, 0.2, 0.68, 0.88), c, _dark(c), radius=0.1)


def _plate(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.04, 0.28, 0.96, 0.78), c, _dark(c, 0.3))
    p.ellipse((0.22, 0.38, 0.78, 0.68), None, _dark(c, 0.15), width=0.02)


def _pan(p: _Pen, c: Color, on: bool) -> None:
    p.line(((0.56, 0.52), (0.98, 0.34)), (60, 50, 45), 0.09)
    p.ellipse((0.02, 0.22, 0.64, 0.84), c, _dark(c, 0.5))
    p.ellipse((0.1, 0.3, 0.56, 0.76), _light(c, 0.15))


def _pot(p: _Pen, c: Color, on: bool) -> None:
    for x in (0.04, 0.84):
        p.rect((x, 0.42, x + 0.12, 0.5), _dark(c, 0.4))
    p.rect((0.14, 0.34, 0.86, 0.9), c, _dark(c, 0.5), radius=0.06)
    p.ellipse((0.12, 0.24, 0.88, 0.42), _light(c, 0.2), _dark(c, 0.5))
    p.rect((0.44, 0.18, 0.56, 0.26), _dark(c, 0.4))


def _kettle(p: _Pen, c: Color, on: bool) -> None:
    p.poly(((0.7, 0.6), (0.96, 0.34), (0.98, 0.4), (0.76, 0.76)), _dark(c, 0.15))
    p.ellipse((0.3, 0.1, 0.7, 0.5), None, _dark(c, 0.4), width=0.06)
    p.chord((0.12, 0.28, 0.84, 1.2), 180, 360, c, _dark(c, 0.5))
    p.rect((0.12, 0.72, 0.84, 0.92), c, _dark(c, 0.5))


def _utensil(head: str) -> _Icon:
    """Long thin tools lying diagonally: knife, fork, spoon, ladle, spatula."""

    def draw(p: _Pen, c: Color, on: bool) -> None:
        p.line(((0.1, 0.9), (0.44, 0.56)), _dark(c, 0.45), 0.1)
        if head == "blade":
            p.poly(((0.4, 0.56), (0.46, 0.5), (0.92, 0.06), (0.52, 0.62)), c, _dark(c))
        elif head == "fork":
            p.line(((0.4, 0.6), (0.66, 0.34)), c, 0.06)
            for dx, dy in ((-0.06, -0.06), (0.0, 0.0), (0.06, 0.06)):
                p.line(((0.62 + dx, 0.38 + dy), (0.9 + dx, 0.1 + dy)), c, 0.035)
        elif head == "flat":
            p.line(((0.4, 0.6), (0.62, 0.38)), c, 0.06)
            p.poly(((0.56, 0.3), (0.76, 0.1), (0.92, 0.26), (0.72, 0.46)), c, _dark(c))
        else:
            big = head == "ladle"
            p.line(((0.4, 0.6), (0.66 - 0.1 * big, 0.34 + 0.1 * big)), c, 0.06)
            p.ellipse((0.58 - 0.2 * big, 0.06, 0.94, 0.42 + 0.2 * big), c, _dark(c))

    return draw


def _bottle(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.42, 0.06, 0.58, 0.42), _dark(c, 0.2), _dark(c, 0.5))
    p.rect((0.28, 0.34, 0.72, 0.94), c, _dark(c, 0.5), radius=0.12)
    p.rect((0.34, 0.52, 0.66, 0.74), _light(c, 0.6))


def _spray(p: _Pen, c: Color, on: bool) -> None:
    p.poly(((0.34, 0.08), (0.72, 0.08), (0.72, 0.22), (0.5, 0.3)), _dark(c, 0.4))
    p.rect((0.3, 0.3, 0.7, 0.94), c, _dark(c, 0.5), radius=0.12)


def _shaker(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.3, 0.3, 0.7, 0.92), c, _dark(c, 0.5), radius=0.1)
    p.ellipse((0.3, 0.16, 0.7, 0.38), (190, 190, 196), (90, 90, 96))
    for x in (0.42, 0.5, 0.58):
        p.ellipse((x - 0.02, 0.24, x + 0.02, 0.28), (60, 60, 64))


def _candle(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.4, 0.08, 0.6, 0.32), (255, 170, 40))
    p.rect((0.34, 0.34, 0.66, 0.92), c, _dark(c, 0.3), radius=0.06)


def _book(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.2, 0.1, 0.86, 0.9), (250, 248, 240), (120, 120, 120))
    p.rect((0.16, 0.08, 0.8, 0.88), c, _dark(c))
    p.rect((0.16, 0.08, 0.26, 0.88), _dark(c, 0.3))


def _laptop(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.16, 0.12, 0.84, 0.62), c, _dark(c, 0.5), radius=0.04)
    p.rect((0.22, 0.18, 0.78, 0.56), (70, 110, 160))
    p.poly(((0.12, 0.64), (0.88, 0.64), (0.98, 0.8), (0.02, 0.8)), _light(c, 0.2), _dark(c, 0.5))


def _phone(buttons: bool) -> _Icon:
    def draw(p: _Pen, c: Color, on: bool) -> None:
        p.rect((0.32, 0.06, 0.68, 0.94), c, _dark(c, 0.5), radius=0.12)
        if buttons:
            for y in (0.2, 0.36, 0.52, 0.68):
                p.ellipse((0.43, y, 0.57, y + 0.1), (200, 60, 60) if y == 0.2 else (200, 200, 206))
        else:
            p.rect((0.36, 0.14, 0.64, 0.8), (80, 130, 190))

    return draw


def _credit_card(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.08, 0.26, 0.92, 0.74), c, _dark(c), radius=0.08)
    p.rect((0.08, 0.36, 0.92, 0.46), _dark(c, 0.5))
    p.rect((0.16, 0.54, 0.34, 0.66), (230, 200, 90))


def _disc(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.1, 0.1, 0.9, 0.9), c, _dark(c, 0.4))
    p.ellipse((0.26, 0.26, 0.74, 0.74), None, _light(c, 0.5), width=0.03)
    p.ellipse((0.42, 0.42, 0.58, 0.58), _WHITE, _dark(c, 0.4))


def _clock(band: bool) -> _Icon:
    def draw(p: _Pen, c: Color, on: bool) -> None:
        if band:
            p.rect((0.36, 0.0, 0.64, 1.0), _dark(c, 0.3))
        p.ellipse((0.14, 0.14, 0.86, 0.86) if not band else (0.22, 0.22, 0.78, 0.78), c, _dark(c, 0.5))
        p.ellipse((0.3, 0.3, 0.7, 0.7), _WHITE)
        p.line(((0.5, 0.5), (0.5, 0.34)), _INK, 0.04)
        p.line(((0.5, 0.5), (0.62, 0.52)), _INK, 0.04)

    return draw


def _stick(p: _Pen, c: Color, on: bool) -> None:
    p.line(((0.14, 0.86), (0.8, 0.2)), c, 0.11)
    p.poly(((0.76, 0.16), (0.84, 0.24), (0.94, 0.06)), (230, 210, 170))


def _roll(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.16, 0.3, 0.84, 0.86), c, _dark(c, 0.3))
    p.ellipse((0.16, 0.14, 0.84, 0.46), _light(c, 0.3), _dark(c, 0.3))
    p.ellipse((0.4, 0.24, 0.6, 0.36), (170, 140, 100))


def _cloth(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.1, 0.2, 0.9, 0.84), c, _dark(c), radius=0.04)
    p.line(((0.1, 0.5), (0.9, 0.5)), _dark(c, 0.25), 0.03)
    p.rect((0.1, 0.7, 0.9, 0.76), _light(c, 0.5))


def _block(top: Color | None) -> _Icon:
    """Boxes and bars: tissue box, soap bar, sponge, newspaper, statue base ..."""

    def draw(p: _Pen, c: Color, on: bool) -> None:
        if top is not None:
            p.ellipse((0.34, 0.12, 0.66, 0.42), top, (150, 150, 150))
        p.rect((0.1, 0.32, 0.9, 0.84), c, _dark(c), radius=0.08)

    return draw


def _sponge(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.1, 0.3, 0.9, 0.56), (60, 150, 70), _dark((60, 150, 70)), radius=0.06)
    p.rect((0.1, 0.52, 0.9, 0.8), c, _dark(c), radius=0.06)


def _newspaper(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.12, 0.12, 0.88, 0.88), c, _dark(c, 0.4))
    p.rect((0.2, 0.2, 0.8, 0.32), _dark(c, 0.55))
    for y in (0.44, 0.56, 0.68, 0.8):
        p.line(((0.2, y), (0.8, y)), _dark(c, 0.35), 0.03)


def _pillow(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.06, 0.22, 0.94, 0.82), c, _dark(c, 0.3), radius=0.2)
    p.line(((0.2, 0.52), (0.8, 0.52)), _light(c, 0.4), 0.02)


def _vase(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.2, 0.3, 0.8, 0.94), c, _dark(c))
    p.rect((0.38, 0.06, 0.62, 0.4), c, _dark(c))


def _statue(p: _Pen, c: Color, on: bool) -> None:
    p.rect((0.2, 0.82, 0.8, 0.96), _dark(c, 0.3))
    p.poly(((0.34, 0.36), (0.66, 0.36), (0.72, 0.82), (0.28, 0.82)), c, _dark(c))
    p.ellipse((0.36, 0.08, 0.64, 0.36), c, _dark(c))


def _keys(p: _Pen, c: Color, on: bool) -> None:
    p.ellipse((0.08, 0.08, 0.46, 0.46), None, (150, 150, 156), width=0.06)
    p.line(((0.4, 0.4), (0.86, 0.86)), c, 0.1)
    p.line(((0.7, 0.7), (0.8, 0.6)), c, 0.07)


def _lamp(tall: bool) -> _Icon:
    """Desk and floor lamps; a lamp that is on has a yellow shade and a halo."""

    def draw(p: _Pen, c: Color, on: bool) -> None:
        if on:
            p.ellipse((0.02, 0.0, 0.98, 0.7), (255, 240, 170))
        top = 0.06 if tall else 0.14
        p.ellipse((0.26, 0.86, 0.74, 0.98), _dark(c, 0.4))
        p.line(((0.5, 0.9), (0.5, top + 0.2)), _dark(c, 0.4), 0.05)
        shade = (255, 214, 40) if on else _light(c, 0.3)
        p.poly(((0.34, top), (0.66, top), (0.8, top + 0.3), (0.2, top + 0.3)), shade, _dark(c, 0.4))

    return draw


def _thing(p: _Pen, c: Color, on: bool) -> None:
    """Any object kind we do not know."""
    p.rect((0.14, 0.14, 0.86, 0.86), c, _dark(c), radius=0.18)
    p.rect((0.26, 0.26, 0.5, 0.42), _light(c, 0.5), radius=0.3)


_OBJECTS: dict[str, tuple[_Icon, Color]] = {
    "apple": (_fruit((70, 150, 50)), (206, 32, 36)),
    "tomato": (_fruit((40, 130, 40)), (236, 70, 40)),
    "potato": (_oval(False), (176, 132, 76)),
    "egg": (_oval(True), (246, 236, 212)),
    "lettuce": (_lettuce, (96, 176, 70)),
    "bread": (_loaf, (206, 150, 80)),
    "bowl": (_bowl, (220, 200, 160)),
    "cup": (_cup, (150, 200, 220)),
    "mug": (_mug, (90, 130, 200)),
    "plate": (_plate, (244, 244, 240)),
    "pan": (_pan, (70, 72, 78)),
    "pot": (_pot, (150, 156, 164)),
    "kettle": (_kettle, (190, 196, 204)),
    "winebottle": (_bottle, (40, 110, 60)),
    "glassbottle": (_bottle, (150, 200, 190)),
    "soapbottle": (_bottle, (226, 120, 180)),
    "spraybottle": (_spray, (70, 150, 220)),
    "butterknife": (_utensil("blade"), (200, 204, 210)),
    "knife": (_utensil("blade"), (176, 184, 194)),
    "fork": (_utensil("fork"), (176, 184, 194)),
    "spoon": (_utensil("spoon"), (176, 184, 194)),
    "ladle": (_utensil("ladle"), (160, 168, 178)),
    "spatula": (_utensil("flat"), (60, 60, 66)),
    "peppershaker": (_shaker, (60, 56, 52)),
    "saltshaker": (_shaker, (240, 240, 236)),
    "dishsponge": (_sponge, (240, 210, 60)),
    "cloth": (_cloth, (120, 180, 200)),
    "towel": (_cloth, (230, 120, 100)),
    "handtowel": (_cloth, (150, 110, 190)),
    "soapbar": (_block(None), (250, 190, 210)),
    "tissuebox": (_block((250, 250, 250)), (120, 170, 220)),
    "candle": (_candle, (240, 232, 214)),
    "toiletpaper": (_roll, (246, 246, 246)),
    "papertowelroll": (_roll, (240, 240, 234)),
    "alarmclock": (_clock(False), (214, 60, 50)),
    "watch": (_clock(True), (110, 90, 70)),
    "book": (_book, (40, 90, 160)),
    "cd": (_disc, (200, 204, 214)),
    "cellphone": (_phone(False), (40, 42, 48)),
    "remotecontrol": (_phone(True), (56, 58, 64)),
    "creditcard": (_credit_card, (40, 130, 110)),
    "keychain": (_keys, (200, 170, 60)),
    "laptop": (_laptop, (120, 124, 132)),
    "newspaper": (_newspaper, (224, 222, 214)),
    "pen": (_stick, (40, 70, 170)),
    "pencil": (_stick, (240, 190, 40)),
    "pillow": (_pillow, (236, 226, 200)),
    "statue": (_statue, (170, 160, 140)),
    "vase": (_vase, (70, 140, 150)),
    "desklamp": (_lamp(False), (90, 96, 104)),
    "floorlamp": (_lamp(True), (90, 96, 104)),
}


@functools.lru_cache(maxsize=1024)
def _icon(kind: str, on: bool, side: int, look: str = "default") -> Image.Image:
    """An RGBA icon of an object kind, ``side`` px square, drawn at 4x (2x when large) with ``look``'s pen."""
    scale = 4 if side < 64 else 2
    canvas = Image.new("RGBA", (side * scale, side * scale), (0, 0, 0, 0))
    icon, colour = _OBJECTS.get(kind, (_thing, _hashed(kind)))
    icon(_PENS[look](ImageDraw.Draw(canvas), (0, 0, side * scale, side * scale)), colour, on)
    return canvas.resize((side, side), Image.Resampling.BOX)


# --- cards, grids and strips ---------------------------------------------------------------------


def _freeze(image: Image.Image) -> NDArray[np.uint8]:
    """A cached RGB layer as a read-only array (callers copy or slice-assign it)."""
    array = np.array(image, dtype=np.uint8)
    array.flags.writeable = False
    return array


def _card(width: int, height: int, bg: Color) -> tuple[Image.Image, int]:
    """A blank rounded card on ``bg`` and its margin."""
    image = Image.new("RGB", (width, height), bg)
    m = max(1, height // 24)
    ImageDraw.Draw(image).rounded_rectangle((m, m, width - 1 - m, height - 1 - m), radius=max(2, height // 8),
                                            fill=_mix(bg, _WHITE, 0.6), outline=_mix(bg, _INK, 0.35))
    return image, m


@functools.lru_cache(maxsize=1024)
def _item_card(item: Item, width: int, height: int, px: int, icon: bool, bg: Color, look: str = "default") -> NDArray[np.uint8]:
    """An item as an opaque card on ``bg``: its icon (if ``icon``), state badges and name at ``px``.

    Without an icon (cards too small for a useful one) the badges fill the space above the name,
    and a name without badges sits in the middle.
    """
    image, m = _card(width, height, bg)
    left, right, top, bottom = 2 * m + 1, width - 2 * m - 1, 2 * m + 1, height - 2 * m - 1
    states = _states(item)
    label_h = min(round(px * _TEXT_HEIGHT) + 2, bottom - top)
    label_top = bottom - label_h if icon or states else top + (bottom - top - label_h) // 2
    _write(image, item.name, px, False, _INK, (left, label_top, right, label_top + label_h))
    bottom -= label_h + m
    if states:
        badge_h = min(max(6, min(round(0.22 * height), round(1.3 * px))), bottom - top)
        if not icon:
            badge_h = min(bottom - top, round(1.4 * px))
            bottom = top + (bottom - top + badge_h) // 2
        badge_px = _badge_px(states, _fit("M", True, 1e9, 0.78 * badge_h), right - left)
        x = left + max(0, (right - left - _badges_width(states, badge_px)) // 2)
        _badges(image, states, x, (bottom - badge_h, bottom), badge_px)
        bottom -= badge_h + m
    side = min(right - left, bottom - top)
    if icon and side >= 8:
        picture = _icon(item.kind, item.on, side, look)
        image.paste(picture, (left + (right - left - side) // 2, top + (bottom - top - side) // 2), picture)
    return _freeze(image)


@functools.lru_cache(maxsize=256)
def _more_card(count: int, width: int, height: int, bg: Color) -> NDArray[np.uint8]:
    """The card that stands for ``count`` things with no room of their own."""
    image, m = _card(width, height, bg)
    text = f"+{count} more"
    px = _fit(text, True, width - 4 * m - 2, 0.45 * height)
    _write(image, text, px, True, _INK, (2 * m + 1, 0, width - 2 * m - 1, height))
    return _freeze(image)


def _blit(frame: NDArray[np.uint8], tile: NDArray[np.uint8], x: int, y: int) -> None:
    """Copy ``tile`` into ``frame`` at ``(x, y)``, clipped to the frame."""
    height, width = frame.shape[:2]
    h, w = min(tile.shape[0], height - y), min(tile.shape[1], width - x)
    if h > 0 and w > 0:
        frame[y : y + h, x : x + w] = tile[:h, :w]


class _Grid(NamedTuple):
    """Cards in rows of ``columns``, each ``tile_w`` x ``tile_h``."""

    columns: int
    tile_w: int
    tile_h: int
    shown: int
    """How many items get a card; when fewer than all, one more card says "+N more"."""


@functools.lru_cache(maxsize=512)
def _grid(count: int, width: int, height: int, aspect: float, max_h: int, min_h: int) -> _Grid:
    """The grid of ``count`` cards in ``width`` x ``height`` px whose cards are largest.

    A card is at most ``aspect`` times as wide as tall and at most ``max_h`` tall. When even the
    best grid has cards under ``min_h``, it shows fewer items and a "+N more" card.
    """

    def best(cells: int) -> tuple[int, int]:
        """(size, columns) of the best grid: size is the card height if cards keep ``aspect``;
        ties go to the taller cells, then to fewer columns."""
        options = []
        for columns in range(1, cells + 1):
            cell_w, cell_h = width // columns, height // -(-cells // columns)
            options.append((int(min(cell_h, cell_w / aspect, max_h)), min(cell_h, max_h), -columns))
        size, _, columns = max(options)
        return size, -columns

    shown, cells = count, count
    size, columns = best(cells)
    while size < min_h and shown > 1:
        shown -= 1
        cells = shown + 1
        size, columns = best(cells)
    cell_w, cell_h = width // columns, height // -(-cells // columns)
    tile_h = min(cell_h, max_h, round(1.2 * cell_w))  # a narrow cell may hold a taller card
    return _Grid(columns, min(cell_w, round(aspect * tile_h)), tile_h, shown)


def _draw_items(frame: NDArray[np.uint8], items: tuple[Item, ...], box: Box, bg: Color, unit: int, look: str = "default") -> None:
    """The contents as cards in a grid centred in the panel ``box``.

    All names share one font size; the longest name, squeezed to 80% at most, sets it and the
    cards' shape, so a list of long names gets wider cards. When the cards would be too small for
    a useful icon, they drop it for a larger font.
    """
    width, height = box[2] - box[0], box[3] - box[1]
    max_h = max(8, round(0.3 * unit))
    widest = 0.8 * max(_width_per_px(item.name, False) for item in items)
    for icon in (True, False):
        ratio = (0.26 if icon else 0.36) / _TEXT_HEIGHT  # font size per pixel of card height
        aspect = min(2.6, max(1.15, 0.15 + ratio * widest))
        grid = _grid(len(items), width, height, aspect, max_h, math.ceil(_least_px(unit) / ratio))
        if grid.shown == len(items) and grid.tile_h >= max(24, 0.11 * unit):
            break
    if grid.tile_w < 8 or grid.tile_h < 8:
        return  # a panel too small to hold anything (a thumbnail-sized frame)
    margin = 4 * max(1, grid.tile_h // 24) + 2
    px = max(5, int(min(ratio * grid.tile_h, (grid.tile_w - margin) / widest, 0.06 * unit)))
    cards = [_item_card(item, grid.tile_w, grid.tile_h, px, icon, bg, look) for item in items[: grid.shown]]
    if grid.shown < len(items):
        cards.append(_more_card(len(items) - grid.shown, grid.tile_w, grid.tile_h, bg))
    rows = -(-len(cards) // grid.columns)
    x0 = box[0] + (width - grid.columns * grid.tile_w) // 2
    y0 = box[1] + (height - rows * grid.tile_h) // 2
    for i, card in enumerate(cards):
        _blit(frame, card, x0 + i % grid.columns * grid.tile_w, y0 + i // grid.columns * grid.tile_h)


class _Layout(NamedTuple):
    header: int
    """Height of the header bar."""
    strip: int
    """Height of the holding strip."""
    unit: int
    """The frame's short side, which fonts and cards scale with."""


def _layout(height: int, width: int) -> _Layout:
    """Heights of the header and the holding strip; ``unit`` sets the scale of everything else."""
    short = min(height, round(1.25 * width))
    return _Layout(max(9, round(0.1 * short)), max(10, round(0.13 * short)), min(height, width))


@functools.lru_cache(maxsize=256)
def _header(titles: tuple[str, ...], tags: tuple[tuple[str, Color], ...], width: int, height: int) -> NDArray[np.uint8]:
    """The dark top bar: a title on the left, tags (room, open/closed, lamp) on the right.

    The title is the first of ``titles`` that fits at 80% of the bar's font size, else the last.
    """
    image = Image.new("RGB", (width, height), _HEADER)
    pad = max(2, height // 5)
    px = _fit("Ag", True, 1e9, 0.42 * height)
    x = width - pad
    for text, fill in reversed(tags):
        w = _pill_width(text, px)
        if x - w < width // 3:
            break  # the title needs the room more than a tag does
        x -= w
        _pill(image, text, px, fill, _ink_on(fill), x, (pad, height - pad))
        x -= pad
    full = _fit("Ag", True, 1e9, 0.62 * height)
    title = next((t for t in titles if _fit(t, True, x - 2 * pad, 0.62 * height) >= 0.8 * full), titles[-1])
    _write(image, title, _fit(title, True, x - 2 * pad, 0.62 * height), True, _WHITE, (pad, 0, x - pad, height),
           centre=False)
    return _freeze(image)


def _tags(view: View) -> tuple[tuple[str, Color], ...]:
    """The header's tags: the room, whether the receptacle is open, and a lit lamp."""
    tags = [(view.room, _ROOM_TAG)] if view.room else []
    if view.place is not None and view.openable:
        tags.append(("OPEN", _OPEN_TAG) if view.is_open else ("CLOSED", _CLOSED_TAG))
    if view.place is not None and view.lit:
        tags.append(("LAMP ON", _LAMP_TAG))
    return tuple(tags)


@functools.lru_cache(maxsize=64)
def _holding(item: Item | None, width: int, height: int, look: str = "default") -> NDArray[np.uint8]:
    """The bottom strip: "Holding:", then the item's icon, name and badges, or "nothing"."""
    image = Image.new("RGB", (width, height), _STRIP)
    ImageDraw.Draw(image).rectangle((0, 0, width - 1, max(0, height // 16)), fill=(196, 186, 160))
    pad = max(2, height // 6)
    px = _fit("Ag", True, 1e9, 0.46 * height)
    x = pad + _write(image, "Holding:", px, True, _INK, (pad, 0, width - pad, height), centre=False) + pad
    if item is None:
        _write(image, "nothing", px, False, (110, 110, 116), (x, 0, width - pad, height), centre=False)
        return _freeze(image)
    side = height - 2 * pad
    if side >= 6 and x + side < width // 2:
        icon = _icon(item.kind, item.on, side, look)
        image.paste(icon, (x, pad), icon)
        x += side + pad
    states = _states(item)
    room = width - pad - x
    badge_px = _badge_px(states, px, room // 2)
    badges_w = _badges_width(states, badge_px) + pad if states else 0
    name_px = min(px, _fit(item.name, True, room - badges_w, 0.46 * height))  # smaller rather than squeezed
    x += _write(image, item.name, name_px, True, _INK, (x, 0, x + room - badges_w, height), centre=False) + pad
    _badges(image, states, x, (pad + height // 10, height - pad - height // 10), badge_px)
    return _freeze(image)


def _scene_background(image: Image.Image, box: Box, room: str, lit: bool) -> None:
    """Wall and floor in the room's colour, with a lamp's warm glow when lit."""
    left, top, right, bottom = box
    wall = _WALLS.get(room, _WALL)
    draw = ImageDraw.Draw(image)
    draw.rectangle((left, top, right - 1, bottom - 1), fill=wall)
    floor = top + round(0.88 * (bottom - top))
    draw.rectangle((left, floor, right - 1, bottom - 1), fill=_dark(wall, 0.12))
    if lit:  # the glow reaches above the scene; the header is pasted over it
        cx, w, h = (left + right) / 2, right - left, bottom - top
        for i in range(10, 0, -1):  # nested ellipses, warmer towards the lamp
            r = i / 10
            draw.ellipse((cx - 0.6 * w * r, top - 0.5 * h * r, cx + 0.6 * w * r, top + 0.9 * h * r),
                         fill=_mix(wall, _GLOW, 1 - 0.8 * r))


class _Scene(NamedTuple):
    frame: NDArray[np.uint8]
    panel: Box | None
    """Where the contents go; ``None`` when the receptacle is closed."""
    colour: Color
    """The panel's colour, which the cards are drawn on."""


@functools.lru_cache(maxsize=64)  # whole frames: ~0.3 MB each at 300 x 300
def _scene(kind: str, openable: bool, is_open: bool, lit: bool, room: str, empty: bool, height: int,
           width: int, look: str = "default") -> _Scene:
    """The frame at a kind of receptacle without header, contents or holding strip, and where
    contents go. It does not depend on the place's name, so cabinet 1 to cabinet 20 share it."""
    lay = _layout(height, width)
    image = Image.new("RGB", (width, height), _STRIP)
    scene = (0, lay.header, width, height - lay.strip)
    _scene_background(image, scene, room, lit)
    # The receptacle stands on the floor, filling the scene less a margin. It is drawn at 2x over
    # the background (opaque RGB, so the downsampling needs no alpha maths).
    sh = scene[3] - scene[1]
    mx = max(2, round(0.04 * width))
    body = (mx, scene[1] + max(2, round(0.05 * sh)), width - mx, scene[3] - max(1, round(0.02 * sh)))
    bw, bh = body[2] - body[0], body[3] - body[1]
    layer = image.crop(body).resize((2 * bw, 2 * bh), Image.Resampling.NEAREST)
    archetype, colour = _receptacle(kind, openable)
    drawn = archetype(_PENS[look](ImageDraw.Draw(layer), (0, 0, 2 * bw, 2 * bh)), colour, is_open, openable)
    image.paste(layer.reduce(2), body[:2])
    f = drawn.box
    inner = (math.ceil(body[0] + f[0] * bw), math.ceil(body[1] + f[1] * bh),
             math.floor(body[0] + f[2] * bw), math.floor(body[1] + f[3] * bh))
    if openable and not is_open:
        px = _fit("CLOSED", True, 0.8 * (inner[2] - inner[0]), min(0.3 * (inner[3] - inner[1]), 0.12 * lay.unit))
        ink = _ink_on(drawn.colour) if look == "default" else _INK  # line art leaves the door unfilled: on the wall
        _write(image, "CLOSED", px, True, ink, inner)
        return _Scene(_freeze(image), None, drawn.colour)
    draw = ImageDraw.Draw(image)
    edge = max(1, round(0.006 * lay.unit))
    draw.rounded_rectangle((inner[0], inner[1], inner[2] - 1, inner[3] - 1), radius=max(1, 3 * edge),
                           fill=drawn.colour, outline=_mix(drawn.colour, _INK, 0.3), width=edge)
    panel = (inner[0] + edge + 1, inner[1] + edge + 1, inner[2] - edge - 1, inner[3] - edge - 1)
    if empty:
        px = _fit("(empty)", False, 0.6 * (panel[2] - panel[0]), min(0.3 * (panel[3] - panel[1]), 0.08 * lay.unit))
        _write(image, "(empty)", px, False, _mix(drawn.colour, _INK, 0.6), panel)
    return _Scene(_freeze(image), panel, drawn.colour)


def _tile_frame(height: int, thumb: bool) -> tuple[int, int]:
    """Pixels an overview tile adds left and right of its name: margins and thumbnail or stripe."""
    m = max(1, height // 14)
    return 3 * m + (height - 4 * m + m if thumb else max(2, height // 8) + m), 3 * m


@functools.lru_cache(maxsize=512)
def _receptacle_tile(name: str, width: int, height: int, px: int, thumb: bool, bg: Color, look: str = "default") -> NDArray[np.uint8]:
    """An overview tile: the name on a card tinted by kind, after a thumbnail or a kind-coloured stripe."""
    image = Image.new("RGB", (width, height), bg)
    archetype, colour = _receptacle(_kind_of(name), False)
    m = max(1, height // 14)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((m, m, width - 1 - m, height - 1 - m), radius=max(2, height // 6),
                           fill=_light(colour, 0.72), outline=_dark(colour, 0.2), width=max(1, height // 24))
    if thumb:
        # the receptacle drawn as in its scene, shut, in a square
        side = height - 4 * m
        canvas = Image.new("RGBA", (side * 4, side * 4), (0, 0, 0, 0))
        archetype(_PENS[look](ImageDraw.Draw(canvas), (0, 0, side * 4, side * 4)), colour, False, True)
        canvas = canvas.resize((side, side), Image.Resampling.BOX)
        image.paste(canvas, (3 * m, 2 * m), canvas)
    else:
        draw.rectangle((3 * m, 3 * m, 3 * m + max(2, height // 8) - 1, height - 1 - 3 * m), fill=_dark(colour, 0.1))
    lead, tail = _tile_frame(height, thumb)
    _write(image, name, px, False, _INK, (lead, 0, width - tail, height))
    return _freeze(image)


class _Flow(NamedTuple):
    """Overview tiles set like words in lines: each as wide as its name needs."""

    px: int
    tile_h: int
    gap: int
    thumb: bool
    rows: tuple[tuple[int, ...], ...]
    """Tile widths, line by line; the last tile is "+N more" when ``shown`` is short."""
    shown: int


@functools.lru_cache(maxsize=64)
def _flow(names: tuple[str, ...], width: int, height: int, unit: int) -> _Flow:
    """The largest font at which every name fits ``width`` x ``height``, set in lines.

    When even the smallest legible font overflows, the last tiles give way to "+N more".
    """
    biggest, least = max(5, round(0.06 * unit)), _least_px(unit)

    def pack(shown: int, px: int) -> _Flow | None:
        tile_h = round(px * _TEXT_HEIGHT / 0.6)  # the name fills 60% of the tile's height
        gap, thumb = max(1, tile_h // 10), tile_h >= 20
        lead, tail = _tile_frame(tile_h, thumb)
        widths = [math.ceil(_width_per_px(name, False) * px) + lead + tail for name in names[:shown]]
        if shown < len(names):
            widths.append(math.ceil(_width_per_px(f"+{len(names) - shown} more", True) * px) + 4 * tail)
        rows: list[list[int]] = [[]]
        used = 0
        for w in widths:
            w = min(w, width)  # a name wider than the frame is squeezed
            if rows[-1] and used + gap + w > width:
                rows.append([])
                used = 0
            used += (gap if rows[-1] else 0) + w
            rows[-1].append(w)
        if len(rows) * (tile_h + gap) - gap > height:
            return None
        return _Flow(px, tile_h, gap, thumb, tuple(tuple(row) for row in rows), shown)

    for px in range(biggest, least - 1, -1):
        if flow := pack(len(names), px):
            return flow
    for shown in range(len(names) - 1, 0, -1):
        if flow := pack(shown, least):
            return flow
    return pack(0, least) or _Flow(least, min(height, round(least * _TEXT_HEIGHT / 0.6)), 1, False,
                                   ((width,),), 0)


@functools.lru_cache(maxsize=16)
def _overview(receptacles: tuple[str, ...], room: str, height: int, width: int, look: str = "default") -> NDArray[np.uint8]:
    """The frame in the middle of the room without header and holding strip: every receptacle as a tile."""
    lay = _layout(height, width)
    image = Image.new("RGB", (width, height), _STRIP)
    scene = (0, lay.header, width, height - lay.strip)
    _scene_background(image, scene, room, False)
    frame = np.array(image, dtype=np.uint8)
    pad = max(2, round(0.03 * lay.unit))
    box = (pad, scene[1] + pad, width - pad, scene[3] - pad)
    if receptacles:
        flow = _flow(receptacles, box[2] - box[0], box[3] - box[1], lay.unit)
        wall = _WALLS.get(room, _WALL)
        names = iter(receptacles[: flow.shown])
        y = box[1] + (box[3] - box[1] - len(flow.rows) * (flow.tile_h + flow.gap) + flow.gap) // 2
        for row in flow.rows:
            x = box[0] + (box[2] - box[0] - sum(row) - flow.gap * (len(row) - 1)) // 2
            for w in row:
                name = next(names, None)
                if name is None:
                    tile = _more_card(len(receptacles) - flow.shown, w, flow.tile_h, wall)
                else:
                    tile = _receptacle_tile(name, w, flow.tile_h, flow.px, flow.thumb, wall, look)
                _blit(frame, tile, max(0, x), max(0, y))
                x += w + flow.gap
            y += flow.tile_h + flow.gap
    frame.flags.writeable = False
    return frame


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    try:
        height, width = (int(v) for v in size)
        valid = all(int(v) == v for v in size) and min(height, width) >= _MIN_SIDE
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(f"size must be a (height, width) pair of integers >= {_MIN_SIDE}; got {size!r}")
    return height, width


def render(view: View, size: tuple[int, int], look: str = "default") -> NDArray[np.uint8]:
    """Draw the view as ``uint8[H, W, 3]`` with ``(H, W) = size``; see the module docstring.

    Args:
        view: What the agent sees.
        size: ``(height, width)`` in pixels, each at least 16 (64 and up is legible).
        look: One of :data:`LOOKS`. ``held-out`` draws the receptacles and objects as line art
            (:class:`_LinePen`) and turns every colour of the frame 150 degrees round the hue
            circle at equal luma: the same layout, words and facts in a style and palette that
            training never shows.

    Returns:
        A fresh, writable array the caller owns.

    Raises:
        ValueError: If ``size`` is not a pair of integers >= 16, or ``look`` is unknown.
    """
    height, width = _check_size(size)
    if look not in _PENS:
        raise ValueError(f"look={look!r} is unknown; choose one of {LOOKS}")
    lay = _layout(height, width)
    if view.place is None:
        frame = _overview(tuple(view.receptacles), view.room, height, width, look).copy()
        titles: tuple[str, ...] = ("Middle of the room",)
    else:
        shut = view.openable and not view.is_open
        contents = () if shut else view.contents  # a closed receptacle hides what is in it
        scene = _scene(view.kind or _kind_of(view.place), view.openable, view.is_open, view.lit, view.room,
                       not contents, height, width, look)
        frame = scene.frame.copy()
        if contents and scene.panel is not None:
            _draw_items(frame, contents, scene.panel, scene.colour, lay.unit, look)
        titles = (f"At: {view.place}", view.place)
    frame[: lay.header] = _header(titles, _tags(view), width, lay.header)
    frame[height - lay.strip :] = _holding(view.holding, width, lay.strip, look)
    return _held_out_palette(frame) if look == "held-out" else frame
