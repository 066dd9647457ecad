"""Reports, plots and leaderboard pages: content, numbers, escaping, byte-stable output, and the
leaderboard page rendered and sorted in headless Chromium.

The run folders are synthetic (records scored by the real metrics), so the expected numbers
follow from the outcomes below and no env is played.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.metrics import summarize, timing
from rl4vlm_gym.harness.pages import write_leaderboard
from rl4vlm_gym.harness.report import write_report

EVIL = "<script>alert(1)</script>"
EVIL_ERROR = "agent raised ValueError: <b>boom</b> & more"
EXTERNAL = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:)?//|@import|url\(\s*["']?(https?:)?//""", re.IGNORECASE)

# (task, seed) -> success, per agent; tasks "nl" (seeds 1-3) and "bj" (seeds 4-5).
ORACLE = {("nl", 1): True, ("nl", 2): True, ("nl", 3): True, ("bj", 4): True, ("bj", 5): False}  # 0.75 overall
RANDOM = {("nl", 1): True, ("nl", 2): False, ("nl", 3): False, ("bj", 4): False, ("bj", 5): False}  # 1/6 overall


def _record(task: str, seed: int, success: bool, error: str | None = None) -> dict[str, Any]:
    steps = 2 if success else 4
    env = "rl4vlm/NumberLine-v0" if task == "nl" else "rl4vlm/Blackjack-v0"
    step = {"raw": "a", "parsed": "a", "valid": True, "error": None, "reward": 0.0,
            "input_tokens": 10, "output_tokens": 2, "agent_ms": 1.0, "env_ms": 0.5}  # fmt: skip
    return {
        "task": task, "env_id": env, "version": 0, "level": 0, "obs_mode": "text", "seed": seed,
        "return": 1.0 if success else -1.0, "success": success, "progress": 1.0 if success else 0.25,
        "num_steps": steps, "optimal_steps": 2 if task == "nl" else -1, "invalid_actions": 0 if success else 1,
        "terminated": True, "truncated": False, "input_tokens": 10 * steps, "output_tokens": 2 * steps,
        "error": error, "steps": [step] * steps,
    }  # fmt: skip


def _write_run(
    folder: Path,
    agent: str,
    outcomes: dict[tuple[str, int], bool],
    suite: str = "tiny",
    axis: str = "smoke",
    errors: int = 0,
    complete: bool = True,
) -> Path:
    """A run folder as the runner writes it; the last ``errors`` failures carry an error."""
    failures = [key for key, ok in outcomes.items() if not ok]
    errored = failures[len(failures) - errors :] if errors else []
    records = [_record(t, s, ok, EVIL_ERROR if (t, s) in errored else None) for (t, s), ok in outcomes.items()]
    protocol_hash = (suite.encode().hex() * 64)[:64]
    manifest = {"suite": suite, "axis": axis, "protocol_hash": protocol_hash, "agent": {"name": agent, "kwargs": {}}}
    summary = {**manifest, "complete": complete, **summarize(records, ["nl", "bj"]), "timing": timing(records)}
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps(manifest))
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1))
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    flipped = {key: not ok for key, ok in RANDOM.items()}  # nl 2/3, bj 2/2: 0.833 on the levels suite
    return {
        "tiny-oracle": _write_run(tmp_path / "runs/tiny-oracle", "oracle", ORACLE),
        "tiny-random": _write_run(tmp_path / "runs/tiny-random", "random", RANDOM, errors=1),
        "levels-oracle": _write_run(tmp_path / "runs/levels-oracle", "oracle", ORACLE, suite="tiny-levels", axis="levels"),
        "levels-random": _write_run(tmp_path / "runs/levels-random", "random", flipped, suite="tiny-levels", axis="levels"),
        "tiny-zed": _write_run(tmp_path / "runs/tiny-zed", "hf", {**ORACLE, ("bj", 4): False}),  # nl 1, bj 0: 0.5
    }


def _training_log(path: Path, step_column: str, columns: list[str], rows: list[list[float]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([step_column, *columns])
        writer.writerows(rows)
    return path


# -- reports ---------------------------------------------------------------------------------------


@pytest.mark.extra("eval")
def test_report_of_one_run(runs: dict[str, Path], tmp_path: Path) -> None:
    md, page = write_report([runs["tiny-oracle"]], tmp_path / "r")
    assert (md, page) == (tmp_path / "r" / "report.md", tmp_path / "r" / "report.html")
    text = md.read_text()
    summary = json.loads((runs["tiny-oracle"] / "summary.json").read_text())
    assert "## tiny / oracle" in text
    for row in ("| suite | tiny (axis: smoke) |", "| agent | oracle |", f"| protocol hash | {summary['protocol_hash'][:12]} |",
                "| episodes | 5 over 2 tasks |", "| complete | yes |", "| failed episodes | 0 |"):  # fmt: skip
        assert row in text, row
    # nl: 3/3, bj: 1/2 -> overall 0.75; SPL defined on nl only (optimal 2, taken 2)
    assert re.search(r"\| success \| 0\.750 \[\d\.\d\d, \d\.\d\d\] \|", text)
    assert "| normalised steps (SPL) | 1.000 [1.00, 1.00] |" in text
    assert "| invalid-action rate | 0.083 |" in text  # per task: nl 0/6 steps, bj 1/6, averaged
    assert "| tokens in / out | 120 / 24 |" in text
    assert "| nl | rl4vlm/NumberLine-v0 | 0 | text | 3 | 1.000 [1.00, 1.00] |" in text
    assert re.search(r"\| bj \| rl4vlm/Blackjack-v0 \| 0 \| text \| 2 \| 0\.500 \[0\.00, 1\.00\] \| .* \| - \|", text)  # no SPL
    assert "![Success per task (95% CI over seeds).](plots/run0_success.png)" in text
    assert (tmp_path / "r" / "plots" / "run0_success.png").read_bytes().startswith(b"\x89PNG")
    assert "Transfer matrix" not in text and "Paired comparison" not in text and "Failed episodes" not in text
    html = page.read_text()
    assert html.count("<svg") == 1 and "<h2>tiny / oracle</h2>" in html and "<td>0.750 [" in html
    assert not EXTERNAL.search(html) and "<link" not in html and "<img" not in html  # one self-contained file
    assert "Transfer matrix" not in html and "Paired comparison" not in html


@pytest.mark.extra("eval")
def test_report_of_an_incomplete_run_with_failed_episodes(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", "random", RANDOM, errors=2, complete=False)
    md, page = write_report([run], tmp_path / "r")
    text = md.read_text()
    assert "| complete | no: some of the suite's episodes are missing (resume the run) |" in text
    assert "### Failed episodes" in text and "2 episode(s) ended with an error:" in text
    assert "| bj | 4 | 4 | agent raised ValueError: &lt;b&gt;boom&lt;/b&gt; &amp; more |" in text
    html = page.read_text()
    assert "<td>agent raised ValueError: &lt;b&gt;boom&lt;/b&gt; &amp; more</td>" in html and "<b>boom" not in html


@pytest.mark.extra("eval")
def test_report_of_runs_across_suites_with_baseline_and_training_logs(runs: dict[str, Path], tmp_path: Path) -> None:
    logs = [
        _training_log(tmp_path / "ppo.csv", "env_steps", ["success", "return"], [[0, 0.1, -3], [100, 0.4, -1], [200, 0.8, 0.5]]),
        _training_log(tmp_path / "dac.csv", "step", ["success", "loss"], [[0, 0.0, 2.0], [50, 0.3, 1.0]]),
    ]
    order = ["tiny-oracle", "tiny-random", "levels-oracle", "levels-random"]
    md, page = write_report([runs[k] for k in order], tmp_path / "r", baseline=runs["tiny-random"], training_logs=logs)
    text = md.read_text()
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## Runs side by side", "## tiny / oracle", "## tiny / random", "## tiny-levels / oracle", "## tiny-levels / random",
        "## Transfer matrix", "## Learning curves",
    ]  # fmt: skip
    # the runs side by side: overall, then each task (the levels suite's tasks are the tiny suite's: nl and bj)
    labels = "oracle on tiny | random on tiny | oracle on tiny-levels | random on tiny-levels"
    assert f"| metric | {labels} |" in text and f"| task (success) | {labels} |" in text
    assert re.search(r"\| success \| 0\.750 \[[\d.]+, [\d.]+\] \| 0\.167 \[[\d.]+, [\d.]+\] \| 0\.750 .* \| 0\.833 ", text), text
    assert re.search(r"\| episodes \(failed\) \| 5 \(0\) \| 5 \(1\) \| 5 \(0\) \| 5 \(0\) \|", text), text
    assert text.count("### Paired comparison with random") == 3  # never the baseline against itself
    # oracle minus random: nl diffs (0, 1, 1) -> 2/3, bj (1, 0) -> 1/2; mean over tasks 0.583; 3 wins, 2 ties
    assert re.search(r"\| success \| 0\.583 \[[-\d.]+, [-\d.]+\] \| 3 \| 2 \| 0 \|", text), text
    assert "5 (task, seed) pairs both played (0 only in the run, 0 only in the baseline)" in text
    assert text.count("different protocol hashes") == 2  # the two levels runs against the tiny baseline
    # the transfer matrix: agents by suites, labelled with their axes
    assert "| agent | tiny (smoke) | tiny-levels (levels) |" in text
    assert re.search(r"\| oracle \| 0\.750 \[[\d.]+, [\d.]+\] \| 0\.750 \[[\d.]+, [\d.]+\] \|", text)
    assert re.search(r"\| random \| 0\.167 \[[\d.]+, [\d.]+\] \| 0\.833 \[[\d.]+, [\d.]+\] \|", text)
    plots_dir = tmp_path / "r" / "plots"
    assert sorted(p.name for p in plots_dir.iterdir()) == [
        "learning_curves.png", "run0_success.png", "run1_success.png", "run2_success.png", "run3_success.png",
        "runs_success.png", "transfer_matrix.png",
    ]  # fmt: skip
    assert "![Overall success per agent and suite.](plots/transfer_matrix.png)" in text
    html = page.read_text()
    assert html.count("<svg") == 7 and "tiny-levels (levels)" in html and ">0.83<" in html  # heat-map cell annotation
    assert "<h2>Learning curves</h2>" in html and ">ppo<" in html and ">dac<" in html  # legend entries
    assert not EXTERNAL.search(html)


@pytest.mark.extra("eval")
def test_reports_escape_file_text_and_are_byte_identical(runs: dict[str, Path], tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    summary_path = _write_run(evil, EVIL, RANDOM, errors=1) / "summary.json"
    summary = json.loads(summary_path.read_text())
    assert summary["agent"]["name"] == EVIL
    first = write_report([evil, runs["levels-oracle"]], tmp_path / "a", baseline=runs["tiny-oracle"])
    second = write_report([evil, runs["levels-oracle"]], tmp_path / "b", baseline=runs["tiny-oracle"])
    for x, y in zip(first, second, strict=True):
        assert x.read_bytes() == y.read_bytes(), x.name
    pngs = sorted(p.name for p in (tmp_path / "a" / "plots").iterdir())
    assert pngs == sorted(p.name for p in (tmp_path / "b" / "plots").iterdir()) and len(pngs) == 4
    for name in pngs:
        assert (tmp_path / "a" / "plots" / name).read_bytes() == (tmp_path / "b" / "plots" / name).read_bytes(), name
    html = first[1].read_text()
    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # in headings, tables and the SVG text
    assert EVIL not in first[0].read_text()  # Markdown renderers pass raw HTML through


@pytest.mark.extra("eval")
def test_plots_are_deterministic_and_leave_matplotlib_alone(tmp_path: Path) -> None:
    summary = {"tasks": {"a$b$": {"success": {"mean": 0.5, "ci95": [0.2, 0.8]}}, "t": {"success": None}}}
    runs = [("x", summary), ("y $", summary)]  # "$" must not start mathtext
    first = plots.save(plots.task_bars(runs), tmp_path / "1" / "bars.png")
    second = plots.save(plots.task_bars(runs), tmp_path / "2" / "bars.png")
    assert first.read_bytes() == second.read_bytes() and b"Matplotlib" not in first.read_bytes()
    svg = plots.svg_inline(plots.transfer_matrix(["a", "b"], ["s (levels)", "t (seeds)"], [[0.25, None], [1.0, 0.5]]))
    assert svg.startswith("<svg") and svg.endswith("</svg>\n") and "<metadata" not in svg and "<?xml" not in svg
    assert svg == plots.svg_inline(plots.transfer_matrix(["a", "b"], ["s (levels)", "t (seeds)"], [[0.25, None], [1.0, 0.5]]))
    assert svg.count(">0.25<") == 1 and ">1.00<" in svg and ">0.50<" in svg  # the empty cell is not annotated
    bars = plots.svg_inline(plots.overall_bars(["one", "two"], [{"mean": 0.3, "ci95": [0.1, 0.5]}, None]))
    assert ">one<" in bars and ">two<" in bars
    # Importing the harness loads no matplotlib; drawing loads no pyplot and keeps the user's backend
    # (MPLBACKEND here) and rcParams.
    code = (
        "import sys, rl4vlm_gym.harness.report, rl4vlm_gym.harness.pages; assert 'matplotlib' not in sys.modules; "
        "from rl4vlm_gym.harness import plots; plots.svg_inline(plots.overall_bars(['a'], [None])); "
        "assert 'matplotlib.pyplot' not in sys.modules; import matplotlib; "
        "assert matplotlib.rcParams['backend'] == 'template' and matplotlib.rcParams['svg.hashsalt'] is None"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "MPLBACKEND": "template"})


def test_learning_curves_need_a_step_column_and_a_metric(tmp_path: Path) -> None:
    bad = _training_log(tmp_path / "bad.csv", "epoch", ["success"], [[0, 0.1]])
    with pytest.raises(ValueError, match="env_steps or step column"):
        plots.learning_curves([bad])
    other = _training_log(tmp_path / "loss.csv", "step", ["loss"], [[0, 1.0]])
    with pytest.raises(ValueError, match="success or return"):
        plots.learning_curves([other])
    text = _training_log(tmp_path / "text.csv", "step", ["success"], [[0, 0.1]])
    text.write_text("step,success\n0,0.1\n10,high\n")
    with pytest.raises(ValueError, match=r"line 3: success is 'high'"):
        plots.learning_curves([text])


# -- leaderboard pages -----------------------------------------------------------------------------


def _entries(runs: dict[str, Path]) -> list[dict[str, Any]]:
    entries = []
    for key, folder in sorted(runs.items()):
        summary = json.loads((folder / "summary.json").read_text())
        agent = summary["agent"]["name"]
        metadata = {"name": agent.title(), "agent": agent, "model": "none", "training_env": "none", "algorithm": "none",
                    "env_steps": 0, "compute": "", "contact": "a@b.c", "date": "2026-11-22", "verified": False,
                    "url": None}  # fmt: skip
        if key == "tiny-random":
            metadata["name"] = EVIL
        if key == "tiny-zed":
            zed = {"model": "org/vlm-7b", "algorithm": "vl-dac", "env_steps": 1_000_000, "verified": True,
                   "url": "https://example.org/zed"}  # fmt: skip
            metadata.update(zed, name="Zed")
        description = f"about {summary['suite']} & <i>friends</i>"
        entries.append({"id": key, "suite": summary["suite"], "axis": summary["axis"], "suite_description": description,
                        "metadata": metadata, "summary": summary})  # fmt: skip
    return entries


@pytest.mark.extra("eval")
def test_leaderboard_pages(runs: dict[str, Path], tmp_path: Path) -> None:
    md, page = write_leaderboard(_entries(runs), tmp_path / "a")
    again = write_leaderboard(list(reversed(_entries(runs))), tmp_path / "b")  # input order does not matter
    assert md.read_bytes() == again[0].read_bytes() and page.read_bytes() == again[1].read_bytes()
    text = md.read_text()
    assert text.index("## tiny (smoke)") < text.index("## tiny-levels (levels)") < text.index("## Transfer matrix")
    board = text[text.index("## tiny (smoke)") : text.index("## tiny-levels")]
    ranked = [line.split(" | ")[:2] for line in board.splitlines() if re.match(r"\| \d", line)]
    assert ranked == [
        ["| 1", "Oracle"],
        ["| 2", "[Zed](https://example.org/zed)"],
        ["| 3", "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"],
    ]
    assert re.search(
        r"\| 2 \| \[Zed\]\S+ \| org/vlm-7b \| vl-dac \| 1,000,000 \| 0\.500 \[[\d.]+, [\d.]+\] \| .* \| 5 \| 168 \| "
        r"2026-11-22 \| \u2713 \|",
        board,
    )
    assert "about tiny &amp; &lt;i&gt;friends&lt;/i&gt;" in text and EVIL not in text
    assert "| name | tiny (smoke) | tiny-levels (levels) |" in text
    html = page.read_text()
    assert EVIL not in html and "<i>" not in html and html.count("<script>") == 1
    assert html.count('<table class="board sortable">') == 2 and html.count('<table class="matrix sortable">') == 1
    assert html.count("<svg") == 3 and '<a href="https://example.org/zed" rel="nofollow noopener">Zed</a>' in html
    assert not re.search(r"""src\s*=|<link|@import""", html)  # loads nothing: no scripts, styles or images from elsewhere


@pytest.mark.extra("eval")
def test_transfer_matrix_with_more_suites_than_names_puts_suites_down_and_escapes_the_names_atop(runs: dict[str, Path]) -> None:
    """Three suites, two names: suites are the rows; the names head the columns, escaped in Markdown as every
    submission's text is (a name written as a link stays text) and in HTML."""
    from rl4vlm_gym.harness.pages import _md_text, _transfer

    link = "[click](https://evil.example/x)"
    base = [e for e in _entries(runs) if e["id"] in ("tiny-oracle", "tiny-random")]  # Oracle and EVIL
    entries = [{**e, "suite": s, "metadata": {**e["metadata"], "name": link if e["id"] == "tiny-oracle" else EVIL}}
               for s in ("s1", "s2", "s3") for e in base]  # fmt: skip
    body: list[str] = []
    md = "\n".join(_transfer(entries, ["s1", "s2", "s3"], body))
    assert f"| suite | {_md_text(EVIL)} | {_md_text(link)} |" in md and "](https" not in md
    rows = [line.split(" | ")[0] for line in md.splitlines()[6:] if line]  # after the heading, text, header and rule
    assert rows == ["| s1 (smoke)", "| s2 (smoke)", "| s3 (smoke)"]
    html = "".join(body)
    assert EVIL not in html and "<th" in html and html.index("s1 (smoke)") < html.index("s3 (smoke)")


def needs_chromium(test: Any) -> Any:
    """The eval and webshop extras (plots, Selenium) and Debian's chromium and chromium-driver."""
    present = Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()
    reason = "needs Debian's chromium and chromium-driver at /usr/bin (scripts/setup.sh installs them)"
    return pytest.mark.extra("eval", "webshop")(pytest.mark.skipif(not present, reason=reason)(test))


def _chromium(profile: Path) -> Any:
    """Debian's chromium and chromedriver, headless, as the web shop's browser starts them."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver", log_output=subprocess.DEVNULL), options=options)


@pytest.mark.slow  # a browser
@needs_chromium
def test_leaderboard_page_renders_and_sorts_in_chromium(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never go online
    _, page = write_leaderboard(_entries(runs), tmp_path / "site")
    driver = _chromium(tmp_path / "profile")
    try:
        driver.get(page.resolve().as_uri())
        tables = driver.find_elements(By.CSS_SELECTOR, "table.board")
        assert [len(t.find_elements(By.CSS_SELECTOR, "tbody tr")) for t in tables] == [3, 2]
        assert len(driver.find_elements(By.CSS_SELECTOR, "table.matrix tbody tr")) == 4  # the names over both suites
        table = tables[0]
        headers = {th.text: th for th in table.find_elements(By.CSS_SELECTOR, "thead th")}

        def column(index: int) -> list[str]:
            return [row.find_elements(By.TAG_NAME, "td")[index].text for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]

        assert column(0) == ["1", "2", "3"] and column(1) == ["Oracle", "Zed", EVIL]  # the name shown as text, never run
        headers["success [95% CI]"].click()  # ascending by the mean, not by the text
        assert column(0) == ["3", "2", "1"]
        headers["success [95% CI]"].click()
        assert column(0) == ["1", "2", "3"]
        headers["env steps"].click()  # "1,000,000" sorts as a number, ties keep their order
        assert column(4) == ["0", "0", "1,000,000"]
        headers["name"].click()
        assert column(1) == [EVIL, "Oracle", "Zed"]
        assert column(0) == ["3", "1", "2"]
        assert (
            headers["name"].get_attribute("aria-sort") == "ascending" and headers["env steps"].get_attribute("aria-sort") is None
        )
        assert [len(t.find_elements(By.CSS_SELECTOR, "tbody tr")) for t in tables] == [3, 2]  # nothing lost
        svgs = driver.find_elements(By.CSS_SELECTOR, "figure svg")
        assert len(svgs) == 3 and all(svg.size["width"] > 100 and svg.size["height"] > 50 for svg in svgs)
        assert driver.execute_script("return document.querySelectorAll('script').length") == 1
        severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()


LAYOUT = """
const page = document.documentElement;
const tables = [...document.querySelectorAll('table')].map(t => {
  const r = t.getBoundingClientRect();
  return {visible: r.width > 0 && r.height > 0, left: r.left, right: r.right, hidden: t.scrollWidth - t.clientWidth};
});
const figures = [...document.querySelectorAll('figure')].map(f => {
  const svg = f.querySelector('svg'), box = f.getBoundingClientRect();
  return {right: box.right, svg: svg.getBoundingClientRect().right, scrolls: getComputedStyle(f).overflowX === 'auto'};
});
return {overflow: page.scrollWidth - page.clientWidth, width: page.clientWidth, tables: tables, figures: figures};
"""
# The transfer matrix's heat map (the page's last figure): each label's font size in CSS px as shown (its
# size in the SVG's units times the SVG's scale) and its box, for the tick labels of every axis.
HEATMAP_LABELS = """
const svgs = document.querySelectorAll('figure svg'), svg = svgs[svgs.length - 1];
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return [...svg.querySelectorAll('g[id^=xtick] text, g[id^=ytick] text')].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, box: [r.left, r.top, r.right, r.bottom]};
});
"""


def _committed_entries() -> list[dict[str, Any]]:
    """The committed boards' entries as ``leaderboard build`` gives them (read, not validated: test_boards
    validates them): the site people see, with every board, long names and a wide transfer matrix."""
    import yaml

    from rl4vlm_gym.harness.suite import load_suite

    entries = []
    for folder in sorted((Path(__file__).resolve().parents[2] / "leaderboards" / "submissions").glob("*/*/")):
        suite = load_suite(folder.parent.name)
        metadata = yaml.safe_load((folder / "metadata.yaml").read_text(encoding="utf-8"))
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        entries.append({"id": folder.name, "suite": suite.name, "axis": suite.axis, "suite_description": suite.description,
                        "metadata": {"verified": False, **metadata}, "summary": summary})  # fmt: skip
    return entries


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@pytest.mark.slow  # a Chromium at two window sizes over two pages (one the committed site, built: 1.4 s): about 4 s
@needs_chromium
def test_report_and_site_fit_a_laptop_and_a_phone_in_chromium(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No horizontal scrolling of the page at 1280 px or 390 px, every table shown and inside the page, every
    figure inside the page (on the site a plot wider than a phone scrolls inside its figure rather than shrink
    its labels); at 1280 px no table hides a column (on a phone a wide table scrolls inside itself); the
    leaderboard site (built from the committed boards) shows its heat map's labels at 9 px or more and none
    over another, at both sizes; the report puts its runs side by side."""
    monkeypatch.setenv("SE_OFFLINE", "true")
    _, report = write_report(
        [runs["tiny-oracle"], runs["tiny-random"], runs["levels-random"]], tmp_path / "report", baseline=runs["tiny-random"]
    )
    _, site = write_leaderboard(_committed_entries(), tmp_path / "site")
    assert "Runs side by side" in report.read_text(encoding="utf-8")
    driver = _chromium(tmp_path / "profile")
    try:
        for width in (1280, 390):
            driver.set_window_size(width, 900)
            for page in (report, site):
                driver.get(page.resolve().as_uri())
                layout = driver.execute_script(LAYOUT)
                where = f"{page.name} at {width} px"
                assert layout["overflow"] <= 0, f"{where}: the page scrolls sideways by {layout['overflow']} px"
                assert layout["tables"] and all(t["visible"] for t in layout["tables"]), where
                assert all(t["left"] >= 0 and t["right"] <= layout["width"] + 1 for t in layout["tables"]), where
                assert layout["figures"] and all(f["right"] <= layout["width"] + 1 for f in layout["figures"]), where
                assert all(f["svg"] <= layout["width"] + 1 or (page == site and f["scrolls"]) for f in layout["figures"]), where
                if width == 1280:  # a laptop sees every column without scrolling a table
                    assert [t["hidden"] for t in layout["tables"] if t["hidden"] > 0] == [], where
            labels = driver.execute_script(HEATMAP_LABELS)  # the site's, loaded last
            assert len(labels) >= 16 + 3, f"heat map at {width} px: {len(labels)} labels"
            small = [(label["text"], round(label["px"], 1)) for label in labels if label["px"] < 9]
            assert small == [], f"heat map at {width} px: labels under 9 px"
            for i, a in enumerate(labels):
                for b in labels[i + 1 :]:
                    assert not _overlap(a["box"], b["box"]), f"heat map at {width} px: {a['text']!r} overlaps {b['text']!r}"
    finally:
        driver.quit()


def test_an_all_zero_run_s_plot_says_so(runs: dict[str, Path]) -> None:
    """Bars of height zero draw nothing: the plot says 'no successes' instead of staying empty."""
    pytest.importorskip("matplotlib")
    from rl4vlm_gym.harness import plots

    zero = {"tasks": {"nl": {"success": {"mean": 0.0, "ci95": [0.0, 0.0]}}}}
    some = {"tasks": {"nl": {"success": {"mean": 0.5, "ci95": [0.0, 1.0]}}}}
    texts = [t.get_text() for t in plots.task_bars([("a", zero)]).axes[0].texts]
    assert texts == ["no successes"]
    assert list(plots.task_bars([("a", zero), ("b", some)]).axes[0].texts) == []


def test_plots_without_matplotlib_name_the_eval_extra() -> None:
    script = (
        "import sys; sys.modules['matplotlib'] = None  # as if the eval extra were not installed\n"
        "from rl4vlm_gym.harness import plots\n"
        "try:\n"
        "    plots.overall_bars(['a'], [None])\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pip install 'rl4vlm-gym[eval]'" in done.stdout, done.stdout
