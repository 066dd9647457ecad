"""``vector``: sync and async vector envs (the default start method and ``spawn``) match single envs."""

from __future__ import annotations

import functools
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rl4vlm_gym.testing.common import _Maker, _spec_json
from rl4vlm_gym.testing.fresh import fork_server

VECTOR_TIMEOUT_S = 120.0
"""How long an async vector env may take to reset or step before the kit calls it a hang."""


def check_vector(env_id: str, /, num_envs: int = 2, steps: int = 6, **kwargs: Any) -> str:
    """Sync and async vector envs match single envs step for step.

    Async envs run as users make them, with Gymnasium's default start method (``fork`` on Linux)
    and shared memory, and with ``spawn`` without shared memory; a worker that hangs fails the
    check after ``VECTOR_TIMEOUT_S`` instead of hanging the kit.

    Both async envs are made in a fresh process (a child of the kit's fork server,
    :mod:`rl4vlm_gym.testing.fresh`): as a user's script forks its workers, from a process that has
    made an env but drawn nothing (this one has; MiniWorld refuses to fork a GL context, with an
    error naming the fix). Spawned workers are new interpreters whatever their parent. They run
    while this process plays the sync vector env and the single envs."""
    seeds = list(range(num_envs))
    maker = _Maker(env_id, _spec_json(env_id), dict(kwargs))
    default = multiprocessing.get_start_method()
    # Each async run may wait VECTOR_TIMEOUT_S to start, reset and at every step; then the whole job is stuck.
    timeout_s = 2 * (steps + 2) * VECTOR_TIMEOUT_S + 60
    job = fork_server().start(
        _async_rollouts, maker, seeds, steps, VECTOR_TIMEOUT_S, default, what=f"{env_id}'s async vector envs"
    )
    try:
        reference = _vector_rollout(lambda fns: gym.vector.SyncVectorEnv(fns), maker, seeds, steps)
        singles = [maker() for _ in seeds]
        for i, env in enumerate(singles):
            obs, _ = env.reset(seed=seeds[i])
            assert obs["text"] == reference[0][0]["text"][i], "SyncVectorEnv's first text differs from a single env's"
            assert np.array_equal(obs["image"], reference[0][0]["image"][i]), "SyncVectorEnv's first image differs"
            env.close()
    except BaseException:
        job.cancel()
        raise
    for name, result in job.result(timeout_s).items():
        for (obs_a, *rest_a), (obs_b, *rest_b) in zip(reference, result, strict=True):
            assert obs_a["text"] == obs_b["text"], f"{name} text differs from SyncVectorEnv's"
            assert obs_a["actions"] == obs_b["actions"], f"{name} actions differ from SyncVectorEnv's"
            assert np.array_equal(obs_a["image"], obs_b["image"]), f"{name} image differs from SyncVectorEnv's"
            assert all(np.array_equal(a, b) for a, b in zip(rest_a, rest_b, strict=True)), f"{name} rewards or flags differ"
    return f"SyncVectorEnv and AsyncVectorEnv ({default} + shared memory, spawn) agree over {steps} steps x {num_envs} envs"


def _async_vector(fns: list[Callable[[], gym.Env]], context: str | None, shared: bool) -> gym.vector.VectorEnv:
    return gym.vector.AsyncVectorEnv(fns, shared_memory=shared, context=context)


def _async_rollouts(
    maker: _Maker, seeds: list[int], steps: int, timeout_s: float, start_method: str
) -> dict[str, list[tuple[Any, ...]]]:
    """``_vector_rollout`` of AsyncVectorEnv with the default start method and shared memory, then with
    ``spawn`` without it, by name; run in a fresh process (the first failure is raised)."""
    global VECTOR_TIMEOUT_S  # noqa: PLW0603 - the kit's setting in the owner, carried into this process
    VECTOR_TIMEOUT_S = timeout_s
    multiprocessing.set_start_method(start_method, force=True)  # the owner's default, as a user's script has it
    maker().close()  # the env's modules imported before the fork, as in a user's script (made, never reset)
    results = {}
    for context, shared in ((None, True), ("spawn", False)):
        name = f"AsyncVectorEnv(context={context or start_method!r}, shared_memory={shared})"
        results[name] = _vector_rollout(
            functools.partial(_async_vector, context=context, shared=shared), maker, seeds, steps, name
        )
    return results


def _vector_rollout(
    factory: Callable[[list[Callable[[], gym.Env]]], gym.vector.VectorEnv],
    maker: _Maker,
    seeds: list[int],
    steps: int,
    name: str = "",
) -> list[tuple[Any, ...]]:
    envs = _start(factory, [maker for _ in seeds], name)
    is_async = isinstance(envs, gym.vector.AsyncVectorEnv)
    per_env: list[int | None] = list(seeds)  # a seed per env
    try:
        if isinstance(envs, gym.vector.AsyncVectorEnv):
            envs.reset_async(seed=per_env)
            obs, _ = _wait(envs.reset_wait, name, "reset")
        else:
            obs, _ = envs.reset(seed=per_env)  # type: ignore[arg-type]  # VectorEnv.reset's annotation says one int
        trace: list[tuple[Any, ...]] = [(obs,)]
        rng = np.random.default_rng(0)
        for _ in range(steps):
            actions = tuple(a[int(rng.integers(len(a)))] if a else "" for a in obs["actions"])
            if isinstance(envs, gym.vector.AsyncVectorEnv):
                envs.step_async(actions)
                obs, rewards, terminated, truncated, _ = _wait(envs.step_wait, name, "step")
            else:
                obs, rewards, terminated, truncated, _ = envs.step(actions)
            trace.append((obs, rewards, terminated, truncated))
    finally:
        envs.close(terminate=True) if is_async else envs.close()
    return trace


def _start(
    factory: Callable[[list[Callable[[], gym.Env]]], gym.vector.VectorEnv], fns: list[Callable[[], gym.Env]], name: str
) -> gym.vector.VectorEnv:
    """Build the vector env, failing after ``VECTOR_TIMEOUT_S`` if its workers hang: Gymnasium's
    AsyncVectorEnv asks each new worker for its spaces and waits without a timeout."""
    before = set(multiprocessing.active_children())
    built: dict[str, Any] = {}

    def build() -> None:
        try:
            built["envs"] = factory(fns)
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            built["error"] = err

    thread = threading.Thread(target=build, daemon=True)
    thread.start()
    thread.join(VECTOR_TIMEOUT_S)
    if thread.is_alive():
        for worker in set(multiprocessing.active_children()) - before:
            worker.terminate()  # unblocks the constructor, which then fails on a broken pipe
        thread.join(10)
        raise _hang(name, "start")
    if "error" in built:
        raise built["error"]
    return built["envs"]


def _hang(name: str, what: str) -> AssertionError:
    return AssertionError(
        f"{name} did not {what} within {VECTOR_TIMEOUT_S:.0f} s: a worker hangs (a forked worker must not "
        "inherit state it cannot use, such as an OpenGL context or a lock held by another thread)"
    )


def _wait(wait: Callable[..., Any], name: str, what: str) -> Any:
    try:
        return wait(timeout=VECTOR_TIMEOUT_S)
    except multiprocessing.TimeoutError:
        raise _hang(name, what) from None
