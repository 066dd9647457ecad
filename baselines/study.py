"""Env-set scaling study: how transfer grows with the number of env families trained on.

VL-DAC's authors ask how many kinds of interaction a training set needs for a given transfer gain.
This study answers it the direct way, as a scaling law over sets of families:

1. for each ``k`` in ``ks`` and each of ``draws`` draws, pick ``k`` families (a seeded draw;
   repeated sets are played once), and train the baseline on their mixture
   (:class:`~rl4vlm_gym.baselines.trainer.Trainer`, the same config for every set);
2. play every target with the ``hf`` agent on the model *before* RL (``checkpoints/update_0``,
   after the format warm-up) and *after* (``checkpoints/final``): the ``balrog`` suites (score:
   BALROG's average progression, in [0, 1]) and each family held out of the set (score: mean
   progress over its tasks, on evaluation seeds);
3. the transfer gain of a run on a target is after minus before, a paired difference on the same
   seeds; per ``k``, the mean gain over draws with a 95% bootstrap interval over draws;
4. fit ``gain = a + b * log(k)`` by least squares over all runs (with ``k`` >= 1), and for each
   target and family, the mean gain of the sets that hold the family minus of those that do not
   ("which families help which targets").

``study.json`` holds every run's scores, the per-``k`` means, the fit and the family effects;
``report.md`` and ``gain_vs_k.png`` show them. A killed study resumes: finished runs are read back,
a run in progress resumes from its checkpoint (the trainer's own resume).

On CPU with the tiny random model the study runs end to end in minutes and measures nothing but
noise around zero: it is the machinery, demonstrated. A real study uses a GPU config
(``baselines/configs/<algo>/<family>-gpu.yaml``) and the ``balrog`` suite; see baselines/README.md
for its cost.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary
from rl4vlm_gym.harness.suite import Suite, Task, draw_seeds, load_suite
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["FAMILIES", "StudySpec", "run_study"]

logger = logging.getLogger(__name__)

FAMILIES: dict[str, tuple[str, ...]] = {
    "probe": ("rl4vlm/ColourNaming-v0",),
    "cards": ("rl4vlm/NumberLine-v0", "rl4vlm/Blackjack-v0"),
    "grid-puzzles": ("rl4vlm/Sokoban-v0", "rl4vlm/FrozenLake-v0"),
    "household": ("rl4vlm/Household-PickPlace-v0",),
    "navigation": ("rl4vlm/MiniWorld-OneRoom-v1",),
    "games": ("rl4vlm/TicTacToe-vs-Random-v0",),
}
"""Training families: each trains on its ids at level 0 (the entry level), mixed with equal weight."""


@dataclass
class StudySpec:
    """What to train on and what to measure.

    Attributes:
        config: the training config (a :class:`~rl4vlm_gym.baselines.config.TrainConfig`); its
            ``env`` is replaced by each set's mixture.
        families: family name -> env ids (default :data:`FAMILIES`).
        ks: set sizes; ``draws``: sets drawn per size; ``seed``: the draws' seed.
        targets: suites to transfer to (default ``balrog-smoke``; ``balrog`` for a real study).
        held_out_episodes: evaluation seeds per task of each held-out family (0: none).
        image_size: one image size for every env of a mixture (they share an observation space).
    """

    config: Any
    families: Mapping[str, Sequence[str]] = field(default_factory=lambda: dict(FAMILIES))
    ks: Sequence[int] = (1, 2)
    draws: int = 2
    seed: int = 0
    targets: Sequence[str] = ("balrog-smoke",)
    held_out_episodes: int = 4
    image_size: tuple[int, int] = (128, 128)  # the cards need 128 px at least

    def sets(self) -> list[tuple[str, ...]]:
        """The family sets, in order: ``draws`` per ``k``, each drawn once (sorted names)."""
        names = sorted(self.families)
        rng = np.random.default_rng(self.seed)
        chosen: list[tuple[str, ...]] = []
        for k in self.ks:
            if not 1 <= k <= len(names):
                raise ValueError(f"k={k} is outside 1..{len(names)} (the families: {', '.join(names)})")
            possible = list(itertools.combinations(names, k))
            order = rng.permutation(len(possible))[: self.draws]
            chosen += [possible[i] for i in sorted(order)]
        return chosen


def run_study(spec: StudySpec, out: str | Path, on_stage: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Run (or resume) the study in folder ``out`` and write its report; returns ``study.json``.

    ``on_stage(stage, sets_done, sets)`` is called as each stage starts (training a set, playing a
    target before or after RL, the analysis at the end): a progress bar over the sets (a set read
    back from an earlier run is done at once).
    """
    from rl4vlm_gym.baselines.config import EnvSpec, EvalSpec, MixtureItem

    def stage(what: str) -> None:
        if on_stage is not None:
            on_stage(what, len(rows), len(sets))

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    sets = spec.sets()
    for families in sets:
        name = "+".join(families)
        folder = out / "runs" / name
        done = folder / "scores.json"
        if done.exists():
            rows.append(json.loads(done.read_text(encoding="utf-8")))
            continue
        mixture = [MixtureItem(id=env_id, kwargs={"level": 0}) for f in families for env_id in spec.families[f]]
        config = spec.config.model_copy(
            update={
                "env": EnvSpec(mixture=mixture, kwargs=_env_kwargs(spec), max_steps=spec.config.env.max_steps),
                "eval": EvalSpec(**{**spec.config.eval.model_dump(), "every": 0, "suite": None}),
            }
        )
        logger.info("study: training on %s", name)
        stage(f"{name}: training")
        from rl4vlm_gym.baselines.trainer import Trainer  # torch: imported only when a set is trained (not to resume)

        Trainer(config, folder).run()
        scores: dict[str, Any] = {"families": list(families), "k": len(families), "targets": {}}
        for target, suite in _targets(spec, families).items():
            stage(f"{name}: {target} before RL")
            before = _score(
                _play(suite, folder / "checkpoints" / "update_0" / "model", folder / "targets" / target / "before", config)
            )
            stage(f"{name}: {target} after RL")
            after = _score(
                _play(suite, folder / "checkpoints" / "final" / "model", folder / "targets" / target / "after", config)
            )
            scores["targets"][target] = {"before": before, "after": after, "gain": after - before}
        done.write_text(json.dumps(scores, indent=1) + "\n", encoding="utf-8")
        rows.append(scores)
    stage("analysing")
    study = _analyse(rows, sorted(spec.families))
    (out / "study.json").write_text(json.dumps(study, indent=1) + "\n", encoding="utf-8")
    _write_report(study, out)
    return study


def _env_kwargs(spec: StudySpec) -> dict[str, Any]:
    kwargs = {k: v for k, v in spec.config.env.kwargs.items() if k != "level"}  # each family trains at level 0
    return {**kwargs, "image_size": list(spec.image_size)}


def _targets(spec: StudySpec, trained: Sequence[str]) -> dict[str, Suite]:
    """The target suites, then one suite per family held out of ``trained`` (evaluation seeds)."""
    suites = {suite.name: suite for suite in map(load_suite, spec.targets)}  # by name: a target may be a file
    if spec.held_out_episodes:
        seeds = tuple(draw_seeds("eval", spec.held_out_episodes, root=spec.seed))
        prompt = PromptConfig(**spec.config.prompt) if spec.config.prompt else PromptConfig()
        kwargs, max_steps = _env_kwargs(spec), spec.config.env.max_steps
        obs_mode = kwargs.pop("obs_mode", "image+text")
        for family in sorted(set(spec.families) - set(trained)):
            tasks = [
                Task(
                    name=env_id.split("/")[-1],
                    env=env_id,
                    level=0,
                    obs_mode=obs_mode,
                    kwargs=kwargs,
                    seeds=seeds,
                    max_steps=max_steps,
                )
                for env_id in spec.families[family]
            ]
            suites[f"held-out:{family}"] = Suite(
                f"held-out-{family}", "family", f"The {family} family, held out of training.", prompt, tasks
            )
    return suites


def _play(suite: Suite, model: Path, run: Path, config: Any) -> dict[str, Any]:
    agent = AgentSpec("hf", {
        "model": str(model.resolve()), "device": config.model.device, "dtype": config.model.dtype,
        "max_new_tokens": config.generation.max_new_tokens, "temperature": config.eval.temperature, "seed": config.seed,
    })  # fmt: skip
    records = run_suite(suite, agent, run)
    return write_summary(run, suite, records)


def _score(summary: Mapping[str, Any]) -> float:
    """BALROG's average progression for a BALROG-protocol suite, else the mean progress over tasks."""
    if "balrog" in summary:
        return float(summary["balrog"]["average_progress"]) / 100.0
    return float(summary["overall"]["progress"]["mean"])


def _analyse(rows: list[dict[str, Any]], families: list[str]) -> dict[str, Any]:
    targets = sorted({t for r in rows for t in r["targets"]})
    rng = np.random.default_rng(0)
    by_k: dict[str, Any] = {}
    fit: dict[str, Any] = {}
    effects: dict[str, dict[str, float | None]] = {}
    for target in targets:
        points = [(r["k"], r["targets"][target]["gain"]) for r in rows if target in r["targets"]]
        per_k = {}
        for k in sorted({k for k, _ in points}):
            gains = np.array([g for kk, g in points if kk == k])
            boot = gains[rng.integers(0, gains.size, (2000, gains.size))].mean(axis=1)
            per_k[str(k)] = {
                "mean": float(gains.mean()),
                "ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
                "runs": int(gains.size),
            }
        by_k[target] = per_k
        ks = np.array([k for k, _ in points], float)
        if len(set(ks)) >= 2:  # a line needs two sizes
            slope, intercept = np.polyfit(np.log(ks), [g for _, g in points], 1)
            fit[target] = {"a": float(intercept), "b": float(slope), "form": "gain = a + b * log(k)"}
        else:
            fit[target] = None
        effects[target] = {}
        for family in families:
            inside = [r["targets"][target]["gain"] for r in rows if target in r["targets"] and family in r["families"]]
            outside = [r["targets"][target]["gain"] for r in rows if target in r["targets"] and family not in r["families"]]
            effects[target][family] = float(np.mean(inside) - np.mean(outside)) if inside and outside else None
    return {"runs": rows, "gain_by_k": by_k, "fit": fit, "family_effects": effects}


def _write_report(study: Mapping[str, Any], out: Path) -> None:
    lines = [
        "# Env-set scaling study",
        "",
        "Transfer gain (after RL minus before, same seeds) by the number of training families k.",
        "",
    ]
    for target, per_k in study["gain_by_k"].items():
        lines += [f"## {target}", "", "| k | runs | mean gain | 95% CI |", "|---|---|---|---|"]
        for k, g in per_k.items():
            lines.append(f"| {k} | {g['runs']} | {g['mean']:+.3f} | {g['ci95'][0]:+.3f} to {g['ci95'][1]:+.3f} |")
        fit = study["fit"][target]
        fitted = (
            f"Fit: gain = {fit['a']:.4f} {'-' if fit['b'] < 0 else '+'} {abs(fit['b']):.4f} log k"
            if fit
            else "Fit: needs two set sizes"
        )
        lines += ["", fitted, ""]
        helped = {f: e for f, e in study["family_effects"][target].items() if e is not None}
        if helped:
            lines += [
                "Family effect (mean gain with the family minus without): "
                + ", ".join(f"{f} {e:+.3f}" for f, e in sorted(helped.items())),
                "",
            ]
    lines += ["## Runs", "", "| families | " + " | ".join(study["gain_by_k"]) + " |", "|---|" + "---|" * len(study["gain_by_k"])]
    for r in study["runs"]:
        cells = [f"{r['targets'][t]['gain']:+.3f}" if t in r["targets"] else "-" for t in study["gain_by_k"]]
        lines.append(f"| {' + '.join(r['families'])} | " + " | ".join(cells) + " |")
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot(study, out / "gain_vs_k.png")


def _plot(study: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for target in study["gain_by_k"]:
        points = [(r["k"], r["targets"][target]["gain"]) for r in study["runs"] if target in r["targets"]]
        axes.scatter([k for k, _ in points], [g for _, g in points], label=target, alpha=0.7)
        fit = study["fit"][target]
        if fit:
            ks = np.linspace(1, max(k for k, _ in points), 50)
            axes.plot(ks, fit["a"] + fit["b"] * np.log(ks))
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel("training families (k)")
    axes.set_ylabel("transfer gain")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
