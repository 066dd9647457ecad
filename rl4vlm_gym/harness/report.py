"""Reports of evaluation runs: one Markdown file (plots as PNG files beside it) and one static,
self-contained HTML file (CSS inline, plots inline as SVG, nothing loaded from elsewhere), both
written from the same list of blocks.

A report covers one or more run folders: per run its identity, overall and per-task scores with
95% intervals, a per-task success plot and its first failed episodes; with a baseline run, paired
comparisons on the (task, seed) pairs both played; when the runs span several suites, the
transfer matrix (agents by suites); with training logs, learning curves. Text read from files
(agent names, errors, suite names) is escaped in the HTML. The same inputs give the same bytes.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.metrics import compare
from rl4vlm_gym.harness.runner import load_episodes

__all__ = ["CSS", "DECISION_METRICS", "FAILED_SHOWN", "decision_blocks", "html_from_blocks", "html_page", "html_table", "md_cell", "png_data_uri", "score_cell", "write_report"]

FAILED_SHOWN = 5
"""Failed episodes listed per run (the count of all of them is given too)."""

_COMPARED = ("success", "progress", "normalised_steps")


@dataclass
class _Heading:
    text: str
    level: int = 2


@dataclass
class _Text:
    text: str  # `backticks` mark code; everything else is plain text


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class _Image:
    png: bytes  # shown inline (a data: URI), so the page stays one file
    caption: str


@dataclass
class _Figure:
    name: str  # the PNG's file name in plots/
    draw: Callable[[], Any]
    caption: str


def score_cell(score: Mapping[str, Any] | None, digits: int = 3) -> str:
    """A score as ``mean [low, high]``, or ``-`` where the metric is undefined.

    Args:
        score: ``{"mean": float, "ci95": [low, high]}`` or ``None``.
        digits: decimals of the mean (the interval gets one fewer).

    Returns:
        The text.
    """
    if score is None:
        return "-"
    low, high = score["ci95"]
    return f"{score['mean']:.{digits}f} [{low:.{digits - 1}f}, {high:.{digits - 1}f}]"


def _load_run(folder: Path) -> dict[str, Any]:
    summary_path = folder / "summary.json"
    if not summary_path.exists():
        raise FileNotFoundError(f"{folder} has no summary.json: is it a run folder? (rl4vlm-gym eval writes one)")
    episodes = next(
        (folder / n for n in ("episodes.jsonl", "episodes.jsonl.gz") if (folder / n).exists()), folder / "episodes.jsonl"
    )
    return {
        "folder": folder,
        "summary": json.loads(summary_path.read_text(encoding="utf-8")),
        "episodes": load_episodes(episodes),
    }


def _label(run: Mapping[str, Any]) -> str:
    agent = run["summary"]["agent"]
    model = (agent.get("kwargs") or {}).get("model")
    return str(agent["name"]) + (f" ({model})" if model else "")


_TASK_COLUMNS = ["episodes", "success", "progress", "SPL", "invalid", "return", "steps", "failed"]


def _task_row(name: str, t: Mapping[str, Any]) -> list[str]:
    scores = [score_cell(t[m]) for m in ("success", "progress", "normalised_steps")]
    counts = [f"{t['invalid_action_rate']:.3f}", score_cell(t["return"]), f"{t['mean_steps']:.1f}", str(t["failed_episodes"])]
    return [name, t["env_id"], str(t["level"]), t["obs_mode"], str(t["episodes"]), *scores, *counts]


def _run_blocks(run: dict[str, Any], index: int, baseline: dict[str, Any] | None) -> list[Any]:
    s = run["summary"]
    o = s["overall"]
    label = _label(run)
    timing = s.get("timing") or {}
    identity = [
        ["suite", f"{s['suite']} (axis: {s['axis']})"],
        ["agent", label],
        ["protocol hash", str(s["protocol_hash"])[:12]],
        ["episodes", f"{o['episodes']} over {o['tasks']} tasks"],
        ["complete", "yes" if s["complete"] else "no: some of the suite's episodes are missing (resume the run)"],
        ["failed episodes", str(o["failed_episodes"])],
        ["run folder", str(run["folder"])],
    ]
    if timing:
        identity.append(["ms per step, median (agent / env)", f"{timing['agent_ms_p50']:.2f} / {timing['env_ms_p50']:.2f}"])
    blocks: list[Any] = [
        _Heading(f"{s['suite']} / {label}"),
        _Table(["field", "value"], identity),
        _Heading("Overall", 3),
        _Text("Means over tasks (each task weighs the same), 95% bootstrap intervals over seeds."),
        _Table(
            ["metric", "mean [95% CI]"],
            [
                ["success", score_cell(o["success"])],
                ["progress", score_cell(o["progress"])],
                ["normalised steps (SPL)", score_cell(o["normalised_steps"])],
                ["invalid-action rate", f"{o['invalid_action_rate']:.3f}"],
                ["return", score_cell(o["return"])],
                ["tokens in / out", f"{o['input_tokens']} / {o['output_tokens']}"],
            ],
        ),
        _Heading("Per task", 3),
        _Table(["task", "env", "level", "obs", *_TASK_COLUMNS], [_task_row(name, t) for name, t in s["tasks"].items()]),
        _Figure(f"run{index}_success", lambda: plots.task_bars([(label, s)]), "Success per task (95% CI over seeds)."),
    ]
    if s.get("decisions"):
        blocks += decision_blocks(s["decisions"])
    failed = [r for r in run["episodes"] if r.get("error") is not None]
    if failed:
        shown = "" if len(failed) <= FAILED_SHOWN else f", the first {FAILED_SHOWN}"
        blocks.append(_Heading("Failed episodes", 3))
        blocks.append(_Text(f"{len(failed)} episode(s) ended with an error{shown}:"))
        blocks.append(
            _Table(
                ["task", "seed", "steps", "error"],
                [[r["task"], str(r["seed"]), str(r["num_steps"]), str(r["error"])] for r in failed[:FAILED_SHOWN]],
            )
        )
    if baseline is not None and baseline["folder"].resolve() != run["folder"].resolve():
        blocks += _comparison_blocks(run, baseline)
    return blocks


DECISION_METRICS = (
    ("accuracy", "decision accuracy"),
    ("valid_accuracy", "accuracy of valid steps"),
    ("invalid_rate", "invalid share of scored steps"),
    ("regret_steps", "regret, steps per decision"),
    ("regret_value", "regret, expected value per decision"),
    ("first_error", "first error, step"),
    ("recovery", "errors recovered"),
    ("steps_to_recover", "steps to recover"),
    ("lost", "episodes lost (moved into an unsolvable state)"),
)
"""The decision metrics a report shows (:data:`rl4vlm_gym.harness.decisions.RATIOS`), with their labels."""


def decision_blocks(decisions: Mapping[str, Any]) -> list[Any]:
    """The blocks of a run's decision metrics (``summary["decisions"]``): overall and per task."""
    o = decisions["overall"]
    coverage = f"{o['scored_steps']} of {o['steps']} steps were scored (the others' states have no optimal move to score against: why is per task)"
    rows = [[label, score_cell(o[key])] for key, label in DECISION_METRICS]
    task_rows = []
    for name, t in decisions["tasks"].items():
        cells = [score_cell(t[key]) for key in ("accuracy", "regret_steps", "regret_value", "first_error", "recovery")]
        unscored = "; ".join(f"{n} {reason}" for reason, n in t["unscored"].items())
        task_rows.append([name, f"{t['scored_steps']} / {t['steps']}", *cells, str(t["lost_episodes"]), unscored or "-"])
    return [
        _Heading("Decisions", 3),
        _Text(
            "Every step scored against the env's solver (`rl4vlm-gym decisions RUN` shows where the errors are): pooled over each "
            "task's decisions, then the mean over tasks; 95% bootstrap intervals over episodes. " + coverage + "."
        ),
        _Table(["metric", "mean [95% CI]"], rows),
        _Table(["task", "scored / steps", "accuracy", "regret (steps)", "regret (value)", "first error", "recovered", "lost", "unscored"], task_rows),
    ]


def _decision_rows(runs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Decision accuracy and regret of each run, where one has them (``-``: a run without facts)."""
    if not any(r["summary"].get("decisions") for r in runs):
        return []
    overall = [(r["summary"].get("decisions") or {}).get("overall") or {} for r in runs]
    return [[name, *(score_cell(o.get(key)) for o in overall)] for key, name in DECISION_METRICS if key in ("accuracy", "regret_steps")]


def _side_by_side_blocks(runs: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The runs in columns: the overall scores, then each task's success (a task a run did not play: -)."""
    labels = [f"{_label(r)} on {r['summary']['suite']}" for r in runs]
    overall = [r["summary"]["overall"] for r in runs]
    metrics = [
        ("success", lambda o: score_cell(o["success"])),
        ("progress", lambda o: score_cell(o["progress"])),
        ("normalised steps (SPL)", lambda o: score_cell(o["normalised_steps"])),
        ("invalid-action rate", lambda o: f"{o['invalid_action_rate']:.3f}"),
        ("return", lambda o: score_cell(o["return"])),
        ("episodes (failed)", lambda o: f"{o['episodes']} ({o['failed_episodes']})"),
    ]

    tasks = list(dict.fromkeys(task for r in runs for task in r["summary"]["tasks"]))

    def success(run: Mapping[str, Any], task: str) -> str:
        scores = run["summary"]["tasks"].get(task)
        return "-" if scores is None else score_cell(scores["success"])

    return [
        _Heading("Runs side by side"),
        _Text(
            "Each run in a column: means over tasks and per task, 95% bootstrap intervals over seeds; each run's details follow."
        ),
        _Table(["metric", *labels], [[name, *(cell(o) for o in overall)] for name, cell in metrics] + _decision_rows(runs)),
        _Table(["task (success)", *labels], [[task, *(success(r, task) for r in runs)] for task in tasks]),
        _Figure(
            "runs_success",
            lambda: plots.task_bars([(label, r["summary"]) for label, r in zip(labels, runs)]),
            "Success per task and run (95% CI over seeds).",
        ),
    ]


def _comparison_blocks(run: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[Any]:
    paired = compare(run["episodes"], baseline["episodes"], _COMPARED)
    text = (
        f"Run minus baseline on the {paired['pairs']} (task, seed) pairs both played ({paired['only_in_run']} only in the run, "
        f"{paired['only_in_baseline']} only in the baseline): mean over tasks of the mean difference, 95% bootstrap interval "
        "over pairs; wins, ties and losses count pairs."
    )
    if baseline["summary"]["protocol_hash"] != run["summary"]["protocol_hash"]:
        text += " The two runs have different protocol hashes (suite, budgets or prompt differ): compare with care."
    rows = []
    for metric in _COMPARED:
        d = paired[metric]
        if d is not None:
            rows.append([metric, score_cell(d), str(d["wins"]), str(d["ties"]), str(d["losses"])])
    blocks: list[Any] = [_Heading(f"Paired comparison with {_label(baseline)}", 3), _Text(text)]
    if rows:
        blocks.append(_Table(["metric", "difference [95% CI]", "wins", "ties", "losses"], rows))
    return blocks


def _transfer_blocks(runs: Sequence[Mapping[str, Any]]) -> list[Any]:
    suites = list(dict.fromkeys(r["summary"]["suite"] for r in runs))
    axis = {r["summary"]["suite"]: r["summary"]["axis"] for r in runs}
    agents = list(dict.fromkeys(_label(r) for r in runs))
    cell = {(_label(r), r["summary"]["suite"]): r["summary"]["overall"]["success"] for r in runs}
    columns = [f"{s} ({axis[s]})" for s in suites]
    values = [[None if cell.get((a, s)) is None else cell[a, s]["mean"] for s in suites] for a in agents]
    return [
        _Heading("Transfer matrix"),
        _Text("Overall success of each agent (rows) on each suite (columns, with their axis), 95% CI."),
        _Table(["agent", *columns], [[a, *(score_cell(cell.get((a, s))) for s in suites)] for a in agents]),
        _Figure(
            "transfer_matrix", lambda: plots.transfer_matrix(agents, columns, values), "Overall success per agent and suite."
        ),
    ]


def write_report(
    runs: Sequence[str | Path], out: str | Path, baseline: str | Path | None = None, training_logs: Sequence[str | Path] = ()
) -> tuple[Path, Path]:
    """Write ``out/report.md`` (plots in ``out/plots/*.png``) and ``out/report.html``.

    Args:
        runs: run folders (``summary.json`` and ``episodes.jsonl`` each).
        out: the output folder (made if missing).
        baseline: a run folder to compare each run with, seed by seed (not itself).
        training_logs: CSV training logs (an ``env_steps`` or ``step`` column and metric
            columns such as ``success`` and ``return``).

    Returns:
        The Markdown and HTML paths.

    Raises:
        FileNotFoundError: a folder has no ``summary.json``.
    """
    out = Path(out)
    loaded = [_load_run(Path(r)) for r in runs]
    base = _load_run(Path(baseline)) if baseline is not None else None
    blocks: list[Any] = [_Heading("Evaluation report", 1)]
    if base is not None:
        blocks.append(_Text(f"Baseline: {_label(base)} on suite `{base['summary']['suite']}` (`{base['folder']}`)."))
    if len(loaded) > 1:
        blocks += _side_by_side_blocks(loaded)
    for i, run in enumerate(loaded):
        blocks += _run_blocks(run, i, base)
    if len({r["summary"]["suite"] for r in loaded}) > 1:
        blocks += _transfer_blocks(loaded)
    if training_logs:
        logs = [Path(p) for p in training_logs]
        blocks.append(_Heading("Learning curves"))
        blocks.append(_Text("From " + ", ".join(f"`{p}`" for p in logs) + "."))
        blocks.append(
            _Figure("learning_curves", lambda: plots.learning_curves(logs), "Metrics against env steps during training.")
        )
    out.mkdir(parents=True, exist_ok=True)
    md, page = out / "report.md", out / "report.html"
    md.write_text(_markdown(blocks, out), encoding="utf-8")
    page.write_text(_html(blocks, "Evaluation report"), encoding="utf-8")
    return md, page


# Markdown -----------------------------------------------------------------------------------------


def md_cell(text: object) -> str:
    """``text`` made safe for a Markdown table cell or heading.

    Markdown renderers pass raw HTML through, so ``<``, ``>`` and ``&`` become entities (an agent
    named ``<script>`` stays text there too); ``|`` is escaped and newlines become spaces.

    Args:
        text: the cell's text.

    Returns:
        The escaped text.
    """
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def _md_inline(text: str) -> str:
    """Like :func:`md_cell` outside code spans, which Markdown already shows literally."""
    parts = text.split("`")
    return "`".join(p if i % 2 else html.escape(p, quote=False) for i, p in enumerate(parts))


def _markdown(blocks: Sequence[Any], out: Path) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            lines += ["#" * block.level + " " + md_cell(block.text), ""]
        elif isinstance(block, _Text):
            lines += [_md_inline(block.text), ""]
        elif isinstance(block, _Table):
            lines.append("| " + " | ".join(md_cell(h) for h in block.header) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, _Figure):
            path = plots.save(block.draw(), out / "plots" / f"{block.name}.png")
            lines += [f"![{block.caption}]({path.relative_to(out).as_posix()})", ""]
        elif isinstance(block, _Image):
            lines += [f"![{md_cell(block.caption)}]({png_data_uri(block.png)})", ""]
    return "\n".join(lines)


# HTML ---------------------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 90em; padding: 0 1em; color: #222; line-height: 1.4; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td { font-variant-numeric: tabular-nums; white-space: nowrap; }
td:last-child { white-space: normal; }  /* long text (errors, paths) is last */
table { display: block; max-width: 100%; overflow-x: auto; }
code { background: #f3f3f3; padding: 0 0.2em; }
p, h1, h2, h3, figcaption { overflow-wrap: anywhere; }  /* a long path or name wraps on a phone, never widens the page */
figure { margin: 0.5em 0 1.5em; } figcaption { font-size: 0.85em; color: #555; }
"""


def _inline(text: str) -> str:
    """Escape, then turn `backticks` into ``<code>`` (the only markup report text uses)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def html_page(title: str, body: str, css: str = CSS, script: str = "") -> str:
    """A self-contained HTML page: styles and script inline, no external resources.

    Args:
        title: the page title (escaped here).
        body: the body's HTML (already escaped by the caller).
        css: the style sheet.
        script: JavaScript run at the end of the body, or none.

    Returns:
        The page's text.
    """
    tail = f"<script>{script}</script>\n" if script else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{html.escape(title)}</title>\n'
        f"<style>{css}</style>\n</head>\n<body>\n{body}{tail}</body>\n</html>\n"
    )


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], attrs: str = "") -> str:
    """An HTML table of plain-text cells (escaped here).

    Args:
        header: the column names.
        rows: the cells, as text.
        attrs: attributes of the ``<table>`` tag, e.g. ``' class="board"'`` (trusted).

    Returns:
        The table's HTML.
    """
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>\n" for row in rows)
    return f"<table{attrs}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"


def png_data_uri(png: bytes) -> str:
    """A PNG as a ``data:`` URI, for a self-contained page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def html_from_blocks(blocks: Sequence[Any], title: str) -> str:
    """A self-contained page of report blocks (headings, text, tables, figures, images)."""
    return _html(blocks, title)


def _html(blocks: Sequence[Any], title: str) -> str:
    body: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>\n")
        elif isinstance(block, _Text):
            body.append(f"<p>{_inline(block.text)}</p>\n")
        elif isinstance(block, _Table):
            body.append(html_table(block.header, block.rows))
        elif isinstance(block, _Figure):
            svg = plots.svg_inline(block.draw())
            body.append(f"<figure>{svg}<figcaption>{html.escape(block.caption)}</figcaption></figure>\n")
        elif isinstance(block, _Image):
            image = f'<img src="{png_data_uri(block.png)}" alt="{html.escape(block.caption)}">'
            body.append(f"<figure>{image}<figcaption>{html.escape(block.caption)}</figcaption></figure>\n")
    return html_page(title, "".join(body))
