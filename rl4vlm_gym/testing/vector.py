"""``vector``: sync and async vector envs (the default start method, and workers that inherit nothing of
their owner, as ``spawn``'s) match single envs."""

from __future__ import annotations

import functools
import multiprocessing
import multiprocessing.forkserver
import threading
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rl4vlm_gym.testing.common import _Maker, _spec_json
from rl4vlm_gym.testing.fresh import fork_server

VECTOR_TIMEOUT_S = 120.0
"""How long an async vector env may take to reset or step before the kit calls it a hang."""

FORKSERVER_PRELOAD = ("__main__", "rl4vlm_gym", "gymnasium")
"""What the forkserver imports once, before it forks any worker: multiprocessing's default (``__main__``)
and what every env's factory imports (numpy, Gymnasium, the registry); never an env module, which each
worker imports itself, as a spawned one does."""


def check_vector(env_id: str, /, num_envs: int = 2, steps: int = 6, **kwargs: Any) -> str:
    """Sync and async vector envs match single envs step for step.

    Async envs run as users make them: with Gymnasium's default start method (``fork`` on Linux)
    and shared memory, and with workers that inherit nothing of their owner, without shared memory.
    A worker that hangs fails the check after ``VECTOR_TIMEOUT_S`` instead of hanging the kit.

    The default-start-method envs are made in a fresh process (a child of the kit's fork server,
    :mod:`rl4vlm_gym.testing.fresh`): as a user's script forks its workers, from a process that has
    made an env but drawn nothing (this one has; MiniWorld refuses to fork a GL context, with an
    error naming the fix). They run while this process plays the sync vector env and the single envs.

    The workers that inherit nothing are ``forkserver``'s: forked from an interpreter that was started
    anew (never a copy of this process) and imported only ``FORKSERVER_PRELOAD``, they get the env
    factory by pickle and import the env's module themselves, as ``spawn``'s workers do; so they fail
    where spawned ones would (a factory that does not pickle, an env that needs its owner's memory,
    a module that does not import in a new interpreter). One forkserver serves every id this process
    checks, where ``spawn`` would start and import an interpreter per worker (about 0.9 s of CPU each
    time). What the forkserver imported before forking is the same in the fork run, which forks from
    a process that made the env. The forkserver's vector env has one worker (the first seed's): what
    it checks, a worker that inherits nothing, is the same in every worker, and the fork run's
    ``num_envs`` workers check what depends on the number of workers (seeds by index, shared memory);
    each further worker would import the env's modules once more."""
    seeds = list(range(num_envs))
    maker = _Maker(env_id, _spec_json(env_id), dict(kwargs))
    default = multiprocessing.get_start_method()
    # The job's one async run may wait VECTOR_TIMEOUT_S to start, reset and at every step; then it is stuck.
    timeout_s = (steps + 2) * VECTOR_TIMEOUT_S + 60
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
        fresh_name = "AsyncVectorEnv(context='forkserver', shared_memory=False)"
        fresh = _vector_rollout(_fresh_workers, maker, seeds[:1], steps, fresh_name)
    except BaseException:
        job.cancel()
        raise
    results = [(fresh_name, [_first_env(entry) for entry in reference], fresh)]
    results += [(name, reference, result) for name, result in job.result(timeout_s).items()]
    for name, expected, result in results:
        for (obs_a, *rest_a), (obs_b, *rest_b) in zip(expected, result, strict=True):
            assert obs_a["text"] == obs_b["text"], f"{name} text differs from SyncVectorEnv's"
            assert obs_a["actions"] == obs_b["actions"], f"{name} actions differ from SyncVectorEnv's"
            assert np.array_equal(obs_a["image"], obs_b["image"]), f"{name} image differs from SyncVectorEnv's"
            assert all(np.array_equal(a, b) for a, b in zip(rest_a, rest_b, strict=True)), f"{name} rewards or flags differ"
    return (
        f"SyncVectorEnv and AsyncVectorEnv ({default} + shared memory, {num_envs} envs; forkserver, as spawn, 1 env) "
        f"agree over {steps} steps"
    )


def _async_vector(fns: list[Callable[[], gym.Env]], context: str | None, shared: bool) -> gym.vector.VectorEnv:
    return gym.vector.AsyncVectorEnv(fns, shared_memory=shared, context=context)


def _fresh_workers(fns: list[Callable[[], gym.Env]]) -> gym.vector.VectorEnv:
    """AsyncVectorEnv on the forkserver (see :func:`check_vector`), without shared memory. The preload
    is set while the forkserver has not started (afterwards multiprocessing ignores it), and only over
    multiprocessing's default, so a caller's own preload is kept."""
    context = multiprocessing.get_context("forkserver")
    server: Any = multiprocessing.forkserver._forkserver  # its state is private: read, never written
    if server._forkserver_pid is None and server._preload_modules == ["__main__"]:
        context.set_forkserver_preload(list(FORKSERVER_PRELOAD))
    return gym.vector.AsyncVectorEnv(fns, shared_memory=False, context="forkserver")


def _async_rollouts(
    maker: _Maker, seeds: list[int], steps: int, timeout_s: float, start_method: str
) -> dict[str, list[tuple[Any, ...]]]:
    """``_vector_rollout`` of AsyncVectorEnv with the default start method and shared memory, by name;
    run in a fresh process."""
    global VECTOR_TIMEOUT_S  # noqa: PLW0603 - the kit's setting in the owner, carried into this process
    VECTOR_TIMEOUT_S = timeout_s
    multiprocessing.set_start_method(start_method, force=True)  # the owner's default, as a user's script has it
    maker().close()  # the env's modules imported before the fork, as in a user's script (made, never reset)
    name = f"AsyncVectorEnv(context={start_method!r}, shared_memory=True)"
    return {name: _vector_rollout(functools.partial(_async_vector, context=None, shared=True), maker, seeds, steps, name)}


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
        # A generator per env, so that env i's actions do not depend on how many envs run beside it.
        rngs = [np.random.default_rng([0, i]) for i in range(len(seeds))]
        for _ in range(steps):
            actions = tuple(a[int(rng.integers(len(a)))] if a else "" for a, rng in zip(obs["actions"], rngs, strict=True))
            if isinstance(envs, gym.vector.AsyncVectorEnv):
                envs.step_async(actions)
                obs, rewards, terminated, truncated, _ = _wait(envs.step_wait, name, "step")
            else:
                obs, rewards, terminated, truncated, _ = envs.step(actions)
            trace.append((obs, rewards, terminated, truncated))
    finally:
        envs.close(terminate=True) if is_async else envs.close()
    return trace


def _first_env(entry: tuple[Any, ...]) -> tuple[Any, ...]:
    """One reset or step of a vector rollout (see :func:`_vector_rollout`) cut to its first env, as a
    one-env vector env returns it."""
    obs, *rest = entry
    return ({key: value[:1] for key, value in obs.items()}, *(np.asarray(value)[:1] for value in rest))


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
        f"{name} did not {what} within {VECTOR_TIMEOUT_S:g} s: a worker hangs (a forked worker must not "
        "inherit state it cannot use, such as an OpenGL context or a lock held by another thread)"
    )


def _wait(wait: Callable[..., Any], name: str, what: str) -> Any:
    try:
        return wait(timeout=VECTOR_TIMEOUT_S)
    except multiprocessing.TimeoutError:
        raise _hang(name, what) from None
