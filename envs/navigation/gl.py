"""Headless OpenGL for MiniWorld: EGL on Mesa's llvmpipe on a CPU machine, the GPU's EGL where present.

MiniWorld renders with pyglet 1.5, which opens an X display at import unless it is put in headless
(EGL) mode first, and fails deep in pyglet when no GL stack is installed. :func:`import_miniworld`
does the import the one way that works without a screen and turns a missing GL stack into one error
that says what to install.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

__all__ = ["DEBIAN_PACKAGES", "GLUnavailableError", "import_miniworld"]

DEBIAN_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1", "libgl1-mesa-dri", "libglu1-mesa")
"""What EGL rendering on Mesa needs on Debian/Ubuntu (``bash scripts/setup.sh nav`` installs them)."""

EGL_DEVICE_VARIABLE = "RL4VLM_GYM_EGL_DEVICE"
"""Index of the EGL device to render on (default 0: the GPU where there is one, else llvmpipe)."""


class GLUnavailableError(RuntimeError):
    """MiniWorld cannot get an OpenGL context on this machine."""


def explain(err: BaseException) -> GLUnavailableError:
    """The error to raise when creating a GL context or importing pyglet's GL failed with ``err``."""
    return GLUnavailableError(
        f"MiniWorld needs OpenGL through EGL, which is not available here ({type(err).__name__}: {err}). "
        f"On Debian or Ubuntu install it with `apt-get install {' '.join(DEBIAN_PACKAGES)}` "
        "(`bash scripts/setup.sh nav` does this); on a GPU machine the driver's EGL is used. "
        f"Set {EGL_DEVICE_VARIABLE}=N to choose the N-th EGL device."
    )


def import_miniworld() -> ModuleType:
    """Import ``miniworld`` with pyglet in headless EGL mode; raise :class:`GLUnavailableError` or a
    clear ``ImportError`` (``pip install rl4vlm-gym[nav]``) when that cannot work."""
    if "miniworld" in sys.modules:
        return sys.modules["miniworld"]
    try:
        import pyglet
    except ImportError as err:
        raise ImportError("the navigation envs need the `nav` extra: pip install 'rl4vlm-gym[nav]'") from err
    if "pyglet.gl" not in sys.modules:  # once pyglet.gl is imported, its display mode is fixed
        pyglet.options["headless"] = True
        pyglet.options["headless_device"] = int(os.environ.get(EGL_DEVICE_VARIABLE, "0"))
        pyglet.options["debug_gl"] = False  # a glGetError after every GL call costs ~20% of a step
    try:
        return importlib.import_module("miniworld")
    except ImportError as err:
        if err.name == "miniworld":
            raise ImportError("the navigation envs need the `nav` extra: pip install 'rl4vlm-gym[nav]'") from err
        raise explain(err) from err
    except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
        raise explain(err) from err
