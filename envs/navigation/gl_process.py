"""MiniWorld's OpenGL in a render process of its own, so the env's process never makes a GL context.

A GL context does not survive ``fork`` (see :mod:`.gl`), and the worlds of one process render one
at a time (they share display list 1). So the env's process holds its world without GL
(:mod:`.nogl`) and a render process draws it:

- A :class:`Renderer` is a child process started by :func:`rl4vlm_gym.processes.popen` (a fresh
  interpreter: it inherits no GL context; it dies with its owner even under SIGKILL, and on EOF of
  its socket). It is started at the first frame asked for, not when an env is made.
- The process keeps a pool: an env takes a renderer no live env uses, else starts one (up to the
  number of CPUs, then shares the least used), so envs played in parallel threads (a server's
  sessions) render in parallel, and envs made one after another reuse one renderer.
- A :class:`Scene` is an env's world in its renderer. At a reset the env's world records what the
  reset depends on (the level, the RNG state: :meth:`.worlds.LevelledWorld.reset`); at a frame the
  scene sends that once, then the poses of the objects that move, and gets the frame's bytes back
  over a socket. The renderer replays the reset with GL (the same world: the same draws from the
  same RNG state), puts the objects where they are and draws: the same bytes as drawn in-process.
- A renderer that died (killed, crashed) is started again at the next frame, and each scene sends
  its reset again: nothing is lost. After ``fork`` the child drops the parent's renderers (their
  sockets are the parent's) and starts its own when it renders.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import subprocess
import sys
import threading
import traceback
import weakref
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from rl4vlm_gym import processes

__all__ = ["RenderProcessError", "Renderer", "Scene", "lease", "renderers"]

_ERROR = b""
"""An empty reply: the request failed; a pickled (type name, message) follows."""
_UNKNOWN = "UnknownScene"
"""The error name of a request for a scene the render process does not hold."""


class RenderProcessError(RuntimeError):
    """The render process could not draw a frame (its own error is in the message)."""


class Renderer:
    """One render process and the socket to it; :meth:`call` is thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = os.getpid()  # the owner: a forked child's copy is not its to use
        self.generation = 0  # started processes so far: a scene re-sends its reset to a new one
        self.keys: set[int] = set()  # the live scenes drawn here
        self.dropped: list[int] = []  # scenes closed or collected, freed in the process at the next call
        self.proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._owned: processes.Owned | None = None

    @property
    def process_id(self) -> int | None:
        """The render process's pid (None before the first frame)."""
        return None if self.proc is None else self.proc.pid

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.proc, self._owned = processes.popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # MiniWorld prints its MSAA fall-back: not on the owner's stdout
            )
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self.generation += 1

    def stop(self) -> None:
        """Kill the render process (if running); the next :meth:`call` starts another."""
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
            self._conn = None
        if self._owned is not None:
            self._owned.close()
            self._owned = None
        if self.proc is not None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.proc.wait(timeout=5)
            self.proc = None

    def call(self, scene: Scene, request: tuple[Any, ...], size: int) -> np.ndarray:
        """Send ``request`` for ``scene`` (with its reset if this renderer has not seen it) and return
        the frame of ``size`` bytes, flat; the caller holds :attr:`lock`."""
        for attempt in range(2):
            if self._conn is None:
                self._start()
            assert self._conn is not None
            message = request if scene.sent == (self.generation, scene.token) else (*request, scene.spec, scene.replay)
            try:
                while self.dropped:
                    self._conn.send(("drop", self.dropped.pop()))
                self._conn.send(message)
                frame = bytearray(size)
                got = self._conn.recv_bytes_into(frame)
                if got == 0:
                    name, text = self._conn.recv()
                    if name == _UNKNOWN and not attempt:  # it lost the scene (it never should): send it again
                        scene.sent = None
                        continue
                    if name == "GLUnavailableError":  # its own words: what to install, which device to choose
                        from rl4vlm_gym.envs.navigation.gl import GLUnavailableError

                        raise GLUnavailableError(f"in MiniWorld's render process: {text}")
                    raise RenderProcessError(f"the MiniWorld render process failed: {name}: {text}")
                if got != size:
                    raise RenderProcessError(f"the MiniWorld render process sent {got} bytes for a frame of {size}")
                scene.sent = (self.generation, scene.token)
                return np.frombuffer(frame, np.uint8)
            except (OSError, EOFError):  # it died: start another, which learns the scene anew
                self.stop()
                if attempt:
                    raise
        raise RenderProcessError("the MiniWorld render process lost the scene twice")


_pool: list[Renderer] = []
_pool_lock = threading.Lock()
_keys = itertools.count(1)


def renderers() -> list[Renderer]:
    """This process's renderers (for tests and benchmarks)."""
    return list(_pool)


def lease(key: int) -> Renderer:
    """A renderer for scene ``key``: one no scene uses, else a new one (up to one per CPU), else the least used."""
    with _pool_lock:
        free = [r for r in _pool if not r.keys]
        if free:
            renderer = free[0]
        elif len(_pool) < (os.cpu_count() or 1):
            renderer = Renderer()
            _pool.append(renderer)
        else:
            renderer = min(_pool, key=lambda r: len(r.keys))
        renderer.keys.add(key)
        return renderer


def _after_fork_in_child() -> None:
    global _pool_lock
    for renderer in _pool:
        if renderer._conn is not None:
            with contextlib.suppress(OSError):
                renderer._conn.close()  # the parent's socket: its renderer must see EOF when the parent dies
        renderer._conn, renderer._owned, renderer.proc = None, None, None
    _pool.clear()
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Scene:
    """One world's counterpart in a render process: :meth:`frame` draws it as it stands now."""

    def __init__(self, task: str, width: int, height: int, appearance: str) -> None:
        self.key = next(_keys)
        self.spec = (task, width, height, appearance)
        self.replay: tuple[Any, ...] | None = None
        self.token = 0  # bumped at every reset: the renderer must replay the new one
        self.sent: tuple[int, int] | None = None  # (renderer generation, token) the renderer has
        self._renderer: Renderer | None = None
        self._finalizer: weakref.finalize | None = None

    def reset(self, replay: tuple[Any, ...]) -> None:
        """The world was reset: ``replay`` is what the renderer needs to make the same reset."""
        self.replay = replay
        self.token += 1

    def renderer(self) -> Renderer:
        if self._renderer is None or self._renderer.pid != os.getpid():
            self._renderer, self.sent = lease(self.key), None
            self._finalizer = weakref.finalize(self, _drop, self._renderer, self.key)
        return self._renderer

    def frame(self, view: str, buffer: str, height: int, width: int, poses: tuple[Any, ...]) -> np.ndarray:
        """The frame of ``view`` ("obs": the agent's camera, "top": the map) into frame buffer
        ``buffer`` ("obs" or "vis", of ``height`` x ``width``) with the objects at ``poses``."""
        renderer = self.renderer()
        with renderer.lock:
            pixels = renderer.call(self, ("frame", self.key, view, buffer, poses), height * width * 3)
        return pixels.reshape(height, width, 3)

    def close(self) -> None:
        """Free the world in the renderer (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()


def _drop(renderer: Renderer, key: int) -> None:
    """Free scene ``key``: at once in this process, at the renderer's next call in the render process.
    Takes no lock: a finalizer runs at any allocation, even inside a call holding the renderer's."""
    if renderer.pid == os.getpid():
        renderer.keys.discard(key)
        renderer.dropped.append(key)


# -- The render process ----------------------------------------------------------------------------


def serve(conn: Connection) -> None:
    """Answer requests until the owner closes the socket (or dies)."""
    from rl4vlm_gym.envs.navigation import gl
    from rl4vlm_gym.envs.navigation.worlds import WORLDS

    try:
        gl.ensure_context()
        unavailable: gl.GLUnavailableError | None = None
    except gl.GLUnavailableError as err:  # answered to every request, so the owner raises it (not a dead socket)
        unavailable = err
    worlds: dict[int, Any] = {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        op, key = message[0], message[1]
        if op == "drop":
            world = worlds.pop(key, None)
            if world is not None:
                world.close()
            continue
        if unavailable is not None:
            conn.send_bytes(_ERROR)
            conn.send((type(unavailable).__name__, str(unavailable)))
            continue
        try:
            if len(message) > 5:  # the scene's spec and reset come along: build the world if new, replay the reset
                (task, width, height, appearance), replay = message[5], message[6]
                if key not in worlds:
                    worlds[key] = WORLDS[task](
                        obs_width=width, obs_height=height, window_width=width, window_height=height, appearance=appearance
                    )
                if replay is not None:
                    worlds[key].replay(replay)
            _, _, view, buffer, poses = message[:5]
            world = worlds.get(key)
            if world is None:
                conn.send_bytes(_ERROR)
                conn.send((_UNKNOWN, f"no scene {key} here"))
                continue
            world.place(poses)
            frame_buffer = world.obs_fb if buffer == "obs" else world.vis_fb
            frame = world.render_obs(frame_buffer) if view == "obs" else world.render_top_view(frame_buffer)
            conn.send_bytes(np.ascontiguousarray(frame).data.cast("B"))  # bytes, not rows
        except Exception as err:  # noqa: BLE001 - the owner raises it
            conn.send_bytes(_ERROR)
            conn.send((type(err).__name__, f"{err}\n{traceback.format_exc()}"))


def main() -> None:
    conn = Connection(int(sys.argv[1]))
    serve(conn)


if __name__ == "__main__":
    main()
