"""``rl4vlm-gym eval --backend ray`` on a real two-node Ray cluster on this machine: the records of
a local run, resume, and no episode lost or played twice when an actor is killed mid-episode, a
node is removed, or the driver is killed and run again.

The test process's cluster (conftest.py: a head of one CPU and a worker node of two) serves the
module, shared with test_ray_vector.py."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402

from rl4vlm_gym.harness.ray_runner import task_resources  # noqa: E402
from rl4vlm_gym.harness.runner import AgentSpec, load_episodes, run_suite  # noqa: E402
from rl4vlm_gym.harness.suite import Suite  # noqa: E402

SMALL = {
    "name": "small",
    "axis": "smoke",
    "max_steps": 6,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 0, "obs_mode": "text", "seeds": [11, 12, 13, 14]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "obs_mode": "text", "seeds": [21, 22, 23]},
    ],
}

# Agents importable in the cluster's workers (the nodes get this folder on PYTHONPATH).
AGENTS = textwrap.dedent(
    """
    import os, time
    import ray
    from rl4vlm_gym.agents.simple import RandomAgent

    class Slow(RandomAgent):
        def act(self, obs, index=0):
            time.sleep(0.1)
            return super().act(obs, index)

    class KillsItsActor(RandomAgent):
        '''Random play that, the first time it plays seed 12 (a marker file remembers; or always),
        has Ray kill its own actor at the second step: an actor killed mid-episode.'''
        def __init__(self, seed=0, marker=""):
            super().__init__(seed)
            self.marker = marker
        def begin(self, env, seed, index=0):
            self.now, self.t = seed, 0
            super().begin(env, seed, index)
        def act(self, obs, index=0):
            self.t += 1
            if self.now == 12 and self.t == 2 and (self.marker == "always" or not os.path.exists(self.marker)):
                if self.marker != "always":
                    open(self.marker, "w").close()
                ray.kill(ray.get_runtime_context().current_actor)
                time.sleep(60)  # dies here
            return super().act(obs, index)

    class HangsOnTheDoomedNode(RandomAgent):
        '''Random play. On the node started with RL4VLM_TEST_DOOMED set, the first step of an episode
        creates the marker file and hangs there (the node is removed under it). Elsewhere each
        episode first waits for the marker (up to 60 s), so that the doomed node's actor, however late
        it starts, has an episode to be playing when it goes.'''
        def __init__(self, seed=0, marker=""):
            super().__init__(seed)
            self.marker = marker
        def begin(self, env, seed, index=0):
            deadline = time.monotonic() + 60
            while not os.environ.get("RL4VLM_TEST_DOOMED") and not os.path.exists(self.marker) and time.monotonic() < deadline:
                time.sleep(0.02)
            super().begin(env, seed, index)
        def act(self, obs, index=0):
            if os.environ.get("RL4VLM_TEST_DOOMED"):
                open(self.marker, "w").close()
                time.sleep(600)  # its node is removed here
            return super().act(obs, index)
    """
)


@pytest.fixture(scope="module")
def cluster(ray_cluster: Cluster) -> Cluster:
    """The test process's cluster (conftest.py), with the agents above importable in its workers."""
    (ray_cluster.agents / "ray_fake_agents.py").write_text(AGENTS)  # type: ignore[attr-defined]
    return ray_cluster


Untimed = Callable[[list[dict[str, Any]]], list[str]]  # the `untimed` fixture (conftest.py)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory, untimed: Untimed) -> list[str]:
    out = tmp_path_factory.mktemp("local")
    run_suite(Suite.from_dict(SMALL), AgentSpec("random", {"seed": 1}), out, workers=1)
    return untimed(load_episodes(out / "episodes.jsonl"))


def _check_complete(out: Path, expected: list[str], untimed: Untimed) -> None:
    records = load_episodes(out / "episodes.jsonl")
    assert len(records) == len(expected), "an episode is missing or was saved twice"
    assert untimed(records) == expected


@pytest.mark.slow  # the cluster's start (10-20 s on a loaded 2-core machine); test_ray_vector has a quick one
def test_ray_records_equal_local_ones_and_resume(
    cluster: Cluster, local_run: list[str], tmp_path: Path, untimed: Untimed
) -> None:
    suite = Suite.from_dict(SMALL)
    records = run_suite(suite, AgentSpec("random", {"seed": 1}), tmp_path / "r", workers=2, backend="ray")
    assert [(r["task"], r["seed"]) for r in records] == suite.episodes
    _check_complete(tmp_path / "r", local_run, untimed)
    played: list[int] = []
    run_suite(
        suite,
        AgentSpec("random", {"seed": 1}),
        tmp_path / "r",
        workers=2,
        backend="ray",
        on_episode=lambda r, d, t: played.append(d),
    )
    assert played == [7] * 7  # all read back, none played again
    _check_complete(tmp_path / "r", local_run, untimed)
    # the comparison can fail: another agent seed gives other records (played here: where does not matter)
    other = run_suite(suite, AgentSpec("random", {"seed": 2}), tmp_path / "other", workers=1)
    assert untimed(other) != local_run


@pytest.mark.slow
def test_an_actor_killed_mid_episode_is_replayed(
    cluster: Cluster, local_run: list[str], tmp_path: Path, caplog, untimed: Untimed
) -> None:
    marker = tmp_path / "killed"
    agent = AgentSpec("ray_fake_agents:KillsItsActor", {"seed": 1, "marker": str(marker)})
    with caplog.at_level(logging.WARNING, logger="rl4vlm_gym.harness.ray_runner"):
        run_suite(Suite.from_dict(SMALL), agent, tmp_path / "r", workers=2, backend="ray")
    assert marker.exists(), "the actor was killed"
    assert "episode nl seed 12: its Ray actor died (ActorDiedError); replaying it from its seed" in caplog.text
    _check_complete(tmp_path / "r", local_run, untimed)


@pytest.mark.slow
def test_an_episode_that_always_kills_its_actor_is_recorded_as_failed(
    cluster: Cluster, local_run: list[str], tmp_path: Path, untimed: Untimed
) -> None:
    agent = AgentSpec("ray_fake_agents:KillsItsActor", {"seed": 1, "marker": "always"})
    records = run_suite(Suite.from_dict(SMALL), agent, tmp_path / "r", workers=2, backend="ray")
    failed = [r for r in records if r["error"]]
    assert [(r["task"], r["seed"], r["error"]) for r in failed] == [
        ("nl", 12, "the Ray actor died during this episode (3 times)")
    ]
    assert untimed([r for r in records if not r["error"]]) == [line for line in local_run if '"seed":12,' not in line]


@pytest.mark.slow
def test_a_removed_node_loses_nothing(cluster: Cluster, local_run: list[str], tmp_path: Path, caplog, untimed: Untimed) -> None:
    # The node's loss must hit an episode in flight (a loss that interrupts nothing shows nothing): its
    # actor hangs in its first episode's first step, the others wait for that before they play, and
    # the node is removed once the hanging actor says so (the marker file).
    marker = tmp_path / "hanging"
    node = cluster.add_node(num_cpus=1, env_vars={**cluster.env_vars, "RL4VLM_TEST_DOOMED": "1"})  # type: ignore[attr-defined]
    cluster.wait_for_nodes()

    def remove_when_hanging() -> None:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        cluster.remove_node(node, allow_graceful=False)

    remover = threading.Thread(target=remove_when_hanging, daemon=True)
    remover.start()
    # As many actors (one CPU each) as the cluster has CPUs (1 + 2 + 1): one of them is on the new node.
    agent = AgentSpec("ray_fake_agents:HangsOnTheDoomedNode", {"seed": 1, "marker": str(marker)})
    try:
        with caplog.at_level(logging.WARNING, logger="rl4vlm_gym.harness.ray_runner"):
            run_suite(Suite.from_dict(SMALL), agent, tmp_path / "r", workers=4, backend="ray")
    finally:
        remover.join()
    assert marker.exists(), "no actor played on the removed node"
    replayed = [line for line in caplog.text.splitlines() if "its Ray actor died" in line]
    assert len(replayed) == 1 and "replaying it from its seed" in replayed[0], caplog.text
    _check_complete(tmp_path / "r", local_run, untimed)


@pytest.mark.slow
def test_a_killed_driver_resumes(cluster: Cluster, local_run: list[str], tmp_path: Path, untimed: Untimed) -> None:
    suite_file = tmp_path / "small.yaml"
    suite_file.write_text(json.dumps(SMALL))
    out = tmp_path / "r"
    command = [sys.executable, "-m", "rl4vlm_gym.cli", "eval", "--agent", "ray_fake_agents:Slow", "-a", "seed=1", "--suite",
               str(suite_file), "--out", str(out), "--no-progress", "--no-report", "--backend", "ray", "--workers", "2",
               "--address", cluster.address]  # fmt: skip
    env = {**os.environ, **cluster.env_vars}  # type: ignore[attr-defined]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and (not episodes.exists() or episodes.read_text().count("\n") < 2):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    saved = episodes.read_text().count("\n")
    assert 2 <= saved < 7, "the driver was not killed half-way"
    # The run again, as the command runs it (run_suite, the same suite, agent and folder), from this
    # process: no second Python to start and connect. The command's own resume of a killed run is
    # tests/harness/test_runner.py's test_killed_run_resumes_to_the_same_summary.
    counts: list[int] = []
    run_suite(Suite.from_dict(SMALL), AgentSpec("ray_fake_agents:Slow", {"seed": 1}), out, workers=2, backend="ray",
              on_episode=lambda r, d, t: counts.append(d))  # fmt: skip
    assert counts == [saved] * saved + list(range(saved + 1, 8)), "the killed driver's episodes read back, the others played"
    _check_complete(out, local_run, untimed)


def test_resources_come_from_the_card_and_the_options() -> None:
    nl, browser = (Suite.from_dict({"name": "x", "axis": "smoke", "tasks": [{"name": "t", "env": e, "seeds": [1]}]}).tasks[0]
                   for e in ("rl4vlm/NumberLine-v0", "rl4vlm/WebShop-Browser-v2"))  # fmt: skip
    assert task_resources(nl) == {"num_cpus": 1}
    assert task_resources(browser) == {"num_cpus": 1, "memory": 768 * 2**20}
    assert task_resources(browser, {"num_cpus": 0.5, "num_gpus": 1}) == {"num_cpus": 0.5, "memory": 768 * 2**20, "num_gpus": 1}
