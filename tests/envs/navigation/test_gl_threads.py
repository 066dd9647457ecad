"""MiniWorld's GL from many threads: a world made, played and closed in any thread, after others were
closed in other threads, draws the frames a fresh world draws (a server runs each session in its own
thread and may close it from another). The GL is the env's own process's (``render_process=False``),
but in the last test, where envs in threads draw in render processes."""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the ids

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)

ENV_ID = "rl4vlm/MiniWorld-OneRoom-v1"
SIZE = (64, 64)
KWARGS = {"image_size": SIZE, "render_process": False}
ACTIONS = ("turn left", "move forward", "turn right")


def _frames(env: gym.Env) -> list[str]:
    """Digests of the frames of a seeded reset and a few steps."""
    obs, _ = env.reset(seed=3)
    frames = [obs["image"]] + [env.step(action)[0]["image"] for action in ACTIONS]
    return [hashlib.sha1(np.ascontiguousarray(frame).tobytes()).hexdigest() for frame in frames]


def _in_threads(*jobs: Callable[[], Any]) -> list[Any]:
    """Run each job in a thread of its own, all at once; their results (a job's error is raised)."""
    results: list[Any] = [None] * len(jobs)

    def run(index: int) -> None:
        try:
            results[index] = jobs[index]()
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            results[index] = err

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def _played_and_closed() -> list[str]:
    env = gym.make(ENV_ID, **KWARGS)
    try:
        return _frames(env)
    finally:
        env.close()


def _played_and_dropped() -> list[str]:
    env = gym.make(ENV_ID, **KWARGS)
    frames = _frames(env)
    env.unwrapped.itself = env  # a reference cycle, as harnesses make: the collector frees the world
    del env
    gc.collect()  # unclosed: collected in this thread, with pyglet's weak set of windows
    return frames


@pytest.fixture(scope="module")
def expected() -> list[str]:
    return _in_threads(_played_and_closed)[0]


def test_worlds_made_after_others_closed_in_other_threads_draw_the_same_frames(expected: list[str]) -> None:
    # Without the GL lock and release, the shadow context pyglet left current in a closing thread made
    # a later close read the driver's info with no context: the next world lost multisampling.
    for _ in range(3):
        assert _in_threads(_played_and_closed, _played_and_closed) == [expected, expected]


def test_a_world_closed_in_another_thread_than_it_played_in_leaves_the_others_intact(expected: list[str]) -> None:
    envs = [gym.make(ENV_ID, **KWARGS) for _ in range(2)]
    assert _in_threads(lambda: _frames(envs[0]), lambda: _frames(envs[1])) == [expected, expected]
    envs[0].close()  # from this thread: its context was last current in the thread that played it
    assert _in_threads(lambda: _frames(envs[1]), _played_and_closed) == [expected, expected]
    envs[1].close()
    assert _played_and_closed() == expected


def test_worlds_dropped_unclosed_in_other_threads_leave_the_next_worlds_intact(expected: list[str]) -> None:
    # pyglet closes a collected window itself, outside the GL lock, leaving its shadow context current
    # in the collecting thread; the world's finalizer holds the window and hands its clean-up to the
    # next GL block instead (a finalizer that took the window from collected garbage failed there:
    # pyglet's weak set of windows had already forgotten it).
    for job in (_played_and_dropped, _played_and_closed, _played_and_dropped, _played_and_closed, _played_and_closed):
        assert _in_threads(job) == [expected]


def test_worlds_in_threads_draw_the_same_frames_after_miniworld_was_imported_first() -> None:
    # Imported first, pyglet makes its shadow window at import, current in the importing thread (the
    # main one here): ensure_context releases it, else closes in other threads could not switch to it.
    script = textwrap.dedent(
        f"""
        import pyglet
        pyglet.options["headless"] = True
        import miniworld
        import sys, threading
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_gl_threads as t
        frames = [t._in_threads(t._played_and_closed)[0] for _ in range(4)]
        assert frames[1:] == frames[:-1], frames
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def test_envs_in_threads_drawn_by_render_processes_draw_the_frames_one_env_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's sessions, each in its thread, rendering at once (each live env has a renderer of its own);
    that these are the in-process frames is test_render_process's. Every frame drawn: none from the cache."""
    from rl4vlm_gym.envs.navigation import gl_process

    monkeypatch.setattr(gl_process, "FRAME_CACHE_BYTES", 0)
    gl_process.forget_frames()

    def played() -> list[str]:
        env = gym.make(ENV_ID, image_size=SIZE, render_process=True)
        try:
            return _frames(env)
        finally:
            env.close()

    alone = played()
    assert _in_threads(played, played) == [alone] * 2


@pytest.mark.slow  # a fresh interpreter (raw MiniWorld's window must be its first GL context), ~2 s
def test_in_process_frames_after_a_raw_miniworld_world_drew_first_and_was_collected_are_the_canonical_ones() -> None:
    """Raw MiniWorld (not ours) made the process's first GL context, drew, and was collected (pyglet closed
    its window): MiniWorld's texture and mesh caches then held GL names of a context gone, and every
    in-process world of ours drew other frames. Ours keep caches of their own (gl._OUR_CACHES): the frames
    are a render process's (which are the in-process ones: test_render_process)."""
    script = textwrap.dedent(
        f"""
        import gc, sys
        import gymnasium as gym
        import rl4vlm_gym
        from rl4vlm_gym.envs.navigation.gl import import_miniworld
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_gl_threads as t
        import_miniworld()
        raw = gym.make("MiniWorld-FourRooms-v0", obs_width=80, obs_height=60).unwrapped
        raw.reset(seed=0)
        raw.step(2)
        raw.close()
        del raw
        gc.collect()
        print("DIGESTS", " ".join(t._in_threads(t._played_and_closed)[0]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    env = gym.make(ENV_ID, **{**KWARGS, "render_process": True})
    try:
        expected = _frames(env)
    finally:
        env.close()
    assert done.stdout.split("DIGESTS ", 1)[1].split() == expected
