"""Jobs for the kit's fork server in ``test_fresh.py`` (module-level functions: a job pickles by reference)."""

from __future__ import annotations

import os
import sys
import time

_SEEN: list[str] = []


def identity() -> tuple[int, int, int]:
    """This process's pid, its parent's (the server) and ``hash("walk")`` under its str hashing."""
    return os.getpid(), os.getppid(), hash("walk")


def remember(word: str) -> tuple[list[str], bool]:
    """Keep ``word`` at module level and import an env's module: what a next job must not see."""
    import rl4vlm_gym.envs.frozenlake.frozen_lake  # noqa: F401 - imported to be seen (or not) by the next job

    _SEEN.append(word)
    return list(_SEEN), "rl4vlm_gym.envs.frozenlake.frozen_lake" in sys.modules


def seen() -> tuple[list[str], bool]:
    return list(_SEEN), "rl4vlm_gym.envs.frozenlake.frozen_lake" in sys.modules


def crash(signal_number: int) -> None:
    print("about to crash", flush=True)
    os.kill(os.getpid(), signal_number)


def fail() -> None:
    raise ValueError("a job's own error, raised in its owner")


def sleep_then_pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()
