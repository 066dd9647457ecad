"""Leaderboard validation catches every kind of tampering, and accepts honest submissions."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rl4vlm_gym.cli import app
from rl4vlm_gym.harness.leaderboard import find_submissions, validate_submission
from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary
from rl4vlm_gym.harness.suite import Suite

SUITE = {
    "name": "mini",
    "axis": "smoke",
    "max_steps": 8,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 0, "obs_mode": "text", "seeds": [11, 12, 13]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "obs_mode": "text", "seeds": [21, 22]},
    ],
}
METADATA = {"name": "Random", "agent": "random", "contact": "https://example.org/me", "date": "2026-11-22"}


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> tuple[Path, Path]:
    """A suites folder and an honest submission of the random agent to it."""
    root = tmp_path_factory.mktemp("board")
    suites = root / "suites"
    suites.mkdir()
    (suites / "mini.yaml").write_text(yaml.safe_dump(SUITE))
    folder = root / "submissions" / "mini" / "random"
    suite = Suite.from_dict(SUITE)
    records = run_suite(suite, AgentSpec("random", {"seed": 3}), folder)
    write_summary(folder, suite, records)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(METADATA))
    return suites, folder


@pytest.fixture
def copy(honest, tmp_path) -> tuple[Path, Path]:
    suites, folder = honest
    target = tmp_path / "submissions" / "mini" / "random"
    shutil.copytree(folder, target)
    return suites, target


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]


def _write_lines(folder: Path, records: list[dict]) -> None:
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _problems(suites: Path, folder: Path, replay: bool = True) -> str:
    report = validate_submission(folder, suites_dir=suites, replay=replay)
    assert not report.ok, "the tampering went unnoticed"
    return "\n".join(report.problems)


def test_honest_submission_passes(honest):
    suites, folder = honest
    report = validate_submission(folder, suites_dir=suites)
    assert report.ok, report.problems
    assert find_submissions(folder.parents[2]) == [folder]


def test_gzipped_episodes_are_accepted_but_not_both(copy):
    suites, folder = copy
    plain = folder / "episodes.jsonl"
    (folder / "episodes.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    assert "one of episodes.jsonl or episodes.jsonl.gz, not both" in _problems(suites, folder)
    plain.unlink()
    assert validate_submission(folder, suites_dir=suites).ok
    (folder / "episodes.jsonl.gz").write_bytes(b"not gzip")
    assert "episodes.jsonl.gz: not a valid gzip file" in _problems(suites, folder)


def test_wrong_protocol_hash(copy):
    suites, folder = copy
    _edit_json(folder / "run.json", lambda d: d.update(protocol_hash="0" * 64))
    assert "run.json: protocol hash '000" in _problems(suites, folder)


def test_suite_changed_after_the_run(copy):
    suites, folder = copy
    changed = dict(SUITE, max_steps=9)
    other = suites.parent / "suites2"
    other.mkdir()
    (other / "mini.yaml").write_text(yaml.safe_dump(changed))
    assert "does not match" in _problems(other, folder)


def test_prompt_swapped(copy):
    suites, folder = copy
    _edit_json(folder / "run.json", lambda d: d["prompt"].update(history=3))
    assert "protocol hash" in _problems(suites, folder)


def test_missing_seed(copy):
    suites, folder = copy
    _write_lines(folder, _lines(folder)[:-1])
    assert "lacks 1 of the suite's episodes, e.g. (task, seed) (bj, 22)" in _problems(suites, folder)


def test_extra_seed(copy):
    suites, folder = copy
    records = _lines(folder)
    records.append(dict(records[0], seed=99))
    _write_lines(folder, records)
    assert "1 episode(s) the suite does not play, e.g. (nl, 99)" in _problems(suites, folder)


def test_repeated_episode(copy):
    suites, folder = copy
    records = _lines(folder)
    _write_lines(folder, [*records, records[0]])
    assert "repeats 1 episode(s)" in _problems(suites, folder)


def test_edited_summary(copy):
    suites, folder = copy
    _edit_json(folder / "summary.json", lambda d: d["overall"]["success"].update(mean=0.99))
    problems = _problems(suites, folder)
    assert "summary.json: overall.success.mean is 0.99 but the episodes give" in problems


def test_summary_with_a_row_removed(copy):
    suites, folder = copy
    _edit_json(folder / "summary.json", lambda d: d["tasks"].pop("bj"))
    assert "summary.json: tasks.bj is '(missing)'" in _problems(suites, folder)


def test_edited_episode_consistently_is_caught_by_the_replay(copy):
    """Flip a failed episode to success and fix every count and the summary: only replay sees it."""
    suites, folder = copy
    records = _lines(folder)
    victim = next(r for r in records if not r["success"] and r["task"] == "nl")
    victim["success"], victim["progress"] = True, 1.0
    _write_lines(folder, records)
    suite = Suite.from_dict(SUITE)
    write_summary(folder, suite, records)  # a summary that agrees with the edited log
    assert validate_submission(folder, suites_dir=suites, replay=False).ok
    problems = _problems(suites, folder)
    assert f"episode (nl, {victim['seed']}): the log says success=True; replaying the outputs gives False" in problems


def test_edited_reward_is_caught(copy):
    suites, folder = copy
    records = _lines(folder)
    records[0]["steps"][0]["reward"] += 1
    _write_lines(folder, records)
    assert "return is" in _problems(suites, folder)  # the record no longer adds up
    records[0]["return"] += 1
    _write_lines(folder, records)
    write_summary(folder, Suite.from_dict(SUITE), records)
    assert "step 1: the log says reward" in _problems(suites, folder)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda f: (f / "episodes.jsonl").write_text("{not json\n"), "episodes.jsonl:1: not valid JSON"),
        (lambda f: (f / "summary.json").write_text("[1, 2"), "summary.json is not valid JSON"),
        (lambda f: (f / "run.json").write_text("[]"), "run.json must hold a JSON object"),
        (lambda f: (f / "metadata.yaml").write_text("name: x\n"), "metadata.yaml: agent: Field required"),
        (lambda f: (f / "metadata.yaml").write_text("name: [\n"), "metadata.yaml is not valid YAML"),
        (lambda f: (f / "summary.json").unlink(), "missing summary.json"),
        (lambda f: (f / "model.pkl").write_bytes(b"\x80\x04"), "unexpected file 'model.pkl'"),
        (lambda f: (f / "hook.py").write_text("import os"), "unexpected file 'hook.py'"),
    ],
)
def test_malformed_files(copy, damage, message):
    suites, folder = copy
    damage(folder)
    assert message in _problems(suites, folder)


def test_malformed_record_fields(copy):
    suites, folder = copy
    records = _lines(folder)
    records[1]["success"] = "yes"
    _write_lines(folder, records)
    assert "episode (nl, 12): success: Input should be a valid boolean" in _problems(suites, folder)


@pytest.mark.extra("eval")  # the board's plots
def test_cli_validate_and_build(honest, tmp_path):
    suites, folder = honest
    root = tmp_path / "lb"
    shutil.copytree(folder.parents[2], root)
    runner = CliRunner()
    # Against the built-in suites, a submission filed under an unknown suite is rejected.
    result = runner.invoke(app, ["leaderboard", "validate", "--root", str(root)])
    assert result.exit_code == 1 and "no suite 'mini'" in " ".join(result.output.split())
    result = runner.invoke(app, ["leaderboard", "validate", "--root", str(root), "--suites", str(suites)])
    assert result.exit_code == 0, result.output
    tampered = root / "submissions" / "mini" / "tampered"
    shutil.copytree(folder, tampered)
    _edit_json(tampered / "summary.json", lambda d: d["overall"]["success"].update(mean=1.0))
    result = runner.invoke(app, ["leaderboard", "build", "--root", str(root), "--suites", str(suites), "--out", str(tmp_path / "site")])
    assert result.exit_code == 1 and "left out" in result.output  # the honest row is still built
    page = (tmp_path / "site" / "LEADERBOARD.md").read_text()
    assert "Random" in page and "tampered" not in page
