"""The harness's figures (matplotlib): per-task scores with intervals, the transfer matrix and
learning curves. Saved deterministically: the same data gives the same bytes."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["learning_curves", "save_png", "svg_inline", "task_bars", "transfer_matrix"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display; called only when a figure is drawn
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "rl4vlm-gym", "svg.fonttype": "none", "font.size": 9})
    return plt


def task_bars(runs: Sequence[tuple[str, Mapping[str, Any]]], metric: str = "success") -> Any:
    """Grouped bars of ``metric`` per task with 95% intervals, one colour per run.

    Args:
        runs: ``(label, summary)`` pairs; tasks are taken in the first summary's order.
        metric: a metric of the summaries' task entries.
    """
    plt = _pyplot()
    tasks: list[str] = []
    for _, summary in runs:
        tasks += [t for t in summary["tasks"] if t not in tasks]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(tasks) * max(1, len(runs)) + 1.5), 3.2))
    width = 0.8 / max(1, len(runs))
    for i, (label, summary) in enumerate(runs):
        xs, means, errors = [], [], [[], []]
        for j, task in enumerate(tasks):
            score = summary["tasks"].get(task, {}).get(metric)
            if score is None:
                continue
            xs.append(j + (i - (len(runs) - 1) / 2) * width)
            means.append(score["mean"])
            errors[0].append(score["mean"] - score["ci95"][0])
            errors[1].append(score["ci95"][1] - score["mean"])
        ax.bar(xs, means, width, yerr=errors, capsize=2, label=label)
    ax.set_xticks(range(len(tasks)), tasks, rotation=30, ha="right")
    ax.set_ylabel(f"{metric} (95% CI)")
    if metric in ("success", "progress", "normalised_steps"):
        ax.set_ylim(0, 1.05)
    if len(runs) > 1:
        ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def transfer_matrix(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]]) -> Any:
    """A heat map of overall success: ``rows`` (agents) by ``columns`` (suites), cells annotated."""
    import numpy as np

    plt = _pyplot()
    grid = np.array([[np.nan if v is None else v for v in row] for row in values], float)
    fig, ax = plt.subplots(figsize=(2.0 + 1.0 * len(columns), max(2.6, 1.8 + 0.45 * len(rows))))
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for (i, j), value in np.ndenumerate(grid):
        if not np.isnan(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="white" if value < 0.6 else "black", fontsize=8)
    fig.colorbar(image, ax=ax, label="success")
    fig.tight_layout()
    return fig


def learning_curves(logs: Sequence[str | Path], metrics: Sequence[str] = ("success", "return")) -> Any:
    """Lines of ``metrics`` against env steps from training-log CSVs (``env_steps`` or ``step``)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.0), squeeze=False)
    for path in logs:
        with Path(path).open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        x_key = "env_steps" if "env_steps" in rows[0] else "step"
        if x_key not in rows[0]:
            raise ValueError(f"{path}: a training log needs an env_steps or step column; it has {sorted(rows[0])}")
        for ax, metric in zip(axes[0], metrics, strict=True):
            points = [(float(r[x_key]), float(r[metric])) for r in rows if r.get(metric) not in (None, "")]
            if points:
                ax.plot(*zip(*points, strict=True), label=Path(path).stem)
    for ax, metric in zip(axes[0], metrics, strict=True):
        ax.set_xlabel("env steps")
        ax.set_ylabel(metric)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def save_png(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` as a PNG without a timestamp or version in its metadata, and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=110, metadata={"Software": None})
    _pyplot().close(fig)
    return path


def svg_inline(fig: Any) -> str:
    """``fig`` as an ``<svg>`` element for an HTML page (no date, fixed ids), and close it."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    _pyplot().close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]
