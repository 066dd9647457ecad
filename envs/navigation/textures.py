"""MiniWorld's textures loaded in milliseconds, not seconds.

MiniWorld's ``Texture.load`` asks pyglet 1.5 for the pixels as RGBA, and pyglet converts an RGB
PNG with a regular expression over its bytes: 0.85 s for a 512x512 texture, 4 s for the 1024x1024
brick wall, 6-8 s at the first reset of every process (each vector worker, each spawned test).
:func:`install` replaces that one conversion with numpy's and keeps everything else of MiniWorld's
loader; the bytes given to GL are pyglet's own (its missing alpha is the red channel, and MiniWorld
stores the texture as GL_RGB anyway), so frames do not change. The replacement is the patch
``miniworld-texture-load`` of :mod:`rl4vlm_gym.patches`: it is made only over MiniWorld 2.1.0's own
loader, and refused (with a warning, MiniWorld's loader kept) over any other.

:func:`remember_paths` fills the memo of each texture's files that MiniWorld's ``Texture.get`` reads
but never writes (the patch ``miniworld-texture-paths``), so a reset no longer looks for them again
in every room.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from rl4vlm_gym import patches

__all__ = ["install", "remember_paths", "rgba_bytes"]


def rgba_bytes(image: Any) -> bytes:
    """``image.get_data("RGBA", width * 4)`` of a pyglet ``ImageData``, converted by numpy when the
    image is RGB (the slow case), by pyglet otherwise."""
    width, height = image.width, image.height
    if image.format != "RGB":
        return image.get_data("RGBA", width * 4)
    rgb = np.frombuffer(image.get_data("RGB", width * 3), np.uint8).reshape(height, width, 3)
    return np.concatenate([rgb, rgb[..., :1]], axis=2).tobytes()  # pyglet fills alpha from red


def install() -> bool:
    """Make MiniWorld's ``Texture.load`` convert pixels with :func:`rgba_bytes` (idempotent), if it is
    the loader this was written for (:func:`rl4vlm_gym.patches.assign`). True when ours is in place."""
    return patches.assign("miniworld-texture-load", {"miniworld.opengl:Texture.load": _LOAD})


def _load(cls: Any, tex_path: str) -> Any:
    """``miniworld.opengl.Texture.load`` (MiniWorld 2.1.0) with :func:`rgba_bytes` for the pixels."""
    import pyglet
    from pyglet import gl

    img = pyglet.image.load(tex_path)
    tex = img.get_texture()
    gl.glEnable(tex.target)
    gl.glBindTexture(tex.target, tex.id)
    pixels = rgba_bytes(img.get_image_data())
    gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_RGB, img.width, img.height, 0, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, pixels)
    gl.glHint(gl.GL_GENERATE_MIPMAP_HINT, gl.GL_NICEST)
    gl.glGenerateMipmap(gl.GL_TEXTURE_2D)
    gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MAG_FILTER, gl.GL_LINEAR)
    gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MIN_FILTER, gl.GL_LINEAR_MIPMAP_LINEAR)
    gl.glBindTexture(gl.GL_TEXTURE_2D, 0)
    return tex


_LOAD = classmethod(_load)
"""What :func:`install` stores as ``Texture.load`` (one object, so a second install sees it there)."""


def remember_paths(names: Iterable[str]) -> None:
    """Put the files of each texture in ``names`` into ``Texture.tex_paths``, found as MiniWorld's
    ``Texture.get`` finds them, if that is the ``get`` this was written for (the patch
    ``miniworld-texture-paths``; refused, nothing is put there and MiniWorld looks as before).

    ``Texture.get`` reads its memo ``tex_paths`` but never writes it, so at every call it looks
    for up to ten files, each through ``os.path.realpath``: three calls per room at every reset
    (a fifth of a Maze reset's CPU). With the memo filled, ``get`` takes the same list (and
    draws the same domain-randomized variant) without touching the file system. Like MiniWorld's
    caches of loaded textures and meshes, the memo holds for the process."""
    from miniworld.opengl import Texture
    from miniworld.utils import get_file_path

    missing = [name for name in names if name not in Texture.tex_paths]
    if not missing or not patches.guard("miniworld-texture-paths"):
        return
    for name in missing:
        paths = []
        for i in range(1, 10):  # Texture.get's own search, as MiniWorld 2.1.0 writes it
            path = get_file_path("textures", "%s_%d" % (name, i), "png")  # noqa: UP031 - MiniWorld's formatting
            if not os.path.exists(path):
                break
            paths.append(path)
        if paths:  # none: left to Texture.get, which raises its own error
            Texture.tex_paths[name] = paths
