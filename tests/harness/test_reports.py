"""Reports and leaderboard pages: content, escaping, determinism, and the page in headless Chromium."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rl4vlm_gym.harness.pages import write_leaderboard
from rl4vlm_gym.harness.report import write_report
from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary
from rl4vlm_gym.harness.suite import Suite

SUITE = {
    "name": "tiny",
    "axis": "smoke",
    "max_steps": 8,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 0, "obs_mode": "text", "seeds": [1, 2, 3]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "obs_mode": "text", "seeds": [4, 5]},
    ],
}
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    folders = {}
    for suite_data in (SUITE, dict(SUITE, name="tiny-levels", axis="levels")):
        suite = Suite.from_dict(suite_data)
        for agent in ("oracle", "random"):
            folder = root / f"{suite.name}-{agent}"
            write_summary(folder, suite, run_suite(suite, AgentSpec(agent), folder))
            folders[f"{suite.name}-{agent}"] = folder
    return folders


def test_report_of_one_run(runs, tmp_path):
    md, page = write_report([runs["tiny-oracle"]], tmp_path / "r")
    text = md.read_text()
    summary = json.loads((runs["tiny-oracle"] / "summary.json").read_text())
    assert "## tiny / oracle" in text and summary["protocol_hash"][:16] in text
    assert "| nl | rl4vlm/NumberLine-v0 | 0 | text | 3 | 1.000 [1.00, 1.00]" in text
    assert "![Success per task (95% CI over seeds).](plots/run0_success.png)" in text
    assert (tmp_path / "r" / "plots" / "run0_success.png").stat().st_size > 1000
    html = page.read_text()
    assert "<svg" in html and not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # loads nothing
    assert "Transfer matrix" not in html and "Paired comparison" not in html


def test_report_of_several_runs_with_baseline_and_training_log(runs, tmp_path):
    log = tmp_path / "train.csv"
    with log.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["env_steps", "success", "return"])
        writer.writerows([[0, 0.1, -3], [100, 0.4, -1], [200, 0.8, 0.5]])
    order = ["tiny-oracle", "tiny-random", "tiny-levels-oracle", "tiny-levels-random"]
    md, page = write_report([runs[k] for k in order], tmp_path / "r", baseline=runs["tiny-random"], training_logs=[log])
    text = md.read_text()
    assert text.count("### Paired comparison with random") == 3  # not the baseline against itself
    # oracle minus random, per task then averaged: (1/3 + 0) / 2 on these seeds, one win, no loss
    assert "| success | 0.167 [0.00, 0.50] | 1 | 4 | 0 |" in text
    assert "## Transfer matrix" in text and "## Learning curves" in text
    assert (tmp_path / "r" / "plots" / "transfer_matrix.png").exists()
    assert "different protocol hashes" in text  # the levels runs against the tiny baseline


def test_reports_are_deterministic_and_escaped(runs, tmp_path):
    evil = tmp_path / "evil"
    shutil.copytree(runs["tiny-random"], evil)
    summary = json.loads((evil / "summary.json").read_text())
    summary["agent"]["name"] = EVIL
    (evil / "summary.json").write_text(json.dumps(summary))
    first = write_report([evil], tmp_path / "a")
    second = write_report([evil], tmp_path / "b")
    for x, y in zip(first, second, strict=True):
        assert x.read_bytes() == y.read_bytes()
    assert (tmp_path / "a/plots/run0_success.png").read_bytes() == (tmp_path / "b/plots/run0_success.png").read_bytes()
    html = first[1].read_text()
    assert EVIL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def _entries(runs) -> list[dict]:
    entries = []
    for key, folder in runs.items():
        summary = json.loads((folder / "summary.json").read_text())
        agent = summary["agent"]["name"]
        name = EVIL if key == "tiny-random" else agent.title()
        entries.append(
            {
                "id": key,
                "suite": summary["suite"],
                "axis": summary["axis"],
                "suite_description": f"about {summary['suite']}",
                "metadata": {"name": name, "agent": agent, "model": "none", "algorithm": "none", "env_steps": 0, "date": "2026-11-22"},
                "summary": summary,
            }
        )
    return entries


def test_leaderboard_pages(runs, tmp_path):
    md, page = write_leaderboard(_entries(runs), tmp_path / "a")
    again = write_leaderboard(_entries(runs), tmp_path / "b")
    assert md.read_bytes() == again[0].read_bytes() and page.read_bytes() == again[1].read_bytes()
    text = md.read_text()
    assert text.index("## tiny (smoke)") < text.index("## tiny-levels (levels)")
    assert "| 1 | Oracle |" in text
    html = page.read_text()
    assert EVIL not in html and html.count('<table class="board">') == 2


def _chromium_driver(profile: Path):
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip("needs Debian's chromium and chromium-driver (scripts/setup.sh webshop)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver, log_output=subprocess.DEVNULL), options=options)


def test_leaderboard_page_renders_and_sorts_in_chromium(runs, tmp_path):
    from selenium.webdriver.common.by import By

    _, page = write_leaderboard(_entries(runs), tmp_path / "site")
    driver = _chromium_driver(tmp_path / "profile")
    try:
        driver.get(page.resolve().as_uri())
        tables = driver.find_elements(By.CSS_SELECTOR, "table.board")
        assert len(tables) == 2
        table = tables[0]
        rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) == 2

        def column(index: int) -> list[str]:
            return [r.find_elements(By.TAG_NAME, "td")[index].text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]

        assert column(0) == ["1", "2"]  # ranked by success
        header = table.find_elements(By.TAG_NAME, "th")[0]
        header.click()  # ascending: already in order
        assert column(0) == ["1", "2"]
        header.click()  # descending
        assert column(0) == ["2", "1"]
        assert EVIL in column(1)  # shown as text, never run
        assert driver.find_elements(By.CSS_SELECTOR, "figure svg")
        assert driver.execute_script("return document.querySelectorAll('script').length") == 1
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
