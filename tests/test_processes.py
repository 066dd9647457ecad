"""rl4vlm_gym.processes: children die with their owner (SIGKILL, SIGTERM, after fork); SIGTERM closes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rl4vlm_gym import processes

psutil = pytest.importorskip("psutil", reason="looking at process groups needs psutil (the webshop extra installs it)")

# An owner: starts a child group (a shell and two grandchildren), owns a folder, prints what it made
# and waits to be killed. The first argument selects a variant.
OWNER = r"""
import json, multiprocessing, os, signal, sys, tempfile, time
from rl4vlm_gym import processes
variant, marker = sys.argv[1], sys.argv[2]
if variant == "user-handler":
    def mine(signum, frame):
        open(marker + ".user", "w").close()
        os._exit(3)
    signal.signal(signal.SIGTERM, mine)
proc, owned = processes.popen(["sh", "-c", "sleep 300 & sleep 300 & wait"])
folder = tempfile.mkdtemp(prefix="rl4vlm-test-owned-")
owned_folder = processes.own(paths=[folder])
class Env:
    def close(self):
        open(marker + ".closed", "w").close()
env = Env()
processes.close_on_sigterm(env)
forked = None
if variant == "fork":
    forked = multiprocessing.get_context("fork").Process(target=time.sleep, args=(300,))
    forked.start()
time.sleep(0.3)  # the shell has started its sleeps
print(json.dumps({"group": proc.pid, "folder": folder, "forked": forked.pid if forked else None}), flush=True)
time.sleep(300)
"""


def _members(pgid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.Error, ProcessLookupError):
            pass
    return found


def _within(holds: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether ``holds()`` comes true within ``timeout`` seconds (the watchdog acts asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holds():
            return True
        time.sleep(0.05)
    return False


def _gone(pgid: int, timeout: float = 10.0) -> bool:
    return _within(lambda: not _members(pgid), timeout)


def _start_owner(variant: str, tmp_path: Path) -> tuple[subprocess.Popen[str], dict]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, variant, str(tmp_path / "marker")], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    made = json.loads(owner.stdout.readline())
    assert len(_members(made["group"])) == 3, "the shell and its two sleeps run in their own group"
    assert os.path.isdir(made["folder"])
    return owner, made


@pytest.mark.parametrize("variant", ["plain", "fork"])
def test_sigkill_of_the_owner_kills_its_group_and_deletes_its_folder(variant: str, tmp_path: Path) -> None:
    owner, made = _start_owner(variant, tmp_path)
    try:
        owner.send_signal(signal.SIGKILL)
        assert owner.wait(10) == -signal.SIGKILL
        # with "fork", a forked child of the owner is still alive: it must not keep the watchdog waiting
        assert _gone(made["group"]), f"survivors: {[p.name() for p in _members(made['group'])]}"
        # the watchdog deletes the folder after the group is dead: under load, a moment later
        assert _within(lambda: not os.path.exists(made["folder"])), "the folder outlived its owner"
        assert not (tmp_path / "marker.closed").exists(), "SIGKILL runs no handler"
    finally:
        if made["forked"]:
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(made["forked"]).kill()


def test_sigterm_closes_the_registered_objects_then_dies_of_sigterm(tmp_path: Path) -> None:
    owner, made = _start_owner("plain", tmp_path)
    owner.send_signal(signal.SIGTERM)
    assert owner.wait(10) == -signal.SIGTERM, "the default action after closing: a scheduler sees SIGTERM"
    assert (tmp_path / "marker.closed").exists()
    assert _gone(made["group"]) and _within(lambda: not os.path.exists(made["folder"]))


def test_a_users_sigterm_handler_is_kept_and_children_still_die(tmp_path: Path) -> None:
    owner, made = _start_owner("user-handler", tmp_path)
    owner.send_signal(signal.SIGTERM)
    assert owner.wait(10) == 3
    assert (tmp_path / "marker.user").exists() and not (tmp_path / "marker.closed").exists()
    assert _gone(made["group"]) and _within(lambda: not os.path.exists(made["folder"]))


def test_released_groups_are_not_killed_and_close_kills_now(tmp_path: Path) -> None:
    proc, owned = processes.popen(["sleep", "300"])
    kept, kept_owned = processes.popen(["sleep", "300"])
    try:
        owned.close()
        assert proc.wait(10) == -signal.SIGKILL
        owned.close()  # idempotent
        kept_owned.release()
        assert kept.poll() is None
    finally:
        kept.kill()
        kept.wait()


def test_close_kills_owned_pids_now_but_not_a_process_that_reused_a_pid() -> None:
    alone = subprocess.Popen(["sleep", "300"])  # its own group would survive a group kill: only the pid kill reaches it
    other = subprocess.Popen(["sleep", "300"])
    try:
        owned = processes.own(pids=[alone.pid])
        reused = processes.own(pids=[other.pid])
        # as if `other` had ended and its pid had gone to a new process: the recorded start time differs
        reused.pids = tuple(f"{entry.partition(' ')[0]} 1" for entry in reused.pids)
        owned.close()
        reused.close()
        assert alone.wait(10) == -signal.SIGKILL
        assert other.poll() is None, "a process that only shares the pid was killed"
    finally:
        for proc in (alone, other):
            proc.kill()
            proc.wait()


def test_a_killed_watchdog_is_replaced_with_the_full_register(tmp_path: Path) -> None:
    script = r"""
import json, os, signal, sys, time
from rl4vlm_gym import processes
first, _ = processes.popen(["sleep", "300"])
import psutil
watchdog = psutil.Process(processes._state.watchdog.pid)
os.kill(watchdog.pid, signal.SIGKILL)
psutil.wait_procs([watchdog], timeout=10)
second, _ = processes.popen(["sleep", "300"])  # starts a new watchdog that knows about `first` too
print(json.dumps([first.pid, second.pid]), flush=True)
time.sleep(300)
"""
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    groups = json.loads(owner.stdout.readline())
    owner.kill()
    owner.wait(10)
    assert all(_gone(g) for g in groups)


def test_paths_with_newlines_are_refused() -> None:
    with pytest.raises(ValueError, match="newline"):
        processes.own(paths=["a\nb"])
