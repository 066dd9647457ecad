"""``ray.init`` whose processes do not outlive the process calling it.

Without a cluster address, ``ray.init()`` starts Ray's processes as children of the calling
process (the *driver*): its GCS, raylet, monitors and the raylet's two agents. Ray ties the first ones to the driver with the
kernel's parent-death signal, so they die with it however it dies, but not the agents
(``DashboardAgent``, ``RuntimeEnvAgent``): after a SIGKILL of the driver they notice within a
second that the raylet is gone, then spend 60 s trying to report it to the dead GCS before they
exit (Ray's behaviour, not configurable). They run in the driver's own process group, which cannot
be killed for them (it may hold the driver's parent, a shell pipeline or a test runner), so
:func:`init_ray` hands the processes the start made to this package's watchdog
(:mod:`rl4vlm_gym.processes`), which kills exactly them when the driver dies.
"""

from __future__ import annotations

import os
from typing import Any

from rl4vlm_gym import processes

__all__ = ["init_ray"]


def _descendants(pid: int) -> set[int]:
    """The pids of ``pid``'s children, their children and so on (from /proc; empty without it)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                ppid = int(stat.read().rpartition(b")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
        children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def init_ray(**kwargs: Any) -> processes.Owned:
    """``ray.init(**kwargs)``; the processes it starts (a local Ray's; none when it connects to a
    cluster) die with this process.

    Returns the watchdog's handle on them: ``release()`` it after ``ray.shutdown()``, which ends
    them (their pids may then be reused; the watchdog would not kill those anyway)."""
    import ray

    before = _descendants(os.getpid())
    ray.init(**kwargs)
    return processes.own(pids=sorted(_descendants(os.getpid()) - before))
