"""The bounded child process that ALFWorld's planner runs in: results, time and memory bounds, and
a child that never outlives its owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rl4vlm_gym.envs.household.bounded import BoundExceeded, call_bounded


def test_result_comes_back_from_the_child() -> None:
    parent = os.getpid()
    pid, value = call_bounded(lambda: (os.getpid(), ["go to desk 1"] * 3), seconds=30, memory_mb=64)
    assert pid != parent and value == ["go to desk 1"] * 3


def test_time_bound_kills_the_child() -> None:
    start = time.monotonic()
    with pytest.raises(BoundExceeded, match=r"gave up after 0\.5 s"):
        call_bounded(lambda: time.sleep(60), seconds=0.5, memory_mb=64)
    assert time.monotonic() - start < 10


def test_just_within_the_time_bound_is_kept() -> None:
    assert call_bounded(lambda: time.sleep(0.2) or "done", seconds=5, memory_mb=64) == "done"


def test_memory_bound_stops_a_growing_child() -> None:
    def grow() -> int:
        return len(bytearray(256 * 2**20))  # 256 MiB

    with pytest.raises(BoundExceeded, match="within 64 MiB"):
        call_bounded(grow, seconds=30, memory_mb=64)
    assert call_bounded(grow, seconds=30, memory_mb=512) == 256 * 2**20


def test_memory_bound_counts_heap_the_owner_freed_but_kept() -> None:
    # A long-running owner (a pytest worker, a trainer) keeps freed heap mapped: the child inherits
    # it, and reusing it maps nothing new. The bound must not grant that slack (else the same call
    # passes or fails depending on what ran before in the owner).
    chunks = [bytes(1000) for _ in range(96_000)]  # ~96 MB of malloc'd chunks (too big for pymalloc)
    kept = chunks[::10]  # a chunk in ten stays alive: the freed rest is fragmented, so never trimmed
    del chunks

    def fill() -> int:
        return len([bytes(1000) for _ in range(24_000)])  # ~24 MB, fitting in the owner's slack

    try:
        with pytest.raises(BoundExceeded, match="within 8 MiB"):
            call_bounded(fill, seconds=30, memory_mb=8)
        assert call_bounded(fill, seconds=30, memory_mb=64) == 24_000
    finally:
        del kept


def test_an_error_in_the_child_is_a_bound_exceeded() -> None:
    with pytest.raises(BoundExceeded, match="exit code 1"):
        call_bounded(lambda: 1 / 0, seconds=30, memory_mb=64)


def _state(pid: int) -> str | None:
    """The process's state letter (``Z``: a zombie), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_child_dies_when_its_owner_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, time
            from pathlib import Path
            from rl4vlm_gym.envs.household.bounded import call_bounded

            def work():
                Path({str(pid_file)!r}).write_text(str(os.getpid()))
                time.sleep(600)

            call_bounded(work, seconds=600, memory_mb=64)
        """)],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()):
            assert owner.poll() is None and time.monotonic() < deadline, "the owner never started its child"
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert _state(child) not in (None, "Z")
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        deadline = time.monotonic() + 20
        while _state(child) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(child) in (None, "Z"), "the child outlived its owner"
    finally:
        owner.kill()
        owner.wait()
        if pid_file.exists() and pid_file.read_text() and _state(int(pid_file.read_text())) not in (None, "Z"):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the child this test started, had it survived
