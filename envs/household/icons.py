"""The household's icon library: drawings of receptacles and objects, in two looks.

Every drawing is a recipe of shapes placed in fractions of its box (a :class:`Pen` draws them), so
one recipe serves every size:

* a **receptacle** is drawn by its archetype (table, seat, bed, cabinet, drawer, safe, fridge,
  microwave, basin, stove, bin, toilet, holder, or a generic crate for kinds we do not know), open
  or shut; the drawing says where its contents go (:class:`Drawn`): :func:`receptacle_drawing`;
* an **object** is an icon by kind (a lamp shows whether it is on), drawn at 2-4x and
  box-downsampled for anti-aliasing: :func:`object_icon`.

Looks (:data:`LOOKS`, the env's ``appearance``): ``default`` draws flat filled shapes; ``held-out``
draws the same recipes as line art (:class:`LinePen`: strokes in a darker shade of the fill, twice as
thick, nothing filled), a style no training frame shows. The renderer
(:mod:`~rl4vlm_gym.envs.household.renderer`) places the drawings in the frame; colours of unknown
kinds come from :func:`~rl4vlm_gym.envs.household.palette.hashed`, the same in every process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

from PIL import Image, ImageDraw

from rl4vlm_gym.envs.household.palette import INK, WHITE, Color, dark, hashed, light, luma

__all__ = ["LOOKS", "PENS", "Archetype", "Drawn", "Frac", "LinePen", "Pen", "object_icon", "receptacle_drawing"]

Frac = tuple[float, float, float, float]
"""A box in fractions of a drawing's box: ``(0, 0, 1, 1)`` is the whole box."""


# --- drawing in fractions of a box ---------------------------------------------------------------


class Pen:
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


class LinePen(Pen):
    """The held-out icon set: every drawing as line art. Shapes are strokes in a darker shade of
    their fill colour, twice as thick as the default outlines, and nothing is filled, so the same
    recipes give drawings of another style (a sketch instead of flat shapes) that training never shows."""

    def _stroke(self, fill: Color | None, outline: Color | None) -> Color:
        colour = fill if fill is not None else outline if outline is not None else INK
        return dark(colour, 0.45) if luma(colour) > 90 else colour

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


PENS: dict[str, type[Pen]] = {"default": Pen, "held-out": LinePen}
LOOKS = tuple(PENS)
"""The household's ``APPEARANCES``: ``default`` (flat shapes in the training palette) and
``held-out`` (line-art drawings, and every colour turned round the hue circle: see
:func:`~rl4vlm_gym.envs.household.renderer.render`)."""


# --- receptacles ---------------------------------------------------------------------------------


class Drawn(NamedTuple):
    """Where a receptacle drawing puts its contents (or, when closed, its CLOSED sign)."""

    box: Frac
    colour: Color


def _surface(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A table or counter seen from the front and a little above: top, front edge, legs."""
    for x in (0.05, 0.9):
        p.rect((x, 0.86, x + 0.05, 1.0), dark(c, 0.45))
    p.rect((0.0, 0.76, 1.0, 0.88), dark(c, 0.25), dark(c, 0.5))
    p.rect((0.0, 0.0, 1.0, 0.78), c, dark(c, 0.5), radius=0.03)
    return Drawn((0.03, 0.04, 0.97, 0.74), light(c, 0.55))


def _shelf(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A bookcase frame: the contents sit on its bottom plank against the back."""
    p.rect((0.0, 0.0, 1.0, 1.0), c, dark(c, 0.5))
    p.rect((0.0, 0.88, 1.0, 0.95), dark(c, 0.2), dark(c, 0.5))
    return Drawn((0.05, 0.05, 0.95, 0.86), light(c, 0.65))


def _seat(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A sofa or armchair: backrest, two arms and a cushion the contents lie on."""
    for x in (0.06, 0.9):
        p.rect((x, 0.9, x + 0.04, 1.0), dark(c, 0.6))
    p.rect((0.04, 0.0, 0.96, 0.4), dark(c, 0.1), dark(c, 0.5), radius=0.08)
    for x in (0.0, 0.87):
        p.rect((x, 0.18, x + 0.13, 0.92), dark(c, 0.2), dark(c, 0.5), radius=0.06)
    p.rect((0.12, 0.22, 0.88, 0.92), c, dark(c, 0.5), radius=0.05)
    return Drawn((0.15, 0.26, 0.85, 0.88), light(c, 0.6))


def _bed(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A bed: wooden headboard, mattress (where the contents lie) and the blanket's folded edge."""
    wood = (120, 80, 50)
    p.rect((0.02, 0.0, 0.98, 0.5), wood, dark(wood), radius=0.06)
    for x in (0.04, 0.92):
        p.rect((x, 0.9, x + 0.04, 1.0), dark(wood))
    p.rect((0.0, 0.14, 1.0, 0.92), (246, 244, 238), (150, 150, 150), radius=0.03)
    p.rect((0.0, 0.8, 1.0, 0.92), c, dark(c), radius=0.02)
    return Drawn((0.03, 0.17, 0.97, 0.78), (246, 244, 238))


def _door(p: Pen, c: Color, face: Frac, hinge_left: bool, shelves: bool = False) -> None:
    """A door swung open towards the viewer: a quadrilateral in perspective, taller at its free edge."""
    x0, y0, x1, y1 = face
    hinge, free = (x0, x1) if hinge_left else (x1, x0)
    p.poly(((hinge, y0 + 0.04), (free, y0), (free, y1), (hinge, y1 - 0.04)), dark(c, 0.1), dark(c, 0.5))
    if shelves:  # a fridge door's racks
        for y in (0.3, 0.55, 0.8):
            p.line(((x0 + 0.01, y), (x1 - 0.01, y)), dark(c, 0.25), 0.015)
    else:
        knob = free + (0.025 if hinge_left else -0.025) - 0.015
        p.ellipse((knob, 0.47, knob + 0.03, 0.53), (200, 200, 205), dark(c, 0.6))


def _cavity(p: Pen, c: Color, body: Frac) -> Frac:
    """The open inside of a box: dark side walls converging on a lit back panel (returned)."""
    x0, y0, x1, y1 = body
    mx, my = 0.06 * (x1 - x0), 0.07 * (y1 - y0)
    walls = dark(c, 0.45)
    p.rect(body, walls)
    back = (x0 + mx, y0 + my, x1 - mx, y1 - my)
    for corner, inner in zip(((x0, y0), (x1, y0), (x1, y1), (x0, y1)), ((back[0], back[1]), (back[2], back[1]),
                                                                      (back[2], back[3]), (back[0], back[3]))):
        p.line((corner, inner), dark(c, 0.6), 0.008)
    return back


def _box(variant: str) -> Callable[[Pen, Color, bool, bool], Drawn]:
    """Cabinets, drawers and safes: a shut front, or an open door and the inside."""

    def draw(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
        swings = door and variant != "drawer"
        body = (0.0, 0.0, 0.84, 1.0) if swings and is_open else (0.06, 0.0, 0.94, 1.0)
        p.rect(body, c, dark(c, 0.5))
        x0, y0, x1, y1 = body
        if door and not is_open:
            face = (x0 + 0.03, y0 + 0.04, x1 - 0.03, y1 - 0.04)
            p.rect(face, light(c, 0.12), dark(c, 0.4), radius=0.02)
            sign = face
            if variant == "drawer":
                p.rect((0.4, 0.84, 0.6, 0.9), (200, 200, 205), dark(c, 0.6), radius=0.3)
            elif variant == "safe":
                p.ellipse((0.74, 0.42, 0.86, 0.62), (190, 190, 196), (60, 60, 64))
                p.line(((0.8, 0.44), (0.8, 0.52)), (60, 60, 64), 0.012)
                sign = (face[0], face[1], 0.72, face[3])  # CLOSED is written left of the dial
            else:
                p.ellipse((0.84, 0.46, 0.88, 0.54), (200, 200, 205), dark(c, 0.6))
            return Drawn(sign, light(c, 0.12))
        if variant == "drawer" and door:
            # pulled out: the tray seen from above, its front below it
            p.rect((x0, 0.8, x1, 1.0), light(c, 0.12), dark(c, 0.4))
            p.rect((0.4, 0.86, 0.6, 0.92), (200, 200, 205), dark(c, 0.6), radius=0.3)
            return Drawn(_cavity(p, c, (x0, y0, x1, 0.8)), light(c, 0.6))
        back = _cavity(p, c, (x0 + 0.02, y0 + 0.03, x1 - 0.02, y1 - 0.03))
        if swings:
            _door(p, c, (0.85, 0.02, 1.0, 0.98), hinge_left=True)
        return Drawn(back, light(c, 0.65))

    return draw


def _fridge(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A white fridge: freezer and main doors with handles, or a lit inside and the open door."""
    grey = (150, 155, 160)
    if door and not is_open:
        p.rect((0.06, 0.0, 0.94, 1.0), c, grey, radius=0.03)
        p.line(((0.06, 0.3), (0.94, 0.3)), grey, 0.01)
        for y0, y1 in ((0.08, 0.24), (0.38, 0.7)):
            p.rect((0.12, y0, 0.15, y1), (175, 180, 186), radius=0.3)
        return Drawn((0.2, 0.34, 0.88, 0.96), c)
    p.rect((0.0, 0.0, 0.84, 1.0), c, grey, radius=0.02)
    back = _cavity(p, (200, 212, 222), (0.03, 0.03, 0.81, 0.97))
    if door:
        _door(p, c, (0.85, 0.01, 1.0, 0.99), hinge_left=True, shelves=True)
    return Drawn(back, (226, 240, 250))


def _microwave(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A microwave: a dark window and a control panel, or its warm-lit inside and the door."""
    body = (0.14, 0.04, 1.0, 0.96) if door and is_open else (0.02, 0.04, 0.98, 0.96)
    p.rect(body, c, dark(c, 0.5), radius=0.03)
    panel_x = body[2] - 0.2
    p.rect((panel_x, 0.12, body[2] - 0.03, 0.24), (60, 190, 110))  # the clock display
    for i in range(3):
        for j in range(2):
            x, y = panel_x + 0.02 + j * 0.08, 0.34 + i * 0.14
            p.rect((x, y, x + 0.06, y + 0.08), light(c, 0.3), radius=0.2)
    window = (body[0] + 0.03, 0.12, panel_x - 0.03, 0.88)
    if door and not is_open:
        p.rect(window, (34, 38, 44), dark(c, 0.6), radius=0.03)
        p.line(((window[0] + 0.05, 0.3), (window[0] + 0.15, 0.2)), (90, 96, 104), 0.015)
        return Drawn(window, (34, 38, 44))
    back = _cavity(p, (120, 110, 80), window)
    if door:
        _door(p, c, (0.0, 0.06, 0.13, 0.94), hinge_left=False)
    return Drawn(back, (250, 238, 200))


def _basin(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A sink or bathtub set in a counter, with its faucet: the contents lie in the basin."""
    steel = (150, 160, 172)
    p.rect((0.0, 0.0, 1.0, 1.0), (208, 204, 196), (140, 136, 130), radius=0.03)
    p.rect((0.46, 0.03, 0.54, 0.1), steel)
    p.line(((0.5, 0.06), (0.5, 0.14)), steel, 0.05)
    p.rect((0.05, 0.14, 0.95, 0.96), dark(c, 0.2), dark(c, 0.5), radius=0.12)
    return Drawn((0.1, 0.2, 0.9, 0.9), c)


def _stove(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A stove burner: a dark top, a glowing ring round the pan panel and a row of knobs."""
    p.rect((0.0, 0.0, 1.0, 1.0), c, dark(c, 0.5), radius=0.03)
    p.ellipse((0.08, -0.02, 0.92, 0.86), None, (230, 90, 30), width=0.02)
    p.ellipse((0.14, 0.04, 0.86, 0.8), None, (90, 92, 98), width=0.015)
    for i in range(4):
        x = 0.2 + i * 0.18
        p.ellipse((x, 0.88, x + 0.06, 0.97), (200, 200, 205), (60, 60, 64))
    return Drawn((0.22, 0.12, 0.78, 0.72), (214, 214, 218))


def _bin(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A garbage can or hamper: a tapered body under a rim; the contents show inside."""
    p.poly(((0.08, 0.06), (0.92, 0.06), (0.84, 1.0), (0.16, 1.0)), c, dark(c, 0.5))
    p.rect((0.04, 0.0, 0.96, 0.08), dark(c, 0.2), dark(c, 0.5), radius=0.2)
    return Drawn((0.16, 0.12, 0.84, 0.9), light(c, 0.7))


def _toilet(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A toilet: the contents stand on the tank above the bowl."""
    grey = (150, 150, 155)
    p.poly(((0.4, 0.82), (0.6, 0.82), (0.57, 1.0), (0.43, 1.0)), c, grey)
    p.ellipse((0.26, 0.6, 0.74, 0.9), c, grey)
    p.ellipse((0.33, 0.63, 0.67, 0.8), (220, 232, 240), grey)
    p.rect((0.08, 0.0, 0.92, 0.62), c, grey, radius=0.04)
    return Drawn((0.11, 0.04, 0.89, 0.58), c)


def _holder(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """A towel holder or paper hanger: a wall bar the contents hang from."""
    p.rect((0.08, 0.12, 0.92, 1.0), light(c, 0.75), light(c, 0.2))
    for x in (0.08, 0.88):
        p.rect((x, 0.0, x + 0.04, 0.1), dark(c, 0.2))
    p.rect((0.06, 0.03, 0.94, 0.08), c, dark(c, 0.4), radius=0.3)
    return Drawn((0.1, 0.14, 0.9, 0.98), light(c, 0.75))


def _crate(p: Pen, c: Color, is_open: bool, door: bool) -> Drawn:
    """Any other kind: a crate in the kind's colour with a light inside."""
    p.rect((0.02, 0.0, 0.98, 1.0), c, dark(c, 0.5), radius=0.04)
    return Drawn((0.07, 0.07, 0.93, 0.93), light(c, 0.7))


Archetype = Callable[[Pen, Color, bool, bool], Drawn]
"""A receptacle's drawing: ``(pen, colour, is_open, door) -> Drawn``."""
_CABINET, _DRAWER, _SAFE = _box("cabinet"), _box("drawer"), _box("safe")
_OPENING = frozenset({_CABINET, _DRAWER, _SAFE, _fridge, _microwave})
"""Archetypes that draw a door; any other kind that opens is drawn as a cabinet."""
_RECEPTACLES: dict[str, tuple[Archetype, Color]] = {
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


def receptacle_drawing(kind: str, openable: bool) -> tuple[Archetype, Color]:
    """The drawing and colour of a receptacle kind (a crate in a hashed colour when unknown)."""
    archetype, colour = _RECEPTACLES.get(kind, (_crate, hashed(kind)))
    if openable and archetype not in _OPENING:
        archetype = _CABINET
    return archetype, colour


# --- objects -------------------------------------------------------------------------------------

_Icon = Callable[[Pen, Color, bool], None]


def _fruit(leaf: Color) -> _Icon:
    def draw(p: Pen, c: Color, on: bool) -> None:
        p.ellipse((0.14, 0.22, 0.86, 0.92), c, dark(c))
        p.ellipse((0.3, 0.36, 0.42, 0.5), light(c, 0.6))
        p.line(((0.5, 0.28), (0.55, 0.08)), (100, 70, 40), 0.06)
        p.ellipse((0.55, 0.06, 0.8, 0.2), leaf)

    return draw


def _oval(tall: bool) -> _Icon:
    def draw(p: Pen, c: Color, on: bool) -> None:
        p.ellipse((0.24, 0.08, 0.76, 0.92) if tall else (0.06, 0.26, 0.94, 0.8), c, dark(c))
        if not tall:  # a potato's eyes
            for x, y in ((0.3, 0.45), (0.55, 0.6), (0.7, 0.4)):
                p.ellipse((x, y, x + 0.05, y + 0.05), dark(c, 0.4))

    return draw


def _lettuce(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.08, 0.12, 0.92, 0.92), c, dark(c))
    p.ellipse((0.28, 0.3, 0.72, 0.74), light(c, 0.35))
    for end in ((0.2, 0.3), (0.8, 0.3), (0.5, 0.12)):
        p.line(((0.5, 0.85), end), light(c, 0.6), 0.03)


def _loaf(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.06, 0.36, 0.94, 0.84), c, dark(c), radius=0.12)
    p.ellipse((0.06, 0.18, 0.94, 0.6), c, dark(c))
    for x in (0.3, 0.5, 0.7):
        p.line(((x - 0.06, 0.3), (x + 0.06, 0.44)), dark(c, 0.25), 0.03)


def _bowl(p: Pen, c: Color, on: bool) -> None:
    p.chord((0.06, 0.05, 0.94, 0.9), 0, 180, c, dark(c))
    p.ellipse((0.06, 0.38, 0.94, 0.56), light(c, 0.4), dark(c))


def _cup(p: Pen, c: Color, on: bool) -> None:
    p.poly(((0.24, 0.18), (0.76, 0.18), (0.66, 0.9), (0.34, 0.9)), c, dark(c))
    p.ellipse((0.24, 0.12, 0.76, 0.24), light(c, 0.4), dark(c))


def _mug(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.52, 0.34, 0.9, 0.74), None, dark(c, 0.1), width=0.08)
    p.rect((0.14, 0.2, 0.68, 0.88), c, dark(c), radius=0.1)


def _plate(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.04, 0.28, 0.96, 0.78), c, dark(c, 0.3))
    p.ellipse((0.22, 0.38, 0.78, 0.68), None, dark(c, 0.15), width=0.02)


def _pan(p: Pen, c: Color, on: bool) -> None:
    p.line(((0.56, 0.52), (0.98, 0.34)), (60, 50, 45), 0.09)
    p.ellipse((0.02, 0.22, 0.64, 0.84), c, dark(c, 0.5))
    p.ellipse((0.1, 0.3, 0.56, 0.76), light(c, 0.15))


def _pot(p: Pen, c: Color, on: bool) -> None:
    for x in (0.04, 0.84):
        p.rect((x, 0.42, x + 0.12, 0.5), dark(c, 0.4))
    p.rect((0.14, 0.34, 0.86, 0.9), c, dark(c, 0.5), radius=0.06)
    p.ellipse((0.12, 0.24, 0.88, 0.42), light(c, 0.2), dark(c, 0.5))
    p.rect((0.44, 0.18, 0.56, 0.26), dark(c, 0.4))


def _kettle(p: Pen, c: Color, on: bool) -> None:
    p.poly(((0.7, 0.6), (0.96, 0.34), (0.98, 0.4), (0.76, 0.76)), dark(c, 0.15))
    p.ellipse((0.3, 0.1, 0.7, 0.5), None, dark(c, 0.4), width=0.06)
    p.chord((0.12, 0.28, 0.84, 1.2), 180, 360, c, dark(c, 0.5))
    p.rect((0.12, 0.72, 0.84, 0.92), c, dark(c, 0.5))


def _utensil(head: str) -> _Icon:
    """Long thin tools lying diagonally: knife, fork, spoon, ladle, spatula."""

    def draw(p: Pen, c: Color, on: bool) -> None:
        p.line(((0.1, 0.9), (0.44, 0.56)), dark(c, 0.45), 0.1)
        if head == "blade":
            p.poly(((0.4, 0.56), (0.46, 0.5), (0.92, 0.06), (0.52, 0.62)), c, dark(c))
        elif head == "fork":
            p.line(((0.4, 0.6), (0.66, 0.34)), c, 0.06)
            for dx, dy in ((-0.06, -0.06), (0.0, 0.0), (0.06, 0.06)):
                p.line(((0.62 + dx, 0.38 + dy), (0.9 + dx, 0.1 + dy)), c, 0.035)
        elif head == "flat":
            p.line(((0.4, 0.6), (0.62, 0.38)), c, 0.06)
            p.poly(((0.56, 0.3), (0.76, 0.1), (0.92, 0.26), (0.72, 0.46)), c, dark(c))
        else:
            big = head == "ladle"
            p.line(((0.4, 0.6), (0.66 - 0.1 * big, 0.34 + 0.1 * big)), c, 0.06)
            p.ellipse((0.58 - 0.2 * big, 0.06, 0.94, 0.42 + 0.2 * big), c, dark(c))

    return draw


def _bottle(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.42, 0.06, 0.58, 0.42), dark(c, 0.2), dark(c, 0.5))
    p.rect((0.28, 0.34, 0.72, 0.94), c, dark(c, 0.5), radius=0.12)
    p.rect((0.34, 0.52, 0.66, 0.74), light(c, 0.6))


def _spray(p: Pen, c: Color, on: bool) -> None:
    p.poly(((0.34, 0.08), (0.72, 0.08), (0.72, 0.22), (0.5, 0.3)), dark(c, 0.4))
    p.rect((0.3, 0.3, 0.7, 0.94), c, dark(c, 0.5), radius=0.12)


def _shaker(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.3, 0.3, 0.7, 0.92), c, dark(c, 0.5), radius=0.1)
    p.ellipse((0.3, 0.16, 0.7, 0.38), (190, 190, 196), (90, 90, 96))
    for x in (0.42, 0.5, 0.58):
        p.ellipse((x - 0.02, 0.24, x + 0.02, 0.28), (60, 60, 64))


def _candle(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.4, 0.08, 0.6, 0.32), (255, 170, 40))
    p.rect((0.34, 0.34, 0.66, 0.92), c, dark(c, 0.3), radius=0.06)


def _book(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.2, 0.1, 0.86, 0.9), (250, 248, 240), (120, 120, 120))
    p.rect((0.16, 0.08, 0.8, 0.88), c, dark(c))
    p.rect((0.16, 0.08, 0.26, 0.88), dark(c, 0.3))


def _laptop(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.16, 0.12, 0.84, 0.62), c, dark(c, 0.5), radius=0.04)
    p.rect((0.22, 0.18, 0.78, 0.56), (70, 110, 160))
    p.poly(((0.12, 0.64), (0.88, 0.64), (0.98, 0.8), (0.02, 0.8)), light(c, 0.2), dark(c, 0.5))


def _phone(buttons: bool) -> _Icon:
    def draw(p: Pen, c: Color, on: bool) -> None:
        p.rect((0.32, 0.06, 0.68, 0.94), c, dark(c, 0.5), radius=0.12)
        if buttons:
            for y in (0.2, 0.36, 0.52, 0.68):
                p.ellipse((0.43, y, 0.57, y + 0.1), (200, 60, 60) if y == 0.2 else (200, 200, 206))
        else:
            p.rect((0.36, 0.14, 0.64, 0.8), (80, 130, 190))

    return draw


def _credit_card(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.08, 0.26, 0.92, 0.74), c, dark(c), radius=0.08)
    p.rect((0.08, 0.36, 0.92, 0.46), dark(c, 0.5))
    p.rect((0.16, 0.54, 0.34, 0.66), (230, 200, 90))


def _disc(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.1, 0.1, 0.9, 0.9), c, dark(c, 0.4))
    p.ellipse((0.26, 0.26, 0.74, 0.74), None, light(c, 0.5), width=0.03)
    p.ellipse((0.42, 0.42, 0.58, 0.58), WHITE, dark(c, 0.4))


def _clock(band: bool) -> _Icon:
    def draw(p: Pen, c: Color, on: bool) -> None:
        if band:
            p.rect((0.36, 0.0, 0.64, 1.0), dark(c, 0.3))
        p.ellipse((0.14, 0.14, 0.86, 0.86) if not band else (0.22, 0.22, 0.78, 0.78), c, dark(c, 0.5))
        p.ellipse((0.3, 0.3, 0.7, 0.7), WHITE)
        p.line(((0.5, 0.5), (0.5, 0.34)), INK, 0.04)
        p.line(((0.5, 0.5), (0.62, 0.52)), INK, 0.04)

    return draw


def _stick(p: Pen, c: Color, on: bool) -> None:
    p.line(((0.14, 0.86), (0.8, 0.2)), c, 0.11)
    p.poly(((0.76, 0.16), (0.84, 0.24), (0.94, 0.06)), (230, 210, 170))


def _roll(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.16, 0.3, 0.84, 0.86), c, dark(c, 0.3))
    p.ellipse((0.16, 0.14, 0.84, 0.46), light(c, 0.3), dark(c, 0.3))
    p.ellipse((0.4, 0.24, 0.6, 0.36), (170, 140, 100))


def _cloth(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.1, 0.2, 0.9, 0.84), c, dark(c), radius=0.04)
    p.line(((0.1, 0.5), (0.9, 0.5)), dark(c, 0.25), 0.03)
    p.rect((0.1, 0.7, 0.9, 0.76), light(c, 0.5))


def _block(top: Color | None) -> _Icon:
    """Boxes and bars: tissue box, soap bar, sponge, newspaper, statue base ..."""

    def draw(p: Pen, c: Color, on: bool) -> None:
        if top is not None:
            p.ellipse((0.34, 0.12, 0.66, 0.42), top, (150, 150, 150))
        p.rect((0.1, 0.32, 0.9, 0.84), c, dark(c), radius=0.08)

    return draw


def _sponge(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.1, 0.3, 0.9, 0.56), (60, 150, 70), dark((60, 150, 70)), radius=0.06)
    p.rect((0.1, 0.52, 0.9, 0.8), c, dark(c), radius=0.06)


def _newspaper(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.12, 0.12, 0.88, 0.88), c, dark(c, 0.4))
    p.rect((0.2, 0.2, 0.8, 0.32), dark(c, 0.55))
    for y in (0.44, 0.56, 0.68, 0.8):
        p.line(((0.2, y), (0.8, y)), dark(c, 0.35), 0.03)


def _pillow(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.06, 0.22, 0.94, 0.82), c, dark(c, 0.3), radius=0.2)
    p.line(((0.2, 0.52), (0.8, 0.52)), light(c, 0.4), 0.02)


def _vase(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.2, 0.3, 0.8, 0.94), c, dark(c))
    p.rect((0.38, 0.06, 0.62, 0.4), c, dark(c))


def _statue(p: Pen, c: Color, on: bool) -> None:
    p.rect((0.2, 0.82, 0.8, 0.96), dark(c, 0.3))
    p.poly(((0.34, 0.36), (0.66, 0.36), (0.72, 0.82), (0.28, 0.82)), c, dark(c))
    p.ellipse((0.36, 0.08, 0.64, 0.36), c, dark(c))


def _keys(p: Pen, c: Color, on: bool) -> None:
    p.ellipse((0.08, 0.08, 0.46, 0.46), None, (150, 150, 156), width=0.06)
    p.line(((0.4, 0.4), (0.86, 0.86)), c, 0.1)
    p.line(((0.7, 0.7), (0.8, 0.6)), c, 0.07)


def _lamp(tall: bool) -> _Icon:
    """Desk and floor lamps; a lamp that is on has a yellow shade and a halo."""

    def draw(p: Pen, c: Color, on: bool) -> None:
        if on:
            p.ellipse((0.02, 0.0, 0.98, 0.7), (255, 240, 170))
        top = 0.06 if tall else 0.14
        p.ellipse((0.26, 0.86, 0.74, 0.98), dark(c, 0.4))
        p.line(((0.5, 0.9), (0.5, top + 0.2)), dark(c, 0.4), 0.05)
        shade = (255, 214, 40) if on else light(c, 0.3)
        p.poly(((0.34, top), (0.66, top), (0.8, top + 0.3), (0.2, top + 0.3)), shade, dark(c, 0.4))

    return draw


def _thing(p: Pen, c: Color, on: bool) -> None:
    """Any object kind we do not know."""
    p.rect((0.14, 0.14, 0.86, 0.86), c, dark(c), radius=0.18)
    p.rect((0.26, 0.26, 0.5, 0.42), light(c, 0.5), radius=0.3)


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
def object_icon(kind: str, on: bool, side: int, look: str = "default") -> Image.Image:
    """An RGBA icon of an object kind, ``side`` px square, drawn at 4x (2x when large) with ``look``'s pen."""
    scale = 4 if side < 64 else 2
    canvas = Image.new("RGBA", (side * scale, side * scale), (0, 0, 0, 0))
    icon, colour = _OBJECTS.get(kind, (_thing, hashed(kind)))
    icon(PENS[look](ImageDraw.Draw(canvas), (0, 0, side * scale, side * scale)), colour, on)
    return canvas.resize((side, side), Image.Resampling.BOX)
