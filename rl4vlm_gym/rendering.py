"""Rendering helpers shared by env families: packaged fonts, text frames and the human window.

Fonts ship inside the package (DejaVu Sans, Bitstream Vera licence) so a frame never depends on
what the host has installed: the same Pillow version gives the same bytes on every machine.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageFont

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["HumanWindow", "font", "has_screen", "import_pygame_quietly", "offscreen_sdl", "sdl_environment", "to_array"]

_FONT_FILES = {
    (False, False): "DejaVuSans.ttf",
    (True, False): "DejaVuSans-Bold.ttf",
    (False, True): "DejaVuSerif.ttf",  # serif faces: the typography of held-out appearances
    (True, True): "DejaVuSerif-Bold.ttf",
}
logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def font(size: int, bold: bool = False, serif: bool = False) -> ImageFont.FreeTypeFont:
    """Return the packaged DejaVu Sans (or Serif) font at ``size`` pixels (cached: loading costs ~1 ms)."""
    path = resources.files("rl4vlm_gym") / "assets" / "fonts" / _FONT_FILES[bool(bold), bool(serif)]
    with resources.as_file(path) as file:
        return ImageFont.truetype(str(file), size)


def to_array(image: Image.Image) -> NDArray[np.uint8]:
    """Convert a Pillow image to a contiguous ``uint8[H, W, 3]`` array."""
    return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()


def has_screen() -> bool:
    """Whether a window can be shown: on Linux and the BSDs an X or Wayland display must be set,
    unless ``SDL_VIDEODRIVER`` names SDL's video driver explicitly (``dummy`` for none)."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"))


@functools.cache
def import_pygame_quietly() -> None:
    """Import pygame without its packaging warning (once per process)."""
    # pygame 2.6 imports pkg_resources, which warns that it is deprecated (the nethack extra pins
    # setuptools<81). The warning is about pygame's packaging, not the env; unsilenced, it reaches
    # check_env whenever the env is the first in its process to draw with pygame.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
        import pygame  # noqa: F401


_SDL_NO_SIGNALS = {"SDL_NO_SIGNAL_HANDLERS": "1"}
"""SDL's start-up installs C handlers for SIGTERM (and SIGINT, where no handler is set) that turn them
into a quit event for an event loop our renderers never run: a process that had drawn one FrozenLake
frame outlived SIGTERM (a Gymnasium vector env's terminate, a job scheduler's stop). The hint keeps
SDL's hands off the signals; SDL reads it when it starts, inside :func:`sdl_environment`."""


_SDL_ENVIRONMENT = threading.RLock()
"""Held by :func:`sdl_environment`'s blocks: one thread's block at a time sets and removes the variables."""


def _new_sdl_lock_after_fork() -> None:
    global _SDL_ENVIRONMENT
    _SDL_ENVIRONMENT = threading.RLock()  # a fork while another thread held it would leave the child's held forever


os.register_at_fork(after_in_child=_new_sdl_lock_after_fork)


@contextlib.contextmanager
def sdl_environment(extra: dict[str, str] | None = None) -> Iterator[None]:
    """Set SDL's hints for the block: no signal handlers (:data:`_SDL_NO_SIGNALS`) and ``extra``; a
    variable the user has set is left as it is, and what was set is removed at the end.

    SDL reads its hints from the process's environment, so they are set there, and only for the block.
    Blocks in different threads run one at a time: otherwise a thread leaving its block would remove
    a variable that another thread's block found set (and so did not set itself) while SDL still
    reads it there. A block may hold another (the lock is re-entrant)."""
    with _SDL_ENVIRONMENT:
        wanted = {**_SDL_NO_SIGNALS, **(extra or {})}
        added = [name for name in wanted if name not in os.environ]
        os.environ.update({name: wanted[name] for name in added})
        try:
            yield
        finally:
            for name in added:
                os.environ.pop(name, None)


@contextlib.contextmanager
def offscreen_sdl() -> Iterator[None]:
    """Draw through another library's pygame renderer without a screen: pygame initialises its
    display even for an off-screen frame, and with no screen SDL's ``dummy`` driver does that
    silently. The variables are set only inside the block, and never over a user's own setting."""
    import_pygame_quietly()
    with sdl_environment(None if has_screen() else {"SDL_VIDEODRIVER": "dummy"}):
        yield


class HumanWindow:
    """A pygame window that shows frames; pygame is imported only when a window is opened.

    Without a screen (a headless machine: no ``DISPLAY``, ``WAYLAND_DISPLAY`` or ``SDL_VIDEODRIVER``)
    it logs one warning and drops the frames instead of starting SDL: SDL then falls back to its
    ``offscreen`` driver, whose shut-down terminates the EGL display that MiniWorld's renderer
    shares, breaking every navigation env made after it in the process.
    """

    def __init__(self, title: str, fps: int = 4) -> None:
        self.title = title
        self.fps = fps
        self._pygame: Any = None
        self._screen: Any = None
        self._clock: Any = None
        self.headless = not has_screen()
        if self.headless:
            logger.warning(
                "render_mode='human' for %s: there is no screen (DISPLAY, WAYLAND_DISPLAY and SDL_VIDEODRIVER are "
                "unset), so frames are drawn but not shown; use render_mode='rgb_array' to get them",
                title,
            )

    def show(self, frame: NDArray[np.uint8]) -> None:
        """Display ``frame`` (``uint8[H, W, 3]``), opening or resizing the window as needed."""
        if self.headless:
            return
        if self._pygame is None:
            try:
                import pygame
            except ImportError as err:  # pragma: no cover - pygame is a core dependency
                raise ImportError("render_mode='human' needs pygame: pip install pygame") from err
            with sdl_environment():
                pygame.display.init()  # not pygame.init(): no audio device is needed
            pygame.display.set_caption(self.title)
            self._pygame, self._clock = pygame, pygame.time.Clock()
        pygame = self._pygame
        height, width = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (width, height):
            self._screen = pygame.display.set_mode((width, height))
        surface = pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2)))
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Close the window; safe to call twice."""
        if self._pygame is not None:
            self._pygame.display.quit()
            self._pygame = self._screen = self._clock = None
