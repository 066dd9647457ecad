"""Ray's set-up: ``ray.init`` whose processes do not outlive the process calling it, and an actor's
render threads sized to the CPUs it asked for.

Without a cluster address, ``ray.init()`` starts Ray's processes as children of the calling
process (the *driver*): its GCS, raylet, monitors and the raylet's two agents. Ray ties the first ones to the driver with the
kernel's parent-death signal, so they die with it however it dies, but not the agents
(``DashboardAgent``, ``RuntimeEnvAgent``): after a SIGKILL of the driver they notice within a
second that the raylet is gone, then spend 60 s trying to report it to the dead GCS before they
exit (Ray's behaviour, not configurable). They run in the driver's own process group, which cannot
be killed for them (it may hold the driver's parent, a shell pipeline or a test runner), so
:func:`init_ray` hands the processes the start made to this package's watchdog
(:mod:`rl4vlm_gym.processes`), which kills exactly them when the driver dies.

In an actor, :func:`set_render_threads_if_unset` does for Mesa's software OpenGL what Ray does for
OpenMP (``OMP_NUM_THREADS``): an actor that asked for one CPU renders on one.
"""

from __future__ import annotations

import math
import os
from typing import Any

from rl4vlm_gym import processes

__all__ = ["init_ray", "set_render_threads_if_unset"]


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


def set_render_threads_if_unset() -> bool:
    """In a Ray actor, before its envs are made: Mesa's llvmpipe (the software OpenGL MiniWorld
    renders with) rasterizes with as many threads as the CPUs Ray assigned to the actor, unless
    ``LP_NUM_THREADS`` is set (by the user, or in the actor's ``runtime_env``). True if it set it.

    Ray sets ``OMP_NUM_THREADS`` the same way, for the same reason (ray-project/ray#6998): left alone,
    llvmpipe starts a thread per core in every process, so N actors on N cores run N x N threads,
    and one asking for one CPU uses about 1.3 (benchmarks/ray_scaling.py, docs/ray.md). One CPU
    gives ``LP_NUM_THREADS=0``, drawing on the actor's own thread; an actor asking for more CPUs
    (``num_cpus=4``) gets that many threads."""
    import ray

    # is_initialized first: get_runtime_context() would start a Ray in a plain process
    if "LP_NUM_THREADS" in os.environ or not ray.is_initialized():
        return False
    context = ray.get_runtime_context()
    if context.get_actor_id() is None:  # the driver, or a task
        return False
    threads = math.floor(context.get_assigned_resources().get("CPU", 0))
    os.environ["LP_NUM_THREADS"] = str(threads if threads > 1 else 0)
    return True
