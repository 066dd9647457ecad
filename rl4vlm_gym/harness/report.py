"""Reports of evaluation runs: one Markdown file (plots as PNG files beside it) and one static,
self-contained HTML file (plots inline as SVG), written from the same blocks.

A report covers one or more run folders: per run its identity, overall and per-task scores with
95% intervals, a per-task plot and its failed episodes; with a baseline run, paired comparisons on
the seeds both played; across suites, the transfer matrix (agents by suites); with training logs,
learning curves. Everything read from files is escaped in the HTML.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.metrics import compare
from rl4vlm_gym.harness.runner import load_episodes

__all__ = ["CSS", "html_page", "html_table", "score_cell", "write_report"]


@dataclass
class _Heading:
    text: str
    level: int = 2


@dataclass
class _Text:
    text: str


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class _Figure:
    name: str
    draw: Callable[[], Any]
    caption: str


def score_cell(score: dict[str, Any] | None, digits: int = 3) -> str:
    """``mean [low, high]``, or ``-`` where a metric is undefined."""
    if score is None:
        return "-"
    low, high = score["ci95"]
    return f"{score['mean']:.{digits}f} [{low:.{digits - 1}f}, {high:.{digits - 1}f}]"


def _load_run(folder: Path) -> dict[str, Any]:
    summary_path = folder / "summary.json"
    if not summary_path.exists():
        raise FileNotFoundError(f"{folder} has no summary.json: is it a finished run folder?")
    return {
        "folder": folder,
        "summary": json.loads(summary_path.read_text(encoding="utf-8")),
        "episodes": load_episodes(next((folder / n for n in ("episodes.jsonl", "episodes.jsonl.gz") if (folder / n).exists()), folder / "episodes.jsonl")),
    }


def _label(run: dict[str, Any]) -> str:
    agent = run["summary"]["agent"]
    kwargs = agent.get("kwargs") or {}
    model = kwargs.get("model")
    return f"{agent['name']}" + (f" ({model})" if model else "")


def _run_blocks(run: dict[str, Any], index: int, baseline: dict[str, Any] | None) -> list[Any]:
    s = run["summary"]
    o = s["overall"]
    blocks: list[Any] = [
        _Heading(f"{s['suite']} / {_label(run)}"),
        _Text(
            f"Suite `{s['suite']}` (axis: {s['axis']}), {o['episodes']} episodes over {o['tasks']} tasks"
            f"{'' if s['complete'] else ' (incomplete: resume the run to finish it)'}; protocol hash "
            f"`{s['protocol_hash'][:16]}`; run folder `{run['folder']}`."
        ),
        _Table(
            ["metric", "mean [95% CI]"],
            [
                ["success", score_cell(o["success"])],
                ["progress", score_cell(o["progress"])],
                ["normalised steps (SPL)", score_cell(o["normalised_steps"])],
                ["return", score_cell(o["return"])],
                ["invalid-action rate", f"{o['invalid_action_rate']:.3f}"],
                ["failed episodes", str(o["failed_episodes"])],
                ["tokens in / out", f"{o['input_tokens']} / {o['output_tokens']}"],
            ],
        ),
        _Table(
            ["task", "env", "level", "obs", "n", "success", "progress", "SPL", "invalid", "steps"],
            [
                [
                    name, t["env_id"], str(t["level"]), t["obs_mode"], str(t["episodes"]), score_cell(t["success"]),
                    score_cell(t["progress"]), score_cell(t["normalised_steps"]), f"{t['invalid_action_rate']:.3f}",
                    f"{t['mean_steps']:.1f}",
                ]
                for name, t in s["tasks"].items()
            ],
        ),  # fmt: skip
        _Figure(f"run{index}_success", lambda: plots.task_bars([(_label(run), s)]), "Success per task (95% CI over seeds)."),
    ]
    failed = [r for r in run["episodes"] if r.get("error")]
    if failed:
        blocks.append(_Text(f"{len(failed)} failed episode(s); the first ones:"))
        blocks.append(_Table(["task", "seed", "error"], [[r["task"], str(r["seed"]), r["error"]] for r in failed[:5]]))
    if baseline is not None and baseline["folder"] != run["folder"]:
        paired = compare(run["episodes"], baseline["episodes"], ("success", "progress", "normalised_steps"))
        same = baseline["summary"]["protocol_hash"] == s["protocol_hash"]
        blocks.append(_Heading(f"Paired comparison with {_label(baseline)}", 3))
        blocks.append(
            _Text(
                f"{paired['pairs']} (task, seed) pairs played by both; run minus baseline, 95% CI over pairs."
                + ("" if same else " The two runs have different protocol hashes: compare with care.")
            )
        )
        rows = []
        for metric in ("success", "progress", "normalised_steps"):
            d = paired[metric]
            if d is not None:
                rows.append([metric, score_cell(d), str(d["wins"]), str(d["ties"]), str(d["losses"])])
        blocks.append(_Table(["metric", "difference [95% CI]", "wins", "ties", "losses"], rows))
    return blocks


def write_report(
    runs: Sequence[str | Path], out: str | Path, baseline: str | Path | None = None, training_logs: Sequence[str | Path] = ()
) -> tuple[Path, Path]:
    """Write ``out/report.md`` (with ``out/plots/*.png``) and ``out/report.html``.

    Args:
        runs: run folders (``summary.json`` and ``episodes.jsonl`` each).
        out: the output folder.
        baseline: a run folder to compare each run with, seed by seed.
        training_logs: CSV training logs (``env_steps`` or ``step`` and metric columns).

    Returns:
        The Markdown and HTML paths.
    """
    out = Path(out)
    loaded = [_load_run(Path(r)) for r in runs]
    base = _load_run(Path(baseline)) if baseline is not None else None
    blocks: list[Any] = [_Heading("Evaluation report", 1)]
    for i, run in enumerate(loaded):
        blocks += _run_blocks(run, i, base)
    suites = list(dict.fromkeys(r["summary"]["suite"] for r in loaded))
    if len(suites) > 1:
        agents = list(dict.fromkeys(_label(r) for r in loaded))
        cell = {(_label(r), r["summary"]["suite"]): r["summary"]["overall"]["success"]["mean"] for r in loaded}
        axis = {r["summary"]["suite"]: r["summary"]["axis"] for r in loaded}
        values = [[cell.get((a, s)) for s in suites] for a in agents]
        columns = [f"{s} ({axis[s]})" for s in suites]
        blocks.append(_Heading("Transfer matrix"))
        blocks.append(_Figure("transfer_matrix", lambda: plots.transfer_matrix(agents, columns, values), "Overall success per agent and suite."))
    if training_logs:
        logs = [Path(p) for p in training_logs]
        blocks.append(_Heading("Learning curves"))
        blocks.append(_Figure("learning_curves", lambda: plots.learning_curves(logs), "Training logs."))
    out.mkdir(parents=True, exist_ok=True)
    md, page = out / "report.md", out / "report.html"
    md.write_text(_markdown(blocks, out), encoding="utf-8")
    page.write_text(_html(blocks, "Evaluation report"), encoding="utf-8")
    return md, page


# Rendering ------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown(blocks: list[Any], out: Path) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, _Text):
            lines += [block.text, ""]
        elif isinstance(block, _Table):
            lines.append("| " + " | ".join(block.header) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, _Figure):
            path = plots.save_png(block.draw(), out / "plots" / f"{block.name}.png")
            lines += [f"![{block.caption}]({path.relative_to(out).as_posix()})", ""]
    return "\n".join(lines)


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 0.5em 0 1.5em; } figcaption { font-size: 0.85em; color: #555; }
"""


def _inline(text: str) -> str:
    """Escape, then turn `backticks` into <code> (the only markup report text uses)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def html_page(title: str, body: str, css: str = CSS, script: str = "") -> str:
    """A self-contained HTML page (no external resources)."""
    tail = f"<script>{script}</script>\n" if script else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
        f"<style>{css}</style>\n</head>\n<body>\n{body}{tail}</body>\n</html>\n"
    )


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], attrs: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>\n" for row in rows)
    return f"<table{attrs}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"


def _html(blocks: list[Any], title: str) -> str:
    body: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>\n")
        elif isinstance(block, _Text):
            body.append(f"<p>{_inline(block.text)}</p>\n")
        elif isinstance(block, _Table):
            body.append(html_table(block.header, block.rows))
        elif isinstance(block, _Figure):
            body.append(f"<figure>{plots.svg_inline(block.draw())}<figcaption>{html.escape(block.caption)}</figcaption></figure>\n")
    return html_page(title, "".join(body))
