"""Evaluation suites as data: YAML files of env ids, kwargs, levels, obs modes and explicit seeds.

A suite is a list of tasks; a task is one env configuration played on an explicit list of seeds::

    name: smoke
    axis: smoke                      # what the suite shifts (see AXES)
    description: A fast check of every family.
    max_steps: 30                    # the default step budget of an episode
    prompt: {template: default, output_format: json, history: 0, images: 1}
    tasks:
      - name: numberline
        env: rl4vlm/NumberLine-v0
        level: 0                     # or a list: one task per level
        obs_mode: [image, text]      # or one mode: one task per mode
        kwargs: {image_size: [224, 224]}
        seeds: [1073741824, 1073741825]
        max_steps: 10                # overrides the suite's budget
        score: {metric: return, low: -13, high: 13, unit: chips, duplicate: 2}   # optional (below)

A task's *score* is what the board ranks it by: ``success`` (the default), or ``return`` where an
episode's return is the quantity that measures strength (chips in poker, where winning many small
hands while losing big ones is losing); ``low`` and ``high`` bound the return and map it linearly
onto ``[0, 1]``, so a suite's overall score (the mean over tasks) mixes both kinds; ``duplicate: N``
says the task's seeds come in complete groups ``N k .. N k + N - 1``, one deal played from each of
N seats (the poker views' ``duplicate=True``), and its intervals resample whole deals. Suites that
give no task a score rank by success, as before.

Lists of levels and obs modes expand into one task each, named ``numberline/l0/image`` and so on.
Every field is checked when the file is loaded (unknown keys, unknown ids, seeds outside
``[0, 2**32)``, repeated seeds) and the error names the file and the field.

The *protocol* of a suite is everything that decides what an agent is asked to do: the expanded
tasks (ids with their versions, kwargs, seeds, budgets), the prompt and the harness's protocol
version, plus the facts of this machine that decide an env's rewards, for envs that declare
some (``EnvCard.protocol_facts``: which model WebShop's reward ran). :meth:`Suite.protocol_hash`
hashes it; two results are comparable only when their hashes are equal.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rl4vlm_gym.prompts import PromptConfig, prompt_fingerprint
from rl4vlm_gym.registry import OBS_MODES

__all__ = ["AXES", "PROTOCOL_VERSION", "SUITES_DIR", "Suite", "SuiteError", "Task", "TaskScore", "builtin_suites", "draw_seeds", "load_suite", "parse_positions"]

PROTOCOL_VERSION = 1
"""Bumped whenever the harness changes what an episode measures (budgets, metrics, records)."""

AXES = ("smoke", "in-distribution", "seeds", "levels", "visual", "wording", "modality", "family")
"""What a suite shifts relative to training: nothing (``in-distribution``), or one axis."""

WRAPPERS: dict[str, str] = {
    "reword-mission": "rl4vlm_gym.wrappers:RewordMission",
    "balrog-actions": "rl4vlm_gym.wrappers:BalrogActions",
}
"""Wrappers a suite may name (by name only: a suite file never names code to import)."""

# leaderboards/suites/ in the repository, installed as the package rl4vlm_gym.suites (setup.cfg).
SUITES_DIR = Path(str(importlib.resources.files("rl4vlm_gym.suites")))


# libyaml's safe loader where PyYAML was built with it (six times faster on a suite of thousands
# of seeds), else PyYAML's own: both safe, same data.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SuiteError(ValueError):
    """A suite file is malformed; the message names the file and the field."""


class TaskScore(BaseModel):
    """How a task is scored on its board: ``success`` (1 or 0 an episode) or the episode's
    ``return`` mapped linearly from ``[low, high]`` onto ``[0, 1]`` (``unit`` names it on the page)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: Literal["success", "return"]
    low: float = 0.0
    high: float = 1.0
    unit: str = Field(default="", max_length=16, pattern=r"^[A-Za-z ]*$")
    duplicate: int = Field(default=1, ge=1, le=8)  # seeds per deal: s // duplicate names the deal

    @field_validator("high")
    @classmethod
    def _range(cls, high: float, info: Any) -> float:
        low = info.data.get("low", 0.0)
        if not high > low:
            raise ValueError(f"high ({high}) must be above low ({low})")
        return high

    def normalise(self, success: float, episode_return: float) -> float:
        """An episode's score in ``[0, 1]`` (clipped: a penalty may push a return past ``low``)."""
        if self.metric == "success":
            return success
        return min(1.0, max(0.0, (episode_return - self.low) / (self.high - self.low)))


class Task(BaseModel):
    """One env configuration and the seeds it is played on (after expansion)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.+/-]+$")
    env: str = Field(min_length=1)
    level: int | None = None
    obs_mode: str = "image+text"
    kwargs: dict[str, Any] = Field(default_factory=dict)
    seeds: tuple[int, ...]
    max_steps: int | None = Field(default=None, ge=1, le=100_000)
    wrappers: tuple[str, ...] = ()
    score: TaskScore | None = None

    @property
    def make_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``gym.make`` (budget included)."""
        kwargs = dict(self.kwargs, obs_mode=self.obs_mode)
        if self.level is not None:
            kwargs["level"] = self.level
        if self.max_steps is not None:
            kwargs["max_episode_steps"] = self.max_steps
        return kwargs


class _TaskSpec(BaseModel):
    """A task as written in the file: levels and obs modes may be lists."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.+-]+$")
    env: str = Field(min_length=1, pattern=r"^[\w.:-]+/[\w.-]+-v\d+$")
    level: int | list[int] | None = None
    obs_mode: str | list[str] = "image+text"
    kwargs: dict[str, Any] = Field(default_factory=dict)
    seeds: list[int] = Field(min_length=1)
    max_steps: int | None = Field(default=None, ge=1, le=100_000)
    wrappers: list[str] = Field(default_factory=list)
    score: TaskScore | None = None

    @model_validator(mode="after")
    def _whole_deals(self) -> _TaskSpec:
        n = self.score.duplicate if self.score is not None else 1
        if n > 1:
            deals: dict[int, int] = {}
            for seed in self.seeds:
                deals[seed // n] = deals.get(seed // n, 0) + 1
            broken = next((k for k, count in deals.items() if count != n), None)
            if broken is not None:
                raise ValueError(f"score.duplicate={n}: the seeds {n * broken}..{n * broken + n - 1} (one deal) must all be listed")
        return self

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: list[int]) -> list[int]:
        bad = [s for s in seeds if not 0 <= s < 2**32]
        if bad:
            raise ValueError(f"seeds must be in [0, 2**32); got {bad[:5]}")
        seen: set[int] = set()  # a set, not list.count: poker tasks list thousands of seeds
        twice: set[int] = set()
        for s in seeds:
            (twice if s in seen else seen).add(s)
        repeated = sorted(twice)
        if repeated:
            raise ValueError(f"seeds repeat: {repeated[:5]}")
        return seeds

    @field_validator("obs_mode")
    @classmethod
    def _obs_mode(cls, mode: str | list[str]) -> str | list[str]:
        for m in [mode] if isinstance(mode, str) else mode:
            if m not in OBS_MODES:
                raise ValueError(f"obs_mode {m!r} is unknown; choose from {OBS_MODES}")
        return mode

    @field_validator("kwargs")
    @classmethod
    def _kwargs(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted({"level", "obs_mode", "max_episode_steps", "render_mode"} & set(kwargs))
        if reserved:
            raise ValueError(f"{reserved} are task fields (level, obs_mode, max_steps), not kwargs")
        return kwargs

    @field_validator("wrappers")
    @classmethod
    def _wrappers(cls, wrappers: list[str]) -> list[str]:
        unknown = sorted(set(wrappers) - set(WRAPPERS))
        if unknown:
            raise ValueError(f"unknown wrappers {unknown}; choose from {sorted(WRAPPERS)}")
        return wrappers

    def expand(self, default_max_steps: int | None) -> list[Task]:
        levels = self.level if isinstance(self.level, list) else [self.level]
        modes = self.obs_mode if isinstance(self.obs_mode, list) else [self.obs_mode]
        tasks = []
        for level in levels:
            for mode in modes:
                suffix = (f"/l{level}" if len(levels) > 1 else "") + (f"/{mode}" if len(modes) > 1 else "")
                tasks.append(
                    Task(
                        name=self.name + suffix,
                        env=self.env,
                        level=level,
                        obs_mode=mode,
                        kwargs=self.kwargs,
                        seeds=tuple(self.seeds),
                        max_steps=self.max_steps or default_max_steps,
                        wrappers=tuple(self.wrappers),
                        score=self.score,
                    )
                )
        return tasks


class _SuiteSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.+-]+$")
    axis: Literal[AXES]  # type: ignore[valid-type]
    description: str = ""
    max_steps: int | None = Field(default=None, ge=1, le=100_000)
    prompt: dict[str, Any] = Field(default_factory=dict)
    tasks: list[_TaskSpec] = Field(min_length=1)


class Suite:
    """A loaded, expanded and checked suite.

    Attributes:
        name: the suite's name (its leaderboard).
        axis: what it shifts (:data:`AXES`).
        description: one paragraph for the leaderboard page.
        prompt: the suite's prompt configuration (an eval run may override it; the override is
            part of the run's protocol).
        tasks: the expanded tasks, in file order.
    """

    def __init__(self, name: str, axis: str, description: str, prompt: PromptConfig, tasks: list[Task]) -> None:
        names = [t.name for t in tasks]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise SuiteError(f"suite {name!r}: task names repeat after expansion: {repeated}")
        self.name, self.axis, self.description, self.prompt, self.tasks = name, axis, description, prompt, tasks

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> Suite:
        if not isinstance(data, Mapping):
            raise SuiteError(f"{source}: a suite is a mapping with name, axis and tasks; got {type(data).__name__}")
        try:
            spec = _SuiteSpec.model_validate(data)
            prompt = PromptConfig(**spec.prompt)
        except ValidationError as err:
            raise SuiteError(f"{source}: {_explain(err)}") from None
        except (TypeError, ValueError) as err:
            raise SuiteError(f"{source}: prompt: {err}") from None
        tasks = [t for spec_task in spec.tasks for t in spec_task.expand(spec.max_steps)]
        try:
            return cls(spec.name, spec.axis, spec.description, prompt, tasks)
        except SuiteError as err:
            raise SuiteError(f"{source}: {err}") from None

    @property
    def scores(self) -> dict[str, TaskScore] | None:
        """Each task's :class:`TaskScore` (``success`` where none is given), or ``None`` when the
        suite scores no task: its board then ranks by success."""
        if all(t.score is None for t in self.tasks):
            return None
        return {t.name: t.score or TaskScore(metric="success") for t in self.tasks}

    @property
    def episodes(self) -> list[tuple[str, int]]:
        """Every ``(task name, seed)`` the suite plays, in order."""
        return [(t.name, s) for t in self.tasks for s in t.seeds]

    def subset(self, tasks: Sequence[str] = (), limit: int | None = None, positions: Sequence[int | range] | None = None) -> Suite:
        """The suite cut down for a quick look: only ``tasks`` (names as listed; all when empty), each
        on the seeds at ``positions`` in its list (0-based; all when ``None``), then on the first
        ``limit`` of those. Where a task's score plays each deal from several seeds, positions and
        ``limit`` count deals, and whole deals are kept. A cut suite is another protocol (its hash
        differs), so its runs never pass for the whole suite's on a board.

        Raises:
            SuiteError: a name that is no task of the suite, a ``limit`` below 1, no position, or a
                position past the seeds (deals) of a chosen task (the message names the task and
                its range).
        """
        unknown = [name for name in tasks if name not in {t.name for t in self.tasks}]
        if unknown:
            names = ", ".join(t.name for t in self.tasks)
            raise SuiteError(f"suite {self.name!r} has no task {', '.join(map(repr, unknown))}; its tasks: {names}")
        if limit is not None and limit < 1:
            raise SuiteError(f"limit={limit}: give at least 1 seed per task")
        chosen = [t for t in self.tasks if not tasks or t.name in tasks]
        if positions is not None:
            spans = [p if isinstance(p, range) else range(p, p + 1) for p in positions]
            if not any(spans) or any(s.start < 0 for s in spans):
                raise SuiteError(f"seed positions {_spec(spans)}: give positions from 0 (the first seed of each task)")
            chosen = [t.model_copy(update={"seeds": _deals_at(t, spans)}) for t in chosen]
        if limit is not None:
            chosen = [t.model_copy(update={"seeds": _first_deals(t, limit)}) for t in chosen]
        return Suite(self.name, self.axis, self.description, self.prompt, chosen)

    def task(self, name: str) -> Task:
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(f"suite {self.name!r} has no task {name!r}")

    def check_envs(self) -> None:
        """Check every env id is registered (plugins loaded) and takes the task's obs mode."""
        from rl4vlm_gym.registry import env_card

        problems = []
        for t in self.tasks:
            try:
                card = env_card(t.env)
            except KeyError:
                problems.append(f"unknown env id {t.env!r}")
                continue
            if t.obs_mode not in card.obs_modes:
                problems.append(f"task {t.name!r}: {t.env} has no obs_mode {t.obs_mode!r} (it has {', '.join(card.obs_modes)})")
        if problems:
            raise SuiteError(f"suite {self.name!r}: " + "; ".join(sorted(set(problems))))

    def protocol(self, prompt: PromptConfig | None = None) -> dict[str, Any]:
        """What two comparable results must share, as canonical JSON-able data."""
        from rl4vlm_gym.registry import protocol_facts

        prompt = prompt or self.prompt
        protocol = {
            "harness_protocol": PROTOCOL_VERSION,
            "suite": self.name,
            # a task without a score leaves the key out, so suites that score none keep their hash
            "tasks": [t.model_dump(mode="json", exclude={"score"} if t.score is None else None) for t in self.tasks],
            "prompt": json.loads(prompt_fingerprint(prompt)),
        }
        facts = {t.name: f for t in self.tasks if (f := protocol_facts(t.env, t.make_kwargs))}
        if facts:  # only where an env declares some, so other suites keep their hash
            protocol["env_facts"] = facts
        return protocol

    def protocol_hash(self, prompt: PromptConfig | None = None) -> str:
        """``sha256`` of :meth:`protocol` as canonical JSON (sorted keys, no spaces)."""
        blob = json.dumps(self.protocol(prompt), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


def _first_deals(task: Task, limit: int) -> tuple[int, ...]:
    """The seeds of ``task``'s first ``limit`` deals, in the task's order."""
    return _seeds_of(task, set(_deals(task)[:limit]))


def _deals_at(task: Task, spans: Sequence[range]) -> tuple[int, ...]:
    """The seeds of ``task``'s deals at the positions in ``spans``, in the task's order."""
    deals = _deals(task)
    past = max(s[-1] for s in spans if s)
    if past >= len(deals):
        kind = "deals" if _per_deal(task) > 1 else "seeds"
        raise SuiteError(f"seed position {past} is past the {len(deals)} {kind} of task {task.name!r} (positions 0-{len(deals) - 1})")
    return _seeds_of(task, {deal for i, deal in enumerate(deals) if any(i in s for s in spans)})


def _per_deal(task: Task) -> int:
    """Seeds a deal of ``task`` takes: ``score.duplicate`` seeds ``N k .. N k + N - 1`` played as one (deal ``k``), else 1."""
    return task.score.duplicate if task.score else 1


def _deals(task: Task) -> list[int]:
    """``task``'s deals in its order, each named by ``seed // _per_deal(task)``."""
    per_deal = _per_deal(task)
    return list(dict.fromkeys(seed // per_deal for seed in task.seeds))


def _seeds_of(task: Task, deals: set[int]) -> tuple[int, ...]:
    """The seeds of ``task`` in the given deals, in the task's order."""
    per_deal = _per_deal(task)
    return tuple(seed for seed in task.seeds if seed // per_deal in deals)


def _spec(spans: Sequence[range]) -> str:
    return ",".join(str(s.start) if len(s) == 1 else f"{s.start}-{s.stop - 1}" for s in spans) or "(none)"


def parse_positions(spec: str) -> list[range]:
    """Seed positions written as on the command line, ``0,3,5-7`` (0-based, ranges inclusive), as ranges.

    A dozen lines of our own rather than a dependency: PyPI's parsers of such lists are not kept
    (``intspan``'s last release is of 2019, ``rangeparser``'s of 2012), and ours keeps each range a
    ``range``, so ``0-4294967295`` costs nothing before it is checked against a suite.

    Raises:
        SuiteError: an empty item, a number that is not a whole number from 0, or a range whose end
            is below its start (the message quotes the item).
    """
    spans = []
    for item in spec.split(","):
        first, dash, last = (part.strip() for part in item.partition("-"))
        if not (first.isdecimal() and first.isascii()) or (dash and not (last.isdecimal() and last.isascii())):
            raise SuiteError(f"seed positions {spec!r}: {item.strip()!r} is not a position N or a range N-M of whole numbers from 0 (e.g. 0,3,5-7)")
        start, stop = int(first), int(last) + 1 if dash else int(first) + 1
        if stop <= start:
            raise SuiteError(f"seed positions {spec!r}: the range {item.strip()!r} ends below its start")
        spans.append(range(start, stop))
    return spans


def load_suite(name_or_path: str | Path) -> Suite:
    """A suite by file path, or by the name of a built-in suite (``leaderboards/suites/NAME.yaml``)."""
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = SUITES_DIR / f"{name_or_path}.yaml"
        if not path.exists():
            known = ", ".join(builtin_suites()) or "none found"
            raise SuiteError(f"no suite {str(name_or_path)!r}: give a YAML file or a built-in name ({known})")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SuiteError(f"cannot read suite {str(path)!r}: {err.strerror}") from None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as err:
        raise SuiteError(f"{path}: not valid YAML: {err}") from None
    return Suite.from_dict(data, str(path))


def builtin_suites() -> list[str]:
    """Names of the suites in ``leaderboards/suites``."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))


def _explain(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:5]:
        where = ".".join(str(x) for x in e["loc"]) or "(top level)"
        parts.append(f"{where}: {e['msg']}")
    more = f" (and {err.error_count() - 5} more)" if err.error_count() > 5 else ""
    return "; ".join(parts) + more


def draw_seeds(split: str, n: int, root: int = 0) -> list[int]:
    """``n`` distinct seeds of a split (``train``, ``eval`` or ``test``), spawned from ``root`` with
    ``numpy.random.SeedSequence``: a published root reproduces a suite's seed list."""
    from rl4vlm_gym.registry import EVAL_SEEDS, TEST_SEEDS, TRAIN_SEEDS

    ranges = {"train": TRAIN_SEEDS, "eval": EVAL_SEEDS, "test": TEST_SEEDS}
    if split not in ranges:
        raise ValueError(f"split {split!r} is unknown; choose from {sorted(ranges)}")
    if not 0 < n <= 100_000:
        raise ValueError(f"n={n} must be in 1..100000")
    span = ranges[split]
    seeds: list[int] = []
    seen: set[int] = set()  # thousands of seeds (poker tasks): membership in a set, not the list
    sequence = np.random.SeedSequence(root)
    while len(seeds) < n:
        for x in sequence.generate_state(2 * n, dtype=np.uint64):
            seed = span.start + int(x) % len(span)
            if seed not in seen and len(seeds) < n:
                seeds.append(seed)
                seen.add(seed)
        sequence = sequence.spawn(1)[0]
    return seeds
