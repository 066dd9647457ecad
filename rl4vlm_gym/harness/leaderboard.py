"""Leaderboard submissions: validation that re-checks every row from the episode logs, and the build.

A submission is a folder ``submissions/<suite>/<id>/`` holding the runner's output and metadata::

    metadata.yaml    who and what: name, agent, model, training env and algorithm, env steps,
                     compute, contact, date (schema: :class:`Metadata`)
    run.json         the runner's manifest (protocol hash, prompt, agent)
    episodes.jsonl   one record per episode, exactly as the runner wrote them (or gzipped:
                     episodes.jsonl.gz)
    summary.json     the runner's summary
    README.md        optional notes

Submissions are data only: no other file is accepted, YAML is read with ``safe_load`` and JSON
with ``json``; nothing in a submission is imported, executed or unpickled.

:func:`validate_submission` trusts nothing it can recompute. It rebuilds the protocol hash from
the suite file and the submitted prompt, checks the episodes are exactly the suite's ``(task,
seed)`` pairs, checks each record against itself (return, step and token counts), recomputes the
summary from the episodes and compares it field by field, and (``replay=True``) replays every
episode's raw outputs in the env from its seed, checking each parsed action, reward and the final
success and progress: envs are deterministic, so an edited log cannot survive the replay.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rl4vlm_gym.harness.metrics import summarize
from rl4vlm_gym.harness.runner import RunError, episode_optimal_steps, load_episodes, make_task_env
from rl4vlm_gym.harness.suite import Suite, SuiteError, load_suite
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["ALLOWED_FILES", "Metadata", "ValidationReport", "build_leaderboard", "find_submissions", "validate_submission"]

ALLOWED_FILES = ("metadata.yaml", "run.json", "episodes.jsonl", "summary.json", "README.md", "episodes.jsonl.gz")
_REQUIRED = ("metadata.yaml", "run.json", "summary.json")
_TOLERANCE = 1e-6


class Metadata(BaseModel):
    """``metadata.yaml`` of a submission."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80, description="the row's name on the board")
    agent: str = Field(min_length=1, description="agent kind: random, oracle, hf, openai, ...")
    model: str = Field(default="none", description="model id or path, or none")
    training_env: str = Field(default="none", description="env id(s) the model was trained on, or none")
    algorithm: str = Field(default="none", description="training algorithm (vl-dac, rl4vlm, loop, gigpo, ...), or none")
    env_steps: int = Field(default=0, ge=0, description="env steps of RL training")
    compute: str = Field(default="", description="hardware and hours")
    contact: str = Field(min_length=1, description="an email or a URL")
    date: datetime.date
    url: str | None = None
    verified: bool = Field(default=False, description="maintainers re-ran a sample of the episodes")


class ValidationReport:
    """The outcome of validating one submission: ``ok`` and the problems found, in order."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.problems: list[str] = []
        self.metadata: Metadata | None = None
        self.summary: dict[str, Any] | None = None
        self.suite: Suite | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, message: str) -> None:
        self.problems.append(message)


def find_submissions(root: str | Path) -> list[Path]:
    """The submission folders under ``root/submissions`` (``<suite>/<id>``), sorted."""
    base = Path(root) / "submissions"
    return sorted(p for p in base.glob("*/*") if p.is_dir())


def validate_submission(folder: str | Path, *, suites_dir: str | Path | None = None, replay: bool = True) -> ValidationReport:
    """Check one submission; see the module docstring for what is checked.

    Args:
        folder: ``.../submissions/<suite>/<id>``.
        suites_dir: where ``<suite>.yaml`` lives (default: the built-in suites).
        replay: replay every episode in its env (slower; catches edited logs).
    """
    folder = Path(folder)
    report = ValidationReport(folder)
    if not folder.is_dir():
        report.add(f"{folder} is not a folder")
        return report
    files = {p.name for p in folder.iterdir()}
    for name in sorted(files - set(ALLOWED_FILES)):
        report.add(f"unexpected file {name!r}: a submission holds only {', '.join(ALLOWED_FILES)} (data, never code)")
    for name in _REQUIRED:
        if name not in files:
            report.add(f"missing {name}")
    episodes_files = sorted(files & {"episodes.jsonl", "episodes.jsonl.gz"})
    if len(episodes_files) != 1:
        report.add("a submission holds one of episodes.jsonl or episodes.jsonl.gz" + (", not both" if episodes_files else ""))
    if not report.ok:
        return report

    report.metadata = _read_metadata(folder / "metadata.yaml", report)
    manifest = _read_json(folder / "run.json", report)
    summary = _read_json(folder / "summary.json", report)
    try:
        records = load_episodes(folder / episodes_files[0])
    except RunError as err:
        report.add(str(err))
        records = None
    if manifest is None or summary is None or records is None:
        return report
    report.summary = summary

    suite_name = folder.parent.name
    try:
        suite = load_suite(Path(suites_dir) / f"{suite_name}.yaml" if suites_dir else suite_name)
    except SuiteError as err:
        report.add(f"the submission is filed under suite {suite_name!r}, which cannot be loaded: {err}")
        return report
    report.suite = suite
    _check_protocol(suite, manifest, summary, report)
    if not report.ok:
        return report
    if not _check_episode_set(suite, records, report):
        return report
    for record in records:
        _check_record(suite, record, report)
    if not report.ok:
        return report
    _check_summary(suite, records, summary, manifest, report)
    if replay and report.ok:
        _replay(suite, records, report)
    return report


def _read_metadata(path: Path, report: ValidationReport) -> Metadata | None:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Metadata.model_validate(data)
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        report.add(f"metadata.yaml is not valid YAML: {err}")
    except ValidationError as err:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}" for e in err.errors()[:5])
        report.add(f"metadata.yaml: {fields}")
    return None


def _read_json(path: Path, report: ValidationReport) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        report.add(f"{path.name} is not valid JSON: {err}")
        return None
    if not isinstance(data, dict):
        report.add(f"{path.name} must hold a JSON object, not {type(data).__name__}")
        return None
    return data


def _check_protocol(suite: Suite, manifest: Mapping[str, Any], summary: Mapping[str, Any], report: ValidationReport) -> None:
    try:
        prompt = PromptConfig(**manifest.get("prompt", {}))
    except (TypeError, ValueError) as err:
        report.add(f"run.json: prompt is not a valid prompt config: {err}")
        return
    expected = suite.protocol_hash(prompt)
    for where, value in (("run.json", manifest.get("protocol_hash")), ("summary.json", summary.get("protocol_hash"))):
        if value != expected:
            report.add(
                f"{where}: protocol hash {value!r} does not match {expected!r}, the hash of suite {suite.name!r} as "
                "committed with the submitted prompt: the run used another suite version, budget or prompt"
            )


def _check_episode_set(suite: Suite, records: list[dict[str, Any]], report: ValidationReport) -> bool:
    wanted = set(suite.episodes)
    seen: dict[tuple[str, int], int] = {}
    for r in records:
        key = (r["task"], r["seed"])
        seen[key] = seen.get(key, 0) + 1
    missing = sorted(wanted - seen.keys())
    extra = sorted(seen.keys() - wanted)
    repeated = sorted(k for k, n in seen.items() if n > 1)
    if missing:
        report.add(f"episodes.jsonl lacks {len(missing)} of the suite's episodes, e.g. (task, seed) {_few(missing)}")
    if extra:
        report.add(f"episodes.jsonl has {len(extra)} episode(s) the suite does not play, e.g. {_few(extra)}")
    if repeated:
        report.add(f"episodes.jsonl repeats {len(repeated)} episode(s), e.g. {_few(repeated)}")
    return not (missing or extra or repeated)


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    raw: str
    parsed: str | None
    valid: bool
    error: str | None
    reward: float
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    agent_ms: float
    env_ms: float


class _Episode(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    task: str
    env_id: str
    version: int | None
    level: int | None
    obs_mode: str
    seed: int
    return_: float = Field(alias="return")
    success: bool
    progress: float = Field(ge=0.0, le=1.0)
    num_steps: int = Field(ge=0)
    optimal_steps: int = Field(ge=-1)
    invalid_actions: int = Field(ge=0)
    terminated: bool
    truncated: bool
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    error: str | None
    steps: list[_Step]


def _check_record(suite: Suite, record: dict[str, Any], report: ValidationReport) -> None:
    where = f"episode ({record['task']}, {record['seed']})"
    try:
        episode = _Episode.model_validate(_ints_as_floats(record))
    except ValidationError as err:
        e = err.errors()[0]
        report.add(f"{where}: {'.'.join(map(str, e['loc']))}: {e['msg']}")
        return
    task = suite.task(episode.task)
    if (episode.env_id, episode.obs_mode) != (task.env, task.obs_mode):
        report.add(f"{where}: env {episode.env_id} / {episode.obs_mode} is not the task's {task.env} / {task.obs_mode}")
    checks = {
        "num_steps": (episode.num_steps, len(episode.steps)),
        "invalid_actions": (episode.invalid_actions, sum(not s.valid for s in episode.steps)),
        "input_tokens": (episode.input_tokens, sum(s.input_tokens for s in episode.steps)),
        "output_tokens": (episode.output_tokens, sum(s.output_tokens for s in episode.steps)),
        "return": (episode.return_, sum(s.reward for s in episode.steps)),
    }
    for name, (claimed, actual) in checks.items():
        if not math.isclose(claimed, actual, rel_tol=1e-9, abs_tol=_TOLERANCE):
            report.add(f"{where}: {name} is {claimed} but its steps add up to {actual}")


def _ints_as_floats(record: dict[str, Any]) -> dict[str, Any]:
    """JSON writes 1.0 as 1.0, but hand-edited files may say 1: accept ints where floats go."""
    fixed = dict(record)
    for key in ("return", "progress"):
        if isinstance(fixed.get(key), int) and not isinstance(fixed.get(key), bool):
            fixed[key] = float(fixed[key])
    steps = fixed.get("steps")
    if isinstance(steps, list):
        fixed["steps"] = [
            {k: (float(v) if k in ("reward", "agent_ms", "env_ms") and type(v) is int else v) for k, v in s.items()}
            if isinstance(s, dict)
            else s
            for s in steps
        ]
    return fixed


def _check_summary(
    suite: Suite, records: list[dict[str, Any]], summary: Mapping[str, Any], manifest: Mapping[str, Any], report: ValidationReport
) -> None:
    rescored = summarize(records, [t.name for t in suite.tasks])
    expected = {
        "suite": suite.name,
        "axis": suite.axis,
        "protocol_hash": manifest["protocol_hash"],
        "agent": manifest.get("agent"),
        "complete": True,
        **rescored,
    }
    claimed = {k: v for k, v in summary.items() if k != "timing"}
    for path, want, got in _differences(expected, claimed):
        report.add(f"summary.json: {path} is {got!r} but the episodes give {want!r}")


def _differences(want: Any, got: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if isinstance(want, Mapping) and isinstance(got, Mapping):
        for key in sorted(set(want) | set(got), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in got:
                yield sub, want[key], "(missing)"
            elif key not in want:
                yield sub, "(nothing)", got[key]
            else:
                yield from _differences(want[key], got[key], sub)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            yield from _differences(w, g, f"{path}[{i}]")
    elif isinstance(want, (int, float)) and isinstance(got, (int, float)) and not isinstance(want, bool) and not isinstance(got, bool):
        if not math.isclose(want, got, rel_tol=0, abs_tol=_TOLERANCE):
            yield path, want, got
    elif want != got:
        yield path, want, got


def _replay(suite: Suite, records: list[dict[str, Any]], report: ValidationReport) -> None:
    """Play each episode's raw outputs again from its seed and compare what the env says."""
    envs: dict[str, Any] = {}
    try:
        for record in records:
            task = suite.task(record["task"])
            if task.name not in envs:
                envs[task.name] = make_task_env(task)
            problem = _replay_one(envs[task.name], record)
            if problem:
                report.add(f"episode ({record['task']}, {record['seed']}): {problem}")
                if len(report.problems) >= 20:
                    report.add("(stopped replaying after 20 problems)")
                    return
    finally:
        for env in envs.values():
            env.close()


def _replay_one(env: Any, record: Mapping[str, Any]) -> str | None:
    obs, info = env.reset(seed=record["seed"])
    optimal = episode_optimal_steps(env, info)
    if optimal != record["optimal_steps"]:
        return f"optimal_steps is {record['optimal_steps']} but the env gives {optimal} for this seed"
    terminated = truncated = False
    for i, step in enumerate(record["steps"], 1):
        if terminated or truncated:
            return f"the log goes on after the episode ended at step {i - 1}"
        obs, reward, terminated, truncated, info = env.step(step["raw"])
        action = info.get("action", {})
        if action.get("parsed") != step["parsed"]:
            return f"step {i}: the log says the output parsed to {step['parsed']!r}; replaying it gives {action.get('parsed')!r}"
        if not math.isclose(float(reward), step["reward"], abs_tol=_TOLERANCE):
            return f"step {i}: the log says reward {step['reward']}; replaying the output gives {float(reward)}"
    ended = terminated or truncated
    if record["error"] is None and not ended:
        return f"the episode ends after {len(record['steps'])} steps in the log, but the env had not ended it"
    final = {"success": bool(info.get("success")) and record["error"] is None, "progress": float(info.get("progress", 0.0))}
    final.update(terminated=bool(terminated), truncated=bool(truncated))
    for key, value in final.items():
        if key == "progress" and math.isclose(value, record[key], abs_tol=_TOLERANCE):
            continue
        if value != record[key]:
            return f"the log says {key}={record[key]!r}; replaying the outputs gives {value!r}"
    return None


def _few(keys: list[tuple[str, int]], n: int = 3) -> str:
    shown = ", ".join(f"({t}, {s})" for t, s in keys[:n])
    return shown + (" ..." if len(keys) > n else "")


def build_leaderboard(
    root: str | Path, out: str | Path | None = None, *, suites_dir: str | Path | None = None, replay: bool = True
) -> tuple[list[Path], list[ValidationReport]]:
    """Validate every submission under ``root`` and write the pages of the valid ones.

    Returns:
        The pages written (``LEADERBOARD.md`` and ``index.html`` in ``out``, default
        ``root/site``) and the reports of the submissions that were left out.
    """
    from rl4vlm_gym.harness.pages import write_leaderboard

    entries, rejected = [], []
    for folder in find_submissions(root):
        report = validate_submission(folder, suites_dir=suites_dir, replay=replay)
        if not report.ok:
            rejected.append(report)
            continue
        assert report.metadata is not None and report.summary is not None and report.suite is not None
        entries.append(
            {
                "id": folder.name,
                "suite": report.suite.name,
                "axis": report.suite.axis,
                "suite_description": report.suite.description,
                "metadata": report.metadata.model_dump(mode="json"),
                "summary": report.summary,
            }
        )
    pages = write_leaderboard(entries, Path(out) if out is not None else Path(root) / "site")
    return pages, rejected
