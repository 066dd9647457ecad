"""Run an agent over a suite: parallel workers, one JSONL line per episode, resumable.

A run writes into one folder:

- ``run.json``: the manifest: suite, protocol and its hash, the prompt, the agent's spec and
  description, the package version;
- ``episodes.jsonl``: one line per finished episode (:func:`play_episode` gives the fields),
  appended and flushed as each episode ends;
- ``summary.json``: :func:`rl4vlm_gym.harness.metrics.summarize` of the episodes.

Re-running the same command on the same folder resumes: finished episodes are read back and only
the missing ones are played, so a crash or Ctrl-C loses at most the episodes in flight. A line cut
short by a crash is dropped (and reported); any other damage stops the run with the line number.
Episodes are independent of which worker plays them (the agent is told each episode's seed), so a
resumed run gives the same episodes, and the same summary, as an uninterrupted one.

Workers are processes started with ``spawn`` (each makes its own agent and envs, and keeps its
envs between episodes). A worker that dies is replaced and its episode retried once; an agent that
raises or returns something other than a string ends its episode, which is recorded as failed
with the error, except an agent that cannot play at all (``AgentUnavailableError``: its model
endpoint is unreachable), which stops the run unrecorded, to be resumed once the model answers.
Agent arguments are checked against the agent's signature before the run's folder is written.
"""

from __future__ import annotations

import concurrent.futures as cf
import gzip
import importlib
import inspect
import json
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from rl4vlm_gym.agents import Agent, AgentUnavailableError, ModelAgent, agent_class, make_agent
from rl4vlm_gym.core import VLMEnv
from rl4vlm_gym.harness.suite import WRAPPERS, Suite, Task
from rl4vlm_gym.prompts import PromptConfig

__all__ = [
    "AgentSpec",
    "RunError",
    "build_summary",
    "decision_facts",
    "load_episodes",
    "make_task_env",
    "play_episode",
    "run_suite",
    "write_summary",
]

logger = logging.getLogger(__name__)


class RunError(RuntimeError):
    """A run cannot start or continue; the message says why and what to do."""


@dataclass(frozen=True)
class AgentSpec:
    """How to make an agent in any process: a name of :data:`rl4vlm_gym.agents.AGENTS` (or
    ``"module:Class"``) and its keyword arguments (JSON-able)."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def make(self, prompt: PromptConfig | None = None) -> Agent:
        """The agent; model agents get ``prompt`` unless the spec sets one, and the prompt
        protocol's default arguments (:meth:`for_prompt`)."""
        kwargs = dict(self.for_prompt(prompt).kwargs)
        if prompt is not None and issubclass(agent_class(self.name), ModelAgent):
            kwargs.setdefault("prompt", prompt)
        return make_agent(self.name, **kwargs)

    def for_prompt(self, prompt: PromptConfig | None) -> AgentSpec:
        """This spec with the arguments a model agent takes by default under ``prompt``'s protocol
        written out (:meth:`~rl4vlm_gym.agents.ModelAgent.protocol_defaults`: under the ``balrog``
        template BALROG's temperature 1.0 and 8192 new tokens); arguments the spec sets win. The
        run's manifest records the result, so a run says which sampling it used."""
        cls = agent_class(self.name)
        if not issubclass(cls, ModelAgent):
            return self
        own = self.kwargs.get("prompt", prompt)  # a spec's own prompt is the one its agent plays with
        if own is not None and not isinstance(own, PromptConfig):
            own = PromptConfig(**dict(own))
        return AgentSpec(self.name, {**cls.protocol_defaults(own), **self.kwargs})

    def check(self, prompt: PromptConfig | None = None) -> None:
        """Raise ``ValueError`` naming the problem when :meth:`make` would fail for want of an argument
        or for one the agent does not take, without making the agent (a model agent loads a model)."""
        cls = agent_class(self.name)
        kwargs = dict(self.for_prompt(prompt).kwargs)
        if prompt is not None and issubclass(cls, ModelAgent):
            kwargs.setdefault("prompt", prompt)
        try:
            inspect.signature(cls).bind(**kwargs)
        except TypeError as err:
            takes = [p for p in inspect.signature(cls).parameters if p not in ("self", "prompt")]
            raise ValueError(f"agent {self.name!r}: {err} (it takes {', '.join(takes) or 'no arguments'}; pass them as -a NAME=VALUE)") from None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kwargs": dict(self.kwargs)}


def make_task_env(task: Task, prompt: PromptConfig | None = None, render_mode: str | None = None) -> gym.Env:
    """``gym.make`` of a task's env with its kwargs, budget and wrappers. Under the ``balrog``
    prompt the env parses replies as the prompt's BALROG agent writes them, with exact matching
    (BALROG's), unless the task says otherwise. ``render_mode`` (``"rgb_array"``: frames of a
    text-only task too) is for showing states, never for playing a run."""
    kwargs = task.make_kwargs
    if prompt is not None and prompt.template == "balrog":
        kwargs = {"action_format": prompt.output_format, "action_match": "strict", **kwargs}
    if render_mode is not None:
        kwargs = {**kwargs, "render_mode": render_mode}
    env = gym.make(task.env, **kwargs)
    for name in task.wrappers:
        module, _, attr = WRAPPERS[name].partition(":")
        env = getattr(importlib.import_module(module), attr)(env)
    return env


def episode_optimal_steps(env: gym.Env, info: Mapping[str, Any]) -> int:
    """The episode's optimal steps, asked for right after ``reset``: envs whose plan is expensive
    leave it out of ``info`` unless asked (``VLMEnv.optimal_steps``); -1 where undefined."""
    base = env.unwrapped
    if isinstance(base, VLMEnv):
        return base.optimal_steps
    return int(info.get("optimal_steps", -1))


def play_episode(env: gym.Env, agent: Agent, task: Task, seed: int, decisions: bool = True) -> dict[str, Any]:
    """Play one episode and return its record (one JSONL line).

    The record holds the task, env id and version, level, obs mode and seed; per step the raw
    output, the parsed action, validity and parser error, reward, tokens and latencies, and the
    decision facts of the state the action was taken in (``decision``: the env's
    :meth:`~rl4vlm_gym.core.VLMEnv.decision` asked for just before the step); the episode's return,
    success, progress, steps, optimal steps, invalid actions, tokens and error, and the decision
    facts of the state the episode ended in (``final_decision``), from which the last step's regret
    is known. :mod:`rl4vlm_gym.harness.decisions` scores the steps from these facts. With
    ``decisions=False`` the record holds none (for envs whose solver is a planner too slow to ask
    at every step: the log is then scored by episode only).
    """
    spec_version = env.spec.version if env.spec is not None else None
    obs, info = env.reset(seed=seed)
    optimal = episode_optimal_steps(env, info)
    base = env.unwrapped
    steps: list[dict[str, Any]] = []
    terminated = truncated = False
    error = None
    clock = time.perf_counter
    try:
        agent.begin(env, seed)
    except AgentUnavailableError:
        raise
    except Exception as err:  # e.g. a few-shot agent without demonstrations for this env
        error = f"agent raised {type(err).__name__}: {err}"
    while error is None:
        t0 = clock()
        try:
            agent.observe(info)  # BALROG's prompt reads its observation text from info
            output = agent.act(obs)
        except AgentUnavailableError:  # no episode can be played: the run stops (run_suite)
            raise
        except Exception as err:  # the agent's failure ends the episode; the run goes on
            error = f"agent raised {type(err).__name__}: {err}"
            break
        t1 = clock()
        if not isinstance(output, str):
            error = f"agent returned {type(output).__name__}, not str: {output!r:.200}"
            break
        decision = decision_facts(base) if decisions else None
        t2 = clock()  # the decision's time is neither the agent's nor the step's
        obs, reward, terminated, truncated, info = env.step(output)
        t3 = clock()
        usage = agent.usage.get(0)
        action = info.get("action", {})
        steps.append(
            {
                "raw": output,
                "parsed": action.get("parsed"),
                "valid": bool(action.get("valid", True)),
                "error": action.get("error"),
                "reward": float(reward),
                "input_tokens": usage.input_tokens if usage else 0,
                "output_tokens": usage.output_tokens if usage else 0,
                "agent_ms": round((t1 - t0) * 1e3, 3),
                "env_ms": round((t3 - t2) * 1e3, 3),
            }
        )
        if decision is not None:
            steps[-1]["decision"] = decision
        if terminated or truncated:
            break
    record = {
        "task": task.name,
        "env_id": task.env,
        "version": spec_version,
        "level": info.get("level", task.level),
        "obs_mode": task.obs_mode,
        "seed": seed,
        "return": float(sum(s["reward"] for s in steps)),
        "success": bool(info.get("success", False)) and error is None,
        "progress": float(info.get("progress", 0.0)),
        "num_steps": len(steps),
        "optimal_steps": optimal,
        "invalid_actions": sum(not s["valid"] for s in steps),
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "input_tokens": sum(s["input_tokens"] for s in steps),
        "output_tokens": sum(s["output_tokens"] for s in steps),
        "error": error,
        "steps": steps,
    }
    if decisions:
        record["final_decision"] = decision_facts(base)
    return record


NO_FACTS = "not a VLMEnv: no decision facts"


def decision_facts(env: Any) -> dict[str, Any]:
    """The decision facts of ``env``'s current state (:meth:`~rl4vlm_gym.core.VLMEnv.decision`),
    as the episode log records them: a solver that raises does not stop the run, its error is the
    ``reason`` (the step is then unscored), as is an env that is not a :class:`VLMEnv`."""
    if not isinstance(env, VLMEnv):
        return {"optimal_actions": None, "steps_to_go": -1, "values": None, "reason": NO_FACTS, "features": None}
    try:
        return env.decision()
    except Exception as err:  # a broken solver costs its facts, never the episode
        reason = f"decision() raised {type(err).__name__}: {err}"[:500]
        return {"optimal_actions": None, "steps_to_go": -1, "values": None, "reason": reason, "features": None}


# Workers ------------------------------------------------------------------------------------------

_worker: _Worker | None = None


class _Worker:
    """One process's agent and envs (envs are kept between episodes of the same task)."""

    def __init__(self, suite: Suite, agent: AgentSpec, prompt: PromptConfig, decisions: bool = True) -> None:
        self.tasks = {t.name: t for t in suite.tasks}
        self.prompt = prompt
        self.decisions = decisions
        self.agent = agent.make(prompt)
        self.envs: dict[str, gym.Env] = {}

    def play(self, task_name: str, seed: int) -> dict[str, Any]:
        task = self.tasks[task_name]
        env = self.envs.get(task_name)
        if env is None:
            try:
                env = self.envs[task_name] = make_task_env(task, self.prompt)
            except Exception as err:
                return _failed(task, seed, f"making the env raised {type(err).__name__}: {err}")
        try:
            return play_episode(env, self.agent, task, seed, self.decisions)
        except AgentUnavailableError:
            raise
        except Exception as err:  # the env broke: record it, and make a fresh env next time
            self.envs.pop(task_name, None)
            _close_quietly(env)
            return _failed(task, seed, f"env raised {type(err).__name__}: {err}")

    def close(self) -> None:
        for env in self.envs.values():
            _close_quietly(env)
        self.envs.clear()
        self.agent.close()


def _init_worker(suite: Suite, agent: AgentSpec, prompt: PromptConfig, decisions: bool = True) -> None:
    import atexit

    import rl4vlm_gym  # noqa: F401  (registers the ids in a spawned process)

    global _worker
    _worker = _Worker(suite, agent, prompt, decisions)
    atexit.register(_worker.close)


def _play_in_worker(task_name: str, seed: int) -> dict[str, Any]:
    assert _worker is not None, "worker not initialised"
    return _worker.play(task_name, seed)


def _failed(task: Task, seed: int, error: str) -> dict[str, Any]:
    return {
        "task": task.name,
        "env_id": task.env,
        "version": None,
        "level": task.level,
        "obs_mode": task.obs_mode,
        "seed": seed,
        "return": 0.0,
        "success": False,
        "progress": 0.0,
        "num_steps": 0,
        "optimal_steps": -1,
        "invalid_actions": 0,
        "terminated": False,
        "truncated": False,
        "input_tokens": 0,
        "output_tokens": 0,
        "error": error,
        "steps": [],
    }


def _close_quietly(env: gym.Env) -> None:
    try:
        env.close()
    except Exception:  # closing a broken env must not hide the error that broke it
        logger.debug("closing an env failed", exc_info=True)


# The run ----------------------------------------------------------------------------------------


def run_suite(
    suite: Suite,
    agent: AgentSpec,
    out: str | Path,
    *,
    workers: int = 1,
    prompt: PromptConfig | None = None,
    on_episode: Callable[[dict[str, Any], int, int], None] | None = None,
    backend: str = "local",
    address: str | None = None,
    actor_options: Mapping[str, Any] | None = None,
    decisions: bool = True,
) -> list[dict[str, Any]]:
    """Play every episode of ``suite`` with ``agent`` that ``out`` does not hold yet.

    Args:
        suite: the suite.
        agent: how to make the agent (in each worker).
        out: the run folder (created; resumed if it holds a run of the same protocol and agent).
        workers: worker processes; 1 plays in this process.
        prompt: overrides the suite's prompt (the override enters the protocol hash).
        on_episode: called with each record (first those read back from ``out``), the number of
            episodes done and the total: for progress bars.
        backend: ``"local"`` (processes of this machine) or ``"ray"`` (``workers`` Ray actors, on
            this machine or a cluster: :mod:`rl4vlm_gym.harness.ray_runner`; same records).
        address: with ``backend="ray"``, the cluster to connect to (``"auto"``, ``"ray://host:port"``).
        actor_options: with ``backend="ray"``, Ray actor options over the env cards' resources.
        decisions: record each step's decision facts (:func:`play_episode`); keep the same choice
            when resuming, or the log mixes episodes with and without them.

    Returns:
        All the run's episode records, in suite order.
    """
    if backend not in ("local", "ray"):
        raise RunError(f"backend must be 'local' or 'ray', not {backend!r}")
    if backend == "local" and (address or actor_options):
        raise RunError("an address or actor options are for --backend ray")
    suite.check_envs()
    agent_class(agent.name)  # an unknown agent fails here, not in every worker
    prompt = prompt or suite.prompt
    agent.check(prompt)  # and missing or unknown arguments too, before the run's folder is written
    agent = agent.for_prompt(prompt)  # the protocol's sampling defaults, written into run.json
    out = Path(out)
    manifest = {
        "suite": suite.name,
        "axis": suite.axis,
        "protocol_hash": suite.protocol_hash(prompt),
        "protocol": suite.protocol(prompt),
        "prompt": prompt.as_dict(),
        "agent": agent.as_dict(),
        "rl4vlm_gym": _version(),
    }
    done = _open_run(out, manifest)
    wanted = suite.episodes
    todo = [key for key in wanted if key not in done]
    total = len(wanted)
    if on_episode is not None:
        for record in done.values():
            on_episode(record, len(done), total)
    if todo:
        with (out / "episodes.jsonl").open("a", encoding="utf-8") as sink:

            def save(record: dict[str, Any]) -> None:
                sink.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                sink.flush()
                os.fsync(sink.fileno())
                done[(record["task"], record["seed"])] = record
                if on_episode is not None:
                    on_episode(record, len(done), total)

            try:
                if backend == "ray":
                    from rl4vlm_gym.harness.ray_runner import play_on_ray

                    play_on_ray(
                        suite, agent, prompt, todo, save, workers=workers, address=address, actor_options=actor_options, decisions=decisions
                    )
                elif workers <= 1:
                    _run_inline(suite, agent, prompt, todo, save, decisions)
                else:
                    _run_pool(suite, agent, prompt, todo, save, workers, decisions)
            except AgentUnavailableError as err:
                raise RunError(
                    f"the agent cannot play: {err}. The run stopped with {len(done)} of {total} episodes saved in {out}; "
                    "once the model answers, run the same command again to resume"
                ) from None
    return [done[key] for key in wanted if key in done]


def _run_inline(
    suite: Suite, agent: AgentSpec, prompt: PromptConfig, todo: Iterable[tuple[str, int]], save: Callable, decisions: bool = True
) -> None:
    worker = _Worker(suite, agent, prompt, decisions)
    try:
        for task_name, seed in todo:
            save(worker.play(task_name, seed))
    finally:
        worker.close()


def _run_pool(
    suite: Suite, agent: AgentSpec, prompt: PromptConfig, todo: list[tuple[str, int]], save: Callable, workers: int, decisions: bool = True
) -> None:
    context = multiprocessing.get_context("spawn")

    def new_pool(n: int) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(n, mp_context=context, initializer=_init_worker, initargs=(suite, agent, prompt, decisions))

    # A dying worker breaks the pool and every episode in flight. Those are replayed one at a time
    # on a fresh one-worker pool, so the episode that kills its worker is known and recorded.
    suspects = _drain(new_pool(workers), todo, save)
    if suspects:
        logger.warning("a worker died; replaying the %d episode(s) it took down one at a time", len(suspects))
    pool = None
    try:
        for key in suspects:
            pool = pool or new_pool(1)
            if _drain(pool, [key], save, shutdown=False):
                pool.shutdown(wait=False)
                pool = None
                save(_failed(suite.task(key[0]), key[1], "the worker process died during this episode (twice)"))
    finally:
        if pool is not None:
            pool.shutdown(wait=True)


def _drain(pool: cf.ProcessPoolExecutor, keys: list[tuple[str, int]], save: Callable, shutdown: bool = True) -> list[tuple[str, int]]:
    """Play ``keys`` on ``pool``, saving each record; return the keys lost to a broken pool."""
    futures = {pool.submit(_play_in_worker, *key): key for key in keys}
    broken = []
    try:
        for future in cf.as_completed(futures):
            try:
                save(future.result())
            except cf.process.BrokenProcessPool:
                broken.append(futures[future])
    except BaseException:
        workers = _processes(pool)  # before shutdown, which forgets them
        pool.shutdown(wait=False, cancel_futures=True)
        _kill(workers)
        raise
    if shutdown or broken:
        pool.shutdown(wait=not broken)
    return sorted(broken, key=keys.index)


def _processes(pool: cf.ProcessPoolExecutor) -> list[Any]:
    """The pool's worker processes (a private table of the standard library's pool; empty once shut down)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def _kill(processes: list[Any]) -> None:
    for process in processes:
        if process.is_alive():
            process.kill()


def _open_run(out: Path, manifest: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """Create ``out`` or check it holds the same run, and read back its finished episodes."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "run.json"
    if manifest_path.exists():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise RunError(f"{manifest_path} is not valid JSON ({err}); move the folder away or pass another --out") from None
        for key in ("protocol_hash", "agent"):
            if old.get(key) != manifest[key]:
                raise RunError(
                    f"{out} holds a run with another {key.replace('_', ' ')} ({old.get(key)!r}, this run: "
                    f"{manifest[key]!r}); pass another --out to start a new run"
                )
    else:
        tmp = manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(manifest_path)
    records = load_episodes(out / "episodes.jsonl", repair=True)
    return {(r["task"], r["seed"]): r for r in records}


def load_episodes(path: str | Path, repair: bool = False) -> list[dict[str, Any]]:
    """Read an ``episodes.jsonl`` (or ``.jsonl.gz``); with ``repair``, cut off a last line left
    unfinished by a crash.

    Raises:
        RunError: a line other than an unfinished last one is not a JSON object (the message
            gives the line number).
    """
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    if path.suffix == ".gz":  # a finished run, compressed for a submission
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:
            raise RunError(f"{path}: not a valid gzip file ({err})") from None
        repair = False
    records = []
    offset = 0
    lines = data.split(b"\n")
    for number, line in enumerate(lines, 1):
        if number == len(lines) and line.strip() and repair:
            # No newline after it: the write may have been cut inside the record; play it again.
            logger.warning("%s: dropping an unfinished last line (%d bytes) left by a crash", path, len(line))
            with path.open("r+b") as f:
                f.truncate(offset)
            break
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError as err:
                raise RunError(f"{path}:{number}: not valid JSON ({err})") from None
            if not isinstance(record, dict) or not {"task", "seed"} <= record.keys():
                raise RunError(f"{path}:{number}: not an episode record (a JSON object with task and seed)")
            records.append(record)
        offset += len(line) + 1
    return records


def _version() -> str:
    import rl4vlm_gym

    return rl4vlm_gym.__version__


def build_summary(suite: Suite, records: list[dict[str, Any]], protocol_hash: str, agent: Any, complete: bool) -> dict[str, Any]:
    """A run's summary: its identity (suite, protocol hash, agent), whether every episode of the
    suite is in, the scores of :func:`~rl4vlm_gym.harness.metrics.summarize`, apart the timing, for
    suites that score their tasks the board's score (:func:`~rl4vlm_gym.harness.metrics.scored`),
    for suites played with BALROG's prompt, BALROG's own figures
    (:func:`~rl4vlm_gym.harness.metrics.balrog_summary`), and for logs with decision facts the
    decision metrics (:func:`~rl4vlm_gym.harness.decisions.decision_summary`; a log written before
    the runner recorded them has none, and its summary is as it was)."""
    from rl4vlm_gym.harness.decisions import decision_summary, has_decisions
    from rl4vlm_gym.harness.metrics import balrog_summary, scored, summarize, timing
    from rl4vlm_gym.registry import env_card

    summary = {
        "suite": suite.name,
        "axis": suite.axis,
        "protocol_hash": protocol_hash,
        "agent": agent,
        "complete": complete,
        **summarize(records, [t.name for t in suite.tasks]),
        "timing": timing(records),
    }
    if suite.scores is not None:  # the suite ranks its tasks by their own scores (chips in poker)
        summary["score"] = scored(records, suite.scores, [t.name for t in suite.tasks])
    if suite.prompt.template == "balrog":
        benchmark = {t.name: b for t in suite.tasks if (b := env_card(t.env).benchmark) is not None}
        summary["balrog"] = balrog_summary(records, benchmark)
    if has_decisions(records):
        summary["decisions"] = decision_summary(records, [t.name for t in suite.tasks])
    return summary


def write_summary(out: str | Path, suite: Suite, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Write ``summary.json`` (:func:`build_summary`) for the run in ``out`` and return it."""
    out = Path(out)
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    summary = build_summary(suite, records, manifest["protocol_hash"], manifest["agent"], len(records) == len(suite.episodes))
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out / "summary.json")
    return summary
