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

Every GL call runs inside :func:`current`, which lets any thread render: see there why.

By default an env holds no GL at all: a render process draws its frames (:mod:`.gl_process`),
and the GL context is that process's. What follows is about the process that draws: the render
process, or the env's own with ``render_process=False``.

Deferring the shadow window runs pyglet's private start-up step ourselves: the patch
``pyglet-deferred-shadow-window`` of :mod:`rl4vlm_gym.patches`, made only over pyglet 1.5.31's
(:func:`deferring_shadow_window`); refused, pyglet makes its window at import, as it does by itself.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from rl4vlm_gym import patches

__all__ = [
    "DEBIAN_PACKAGES",
    "GLForkError",
    "GLUnavailableError",
    "current",
    "deferring_shadow_window",
    "ensure_context",
    "import_miniworld",
    "when_current",
]

DEBIAN_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1", "libgl1-mesa-dri", "libglu1-mesa")
"""What EGL rendering on Mesa needs on Debian/Ubuntu (``bash scripts/setup.sh nav`` installs them)."""

EGL_DEVICE_VARIABLE = "RL4VLM_GYM_EGL_DEVICE"
"""Index of the EGL device to render on (default 0: the GPU where there is one, else llvmpipe)."""


_context_pid: int | None = None
"""The process that made the GL context (pyglet's shadow window) that MiniWorld's worlds share."""

_lock = threading.RLock()
_depth = 0
"""How many :func:`current` blocks the thread holding ``_lock`` is in (only the outermost releases)."""
_dropped: list[Callable[[], None]] = []
"""GL clean-ups of objects dropped unclosed, run by the next outermost :func:`current` block."""


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
    from rl4vlm_gym.extras import require

    require("nav", "MiniWorld's navigation envs")  # one error naming the extra, even with sys.modules["miniworld"] = None
    if "miniworld" in sys.modules:  # imported before, by us or by the user
        return _with_fast_textures(sys.modules["miniworld"])
    try:
        import pyglet
    except ImportError as err:
        raise ImportError("the navigation envs need the `nav` extra: pip install 'rl4vlm-gym[nav]'") from err
    global _context_pid
    made_at_import = False
    first = "pyglet.gl" not in sys.modules  # once pyglet.gl is imported, its display mode is fixed
    if not first and getattr(sys.modules["pyglet.gl"], "_shadow_window", None) is not None and deferring_shadow_window():
        _adopt()  # someone imported pyglet.gl before us
        _context_pid = os.getpid()
    try:
        if first:
            pyglet.options["headless"] = True
            pyglet.options["headless_device"] = int(os.environ.get(EGL_DEVICE_VARIABLE, "0"))
            pyglet.options["debug_gl"] = False  # a glGetError after every GL call costs ~20% of a step
            pyglet.options["shadow_window"] = False  # made by ensure_context, so importing leaves fork usable
            if not deferring_shadow_window():  # (imports pyglet.gl, without a window)
                # pyglet's own way: importing pyglet.window makes the shadow window (as importing pyglet.gl does by default)
                pyglet.options["shadow_window"] = made_at_import = True
                importlib.import_module("pyglet.window")
        miniworld = importlib.import_module("miniworld")
    except ImportError as err:
        if err.name == "miniworld":
            raise ImportError("the navigation envs need the `nav` extra: pip install 'rl4vlm-gym[nav]'") from err
        raise explain(err) from err
    except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
        raise explain(err) from err
    if made_at_import:
        _context_pid = os.getpid()  # pyglet made its shadow window (the GL context) as pyglet.window was imported
    return _with_fast_textures(miniworld)


def deferring_shadow_window() -> bool:
    """Whether pyglet's private start-up (``pyglet.gl._create_shadow_window``) and context switching are
    the ones the deferred shadow window was written for (the patch ``pyglet-deferred-shadow-window`` of
    :mod:`rl4vlm_gym.patches`; imports ``pyglet.gl``). When they are not, pyglet makes its shadow window
    itself, at import, and a process that imported MiniWorld can no longer fork workers that render."""
    importlib.import_module("pyglet.gl")  # here, so a missing GL stack is explained, not a refusal
    return patches.guard("pyglet-deferred-shadow-window")


def _with_fast_textures(miniworld: ModuleType) -> ModuleType:
    from rl4vlm_gym.envs.navigation import textures

    textures.install()  # idempotent
    return miniworld


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
    if not deferring_shadow_window():  # refused: pyglet made its shadow window itself, at import
        _context_pid = pid
        return
    import pyglet

    gl = sys.modules["pyglet.gl"]
    if gl._shadow_window is None:
        pyglet.options["shadow_window"] = True
        try:
            with current():  # it is left current in this thread: released at the block's end
                gl._create_shadow_window()  # pyglet's own start-up step, run now instead of at import
        except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
            raise explain(err) from err
    else:
        _adopt()  # miniworld (so pyglet.gl) was imported before import_miniworld
    _context_pid = pid


def _adopt() -> None:
    """Take over the shadow window pyglet made when pyglet.gl was imported before
    :func:`import_miniworld`, which pyglet left current in the importing thread: release it if
    that is this thread; else replace it with a new one that shares its objects, for a context
    held by another thread cannot be made current here, and pyglet switches to its shadow window
    whenever it closes a context (see :func:`current`)."""
    from pyglet.libs.egl import egl

    gl = sys.modules["pyglet.gl"]
    with current():
        gl._shadow_window.switch_to()
        held = getattr(gl._shadow_window.context, "egl_context", None)  # None: not headless
        if held is not None and egl.eglGetCurrentContext() != held:
            gl._create_shadow_window()  # shares with pyglet's current context: the old shadow window


def when_current(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` (which makes its own :func:`current` block) when the next block starts.

    For finalizers: the garbage collector runs them in any thread, at any allocation, even inside
    another thread's block or between a block's GL calls, where no GL call may be made."""
    _dropped.append(cleanup)


_CACHES = (("miniworld.opengl", "Texture", "tex_cache"), ("miniworld.objmesh", "ObjMesh", "cache"))
"""MiniWorld's process-wide caches of GL objects (textures, meshes' vertex lists), by file path."""
_OUR_CACHES: dict[tuple[str, str, str], dict[str, Any]] = {}
"""Our worlds' own copies of :data:`_CACHES`, swapped in for every :func:`current` block: a texture that a
raw MiniWorld world (made outside these blocks, maybe before our context, in another GL object space)
cached was another texture, or none, for our contexts once its window was gone, and every later
in-process world of ours drew other frames."""


def _swap_caches(ours: dict[tuple[str, str, str], dict[str, Any]]) -> list[tuple[Any, str, Any]]:
    """Put our caches in place of MiniWorld's (those of its modules imported); return what to put back."""
    saved = []
    for module_name, class_name, name in _CACHES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        cls = getattr(module, class_name)
        saved.append((cls, name, cls.__dict__.get(name)))
        setattr(cls, name, ours.setdefault((module_name, class_name, name), {}))
    return saved


@contextlib.contextmanager
def current(window: Any = None) -> Iterator[None]:
    """Make GL calls in this block from any thread: under the process's GL lock, with ``window``'s
    context made current in this thread (None: the block makes its own, as a new window does),
    and no context left current in this thread when the outermost block ends.

    An EGL context can be current in one thread at a time, and a thread must release it itself.
    pyglet ignores a failed ``eglMakeCurrent`` and keeps "the current context" and the driver's
    ``GLInfo`` (read when a context is made current) in process globals; closing a window makes
    its shadow window current in the closing thread and leaves it there. So a world closed in
    one thread after the shadow context was left current in another (a server runs each session
    in its own thread) made pyglet read ``GLInfo`` with no context: no extensions, so the next
    world's frame buffer had no multisampling and drew other pixels at every edge. Releasing at
    the end of each block keeps every context free for the next thread. The lock also keeps two
    threads from rendering at once, which MiniWorld's worlds cannot do: they share display list 1
    (see :mod:`.worlds`). Releasing and binding again costs a few microseconds per frame.
    """
    global _depth
    from pyglet.libs.egl import egl

    with _lock:
        _depth += 1
        theirs = _swap_caches(_OUR_CACHES) if _depth == 1 else []
        try:
            if _depth == 1:
                while _dropped:
                    _dropped.pop()()
            if window is not None:
                window.switch_to()
                made = getattr(window.context, "egl_context", None)  # None: not headless (pyglet.gl imported before us)
                if made is not None and egl.eglGetCurrentContext() != made:
                    raise GLUnavailableError(
                        f"MiniWorld's GL context could not be made current in thread {threading.current_thread().name!r}: "
                        "something outside rl4vlm_gym's navigation envs left it current in another thread"
                    )
            yield
        finally:
            _depth -= 1
            if _depth == 0:
                for cls, name, value in theirs:
                    setattr(cls, name, value)
                display = egl.eglGetCurrentDisplay()
                if display:
                    egl.eglMakeCurrent(display, None, None, None)  # EGL_NO_SURFACE, EGL_NO_CONTEXT
