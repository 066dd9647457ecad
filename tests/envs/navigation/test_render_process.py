"""MiniWorld drawn by a render process (``render_process=True``, the default): the same frames as
drawn in the env's own process, a render process killed is started again at the next frame, one
dies with its owner even under SIGKILL, and envs alive at once draw in render processes of their own."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the ids

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)

SIZE = (36, 48)


def _digests(env_id: str, remote: bool, steps: int = 6, **kwargs: object) -> list[str]:
    """Digests of the frames (observation and render()) of a seeded episode played by the oracle
    and the first action in turns, and of a second reset."""
    env = gym.make(env_id, image_size=SIZE, render_mode="rgb_array", render_process=remote, **kwargs)
    frames = [env.reset(seed=4)[0]["image"]]
    for i in range(steps):
        action = env.unwrapped.oracle_action() if i % 2 else env.unwrapped.ACTIONS[0]
        frames += [env.step(action)[0]["image"], env.render()]
    frames.append(env.reset(seed=5)[0]["image"])
    env.close()
    return [hashlib.sha1(np.ascontiguousarray(frame).tobytes()).hexdigest() for frame in frames]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("rl4vlm/MiniWorld-OneRoom-v1", {"render_view": "top"}),  # the map view and the agent drawn in it
        ("rl4vlm/MiniWorld-PutNext-v1", {"level": 2, "appearance": "held-out"}),  # a box carried; held-out textures
        ("rl4vlm/MiniWorld-PickupObjects-v1", {"level": 3}),  # objects removed; domain randomization
    ],
)
def test_frames_drawn_by_the_render_process_equal_those_drawn_in_process(env_id: str, kwargs: dict[str, object]) -> None:
    assert _digests(env_id, True, **kwargs) == _digests(env_id, False, **kwargs)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"render_process" in cmdline.read()
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_render_process_killed_is_started_again_at_the_next_frame() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE)
    reference = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE, render_process=False)
    try:
        for one in (env, reference):
            one.reset(seed=2)
            one.step("turn left")
        scene = env.unwrapped.world.scene
        old = scene.renderer().process_id
        assert old is not None and _alive(old)
        os.kill(old, signal.SIGKILL)
        assert _wait_gone(old)
        obs, *_ = env.step("move forward")  # the reset is replayed in a new render process
        expected, *_ = reference.step("move forward")
        assert scene.renderer().process_id not in (None, old)
        assert np.array_equal(obs["image"], expected["image"])
    finally:
        env.close()
        reference.close()


def test_the_render_process_dies_with_its_owner_killed_by_sigkill() -> None:
    code = """
        import sys, time, gymnasium as gym, rl4vlm_gym
        env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=(36, 48))
        env.reset(seed=0)
        print(env.unwrapped.world.scene.renderer().process_id, flush=True)
        time.sleep(600)
    """
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        pid = int(owner.stdout.readline())
        assert _alive(pid)
    finally:
        owner.kill()
        owner.wait()
    assert _wait_gone(pid), f"render process {pid} outlived its owner"


def test_envs_alive_at_once_draw_in_render_processes_of_their_own_and_one_closed_frees_its_own() -> None:
    """A server's sessions render in parallel: each live env has its renderer; a closed env's is reused."""
    first, second = (gym.make("rl4vlm/MiniWorld-Hallway-v1", image_size=SIZE) for _ in range(2))
    try:
        first.reset(seed=0)
        second.reset(seed=0)
        one, two = (env.unwrapped.world.scene.renderer() for env in (first, second))
        assert one is not two and one.process_id != two.process_id
        first.close()
        third = gym.make("rl4vlm/MiniWorld-Hallway-v1", image_size=SIZE)
        third.reset(seed=0)
        assert third.unwrapped.world.scene.renderer() is one  # the closed env's renderer, not a new one
        third.close()
    finally:
        first.close()
        second.close()


def test_text_only_envs_start_no_render_process() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text", image_size=SIZE)
    env.reset(seed=0)
    env.step("move forward")
    scene = env.unwrapped.world.scene
    assert scene.sent is None and scene._renderer is None
    env.close()
