"""Leaderboard submissions: validation that re-checks every row from the episode logs, and the build.

A submission is a folder ``submissions/<suite>/<id>/`` holding the runner's output and metadata::

    metadata.yaml    who and what: name, agent, model, training env and algorithm, env steps,
                     compute, contact, date (schema: :class:`Metadata`)
    run.json         the runner's manifest (protocol and its hash, prompt, agent)
    episodes.jsonl   one record per episode, exactly as the runner wrote them (or gzipped:
                     episodes.jsonl.gz)
    summary.json     the runner's summary
    README.md        optional notes

A submission arrives as a pull request, so every byte and every path in it is hostile until
checked. :func:`validate_submission` reads it only through
:class:`~rl4vlm_gym.harness.untrusted.UntrustedFolder` (no links, bounded sizes and nesting, no
duplicate keys) and trusts nothing it can recompute:

- the suite is a committed built-in suite, found by the exact name of the folder the submission is
  filed under (never a path, never from the working directory);
- every field of every file has a type and a range (:class:`Metadata` and the record schemas,
  unknown fields refused); fields that only maintainers set (``verified``) are refused;
- the protocol and its hash are rebuilt from the suite file and the submitted prompt;
- the episodes are exactly the suite's ``(task, seed)`` pairs, and each record adds up;
- the summary (timing included) is recomputed from the episodes and compared field by field;
- (``replay=True``) every episode is played again in its env from its seed with the logged raw
  outputs, through the runner's own :func:`~rl4vlm_gym.harness.runner.play_episode`, and every
  field the env decides must match: optimal steps, each step's parsed action, validity, parser
  error and reward, the level, version, success, progress, the end flags, the number of steps
  (no step after the end), and each step's decision facts and the final ones (optimal actions,
  steps to go, action values, reason, features), from which the summary's decision metrics were
  recomputed: a log with them has them in every step, or, written before the runner recorded them,
  nowhere (then it claims no decision metrics). Tokens and timings cannot be recomputed: they are
  range-checked, must add up, and are shown as self-reported.

Validation stops at the first problem and says where: the file, the line and the rule. Nothing in
a submission is imported, executed or unpickled.

Maintainers mark rows verified in ``maintainers.yaml`` next to ``submissions/``
(:func:`mark_verified`, ``rl4vlm-gym leaderboard verify``), never in a submission.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import re
import stat
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import gymnasium as gym
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from rl4vlm_gym.agents import Agent
from rl4vlm_gym.agents.base import Usage
from rl4vlm_gym.harness.runner import build_summary, make_task_env, play_episode
from rl4vlm_gym.harness.suite import SUITES_DIR, Suite, SuiteError, Task, builtin_suites, load_suite
from rl4vlm_gym.harness.untrusted import Refused, UntrustedFolder, episode_limits, parse_json, shown
from rl4vlm_gym.prompts import PromptConfig

__all__ = [
    "ALLOWED_FILES",
    "MAINTAINERS_FILE",
    "LeaderboardError",
    "Metadata",
    "ValidationReport",
    "build_leaderboard",
    "find_submissions",
    "mark_verified",
    "read_maintainers",
    "replay_episode",
    "validate_submission",
]

ALLOWED_FILES = ("metadata.yaml", "run.json", "episodes.jsonl", "summary.json", "README.md", "episodes.jsonl.gz")
MAINTAINERS_FILE = "maintainers.yaml"
MAINTAINER_FIELDS = ("verified",)
"""Fields the board shows as badges: set in :data:`MAINTAINERS_FILE`, refused in a submission."""
_REQUIRED = ("metadata.yaml", "run.json", "summary.json")
_TOLERANCE = 1e-6
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}")
_KEY = re.compile(r"[A-Za-z0-9_]{1,40}")
_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s<>()\[\]{}|\\^`\"']*)?")
_OPEN_ENVS = 2  # envs kept open while replaying (a suite of 30 tasks would otherwise hold 30)
# Unicode categories refused in free text: controls, format characters (right-to-left overrides,
# zero-width joiners), surrogates, private use, unassigned, line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


class LeaderboardError(ValueError):
    """The maintainers' file or the output folder of a build is unusable; the message says why."""


class _Rejected(Exception):
    """A submission broke a rule (the message names the file, the line and the rule)."""


def _visible(text: str) -> str:
    for char in text:
        if unicodedata.category(char) in _HIDDEN:
            raise ValueError(f"holds an invisible or control character (U+{ord(char):04X})")
    return text


def _url(text: str) -> str:
    if not _URL.fullmatch(text):
        raise ValueError("must be an http:// or https:// URL (no spaces, quotes, brackets or backslashes)")
    return text


_Visible = AfterValidator(_visible)
_Name = Annotated[str, Field(min_length=1, max_length=80), _Visible]
_Label = Annotated[str, Field(max_length=200), _Visible]
_Required = Annotated[str, Field(min_length=1, max_length=200), _Visible]


def _date(value: datetime.date) -> datetime.date:
    latest = datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(days=1)
    if not datetime.date(2020, 1, 1) <= value <= latest:
        raise ValueError(f"must be a date from 2020-01-01 to {latest}")
    return value


class Metadata(BaseModel):
    """``metadata.yaml`` of a submission: what the submitter says about the row.

    Free text is visible characters only (no control, format or right-to-left override
    characters); ``url`` is an ``http(s)`` URL. ``verified`` is not here: maintainers set it in
    :data:`MAINTAINERS_FILE`.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    name: _Name = Field(description="the row's name on the board")
    agent: _Required = Field(description="agent kind the harness ran (run.json's agent name)")
    model: _Label = Field(default="none", description="model id or path, or none")
    training_env: _Label = Field(default="none", description="env id(s) the model was trained on, or none")
    algorithm: _Label = Field(default="none", description="training algorithm (vl-dac, rl4vlm, loop, gigpo, ...), or none")
    env_steps: int = Field(default=0, ge=0, le=10**13, description="env steps of RL training")
    compute: _Label = Field(default="", description="hardware and hours")
    contact: _Required = Field(description="an email or a URL")
    date: Annotated[datetime.date, Field(strict=False), AfterValidator(_date)]
    url: Annotated[str, Field(max_length=500), AfterValidator(_url)] | None = Field(default=None, description="http(s) only")


class _AgentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: _Required
    kwargs: dict[str, Any]


class _Manifest(BaseModel):
    """``run.json`` (:func:`~rl4vlm_gym.harness.runner.run_suite` writes it)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    suite: str = Field(max_length=100)
    axis: str = Field(max_length=100)
    protocol_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    protocol: dict[str, Any]
    prompt: dict[str, Any]
    agent: _AgentSpec
    rl4vlm_gym: str = Field(pattern=r"^[0-9A-Za-z.+_-]{1,64}$")


_Finite = Annotated[float, Field(allow_inf_nan=False)]


class _Decision(BaseModel):
    """A step's decision facts (:meth:`rl4vlm_gym.core.Decision.as_dict`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    optimal_actions: list[Annotated[str, Field(max_length=10_000)]] | None = Field(max_length=10_000)
    steps_to_go: int = Field(ge=-1, le=10**7)
    values: dict[str, _Finite] | None = Field(max_length=10_000)
    reason: str | None = Field(max_length=10_000)
    features: dict[str, int | str | bool] | None = Field(max_length=100)


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    raw: str
    parsed: str | None = Field(max_length=10_000)
    valid: bool
    error: str | None = Field(max_length=10_000)
    reward: _Finite = Field(ge=-1e9, le=1e9)
    input_tokens: int = Field(ge=0, le=10**9)
    output_tokens: int = Field(ge=0, le=10**9)
    agent_ms: _Finite = Field(ge=0.0, le=8.64e7)  # at most a day per step
    env_ms: _Finite = Field(ge=0.0, le=8.64e7)
    decision: _Decision | None = None  # absent from logs written before the runner recorded it


class _Episode(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    task: str = Field(max_length=200)
    env_id: str = Field(max_length=200)
    version: int | None = Field(ge=0, le=10_000)
    level: int | None = Field(ge=0, le=10_000)
    obs_mode: str = Field(max_length=20)
    seed: int = Field(ge=0, lt=2**32)
    return_: _Finite = Field(alias="return", ge=-1e12, le=1e12)
    success: bool
    progress: _Finite = Field(ge=0.0, le=1.0)
    num_steps: int = Field(ge=0, le=100_000)
    optimal_steps: int = Field(ge=-1, le=100_000)
    invalid_actions: int = Field(ge=0, le=100_000)
    terminated: bool
    truncated: bool
    input_tokens: int = Field(ge=0, le=10**15)
    output_tokens: int = Field(ge=0, le=10**15)
    error: str | None = Field(max_length=10_000)
    steps: list[_Step] = Field(max_length=100_000)
    final_decision: _Decision | None = None


class ValidationReport:
    """The outcome of validating one submission: ``ok``, and the problem found (validation stops
    at the first). When ``ok``, ``summary`` is the summary recomputed from the episodes."""

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
    """Every entry under ``root/submissions/<suite>/``, sorted: each is validated as a submission,
    so a file, a link or a stray folder is reported rather than skipped. An entry of
    ``submissions/`` that is not a real folder is returned too (and rejected)."""
    base = Path(root) / "submissions"
    if not base.is_dir() or base.is_symlink():
        return []
    found = []
    with os.scandir(base) as suites:
        for entry in suites:
            if entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as ids:
                    found += [Path(e.path) for e in ids]
            else:
                found.append(Path(entry.path))
    return sorted(found)


def _builtin_suite(name: str) -> Suite:
    """The committed suite called exactly ``name``; nothing else is ever loaded."""
    if name not in builtin_suites():
        raise _Rejected(
            f"the submission is filed under {shown(name)}, which is not a built-in suite: file it as "
            f"submissions/<suite>/<id>/ with <suite> one of {', '.join(builtin_suites())}"
        )
    try:
        return load_suite(SUITES_DIR / f"{name}.yaml")
    except SuiteError as err:  # a broken committed suite is the repository's bug, still a verdict
        raise _Rejected(f"suite {name!r} cannot be loaded: {err}") from None


def validate_submission(folder: str | Path, *, replay: bool = True) -> ValidationReport:
    """Check one submission; see the module docstring for what is checked.

    Args:
        folder: ``.../submissions/<suite>/<id>``; the suite is the built-in one named ``<suite>``.
        replay: replay every episode in its env (slower; catches edited logs).

    Returns:
        The report; it is never an exception: every input gets a verdict.
    """
    report = ValidationReport(Path(folder))
    try:
        _validate(Path(os.path.abspath(folder)), report, replay)
    except (Refused, _Rejected) as err:
        report.metadata = report.summary = None
        report.add(str(err))
    return report


def _validate(path: Path, report: ValidationReport, replay: bool) -> None:
    report.suite = suite = _builtin_suite(path.parent.name)
    if not _ID.fullmatch(path.name):
        raise _Rejected(
            f"submissions/{suite.name}/{shown(path.name)}: the folder's name must be ASCII letters, digits, '.', '_', '+' or '-' "
            "(<YYYYMMDD>_<name>)"
        )
    where = f"submissions/{suite.name}/{path.name}"
    try:
        parent = os.lstat(path.parent)
    except OSError as err:
        raise _Rejected(f"{where}: cannot read the suite's folder ({err.strerror})") from None
    if not stat.S_ISDIR(parent.st_mode):
        raise _Rejected(f"submissions/{path.parent.name} is a link or a file, not a folder")
    with UntrustedFolder(path, where) as files:
        entries = files.entries()
        for name in sorted(entries):
            if name not in ALLOWED_FILES:
                raise _Rejected(f"{where}: unexpected file {shown(name)}: a submission holds only {', '.join(ALLOWED_FILES)} (data, never code)")
        for name in _REQUIRED:
            if name not in entries:
                raise _Rejected(f"{where}: missing {name}")
        episodes_files = sorted(set(entries) & {"episodes.jsonl", "episodes.jsonl.gz"})
        if len(episodes_files) != 1:
            raise _Rejected(f"{where}: a submission holds one of episodes.jsonl or episodes.jsonl.gz" + (", not both" if episodes_files else ""))
        metadata = _read_metadata(files)
        manifest = _read_manifest(files, suite)
        if metadata.agent != manifest.agent.name:
            raise _Rejected(f"metadata.yaml: agent {shown(metadata.agent)} is not the agent of run.json ({shown(manifest.agent.name)})")
        claimed = files.read_json("summary.json")
        if "README.md" in entries:
            files.read_text("README.md")
        records, digests = _read_episodes(files, episodes_files[0], suite)
        expected = _check_summary(suite, records, claimed, manifest)
        if replay:
            _replay(files, episodes_files[0], suite, digests, PromptConfig(**manifest.prompt))
    report.metadata, report.summary = metadata, expected


def _value(value: Any) -> str:
    """A value from a submission for a message: scalars as Python writes them, text quoted as ASCII."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return shown(value if isinstance(value, str) else repr(value), 80)


def _errors(err: ValidationError) -> str:
    """The first error: where (keys from the file quoted unless plain) and what."""
    e = err.errors()[0]
    where = ".".join(str(k) if _KEY.fullmatch(str(k)) else shown(k, 40) for k in e["loc"]) or "(top level)"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {e['msg']}{more}"


def _read_metadata(files: UntrustedFolder) -> Metadata:
    data = files.read_yaml("metadata.yaml")
    if not isinstance(data, dict):
        raise _Rejected(f"metadata.yaml: must be a mapping of name, agent, ... (see leaderboards/README.md), not {type(data).__name__}")
    reserved = sorted(set(map(str, data)) & set(MAINTAINER_FIELDS))
    if reserved:
        raise _Rejected(
            f"metadata.yaml: {', '.join(reserved)} is set by the maintainers (leaderboards/{MAINTAINERS_FILE}), not by a submission"
        )
    try:
        return Metadata.model_validate(data)
    except ValidationError as err:
        raise _Rejected(f"metadata.yaml: {_errors(err)}") from None


def _read_manifest(files: UntrustedFolder, suite: Suite) -> _Manifest:
    data = files.read_json("run.json")
    try:
        manifest = _Manifest.model_validate(data)
    except ValidationError as err:
        raise _Rejected(f"run.json: {_errors(err)}") from None
    if (manifest.suite, manifest.axis) != (suite.name, suite.axis):
        raise _Rejected(f"run.json: the run is of suite {shown(manifest.suite)}, but it is filed under {suite.name!r}")
    try:
        prompt = PromptConfig(**manifest.prompt)
    except (TypeError, ValueError) as err:
        raise _Rejected(f"run.json: prompt is not a valid prompt config ({shown(err, 200)})") from None
    expected = suite.protocol_hash(prompt)
    if manifest.protocol_hash != expected:
        raise _Rejected(
            f"run.json: protocol hash {manifest.protocol_hash!r} does not match {expected!r}, the hash of suite {suite.name!r} as "
            "committed with the submitted prompt: the run used another suite version, budget or prompt"
        )
    if _canonical(manifest.protocol) != _canonical(suite.protocol(prompt)):
        raise _Rejected(f"run.json: protocol is not the protocol of suite {suite.name!r} with the submitted prompt")
    return manifest


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _budget(task: Task) -> int:
    if task.max_steps is not None:
        return task.max_steps
    try:
        spec = gym.spec(task.env)
    except gym.error.Error:
        raise _Rejected(f"{task.env} is not registered here: install its extra to validate this suite") from None
    return int(spec.max_episode_steps or 100_000)


def _episode_limits(suite: Suite) -> tuple[int, int]:
    """What one episode's line may hold: it grows with the suite's longest step budget."""
    return episode_limits(max(_budget(t) for t in suite.tasks))


def _read_episodes(files: UntrustedFolder, name: str, suite: Suite) -> tuple[list[dict[str, Any]], list[bytes]]:
    """The records without their steps' texts (enough to re-score), and each line's sha256."""
    tasks = {t.name: t for t in suite.tasks}
    wanted = set(suite.episodes)
    seen: set[tuple[str, int]] = set()
    records: list[dict[str, Any]] = []
    digests: list[bytes] = []
    line_bytes, items = _episode_limits(suite)
    with_facts: tuple[bool, int] | None = None  # whether the log records decision facts, and the line that said so
    for number, line in files.lines(name, max_lines=len(wanted), max_line_bytes=line_bytes):
        digests.append(hashlib.sha256(line).digest())
        data = parse_json(line, name, number, max_items=items)
        at = f"{name}:{number}"
        if not isinstance(data, dict):
            raise _Rejected(f"{at}: an episode record is a JSON object, not {type(data).__name__}")
        try:
            episode = _Episode.model_validate(data)
        except ValidationError as err:
            raise _Rejected(f"{at}: {_errors(err)}") from None
        key = (episode.task, episode.seed)
        if key not in wanted:
            raise _Rejected(f"{at}: ({shown(episode.task)}, {episode.seed}) is not an episode of suite {suite.name!r}")
        if key in seen:
            raise _Rejected(f"{at}: episode ({episode.task}, {episode.seed}) is recorded twice")
        seen.add(key)
        _check_record(tasks[episode.task], episode, f"{at}: episode ({episode.task}, {episode.seed})")
        with_facts = _check_facts(episode, with_facts, at, number)
        light = episode.model_dump(by_alias=True, exclude={"steps", "final_decision"})
        if with_facts and with_facts[0]:  # what the decision metrics are computed from
            light["steps"] = [{"agent_ms": s.agent_ms, "env_ms": s.env_ms, "valid": s.valid, "parsed": s.parsed,
                               "decision": s.decision.model_dump() if s.decision else None} for s in episode.steps]  # fmt: skip
            if episode.final_decision is not None:
                light["final_decision"] = episode.final_decision.model_dump()
        else:
            light["steps"] = [{"agent_ms": s.agent_ms, "env_ms": s.env_ms} for s in episode.steps]
        records.append(light)
        del data, episode  # a line may be large: free it before reading the next
    missing = [k for k in suite.episodes if k not in seen]
    if missing:
        shown_keys = ", ".join(f"({t}, {s})" for t, s in missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise _Rejected(f"{name}: lacks {len(missing)} of the suite's episodes, e.g. (task, seed) {shown_keys}")
    return records, digests


def _check_facts(episode: _Episode, with_facts: tuple[bool, int] | None, at: str, number: int) -> tuple[bool, int] | None:
    """A log records decision facts in every step and after every episode with steps, or nowhere (a
    log from before the runner recorded them): facts left out of some steps would hide errors from
    the decision metrics. Returns whether this log has them, and the line that first said so."""
    if not episode.steps:
        return with_facts
    here = [s.decision is not None for s in episode.steps] + [episode.final_decision is not None]
    if any(here) and not all(here):
        missing = "final_decision" if all(here[:-1]) else f"step {here.index(False) + 1}'s decision"
        raise _Rejected(f"{at}: episode ({episode.task}, {episode.seed}): {missing} is missing: a log records decision facts everywhere or nowhere")
    if with_facts is not None and with_facts[0] != here[0]:
        first = f"line {with_facts[1]} " + ("records" if with_facts[0] else "does not record")
        raise _Rejected(f"{at}: {'records' if here[0] else 'does not record'} decision facts but {first} them: a log records them everywhere or nowhere")
    return with_facts or (here[0], number)


def _check_record(task: Task, episode: _Episode, where: str) -> None:
    if (episode.env_id, episode.obs_mode) != (task.env, task.obs_mode):
        raise _Rejected(f"{where}: env {shown(episode.env_id)} / {shown(episode.obs_mode)} is not the task's {task.env} / {task.obs_mode}")
    if len(episode.steps) > _budget(task):
        raise _Rejected(f"{where}: {len(episode.steps)} steps, more than the task's budget of {_budget(task)}")
    steps = episode.steps
    checks = {
        "num_steps": (episode.num_steps, len(steps)),
        "invalid_actions": (episode.invalid_actions, sum(not s.valid for s in steps)),
        "input_tokens": (episode.input_tokens, sum(s.input_tokens for s in steps)),
        "output_tokens": (episode.output_tokens, sum(s.output_tokens for s in steps)),
        "return": (episode.return_, sum(s.reward for s in steps)),
    }
    for field, (claimed, actual) in checks.items():
        if not math.isclose(claimed, actual, rel_tol=1e-9, abs_tol=_TOLERANCE):
            raise _Rejected(f"{where}: {field} is {claimed} but its steps add up to {actual}")


def _check_summary(suite: Suite, records: list[dict[str, Any]], claimed: Any, manifest: _Manifest) -> dict[str, Any]:
    """The summary recomputed from the episodes; ``claimed`` (summary.json) must equal it."""
    expected = build_summary(suite, records, manifest.protocol_hash, manifest.agent.model_dump(), complete=True)
    differences = list(_differences(expected, claimed))
    if differences:
        path, want, got = differences[0]
        more = f" (and {len(differences) - 1} more differences)" if len(differences) > 1 else ""
        raise _Rejected(f"summary.json: {path or '(top level)'} is {_value(got)} but the episodes give {_value(want)}{more}")
    return expected


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
    elif type(want) is not type(got) or want != got:
        yield path, want, got


# Replay -------------------------------------------------------------------------------------------


class _LogEnded(Exception):
    pass


class _Script(Agent):
    """An agent that answers with a log's raw outputs, in order, and reports the log's tokens."""

    name = "replay"

    def __init__(self, steps: list[Mapping[str, Any]]) -> None:
        super().__init__()
        self.steps = steps
        self.used = 0

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        if self.used >= len(self.steps):
            raise _LogEnded("the log has no more outputs")
        step = self.steps[self.used]
        self.used += 1
        self.usage[index] = Usage(step["input_tokens"], step["output_tokens"])
        return step["raw"]


def replay_episode(env: gym.Env, task: Task, record: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """Play ``record``'s raw outputs in ``env`` from its seed, as the runner plays an agent.

    Returns:
        The record the runner writes for these outputs (tokens from the log, fresh timings), and
        how many outputs the env took before the episode ended (fewer than logged: the log goes
        on after the end).
    """
    script = _Script(record["steps"])
    # the facts are asked for only where the log has them (an older log's replay is as it was)
    facts = "final_decision" in record or any("decision" in s for s in record["steps"])
    rebuilt = play_episode(env, script, task, record["seed"], decisions=facts)
    if script.used == len(record["steps"]) and (rebuilt["error"] or "").startswith(f"agent raised {_LogEnded.__name__}"):
        rebuilt["error"] = _LogEnded.__name__  # the outputs ran out before the env ended the episode
    return rebuilt, script.used


def _replay_problem(env: gym.Env, task: Task, record: Mapping[str, Any]) -> str | None:
    """What the log says that replaying its outputs contradicts, or ``None``."""
    try:
        rebuilt, used = replay_episode(env, task, record)
    except Exception as err:  # an env broken by a logged output: still a verdict, never a traceback
        return f"replaying the outputs raised {type(err).__name__}"
    if rebuilt["optimal_steps"] != record["optimal_steps"]:
        return f"optimal_steps is {record['optimal_steps']} but the env gives {rebuilt['optimal_steps']} for this seed"
    logged = record["steps"]
    for i, (got, want) in enumerate(zip(rebuilt["steps"], logged), 1):
        for key in ("parsed", "valid", "error"):
            if got[key] != want[key]:
                return f"step {i}: the log says {key}={_value(want[key])}; replaying the output gives {_value(got[key])}"
        if not math.isclose(got["reward"], want["reward"], abs_tol=_TOLERANCE):
            return f"step {i}: the log says reward {want['reward']}; replaying the output gives {got['reward']}"
        if want.get("decision") is not None and (problem := _facts_differ(want["decision"], got["decision"])):
            return f"step {i}: the log's decision facts say {problem}"
    if used < len(logged):
        return f"the log goes on after the episode ended at step {used}: {len(logged) - used} step(s) recorded after the end"
    if rebuilt["error"] == _LogEnded.__name__:
        if record["error"] is None:
            return f"the log ends after {len(logged)} steps, but the env had not ended the episode"
        rebuilt["error"] = record["error"]  # the agent's failure: self-reported, and it scores 0
    elif record["error"] is not None:
        return f"the log records an agent error, but the env had ended the episode at step {used}"
    for key in ("level", "version", "success", "progress", "terminated", "truncated", "num_steps", "invalid_actions", "return"):
        got, want = rebuilt[key], record[key]
        same = math.isclose(got, want, abs_tol=_TOLERANCE) if key in ("progress", "return") else (got == want and type(got) is type(want))
        if not same:
            return f"the log says {key}={want!r}; replaying the outputs gives {got!r}"
    if record.get("final_decision") is not None and (problem := _facts_differ(record["final_decision"], rebuilt["final_decision"])):
        return f"the log's final decision facts say {problem}"
    return None


def _facts_differ(logged: Mapping[str, Any], replayed: Mapping[str, Any]) -> str | None:
    """How logged decision facts differ from the env's (``None``: they agree; values within 1e-6)."""
    for key in ("optimal_actions", "steps_to_go", "reason", "features", "values"):
        want, got = logged.get(key), replayed.get(key)
        if key == "values" and isinstance(want, Mapping) and isinstance(got, Mapping) and want.keys() == got.keys():
            if all(math.isclose(want[a], got[a], rel_tol=0, abs_tol=_TOLERANCE) for a in want):
                continue
        elif want == got and type(want) is type(got):
            continue
        return f"{key}={_value(want)}; replaying the output gives {_value(got)}"
    return None


def _replay(files: UntrustedFolder, name: str, suite: Suite, digests: list[bytes], prompt: PromptConfig) -> None:
    """Replay every episode, in file order (read again: records are not all kept in memory)."""
    envs: OrderedDict[str, gym.Env] = OrderedDict()
    try:
        line_bytes, _ = _episode_limits(suite)
        for number, line in files.lines(name, max_lines=len(digests), max_line_bytes=line_bytes):
            if hashlib.sha256(line).digest() != digests[number - 1]:
                raise _Rejected(f"{name}:{number}: changed while it was being validated")
            record = json.loads(line)
            task = suite.task(record["task"])
            env = envs.pop(task.name, None)
            if env is None:
                try:
                    env = make_task_env(task, prompt)
                except Exception as err:  # an env that cannot be made here: no replay, no row
                    raise _Rejected(f"{name}:{number}: cannot make {task.env} to replay it ({type(err).__name__})") from None
            envs[task.name] = env
            while len(envs) > _OPEN_ENVS:
                _close(envs.popitem(last=False)[1])
            problem = _replay_problem(env, task, record)
            if problem:
                raise _Rejected(f"{name}:{number}: episode ({record['task']}, {record['seed']}): {problem}")
    finally:
        for env in envs.values():
            _close(env)


def _close(env: gym.Env) -> None:
    try:
        env.close()
    except Exception:  # closing a replay env must not hide the verdict
        pass


# Maintainers' file and the build -------------------------------------------------------------------


class _Maintainers(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    verified: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]+/[A-Za-z0-9._+-]+$")]] = Field(default_factory=list)


def read_maintainers(root: str | Path) -> set[str]:
    """The ``<suite>/<id>`` rows marked verified in ``root/maintainers.yaml`` (none if absent).

    Raises:
        LeaderboardError: the file is malformed.
    """
    if not (Path(root) / MAINTAINERS_FILE).exists() and not (Path(root) / MAINTAINERS_FILE).is_symlink():
        return set()
    try:
        with UntrustedFolder(root) as folder:
            data = folder.read_yaml(MAINTAINERS_FILE)
        return set(_Maintainers.model_validate(data or {}).verified)
    except Refused as err:
        raise LeaderboardError(str(err)) from None
    except ValidationError as err:
        raise LeaderboardError(f"{MAINTAINERS_FILE}: {_errors(err)}") from None


def mark_verified(root: str | Path, folder: str | Path) -> ValidationReport:
    """Validate ``folder`` (with replay) and, if it passes, mark it verified in ``root/maintainers.yaml``.

    For maintainers, once they have re-run a sample of the submission's episodes with its model.
    """
    report = validate_submission(folder, replay=True)
    if report.ok:
        path = Path(os.path.abspath(folder))
        verified = read_maintainers(root) | {f"{path.parent.name}/{path.name}"}
        text = "# Set by maintainers only (rl4vlm-gym leaderboard verify); a submission cannot set these.\n"
        text += yaml.safe_dump({"verified": sorted(verified)}, sort_keys=False)
        _write_atomic(Path(root) / MAINTAINERS_FILE, text)
    return report


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: a link planted at ``path`` is replaced, never followed."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    with open(tmp, "x", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def build_leaderboard(
    root: str | Path,
    out: str | Path | None = None,
    *,
    replay: bool = True,
    on_submission: Callable[[Path, int, int], None] | None = None,
) -> tuple[list[Path], list[ValidationReport]]:
    """Validate every submission under ``root`` and write the pages of the valid ones.

    The pages show each row's recomputed summary, its metadata, and ``verified`` from the
    maintainers' file. ``on_submission(folder, done, total)`` is called as each submission's
    validation starts (a progress bar: replaying a board takes minutes).

    Returns:
        The pages written (``LEADERBOARD.md`` and ``index.html`` in ``out``, default
        ``root/site``) and the reports of the submissions that were left out.

    Raises:
        LeaderboardError: the maintainers' file is malformed, or ``out`` is a link.
    """
    from rl4vlm_gym.harness.pages import write_leaderboard

    verified = read_maintainers(root)
    out = Path(out) if out is not None else Path(root) / "site"
    if out.is_symlink():
        raise LeaderboardError(f"{out} is a symbolic link: the pages are written only into a real folder")
    entries, rejected = [], []
    folders = find_submissions(root)
    for done, folder in enumerate(folders):
        if on_submission is not None:
            on_submission(folder, done, len(folders))
        report = validate_submission(folder, replay=replay)
        if not report.ok:
            rejected.append(report)
            continue
        assert report.metadata is not None and report.summary is not None and report.suite is not None
        key = f"{report.suite.name}/{folder.name}"
        entries.append(
            {
                "id": folder.name,
                "suite": report.suite.name,
                "axis": report.suite.axis,
                "suite_description": report.suite.description,
                "metadata": {**report.metadata.model_dump(mode="json"), "verified": key in verified},
                "summary": report.summary,
            }
        )
    pages = write_leaderboard(entries, out)
    return pages, rejected
