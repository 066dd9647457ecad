"""The full-grid picture BALROG shows of BabaIsAI: the original's layout, tiles and colours.

Read (not copied): nacloos/baba-is-ai ad466e027ad0 ``baba/grid.py`` (``BabaIsYouGrid.render`` /
``render_tile``: 32-pixel tiles drawn at 3x and averaged down, the average truncated to uint8 as
the original's assignment into its frame does; a grey line on each tile's top and left edge),
``baba/world_object.py`` (each object's shapes and colours) and ``baba/rendering.py``
(``fill_coords``: a pixel is filled when its centre passes the shape's test).

Every tile but the words' is computed with the original's shapes, tests and colours, vectorised
(tests in ``tests/envs/balrog/test_babaisai.py`` compare them with the original's tiles, recorded
in the golden data). Word blocks keep the original's light frame and black square, but their word
is drawn in DejaVu Sans Bold (shipped with the package) where the original draws OpenCV's
Hershey Simplex font (``cv2.putText``; OpenCV is not a dependency here): the letters differ,
their place and size are close. Baba faces its own direction (the original caches baba's tile by
the agent's direction, so a baba that is not YOU shows the direction the process first drew).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.rendering import font

TILE = 32
SUB = 3  # the original's supersampling
_N = TILE * SUB
RGB = {
    "red": (255, 0, 0),
    "green": (0, 255, 0),
    "blue": (0, 0, 255),
    "purple": (112, 39, 195),
    "yellow": (255, 255, 0),
    "grey": (100, 100, 100),
    "white": (255, 255, 255),
}
_LIGHT = (235, 235, 235)
_BLACK = (0, 0, 0)
# pixel centres of the supersampled tile, as fill_coords computes them
_C = (np.arange(_N) + 0.5) / _N
_X, _Y = np.meshgrid(_C, _C)


def _rect(x0: float, x1: float, y0: float, y1: float) -> np.ndarray:
    return (_X >= x0) & (_X <= x1) & (_Y >= y0) & (_Y <= y1)


def _circle(cx: float, cy: float, r: float, x: np.ndarray = _X, y: np.ndarray = _Y) -> np.ndarray:
    return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r


def _triangle(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Barycentric test, in the original's order of operations."""
    v0 = (c[0] - a[0], c[1] - a[1])
    v1 = (b[0] - a[0], b[1] - a[1])
    v2x, v2y = x - a[0], y - a[1]
    dot00 = v0[0] * v0[0] + v0[1] * v0[1]
    dot01 = v0[0] * v1[0] + v0[1] * v1[1]
    dot11 = v1[0] * v1[0] + v1[1] * v1[1]
    dot02 = v0[0] * v2x + v0[1] * v2y
    dot12 = v1[0] * v2x + v1[1] * v2y
    inv = 1 / (dot00 * dot11 - dot01 * dot01)
    u = (dot11 * dot02 - dot01 * dot12) * inv
    v = (dot00 * dot12 - dot01 * dot02) * inv
    return (u >= 0) & (v >= 0) & ((u + v) < 1)


def _baba(direction: int) -> np.ndarray:
    theta = 0.5 * math.pi * direction
    cos, sin = math.cos(-theta), math.sin(-theta)
    x, y = _X - 0.5, _Y - 0.5
    rx = 0.5 + x * cos - y * sin
    ry = 0.5 + y * cos + x * sin
    return _triangle((0.12, 0.19), (0.87, 0.50), (0.12, 0.81), rx, ry)


def _word_image(word: str) -> np.ndarray:
    """The 76x76 black square with the word in light grey, centred as the original centres it."""
    side = _N - 20
    image = Image.new("RGB", (side, side), _BLACK)
    draw = ImageDraw.Draw(image)
    face = font(27, bold=True)
    width = draw.textlength(word, font=face)
    # cv2 puts the baseline at (side + text height) / 2 with Hershey Simplex's height 22 at scale 1
    draw.text(((side - width) / 2, (side + 22) / 2), word, fill=_LIGHT, font=face, anchor="ls")
    return np.asarray(image)


@cache
def tile(code: int | None) -> np.ndarray:
    """The 32x32 tile of an object code (``None``: an empty cell)."""
    img = np.zeros((_N, _N, 3), np.uint8)
    img[_rect(0, 0.031, 0, 1)] = (100, 100, 100)
    img[_rect(0, 1, 0, 0.031)] = (100, 100, 100)
    if code is not None:
        kind = code & E.TYPE_MASK
        color = RGB[E.color_of(code)]
        if kind == E.BORDER:
            img[_rect(0, 1, 0, 1)] = color
        elif kind == E.WALL:
            img[_rect(0.2, 0.8, 0.2, 0.8)] = color
        elif kind == E.BALL:
            img[_circle(0.5, 0.5, 0.31)] = color
        elif kind == E.DOOR:
            img[_rect(0.00, 1.00, 0.00, 1.00)] = color
            img[_rect(0.04, 0.96, 0.04, 0.96)] = _BLACK
            img[_rect(0.08, 0.92, 0.08, 0.92)] = color
            img[_rect(0.12, 0.88, 0.12, 0.88)] = _BLACK
            img[_circle(0.75, 0.50, 0.08)] = color
        elif kind == E.KEY:
            img[_rect(0.50, 0.63, 0.31, 0.88)] = color
            img[_rect(0.38, 0.50, 0.59, 0.66)] = color
            img[_rect(0.38, 0.50, 0.81, 0.88)] = color
            img[_circle(0.56, 0.28, 0.190)] = color
            img[_circle(0.56, 0.28, 0.064)] = _BLACK
        elif kind == E.BABA:
            img[_baba(E.direction_of(code))] = RGB["white"]
        else:  # a word block
            img[_rect(0.06, 0.94, 0.06, 0.94)] = _LIGHT
            img[10:-10, 10:-10] = _word_image(E.word_name(kind))
    # the mean of each 3x3 block, truncated to uint8 as the original's frame assignment does
    small = img.reshape(TILE, SUB, TILE, SUB, 3).mean(axis=3).mean(axis=1)
    out = small.astype(np.uint8)
    out.setflags(write=False)
    return out


def render(world: E.World) -> np.ndarray:
    """The whole grid, ``(height * 32, width * 32, 3)`` uint8: each cell's top object."""
    width, height = world.width, world.height
    tiles = [tile(stack[-1] if stack else None) for stack in world.cells]
    grid = np.stack(tiles).reshape(height, width, TILE, TILE, 3)
    return np.ascontiguousarray(grid.transpose(0, 2, 1, 3, 4).reshape(height * TILE, width * TILE, 3))
