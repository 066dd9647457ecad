"""Scores from episode records: per-task and overall means with bootstrap intervals, and paired
comparisons of two runs on identical seeds.

Per episode (the fields of a record, :func:`rl4vlm_gym.harness.runner.play_episode`):

- ``success``: the env's ``info["success"]`` at the end (0 if the agent failed);
- ``progress``: the env's ``info["progress"]`` at the end, in ``[0, 1]``;
- ``normalised_steps``: ``success * optimal / max(taken, optimal)``, the optimal-length-weighted
  success of embodied navigation (SPL, Anderson et al. 2018); episodes whose optimal length is
  unknown (``optimal_steps == -1``: games of chance) are left out;
- ``invalid_action_rate``: invalid steps over all steps (pooled over the task's episodes).

A task's score is the mean over its seeds; the overall score is the mean over tasks (every task
weighs the same, as in BALROG). Intervals are 95% percentile bootstraps over seeds, stratified by
task, from a fixed RNG: the same records give the same intervals. Paired comparisons resample the
seed pairs both runs played, which removes the between-seed variance from the difference.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "METRICS",
    "balrog_average",
    "balrog_progression",
    "balrog_summary",
    "compare",
    "episode_scores",
    "scored",
    "summarize",
    "timing",
]

METRICS = ("success", "progress", "normalised_steps", "return")
BOOTSTRAP_SAMPLES = 2000
_BOOTSTRAP_SEED = 20261122
_BOOTSTRAP_BLOCK = 1 << 22  # resampled values held at once


def episode_scores(record: Mapping[str, Any]) -> dict[str, float | None]:
    """The per-episode metrics of one record (``None`` where undefined)."""
    optimal, taken = int(record["optimal_steps"]), int(record["num_steps"])
    success = float(bool(record["success"]))
    spl = None if optimal < 0 else (success * optimal / max(taken, optimal, 1))
    return {"success": success, "progress": float(record["progress"]), "normalised_steps": spl, "return": float(record["return"])}


def summarize(records: Iterable[Mapping[str, Any]], task_order: Sequence[str] | None = None) -> dict[str, Any]:
    """The summary of a run: per task and overall scores with 95% intervals, counts and tokens.

    Args:
        records: episode records.
        task_order: the suite's task names, to order the tasks (default: first seen).

    The result holds no timing, so resumed and uninterrupted runs of a deterministic agent have
    equal summaries; :func:`timing` reports latencies separately.
    """
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    tasks: dict[str, Any] = {}
    samples: dict[str, list[np.ndarray]] = defaultdict(list)  # metric -> per-task bootstrap means
    for name, rows in _tasks(records, task_order):
        scores = [episode_scores(r) for r in rows]
        entry: dict[str, Any] = {
            "env_id": rows[0]["env_id"],
            "level": rows[0]["level"],
            "obs_mode": rows[0]["obs_mode"],
            "episodes": len(rows),
        }
        for metric in METRICS:
            values = np.array([s[metric] for s in scores if s[metric] is not None], float)
            if values.size == 0:
                entry[metric] = None
                continue
            boot = _bootstrap_means(values, rng)
            samples[metric].append(boot)
            entry[metric] = _estimate(values.mean(), boot)
        steps = sum(int(r["num_steps"]) for r in rows)
        invalid = sum(int(r["invalid_actions"]) for r in rows)
        entry["invalid_action_rate"] = _round(invalid / steps) if steps else 0.0
        entry["mean_steps"] = _round(steps / len(rows))
        entry["failed_episodes"] = sum(r.get("error") is not None for r in rows)
        entry["input_tokens"] = sum(int(r["input_tokens"]) for r in rows)
        entry["output_tokens"] = sum(int(r["output_tokens"]) for r in rows)
        tasks[name] = entry
    overall: dict[str, Any] = {"tasks": len(tasks), "episodes": sum(t["episodes"] for t in tasks.values())}
    for metric in METRICS:
        means = [t[metric]["mean"] for t in tasks.values() if t[metric] is not None]
        overall[metric] = _estimate(np.mean(means), np.mean(samples[metric], axis=0)) if means else None
    rates = [t["invalid_action_rate"] for t in tasks.values()]
    overall["invalid_action_rate"] = _round(float(np.mean(rates))) if rates else 0.0
    for key in ("failed_episodes", "input_tokens", "output_tokens"):
        overall[key] = sum(t[key] for t in tasks.values())
    return {"overall": overall, "tasks": tasks}


def scored(records: Iterable[Mapping[str, Any]], scores: Mapping[str, Any], task_order: Sequence[str] | None = None) -> dict[str, Any]:
    """The board's score of a run whose suite scores its tasks (:class:`~rl4vlm_gym.harness.suite.TaskScore`).

    Per task: its metric (``success`` or ``return``) in its own unit with a 95% interval, and
    ``score``: that metric mapped onto ``[0, 1]``; overall: the mean of the tasks' scores, with a
    bootstrap interval stratified by task as in :func:`summarize` (same resamples, so the same
    records give the same figures). A duplicate task's intervals resample whole deals.
    """
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    tasks: dict[str, Any] = {}
    samples = []
    for name, rows in _tasks(records, task_order):
        rule = scores[name]
        raw = np.array([float(bool(r["success"])) if rule.metric == "success" else float(r["return"]) for r in rows])
        normalised = np.array([rule.normalise(float(bool(r["success"])), float(r["return"])) for r in rows])
        # the duplicate format: the seeds of one deal (from each seat) are resampled together, so
        # the interval keeps the card luck their sum cancels; the suite checks deals are whole
        deal = np.array([int(r["seed"]) // rule.duplicate for r in rows])
        boot = _bootstrap_means(_deal_means(raw, deal), rng)
        score_boot = _bootstrap_means(_deal_means(normalised, deal), rng)
        samples.append(score_boot)
        tasks[name] = {
            "metric": rule.metric,
            "unit": rule.unit,
            "value": _estimate(raw.mean(), boot),
            "score": _estimate(normalised.mean(), score_boot),
            "episodes": len(rows),
        }
    overall = _estimate(np.mean([t["score"]["mean"] for t in tasks.values()]), np.mean(samples, axis=0)) if tasks else None
    return {"overall": overall, "tasks": tasks}


def _tasks(records: Iterable[Mapping[str, Any]], task_order: Sequence[str] | None) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Each task's records by seed, the tasks in ``task_order`` (those it omits after, by name)."""
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    order = [t for t in (task_order or by_task) if t in by_task] + sorted(set(by_task) - set(task_order or by_task))
    return [(name, sorted(by_task[name], key=lambda r: r["seed"])) for name in order]


def _deal_means(values: np.ndarray, deal: np.ndarray) -> np.ndarray:
    """The mean of ``values`` per deal (``deal[i]`` names episode ``i``'s), deals in sorted order."""
    keys, index = np.unique(deal, return_inverse=True)
    if keys.size == values.size:
        return values
    return np.bincount(index, weights=values) / np.bincount(index)


def timing(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Median and 95th-percentile agent and env milliseconds per step (not part of the summary)."""
    steps = [s for r in records for s in r["steps"]]
    if not steps:
        return {}
    agent = [s["agent_ms"] for s in steps]
    env = [s["env_ms"] for s in steps]
    return {
        "steps": len(agent),
        "agent_ms_p50": _round(float(np.percentile(agent, 50))),
        "agent_ms_p95": _round(float(np.percentile(agent, 95))),
        "env_ms_p50": _round(float(np.percentile(env, 50))),
        "env_ms_p95": _round(float(np.percentile(env, 95))),
    }


def compare(
    records: Iterable[Mapping[str, Any]], baseline: Iterable[Mapping[str, Any]], metrics: Sequence[str] = ("success", "progress")
) -> dict[str, Any]:
    """Paired comparison of a run against a baseline run on the ``(task, seed)`` pairs both played.

    For each metric: the mean difference (run minus baseline) with a 95% bootstrap interval over
    pairs (stratified by task), and how many pairs the run wins, ties and loses.
    """
    ours = {(r["task"], r["seed"]): episode_scores(r) for r in records}
    theirs = {(r["task"], r["seed"]): episode_scores(r) for r in baseline}
    pairs = sorted(ours.keys() & theirs.keys())
    result: dict[str, Any] = {"pairs": len(pairs), "only_in_run": len(ours) - len(pairs), "only_in_baseline": len(theirs) - len(pairs)}
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    for metric in metrics:
        by_task: dict[str, list[float]] = defaultdict(list)
        for key in pairs:
            a, b = ours[key][metric], theirs[key][metric]
            if a is not None and b is not None:
                by_task[key[0]].append(a - b)
        if not by_task:
            result[metric] = None
            continue
        diffs = np.concatenate([np.array(d) for d in by_task.values()])
        boot = np.mean([_bootstrap_means(np.array(d), rng) for d in by_task.values()], axis=0)
        estimate = _estimate(np.mean([np.mean(d) for d in by_task.values()]), boot)
        estimate.update(wins=int((diffs > 0).sum()), ties=int((diffs == 0).sum()), losses=int((diffs < 0).sum()))
        result[metric] = estimate
    return result


def _bootstrap_means(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Means of ``BOOTSTRAP_SAMPLES`` resamples (with replacement) of ``values``."""
    # numpy, not scipy.stats.bootstrap: stratified per task and averaged across tasks, which
    # scipy's one-statistic API does not express, in four lines.
    # In blocks of resamples, so a task of many thousand seeds (poker) stays in a few MB; the
    # draws are the same stream as one (BOOTSTRAP_SAMPLES, n) draw, hence the same intervals.
    block = max(1, min(BOOTSTRAP_SAMPLES, _BOOTSTRAP_BLOCK // max(values.size, 1)))
    means = np.empty(BOOTSTRAP_SAMPLES)
    for start in range(0, BOOTSTRAP_SAMPLES, block):
        rows = min(block, BOOTSTRAP_SAMPLES - start)
        means[start : start + rows] = values[rng.integers(0, values.size, size=(rows, values.size))].mean(axis=1)
    return means


def _estimate(mean: float, boot: np.ndarray) -> dict[str, Any]:
    low, high = np.percentile(boot, [2.5, 97.5])
    return {"mean": _round(float(mean)), "ci95": [_round(float(low)), _round(float(high))]}


def _round(x: float) -> float:
    return round(x, 6)


def balrog_progression(progressions: Sequence[float]) -> dict[str, float | int]:
    """BALROG's per-env figure (``balrog/utils.py``): the mean progression and its standard error,
    both in percent, with the population SD: ``SE = sqrt(sum((p - m)^2) / N) / sqrt(N)``, 0 when
    ``N <= 1``. Unlike BALROG, pass every episode played: a crashed one counts as progression 0
    (BALROG drops it silently). Written here (a few lines) so that our numbers sit next to theirs."""
    values = np.asarray(progressions, dtype=float)
    n = len(values)
    if n == 0:
        return {"progression_percentage": 0.0, "standard_error": 0.0, "episodes_played": 0}
    if not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError(f"progressions must be in [0, 1], got {values[(values < 0.0) | (values > 1.0)][:3].tolist()}")
    mean = float(values.mean())
    se = float(np.sqrt(np.sum((values - mean) ** 2) / n) / np.sqrt(n)) if n > 1 else 0.0
    return {"progression_percentage": 100.0 * mean, "standard_error": 100.0 * se, "episodes_played": n}


def balrog_average(per_env: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """BALROG's overall figure: the unweighted mean of the envs' percentages, and
    ``sqrt(sum(SE_env^2)) / n_envs`` as its standard error."""
    if not per_env:
        return {"average_progress": 0.0, "standard_error": 0.0}
    means = [env["progression_percentage"] for env in per_env.values()]
    errors = [env["standard_error"] for env in per_env.values()]
    return {"average_progress": float(np.mean(means)), "standard_error": float(np.sqrt(np.sum(np.square(errors))) / len(errors))}


def balrog_summary(records: Iterable[Mapping[str, Any]], benchmark: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """BALROG's summary (``balrog/utils.py``) of a run: per BALROG env, the episodes of all its tasks
    pooled into :func:`balrog_progression`, with per-task figures, mean steps and tokens; overall,
    :func:`balrog_average`. Beside each BALROG figure, ``ci95``: our 95% bootstrap interval of the
    same pooled mean (in percent, resampled within each task). Episodes that ended in an error
    count with progression 0, where BALROG drops them.

    Args:
        records: episode records.
        benchmark: task name -> ``(BALROG env, BALROG task)`` (``EnvCard.benchmark``); tasks
            missing from it are left out.
    """
    by_env: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["task"] in benchmark:
            env, task = benchmark[r["task"]]
            by_env[env][task].append(r)
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    envs: dict[str, Any] = {}
    for env in sorted(by_env):
        tasks = by_env[env]
        progress = {task: [0.0 if r.get("error") is not None else float(r["progress"]) for r in rows] for task, rows in tasks.items()}
        pooled = [p for values in progress.values() for p in values]
        rows = [r for task_rows in tasks.values() for r in task_rows]
        boot = sum(_bootstrap_means(np.array(v), rng) * len(v) for v in progress.values()) / len(pooled)
        low, high = np.percentile(boot, [2.5, 97.5])
        envs[env] = {
            **balrog_progression(pooled),
            "ci95": [_round(100.0 * float(low)), _round(100.0 * float(high))],
            "average_steps": _round(float(np.mean([int(r["num_steps"]) for r in rows]))),
            "episodes_failed": sum(r.get("error") is not None for r in rows),
            "tasks": {task: balrog_progression(values) for task, values in sorted(progress.items())},
            "input_tokens": sum(int(r["input_tokens"]) for r in rows),
            "output_tokens": sum(int(r["output_tokens"]) for r in rows),
        }
    return {"envs": envs, **balrog_average(envs)}
