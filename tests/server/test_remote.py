"""rl4vlm/Remote-v0 against the family's shared server (conftest.py's ``registry_url``: a subprocess on a free
port that dies with this process, rl4vlm_gym.processes), through openenv-core's real client: the same rollouts
as the local env, the conformance kit; and `openenv validate` against `rl4vlm-gym serve` in a process of its own."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
from gymnasium.utils.env_checker import check_env  # noqa: E402

from rl4vlm_gym import processes  # noqa: E402
from rl4vlm_gym.server.remote import RemoteError  # noqa: E402
from rl4vlm_gym.testing import rollout_digest, run_checks  # noqa: E402

ENV = "rl4vlm/NumberLine-v0"
SMALL = {"image_size": (72, 64)}


def _serve(env_id: str) -> contextlib.AbstractContextManager[str]:
    """The URL of `rl4vlm-gym serve env_id` on a free port, served for the block (serving.py's block)."""
    command = [sys.executable, "-m", "rl4vlm_gym.cli", "serve", env_id, "--port", "0", "--expose-oracle", "--max-sessions", "32"]
    return importlib.import_module("serving").served(command)


@pytest.fixture(scope="module")
def url(registry_url: str) -> str:
    """NumberLine (ENV), among every registered id, with the oracle exposed: the family's shared server."""
    return registry_url


# The openenv CLI's own entry point (what the `openenv` script runs), with openenv-core imported as our server imports
# it (rl4vlm_gym.server._openenv): without its web UI (Gradio: about 8 s of CPU) and FastMCP until used (1.2 s), which
# `validate` never uses.
OPENENV_CLI = (
    "import sys; import rl4vlm_gym.server._openenv; from openenv.cli.__main__ import main; "
    "sys.argv = ['openenv', *sys.argv[1:]]; sys.exit(main())"
)


@pytest.mark.slow  # the server of `rl4vlm-gym serve` and the openenv CLI: two fresh interpreters importing openenv-core
def test_openenv_validate_passes() -> None:
    with _serve(ENV) as url:  # one id, the default of a reset that names none (as validate's)
        done = subprocess.run(
            [sys.executable, "-c", OPENENV_CLI, "validate", url], capture_output=True, text=True, timeout=120, check=False
        )
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], done.stdout[-2000:]
    assert report["mode"] == "simulation" and report["summary"]["passed_count"] == report["summary"]["total_count"]


@pytest.mark.parametrize("image_format", ["png", "raw"])
def test_remote_rollouts_are_the_local_env_s_byte_for_byte(url, image_format) -> None:
    for seed in (0, 7):
        local = rollout_digest(ENV, seed, 25, SMALL)
        remote = rollout_digest("rl4vlm/Remote-v0", seed, 25, {"url": url, "env_id": ENV, "image_format": image_format, **SMALL})
        assert remote == local


def test_what_a_remote_env_read_once_comes_with_each_later_step_without_a_state_round_trip(url) -> None:
    env, local = gym.make("rl4vlm/Remote-v0", url=url, env_id=ENV, **SMALL), gym.make(ENV, **SMALL)
    remote, here = env.unwrapped, local.unwrapped
    client, states = remote._connected(), []
    real_state = client.state
    client.state = lambda: states.append(1) or real_state()  # the real client's state calls, counted
    try:
        env.reset(seed=3), local.reset(seed=3)
        assert remote.describe() == here.describe() and states == [1]  # read once: a round trip
        for _ in range(6):
            action = remote.oracle_action()
            assert action == here.oracle_action()
            env.step(action), local.step(action)
            assert (remote.describe(), remote.elapsed_steps, remote.admissible_actions) == (
                here.describe(),
                here.elapsed_steps,
                here.admissible_actions,
            )
            assert remote.fresh_frame_sha256() == hashlib.sha256(np.ascontiguousarray(here.fresh_render()).tobytes()).hexdigest()
        # the first read (a state: every group) and the first step's frame (not read before that step): no other
        assert len(states) == 2, f"{len(states)} state round trips, not 2"
    finally:
        env.close(), local.close()


def test_served_miniworld_sessions_one_after_another_draw_the_local_env_s_frames(registry_url) -> None:
    # The server runs each session, and closes it, in a thread of its own: GL contexts and pyglet's
    # globals once went wrong there, and the third session drew without multisampling.
    if importlib.util.find_spec("miniworld") is None:
        pytest.skip("MiniWorld is not installed (extra nav)")
    env_id, small = "rl4vlm/MiniWorld-OneRoom-v1", {"image_size": (64, 64)}
    local = rollout_digest(env_id, 0, 4, small)
    for _ in range(4):  # the shared server (conftest.py): its first MiniWorld sessions, unless another test's came first
        assert rollout_digest("rl4vlm/Remote-v0", 0, 4, {"url": registry_url, "env_id": env_id, **small}) == local


def test_remote_env_passes_gymnasium_s_check_env_in_every_obs_mode(url) -> None:
    for obs_mode in ("image+text", "image", "text"):
        env = gym.make("rl4vlm/Remote-v0", url=url, env_id=ENV, obs_mode=obs_mode, **SMALL)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped, skip_render_check=True)
        env.close()
        assert not caught, [str(w.message) for w in caught]


def test_remote_env_passes_the_kit_s_seeding_fuzz_and_pickle_checks(url) -> None:
    results = run_checks("rl4vlm/Remote-v0", ["seeding", "fuzz", "pickle"], url=url, env_id=ENV, **SMALL)
    assert all(r.passed for r in results), [(r.check, r.detail) for r in results if not r.passed]


# The kit's process checks on this NumberLine (same kwargs) run in test_kit_remote.py, from the shared server.


def test_remote_errors_name_the_problem(url) -> None:
    with pytest.raises(RemoteError, match="not served here"):
        gym.make("rl4vlm/Remote-v0", url=url, env_id="rl4vlm/Nope-v0")
    with pytest.raises(RemoteError, match="level"):
        gym.make("rl4vlm/Remote-v0", url=url, env_id=ENV, level=99)
    env = gym.make("rl4vlm/Remote-v0", url=url, env_id=ENV, **SMALL)
    with pytest.raises(gym.error.ResetNeeded):
        env.step("+")
    obs, _ = env.reset(seed=1)
    assert obs["image"].shape == (72, 64, 3) and obs["image"].dtype == np.uint8
    env.close()
    with pytest.raises(ConnectionError):
        gym.make("rl4vlm/Remote-v0", url="http://127.0.0.1:9", env_id=ENV, connect_timeout_s=2)


def test_serve_refuses_an_unknown_target() -> None:
    # The CLI's own app in this process (the url fixture runs `python -m rl4vlm_gym.cli serve` in a process of its own).
    from typer.testing import CliRunner

    from rl4vlm_gym.cli import app

    done = CliRunner().invoke(app, ["serve", "rl4vlm/Nope-v0", "--port", "0"], terminal_width=250)
    assert done.exit_code == 2 and "neither a registered env id nor a suite" in done.output, done.output
    assert isinstance(done.exception, SystemExit) and "Traceback" not in done.output


def _descendants_running(root: int, marker: str) -> set[int]:
    """Processes whose command line holds ``marker`` and whose parent chain reaches ``root``."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            if marker not in cmdline:
                continue
            pid = int(entry)
            while pid > 1:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] == "Z":
                    break
                pid = int(stat[1])
                if pid == root:
                    found.add(int(entry))
                    break
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.slow
def test_env_processes_die_with_a_killed_server() -> None:
    from websockets.sync.client import connect

    here = Path(__file__).resolve().parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import server_envs; server_envs.register(); "
        "from rl4vlm_gym.server.app import serve; serve(server_envs.PROC_ID, port=0)"
    )
    proc, owned = processes.popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" on ")[1].split()[0].replace("http", "ws") + "/ws"
        with connect(url) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0, "make_kwargs": {"image_size": [64, 64]}}}))
            assert json.loads(ws.recv(timeout=60))["type"] == "observation"
            children = _descendants_running(proc.pid, "sleep(600)")
            assert len(children) == 1
            os.kill(proc.pid, signal.SIGKILL)  # no shutdown, no close(): the watchdog must act
            proc.wait()
        deadline = time.monotonic() + 10
        while any(
            Path(f"/proc/{pid}").exists() and "sleep(600)" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
            for pid in children
        ):
            assert time.monotonic() < deadline, "the env's process outlived its killed server"
            time.sleep(0.05)
    finally:
        processes.kill_group(proc.pid)
        proc.wait()
        owned.release()


def test_the_remote_env_is_wrapped_as_gym_make_wraps_the_served_env(registry_url) -> None:
    """``make_remote`` (rl4vlm/Remote-v0's entry point) plays the served env without its TimeLimit and wraps
    it in one of the served id's length, as gym.make wraps the local class: ColourNaming's limit is one
    step, so a correct answer ends in terminated, not truncated, only where the wrapper is left out; and the
    action space samples admissible actions, as VLMEnv's does (check_env steps with them)."""
    from rl4vlm_gym.server.remote import make_remote

    env_id = "rl4vlm/ColourNaming-v0"
    local, remote = gym.make(env_id), make_remote(registry_url, env_id)
    try:
        assert isinstance(remote, gym.wrappers.TimeLimit) and remote._max_episode_steps == gym.spec(env_id).max_episode_steps == 1
        for wrapped in (False, True):
            a, b = (local, remote) if wrapped else (local.unwrapped, remote.unwrapped)
            a.reset(seed=5), b.reset(seed=5)
            a.action_space.seed(3), b.action_space.seed(3)
            action = a.action_space.sample()
            assert action in a.unwrapped.admissible_actions and b.action_space.sample() == action
            ours, theirs = a.step(action), b.step(action)
            assert theirs[1:] == ours[1:] and ours[3] is wrapped, (wrapped, ours[1:], theirs[1:])  # truncated: the wrapper's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(remote.unwrapped, skip_render_check=True)
        assert not caught, [str(w.message) for w in caught]
    finally:
        local.close()
        remote.close()
