"""Test-only envs for the server's tests: NumberLine that sleeps in each step (or waits at a gate the test
opens), and one that starts a process (as WebShop starts Chromium), registered with Gymnasium under
``servertest/...`` ids."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import gymnasium as gym

from rl4vlm_gym import processes
from rl4vlm_gym.envs.cards.numberline import NumberLine

SLOW_ID = "servertest/SlowNumberLine-v0"
PROC_ID = "servertest/ProcessNumberLine-v0"


# A gated step (``gated=True``; the server in this process: Starlette's TestClient) sets STEPPING, then waits
# until the test sets OPEN: a step that lasts exactly as long as the test needs, with no sleep.
STEPPING, OPEN = threading.Event(), threading.Event()


class SlowNumberLine(NumberLine):
    """Each step takes ``delay`` seconds (a slow simulator), or with ``gated`` waits for ``OPEN``; with
    ``gated_describe``, ``describe()`` waits for ``OPEN`` once a step was taken (a slow oracle or render:
    what the server's state computes)."""

    def __init__(self, *, delay: float = 0.0, gated: bool = False, gated_describe: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay, self.gated, self.gated_describe = delay, gated, gated_describe

    def describe(self) -> str:
        if self.gated_describe and self.elapsed_steps:
            STEPPING.set()
            assert OPEN.wait(60), "the test never opened the gate"
        return super().describe()

    def _apply(self, action: str):  # type: ignore[no-untyped-def]
        if self.gated:
            STEPPING.set()
            assert OPEN.wait(60), "the test never opened the gate"
        time.sleep(self.delay)
        return super()._apply(action)


class ProcessNumberLine(NumberLine):
    """Starts a child process that lives as long as the env (killed by ``close``, or by the
    watchdog of rl4vlm_gym.processes when the owner dies)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.proc, self.owned = processes.popen([sys.executable, "-c", "import time; time.sleep(600)"])

    def close(self) -> None:
        if self.proc is not None:
            processes.kill_group(self.proc.pid)
            self.proc.wait()
            self.owned.release()
            self.proc = None
        super().close()


def register() -> list[str]:
    gym.register(SLOW_ID, entry_point=f"{__name__}:SlowNumberLine")
    gym.register(PROC_ID, entry_point=f"{__name__}:ProcessNumberLine")
    return [SLOW_ID, PROC_ID]
