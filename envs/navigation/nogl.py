"""MiniWorld's worlds without OpenGL: the same geometry, physics and random draws, no GL object made.

A world rendered by a render process (:mod:`.gl_process`) lives in the env's process for
everything but drawing: the planner, the text description and the physics read it there. MiniWorld
makes GL objects as a world is built and reset (a hidden window, frame buffers, textures, mesh
vertex lists, a text label), so inside :func:`swapped` the names MiniWorld's modules call for those
stand for inert objects of the same sizes: a texture knows its width and height (read from its PNG
header), a mesh its extents (parsed by MiniWorld's own loader, without the vertex lists), a frame
buffer its size. Every random draw is MiniWorld's own (``Texture.get``'s variant choice is made on
the same RNG, in the same order), so a world built here and one built with GL from the same seed
are the same world: a render process replays the reset and draws it.

Written for MiniWorld 2.1.0 (:func:`available` says whether the installed one is that); the stand-ins
live in their own caches, so a process may hold GL worlds too.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import struct
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from rl4vlm_gym import patches
from rl4vlm_gym.envs.navigation import gl

__all__ = ["available", "swapped"]

_VERSIONS = "==2.1.0"
_depth = [0]


def available() -> bool:
    """Whether MiniWorld is the version the stand-ins were written for: the patch
    ``miniworld-worlds-without-gl`` (what they stand in for) and ``miniworld-texture-paths`` (its
    ``Texture.get``, whose search :class:`_Texture` repeats)."""
    try:
        version = importlib.metadata.version("miniworld")
    except importlib.metadata.PackageNotFoundError:
        return False
    return (
        patches.version_in(version, _VERSIONS)
        and patches.guard("miniworld-texture-paths")
        and patches.guard("miniworld-worlds-without-gl")
    )


class _Inert:
    """Stands for a GL object MiniWorld makes and calls: any call does nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class _FrameBuffer(_Inert):
    """A frame buffer's size (the only part of it the env's process reads)."""

    def __init__(self, width: int, height: int, num_samples: int = 1) -> None:
        self.width, self.height = width, height


def _png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as png:
        header = png.read(24)
    return struct.unpack(">II", header[16:24])  # IHDR: width, height


class _Texture:
    """A texture's name, file and size, chosen as MiniWorld 2.1.0's ``Texture.get`` chooses it."""

    cache: dict[str, _Texture] = {}

    def __init__(self, path: str, name: str) -> None:
        self.path, self.name = path, name
        self.width, self.height = _png_size(path)
        self.tex = self

    @classmethod
    def get(cls, tex_name: str, rng: Any = None) -> _Texture:
        from miniworld.opengl import Texture
        from miniworld.utils import get_file_path

        paths = Texture.tex_paths.get(tex_name, [])
        if len(paths) == 0:
            for i in range(1, 10):
                path = get_file_path("textures", "%s_%d" % (tex_name, i), "png")  # noqa: UP031 - MiniWorld's own
                if not os.path.exists(path):
                    break
                paths.append(path)
        assert len(paths) > 0, ValueError(f'failed to load textures for name "{tex_name}"')
        path = paths[rng.integers(0, len(paths))] if rng else paths[0]  # the same draw as MiniWorld's
        if path not in cls.cache:
            cls.cache[path] = cls(path, tex_name)
        return cls.cache[path]

    @classmethod
    def load(cls, tex_path: str) -> _Texture:
        return cls(tex_path, os.path.basename(tex_path))

    def bind(self) -> None:
        pass


class _Mesh:
    """MiniWorld's ``ObjMesh`` as its loader makes it, without the vertex lists (its extents set an
    object's radius): the same ``min_coords``, ``max_coords``, one ``None`` vertex list and the
    texture per material, from the vertices the faces use (:func:`_extents`)."""

    cache: dict[str, Any] = {}

    @classmethod
    def get(cls, mesh_name: str) -> Any:
        from miniworld.objmesh import ObjMesh
        from miniworld.utils import get_file_path

        path = get_file_path("meshes", mesh_name, "obj")
        if path not in cls.cache:
            mesh = ObjMesh.__new__(ObjMesh)
            if not _extents(mesh, path):  # inside swapped(): pyglet and Texture are the inert ones
                ObjMesh.__init__(mesh, path)
            cls.cache[path] = mesh
        return cls.cache[path]


def _extents(mesh: Any, path: str) -> bool:
    """Set what MiniWorld 2.1.0's ``ObjMesh.__init__`` sets on ``mesh``, on the same float32 vertex array
    with the same operations, without its per-corner Python loop (0.1 s a ball mesh, the loader's
    cost): ``min_coords``, ``max_coords``, ``vlists`` (one per material, ``None`` as the inert pyglet
    makes) and ``textures``. False (nothing set) for a file outside the plain form MiniWorld's meshes
    have (tokens between spaces, triangles of ``v/t/n`` or ``v//n`` corners): MiniWorld's loader then reads it."""
    materials = mesh._load_mtl(path)
    with open(path) as file:
        text = file.read()
    if not text.isascii() or any(space in text for space in "\t\x0b\x0c\x1c\x1d\x1e\x1f"):
        return False  # whitespace that str.split() splits on and MiniWorld's split(" ") does not
    verts: list[str] = []
    corners: list[int] = []
    used: set[str] = set()
    current = ""
    for line in text.split("\n"):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        prefix = tokens[0]
        if prefix == "v":
            if len(tokens) != 4:
                return False
            verts += tokens[1:]
        elif prefix == "usemtl":
            current = tokens[1] if tokens[1] in materials else ""
        elif prefix == "f":
            if len(tokens) != 4:
                return False
            for corner in tokens[1:]:
                indices = [part for part in corner.split("/") if part]
                if len(indices) not in (2, 3):
                    return False
                corners.append(int(indices[0]))
            used.add(current)
    if not corners:
        return False
    table = np.array([float(v) for v in verts], dtype=np.float64).reshape(-1, 3)
    index = np.array(corners, dtype=np.int64) - 1  # OBJ counts from 1; MiniWorld's list index, negatives too
    if index.max() >= len(table) or index.min() < -len(table):
        return False
    list_verts = table[index].astype(np.float32).reshape(-1, 3, 3)
    # MiniWorld's own centring, extents and all (its max over the corners is a min).
    min_coords = list_verts.min(axis=0).min(axis=0)
    max_coords = list_verts.max(axis=0).min(axis=0)
    mean_coords = (min_coords + max_coords) / 2
    list_verts[:, :, 1] -= min_coords[1]
    list_verts[:, :, 0] -= mean_coords[0]
    list_verts[:, :, 2] -= mean_coords[2]
    mesh.min_coords = list_verts.min(axis=0).min(axis=0)
    mesh.max_coords = list_verts.max(axis=0).max(axis=0)
    chunks = [materials[name] for name in sorted(used)]  # MiniWorld sorts the faces by material name
    mesh.vlists = [None] * len(chunks)
    mesh.textures = [_Texture.load(mtl["map_Kd"]) if "map_Kd" in mtl else None for mtl in chunks]
    return True


_PYGLET = SimpleNamespace(
    window=SimpleNamespace(Window=_Inert),
    text=SimpleNamespace(Label=_Inert),
    graphics=SimpleNamespace(vertex_list=lambda *args, **kwargs: None),
)


def _swaps() -> list[tuple[Any, str, Any]]:
    mw, entity, objmesh = (sys.modules[name] for name in ("miniworld.miniworld", "miniworld.entity", "miniworld.objmesh"))
    return [
        (mw, "pyglet", _PYGLET),
        (mw, "FrameBuffer", _FrameBuffer),
        (mw, "glEnable", lambda *args: None),
        (mw, "Texture", _Texture),
        (entity, "Texture", _Texture),
        (entity, "ObjMesh", _Mesh),
        (objmesh, "pyglet", _PYGLET),
        (objmesh, "Texture", _Texture),
    ]


@contextlib.contextmanager
def swapped() -> Iterator[None]:
    """Build or reset MiniWorld worlds in this block without GL (reentrant). It holds the process's GL
    lock (:func:`.gl.current`'s): MiniWorld's module globals are swapped for the block, and a GL world
    in another thread must not see them."""
    with gl._lock:
        _depth[0] += 1
        saved = []
        try:
            if _depth[0] == 1:
                for module, name, stand_in in _swaps():
                    saved.append((module, name, getattr(module, name)))
                    setattr(module, name, stand_in)
            yield
        finally:
            for module, name, value in saved:
                setattr(module, name, value)
            _depth[0] -= 1
