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
- A step costs what in-process drawing costs (``benchmarks/miniworld_overhead.py --render-process``):
  the env asks for the step's frame as soon as MiniWorld's physics is done and finishes the step
  (reward, text, info) while the renderer draws (:class:`Pending`); a request is one fixed struct
  (no pickling) in one ``send``, a reply one ``recvmsg_into`` of a header and the frame; small frames
  are drawn on the renderer's own thread (:data:`_THREADED_PIXELS`).
- A renderer that died (killed, crashed) is started again at the next frame, and each scene sends
  its reset again: nothing is lost. After ``fork`` the child drops the parent's renderers (their
  sockets are the parent's) and starts its own when it renders.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
import traceback
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from rl4vlm_gym import processes

__all__ = ["FRAME_CACHE_BYTES", "Pending", "RenderProcessError", "Renderer", "Scene", "forget_frames", "lease", "renderers"]

# The wire: every request is a length (u32) and a body whose first byte says what it is; every reply
# is a header (status u32, length u32) and that many bytes. A frame request whose poses are plain
# (float64 3-vectors, float headings: every MiniWorld object's) is a fixed struct; the rest (a scene's
# spec and reset, a drop, unusual poses) are pickled. Fixed structs cost a few microseconds where
# pickling numpy arrays cost tens, on every step.
_LENGTH = struct.Struct("<I")
_REPLY = struct.Struct("<II")
_FRAME_HEAD = struct.Struct("<BBBxIHH")  # op, view, buffer, key, objects present, objects moving
_FRAME, _PICKLED = 1, 2
_VIEWS, _BUFFERS = ("obs", "top"), ("obs", "vis")
_OK, _FAILED = 0, 1
_UNKNOWN = "UnknownScene"
"""The error name of a request for a scene the render process does not hold."""
_THREADED_PIXELS = 128 * 128
"""Frames of at most this many pixels are drawn by llvmpipe on the render process's own thread
(``LP_NUM_THREADS=0``, unless the user set it): handing a small frame to rasterizer threads and
waiting for them costs more than drawing it (60x80: about 40% less CPU, the same bytes). Parallel
envs get parallel render processes (:func:`lease`) instead."""


FRAME_CACHE_BYTES = 32 << 20
"""The frames a process keeps (least recently used dropped first): a frame asked for again, the same
world (task, size, appearance, the reset's level and RNG state) with every object at the same pose,
bytes for bytes, is the one drawn before; no render process is asked (the same seed replayed: an
evaluation's fixed seeds, a GRPO group's resets, the kit's checks)."""
_frames: OrderedDict[tuple[bytes, bytes], np.ndarray] = OrderedDict()
_frames_bytes = [0]
_frames_lock = threading.Lock()


def forget_frames() -> None:
    """Empty this process's frame cache (:data:`FRAME_CACHE_BYTES`): every frame is drawn anew."""
    with _frames_lock:
        _frames.clear()
        _frames_bytes[0] = 0


def _cached(key: tuple[bytes, bytes] | None) -> np.ndarray | None:
    if key is None:
        return None
    with _frames_lock:
        frame = _frames.get(key)
        if frame is not None:
            _frames.move_to_end(key)
            return frame.copy()
    return None


def _keep(key: tuple[bytes, bytes], frame: np.ndarray) -> None:
    with _frames_lock:
        if key in _frames or frame.nbytes > FRAME_CACHE_BYTES:
            return
        _frames[key] = frame.copy()
        _frames_bytes[0] += frame.nbytes
        while _frames_bytes[0] > FRAME_CACHE_BYTES:
            _frames_bytes[0] -= _frames.popitem(last=False)[1].nbytes


class RenderProcessError(RuntimeError):
    """The render process could not draw a frame (its own error is in the message)."""


def _encode(request: tuple[Any, ...]) -> bytes:
    """A frame request ``(key, view, buffer, (present, moving))`` as the wire's fixed struct, or b"" if
    its poses are not plain (then it goes pickled)."""
    key, view, buffer, (present, moving) = request
    floats: list[float] = []
    for index, pos, direction in moving:
        if type(pos) is not np.ndarray or pos.dtype != np.float64 or pos.shape != (3,) or not isinstance(direction, float):
            return b""
        floats += (float(index), *pos.tolist(), float(direction))
    head = _FRAME_HEAD.pack(_FRAME, _VIEWS.index(view), _BUFFERS.index(buffer), key, len(present), len(moving))
    return head + struct.pack(f"<{len(present)}H{len(floats)}d", *present, *floats)


def _decode(body: memoryview) -> tuple[Any, ...]:
    """The request :func:`_encode` encoded, as the tuple the render process serves."""
    _, view, buffer, key, n_present, n_moving = _FRAME_HEAD.unpack_from(body)
    values = struct.unpack_from(f"<{n_present}H{5 * n_moving}d", body, _FRAME_HEAD.size)
    present, floats = values[:n_present], values[n_present:]
    moving = [(int(floats[i]), np.array(floats[i + 1 : i + 4]), floats[i + 4]) for i in range(0, len(floats), 5)]
    return ("frame", key, _VIEWS[view], _BUFFERS[buffer], (tuple(present), moving))


def _pickled(message: tuple[Any, ...]) -> bytes:
    body = bytes([_PICKLED]) + pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class Renderer:
    """One render process and the socket to it; :meth:`send` and :meth:`receive` are thread-safe
    under :attr:`lock`, held from a request until its frame is received."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = os.getpid()  # the owner: a forked child's copy is not its to use
        self.generation = 0  # started processes so far: a scene re-sends its reset to a new one
        self.keys: set[int] = set()  # the live scenes drawn here
        self.dropped: list[int] = []  # scenes closed or collected, freed in the process at the next call
        self.proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._owned: processes.Owned | None = None
        self._header = bytearray(_REPLY.size)

    @property
    def process_id(self) -> int | None:
        """The render process's pid (None before the first frame)."""
        return None if self.proc is None else self.proc.pid

    def _start(self, pixels: int) -> None:
        ours, theirs = socket.socketpair()
        env = None
        if pixels <= _THREADED_PIXELS and "LP_NUM_THREADS" not in os.environ:
            env = {**os.environ, "LP_NUM_THREADS": "0"}
        try:
            self.proc, self._owned = processes.popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # MiniWorld prints its MSAA fall-back: not on the owner's stdout
                env=env,
            )  # fmt: skip
        finally:
            theirs.close()
        self._sock = ours
        self.generation += 1

    def stop(self) -> None:
        """Kill the render process (if running); the next :meth:`send` starts another."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        if self._owned is not None:
            self._owned.close()
            self._owned = None
        if self.proc is not None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.proc.wait(timeout=5)
            self.proc = None

    def send(self, scene: Scene, request: tuple[Any, ...], pixels: int, encoded: bytes | None = None) -> None:
        """Send frame ``request`` ``(key, view, buffer, poses)`` (``encoded``: its :func:`_encode`, if
        made already) for ``scene``, with its reset if this renderer has not seen it, and the scenes
        dropped since the last call; the caller holds :attr:`lock`. A dead process is found (and
        replaced) by :meth:`receive`."""
        if self._sock is None:
            self._start(pixels)
        assert self._sock is not None
        fresh = scene.sent == (self.generation, scene.token)
        body = (_encode(request) if encoded is None else encoded) if fresh else b""
        message = _LENGTH.pack(len(body)) + body if body else _pickled(("frame", *request, *(() if fresh else (scene.spec, scene.replay))))
        drops = b"".join(_pickled(("drop", self.dropped.pop())) for _ in range(len(self.dropped)))
        scene.sent = None  # until the frame comes back: a failure in between must send the reset again
        with contextlib.suppress(OSError):  # a dead process: receive() sees it too and starts another
            self._sock.sendall(drops + message)

    def receive(self, scene: Scene, request: tuple[Any, ...], frame: memoryview) -> None:
        """Receive the frame of the request :meth:`send` sent into ``frame``; if the process died (or
        lost the scene), start another (send the request again) once."""
        for attempt in range(2):
            if attempt:
                self.send(scene, request, len(frame) // 3)
            try:
                failure = self._receive(frame)
            except (OSError, EOFError):  # it died: start another, which learns the scene anew
                self.stop()
                if attempt:
                    raise
                continue
            if failure is None:
                scene.sent = (self.generation, scene.token)
                return
            name, text = failure
            if name == _UNKNOWN and not attempt:  # it lost the scene (it never should): send it again
                continue
            if name == "GLUnavailableError":  # its own words: what to install, which device to choose
                from rl4vlm_gym.envs.navigation.gl import GLUnavailableError

                raise GLUnavailableError(f"in MiniWorld's render process: {text}")
            raise RenderProcessError(f"the MiniWorld render process failed: {name}: {text}")
        raise RenderProcessError("the MiniWorld render process lost the scene twice")

    def _receive(self, frame: memoryview) -> tuple[str, str] | None:
        """One reply: the frame into ``frame`` (None), or the render process's error (name, text).
        Usually one system call (the header and the frame scattered by ``recvmsg_into``)."""
        sock, header = self._sock, self._header
        if sock is None:
            raise EOFError
        got = sock.recvmsg_into([header, frame])[0]
        if not got:
            raise EOFError
        while got < len(header):  # rare: the header split
            more = sock.recv_into(memoryview(header)[got:])
            if not more:
                raise EOFError
            got += more
        status, length = _REPLY.unpack(header)
        have = got - len(header)
        if status == _OK:
            if length != len(frame):
                raise RenderProcessError(f"the MiniWorld render process sent {length} bytes for a frame of {len(frame)}")
            while have < length:
                more = sock.recv_into(frame[have:])
                if not more:
                    raise EOFError
                have += more
            return None
        payload = bytearray(length)
        payload[: min(have, length)] = frame[: min(have, length)]
        while have < length:
            more = sock.recv_into(memoryview(payload)[have:])
            if not more:
                raise EOFError
            have += more
        return pickle.loads(payload)


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
        if renderer._sock is not None:
            with contextlib.suppress(OSError):
                renderer._sock.close()  # the parent's socket: its renderer must see EOF when the parent dies
        renderer._sock, renderer._owned, renderer.proc = None, None, None
        if renderer.lock.locked():  # a frame pending in the parent at the fork: not the child's to receive
            renderer.lock = threading.Lock()
    _pool.clear()
    _pool_lock = threading.Lock()
    global _frames_lock
    _frames_lock = threading.Lock()
    forget_frames()  # a forked worker draws its own frames (a vector env's workers are checked against their owner's)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _at_exit() -> None:
    """Close this process's sockets to its renderers (each exits at EOF), not left to the collector."""
    for renderer in _pool:
        if renderer._sock is not None and renderer.pid == os.getpid():
            with contextlib.suppress(OSError):
                renderer._sock.close()
            renderer._sock = None


atexit.register(_at_exit)


class Pending:
    """A frame asked of the render process and not yet received: :meth:`result` waits for it. The
    env's process works on (the step's reward, text and info) while the render process draws."""

    def __init__(
        self, scene: Scene, renderer: Renderer | None, request: tuple[Any, ...], shape: tuple[int, int, int],
        cache_key: tuple[bytes, bytes] | None = None, frame: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        self.scene, self.renderer, self.request, self.shape, self.cache_key = scene, renderer, request, shape, cache_key
        self._frame: np.ndarray | None = frame  # given: a frame from the cache, nothing pending
        self._error: BaseException | None = None

    def result(self) -> np.ndarray:
        """The frame (received once; the renderer's lock, held since the request, is released then;
        a failure is raised again at every call)."""
        if self._error is not None:
            raise self._error
        if self._frame is None:
            assert self.renderer is not None
            frame = np.empty(self.shape, np.uint8)
            try:
                self.renderer.receive(self.scene, self.request, frame.data.cast("B"))
            except BaseException as err:
                self._error = err
                raise
            finally:
                if self.scene.pending is self:
                    self.scene.pending = None
                self.renderer.lock.release()
            self._frame = frame
            if self.cache_key is not None:
                _keep(self.cache_key, frame)
        return self._frame


class Scene:
    """One world's counterpart in a render process: :meth:`frame` draws it as it stands now."""

    def __init__(self, task: str, width: int, height: int, appearance: str) -> None:
        self.key = next(_keys)
        self.spec = (task, width, height, appearance)
        self.replay: tuple[Any, ...] | None = None
        self.token = 0  # bumped at every reset: the renderer must replay the new one
        self.sent: tuple[int, int] | None = None  # (renderer generation, token) the renderer has
        self.pending: Pending | None = None  # a frame asked for and not yet received
        self._world_key = b""  # the world as the frame cache knows it: the spec and the reset (pickled)
        self._renderer: Renderer | None = None
        self._finalizer: weakref.finalize | None = None

    def reset(self, replay: tuple[Any, ...]) -> None:
        """The world was reset: ``replay`` is what the renderer needs to make the same reset."""
        self.settle()
        self.replay = replay
        self.token += 1
        self._world_key = pickle.dumps((self.spec, replay), protocol=pickle.HIGHEST_PROTOCOL)

    def renderer(self) -> Renderer:
        if self._renderer is None or self._renderer.pid != os.getpid():
            self._renderer, self.sent, self.pending = lease(self.key), None, None
            self._finalizer = weakref.finalize(self, _drop, self._renderer, self.key)
        return self._renderer

    def request(self, view: str, buffer: str, height: int, width: int, poses: tuple[Any, ...]) -> Pending:
        """Ask for the frame of ``view`` ("obs": the agent's camera, "top": the map) in frame buffer
        ``buffer`` ("obs" or "vis", of ``height`` x ``width``) with the objects at ``poses``, and return
        at once; the renderer's lock is held until :meth:`Pending.result` (or :meth:`settle`). A frame
        drawn before (:data:`FRAME_CACHE_BYTES`) comes back done."""
        self.settle()
        request = (self.key, view, buffer, poses)
        encoded = _encode(request)
        # The frame's key: the world and the request, less the scene's number (any scene of that world).
        cache_key = (self._world_key, encoded[:4] + encoded[8:]) if encoded and self._world_key else None
        shape = (height, width, 3)
        frame = _cached(cache_key)
        if frame is not None:
            return Pending(self, None, request, shape, frame=frame)
        renderer = self.renderer()
        renderer.lock.acquire()
        try:
            renderer.send(self, request, height * width, encoded)
        except BaseException:
            renderer.lock.release()
            raise
        self.pending = Pending(self, renderer, request, shape, cache_key)
        return self.pending

    def frame(self, view: str, buffer: str, height: int, width: int, poses: tuple[Any, ...]) -> np.ndarray:
        """The frame of ``view`` as :meth:`request` asks for it, received."""
        return self.request(view, buffer, height, width, poses).result()

    def settle(self) -> None:
        """Receive the frame still pending, if any (kept by its :class:`Pending`)."""
        if self.pending is not None:
            self.pending.result()

    def close(self) -> None:
        """Free the world in the renderer (idempotent)."""
        with contextlib.suppress(Exception):  # a failed frame nobody waits for any more
            self.settle()
        if self._finalizer is not None:
            self._finalizer()


def _drop(renderer: Renderer, key: int) -> None:
    """Free scene ``key``: at once in this process, at the renderer's next call in the render process.
    Takes no lock: a finalizer runs at any allocation, even inside a call holding the renderer's."""
    if renderer.pid == os.getpid():
        renderer.keys.discard(key)
        renderer.dropped.append(key)


# -- The render process ----------------------------------------------------------------------------


class _Requests:
    """The render process's end of the socket: the requests, one at a time, each read whole."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray(1 << 16)
        self.start = self.end = 0  # the bytes received and not yet served

    def next(self) -> memoryview:
        """The next request's body (valid until the next call); EOFError when the owner is gone."""
        self._fill(_LENGTH.size)
        (length,) = _LENGTH.unpack_from(self.buffer, self.start)
        self._fill(_LENGTH.size + length)
        body = memoryview(self.buffer)[self.start + _LENGTH.size : self.start + _LENGTH.size + length]
        self.start += _LENGTH.size + length
        return body

    def _fill(self, size: int) -> None:
        """Have ``size`` bytes from ``start`` in the buffer (moved to its front, grown if need be)."""
        if self.end - self.start >= size:
            return
        if self.start:
            self.buffer[: self.end - self.start] = self.buffer[self.start : self.end]
            self.start, self.end = 0, self.end - self.start
        if len(self.buffer) < size:
            self.buffer.extend(bytes(size - len(self.buffer)))
        while self.end < size:
            got = self.sock.recv_into(memoryview(self.buffer)[self.end :])
            if not got:
                raise EOFError
            self.end += got


def _reply(sock: socket.socket, status: int, payload: Any) -> None:
    """Send a reply: the header and ``payload`` (bytes-like) in one system call where the kernel takes it all."""
    data = memoryview(payload).cast("B")
    header = _REPLY.pack(status, len(data))
    sent = sock.sendmsg([header, data])
    if sent < len(header) + len(data):
        sock.sendall((header + bytes(data))[sent:])


def _failure(sock: socket.socket, name: str, text: str) -> None:
    _reply(sock, _FAILED, pickle.dumps((name, text)))


def serve(sock: socket.socket) -> None:
    """Answer requests until the owner closes the socket (or dies)."""
    from rl4vlm_gym.envs.navigation import gl
    from rl4vlm_gym.envs.navigation.worlds import WORLDS

    try:
        gl.ensure_context()
        unavailable: gl.GLUnavailableError | None = None
    except gl.GLUnavailableError as err:  # answered to every request, so the owner raises it (not a dead socket)
        unavailable = err
    worlds: dict[int, Any] = {}
    requests = _Requests(sock)
    while True:
        try:
            body = requests.next()
        except (EOFError, OSError):
            break
        message = _decode(body) if body[0] == _FRAME else pickle.loads(body[1:])
        op, key = message[0], message[1]
        if op == "drop":
            world = worlds.pop(key, None)
            if world is not None:
                world.close()
            continue
        if unavailable is not None:
            _failure(sock, type(unavailable).__name__, str(unavailable))
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
                _failure(sock, _UNKNOWN, f"no scene {key} here")
                continue
            world.place(poses)
            frame_buffer = world.obs_fb if buffer == "obs" else world.vis_fb
            frame = world.render_obs(frame_buffer) if view == "obs" else world.render_top_view(frame_buffer)
            _reply(sock, _OK, np.ascontiguousarray(frame))
        except Exception as err:  # noqa: BLE001 - the owner raises it
            _failure(sock, type(err).__name__, f"{err}\n{traceback.format_exc()}")


def main() -> None:
    serve(socket.socket(fileno=int(sys.argv[1])))


if __name__ == "__main__":
    main()
