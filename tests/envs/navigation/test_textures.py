"""MiniWorld's textures load through numpy's pixel conversion, with pyglet's own bytes; a world without GL
(``nogl``) reads its meshes' extents as MiniWorld's loader computes them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401 - registers the ids

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)


def _miniworld_texture(name: str) -> str:
    from rl4vlm_gym.envs.navigation.gl import import_miniworld

    return str(Path(import_miniworld().__file__).parent / "textures" / f"{name}.png")


@pytest.mark.parametrize("name", ["cardboard_1", "airduct_grate_1", "concrete_1"])  # RGB, RGBA, RGB
def test_the_pixels_are_pyglets_own(name: str) -> None:
    path = _miniworld_texture(name)  # first: it imports pyglet's GL headless
    import pyglet

    from rl4vlm_gym.envs.navigation.textures import rgba_bytes

    image = pyglet.image.load(path).get_image_data()
    fast = rgba_bytes(image)
    slow = pyglet.image.load(path).get_image_data().get_data("RGBA", image.width * 4)
    assert len(fast) == image.width * image.height * 4 and fast == slow


def test_worlds_load_textures_through_it() -> None:
    from miniworld import opengl

    from rl4vlm_gym.envs.navigation import textures

    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=(32, 32))
    env.reset(seed=0)
    env.close()
    assert opengl.Texture.load.__func__ is textures._load


def test_miniworld_imported_before_us_gets_it_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.navigation import gl, textures

    gl.import_miniworld()
    from miniworld import opengl

    from rl4vlm_gym import patches

    # MiniWorld's own loader back, as if MiniWorld were imported by the user (another loader is refused: test_patches.py)
    monkeypatch.setattr(opengl.Texture, "load", patches.original("miniworld.opengl:Texture.load"))
    assert opengl.Texture.load.__func__ is not textures._load
    gl.import_miniworld()
    assert opengl.Texture.load.__func__ is textures._load


@pytest.mark.parametrize("name", ["key_red", "tree", "barrel", "doom_door"])  # a material; 2 materials; a texture; v//n corners
def test_nogl_meshes_are_miniworlds(name: str) -> None:
    from rl4vlm_gym.envs.navigation import gl, nogl

    gl.import_miniworld()
    from miniworld.objmesh import ObjMesh
    from miniworld.utils import get_file_path

    path = get_file_path("meshes", name, "obj")
    with nogl.swapped():
        theirs, ours = ObjMesh.__new__(ObjMesh), ObjMesh.__new__(ObjMesh)
        ObjMesh.__init__(theirs, path)
        assert nogl._extents(ours, path)
    assert sorted(vars(ours)) == sorted(vars(theirs))
    for extent in ("min_coords", "max_coords"):
        assert getattr(ours, extent).dtype == getattr(theirs, extent).dtype
        assert getattr(ours, extent).tobytes() == getattr(theirs, extent).tobytes()
    assert ours.vlists == theirs.vlists
    assert [(t.path, t.width, t.height) if t else None for t in ours.textures] == [(t.path, t.width, t.height) if t else None for t in theirs.textures]


def test_nogl_leaves_unusual_mesh_files_to_miniworld(tmp_path: Path) -> None:
    from rl4vlm_gym.envs.navigation import gl, nogl

    gl.import_miniworld()
    from miniworld.objmesh import ObjMesh

    path = tmp_path / "tab.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv\t0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n")  # a tab: MiniWorld's split(" ") keeps it
    with nogl.swapped():
        assert not nogl._extents(ObjMesh.__new__(ObjMesh), str(path))
        with pytest.raises(IndexError):  # MiniWorld's own loader: "v\t0" is one token, no vertex, so face 1-2-3 has no third
            nogl._Mesh.get(str(path))  # which _Mesh falls back to
