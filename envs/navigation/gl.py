"""Headless OpenGL for MiniWorld: EGL on Mesa's llvmpipe on a CPU machine, the GPU's EGL where present.

MiniWorld renders with pyglet 1.5, which opens an X display at import unless it is put in headless
(EGL) mode first, and fails deep in pyglet when no GL stack is installed. :func:`import_miniworld`
does the import the one way that works without a screen and turns a missing GL stack into one error
that says what to install.

The GL context is made by :func:`ensure_context` when the first world is built, not at import:
a GL context does not survive ``fork`` (llvmpipe's render threads stay behind in the parent, and
the child waits for them for ever), so a process that only imports the envs, or only makes one
without resetting it (as ``AsyncVectorEnv`` does to read the spaces), can fork workers that render.
A child forked after its parent made a context gets :class:`GLForkError` instead of a hang.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

__all__ = ["DEBIAN_PACKAGES", "GLForkError", "GLUnavailableError", "ensure_context", "import_miniworld"]

DEBIAN_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1", "libgl1-mesa-dri", "libglu1-mesa")
"""What EGL rendering on Mesa needs on Debian/Ubuntu (``bash scripts/setup.sh nav`` installs them)."""

EGL_DEVICE_VARIABLE = "RL4VLM_GYM_EGL_DEVICE"
"""Index of the EGL device to render on (default 0: the GPU where there is one, else llvmpipe)."""


_context_pid: int | None = None
"""The process that made the GL context (pyglet's shadow window) that MiniWorld's worlds share."""


class GLUnavailableError(RuntimeError):
    """MiniWorld cannot get an OpenGL context on this machine."""


class GLForkError(RuntimeError):
    """This process was forked from one that had made a GL context, which a child cannot use."""


def explain(err: BaseException) -> GLUnavailableError:
    """The error to raise when creating a GL context or importing pyglet's GL failed with ``err``."""
    if _context_pid == os.getpid():  # GL worked in this process: the packages are there
        return GLUnavailableError(
            f"MiniWorld's OpenGL worked earlier in this process but now fails ({type(err).__name__}: {err}): "
            "something in this process shut EGL down (SDL's 'offscreen' video driver does when "
            "pygame.display.quit() is called). Keep SDL off EGL (SDL_VIDEODRIVER=dummy) or render in another process."
        )
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
    global _context_pid
    if "pyglet.gl" not in sys.modules:  # once pyglet.gl is imported, its display mode is fixed
        pyglet.options["headless"] = True
        pyglet.options["headless_device"] = int(os.environ.get(EGL_DEVICE_VARIABLE, "0"))
        pyglet.options["debug_gl"] = False  # a glGetError after every GL call costs ~20% of a step
        pyglet.options["shadow_window"] = False  # made by ensure_context, so importing leaves fork usable
    elif getattr(sys.modules["pyglet.gl"], "_shadow_window", None) is not None:
        _context_pid = os.getpid()  # someone imported pyglet.gl before us: its context exists already
    try:
        return importlib.import_module("miniworld")
    except ImportError as err:
        if err.name == "miniworld":
            raise ImportError("the navigation envs need the `nav` extra: pip install 'rl4vlm-gym[nav]'") from err
        raise explain(err) from err
    except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
        raise explain(err) from err


def ensure_context() -> None:
    """Make this process's GL context on first use: pyglet's hidden shadow window, which keeps the
    GL object space that MiniWorld's textures and display lists live in alive across worlds.

    Raise :class:`GLForkError` in a child forked from a process that had made one (it would hang)."""
    global _context_pid
    pid = os.getpid()
    if _context_pid == pid:
        return
    if _context_pid is not None:
        raise GLForkError(
            f"this process was forked from process {_context_pid} after it had rendered a MiniWorld env; "
            "an OpenGL context does not survive fork (rendering here would hang). Start workers with "
            "another method: gym.vector.AsyncVectorEnv(env_fns, context='spawn') (or 'forkserver'), "
            "or multiprocessing.get_context('spawn'); or make no navigation env render in the parent "
            "before forking (making one without reset() is fine)."
        )
    import_miniworld()
    import pyglet

    gl = sys.modules["pyglet.gl"]
    if gl._shadow_window is None:
        pyglet.options["shadow_window"] = True
        try:
            gl._create_shadow_window()  # pyglet's own start-up step, run now instead of at import
        except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
            raise explain(err) from err
    _context_pid = pid
