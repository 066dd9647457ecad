"""The decision report: where agents go wrong, family by family, decision by decision.

``rl4vlm-gym decisions RUN [--compare OTHER] [--trained-on FAMILY] [--out report.html]`` reads a
run folder (``run.json`` and ``episodes.jsonl``, whose steps carry the env's decision facts, see
:mod:`rl4vlm_gym.harness.decisions`) and writes one static, self-contained HTML page (the
machinery of :mod:`rl4vlm_gym.harness.report`):

- **per family**: decision accuracy, regret and recovery with 95% intervals (the family's tasks
  pooled, intervals over episodes), the most common errors (the state, as its steps to go and the
  family's features, the move taken and the optimal moves, how often, with an example episode),
  errors by state feature (which features raise the error rate), and for the most common errors
  the frame of the state they were made in: the seed played again, with the logged outputs, up
  to that step (at most ``images`` frames, checked against the logged facts: a replay that does
  not reach the logged state shows no frame);
- **with --compare**: the two runs on the seeds both played, decision by decision: while both
  episodes are in the same state (the same valid actions so far, so the same state in a
  deterministic env), each decision is *kept* (same move), *fixed* (the other run erred, this one
  is optimal), *broken* (the reverse) or *changed* (another move, both optimal or both errors); from
  the first different move on the episodes diverge and are not compared. Per family: each run's
  accuracy and the paired difference (this run minus the other) with a 95% interval over seeds;
- **decision transfer** (``--trained-on FAMILY``, with --compare: the other run is before training
  on FAMILY, this one after): the change of decision accuracy on every family, the trained one
  marked, and the mean change over the others: whether training on one family changed decisions on
  another.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.decisions import decision_summary, has_decisions, score_steps
from rl4vlm_gym.harness.report import DECISION_METRICS, _Figure, _Heading, _Image, _Table, _Text, html_from_blocks, score_cell
from rl4vlm_gym.harness.runner import load_episodes
from rl4vlm_gym.harness.suite import Task
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["ERRORS_SHOWN", "DecisionReportError", "compare_decisions", "error_kinds", "family_of", "write_decision_report"]

ERRORS_SHOWN = 8
"""Error kinds listed per family."""
_EXAMPLES = 3
_BOOTSTRAP_SAMPLES = 2000
_BOOTSTRAP_SEED = 20261129
_FRAME_SIDE = 256  # frames are shrunk to at most this many pixels a side


class DecisionReportError(ValueError):
    """A run folder cannot be read for a decision report; the message says why."""


@dataclass
class _Run:
    folder: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    tasks: dict[str, Task]

    @property
    def label(self) -> str:
        agent = self.manifest.get("agent") or {}
        model = (agent.get("kwargs") or {}).get("model")
        return str(agent.get("name", "?")) + (f" ({model})" if model else "") + f" on {self.manifest.get('suite', '?')}"


def _load(folder: str | Path) -> _Run:
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DecisionReportError(f"{folder}: no readable run.json ({err}): is it a run folder? (rl4vlm-gym eval writes one)") from None
    episodes = next((folder / n for n in ("episodes.jsonl", "episodes.jsonl.gz") if (folder / n).exists()), folder / "episodes.jsonl")
    records = load_episodes(episodes)
    if not has_decisions(records):
        raise DecisionReportError(
            f"{folder}: its episodes carry no decision facts (a run from before the runner recorded them): run it again"
        )
    tasks = {t["name"]: Task(**t) for t in (manifest.get("protocol") or {}).get("tasks", [])}
    return _Run(folder, manifest, records, tasks)


def family_of(env_id: str) -> str:
    """The env family of ``env_id`` (its card's), or the id's name without version where it is not registered here."""
    from rl4vlm_gym.registry import env_card

    try:
        return env_card(env_id).family
    except Exception:  # an id this install lacks: still a group of its own
        return env_id.split("/")[-1].rsplit("-v", 1)[0]


def _families(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    families: dict[str, str] = {}
    for r in records:
        env_id = str(r["env_id"])
        if env_id not in families:
            families[env_id] = family_of(env_id)
        groups[families[env_id]].append(r)
    return dict(sorted(groups.items()))


# Errors ---------------------------------------------------------------------------------------------


@dataclass
class ErrorKind:
    """Errors made in the same kind of state with the same move: the task, the state's family
    features and steps-to-go bucket, the move taken (``(invalid)`` for an invalid step) and the
    optimal moves."""

    task: str
    state: tuple[tuple[str, str], ...]
    move: str
    optimal: tuple[str, ...]
    count: int = 0
    examples: list[tuple[int, int]] = field(default_factory=list)  # (seed, step)

    def state_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.state) or "-"


def error_kinds(records: Iterable[Mapping[str, Any]]) -> list[ErrorKind]:
    """The errors of ``records`` grouped into :class:`ErrorKind`, the most common first (then by task and move)."""
    kinds: dict[tuple[Any, ...], ErrorKind] = {}
    for r in records:
        for score, step in zip(score_steps(r), r["steps"], strict=True):
            if not score.error:
                continue
            state = tuple(sorted((k, v) for k, v in score.features.items() if k not in ("after_invalid", "after_error", "episode_third")))
            move = _move(step)
            optimal = tuple(step["decision"]["optimal_actions"])
            key = (r["task"], state, move, optimal)
            kind = kinds.setdefault(key, ErrorKind(str(r["task"]), state, str(move), optimal))
            kind.count += 1
            if len(kind.examples) < _EXAMPLES:
                kind.examples.append((int(r["seed"]), score.step))
    return sorted(kinds.values(), key=lambda k: (-k.count, k.task, k.move, k.state))


class _Frames:
    """Frames of logged states: each task's env made once (with ``render_mode="rgb_array"``) and
    kept for the report's frames, then closed."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.envs: dict[str, Any] = {}
        self.prompt = PromptConfig(**run.manifest["prompt"]) if run.manifest.get("prompt") else None

    def png(self, task_name: str, seed: int, step: int) -> bytes | None:
        """The PNG of the state before ``step`` of the episode (seed ``seed``) of ``task_name``: the
        seed played again with the logged outputs; ``None`` when the replay does not reach the
        logged state (its decision facts differ) or the env cannot be made or drawn here."""
        from PIL import Image

        from rl4vlm_gym.harness.runner import decision_facts, make_task_env

        record = next(r for r in self.run.records if r["task"] == task_name and r["seed"] == seed)
        task = self.run.tasks.get(task_name)
        if task is None:
            return None
        env = self.envs.get(task_name)
        try:
            if env is None:
                env = self.envs[task_name] = make_task_env(task, self.prompt, render_mode="rgb_array")
            env.reset(seed=seed)
            for logged in record["steps"][: step - 1]:
                env.step(logged["raw"])
            if decision_facts(env.unwrapped) != record["steps"][step - 1]["decision"]:
                return None
            frame = env.render()
        except Exception:  # the env is not installed here, or broke: no frame, the table still says it all
            return None
        if not isinstance(frame, np.ndarray) or frame.ndim != 3:
            return None
        image = Image.fromarray(frame.astype(np.uint8))
        image.thumbnail((_FRAME_SIDE, _FRAME_SIDE))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
        return buffer.getvalue()

    def close(self) -> None:
        for env in self.envs.values():
            try:
                env.close()
            except Exception:  # closing must not hide the report
                pass
        self.envs.clear()


def _family_blocks(frames: _Frames, family: str, records: list[Mapping[str, Any]], images: list[int], share: int) -> list[Any]:
    """One family's decision metrics, most common errors (with frames of the ``share`` most common
    while ``images[0]`` lasts) and errors by feature."""
    summary = decision_summary([{**r, "task": family} for r in records])["tasks"][family]
    blocks: list[Any] = [
        _Heading(f"{family}", 2),
        _Text(
            f"{len(records)} episodes of {len({r['task'] for r in records})} task(s); {summary['scored_steps']} of "
            f"{summary['steps']} steps scored, {summary['errors']} errors, {summary['lost_episodes']} episode(s) lost."
            + ("" if not summary["unscored"] else " Unscored: " + "; ".join(f"{n} `{why}`" for why, n in summary["unscored"].items()) + ".")
        ),
        _Table(["metric", "mean [95% CI]"], [[label, score_cell(summary[key])] for key, label in DECISION_METRICS]),
    ]
    kinds = error_kinds(records)
    if kinds:
        rows = []
        for kind in kinds[:ERRORS_SHOWN]:
            examples = ", ".join(f"seed {seed} step {step}" for seed, step in kind.examples)
            rows.append([kind.task, kind.state_text(), kind.move, ", ".join(kind.optimal), str(kind.count), examples])
        blocks += [
            _Heading("Most common errors", 3),
            _Text(
                f"{len(kinds)} kinds of error (a state's steps to go and features, and the move taken); the {min(len(kinds), ERRORS_SHOWN)} "
                "most common:"
            ),
            _Table(["task", "state", "move taken", "optimal moves", "errors", "examples"], rows),
        ]
        for kind in kinds[:ERRORS_SHOWN][:share]:
            if images[0] <= 0:
                break
            seed, step = kind.examples[0]
            png = frames.png(kind.task, seed, step)
            if png is not None:
                images[0] -= 1
                caption = f"{kind.task}, seed {seed}, before step {step}: {kind.move} taken, optimal {', '.join(kind.optimal)} ({kind.count} such errors)."
                blocks.append(_Image(png, caption))
    rows = []
    for feature, values in summary["by_feature"].items():
        for value, (steps, errors) in values.items():
            rows.append([feature, value, str(steps), str(errors), f"{errors / steps:.3f}" if steps else "-"])
    if rows:
        blocks += [_Heading("Errors by state feature", 3), _Text("Scored steps and errors per value of each feature."), _Table(
            ["feature", "value", "steps", "errors", "error rate"], rows)]  # fmt: skip
    return blocks


# Comparison ---------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """Two runs' decisions on the same seeds (see the module docstring): counts per family."""

    episodes: int = 0
    compared: int = 0  # decisions made in the same state by both runs
    kept: int = 0
    fixed: int = 0
    broken: int = 0
    changed: int = 0
    diverged: int = 0  # episodes whose runs took different moves at some step
    examples: list[tuple[str, int, int, str, str, str]] = field(default_factory=list)  # task, seed, step, other's move, this move, kind


def compare_decisions(records: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]]) -> dict[str, Comparison]:
    """Per family, the decisions of ``records`` against ``other``'s on the (task, seed) pairs both played."""
    theirs = {(r["task"], r["seed"]): r for r in other}
    result: dict[str, Comparison] = defaultdict(Comparison)
    for family, rows in _families(r for r in records if (r["task"], r["seed"]) in theirs).items():
        c = result[family]
        for r in rows:
            o = theirs[r["task"], r["seed"]]
            c.episodes += 1
            mine, yours = score_steps(r), score_steps(o)
            for i, (a, b) in enumerate(zip(r["steps"], o["steps"], strict=False)):
                same_move = a.get("parsed") == b.get("parsed")
                same_state = a.get("decision") == b.get("decision")
                if not (same_state and same_move):  # the states differ from here on (or from the next step)
                    c.diverged += 1
                if not same_state:  # a chance game's draw, say: nothing to compare
                    break
                if mine[i].scored:
                    c.compared += 1
                    if same_move:
                        c.kept += 1
                    else:
                        kind = "fixed" if mine[i].optimal and not yours[i].optimal else "broken" if yours[i].optimal and not mine[i].optimal else "changed"
                        setattr(c, kind, getattr(c, kind) + 1)
                        if len(c.examples) < ERRORS_SHOWN:
                            c.examples.append((str(r["task"]), int(r["seed"]), i + 1, _move(b), _move(a), kind))
                if not same_move:
                    break
    return dict(result)


def _move(step: Mapping[str, Any]) -> str:
    return str(step.get("parsed")) if step.get("valid", True) and step.get("parsed") is not None else "(invalid)"


def _paired_accuracy(records: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Decision accuracy of ``records`` minus ``other``'s on the pairs both played: pooled per run,
    with a 95% interval from resampling the pairs."""
    theirs = {(r["task"], r["seed"]): r for r in other}
    counts = []
    for r in records:
        o = theirs.get((r["task"], r["seed"]))
        if o is None:
            continue
        a, b = score_steps(r), score_steps(o)
        counts.append((sum(bool(s.optimal) for s in a), sum(s.scored for s in a), sum(bool(s.optimal) for s in b), sum(s.scored for s in b)))
    table = np.array(counts, float).reshape(-1, 4)
    if not len(table) or table[:, 1].sum() == 0 or table[:, 3].sum() == 0:
        return None
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    draws = table[rng.integers(0, len(table), size=(_BOOTSTRAP_SAMPLES, len(table)))].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = draws[:, 0] / draws[:, 1] - draws[:, 2] / draws[:, 3]
    low, high = np.nanpercentile(boot, [2.5, 97.5])
    mean = table[:, 0].sum() / table[:, 1].sum() - table[:, 2].sum() / table[:, 3].sum()
    return {"mean": round(float(mean), 6), "ci95": [round(float(low), 6), round(float(high), 6)], "pairs": len(table)}


def _accuracy(records: Sequence[Mapping[str, Any]], family: str) -> dict[str, Any] | None:
    return decision_summary([{**r, "task": family} for r in records])["tasks"][family]["accuracy"] if records else None


def _comparison_blocks(run: _Run, other: _Run, trained_on: str | None) -> list[Any]:
    mine, yours = _families(run.records), _families(other.records)
    compared = compare_decisions(run.records, other.records)
    rows, changes = [], {}
    for family in sorted(set(mine) | set(yours)):
        diff = _paired_accuracy(mine.get(family, []), yours.get(family, []))
        changes[family] = diff
        c = compared.get(family, Comparison())
        rows.append([
            family + (" (trained on)" if family == trained_on else ""),
            score_cell(_accuracy(yours.get(family, []), family)),
            score_cell(_accuracy(mine.get(family, []), family)),
            score_cell(diff),
            f"{c.compared} / {c.kept} / {c.fixed} / {c.broken} / {c.changed}",
            f"{c.diverged} of {c.episodes}",
        ])  # fmt: skip
    blocks: list[Any] = [
        _Heading(f"Compared with {other.label}", 2),
        _Text(
            f"This run (`{run.folder}`) against `{other.folder}` on the (task, seed) pairs both played. Decisions are compared while "
            "both episodes are in the same state (same decision facts after the same moves): kept (same move), fixed (the other run "
            "erred, this one is optimal), broken (the reverse), changed (another move, both optimal or both errors); at the first "
            "different move the episodes diverge. Accuracy difference: this run minus the other, 95% interval over pairs."
        ),
        _Table(["family", "other run's accuracy", "this run's accuracy", "difference [95% CI]", "compared / kept / fixed / broken / changed",
                "episodes diverged"], rows),  # fmt: skip
    ]
    examples = [[family, task, str(seed), str(step), before, after, kind] for family, c in compared.items() for task, seed, step, before, after, kind in c.examples]
    if examples:
        blocks += [_Text("Decisions that changed (the first of each episode, a few per family):"),
                   _Table(["family", "task", "seed", "step", "other run's move", "this run's move", "change"], examples)]  # fmt: skip
    if trained_on is not None:
        others = [d["mean"] for f, d in changes.items() if f != trained_on and d is not None]
        trained = changes.get(trained_on)
        text = (
            f"Decision transfer: the other run is before training on `{trained_on}`, this one after. On `{trained_on}` decision accuracy "
            f"changed by {score_cell(trained)}; on the {len(others)} other famil{'y' if len(others) == 1 else 'ies'} with scored decisions "
            + (f"by {np.mean(others):+.3f} on average (from {min(others):+.3f} to {max(others):+.3f})." if others else "nothing could be measured.")
        )
        rows = [[f, "trained on" if f == trained_on else "other", score_cell(d)] for f, d in changes.items()]
        blocks += [_Heading("Decision transfer", 2), _Text(text), _Table(["family", "", "accuracy change [95% CI]"], rows)]
    return blocks


def write_decision_report(
    run: str | Path,
    out: str | Path,
    *,
    compare: str | Path | None = None,
    trained_on: str | None = None,
    images: int = 8,
    figures: bool = True,
) -> Path:
    """Write the decision report of ``run`` (see the module docstring) to the HTML file ``out``.

    Args:
        run: a run folder whose episodes carry decision facts.
        out: the HTML file to write (its folder is made).
        compare: another run folder to compare with, decision by decision, on the same seeds.
        trained_on: with ``compare``: the family trained on between the two runs (the decision transfer view).
        images: at most this many frames of error states (0: none; each replays an episode to its step).
        figures: draw the plot of accuracy per family (matplotlib, the ``eval`` extra); the tables say it all without.

    Returns:
        The path written.

    Raises:
        DecisionReportError: a folder is not a run with decision facts, or ``trained_on`` lacks ``compare``.
    """
    if trained_on is not None and compare is None:
        raise DecisionReportError("--trained-on needs --compare: the run from before training on that family")
    loaded = _load(run)
    other = _load(compare) if compare is not None else None
    families = _families(loaded.records)
    overall = decision_summary(loaded.records, list(loaded.tasks) or None)["overall"]
    blocks: list[Any] = [
        _Heading("Decision report", 1),
        _Text(
            f"Run `{loaded.folder}`: {loaded.label}, {len(loaded.records)} episodes. Every step is scored against the env's solver "
            "(accuracy: optimal moves over scored steps, an invalid step an error; regret: steps lost to a move, or expected value in "
            "games of chance); pooled over each family's decisions, 95% bootstrap intervals over episodes."
        ),
        _Table(["family", "episodes", "scored / steps", "accuracy", "regret (steps)", "first error", "recovered"],
               [[f, str(len(rs)), *_family_row(rs, f)] for f, rs in families.items()]),  # fmt: skip
        _Text(f"Over the run (each task weighs the same): decision accuracy {score_cell(overall['accuracy'])}."),
    ]
    if figures:
        bars = [(run.label, _by_family(run.records)) for run in ([other] if other is not None else []) + [loaded]]
        blocks.append(_Figure("family_accuracy", lambda: plots.task_bars(bars, "accuracy"), "Decision accuracy per family (95% CI over episodes)."))
    if other is not None:
        blocks += _comparison_blocks(loaded, other, trained_on)
    budget = [max(0, images)]
    share = -(-budget[0] // max(1, len(families)))  # frames are shared out between the families
    frames = _Frames(loaded)
    try:
        for family, records in families.items():
            blocks += _family_blocks(frames, family, records, budget, share)
    finally:
        frames.close()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html_from_blocks(blocks, "Decision report"), encoding="utf-8")
    return out


def _by_family(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A decision summary whose "tasks" are families (each family's tasks pooled)."""
    return decision_summary([{**r, "task": f} for f, rs in _families(records).items() for r in rs])


def _family_row(records: Sequence[Mapping[str, Any]], family: str) -> list[str]:
    t = decision_summary([{**r, "task": family} for r in records])["tasks"][family]
    cells = [score_cell(t[key]) for key in ("accuracy", "regret_steps", "first_error", "recovery")]
    return [f"{t['scored_steps']} / {t['steps']}", *cells]
