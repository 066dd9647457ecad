"""Fresh processes for the process checks (``determinism``, ``vector``), forked from one long-lived server.

A check that needs "a process that has made no env yet" used to start a new interpreter per id,
which costs a second or two of imports (numpy, Gymnasium, the package) before any env code runs.
Here one *fork server* per owner process pays them once: started lazily (``python -c`` calling
:func:`_serve`), it imports what that fresh interpreter imported (the kit, hence
Gymnasium and the package, no env family), then for each job forks a child that runs the job and
exits. The server itself never makes, resets or draws an env, so every child starts from the
state a new interpreter had at that point: no env made, no family imported, no GL context, no
thread; a job never sees what an earlier job did. (A reused process that had played other envs
would check something else, not more: it misses "the first env made in a process differs", and
catches order-dependent bytes only by chance.)

The server runs with a ``PYTHONHASHSEED`` other than its owner's, so a child's str hashing differs
from the owner's (what ``determinism`` needs). It dies with its owner: it is a
:func:`rl4vlm_gym.processes.popen` child (its process group, the jobs' children included, is killed
by the owner's watchdog even when the owner is SIGKILLed), it exits when its request pipe closes,
and it is killed at the owner's interpreter exit. A job that crashes its child (a segfault, an
``os._exit``) is reported with the tail of the child's output; a server that died or that had to
be killed (a job past its timeout) is started again on the next job.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from rl4vlm_gym import processes

__all__ = ["ForkServer", "fork_server"]

_HEADER = struct.Struct("!cQ")  # a message: its kind and its length, then its bytes
_OUTPUT_TAIL = 3000
"""How much of a crashed job's output (its stdout and stderr) its error message quotes."""


def _write(fd: int, kind: bytes, payload: bytes) -> None:
    view = memoryview(_HEADER.pack(kind, len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int, size: int, deadline: float | None = None) -> bytes | None:
    """``size`` bytes from ``fd``, or None at end of file; TimeoutError past ``deadline`` (``time.monotonic``)."""
    chunks, left = [], size
    while left:
        if deadline is not None and not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_message(fd: int, deadline: float | None = None) -> tuple[bytes, bytes] | None:
    header = _read(fd, _HEADER.size, deadline)
    if header is None:
        return None
    kind, size = _HEADER.unpack(header)
    payload = _read(fd, size, deadline)
    return None if payload is None else (kind, payload)


# -- the server (runs in its own process) ------------------------------------------------------------


def _serve() -> None:
    """Read jobs from stdin until it closes; run each in a forked child; reply on the original stdout."""
    replies = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # nothing the server or a job prints can reach the reply pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the owner decides when it stops
    while (request := _read_message(0)) is not None:
        _write(replies, *_run_job(request[1], replies, devnull))


def _run_job(payload: bytes, replies: int, devnull: int) -> tuple[bytes, bytes]:
    """Fork a child that runs the job; ``R`` and its pickled result, or ``D`` if it died without one."""
    with tempfile.TemporaryFile() as output:
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(result_r)
            os.close(replies)
            os.dup2(devnull, 0)  # a job reading stdin must not eat the next requests
            os.dup2(output.fileno(), 1)
            os.dup2(output.fileno(), 2)
            _child(payload, result_w)
        os.close(result_w)
        result, status = _collect(pid, result_r)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and result:
            return b"R", result
        output.seek(max(0, output.seek(0, os.SEEK_END) - _OUTPUT_TAIL))
        tail = output.read().decode("utf-8", "replace")
        how = (
            f"was killed by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"exited with code {os.waitstatus_to_exitcode(status)}"
        )
        return b"D", pickle.dumps((how, tail))


def _collect(pid: int, result_r: int) -> tuple[bytes, int]:
    """The child's result and exit status. Read until the child has exited, not until end of file: a
    process the job forked and left running (a worker, a browser) may hold the pipe open."""
    chunks, status, end = [], None, False
    with os.fdopen(result_r, "rb", buffering=0) as pipe:
        while status is None:
            if not end and select.select([pipe], [], [], 0.05)[0]:
                chunk = pipe.read(1 << 20)
                if chunk:
                    chunks.append(chunk)
                    continue
                end = True
            done, status_now = os.waitpid(pid, 0 if end else os.WNOHANG)
            if done:
                status = status_now
        os.set_blocking(pipe.fileno(), False)
        while chunk := pipe.read(1 << 20):  # None when empty but held open, b"" at end of file
            chunks.append(chunk)
    return b"".join(chunks), status


def _child(payload: bytes, result_w: int) -> None:
    code = 0
    try:
        path, cwd, environ, job = pickle.loads(payload)  # builtins only: the job's modules load below
        sys.path[:] = path
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python process
        try:
            function, args = pickle.loads(job)
            data = pickle.dumps((True, function(*args)))
        except BaseException as err:  # noqa: BLE001 - the owner raises it
            try:
                data = pickle.dumps((False, pickle.dumps(err), traceback.format_exc()))
            except Exception:  # noqa: BLE001 - an unpicklable exception: its traceback is enough
                data = pickle.dumps((False, None, traceback.format_exc()))
        with os.fdopen(result_w, "wb") as pipe:
            pipe.write(data)
    except BaseException:  # noqa: BLE001 - reported by the server as a death, with this output
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)  # not the server's atexit handlers, nor its buffers flushed twice


# -- the owner's side -------------------------------------------------------------------------------


class ForkServer:
    """The owner's handle on its fork server: :meth:`call` runs ``function(*args)`` in a fresh child.

    ``function`` and ``args`` must pickle (by reference: a module-level function); the child gets
    this process's ``sys.path``, working directory and environment (``PYTHONHASHSEED`` aside, fixed
    when the server started: see :attr:`hash_seed`). One job runs at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owned: processes.Owned | None = None
        self.hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
        """The server's ``PYTHONHASHSEED``: unset or ``random``, the owner's hashing is random, so "1" differs from it."""

    @property
    def pid(self) -> int | None:
        """The server's pid, or None before the first job (and after it was stopped)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def call(self, function: Callable[..., Any], *args: Any, timeout: float, what: str) -> Any:
        """``function(*args)`` in a fresh child; its exception is raised here. ``what`` names the job
        in the errors: its child crashed, or it took longer than ``timeout`` seconds."""
        return self.start(function, *args, what=what).result(timeout)

    def start(self, function: Callable[..., Any], *args: Any, what: str) -> Job:
        """Send the job and return at once (the owner works meanwhile); :meth:`Job.result` waits for it."""
        self._lock.acquire()
        try:
            job = pickle.dumps((function, args))
            payload = pickle.dumps((list(sys.path), os.getcwd(), dict(os.environ), job))
            for attempt in range(2):
                proc = self._running()
                try:
                    assert proc.stdin is not None
                    _write(proc.stdin.fileno(), b"J", payload)
                    break
                except OSError:  # it died since its last job: start another one
                    self.stop()
                    if attempt:
                        raise
            return Job(self, what)
        except BaseException:
            self._lock.release()
            raise

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self.stop()
            env = {**os.environ, "PYTHONHASHSEED": self.hash_seed}
            self._proc, self._owned = processes.popen(
                [sys.executable, "-c", "from rl4vlm_gym.testing.fresh import _serve; _serve()"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
        return self._proc

    def stop(self) -> None:
        """Kill the server and whatever job it runs (their process group); the next job starts another."""
        proc, owned, self._proc, self._owned = self._proc, self._owned, None, None
        if owned is not None:
            owned.close()
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]
            proc.wait()

    def _forget_after_fork(self) -> None:
        """In a forked child: the parent's server is not ours (and our copy of its pipe must not keep it alive)."""
        if self._proc is not None:
            for pipe in (self._proc.stdin, self._proc.stdout):
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()  # type: ignore[union-attr]
        self._proc, self._owned, self._lock = None, None, threading.Lock()


class Job:
    """A job sent to a :class:`ForkServer`; :meth:`result` (or :meth:`cancel`) must be called once."""

    def __init__(self, server: ForkServer, what: str) -> None:
        self._server, self._what, self._done = server, what, False

    def result(self, timeout: float) -> Any:
        """Wait up to ``timeout`` seconds for the job; return its value or raise its exception."""
        server, self._done = self._server, True
        try:
            proc = server._proc
            assert proc is not None and proc.stdout is not None
            try:
                reply = _read_message(proc.stdout.fileno(), time.monotonic() + timeout)
            except TimeoutError:
                server.stop()
                raise AssertionError(
                    f"{self._what} did not finish within {timeout:g} s (its fresh process was killed)"
                ) from None
            except BaseException:  # e.g. KeyboardInterrupt: the reply would be out of step with the next job
                server.stop()
                raise
            if reply is None:
                server.stop()
                raise AssertionError(
                    f"{self._what}: the kit's fork server died (exit code {proc.returncode}); it is started again"
                )
        finally:
            server._lock.release()
        kind, payload = reply
        if kind == b"D":
            how, tail = pickle.loads(payload)
            raise AssertionError(f"{self._what}: its fresh process {how} before answering; its last output:\n{tail}")
        ok, value, *detail = pickle.loads(payload)
        if ok:
            return value
        try:
            error = pickle.loads(value)
        except Exception:  # noqa: BLE001 - None, or an exception that cannot be rebuilt here: its traceback says it
            raise AssertionError(f"{self._what} failed in its fresh process:\n{detail[0]}") from None
        error.add_note(f"(raised in {self._what}'s fresh process:\n{detail[0].rstrip()})")
        raise error

    def cancel(self) -> None:
        """Give up on the job (the owner failed meanwhile): the server is killed, not waited for."""
        if not self._done:
            self._done = True
            self._server.stop()
            self._server._lock.release()


_server: ForkServer | None = None
_server_lock = threading.Lock()


def fork_server() -> ForkServer:
    """This process's fork server (started by its first job; killed at exit)."""
    global _server  # noqa: PLW0603 - one per process, made on first use
    with _server_lock:
        if _server is None:
            _server = ForkServer()
            atexit.register(_server.stop)
        return _server


def _after_fork_in_child() -> None:
    if _server is not None:
        _server._forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
