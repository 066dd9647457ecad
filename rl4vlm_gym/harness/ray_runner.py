"""Play a run's episodes on Ray actors, on this machine or a cluster, losing none to faults.

:func:`rl4vlm_gym.harness.runner.run_suite` calls :func:`play_on_ray` with ``backend="ray"``; the
run folder, ``episodes.jsonl``, resume and summary are the local runner's. Each actor is one of the
local runner's workers (an agent, and envs kept between episodes of a task): an episode is one
remote call that returns its record, so the records are the same bytes as a local run's for the
same seeds (timings aside), whichever actor or machine plays them.

Placement: an actor asks Ray for the resources of the envs it plays (:func:`task_resources`, from
the env card's ``resources``, default one CPU, e.g. memory for a browser env), updated by the
caller's ``actor_options`` (``num_gpus`` for a model agent); software OpenGL renders with the CPUs
asked for (:func:`~rl4vlm_gym.backends.ray_init.set_render_threads_if_unset`). Tasks asking the same
resources share actors; at most ``workers`` actors exist at once.

Faults: an actor that dies (``ray.kill``, out of memory, its node removed) loses only the episode
it was playing: that episode is played again from its seed on another actor, and a new actor is
started in its place (it joins when Ray finds room for it; until then the others carry on). An
episode whose actor dies ``max_attempts`` times is recorded as failed, saying so, as the local
runner does for a worker that dies twice. Finished episodes are in ``episodes.jsonl`` before the
next is handed out, so a driver that dies loses only the episodes in flight: its actors die with
it (they belong to its job), and so does a local Ray it started (:mod:`rl4vlm_gym.backends.ray_init`);
running the same command again resumes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rl4vlm_gym.backends.ray_init import init_ray, set_render_threads_if_unset
from rl4vlm_gym.harness.runner import AgentSpec, RunError, _failed, _Worker
from rl4vlm_gym.harness.suite import Suite, Task
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["play_on_ray", "task_resources"]

logger = logging.getLogger(__name__)

# An actor that cannot even start this many times in a row (its agent or suite cannot be made
# there, e.g. the package is missing on a node) stops the run instead of failing forever.
_START_FAILURES = 3


def task_resources(task: Task, actor_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Ray actor options for a worker playing ``task``: one CPU, the card's ``resources``, then
    ``actor_options``."""
    from rl4vlm_gym.registry import env_card

    return {"num_cpus": 1, **env_card(task.env).resources, **(actor_options or {})}


class _EvalActor:
    """A Ray actor: one runner worker (agent and envs)."""

    def __init__(self, suite: Suite, agent: AgentSpec, prompt: PromptConfig, decisions: bool = True) -> None:
        import rl4vlm_gym  # noqa: F401  (registers the ids in Ray's worker process)

        set_render_threads_if_unset()
        self.worker = _Worker(suite, agent, prompt, decisions)

    def ready(self) -> bool:
        return True

    def play(self, task_name: str, seed: int) -> dict[str, Any]:
        return self.worker.play(task_name, seed)

    def close(self) -> None:
        self.worker.close()


@dataclass(eq=False)
class _Actor:
    handle: Any
    group: tuple
    state: str = "starting"  # starting, idle, busy


def play_on_ray(
    suite: Suite,
    agent: AgentSpec,
    prompt: PromptConfig,
    todo: list[tuple[str, int]],
    save: Callable[[dict[str, Any]], None],
    *,
    workers: int = 1,
    address: str | None = None,
    actor_options: Mapping[str, Any] | None = None,
    max_attempts: int = 3,
    decisions: bool = True,
) -> None:
    """Play the episodes ``todo`` on at most ``workers`` Ray actors, calling ``save`` with each record.

    Args:
        address: the cluster (``"auto"``, ``"ray://host:10001"``, ...) when Ray is not connected
            yet; ``None`` starts a local Ray (ended on return). A connection made by the caller is kept.
        actor_options: Ray actor options over every task's :func:`task_resources`.
        max_attempts: plays of one episode cut short by its actor's death before it is recorded as failed.
        decisions: record each step's decision facts (:func:`~rl4vlm_gym.harness.runner.play_episode`).
    """
    try:
        import ray
    except ImportError:
        raise RunError("--backend ray needs Ray: pip install 'rl4vlm-gym[ray]'") from None

    owned = init_ray(address=address, log_to_driver=False) if not ray.is_initialized() else None
    remote = ray.remote(_EvalActor)
    tasks = {t.name: t for t in suite.tasks}
    options = {name: task_resources(t, actor_options) for name, t in tasks.items()}
    group_of = {name: tuple(sorted(o.items(), key=lambda kv: kv[0])) for name, o in options.items()}
    run_id = uuid.uuid4().hex[:8]
    made = 0
    actors: list[_Actor] = []
    pending = list(todo)
    attempts: dict[tuple[str, int], int] = {}
    ready: dict[Any, _Actor] = {}
    in_flight: dict[Any, tuple[tuple[str, int], _Actor]] = {}
    start_failures = 0

    def start(group: tuple) -> None:
        nonlocal made
        made += 1
        handle = remote.options(**dict(group), max_restarts=0, max_task_retries=0, name=f"rl4vlm-eval-{run_id}-{made}").remote(
            suite, agent, prompt, decisions
        )
        actor = _Actor(handle, group)
        actors.append(actor)
        ready[handle.ready.remote()] = actor

    def drop(actor: _Actor) -> None:
        actors.remove(actor)
        ray.kill(actor.handle)

    try:
        while pending or in_flight:
            # Hand each idle actor the first pending episode of its group.
            for actor in actors:
                if actor.state == "idle":
                    key = next((k for k in pending if group_of[k[0]] == actor.group), None)
                    if key is not None:
                        pending.remove(key)
                        actor.state = "busy"
                        in_flight[actor.handle.play.remote(*key)] = (key, actor)
            # Start actors for the groups still waiting, evicting idle actors no pending episode needs.
            waiting: dict[tuple, int] = {}
            for key in pending:
                waiting[group_of[key[0]]] = waiting.get(group_of[key[0]], 0) + 1
            for group, count in waiting.items():
                have = sum(a.group == group and a.state != "busy" for a in actors)
                while have < min(count, workers):
                    if len(actors) >= workers:
                        spare = next((a for a in actors if a.state == "idle" and a.group not in waiting), None)
                        if spare is None or any(a.group == group for a in actors):
                            break
                        drop(spare)
                    start(group)
                    have += 1
            refs = list(in_flight) + list(ready)
            if not refs:
                raise RunError("the Ray runner has episodes left but no actor to play them (a bug)")
            done, _ = ray.wait(refs, num_returns=1)
            for ref in done:
                if ref in ready:
                    actor = ready.pop(ref)
                    try:
                        ray.get(ref)
                    except ray.exceptions.RayActorError as err:
                        drop(actor)
                        start_failures += 1
                        if start_failures >= _START_FAILURES:
                            raise RunError(f"Ray actors of this run fail to start ({_START_FAILURES} in a row): {err}") from None
                        logger.warning("a Ray actor died while starting (%s); starting another", type(err).__name__)
                        continue
                    start_failures = 0
                    actor.state = "idle"
                    continue
                key, actor = in_flight.pop(ref)
                try:
                    record = ray.get(ref)
                except ray.exceptions.RayActorError as err:
                    drop(actor)  # dead, or unreachable (a lost node): either way not used again
                    attempts[key] = attempts.get(key, 0) + 1
                    if attempts[key] >= max_attempts:
                        logger.warning("episode %s seed %d: its actor died %d times; recorded as failed", *key, attempts[key])
                        save(_failed(tasks[key[0]], key[1], f"the Ray actor died during this episode ({attempts[key]} times)"))
                    else:
                        logger.warning(
                            "episode %s seed %d: its Ray actor died (%s); replaying it from its seed", *key, type(err).__name__
                        )
                        pending.insert(0, key)
                    continue
                actor.state = "idle"
                save(record)
    finally:
        _end(ray, actors)
        if owned is not None:
            ray.shutdown()
            owned.release()


def _end(ray: Any, actors: list[_Actor]) -> None:
    """Close the live actors' envs and agents (briefly), then end every actor."""
    closing = [a.handle.close.remote() for a in actors if a.state == "idle"]
    if closing:
        ray.wait(closing, num_returns=len(closing), timeout=30)
    for actor in actors:
        ray.kill(actor.handle)
