"""A run written in BALROG's result layout, so its files sit beside BALROG's and its leaderboard's.

BALROG (balrog-ai/BALROG at af7d1f1: ``balrog/evaluator.py``, ``balrog/utils.py``) writes, under one run
folder::

    <env>/<task>/<task>_run_<NN>.json    one per episode (a task id with "/" nests folders)
    <env>/<task>/<task>_run_<NN>.csv     its steps: Step, Action, Reasoning, Observation, Reward, Done
    <env>/<env>_summary.json             progression_percentage, standard_error, ... per env
    summary.json                         average_progress and standard_error over the envs

:func:`write_balrog_results` writes that layout from one of our run folders (``run.json`` and
``episodes.jsonl``). The numbers are :func:`~rl4vlm_gym.harness.metrics.balrog_summary`'s: BALROG's
formulas, except that errored episodes count (progression 0) and are listed, never dropped.
Where our records hold less than BALROG's, fields are left out rather than made up: the CSV's
Observation column is empty (records keep outputs, not observations), and the env-specific stats
(BabyAI's mission, Crafter's achievements) are not written. ``NN`` numbers a task's episodes in
the order of the suite's seeds, and each episode's JSON records its seed.
"""

from __future__ import annotations

import csv
import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness.metrics import balrog_summary
from rl4vlm_gym.harness.runner import RunError, load_episodes
from rl4vlm_gym.harness.suite import Suite, SuiteError, load_suite
from rl4vlm_gym.parsing import balrog_extract
from rl4vlm_gym.prompts import PromptConfig
from rl4vlm_gym.registry import env_card, env_class

__all__ = ["write_balrog_results"]


def write_balrog_results(run: str | Path, out: str | Path) -> dict[str, Any]:
    """Write run folder ``run`` in BALROG's layout under ``out``; returns the overall summary.

    Raises:
        RunError: ``run`` is not a run folder, its suite is unknown, or none of its tasks is a
            BALROG task (no ``EnvCard.benchmark``).
    """
    run, out = Path(run), Path(out)
    try:
        manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
        suite = load_suite(manifest["suite"])
    except (OSError, ValueError, KeyError, SuiteError) as err:
        raise RunError(f"{run} is not a run folder of a known suite ({type(err).__name__}: {err})") from None
    prompt = PromptConfig(**manifest["prompt"])
    benchmark = {t.name: b for t in suite.tasks if (b := env_card(t.env).benchmark) is not None}
    if not benchmark:
        raise RunError(f"suite {suite.name!r} has no BALROG task (no env card names a benchmark task)")
    records = [r for r in load_episodes(run / "episodes.jsonl") if r["task"] in benchmark]
    summary = balrog_summary(records, benchmark)
    agent = manifest["agent"]
    for record in records:
        env, task = benchmark[record["task"]]
        number = _episode_number(suite, record)
        folder = out / env / task
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{task.rsplit('/', 1)[-1]}_run_{number:02d}"
        (folder / f"{stem}.json").write_text(json.dumps(_episode_json(record, task, prompt, agent), indent=1) + "\n", encoding="utf-8")
        _write_csv(folder / f"{stem}.csv", record, prompt)
    for env, figures in summary["envs"].items():
        (out / env).mkdir(parents=True, exist_ok=True)
        (out / env / f"{env}_summary.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    overall = {
        "average_progress": summary["average_progress"],
        "standard_error": summary["standard_error"],
        "environments": sorted(summary["envs"]),
        "suite": suite.name,
        "protocol_hash": manifest["protocol_hash"],
    }
    (out / "summary.json").write_text(json.dumps(overall, indent=1) + "\n", encoding="utf-8")
    return overall


def _episode_number(suite: Suite, record: dict[str, Any]) -> int:
    return suite.task(record["task"]).seeds.index(record["seed"])


def _played(record: dict[str, Any], default: str | None) -> list[str]:
    """The actions the env executed: the parsed action, or the default in place of an invalid one
    (the suite's ``balrog-actions`` wrapper played it)."""
    return [step["parsed"] if step["valid"] or default is None else default for step in record["steps"]]


def _episode_json(record: dict[str, Any], task: str, prompt: PromptConfig, agent: dict[str, Any]) -> dict[str, Any]:
    default = _default_action(record["env_id"])
    episode: dict[str, Any] = {
        "task": task,
        "action_frequency": dict(Counter(a for a in _played(record, default) if a is not None)),
        "input_tokens": record["input_tokens"],
        "output_tokens": record["output_tokens"],
        "episode_return": record["return"],
        "num_steps": record["num_steps"],
        "failed_candidates": [step["raw"] for step in record["steps"] if not step["valid"]],
        "seed": record["seed"],
        "agent": {"type": prompt.output_format.removeprefix("balrog-").replace("-", "_"), **agent},
        "progression": 0.0 if record.get("error") is not None else record["progress"],
    }
    if record["terminated"] or record["truncated"]:
        episode["done"] = True
    if record.get("error") is not None:
        episode["error"] = record["error"]  # BALROG writes no file for such an episode
    return episode


def _write_csv(path: Path, record: dict[str, Any], prompt: PromptConfig) -> None:
    steps = record["steps"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Step", "Action", "Reasoning", "Observation", "Reward", "Done"])
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            done = last and (record["terminated"] or record["truncated"])
            writer.writerow([i, balrog_extract(prompt.output_format, step["raw"]), _reasoning(prompt, step["raw"]), "", step["reward"], done])


def _reasoning(prompt: PromptConfig, raw: str) -> str:
    """BALROG's CSV "Reasoning": the CoT agents keep their whole (stripped) completion as the
    response's reasoning; the naive and few-shot agents keep none (an empty cell)."""
    return raw.strip() if prompt.output_format in ("balrog-cot", "balrog-robust-cot") else ""


@functools.cache
def _default_action(env_id: str) -> str | None:
    """The env class's ``DEFAULT_ACTION`` (its module is imported, the env not made)."""
    return getattr(env_class(env_id), "DEFAULT_ACTION", None)
