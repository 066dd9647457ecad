"""No family's library takes SIGTERM away from the process that renders it.

SDL (under Gymnasium's and PettingZoo's pygame renderers) installs a C handler for SIGTERM at its
start-up (and for SIGINT, where Python's own handler is not already there), which turns it into a quit
event that no renderer of ours reads: a process that had drawn one FrozenLake frame outlived SIGTERM,
so a vector env's ``close(terminate=True)`` or a scheduler's stop could not end it. Each test renders
in a fresh process, then signals it.
"""

from __future__ import annotations

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
