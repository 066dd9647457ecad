"""The leaderboard pages: ``LEADERBOARD.md`` and one static ``index.html`` with sortable tables,
per-suite plots and the transfer matrix. The same entries give the same bytes."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.report import CSS, html_page, html_table, score_cell

__all__ = ["write_leaderboard"]

_HEADER = ["#", "name", "model", "algorithm", "env steps", "success [95% CI]", "progress", "SPL", "invalid", "episodes", "tokens", "date", "verified"]

# Clicking a header sorts its table by that column (numbers by value, the rest as text). Written
# here, not taken from a CDN: the page must work offline, as one file.
_SORT_JS = """
document.querySelectorAll("table.board").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var ascending = th.getAttribute("data-order") !== "asc";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-order"); });
      th.setAttribute("data-order", ascending ? "asc" : "desc");
      function key(row) {
        var text = row.cells[column].textContent.trim();
        var number = parseFloat(text.replace(/,/g, ""));
        return isNaN(number) ? text.toLowerCase() : number;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

_CSS_EXTRA = "th[data-order=asc]::after { content: ' \\25B2'; } th[data-order=desc]::after { content: ' \\25BC'; }"


def _rows(entries: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    ranked = sorted(entries, key=lambda e: (-e["summary"]["overall"]["success"]["mean"], e["metadata"]["name"], e["id"]))
    for rank, e in enumerate(ranked, 1):
        m, o = e["metadata"], e["summary"]["overall"]
        rows.append(
            [
                str(rank), m["name"], m.get("model", "none"), m.get("algorithm", "none"), f"{m.get('env_steps', 0):,}",
                score_cell(o["success"]), f"{o['progress']['mean']:.3f}",
                "-" if o["normalised_steps"] is None else f"{o['normalised_steps']['mean']:.3f}",
                f"{o['invalid_action_rate']:.3f}", str(o["episodes"]), f"{o['input_tokens'] + o['output_tokens']:,}",
                str(m["date"]), "yes" if m.get("verified") else "",
            ]
        )  # fmt: skip
    return rows


def write_leaderboard(entries: Sequence[Mapping[str, Any]], out: str | Path) -> list[Path]:
    """Write ``out/LEADERBOARD.md`` and ``out/index.html`` for validated submission entries.

    Args:
        entries: one per submission: ``id``, ``suite``, ``axis``, ``suite_description``,
            ``metadata`` (``metadata.yaml``) and ``summary`` (``summary.json``).
        out: the output folder.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    suites = sorted({e["suite"] for e in entries}, key=lambda s: (s != "smoke", s.startswith("transfer-"), s))
    md = ["# RL4VLM Gym leaderboards", "", "Built by `rl4vlm-gym leaderboard build` from validated submissions only.", ""]
    body = [
        "<h1>RL4VLM Gym leaderboards</h1>\n<p>Built by <code>rl4vlm-gym leaderboard build</code> from submissions that "
        "passed validation (protocol hash, seed set, re-scored summary, replayed episodes). Click a column to sort.</p>\n"
    ]
    for suite in suites:
        group = [e for e in entries if e["suite"] == suite]
        axis, description = group[0]["axis"], group[0]["suite_description"]
        rows = _rows(group)
        md += [f"## {suite} ({axis})", "", description, ""]
        md += ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
        md += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        md.append("")
        ranked = sorted(group, key=lambda e: (-e["summary"]["overall"]["success"]["mean"], e["metadata"]["name"], e["id"]))
        figure = plots.task_bars([(e["metadata"]["name"], {"tasks": {suite: e["summary"]["overall"]}}) for e in ranked])
        body.append(f'<h2 id="{html.escape(suite)}">{html.escape(suite)} <small>({html.escape(axis)})</small></h2>\n')
        body.append(f"<p>{html.escape(description)}</p>\n")
        body.append(html_table(_HEADER, rows, ' class="board"'))
        body.append(f"<figure>{plots.svg_inline(figure)}<figcaption>Overall success (95% CI).</figcaption></figure>\n")
    transfer = [s for s in suites if s != "smoke"]
    if len(transfer) > 1:
        names = sorted({e["metadata"]["name"] for e in entries})
        cell = {(e["metadata"]["name"], e["suite"]): e["summary"]["overall"]["success"]["mean"] for e in entries}
        axis = {e["suite"]: e["axis"] for e in entries}
        values = [[cell.get((n, s)) for s in transfer] for n in names]
        columns = [f"{s} ({axis[s]})" for s in transfer]
        body.append("<h2>Transfer matrix</h2>\n")
        body.append(f"<figure>{plots.svg_inline(plots.transfer_matrix(names, columns, values))}<figcaption>Overall success per row and suite.</figcaption></figure>\n")
        md += ["## Transfer matrix", "", "| name | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
        md += ["| " + n + " | " + " | ".join("-" if v is None else f"{v:.3f}" for v in row) + " |" for n, row in zip(names, values, strict=True)]
        md.append("")
    markdown = out / "LEADERBOARD.md"
    markdown.write_text("\n".join(md), encoding="utf-8")
    page = out / "index.html"
    page.write_text(html_page("RL4VLM Gym leaderboards", "".join(body), css=CSS + _CSS_EXTRA, script=_SORT_JS), encoding="utf-8")
    return [markdown, page]
