"""Decision-level metrics: every step of an episode scored against the env's solver.

The runner records, in each step of an episode log, the env's decision facts of the state the
action was taken in (``step["decision"]``: :meth:`rl4vlm_gym.core.VLMEnv.decision`, asked for
before the step) and those of the state the episode ended in (``record["final_decision"]``).
The functions here are pure: they read those facts and the steps' actions, nothing else, so the
leaderboard's replay, which recomputes the facts from the env, recomputes the metrics too.

Per step ``t`` (1-based), with ``D_t`` the facts before it and ``D_{t+1}`` those after it (the next
step's, or the final ones after the last step):

- **scored**: ``D_t`` names the optimal actions (a step whose env has no solver, or whose state is
  unsolvable or a game the solver cannot evaluate, is unscored and counted by its ``reason``);
- **optimal**: scored, valid, and its parsed action is one of ``D_t``'s optimal actions; or, where
  an optimal action fills a free-text template (WebShop's ``search[...]``: the facts name one
  query, others may be as good) and the move fills the same template, where the steps to go drop
  by exactly one after it;
- **error**: scored and not optimal. An invalid step is an error (and counted apart as invalid).

Per episode, from its steps:

- **decision accuracy**: optimal steps over scored steps; **valid accuracy**: optimal steps over
  scored valid steps (the accuracy of the moves the env accepted);
- **regret in steps** of a step whose ``D_t`` knows the steps to go ``s_t``: the step is **lost**
  when ``D_{t+1}`` says the task is unsolvable from there (or the episode ended, failed, by the
  env's own termination; an invalid step too, when it spent the last spare step of an env's own
  budget); else an invalid step costs 1 (the state is unchanged, a step is spent), and a valid one
  ``1 + s_{t+1} - s_t`` when the steps to go after it are known (0 for an optimal move, 2 for a
  move away from the goal), unknown otherwise (a planner gave up, the episode was cut by its step
  budget in a state the env no longer scores). Lost steps are counted, not summed;
- **regret in expected value** of a valid step whose ``D_t`` gives action values (games of chance):
  ``max_a V(a) - V(chosen)``;
- **first error**: the step number of the first error (``None``: no error);
- **recovery**: an error at step ``t`` taken with ``s_t`` steps to go is *recovered* when a later
  state of the episode (the state before a later step, or the final state) has fewer than ``s_t``
  steps to go: the agent got past the point where it erred, i.e. back onto an optimal path at least
  as far along as before the error (success always recovers, its final state having 0 to go).
  **Steps to recover** is then the number of steps from the error to that first state (1 + regret
  at best). Errors without known steps to go (games of chance) are not counted in recovery; an error
  that loses the game is never recovered;
- **errors by state feature**: each scored step's features, the family's own
  (``D_t["features"]``) and the harness's: ``steps_to_go`` (``s_t`` in power-of-two buckets, or
  ``unknown``), ``after_invalid`` (was the previous step invalid), ``after_error`` (was the
  previous step an error: do errors come in runs?) and ``episode_third`` (``first``,
  ``second`` or ``last`` third of the episode's steps). A family feature of the same name as one of
  the harness's is kept as ``env.<name>``.

:func:`decision_summary` aggregates them per task and overall (each task weighs the same, as in
:func:`rl4vlm_gym.harness.metrics.summarize`): ratios of sums over a task's episodes (so every
decision weighs the same within a task) with 95% bootstrap intervals that resample episodes, never
steps (the steps of one episode are not independent), from a fixed RNG.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rl4vlm_gym.harness.metrics import _tasks  # one grouping of records by task for every summary

__all__ = [
    "HARNESS_FEATURES",
    "RATIOS",
    "EpisodeDecisions",
    "StepScore",
    "decision_summary",
    "episode_decisions",
    "has_decisions",
    "score_steps",
    "steps_to_go_bucket",
]

HARNESS_FEATURES = ("steps_to_go", "after_invalid", "after_error", "episode_third")
"""The features the harness adds to every scored step (see the module docstring)."""

RATIOS: dict[str, tuple[str, str]] = {
    "accuracy": ("optimal", "scored"),
    "valid_accuracy": ("optimal", "scored_valid"),
    "invalid_rate": ("invalid_scored", "scored"),
    "regret_steps": ("regret_steps", "regret_known"),
    "regret_value": ("regret_value", "value_steps"),
    "recovery": ("recovered", "recoverable"),
    "steps_to_recover": ("recovery_steps", "recovered"),
    "first_error": ("first_error", "with_error"),
    "lost": ("lost", "tracked"),
}
"""Each summary metric as ``numerator / denominator`` of per-episode counts, summed over a task's
episodes (``first_error``: the mean first-error step of the episodes with an error; ``lost``: the
share of the episodes whose steps to go were known that moved into an unsolvable state)."""

FEATURE_VALUES_KEPT = 12
"""Values of one feature kept per task in a summary, the most common; the rest are ``other``."""

_BOOTSTRAP_SAMPLES = 2000
_BOOTSTRAP_SEED = 20261129
_BLOCK = 1 << 21  # resampled episode indices held at once
_UNSOLVABLE = "unsolvable"  # how a reason says the task cannot be solved from a state
_OVER = "the episode is over"


@dataclass(frozen=True)
class StepScore:
    """One step scored against its decision facts (see the module docstring)."""

    step: int  # 1-based
    scored: bool
    valid: bool
    optimal: bool | None  # None: unscored
    steps_to_go: int | None  # before the step
    regret_steps: int | None
    lost: bool
    regret_value: float | None
    reason: str | None  # why the step is unscored
    features: Mapping[str, str] = field(default_factory=dict)

    @property
    def error(self) -> bool:
        return self.scored and not self.optimal


@dataclass
class EpisodeDecisions:
    """One episode's decision metrics: the counts behind :data:`RATIOS`, the first error, and the
    scored steps' features with whether each was an error."""

    steps: int = 0
    scored: int = 0
    optimal: int = 0
    scored_valid: int = 0
    invalid_scored: int = 0
    regret_steps: int = 0
    regret_known: int = 0
    regret_value: float = 0.0
    value_steps: int = 0
    lost: int = 0  # 1 if the episode moved into an unsolvable state
    lost_step: int | None = None
    first_error: int = 0  # the step of the first error, 0 when none (then with_error is 0)
    with_error: int = 0
    recoverable: int = 0
    recovered: int = 0
    recovery_steps: int = 0
    tracked: int = 0  # 1 if the steps to go of some state of the episode were known
    unscored: Counter[str] = field(default_factory=Counter)
    breakdown: list[tuple[Mapping[str, str], bool]] = field(default_factory=list)

    def accuracy(self) -> float | None:
        return self.optimal / self.scored if self.scored else None


def has_decisions(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the records carry decision facts (logs written before the runner recorded them do not)."""
    return any("decision" in step for r in records for step in r.get("steps", ()))


def steps_to_go_bucket(steps: int | None) -> str:
    """``1``, ``2``, ``3-4``, ``5-8``, ``9-16``... (powers of two), or ``unknown``."""
    if steps is None or steps < 0:
        return "unknown"
    if steps <= 2:
        return str(steps)
    high = 1 << (steps - 1).bit_length()
    return f"{high // 2 + 1}-{high}"


def _known(facts: Mapping[str, Any] | None) -> int | None:
    """The steps to go of ``facts`` when known (``-1`` in the log means unknown)."""
    if facts is None:
        return None
    steps = facts.get("steps_to_go", -1)
    return None if steps is None or steps < 0 else int(steps)


def _unsolvable(facts: Mapping[str, Any] | None, record: Mapping[str, Any]) -> bool:
    """Whether the state after a step is one from which the task cannot be solved (the facts after
    the last step say the episode is over: then whether it ended failed by the env's own rules)."""
    if facts is None:
        return False
    reason = str(facts.get("reason") or "")
    if reason.startswith(_UNSOLVABLE):
        return True
    # the env ended the episode in failure by its own rules (a hole, a lost game), not by a budget
    return reason == _OVER and bool(record.get("terminated")) and not bool(record.get("success"))


_TEMPLATE = re.compile(r"([^\[\]]+)\[[^\]]*\]")


def _same_template(action: Any, optimal: Sequence[str]) -> bool:
    """Whether ``action`` fills a ``name[...]`` template that an optimal action fills too."""
    if not isinstance(action, str) or not (mine := _TEMPLATE.fullmatch(action)):
        return False
    return any((other := _TEMPLATE.fullmatch(a)) is not None and other.group(1) == mine.group(1) for a in optimal)


def score_steps(record: Mapping[str, Any]) -> list[StepScore]:
    """Score every step of one episode record (see the module docstring).

    Args:
        record: an episode record whose steps carry ``decision`` (a step without one is unscored,
            reason ``"not recorded"``); ``final_decision`` gives the facts after the last step.

    Returns:
        One :class:`StepScore` per step, in order.
    """
    steps = list(record.get("steps", ()))
    n = len(steps)
    after = [s.get("decision") for s in steps[1:]] + [record.get("final_decision")] if steps else []  # no step: nothing after
    scores = []
    previous_invalid = previous_error = False
    for i, (step, facts, next_facts) in enumerate(zip(steps, [s.get("decision") for s in steps], after, strict=True)):
        valid = bool(step.get("valid", True))
        optimal_actions = None if facts is None else facts.get("optimal_actions")
        scored = optimal_actions is not None
        optimal = None if optimal_actions is None else valid and step.get("parsed") in optimal_actions
        before = _known(facts)
        if optimal is False and valid and _same_template(step.get("parsed"), optimal_actions or ()):
            # free text (WebShop's search[...]): the facts name one filling, others may be as good
            later_known = _known(next_facts)
            optimal = before is not None and later_known is not None and later_known == before - 1
        regret: int | None = None
        lost = False
        if before is not None:
            later = _known(next_facts)
            if later is None and _unsolvable(next_facts, record):
                lost = True  # an invalid step too can lose: it spends a step of an env's own budget
            elif not valid:
                regret = 1
            elif later is not None:
                regret = 1 + later - before
        value = None
        values = None if facts is None else facts.get("values")
        if values and valid and step.get("parsed") in values:
            value = max(values.values()) - values[step["parsed"]]
        features: dict[str, str] = {}
        if scored:
            own = (facts or {}).get("features") or {}
            for name, v in own.items():
                features[f"env.{name}" if name in HARNESS_FEATURES else str(name)] = str(v)
            features["steps_to_go"] = steps_to_go_bucket(before)
            features["after_invalid"] = "yes" if previous_invalid else "no"
            features["after_error"] = "yes" if previous_error else "no"
            features["episode_third"] = ("first", "second", "last")[min(2, 3 * i // n)]
        reason = None if scored else str((facts or {}).get("reason") or "not recorded")
        scores.append(StepScore(i + 1, scored, valid, optimal, before, regret, lost, value, reason, features))
        previous_invalid = not valid
        previous_error = scored and not optimal
    return scores


def episode_decisions(record: Mapping[str, Any]) -> EpisodeDecisions:
    """The decision metrics of one episode record (the counts of :data:`RATIOS`)."""
    scores = score_steps(record)
    result = EpisodeDecisions(steps=len(scores))
    # the steps to go of each state: before step t (index t-1), and the final state (index n)
    states = [s.steps_to_go for s in scores] + [_known(record.get("final_decision"))]
    result.tracked = int(any(s.steps_to_go is not None for s in scores))
    for s in scores:
        if not s.scored:
            result.unscored[s.reason or "not recorded"] += 1
        else:
            result.scored += 1
            result.optimal += bool(s.optimal)
            result.scored_valid += s.valid
            result.invalid_scored += not s.valid
            result.breakdown.append((s.features, s.error))
            if s.error and not result.with_error:
                result.first_error, result.with_error = s.step, 1
        if s.regret_steps is not None:
            result.regret_steps += s.regret_steps
            result.regret_known += 1
        if s.lost and not result.lost:
            result.lost, result.lost_step = 1, s.step
        if s.regret_value is not None:
            result.regret_value += s.regret_value
            result.value_steps += 1
        if s.error and (erred_at := s.steps_to_go) is not None:
            result.recoverable += 1
            later = next((j for j in range(s.step, len(states)) if (known := states[j]) is not None and known < erred_at), None)
            if later is not None:
                result.recovered += 1
                result.recovery_steps += later - (s.step - 1)
    return result


def decision_summary(records: Iterable[Mapping[str, Any]], task_order: Sequence[str] | None = None) -> dict[str, Any]:
    """Decision metrics per task and overall, with 95% bootstrap intervals.

    Per task: each metric of :data:`RATIOS` as ``{"mean", "ci95"}`` (``None`` where its denominator
    is 0: no scored step, no values, no error), the counts (steps, scored steps, errors, lost
    episodes), why unscored steps were unscored (the five most common reasons, each cut at its first
    colon: ``"no solver"``, ``"unsolvable from here"``), and errors by state
    feature (``{feature: {value: [steps, errors]}}``, the :data:`FEATURE_VALUES_KEPT` most common
    values). Overall: the mean over the tasks where a metric is defined, its interval from the same
    resamples averaged across those tasks, and the summed counts.

    Args:
        records: episode records with decision facts.
        task_order: the suite's task names, to order the tasks (default: first seen).
    """
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    tasks: dict[str, Any] = {}
    samples: dict[str, list[np.ndarray]] = defaultdict(list)
    for name, rows in _tasks(records, task_order):
        episodes = [episode_decisions(r) for r in rows]
        counts = {key: np.array([float(getattr(e, key)) for e in episodes]) for pair in RATIOS.values() for key in pair}
        boots = _ratio_bootstrap(counts, rng)
        entry: dict[str, Any] = {}
        for metric, (num, den) in RATIOS.items():
            total = counts[den].sum()
            if total == 0:
                entry[metric] = None
                continue
            samples[metric].append(boots[metric])
            entry[metric] = _estimate(counts[num].sum() / total, boots[metric])
        unscored: Counter[str] = Counter()
        for e in episodes:  # by the reason's head: "unsolvable from here: 4 steps to go, 1 left" is "unsolvable from here"
            for reason, n in e.unscored.items():
                unscored[reason.split(":")[0]] += n
        entry.update(
            steps=sum(e.steps for e in episodes),
            scored_steps=sum(e.scored for e in episodes),
            errors=sum(e.scored - e.optimal for e in episodes),
            lost_episodes=sum(e.lost for e in episodes),
            unscored={reason: n for reason, n in sorted(unscored.items(), key=lambda kv: (-kv[1], kv[0]))[:5]},
            by_feature=_by_feature(pair for e in episodes for pair in e.breakdown),
        )
        tasks[name] = entry
    overall: dict[str, Any] = {"tasks": len(tasks)}
    for metric in RATIOS:
        means = [t[metric]["mean"] for t in tasks.values() if t[metric] is not None]
        overall[metric] = _estimate(float(np.mean(means)), np.mean(samples[metric], axis=0)) if means else None
    for key in ("steps", "scored_steps", "errors", "lost_episodes"):
        overall[key] = sum(t[key] for t in tasks.values())
    return {"overall": overall, "tasks": tasks}


def _ratio_bootstrap(counts: Mapping[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each ratio of :data:`RATIOS` over :data:`_BOOTSTRAP_SAMPLES` resamples of the episodes (the
    same resamples for every metric; ``nan`` where a resample's denominator is 0)."""
    n = len(next(iter(counts.values())))
    keys = list(counts)
    table = np.stack([counts[key] for key in keys], axis=1)  # (episodes, keys)
    sums = np.empty((_BOOTSTRAP_SAMPLES, len(keys)))
    block = max(1, min(_BOOTSTRAP_SAMPLES, _BLOCK // max(n, 1)))
    for start in range(0, _BOOTSTRAP_SAMPLES, block):
        rows = min(block, _BOOTSTRAP_SAMPLES - start)
        draw = rng.integers(0, n, size=(rows, n))
        # how often each episode is drawn in each resample, then every key's sum at once (a poker
        # board's 32,000 episodes: one bincount and one product, not a gather per key)
        weights = np.bincount((draw + n * np.arange(rows)[:, None]).ravel(), minlength=rows * n).reshape(rows, n)
        sums[start : start + rows] = weights.astype(np.float64) @ table  # 1.5 s CPU at 32,000 episodes, a gather per key 4.2 s
    index = {key: i for i, key in enumerate(keys)}
    with np.errstate(invalid="ignore", divide="ignore"):
        return {metric: sums[:, index[num]] / sums[:, index[den]] for metric, (num, den) in RATIOS.items()}


def _estimate(mean: float, boot: np.ndarray) -> dict[str, Any]:
    low, high = np.nanpercentile(boot, [2.5, 97.5]) if np.isfinite(boot).any() else (mean, mean)
    return {"mean": round(float(mean), 6), "ci95": [round(float(low), 6), round(float(high), 6)]}


def _by_feature(pairs: Iterable[tuple[Mapping[str, str], bool]]) -> dict[str, dict[str, list[int]]]:
    """``{feature: {value: [steps, errors]}}``, the most common values of each feature (then ``other``)."""
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for features, error in pairs:
        for name, value in features.items():
            cell = table[name][value]
            cell[0] += 1
            cell[1] += error
    result: dict[str, dict[str, list[int]]] = {}
    for name in sorted(table):
        values = sorted(table[name].items(), key=lambda kv: (-kv[1][0], kv[0]))
        kept = dict(values[:FEATURE_VALUES_KEPT])
        rest = values[FEATURE_VALUES_KEPT:]
        if rest:
            kept["other"] = [sum(v[0] for _, v in rest), sum(v[1] for _, v in rest)]
        result[name] = {value: list(cell) for value, cell in kept.items()}
    return result
