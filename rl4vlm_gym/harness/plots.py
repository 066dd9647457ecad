"""The harness's figures: per-task and overall scores with 95% intervals, the transfer matrix
(agents by suites) and learning curves from training logs.

Figures are plain :class:`matplotlib.figure.Figure` objects on an Agg canvas, never pyplot ones:
making one changes no global state (backend, rcParams, pyplot's figure list), so a notebook's
own backend is left alone and nothing needs closing. Saved figures are byte-stable: the same data
gives the same PNG and SVG bytes (no date or version in the metadata, fixed SVG ids).
"""

from __future__ import annotations

import csv
import io
import math
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = ["DPI", "cross_table", "learning_curves", "overall_bars", "save", "svg_inline", "task_bars", "transfer_matrix"]

DPI = 110
_BOUNDED = ("success", "progress", "normalised_steps", "accuracy")
_STEP_COLUMNS = ("env_steps", "step")
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "rl4vlm-gym",  # clip-path ids from a fixed salt, not a random one
    "svg.fonttype": "none",  # text stays text: small, searchable, escaped by the SVG writer
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@contextmanager
def _style() -> Iterator[None]:
    try:
        import matplotlib
    except ImportError as err:
        raise ImportError("reports draw their plots with matplotlib, in the eval extra: pip install 'rl4vlm-gym[eval]'") from err

    with matplotlib.rc_context(_RC):
        yield


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _text(label: object) -> str:
    """``label`` shown literally: ``$`` would otherwise start mathtext (and may fail to parse)."""
    return str(label).replace("$", r"\$")


def _errors(scores: Sequence[Mapping[str, Any]]) -> list[list[float]]:
    return [[s["mean"] - s["ci95"][0] for s in scores], [s["ci95"][1] - s["mean"] for s in scores]]


def task_bars(runs: Sequence[tuple[str, Mapping[str, Any]]], metric: str = "success") -> Figure:
    """Grouped bars of a metric per task with 95% intervals, one colour per run.

    Args:
        runs: ``(label, summary)`` pairs (``summary.json`` contents); tasks are in first-seen
            order across the summaries.
        metric: a metric of the summaries' task entries (``success``, ``progress``,
            ``normalised_steps``, ``return``; or ``accuracy`` of a decision summary's).

    Returns:
        The figure; with more than one run, a legend names the runs.
    """
    tasks: list[str] = []
    for _, summary in runs:
        tasks += [t for t in summary["tasks"] if t not in tasks]
    n = max(1, len(runs))
    with _style():
        fig = _figure(max(4.0, 0.45 * len(tasks) * n + 1.8), 3.4)
        ax = fig.subplots()
        width = 0.8 / n
        for i, (label, summary) in enumerate(runs):
            xs, scores = [], []
            for j, task in enumerate(tasks):
                score = summary["tasks"].get(task, {}).get(metric)
                if score is not None:  # undefined for the task (e.g. SPL of a game of chance)
                    xs.append(j + (i - (n - 1) / 2) * width)
                    scores.append(score)
            ax.bar(
                xs, [s["mean"] for s in scores], width, yerr=_errors(scores), capsize=2, label=_text(label), color=f"C{i % 10}"
            )
        ax.set_xticks(range(len(tasks)), [_text(t) for t in tasks], rotation=30, ha="right")
        ax.set_ylabel(f"{metric} (95% CI)")
        if metric in _BOUNDED:
            ax.set_ylim(0, 1.05)
        means = [summary["tasks"].get(t, {}).get(metric) for _, summary in runs for t in tasks]
        if all(score is None or score["mean"] == 0 for score in means):  # bars of height 0 draw nothing: say so
            words = {"success": "no successes", "progress": "no progress"}.get(metric, f"{metric} 0 everywhere")
            ax.text(0.5, 0.5, words, transform=ax.transAxes, ha="center", va="center", color="#555", fontsize=11)
        if len(runs) > 1:
            ax.legend(fontsize=8, frameon=False)
        fig.tight_layout(pad=1.2)
    return fig


def overall_bars(labels: Sequence[str], scores: Sequence[Mapping[str, Any] | None], metric: str = "success") -> Figure:
    """Horizontal bars of one overall score per row (e.g. per leaderboard entry), with 95% intervals.

    Args:
        labels: the row names, top to bottom.
        scores: ``{"mean", "ci95"}`` per row, or ``None`` where undefined (no bar).
        metric: the axis label.

    Returns:
        The figure.
    """
    with _style():
        fig = _figure(6.0, 0.9 + 0.32 * max(1, len(labels)))
        ax = fig.subplots()
        shown = [(i, s) for i, s in enumerate(scores) if s is not None]
        ax.barh(
            [i for i, _ in shown], [s["mean"] for _, s in shown], 0.6, xerr=_errors([s for _, s in shown]), capsize=2, color="C0"
        )
        ax.set_yticks(range(len(labels)), [_text(label) for label in labels])
        ax.set_ylim(len(labels) - 0.5, -0.5)  # first row on top, as in the table
        ax.set_xlabel(f"overall {metric} (95% CI)")
        if metric in _BOUNDED:
            ax.set_xlim(0, 1.0)
        fig.tight_layout(pad=1.2)
    return fig


def _wrapped(label: object, width: int) -> str:
    """``label`` shown literally on lines of at most ``width`` characters (broken at spaces and hyphens)."""
    return "\n".join(textwrap.wrap(_text(label), width, break_on_hyphens=True)) or _text(label)


def transfer_matrix(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]]) -> Figure:
    """A heat map of overall success: rows (agents or runs) by columns (suites), cells annotated.

    The figure is sized from its labels: every label keeps the base font (9 pt) and none overlaps
    another; long labels wrap (rows at 32 characters, columns at 12), and column labels stand
    upright only when the columns would otherwise make the figure wider than 9 inches.

    Args:
        rows: row labels (agents).
        columns: column labels (suites, e.g. ``"name (axis)"``).
        values: ``values[i][j]`` in ``[0, 1]``, or ``None`` where row ``i`` has no run of column
            ``j`` (left blank).

    Returns:
        The figure, with a colour bar over ``[0, 1]``.
    """
    import numpy as np

    grid = np.array([[np.nan if v is None else v for v in row] for row in values], float).reshape(len(rows), len(columns))
    char, line = 0.075, 0.16  # inches: a 9 pt character (DejaVu Sans, on average) and a line of it
    row_labels = [_wrapped(r, 32) for r in rows]
    col_labels = [_wrapped(c, 12) for c in columns]
    width = max([0.6, *(char * len(part) + 0.2 for c in col_labels for part in c.split("\n"))])
    rotation = 0
    if width * len(columns) > 9.0:  # too many columns side by side: upright labels, narrow columns
        rotation, width = 90, 0.5
        col_labels = [_wrapped(c, 24) for c in columns]
    longest_row = max([1, *(len(part) for r in row_labels for part in r.split("\n"))])
    lines_row = max([1, *(r.count("\n") + 1 for r in row_labels)])
    if rotation:
        below = char * max([1, *(len(part) for c in col_labels for part in c.split("\n"))]) + 0.2
    else:
        below = line * max([1, *(c.count("\n") + 1 for c in col_labels)]) + 0.2
    with _style():
        fig = _figure(char * longest_row + width * len(columns) + 1.9, 0.6 + below + max(0.4, line * lines_row + 0.12) * len(rows))
        ax = fig.subplots()
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(columns)), col_labels, rotation=rotation, ha="center", va="top")
        ax.set_yticks(range(len(rows)), row_labels)
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                colour = "white" if value < 0.6 else "black"  # readable on viridis' dark and light ends
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=9)
        bar = fig.colorbar(image, ax=ax, label="overall success")
        bar.set_ticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])  # the same ticks at any height (cells show two decimals)
        fig.tight_layout(pad=1.2)
    return fig


def _read_log(path: Path) -> tuple[str, list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames or []
    step = next((c for c in _STEP_COLUMNS if c in columns), None)
    if step is None:
        raise ValueError(f"{path}: a training log needs an env_steps or step column; it has {columns}")
    return step, rows


def _number(value: str, path: Path, line: int, column: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{path}, line {line}: {column} is {value!r}, not a number") from None


def learning_curves(logs: Sequence[str | Path], metrics: Sequence[str] = ("success", "return")) -> Figure:
    """Learning curves from training-log CSVs: one panel per metric, one line per log.

    Args:
        logs: CSV files with a header, an ``env_steps`` (or ``step``) column and metric columns;
            empty cells are skipped.
        metrics: the columns to plot; those that no log has are left out.

    Returns:
        The figure.

    Raises:
        ValueError: a log has no step column, a cell is not a number, or no log has any of
            ``metrics``.
    """
    paths = [Path(p) for p in logs]
    stems = [p.stem for p in paths]
    names = [p.stem if stems.count(p.stem) == 1 else f"{p.parent.name}/{p.stem}" for p in paths]
    curves: dict[str, list[tuple[str, list[float], list[float]]]] = {m: [] for m in metrics}
    for path, name in zip(paths, names, strict=True):
        step, rows = _read_log(path)
        for metric in metrics:
            points = [
                (_number(r[step], path, i, step), _number(r[metric], path, i, metric))
                for i, r in enumerate(rows, 2)
                if r.get(metric) not in (None, "") and r.get(step) not in (None, "")
            ]
            if points:
                curves[metric].append((name, [x for x, _ in points], [y for _, y in points]))
    shown = [m for m in metrics if curves[m]]
    if not shown:
        raise ValueError(f"none of the training logs has a {' or '.join(metrics)} column with values")
    with _style():
        fig = _figure(4.2 * len(shown), 3.1)
        axes = fig.subplots(1, len(shown), squeeze=False)[0]
        for ax, metric in zip(axes, shown, strict=True):
            for i, (name, xs, ys) in enumerate(curves[metric]):
                ax.plot(xs, ys, label=_text(name), color=f"C{i % 10}")
            ax.set_xlabel("env steps")
            ax.set_ylabel(metric)
            ax.legend(fontsize=8, frameon=False)
        fig.tight_layout(pad=1.2)
    return fig


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at :data:`DPI`, with no software version in its metadata.

    Args:
        fig: a figure of this module.
        path: the PNG file; its folder is made if missing.

    Returns:
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _style():
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def svg_inline(fig: Figure, min_scale: float | None = None) -> str:
    """``fig`` as an ``<svg>`` element to put inline in an HTML page.

    No XML declaration, doctype or metadata block, and clip-path ids from a
    fixed salt, so the same figure gives the same text. The element scales down to its container,
    and text set in a wider browser font than matplotlib measured is not cut off.

    Args:
        fig: a figure of this module.
        min_scale: scale down no further than this (a CSS ``min-width``: ``0.75`` keeps 9 pt labels at
            9 px or more); in a narrower container the element overflows it, which should then scroll.

    Returns:
        The ``<svg ...>...</svg>`` text.
    """
    buffer = io.StringIO()
    with _style():
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.DOTALL)  # RDF boilerplate only
    least = "" if min_scale is None else f" min-width: {math.ceil(min_scale * fig.get_figwidth() * 96)}px;"  # 96 CSS px an inch
    return svg.replace("<svg ", f'<svg style="max-width: 100%;{least} height: auto; overflow: visible" ', 1)


def cross_table(
    players: Sequence[str],
    scores: Sequence[Sequence[float | None]],
    counts: Sequence[Sequence[Mapping[str, Any] | None]],
    *,
    cooperative: bool = False,
) -> Figure:
    """A tournament's cross-table as a heat map: the row player's points per game against the
    column player (1 all won, 0.5 even, 0 all lost), each cell annotated with wins-draws-losses;
    for a ``cooperative`` game, the success rate of the row player (first seat) with the column
    player (second seat), annotated with successes/games.

    Args:
        players: the players, in the order of rows and columns (best first, say).
        scores: ``scores[i][j]`` in ``[0, 1]``, ``None`` on the diagonal and where they never met.
        counts: ``counts[i][j]`` with ``wins``, ``draws`` and ``losses`` (cooperative:
            ``successes`` and ``games``), or ``None``.

    Returns:
        The figure, with a colour bar over ``[0, 1]``.
    """
    import numpy as np

    n = len(players)
    grid = np.array([[np.nan if v is None else v for v in row] for row in scores], float).reshape(n, n)
    with _style():
        fig = _figure(2.4 + 0.9 * n, 1.8 + 0.7 * n)
        ax = fig.subplots()
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
        ax.set_xticks(range(n), [_text(p) for p in players], rotation=30, ha="right")
        ax.set_yticks(range(n), [_text(p) for p in players])
        ax.set_xlabel("partner (second seat)" if cooperative else "opponent")
        if cooperative:
            ax.set_ylabel("first seat")
        for i in range(n):
            for j in range(n):
                c = counts[i][j]
                if c is not None and not np.isnan(grid[i, j]):
                    tally = f"{c['successes']}/{c['games']}" if cooperative else f"{c['wins']}-{c['draws']}-{c['losses']}"
                    ax.text(j, i, f"{grid[i, j]:.2f}\n{tally}", ha="center", va="center", fontsize=7)
        fig.colorbar(image, ax=ax, label="team success rate" if cooperative else "points per game")
        fig.tight_layout(pad=1.2)
    return fig
