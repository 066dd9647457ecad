"""MiniWorld drawn by a render process (``render_process=True``, the default, said here explicitly so that
``RL4VLM_GYM_RENDER_PROCESS=0`` changes nothing): the same frames as drawn in the env's own process; a
render process killed is started again at the next frame; one dies with its owner even under SIGKILL;
envs alive at once draw in render processes of their own; text-only envs start none."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import select
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


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every frame drawn by a render process in the test, none from this process's frame cache."""
    from rl4vlm_gym.envs.navigation import gl_process

    monkeypatch.setattr(gl_process, "FRAME_CACHE_BYTES", 0)
    gl_process.forget_frames()


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


CASES = {
    "OneRoom top": ("rl4vlm/MiniWorld-OneRoom-v1", {"render_view": "top"}),  # the map view and the agent drawn in it
    "PutNext 2 held-out": ("rl4vlm/MiniWorld-PutNext-v1", {"level": 2, "appearance": "held-out"}),  # a box carried
    "PickupObjects 3": ("rl4vlm/MiniWorld-PickupObjects-v1", {"level": 3}),  # objects removed; domain randomization
}


def _after_restart_moves(env: gym.Env) -> str:
    """Digest of the frame the kill test checks: seed 2, turn left, move forward."""
    env.reset(seed=2)
    env.step("turn left")
    return hashlib.sha1(env.step("move forward")[0]["image"].tobytes()).hexdigest()


@pytest.fixture(scope="module")
def in_process() -> dict[str, object]:
    """The frames drawn in the env's own process, in a fresh process: in-process GL in a process that
    made raw MiniWorld worlds before (the perception tests') was seen drawing other frames."""
    script = textwrap.dedent(
        f"""
        import json, sys
        import gymnasium as gym, rl4vlm_gym
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import test_render_process as t
        out = {{name: t._digests(env_id, False, **kwargs) for name, (env_id, kwargs) in t.CASES.items()}}
        print("JSON", json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.split("JSON ", 1)[1])


@pytest.mark.slow  # 3.5 s for the fresh process, 1-2 s a case: the kill test and the fork test check frames in the inner loop
@pytest.mark.parametrize("case", list(CASES))
def test_frames_drawn_by_the_render_process_equal_those_drawn_in_process(case: str, in_process: dict[str, object], drawn: None) -> None:
    env_id, kwargs = CASES[case]
    assert _digests(env_id, True, **kwargs) == in_process[case]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"gl_process" in cmdline.read()
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_render_process_killed_is_started_again_at_the_next_frame_and_a_failed_step_frees_it(drawn: None) -> None:
    reference = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE, render_process=True)
    expected = _after_restart_moves(reference)  # drawn by a render process never killed (test_frames_drawn...: = in-process)
    reference.close()
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE, render_process=True)
    try:
        env.reset(seed=2)
        scene = env.unwrapped.world.scene
        old = scene.renderer().process_id
        assert old is not None and _alive(old)
        real_step = env.step

        def step_after_a_kill(action: str) -> object:
            if action == "move forward":  # killed between two frames: the next one replays the reset elsewhere
                os.kill(old, signal.SIGKILL)
                assert _wait_gone(old)
            return real_step(action)

        env.step = step_after_a_kill  # type: ignore[method-assign]
        assert _after_restart_moves(env) == expected
        assert scene.renderer().process_id not in (None, old)
        del env.step
        _a_step_that_fails_after_asking_for_its_frame_leaves_the_renderer_free(env)
    finally:
        env.close()


def _a_step_that_fails_after_asking_for_its_frame_leaves_the_renderer_free(env: gym.Env) -> None:
    """The frame of a step is drawn while the step goes on; a step that raises after asking for it
    still receives it (the render process's lock is free), and the next step draws as usual (on the
    kill test's env: no render process of its own to start)."""
    base = env.unwrapped
    real_event = base._event

    def failing_event(reward: float, terminated: bool) -> tuple[str, float]:
        assert base.world.scene.pending is not None  # asked for, not yet received: drawn meanwhile
        raise RuntimeError("the step failed after its frame was asked for")

    base._event = failing_event
    try:
        with pytest.raises(RuntimeError, match="after its frame"):
            env.step("turn left")
    finally:
        base._event = real_event
    assert base.world.scene.pending is None and not base.world.scene.renderer().lock.locked()
    reference = base.world.scene.renderer().process_id
    obs = env.step("turn right")[0]
    assert obs["image"].shape == (*SIZE, 3) and obs["image"].any() and base.world.scene.renderer().process_id == reference


@pytest.mark.slow  # a render process to start in the forked owner, ~0.8 s of CPU
def test_the_render_process_dies_with_its_owner_killed_by_sigkill(drawn: None) -> None:
    """The owner (a child forked from this process: no interpreter to start) renders, then is killed by
    SIGKILL: its render process goes too."""
    read, write = os.pipe()
    owner = os.fork()
    if owner == 0:  # the owner: make an env, draw, say the render process's pid, wait to be killed
        try:
            os.close(read)
            env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE, render_process=True)
            env.reset(seed=0)
            os.write(write, f"{env.unwrapped.world.scene.renderer().process_id}\n".encode())
            time.sleep(600)
        finally:
            os._exit(1)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 120)
        assert ready, "the owner did not render within 120 s"
        pid = int(os.read(read, 64))
        assert _alive(pid)
    finally:
        os.kill(owner, signal.SIGKILL)
        os.waitpid(owner, 0)
        os.close(read)
    assert _wait_gone(pid), f"render process {pid} outlived its owner"


def test_envs_alive_at_once_draw_in_render_processes_of_their_own_and_one_closed_frees_its_own(drawn: None) -> None:
    """A server's sessions render in parallel: each live env has its renderer; a closed env's is reused."""
    first, second = (gym.make("rl4vlm/MiniWorld-Hallway-v1", image_size=SIZE, render_process=True) for _ in range(2))
    try:
        first.reset(seed=0)
        second.reset(seed=0)
        one, two = (env.unwrapped.world.scene.renderer() for env in (first, second))
        assert one is not two and one.process_id != two.process_id
        first.close()
        third = gym.make("rl4vlm/MiniWorld-Hallway-v1", image_size=SIZE, render_process=True)
        third.reset(seed=0)
        assert third.unwrapped.world.scene.renderer() is one  # the closed env's renderer, not a new one
        third.close()
    finally:
        first.close()
        second.close()


@pytest.mark.slow  # 18 frames at 36x48 in 3 envs (~0.3 s), and a render process to start if no free one is left (~0.6 s of CPU)
def test_a_frame_drawn_before_comes_from_the_frame_cache_and_equals_the_drawn_one() -> None:
    """The same seed and moves replayed by another env: every frame is the one drawn before (equal bytes,
    a copy of its own), and no render process is asked; another seed is drawn."""
    from rl4vlm_gym.envs.navigation import gl_process

    gl_process.forget_frames()

    def played(seed: int) -> tuple[list[np.ndarray], object]:
        env = gym.make("rl4vlm/MiniWorld-PutNext-v1", image_size=SIZE, render_process=True, level=2)  # a box carried
        frames = [env.reset(seed=seed)[0]["image"]]
        frames += [env.step(action)[0]["image"] for action in ("turn left", "move forward", "pick up", "turn right", "move forward")]
        scene = env.unwrapped.world.scene
        env.close()
        return frames, scene

    first, _ = played(3)
    again, scene = played(3)
    assert scene._renderer is None  # never leased a renderer: every frame came from the cache
    assert len({frame.tobytes() for frame in first}) > 2  # the moves changed the view (a stale key would repeat one)
    assert [frame.tobytes() for frame in again] == [frame.tobytes() for frame in first]
    assert all(a.flags.writeable and not np.shares_memory(a, b) for a, b in zip(again, first, strict=True))
    _, other = played(4)
    assert other._renderer is not None


def test_text_only_envs_start_no_render_process() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text", image_size=SIZE, render_process=True)
    env.reset(seed=0)
    env.step("move forward")
    scene = env.unwrapped.world.scene
    assert scene.sent is None and scene._renderer is None
    env.close()


@pytest.mark.slow  # a render process to start (it fails at EGL), ~0.6 s of CPU
def test_a_render_process_without_gl_raises_the_in_process_error_in_the_env(monkeypatch: pytest.MonkeyPatch, drawn: None) -> None:
    """EGL present for the env's process but no context in the render process (here: a device that does
    not exist, for the render process this test starts): the env raises GLUnavailableError, naming what
    to install and the device variable."""
    from rl4vlm_gym.envs.navigation import gl_process
    from rl4vlm_gym.envs.navigation.gl import GLUnavailableError

    monkeypatch.setenv("RL4VLM_GYM_EGL_DEVICE", "99")
    monkeypatch.setattr(gl_process, "_pool", [])  # a renderer of its own, started with that device
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=SIZE, render_process=True)
    try:
        with pytest.raises(GLUnavailableError, match="in MiniWorld's render process") as raised:
            env.reset(seed=0)
        assert "RL4VLM_GYM_EGL_DEVICE" in str(raised.value)
    finally:
        env.close()
        for renderer in gl_process.renderers():
            renderer.stop()


def test_frame_requests_cross_as_fixed_structs_and_unusual_poses_go_pickled() -> None:
    """The wire's fixed struct gives the render process the very poses (bytes of every float) and
    objects present; a pose that is not a float64 3-vector with a float heading is not squeezed into
    it (the request goes pickled, keeping its types)."""
    from rl4vlm_gym.envs.navigation.gl_process import _decode, _encode

    pos = np.array([5.461520223, 0.0, -4.1394027912])
    request = (7, "top", "vis", ((0, 2, 5), [(2, pos, -2.9636549119444626), (5, pos * 3, 0.1 + 0.2)]))
    body = _encode(request)
    op, key, view, buffer, (present, moving) = _decode(memoryview(body))
    assert (op, key, view, buffer, present) == ("frame", 7, "top", "vis", (0, 2, 5))
    assert [(i, p.tobytes(), p.dtype, d) for i, p, d in moving] == [(2, pos.tobytes(), np.float64, -2.9636549119444626), (5, (pos * 3).tobytes(), np.float64, 0.1 + 0.2)]
    assert _encode((7, "obs", "obs", ((0,), [(0, pos.astype(np.float32), 1.0)]))) == b""
    assert _encode((7, "obs", "obs", ((0,), [(0, [1.0, 0.0, 2.0], 1.0)]))) == b""

