"""Run a function in a forked child process under a wall-clock and an address-space bound.

ALFWorld's planner expert (Fast Downward, in C through ctypes) can search for minutes and grow to
gigabytes on a few games; in-process it can be neither interrupted nor capped. A forked child
inherits the loaded game as it stands, plans under ``RLIMIT_AS`` and sends the result back through
a pipe; the parent kills it when the time is up. The child dies with its parent, SIGKILL included
(``PR_SET_PDEATHSIG`` on Linux). We fork by hand rather than through ``multiprocessing``: its
pools and spawn contexts would pickle the game, which lives in C.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import logging
import os
import pickle
import resource
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["BoundExceeded", "call_bounded"]

logger = logging.getLogger(__name__)
T = TypeVar("T")
_PR_SET_PDEATHSIG = 1
_WATCH_S = 0.005  # how often the child's watchdog reads its resident memory


class BoundExceeded(RuntimeError):
    """The call ran out of time or memory (or failed) in its child process."""


def call_bounded(fn: Callable[[], T], *, seconds: float, memory_mb: int) -> T:
    """``fn()`` computed in a forked child that gets ``seconds`` of wall-clock time and
    ``memory_mb`` MiB of address space beyond what the parent had mapped; its result must pickle.

    Raises:
        BoundExceeded: the child took too long, ran out of memory or raised.
    """
    if not hasattr(os, "fork"):  # no fork (Windows): run unbounded rather than not at all
        logger.warning("no fork on this platform: running %s without a time or memory bound", fn)
        return fn()
    parent = os.getpid()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(fn, parent, read_fd, write_fd, memory_mb)
    os.close(write_fd)
    data = None
    try:
        data = _read(read_fd, time.monotonic() + seconds)
    finally:
        os.close(read_fd)
        if data is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if data is None:
        raise BoundExceeded(f"gave up after {seconds:g} s")
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not data:
        raise BoundExceeded(f"the child failed ({_status(status)}), within {memory_mb} MiB of memory")
    return pickle.loads(data)  # noqa: S301 - our own child's bytes


def _child(fn: Callable[[], object], parent: int, read_fd: int, write_fd: int, memory_mb: int) -> None:
    code = 1
    try:
        os.close(read_fd)
        _die_with_parent(parent)
        faulthandler.disable()  # the parent reports failures; a child's crash dump is noise
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        limit = _limit_memory(memory_mb)
        result = fn()
        if limit is not None and _peak_resident() > limit:  # grew past the bound between two watchdog reads
            return
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent sees a failed child; nothing else may run here
        pass
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _limit_memory(memory_mb: int) -> int | None:
    """Bound the child to ``memory_mb`` MiB beyond what it starts with, whatever its parent did before.

    The child starts with all of its parent's mappings (gigabytes of libraries and reserved arenas,
    and heap the parent freed but kept). ``RLIMIT_AS`` caps new mappings at what is mapped now plus
    ``memory_mb``, but freed heap is reused without a new mapping, so alone it would grant the
    parent's slack too (more after a long-running process has freed more). So the child first gives
    its free heap pages back (``malloc_trim``); its resident memory may then grow by ``memory_mb``
    (reused pages fault in again and count): a watchdog thread ends it past that, and its peak is
    checked once more when ``fn`` returns. Returns that resident limit (None without procfs)."""
    try:
        mapped, resident = _statm()
    except OSError:  # no procfs: cap the new memory only where the OS tells us the size
        return None
    limit = mapped + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with contextlib.suppress(OSError, AttributeError):  # glibc only; elsewhere the address-space cap alone
        ctypes.CDLL(None).malloc_trim(0)
        _, resident = _statm()
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak resident size (VmHWM) starts again from now
    resident_limit = resident + memory_mb * 2**20
    threading.Thread(target=_watch_resident, args=(resident_limit,), daemon=True).start()
    return resident_limit


def _peak_resident() -> int:
    """The process's peak resident bytes since its last reset (VmHWM), 0 if unknown."""
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _statm() -> tuple[int, int]:
    """The process's mapped and resident bytes."""
    with open("/proc/self/statm") as statm:
        size, resident = statm.read().split()[:2]
    return int(size) * resource.getpagesize(), int(resident) * resource.getpagesize()


def _watch_resident(limit: int) -> None:
    """End the child (a failed call) once its resident memory passes ``limit`` bytes. The planner runs
    in C through ctypes, which releases the GIL, so this thread keeps running beside it."""
    while _statm()[1] <= limit:
        time.sleep(_WATCH_S)
    os._exit(1)


def _read(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes the pipe; None at the deadline."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"
