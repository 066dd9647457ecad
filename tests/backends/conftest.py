"""One Ray cluster per test process for the Ray backend's tests (test_ray_eval, test_ray_vector).

Starting Ray is the dearest part of these tests (a GCS, a raylet per node, their agents and first
workers: 5-6 s of a clean run, 15-20 s on a loaded 2-core machine), and the modules used to start
one each. They share this one: a head of one CPU (the driver's node) and a worker node of two (an
actor asking for two CPUs must fit on one node), both on this machine, so actors anywhere in it
answer RayVectorEnv on their sockets. Each pytest-xdist worker process starts its own (Ray picks
free ports; its files live in a temp folder of its own) on the first test that asks for it, and
stops it once the process leaves this folder's tests: an idle cluster still costs about 2 s of CPU
a minute (health checks, agents' reports), too much to keep for the rest of a 12-minute run. Ray's
reaper ends its processes if the test process dies first.

Tests leave the cluster as they found it: they end their actors (a failing one too) and remove the
nodes they add. ``cluster.agents`` is a folder on the nodes' ``PYTHONPATH`` (and the driver's
``sys.path``) for agent modules the workers must import."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


class _Shared:
    """This process's cluster while it runs, and how to stop it."""

    cluster: Any = None
    stop: Callable[[], None] | None = None


def _start(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Start the cluster, connect to it and keep both in ``_Shared``."""
    import ray
    from ray.cluster_utils import Cluster

    from rl4vlm_gym.backends.ray_vector import LOCAL_RAY_CONFIG

    agents = tmp_path_factory.mktemp("ray_agents")
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths live in it
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED")}
    # Ray's own settings: its files (and the address file Cluster writes) in our folder, no auth
    # token in ~/.ray, no usage report.
    os.environ.update(RAY_TMPDIR=temp, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    env = {"PYTHONPATH": os.pathsep.join([str(agents), os.environ.get("PYTHONPATH", "")])}
    # A lost node is noticed in about a second (Ray's default: 30 s); results up to 4 MiB travel with
    # the reply, as in the local Ray RayVectorEnv starts.
    system = {
        "health_check_period_ms": 300,
        "health_check_failure_threshold": 3,
        "health_check_timeout_ms": 300,
        **LOCAL_RAY_CONFIG,
    }
    # No autoscaler monitor and no log monitor (nothing reads the workers' logs: log_to_driver=False):
    # two Python processes fewer to start (0.5 s of CPU each).
    head = {"num_cpus": 1, "include_dashboard": False, "env_vars": env, "_system_config": system, "no_monitor": True,
            "include_log_monitor": False}  # fmt: skip
    started = None
    sys.path.insert(0, str(agents))

    def stop() -> None:
        ray.shutdown()
        if started is not None:
            started.shutdown()
        sys.path.remove(str(agents))
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(temp, ignore_errors=True)

    try:
        started = Cluster(initialize_head=True, head_node_args=head)
        started.add_node(num_cpus=2, env_vars=env, wait=False)  # starts while this process connects
        ray.init(address=started.address, log_to_driver=False)
        started.wait_for_nodes(timeout=120)  # a loaded machine can take longer than the default 30 s
    except BaseException:
        stop()
        raise
    started.env_vars = env  # type: ignore[attr-defined]
    started.agents = agents  # type: ignore[attr-defined]
    _Shared.cluster, _Shared.stop = started, stop


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The running two-node ``ray.cluster_utils.Cluster`` this process is connected to (``ray.init``),
    started if it is not. Its ``env_vars`` are the environment to give a node or a driver started by
    a test, its ``agents`` the folder on their ``PYTHONPATH``."""
    pytest.importorskip("ray")
    if _Shared.stop is None:
        _start(tmp_path_factory)
    return _Shared.cluster


def _stop() -> None:
    stop, _Shared.cluster, _Shared.stop = _Shared.stop, None, None
    if stop is not None:
        stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last test of this folder that the process runs (its fixtures torn down: the
    modules' actors ended), the cluster stops; a later test here starts it again."""
    try:
        return (yield)
    finally:
        here = Path(__file__).parent
        if _Shared.stop is not None and (nextitem is None or here not in Path(str(nextitem.path)).parents):
            _stop()


def pytest_sessionfinish() -> None:
    _stop()  # a run interrupted in this folder


def _untimed(records: list[dict[str, Any]]) -> list[str]:
    """Records as JSON lines without the step timings (which differ run to run), sorted by episode."""
    lines = []
    for record in records:
        steps = [{k: v for k, v in s.items() if k not in ("agent_ms", "env_ms")} for s in record["steps"]]
        lines.append(json.dumps({**record, "steps": steps}, ensure_ascii=False, separators=(",", ":")))
    return sorted(lines)


@pytest.fixture(scope="session")
def untimed() -> Callable[[list[dict[str, Any]]], list[str]]:
    """Records as JSON lines without the step timings, sorted by episode: what a run on Ray (or a replayed
    or resumed one) must equal of a local run."""
    return _untimed
