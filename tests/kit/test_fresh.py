"""The kit's fork server (``rl4vlm_gym.testing.fresh``): one long-lived process per owner whose forked
children are the fresh processes of ``determinism`` and ``vector``. It is reused, each job still runs in
a process that has made no env, a crash or a hang is reported and the server serves on (or is started
again), and it dies with its owner, however the owner dies."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rl4vlm_gym.registry import unregister
from rl4vlm_gym.testing import check_determinism, check_vector
from rl4vlm_gym.testing.fresh import ForkServer, fork_server

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the jobs and test envs import by name in the fresh processes, which get this sys.path
fresh_jobs = importlib.import_module("fresh_jobs")
kit_walk = importlib.import_module("kit_walk")
kit_laws = importlib.import_module("kit_laws")


@pytest.fixture(autouse=True, scope="module")
def _kit_envs() -> Iterator[None]:
    ids = kit_walk.register_all()
    yield
    for env in ids:
        unregister(env)


@pytest.fixture
def server() -> Iterator[ForkServer]:
    """A server of this test's own, stopped after it (the kit's shared one is left alone)."""
    own = ForkServer()
    yield own
    own.stop()


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_gone(*pids: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if all(_gone(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def test_the_server_is_reused_and_each_job_runs_in_a_new_child_with_other_str_hashing(server: ForkServer) -> None:
    first, second = (server.call(fresh_jobs.identity, timeout=60, what="identity") for _ in range(2))
    assert first[1] == second[1] == server.pid, "both jobs forked from one server"
    assert first[0] != second[0] and server.pid not in (first[0], second[0]), "each job in a child of its own"
    assert first[2] == second[2] != hash("walk"), "the children hash str alike, and not as this process does"


def test_a_job_sees_nothing_an_earlier_job_did(server: ForkServer) -> None:
    assert server.call(fresh_jobs.remember, "first", timeout=60, what="remember") == (["first"], True)
    # The server never runs a job itself: the module state and the env module the last job imported died with its child.
    assert server.call(fresh_jobs.seen, timeout=60, what="seen") == ([], False)


def test_a_jobs_exception_is_raised_in_its_owner(server: ForkServer) -> None:
    with pytest.raises(ValueError, match="a job's own error, raised in its owner"):
        server.call(fresh_jobs.fail, timeout=60, what="fail")


def test_a_crashed_job_is_reported_with_its_output_and_the_server_serves_on(server: ForkServer) -> None:
    with pytest.raises(
        AssertionError,
        match=r"crash: its fresh process was killed by signal 11 before answering; its last output:\nabout to crash",
    ):
        server.call(fresh_jobs.crash, signal.SIGSEGV, timeout=60, what="crash")
    pid = server.pid
    assert server.call(fresh_jobs.identity, timeout=60, what="identity")[1] == pid


def test_a_crashing_env_fails_the_process_checks_and_the_server_serves_on() -> None:
    env = kit_walk.env_id(kit_walk.CrashesInFreshProcess)
    with pytest.raises(
        AssertionError, match=r"(?s)rollout in a fresh process: its fresh process was killed by signal 11 .*about to crash"
    ) as caught:
        check_determinism(env)
    law = kit_laws.law_of(caught.value)  # test_kit.CAUGHT_ELSEWHERE counts on it
    assert law is not None and law.id.startswith("fresh: its fresh process {} before answering"), law
    pid = fork_server().pid
    with pytest.raises(
        AssertionError, match=r"(?s)async vector envs: its fresh process was killed by signal 11 .*about to crash"
    ):
        check_vector(env)
    assert fork_server().pid == pid
    check_determinism(kit_walk.env_id(kit_walk.Walk))


def test_a_job_past_its_timeout_is_killed_and_a_killed_server_started_again(server: ForkServer) -> None:
    # The job sleeps an hour: any timeout kills it, and a short one keeps the test short.
    with pytest.raises(AssertionError, match=r"sleep did not finish within 0.1 s \(its fresh process was killed\)"):
        server.call(fresh_jobs.sleep_then_pid, 3600, timeout=0.1, what="sleep")
    assert server.pid is None
    server.call(fresh_jobs.identity, timeout=60, what="identity")
    killed = server.pid
    assert killed is not None
    os.kill(killed, signal.SIGKILL)
    assert _wait_gone(killed)
    assert server.call(fresh_jobs.identity, timeout=60, what="identity")[1] not in (None, killed)


def test_the_first_env_of_a_process_is_caught_on_every_id_the_server_serves() -> None:
    """An env whose first instance in a process differs is caught every time, not only on the server's
    first job: a reused process that had made envs would pass it from the second id on."""
    env = kit_walk.env_id(kit_walk.FirstOfItsProcess)
    kit_walk.FirstOfItsProcess().close()  # this process has made one: its rollouts are not the first's
    for _ in range(2):
        with pytest.raises(
            AssertionError, match=r"rollouts differ across processes: .*first differ after reset\(seed=0\): the image, the text"
        ):
            check_determinism(env)


OWNER = """
import sys, time
sys.path.insert(0, {here!r})
import fresh_jobs
from rl4vlm_gym.testing.fresh import fork_server
server = fork_server()
server.call(fresh_jobs.identity, timeout=60, what="identity")
job = server.start(fresh_jobs.sleep_then_pid, 3600, what="sleep")
deadline = time.monotonic() + 60
while True:  # until the server has forked the job's process
    with open(f"/proc/{{server.pid}}/task/{{server.pid}}/children") as children:
        forked = children.read().split()
    if forked or time.monotonic() > deadline:
        break
    time.sleep(0.01)
print(server.pid, forked[0], flush=True)
if sys.argv[1] == "exit":
    sys.exit(0)  # the job still running: the interpreter's exit must end it too
time.sleep(3600)
"""


@pytest.mark.parametrize("death", ["exit", "SIGKILL"])
def test_the_server_and_its_running_job_die_with_their_owner(death: str) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(OWNER).format(here=str(HERE)), death], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        server_pid, job_pid = map(int, owner.stdout.readline().split())
        if death == "SIGKILL":
            owner.kill()
        owner.wait(60)
        assert _wait_gone(server_pid, job_pid), f"the fork server or its job outlived its owner ({death})"
    finally:
        owner.kill()
        owner.wait()


VECTOR_OWNER = """
import multiprocessing.forkserver, sys, time
from rl4vlm_gym.testing import CHECKS
CHECKS["vector"]("rl4vlm/NumberLine-v0")  # starts the forkserver that stands for spawn
print(multiprocessing.forkserver._forkserver._forkserver_pid, flush=True)
time.sleep(3600)
"""


def test_the_vector_checks_forkserver_dies_with_its_owner_under_sigkill() -> None:
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(VECTOR_OWNER)], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        forkserver_pid = int(owner.stdout.readline())
        assert not _wait_gone(forkserver_pid, within=0.5), "the forkserver lives while its owner does"
        owner.kill()
        owner.wait(60)
        assert _wait_gone(forkserver_pid), "the vector check's forkserver outlived its owner (SIGKILL)"
    finally:
        owner.kill()
        owner.wait()
