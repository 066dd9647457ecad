"""MiniWorld's textures load through numpy's pixel conversion, with pyglet's own bytes."""

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
