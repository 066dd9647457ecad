"""No family's library takes SIGTERM away from the process that renders it.

SDL (under Gymnasium's and PettingZoo's pygame renderers) installs a C handler for SIGTERM at its
start-up (and for SIGINT, where Python's own handler is not already there), which turns it into a quit
event that no renderer of ours reads: a process that had drawn one FrozenLake frame outlived SIGTERM,
so a vector env's ``close(terminate=True)`` or a scheduler's stop could not end it. Each test renders
in a fresh process, then signals it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

READY_TIMEOUT_S = 120.0  # making and resetting the envs (a GL world, a game compiled) on a loaded machine
DEATH_TIMEOUT_S = 20.0  # the default SIGTERM action is immediate; a handled one may close what it owns first

_CHILD = textwrap.dedent(
    """
    import sys, time
    import gymnasium as gym
    import rl4vlm_gym

    envs = [gym.make(env_id, render_mode="rgb_array") for env_id in sys.argv[1:]]
    for env in envs:
        env.reset(seed=0)
        assert env.render().ndim == 3
    print("ready", flush=True)
    time.sleep(600)
    """
)


def _rendered(env_ids: list[str]) -> subprocess.Popen[str]:
    """A fresh process that has rendered each of ``env_ids``, waiting."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, *env_ids], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # returns at "ready" or when the child dies
        assert line == "ready\n", f"the child did not get ready: {line!r} {child.stderr.read() if child.stderr else ''}"
    except BaseException:
        child.kill()
        child.wait()
        raise
    return child


def _ended_by(child: subprocess.Popen[str], sig: signal.Signals) -> int:
    child.send_signal(sig)
    try:
        return child.wait(timeout=DEATH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        pytest.fail(f"the process outlived {sig.name} by {DEATH_TIMEOUT_S:.0f} s: a library took over the signal")


def test_sigterm_ends_a_process_that_rendered_frozenlake() -> None:
    assert _ended_by(_rendered(["rl4vlm/FrozenLake-v0"]), signal.SIGTERM) == -signal.SIGTERM


def _one_id_per_family() -> list[str]:
    import rl4vlm_gym

    first: dict[str, str] = {}
    for card in rl4vlm_gym.list_envs():
        first.setdefault(card.family, card.id)
    return sorted(first.values())


@pytest.mark.slow
def test_sigterm_ends_a_process_that_rendered_every_family() -> None:
    ids = _one_id_per_family()
    assert len(ids) >= 9  # every family of the registry, FrozenLake's and the browser-less shop's included
    assert _ended_by(_rendered(ids), signal.SIGTERM) == -signal.SIGTERM


_VECTOR_CHILD = textwrap.dedent(
    """
    import sys, time
    import gymnasium as gym
    import rl4vlm_gym

    for env_id in sys.argv[1:]:
        envs = gym.vector.AsyncVectorEnv([lambda: gym.make(env_id)] * 2)  # Gymnasium's default: fork on Linux
        envs.reset(seed=0)  # each worker renders its first frame
        start = time.monotonic()
        envs.close(terminate=True)  # SIGTERM to the workers, then join them
        # The signal must end them: a worker that swallowed it leaves only when the pipes close,
        # which a sibling forked later keeps open (and a busy worker never reads).
        codes = ",".join(str(process.exitcode) for process in envs.processes)
        print(env_id, round(time.monotonic() - start, 3), codes, flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start method on Linux only")
def test_a_vector_env_of_every_family_closes_with_terminate() -> None:
    ids = _one_id_per_family()
    child = subprocess.Popen(
        [sys.executable, "-c", _VECTOR_CHILD, *ids],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # with its forked workers: a hang is killed whole
    )
    try:
        out, err = child.communicate(timeout=READY_TIMEOUT_S + DEATH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        pytest.fail(f"close(terminate=True) hung after closing {[line.split()[0] for line in out.splitlines()]}")
    assert child.returncode == 0, err[-3000:]
    closed = {env_id: (float(seconds), codes) for env_id, seconds, codes in (line.split() for line in out.splitlines())}
    assert sorted(closed) == ids
    assert all(seconds < DEATH_TIMEOUT_S for seconds, _ in closed.values()), closed
    sigterm = f"{-signal.SIGTERM},{-signal.SIGTERM}"
    assert {env_id: codes for env_id, (_, codes) in closed.items() if codes != sigterm} == {}, "workers not ended by SIGTERM"
