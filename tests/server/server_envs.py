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
GATED_ID = "servertest/GatedNumberLine-v0"
"""SlowNumberLine whose steps wait at the gate (the operator's kwargs: no client may set them)."""
GATED_DESCRIBE_ID = "servertest/GatedDescribeNumberLine-v0"
"""SlowNumberLine whose ``describe()`` (what the server's state computes) waits at the gate once a step was taken."""
GATED_CLOSE_ID = "servertest/GatedCloseNumberLine-v0"
"""SlowNumberLine whose ``close()`` waits at the gate (a browser closing)."""


# A gated step (``gated=True``; the server in this process: Starlette's TestClient) sets STEPPING, then waits
# until the test sets OPEN: a step that lasts exactly as long as the test needs, with no sleep.
STEPPING, OPEN = threading.Event(), threading.Event()


class SlowNumberLine(NumberLine):
    """Each step takes ``delay`` seconds (a slow simulator), or with ``gated`` waits for ``OPEN``; with
    ``gated_describe``, ``describe()`` waits for ``OPEN`` once a step was taken (a slow oracle or render:
    what the server's state computes)."""

    def __init__(
        self, *, delay: float = 0.0, gated: bool = False, gated_describe: bool = False, gated_close: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.delay, self.gated, self.gated_describe, self.gated_close = delay, gated, gated_describe, gated_close

    def close(self) -> None:
        if self.gated_close:
            self.gated_close = False
            STEPPING.set()
            assert OPEN.wait(60), "the test never opened the gate"
        super().close()

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
    gym.register(GATED_ID, entry_point=f"{__name__}:SlowNumberLine", kwargs={"gated": True})
    gym.register(GATED_DESCRIBE_ID, entry_point=f"{__name__}:SlowNumberLine", kwargs={"gated_describe": True})
    gym.register(GATED_CLOSE_ID, entry_point=f"{__name__}:SlowNumberLine", kwargs={"gated_close": True})
    return [SLOW_ID, PROC_ID, GATED_ID, GATED_DESCRIBE_ID, GATED_CLOSE_ID]


def catalog(*ids: str, expose_oracle: bool = False) -> Any:
    """A :class:`~rl4vlm_gym.server.environment.Catalog` serving ``ids`` as registered (a reset names which)."""
    from rl4vlm_gym.server.environment import Catalog

    return Catalog(
        {i: (i, {}) for i in ids}, default=ids[0] if len(ids) == 1 else None, expose_oracle=expose_oracle, title="test envs"
    )
