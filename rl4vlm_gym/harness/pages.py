"""The leaderboard pages: ``LEADERBOARD.md`` and one static, self-contained ``index.html``.

Per suite (one leaderboard each) a table ranked by overall success, with the 95% interval and the
number of episodes behind it (and, for boards whose logs carry decision facts, decision accuracy and
regret per decision with their intervals), and a bar plot of overall success; a suite that scores its tasks
(:class:`~rl4vlm_gym.harness.suite.TaskScore`: chips in poker) ranks by that score instead and adds
a table of each task's own figure with its interval; when the entries span several
suites, the transfer matrix (names by suites, or suites by names where there are more suites). The HTML
tables sort by any column on a click. The HTML page fits a 1280 px window without hiding a column, and a
phone's without scrolling sideways (a wide table or plot scrolls inside itself; a plot's labels stay 9 px or more).
Everything read from submissions is escaped (in Markdown, every ASCII punctuation character of a
submission's text, so no name can make a link, an image or an autolink), links go only to checked
http(s) URLs, tokens are marked self-reported, and the same entries give the same bytes. Pages are
written through a temporary file and a rename, so a link planted where a page goes is replaced,
never followed.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.report import CSS, html_page, md_cell, score_cell

__all__ = ["AXES", "write_leaderboard"]

AXES = ("smoke", "in-distribution", "seeds", "levels", "visual", "wording", "modality", "family")
"""Suite axes in page order (suites of other axes come last)."""

_HEADER = [
    "#",
    "name",
    "model",
    "algorithm",
    "env steps",
    "success [95% CI]",
    "progress",
    "SPL",
    "invalid",
    "episodes",
    "tokens (self-reported)",
    "date",
    "verified",
]
_TITLE = "RL4VLM Gym leaderboards"
_URL = re.compile(r"https?://[^\s<>()\[\]|\"'`]+")
_TICK = "\u2713"
_MIN_SCALE = 0.75  # a plot shrinks to fit a narrow window down to this scale (9 pt labels at 9 px), then scrolls
_INTERVAL = re.compile(r"(\[[^\]]*\])$")  # a score cell's 95% interval, at its end
# Markdown: the ASCII punctuation that could start a link, image, autolink, emphasis, code, math or
# a table cell is backslash-escaped (CommonMark escapes any); &, < and > become entities. A
# submission's text then makes nothing but text.
_MD_ESCAPES = {ord(c): "\\" + c for c in "!\"#$'()*+.:;=?@[\\]^_`{|}~"}
_MD_ESCAPES.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord("\n"): " ", ord("\r"): " "})

# Clicking a header sorts its table by that column: by the cells' data-sort values where given
# (numbers as numbers), else by their text; a second click reverses. A few lines of vanilla JS,
# not a library from a CDN: the page is one static file that must work offline.
_SORT_JS = """
// Sortable tables, written inline: no CDN, so the page works offline as one file.
function sortKey(cell) {
  var text = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  return text !== "" && !isNaN(Number(text)) ? Number(text) : text.toLowerCase();
}
function compareKeys(x, y) {
  if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;  // numbers before text
  return x < y ? -1 : x > y ? 1 : 0;
}
document.querySelectorAll("table.sortable").forEach(function (table) {
  var headers = table.querySelectorAll("thead th");
  headers.forEach(function (th, column) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var order = compareKeys(sortKey(a.cells[column]), sortKey(b.cells[column]));
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

# A board fits a 1280 px window: a cell that may wrap (a name, a score and its interval) breaks at its spaces
# where the table is too wide, an interval stays whole; on a phone a table or a figure wider than the screen
# scrolls inside itself, never the page. The suites' links wrap like words.
_CSS_EXTRA = """
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
table.sortable { font-size: 0.85em; }
table.sortable th, table.sortable td { padding: 0.25em 0.4em; }
td.wrap { white-space: normal; }
td.wrap .ci { white-space: nowrap; }
td.text { overflow-wrap: anywhere; min-width: 5em; }
nav { display: flex; flex-wrap: wrap; gap: 0.2em 0.8em; }
figure { overflow-x: auto; }
"""


@dataclass(frozen=True)
class _Cell:
    text: str
    sort: str | None = None  # the sort key, where the text does not sort right ("1,000", "0.5 [..]")
    href: str | None = None  # a checked http(s) URL
    submitted: bool = False  # text from a submission: all Markdown syntax escaped
    wrap: bool = False  # in HTML, may break at its spaces (a score's interval stays on one line)


def _md_text(text: str) -> str:
    """A submission's text for Markdown: shown literally, whatever it holds."""
    return text.translate(_MD_ESCAPES)


def _score(score: Mapping[str, Any] | None) -> _Cell:
    """A score with its interval (``-`` where undefined), sorted by its mean."""
    return _Cell(score_cell(score), "" if score is None else repr(float(score["mean"])), wrap=True)


def _mean(score: Mapping[str, Any] | None) -> _Cell:
    if score is None:
        return _Cell("-", "")
    return _Cell(f"{score['mean']:.3f}", repr(float(score["mean"])))


def _count(n: int) -> _Cell:
    return _Cell(f"{n:,}", str(int(n)))


def _success(entry: Mapping[str, Any]) -> float:
    return float(entry["summary"]["overall"]["success"]["mean"])


def _headline(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the board ranks by: the suite's score where it scores its tasks, else success."""
    score = entry["summary"].get("score")
    return score["overall"] if score else entry["summary"]["overall"]["success"]


def _ranked(entries: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """Entries by their headline (desc: overall score or success), then name and id; equal means
    share a rank (1, 1, 3)."""
    def key(entry: Mapping[str, Any]) -> float:
        return float(_headline(entry)["mean"])

    ordered = sorted(entries, key=lambda e: (-key(e), str(e["metadata"]["name"]), str(e["id"])))
    ranked: list[tuple[int, Mapping[str, Any]]] = []
    for i, entry in enumerate(ordered):
        tied = ranked and key(ranked[-1][1]) == key(entry)
        ranked.append((ranked[-1][0] if tied else i + 1, entry))
    return ranked


_DECISION_HEADER = ["decision accuracy [95% CI]", "regret/decision [95% CI]"]


def _decision_cells(entry: Mapping[str, Any]) -> list[_Cell]:
    """Decision accuracy and regret in steps per decision, with intervals (``-``: no decision facts)."""
    o = (entry["summary"].get("decisions") or {}).get("overall") or {}
    cells = []
    for key in ("accuracy", "regret_steps"):
        cells.append(_score(o.get(key)))
    return cells


def _row(rank: int, entry: Mapping[str, Any], scored: bool = False) -> list[_Cell]:
    m, o = entry["metadata"], entry["summary"]["overall"]
    url = m.get("url")
    score = entry["summary"]["score"]["overall"] if scored else None
    cells = [
        _Cell(str(rank), str(rank)),
        _Cell(str(m["name"]), href=url if isinstance(url, str) and _URL.fullmatch(url) else None, submitted=True, wrap=True),
        _Cell(str(m.get("model", "none")), submitted=True, wrap=True),
        _Cell(str(m.get("algorithm", "none")), submitted=True, wrap=True),
        _count(int(m.get("env_steps") or 0)),
        _score(o["success"]),
        _mean(o["progress"]),
        _mean(o["normalised_steps"]),
        _Cell(f"{o['invalid_action_rate']:.3f}", repr(float(o["invalid_action_rate"]))),
        _count(o["episodes"]),
        _count(o["input_tokens"] + o["output_tokens"]),
        _Cell(str(m.get("date", ""))),
        _Cell(_TICK if m.get("verified") else ""),
    ]
    if score is not None:
        cells.insert(5, _score(score))
    return cells


def _board(ranked: Sequence[tuple[int, Mapping[str, Any]]], scored: bool) -> tuple[list[str], list[list[_Cell]]]:
    """A suite's board: header and rows (the score column where the suite scores its tasks, the
    decision columns where some entry's logs carry decision facts)."""
    header = [*_HEADER[:5], "score [95% CI]", *_HEADER[5:]] if scored else list(_HEADER)
    rows = [_row(rank, e, scored) for rank, e in ranked]
    if any(e["summary"].get("decisions") for _, e in ranked):
        at = header.index("invalid") + 1
        header = [*header[:at], *_DECISION_HEADER, *header[at:]]
        rows = [[*row[:at], *_decision_cells(e), *row[at:]] for row, (_, e) in zip(rows, ranked, strict=True)]
    return header, rows


def _task_table(ranked: Sequence[tuple[int, Mapping[str, Any]]]) -> tuple[list[str], list[list[_Cell]]]:
    """Each task's own figure (success rate, or mean return in its unit: chips) with its 95%
    interval, for suites that score their tasks."""
    tasks = list(ranked[0][1]["summary"]["score"]["tasks"])
    header = ["#", "name"]
    for name in tasks:
        t = ranked[0][1]["summary"]["score"]["tasks"][name]
        header.append(f"{name} ({t['unit'] or t['metric']})")
    rows = []
    for rank, entry in ranked:
        row = [_Cell(str(rank), str(rank)), _Cell(str(entry["metadata"]["name"]), submitted=True, wrap=True)]
        for name in tasks:
            t = entry["summary"]["score"]["tasks"].get(name)
            row.append(_score(t["value"]) if t else _Cell("-"))
        rows.append(row)
    return header, rows


def _balrog_table(ranked: Sequence[tuple[int, Mapping[str, Any]]]) -> tuple[list[str], list[list[_Cell]]] | None:
    """BALROG's per-env progression and average (``summary["balrog"]``), for suites that have it."""
    figures = [(rank, e, e["summary"].get("balrog")) for rank, e in ranked]
    if not any(b for _, _, b in figures):
        return None
    envs = sorted({env for _, _, b in figures if b for env in b["envs"]})

    def cell(mean: float, error: float) -> _Cell:
        return _Cell(f"{mean:.1f} +- {error:.1f}", repr(float(mean)), wrap=True)

    rows = []
    for rank, entry, balrog in figures:
        row = [_Cell(str(rank), str(rank)), _Cell(str(entry["metadata"]["name"]), submitted=True, wrap=True)]
        for env in envs:
            e = (balrog or {}).get("envs", {}).get(env)
            row.append(cell(e["progression_percentage"], e["standard_error"]) if e else _Cell("-"))
        row.append(cell(balrog["average_progress"], balrog["standard_error"]) if balrog else _Cell("-"))
        rows.append(row)
    return ["#", "name", *(f"{env} %" for env in envs), "average %"], rows


def _suites(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    axis = {e["suite"]: e["axis"] for e in entries}
    rank = {a: i for i, a in enumerate(AXES)}
    return sorted(axis, key=lambda s: (rank.get(axis[s], len(AXES)), s))


def _md_table(header: Sequence[str | _Cell], rows: Sequence[Sequence[_Cell]]) -> list[str]:
    """A Markdown table; a header may be a submission's text too (a name heading a column)."""
    heads = [_md_text(h.text) if isinstance(h, _Cell) and h.submitted else md_cell(h if isinstance(h, str) else h.text) for h in header]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(header)]
    for row in rows:
        texts = []
        for c in row:
            text = _md_text(c.text) if c.submitted else md_cell(c.text)
            texts.append(f"[{text}]({c.href})" if c.href else text)
        lines.append("| " + " | ".join(texts) + " |")
    return [*lines, ""]


def _html_table(header: Sequence[str | _Cell], rows: Sequence[Sequence[_Cell]], kind: str = "board") -> str:
    # a header breaks after a slash too ("regret/<wbr>decision"): a long compound must not widen its column
    texts = [h if isinstance(h, str) else h.text for h in header]
    head = "".join(f'<th scope="col" title="click to sort">{html.escape(h).replace("/", "/<wbr>")}</th>' for h in texts)
    body = []
    for row in rows:
        cells = []
        for c in row:
            sort = "" if c.sort is None else f' data-sort="{html.escape(c.sort)}"'
            text = html.escape(c.text)
            if c.wrap and not c.submitted:  # "0.603 [0.60, 0.60]": the interval breaks off whole
                text = _INTERVAL.sub(r'<span class="ci">\1</span>', text)
            if c.href:
                text = f'<a href="{html.escape(c.href)}" rel="nofollow noopener">{text}</a>'
            wrap = (' class="wrap text"' if c.submitted else ' class="wrap"') if c.wrap else ""
            cells.append(f"<td{sort}{wrap}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>\n")
    return f'<table class="{kind} sortable">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{"".join(body)}</tbody>\n</table>\n'


def _anchor(suite: str) -> str:
    return "suite-" + re.sub(r"[^A-Za-z0-9_-]", "-", suite)


def write_leaderboard(entries: Sequence[Mapping[str, Any]], out: str | Path) -> list[Path]:
    """Write ``out/LEADERBOARD.md`` and ``out/index.html`` from validated submission entries.

    Args:
        entries: one per submission: ``id`` (its folder name), ``suite``, ``axis``,
            ``suite_description``, ``metadata`` (``metadata.yaml``: name, agent, model,
            training_env, algorithm, env_steps, compute, contact, date, verified, url) and
            ``summary`` (``summary.json``).
        out: the output folder (made if missing).

    Returns:
        The Markdown and HTML paths.
    """
    out = Path(out)
    suites = _suites(entries)
    note = (
        "Tokens are self-reported: validation checks that they add up and are in range, but cannot recompute them. "
        "A tick in verified means the maintainers re-ran a sample of the episodes."
    )
    md = [f"# {_TITLE}", "", "Built by `rl4vlm-gym leaderboard build` from validated submissions only.", "", note, ""]
    body = [
        f"<h1>{_TITLE}</h1>\n<p>Built by <code>rl4vlm-gym leaderboard build</code> from submissions that passed validation "
        "(protocol hash, seed set, re-scored summary, replayed episodes). Success is the mean over tasks of the mean over "
        "seeds, with a 95% bootstrap interval; <em>episodes</em> is its denominator. Click a column header to sort.</p>\n",
        f"<p>{html.escape(note)}</p>\n",
    ]
    if len(suites) > 1:
        links = (
            "\n".join(f'<a href="#{_anchor(s)}">{html.escape(s)}</a>' for s in suites) + '\n<a href="#transfer">transfer matrix</a>'
        )
        body.append(f"<nav>{links}</nav>\n")
    for suite in suites:
        group = [e for e in entries if e["suite"] == suite]
        axis, description = str(group[0]["axis"]), str(group[0]["suite_description"])
        ranked = _ranked(group)
        scored = all("score" in e["summary"] for e in group)
        header, rows = _board(ranked, scored)
        md += [f"## {md_cell(suite)} ({md_cell(axis)})", "", md_cell(description), "", *_md_table(header, rows)]
        figure = plots.overall_bars([str(e["metadata"]["name"]) for _, e in ranked], [_headline(e) for _, e in ranked], "score" if scored else "success")
        body.append(f'<h2 id="{_anchor(suite)}">{html.escape(suite)} <small>({html.escape(axis)})</small></h2>\n')
        body.append(f"<p>{html.escape(description)}</p>\n")
        body.append(_html_table(header, rows))
        if scored:
            task_header, task_rows = _task_table(ranked)
            intro = (
                "Ranked by score: the mean over tasks of each task's figure mapped onto [0, 1] (success, or the return "
                "between the suite's bounds: chips where a game is played for chips). Each task's own figure, 95% CI:"
            )
            md += [md_cell(intro), "", *_md_table(task_header, task_rows)]
            body.append(f"<p>{html.escape(intro)}</p>\n" + _html_table(task_header, task_rows))
        balrog = _balrog_table(ranked)
        if balrog is not None:
            header, balrog_rows = balrog
            intro = "BALROG's figures: progression % +- standard error per BALROG env and their average (its formulas; crashed episodes count as 0)."
            md += [md_cell(intro), "", *_md_table(header, balrog_rows)]
            body.append(f"<p>{html.escape(intro)}</p>\n" + _html_table(header, balrog_rows))
        caption = f"Overall {'score' if scored else 'success'} of each entry on {suite} (95% CI; episodes per entry in the table)."
        body.append(f"<figure>{plots.svg_inline(figure, min_scale=_MIN_SCALE)}<figcaption>{html.escape(caption)}</figcaption></figure>\n")
    if len(suites) > 1:
        md += _transfer(entries, suites, body)
    markdown = out / "LEADERBOARD.md"
    page = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    _write(markdown, "\n".join(md))
    _write(page, html_page(_TITLE, "".join(body), css=CSS + _CSS_EXTRA, script=_SORT_JS))
    return [markdown, page]


def _write(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: a link planted at ``path`` is replaced, not followed."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    with open(tmp, "x", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _transfer(entries: Sequence[Mapping[str, Any]], suites: Sequence[str], body: list[str]) -> list[str]:
    """Append the transfer matrix to ``body`` (HTML) and return its Markdown lines.

    The longer side runs down the page: names are rows and suites columns, unless there are more suites
    than names (a few reference agents on every board), then suites are rows, so the table and the heat
    map fit a laptop's window without shrinking their labels.
    """
    names = sorted({str(e["metadata"]["name"]) for e in entries})
    best: dict[tuple[str, str], Mapping[str, Any]] = {}
    for e in entries:  # a name with several entries on a suite shows its best one
        key = (str(e["metadata"]["name"]), e["suite"])
        if key not in best or _success(e) > _success(best[key]):
            best[key] = e
    axis = {e["suite"]: str(e["axis"]) for e in entries}
    labels = {s: f"{s} ({axis[s]})" for s in suites}
    by_suite = len(suites) > len(names)
    pairs = [[(n, s) for n in names] for s in suites] if by_suite else [[(n, s) for s in suites] for n in names]
    row_labels = [labels[s] for s in suites] if by_suite else names
    columns = names if by_suite else [labels[s] for s in suites]
    scores = [[best[pair]["summary"]["overall"]["success"] if pair in best else None for pair in row] for row in pairs]
    values = [[None if c is None else c["mean"] for c in row] for row in scores]
    rows = [
        [_Cell(label, submitted=not by_suite, wrap=True), *(_score(c) for c in row)]
        for label, row in zip(row_labels, scores, strict=True)
    ]
    header: list[str | _Cell] = ["suite", *(_Cell(n, submitted=True) for n in names)] if by_suite else ["name", *columns]
    if by_suite:
        text = "Overall success of each name (columns) on each suite (rows, with their axis), 95% CI."
    else:
        text = "Overall success of each name (rows) on each suite (columns, with their axis), 95% CI."
    svg = plots.svg_inline(plots.transfer_matrix(row_labels, columns, values), min_scale=_MIN_SCALE)
    body.append(f'<h2 id="transfer">Transfer matrix</h2>\n<p>{html.escape(text)}</p>\n')
    body.append(_html_table(header, rows, kind="matrix"))
    body.append(f"<figure>{svg}<figcaption>Overall success per name and suite; blank: no entry.</figcaption></figure>\n")
    return ["## Transfer matrix", "", text, "", *_md_table(header, rows)]
