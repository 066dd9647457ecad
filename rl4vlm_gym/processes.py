"""Child processes that never outlive their owner, and envs closed on SIGTERM.

An env that starts processes (WebShop's Chromium, a planner) must not leave them running when the
process holding the env dies: killed by SIGKILL, by a scheduler's SIGTERM, by Ray. Two mechanisms:

- :func:`popen` starts a child in its own process group and :func:`own` registers a group (and
  folders to delete) with this process's *watchdog*: a tiny Python process reading a pipe whose
  only writer is the owner. When the owner dies, however it dies, the kernel closes the pipe; the
  watchdog reads EOF, kills every registered group (and single process) with SIGKILL and deletes
  the folders. Single processes are for those that share the owner's own group, which must not be
  killed (it may hold the owner's parent): a local Ray's agents. A pipe
  rather than ``PR_SET_PDEATHSIG``: the death signal fires when the parent *thread* exits (an env
  made in a worker thread would lose its browser) and does not reach grandchildren, which
  re-parent (Chromium's zygotes and renderers). Process groups do reach them: Chromium's whole
  tree stays in chromedriver's group. The watchdog is not the owner's child (it forks once and
  its parent exits) and has its own session: a supervisor that kills a dead worker's children or
  process group with it (Ray's raylet does both) would otherwise kill the watchdog before it acts.
- :func:`close_on_sigterm` closes the registered objects on SIGTERM (an :class:`Owned` closes
  by killing its group: no polite shutdown that a signal arriving mid-call could deadlock), then
  dies of SIGTERM as if no handler were there. The handler is installed when the first object is
  registered, from the main thread, and only over the default action: a handler of the user's (or ``SIG_IGN``) is
  kept and a warning says so; call :func:`close_all` from it. Children are still killed by the
  watchdog either way.

After ``fork`` (Gymnasium's ``AsyncVectorEnv``) the child drops the parent's registrations and
its copy of the pipe, so it neither closes the parent's envs nor keeps the parent's watchdog
waiting; envs the child makes get the child's own watchdog.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Owned", "close_all", "close_on_sigterm", "kill_group", "own", "popen"]

logger = logging.getLogger(__name__)

# The watchdog: stdlib only, started with -I -S (about 15 ms, 8 MiB). It forks, the parent
# prints the child's pid and exits: the child (the watchdog) is re-parented away from the owner.
# Lines "+G pgid", "-G pgid", "+D path", "-D path", "+P pid start", "-P pid start" keep the
# register; EOF means the owner is gone. A process is killed only if its start time (field 22 of
# /proc/PID/stat) is still the registered one: its pid may have been reused since (the same test
# as _start_time's, which the watchdog cannot import).
_WATCHDOG = r"""
import os, shutil, signal, sys
def start_time(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[19].decode()
    except (OSError, IndexError):
        return None
pid = os.fork()
if pid:
    sys.stdout.write(f"{pid}\n")
    sys.stdout.flush()
    os._exit(0)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
groups, paths, pids = set(), set(), set()
for line in sys.stdin.buffer:
    op, _, arg = line.rstrip(b"\n").decode("utf-8", "surrogateescape").partition(" ")
    target = {"G": groups, "D": paths, "P": pids}[op[1:]]
    (target.add if op[0] == "+" else target.discard)(arg)
for pgid in groups:
    try:
        os.killpg(int(pgid), signal.SIGKILL)
    except OSError:
        pass
for entry in pids:
    pid, _, start = entry.partition(" ")
    if start_time(pid) == start:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
for path in paths:
    shutil.rmtree(path, ignore_errors=True)
"""


class _Closeable(Protocol):
    def close(self) -> None: ...


@dataclass
class _Watchdog:
    """The watchdog's pid and the write end of its pipe (it is not our child: no Popen to poll)."""

    pid: int
    stdin: Any


@dataclass
class _State:
    """This process's watchdog and registrations (reset in a forked child)."""

    pid: int = -1
    watchdog: _Watchdog | None = None
    lines: dict[str, int] = field(default_factory=dict)  # registered line -> count
    closeables: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    warned: bool = False


_lock = threading.RLock()
_state = _State(pid=os.getpid())


def _after_fork_in_child() -> None:
    global _state, _lock
    if _state.watchdog is not None and _state.watchdog.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            _state.watchdog.stdin.close()  # the parent's pipe: its watchdog must see EOF when the parent dies
    _lock = threading.RLock()
    _state = _State(pid=os.getpid())


os.register_at_fork(after_in_child=_after_fork_in_child)


def _start_watchdog() -> _Watchdog:
    # Its own session: a Ctrl-C or a SIGTERM sent to the owner's process group does not reach it.
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    pid = proc.stdout.readline()
    proc.stdout.close()
    proc.wait()  # the launching parent exits at once
    if not pid.strip().isdigit():
        raise OSError("the watchdog did not start")
    for line in _state.lines:  # a restarted watchdog learns what the dead one knew
        proc.stdin.write(b"+" + line.encode("utf-8", "surrogateescape") + b"\n")
    proc.stdin.flush()
    return _Watchdog(int(pid), proc.stdin)


def _send(line: str) -> None:
    """Tell the watchdog ``line``, (re)starting it when needed. Caller holds the lock."""
    for _ in range(2):
        try:
            if _state.watchdog is None:
                _state.watchdog = _start_watchdog()
            # a dead watchdog holds no read end: the write fails (EPIPE) and another one is started
            _state.watchdog.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
            _state.watchdog.stdin.flush()
            return
        except (BrokenPipeError, OSError):
            _state.watchdog = None  # it was killed: start another one with the full register
    raise RuntimeError("rl4vlm_gym.processes: the watchdog process cannot be started")


def _change(line: str, delta: int) -> None:
    with _lock:
        count = _state.lines.get(line, 0) + delta
        if count > 0:
            _state.lines[line] = count
        else:
            _state.lines.pop(line, None)
        if delta > 0 and count == 1:
            _send("+" + line)
        elif delta < 0 and count == 0:
            _send("-" + line)


def _start_time(pid: int) -> str | None:
    """Process ``pid``'s start time (clock ticks after boot, from /proc), or None if it is gone or
    there is no /proc: with its pid it names the process, whose pid may be reused after it ends."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[19].decode()
    except (OSError, IndexError):
        return None


@dataclass(eq=False)
class Owned:
    """A process group, single processes and folders that die with this process unless
    :meth:`release`\\ d first."""

    group: int | None
    paths: tuple[str, ...]
    pids: tuple[str, ...] = ()  # "pid start time" of each process
    _pid: int = field(default_factory=os.getpid, repr=False)
    _released: bool = field(default=False, repr=False)

    def release(self) -> None:
        """Stop watching (the group was stopped and the folders deleted by their user); idempotent."""
        if self._released or self._pid != os.getpid():
            return
        self._released = True
        if self.group is not None:
            _change(f"G {self.group}", -1)
        for path in self.paths:
            _change(f"D {path}", -1)
        for pid in self.pids:
            _change(f"P {pid}", -1)

    def close(self) -> None:
        """Kill the group and the processes and delete the folders now (what the watchdog would do), then release."""
        if self._released or self._pid != os.getpid():
            return
        if self.group is not None:
            kill_group(self.group)
        for entry in self.pids:
            pid, _, start = entry.partition(" ")
            if _start_time(int(pid)) == start:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        for path in self.paths:
            shutil.rmtree(path, ignore_errors=True)
        self.release()


def own(group: int | None = None, paths: Sequence[str | os.PathLike[str]] = (), pids: Sequence[int] = ()) -> Owned:
    """Kill process group ``group`` and processes ``pids`` and delete ``paths`` when this process
    dies, until released. A process of ``pids`` that is already gone is left out; one that ends
    later is not confused with a process that reuses its pid (Linux: their start times differ)."""
    for path in (os.fspath(p) for p in paths):
        if "\n" in path:
            raise ValueError(f"a path with a newline cannot be watched: {path!r}")
    started = ((pid, _start_time(int(pid))) for pid in pids)
    owned = Owned(
        group, tuple(os.path.abspath(os.fspath(p)) for p in paths), tuple(f"{pid} {t}" for pid, t in started if t is not None)
    )
    if group is not None:
        _change(f"G {int(group)}", +1)
    for path in owned.paths:
        _change(f"D {path}", +1)
    for pid in owned.pids:
        _change(f"P {pid}", +1)
    return owned


def popen(args: Sequence[str], **kwargs: Any) -> tuple[subprocess.Popen[Any], Owned]:
    """``subprocess.Popen(args, **kwargs)`` in a new process group that dies with this process.

    Returns the process and its :class:`Owned` handle; once the process is stopped (e.g. with
    :func:`kill_group`), call ``owned.release()``.
    """
    proc = subprocess.Popen(args, start_new_session=True, **kwargs)
    return proc, own(group=proc.pid)


def kill_group(pgid: int) -> None:
    """SIGKILL process group ``pgid`` (a child started by :func:`popen` and all it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# -- SIGTERM ---------------------------------------------------------------------------------------


def close_all() -> None:
    """Close every object registered with :func:`close_on_sigterm` in this process."""
    with _lock:
        objects = list(_state.closeables)
    for obj in objects:
        try:
            obj.close()
        except Exception:  # noqa: BLE001 - closing the others matters more
            logger.exception("closing %r failed", obj)


def _on_sigterm(signum: int, frame: object) -> None:
    close_all()
    # Then die as the default action would (exit status -SIGTERM): a scheduler sees what it expects.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def close_on_sigterm(obj: _Closeable) -> None:
    """Call ``obj.close()`` when this process receives SIGTERM (``obj`` is held weakly)."""
    with _lock:
        _state.closeables.add(obj)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; the watchdog still applies
    current = signal.getsignal(signal.SIGTERM)
    if current is _on_sigterm:
        return
    if current is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
    elif not _state.warned:
        _state.warned = True
        logger.warning(
            "SIGTERM already has a handler (%r): it is kept, so envs are not closed on SIGTERM unless it calls "
            "rl4vlm_gym.processes.close_all(); their child processes are still killed when this process dies",
            current,
        )
