"""rl4vlm_gym.backends.ray_init: a local Ray started by a driver dies with it, even on SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

# A driver: a child of its own in its process group that nothing owns (it must survive), then a
# local Ray with an actor; prints the pids of both and waits to be killed.
DRIVER = r"""
import json, os, subprocess, sys
from rl4vlm_gym.backends.ray_init import init_ray
bystander = subprocess.Popen(["sleep", "300"])
owned = init_ray(num_cpus=1, include_dashboard=False, log_to_driver=False, _temp_dir=sys.argv[1])
import ray
actor = ray.remote(num_cpus=0)(type("A", (), {"pid": lambda self: os.getpid()})).remote()
ray.get(actor.pid.remote(), timeout=60)
print(json.dumps({"bystander": bystander.pid, "ray": [int(entry.split()[0]) for entry in owned.pids]}), flush=True)
ray.get(actor.pid.remote())  # ray works once its processes are owned
import time; time.sleep(300)
"""


def _alive(procs: list[psutil.Process]) -> list[str]:
    names = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                names.append(proc.name())
        except psutil.NoSuchProcess:
            pass
    return names


@pytest.mark.slow  # a local Ray starts (10-20 s on a loaded 2-core machine)
def test_a_sigkilled_driver_leaves_no_ray_process_and_spares_its_group() -> None:
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths live in it
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, temp], stdout=subprocess.PIPE, text=True, env=env,
                              start_new_session=True)  # fmt: skip
    bystander = None
    try:
        assert driver.stdout is not None
        made = json.loads(driver.stdout.readline())
        bystander = psutil.Process(made["bystander"])
        ray_procs = [psutil.Process(pid) for pid in made["ray"]]
        names = {p.name() for p in ray_procs}
        assert {"gcs_server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names, names
        # the agents share the driver's group: only they may die, not the group
        assert {os.getpgid(p.pid) for p in ray_procs if p.name().startswith("ray::") and "Agent" in p.name()} == {driver.pid}
        driver.send_signal(signal.SIGKILL)
        driver.wait(10)
        deadline = time.monotonic() + 15  # Ray alone leaves the agents about 60 s
        while _alive(ray_procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(ray_procs) == [], "Ray processes outlived their driver"
        assert bystander.is_running() and bystander.status() != psutil.STATUS_ZOMBIE, "an unowned group-mate was killed"
    finally:
        if driver.poll() is None:
            driver.kill()
        if bystander is not None:
            bystander.kill()
        shutil.rmtree(temp, ignore_errors=True)
