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
draws the receptacles and objects as line art (the same recipes stroked, not filled) and turns
every colour of the frame 150 degrees round the hue circle at equal luma: the same layout, words
and facts in a style and palette no training frame shows (about 0.9 ms more a frame).

The drawings of receptacles and objects, in both looks, are the icon library's
(:mod:`~rl4vlm_gym.envs.household.icons`); the colour arithmetic both use is in
:mod:`~rl4vlm_gym.envs.household.palette`. This module lays them out with the words.

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

import functools
import math
import re
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.household.icons import LOOKS, PENS, object_icon, receptacle_drawing
from rl4vlm_gym.envs.household.palette import INK, WHITE, Color, dark, ink_on, light, mix
from rl4vlm_gym.envs.household.view import Item, View
from rl4vlm_gym.rendering import font

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LOOKS", "render"]

Box = tuple[int, int, int, int]
"""``(left, top, right, bottom)`` in pixels, right and bottom exclusive."""

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
    ("clean", "clean", (30, 100, 220), WHITE),
    ("hot", "hot", (214, 40, 30), WHITE),
    ("cool", "cold", (150, 214, 244), (10, 40, 90)),
    ("sliced", "sliced", (40, 140, 60), WHITE),
    ("on", "on", (250, 200, 20), INK),
)
_ROOM_TAG: Color = (84, 100, 124)
_OPEN_TAG: Color = (46, 150, 80)
_CLOSED_TAG: Color = (190, 60, 50)
_LAMP_TAG: Color = (255, 210, 40)

_MIN_SIDE = 16
_TEXT_HEIGHT = 0.95
"""Height of a line of text ("A" top to "g" bottom) per pixel of font size, for DejaVu Sans."""


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
                                            fill=mix(bg, WHITE, 0.6), outline=mix(bg, INK, 0.35))
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
    _write(image, item.name, px, False, INK, (left, label_top, right, label_top + label_h))
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
        picture = object_icon(item.kind, item.on, side, look)
        image.paste(picture, (left + (right - left - side) // 2, top + (bottom - top - side) // 2), picture)
    return _freeze(image)


@functools.lru_cache(maxsize=256)
def _more_card(count: int, width: int, height: int, bg: Color) -> NDArray[np.uint8]:
    """The card that stands for ``count`` things with no room of their own."""
    image, m = _card(width, height, bg)
    text = f"+{count} more"
    px = _fit(text, True, width - 4 * m - 2, 0.45 * height)
    _write(image, text, px, True, INK, (2 * m + 1, 0, width - 2 * m - 1, height))
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
        _pill(image, text, px, fill, ink_on(fill), x, (pad, height - pad))
        x -= pad
    full = _fit("Ag", True, 1e9, 0.62 * height)
    title = next((t for t in titles if _fit(t, True, x - 2 * pad, 0.62 * height) >= 0.8 * full), titles[-1])
    _write(image, title, _fit(title, True, x - 2 * pad, 0.62 * height), True, WHITE, (pad, 0, x - pad, height),
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
    x = pad + _write(image, "Holding:", px, True, INK, (pad, 0, width - pad, height), centre=False) + pad
    if item is None:
        _write(image, "nothing", px, False, (110, 110, 116), (x, 0, width - pad, height), centre=False)
        return _freeze(image)
    side = height - 2 * pad
    if side >= 6 and x + side < width // 2:
        icon = object_icon(item.kind, item.on, side, look)
        image.paste(icon, (x, pad), icon)
        x += side + pad
    states = _states(item)
    room = width - pad - x
    badge_px = _badge_px(states, px, room // 2)
    badges_w = _badges_width(states, badge_px) + pad if states else 0
    name_px = min(px, _fit(item.name, True, room - badges_w, 0.46 * height))  # smaller rather than squeezed
    x += _write(image, item.name, name_px, True, INK, (x, 0, x + room - badges_w, height), centre=False) + pad
    _badges(image, states, x, (pad + height // 10, height - pad - height // 10), badge_px)
    return _freeze(image)


def _scene_background(image: Image.Image, box: Box, room: str, lit: bool) -> None:
    """Wall and floor in the room's colour, with a lamp's warm glow when lit."""
    left, top, right, bottom = box
    wall = _WALLS.get(room, _WALL)
    draw = ImageDraw.Draw(image)
    draw.rectangle((left, top, right - 1, bottom - 1), fill=wall)
    floor = top + round(0.88 * (bottom - top))
    draw.rectangle((left, floor, right - 1, bottom - 1), fill=dark(wall, 0.12))
    if lit:  # the glow reaches above the scene; the header is pasted over it
        cx, w, h = (left + right) / 2, right - left, bottom - top
        for i in range(10, 0, -1):  # nested ellipses, warmer towards the lamp
            r = i / 10
            draw.ellipse((cx - 0.6 * w * r, top - 0.5 * h * r, cx + 0.6 * w * r, top + 0.9 * h * r),
                         fill=mix(wall, _GLOW, 1 - 0.8 * r))


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
    archetype, colour = receptacle_drawing(kind, openable)
    drawn = archetype(PENS[look](ImageDraw.Draw(layer), (0, 0, 2 * bw, 2 * bh)), colour, is_open, openable)
    image.paste(layer.reduce(2), body[:2])
    f = drawn.box
    inner = (math.ceil(body[0] + f[0] * bw), math.ceil(body[1] + f[1] * bh),
             math.floor(body[0] + f[2] * bw), math.floor(body[1] + f[3] * bh))
    if openable and not is_open:
        px = _fit("CLOSED", True, 0.8 * (inner[2] - inner[0]), min(0.3 * (inner[3] - inner[1]), 0.12 * lay.unit))
        ink = ink_on(drawn.colour) if look == "default" else INK  # line art leaves the door unfilled: on the wall
        _write(image, "CLOSED", px, True, ink, inner)
        return _Scene(_freeze(image), None, drawn.colour)
    draw = ImageDraw.Draw(image)
    edge = max(1, round(0.006 * lay.unit))
    draw.rounded_rectangle((inner[0], inner[1], inner[2] - 1, inner[3] - 1), radius=max(1, 3 * edge),
                           fill=drawn.colour, outline=mix(drawn.colour, INK, 0.3), width=edge)
    panel = (inner[0] + edge + 1, inner[1] + edge + 1, inner[2] - edge - 1, inner[3] - edge - 1)
    if empty:
        px = _fit("(empty)", False, 0.6 * (panel[2] - panel[0]), min(0.3 * (panel[3] - panel[1]), 0.08 * lay.unit))
        _write(image, "(empty)", px, False, mix(drawn.colour, INK, 0.6), panel)
    return _Scene(_freeze(image), panel, drawn.colour)


def _tile_frame(height: int, thumb: bool) -> tuple[int, int]:
    """Pixels an overview tile adds left and right of its name: margins and thumbnail or stripe."""
    m = max(1, height // 14)
    return 3 * m + (height - 4 * m + m if thumb else max(2, height // 8) + m), 3 * m


@functools.lru_cache(maxsize=512)
def _receptacle_tile(name: str, width: int, height: int, px: int, thumb: bool, bg: Color, look: str = "default") -> NDArray[np.uint8]:
    """An overview tile: the name on a card tinted by kind, after a thumbnail or a kind-coloured stripe."""
    image = Image.new("RGB", (width, height), bg)
    archetype, colour = receptacle_drawing(_kind_of(name), False)
    m = max(1, height // 14)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((m, m, width - 1 - m, height - 1 - m), radius=max(2, height // 6),
                           fill=light(colour, 0.72), outline=dark(colour, 0.2), width=max(1, height // 24))
    if thumb:
        # the receptacle drawn as in its scene, shut, in a square
        side = height - 4 * m
        canvas = Image.new("RGBA", (side * 4, side * 4), (0, 0, 0, 0))
        archetype(PENS[look](ImageDraw.Draw(canvas), (0, 0, side * 4, side * 4)), colour, False, True)
        canvas = canvas.resize((side, side), Image.Resampling.BOX)
        image.paste(canvas, (3 * m, 2 * m), canvas)
    else:
        draw.rectangle((3 * m, 3 * m, 3 * m + max(2, height // 8) - 1, height - 1 - 3 * m), fill=dark(colour, 0.1))
    lead, tail = _tile_frame(height, thumb)
    _write(image, name, px, False, INK, (lead, 0, width - tail, height))
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
            (:class:`~rl4vlm_gym.envs.household.icons.LinePen`) and turns every colour of the frame 150 degrees round the hue
            circle at equal luma: the same layout, words and facts in a style and palette that
            training never shows.

    Returns:
        A fresh, writable array the caller owns.

    Raises:
        ValueError: If ``size`` is not a pair of integers >= 16, or ``look`` is unknown.
    """
    height, width = _check_size(size)
    if look not in PENS:
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
