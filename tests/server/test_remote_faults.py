"""rl4vlm/Remote-v0 when things go wrong (issue 37): a timed-out request, a session the server reaped while
idle, a full server, a refused token, a refused message. Each against a real server (openenv-core's app of
``create_app``, served by uvicorn in a thread of this process on a free port: no interpreter to start) and
the real client; results after a recovery are compared with the local env's."""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
import server_envs  # noqa: E402 - tests/server (conftest.py puts it on the path)
from openenv.core.sync_client import SyncEnvClient  # noqa: E402
from serving import served_app  # noqa: E402

from rl4vlm_gym import processes  # noqa: E402
from rl4vlm_gym.server.environment import Catalog  # noqa: E402
from rl4vlm_gym.server.models import MAX_ACTION_CHARS  # noqa: E402
from rl4vlm_gym.server.remote import (  # noqa: E402
    SERVER_TOKEN_ENV,
    RemoteArgumentError,
    RemoteAuthError,
    RemoteCapacityError,
    RemoteEnv,
    RemoteSessionLost,
    RemoteTimeoutError,
    VLMEnvClient,
    _Session,
)

ENV = "rl4vlm/NumberLine-v0"
SMALL = {"image_size": (64, 64)}
CATALOG = Catalog({ENV: (ENV, {}), "gated": (server_envs.GATED_ID, {})}, default=ENV)
pytestmark = pytest.mark.usefixtures("server_test_envs")  # conftest.py: the servertest/... ids, registered for this module


@contextmanager
def _served(**app_kwargs: Any) -> Iterator[tuple[str, Any]]:
    """``CATALOG`` served by ``create_app(**app_kwargs)`` in a thread, on a free port: (URL, openenv-core's server)."""
    from rl4vlm_gym.server.app import create_app

    app = create_app(CATALOG, **app_kwargs)
    with served_app(app) as url:
        yield url, app.state.openenv_server


def _until(condition: Any, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(0.02)


def _rollout(env: gym.Env, seed: int, steps: int = 4) -> list[Any]:
    """What a seeded episode shows: each observation's text, image bytes and actions, rewards and flags."""
    obs, info = env.reset(seed=seed)
    seen: list[Any] = [(obs["text"], obs["image"].tobytes(), obs["actions"], info.get("state_key"))]
    for i in range(steps):
        obs, reward, terminated, truncated, info = env.step(obs["actions"][i % len(obs["actions"])])
        seen.append((obs["text"], obs["image"].tobytes(), obs["actions"], float(reward), terminated, truncated))
        if terminated or truncated:
            break
    return seen


def _local(seed: int, steps: int = 4) -> list[Any]:
    env = gym.make(ENV, **SMALL).unwrapped
    try:
        return _rollout(env, seed, steps)
    finally:
        env.close()


def test_a_timed_out_step_drops_the_connection_and_the_next_reset_plays_as_the_local_env() -> None:
    # The gated step waits until the test opens the gate: it outlasts the client's 0.3 s for sure (the ungated resets
    # take a fiftieth of that). Before the fix the late answer stayed queued and answered the next request: every later
    # result was the one before it.
    server_envs.STEPPING.clear(), server_envs.OPEN.clear()
    try:
        with _served() as (url, _):
            env = RemoteEnv(url, "gated", message_timeout_s=0.3, **SMALL)
            env.reset(seed=3)
            with pytest.raises(RemoteTimeoutError, match="within message_timeout_s=0.3 s: the connection was dropped") as caught:
                env.step("+")
            assert caught.value.code == "TIMEOUT"
            with pytest.raises(gym.error.ResetNeeded, match="no answer to 'step'.*call reset"):
                env.step("+")  # the episode went with the session
            client = VLMEnvClient(base_url=url, message_timeout_s=0.3).sync()  # openenv-core's client, ours for async users
            reset = {"env_id": "gated", "make_kwargs": {"image_size": [64, 64]}, "seed": 5}
            first = client.reset(**reset).observation
            with pytest.raises(RemoteTimeoutError, match="no answer to 'step'"):
                client.step("+")
            server_envs.OPEN.set()  # the server's steps end; their answers have no connection to go to
            again = client.reset(**reset).observation  # a new connection: its own answer, not the late step's
            assert (again["text"], again["image"].tobytes()) == (first["text"], first["image"].tobytes())
            client.close()
            assert _rollout(env, 5) == _local(5)
            env.close()
    finally:
        server_envs.OPEN.set()


def test_reset_and_a_seeded_episode_s_step_reopen_a_session_the_server_reaped_while_idle() -> None:
    # A TRL run whose steps are further apart than the server's --idle-timeout: the reaped session's reset (or the
    # seeded episode's next step, replayed in a new session) goes on as the local env's.
    with _served(idle_timeout=0.1, reap_every=0.02) as (url, server):
        env, local = RemoteEnv(url, ENV, **SMALL), gym.make(ENV, **SMALL).unwrapped
        try:
            ours, theirs = env.reset(seed=1), local.reset(seed=1)
            action = ours[0]["actions"][0]
            ours, theirs = env.step(action), local.step(action)
            _until(lambda: not server._sessions, "the idle reap")
            ours, theirs = env.step(action), local.step(action)  # seeded: replayed in a new session
            assert ours[0]["text"] == theirs[0]["text"] and np.array_equal(ours[0]["image"], theirs[0]["image"])
            assert ours[1:] == theirs[1:] and env.elapsed_steps == local.elapsed_steps == 2
            _until(lambda: not server._sessions, "the idle reap")
            state = env.server_state()  # a state read too: the episode replayed in a new session
            assert (state.step_count, state.model_dump().get("description")) == (2, local.describe())
            _until(lambda: not server._sessions, "the idle reap")
            assert _rollout(env, 9) == _rollout(local, 9)  # reset after a reap
            env.reset()  # unseeded: nothing to replay
            _until(lambda: not server._sessions, "the idle reap")
            with pytest.raises(RemoteSessionLost, match="session is closed|closed the connection"):
                env.step(action)
            with pytest.raises(gym.error.ResetNeeded, match="call reset"):
                env.step(action)
            assert _rollout(env, 4) == _local(4)
            client = VLMEnvClient(base_url=url).sync()  # openenv-core's client: the error, then a new session
            reset = {"env_id": ENV, "make_kwargs": {"image_size": [64, 64]}, "seed": 4}
            first = client.reset(**reset).observation
            _until(lambda: not server._sessions, "the idle reap")
            with pytest.raises(RemoteSessionLost):
                client.reset(**reset)
            again = client.reset(**reset).observation
            assert (again["text"], again["image"].tobytes()) == (first["text"], first["image"].tobytes())
            client.close()
        finally:
            env.close(), local.close()


def test_a_full_server_raises_the_capacity_error_and_frees_the_seat_when_a_session_closes() -> None:
    with _served(max_sessions=1) as (url, server):
        with pytest.raises(RemoteArgumentError, match="level") as refused:  # it holds the half-made env's frame
            RemoteEnv(url, ENV, level=99, **SMALL)
        _until(lambda: not server._sessions, "the refused env's session end", seconds=3)  # its seat is free at once
        assert isinstance(refused.value, ValueError) and refused.value.code == "EXECUTION_ERROR"
        first = RemoteEnv(url, ENV, **SMALL)
        with pytest.raises(RemoteCapacityError, match="capacity") as caught:
            RemoteEnv(url, ENV, **SMALL)
        assert caught.value.code == "CAPACITY_REACHED"
        # a client whose first message goes out after the server has already answered and closed
        # (openenv-core's first answer came before any message: the client saw ConnectionClosedOK 1000)
        for late in (
            VLMEnvClient(base_url=url).sync(),
            _Session(url, 10.0, 10.0, None),
        ):  # openenv-core's client, and RemoteEnv's
            try:
                late.connect() if isinstance(late, SyncEnvClient) else None
                time.sleep(0.1)
                with pytest.raises(RemoteCapacityError, match="capacity"):
                    late.reset(env_id=ENV, make_kwargs={"image_size": [64, 64]})
            finally:
                late.close()
        first.close()
        _until(lambda: not server._sessions, "the closed session's end")
        second = RemoteEnv(url, ENV, **SMALL)
        assert _rollout(second, 2) == _local(2)
        second.close()


def test_an_action_the_server_refuses_raises_the_argument_error_and_the_session_goes_on() -> None:
    with _served() as (url, _):
        env = RemoteEnv(url, ENV, **SMALL)
        obs, _ = env.reset(seed=4)
        with pytest.raises(RemoteArgumentError, match=f"limit is {MAX_ACTION_CHARS}") as caught:
            env.step("x" * (MAX_ACTION_CHARS + 1))
        assert caught.value.code == "VALIDATION_ERROR" and isinstance(caught.value, ValueError)
        assert env.step("x" * MAX_ACTION_CHARS)[4]["action"]["valid"] is False  # at the limit: the env's parser says
        env.close()


@pytest.mark.skipif(
    "token" not in inspect.signature(__import__("rl4vlm_gym.server.app", fromlist=["create_app"]).create_app).parameters,
    reason="the server's token auth (create_app(token=...), server-transport's part of issue 37) has not landed",
)
def test_a_token_server_refuses_a_client_without_its_token_by_the_auth_error(monkeypatch) -> None:
    monkeypatch.delenv(SERVER_TOKEN_ENV, raising=False)
    with _served(token="s3cret") as (url, _):
        for token, given in ((None, "no token"), ("wrong", "a token that is not the server's")):
            with pytest.raises(RemoteAuthError, match=f"HTTP 403.*gave {given}") as caught:
                RemoteEnv(url, ENV, token=token, **SMALL)
            assert caught.value.code == "FORBIDDEN" and "s3cret" not in str(caught.value)
        env = RemoteEnv(url, ENV, token="s3cret", **SMALL)
        assert _rollout(env, 1) == _local(1)
        env.close()
        monkeypatch.setenv(SERVER_TOKEN_ENV, "s3cret")
        env = RemoteEnv(url, ENV, **SMALL)
        assert _rollout(env, 1, steps=1) == _local(1, steps=1)
        env.close()


@pytest.mark.slow  # a server process of its own (an interpreter importing openenv-core: seconds) and 3 s of waiting
def test_a_hung_server_times_out_a_step_and_holds_close_for_two_seconds_at_most() -> None:
    command = [sys.executable, "-m", "rl4vlm_gym.cli", "serve", ENV, "--port", "0"]
    proc, owned = processes.popen(command, stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" on ")[1].split()[0]
        closing, stepping = (RemoteEnv(url, ENV, message_timeout_s=1.0, **SMALL) for _ in range(2))
        closing.reset(seed=0)
        obs, _ = stepping.reset(seed=0)
        os.kill(proc.pid, signal.SIGSTOP)  # hung: it answers nothing, not even a close
        try:
            # The step waits out its timeout in a thread while close() waits in this one (two sessions: the waits
            # overlap, each timed on its own).
            with ThreadPoolExecutor(1) as pool:
                stepped = pool.submit(_timed, stepping.step, obs["actions"][0])
                start = time.monotonic()
                closing.close()  # websockets waits 10 s for the server's side of a close by default
                closed_s = time.monotonic() - start
                step_s, step_error = stepped.result()
            assert closed_s < 3.0, f"close() took {closed_s:.1f} s on a hung server"
            with pytest.raises(RemoteTimeoutError, match="within message_timeout_s=1.0 s"):
                raise step_error or AssertionError("the step on a hung server returned")
            assert step_s < 2.0  # the drop does not wait for the hung server either
        finally:
            os.kill(proc.pid, signal.SIGCONT)
    finally:
        processes.kill_group(proc.pid)
        proc.wait()
        owned.release()


def _timed(call: Any, *args: Any) -> tuple[float, BaseException | None]:
    """How long ``call(*args)`` took, and what it raised (None if nothing)."""
    start = time.monotonic()
    try:
        call(*args)
    except BaseException as err:  # noqa: BLE001 - handed to the caller, which asserts what it is
        return time.monotonic() - start, err
    return time.monotonic() - start, None
