"""Leaderboard validation re-checks every row from its logs; the build publishes only what passed.

The submission damaged here is the committed honest smoke run of the random agent (fixture
``submission`` in ``conftest.py``). Damage is put on the first lines (NumberLine, EZPoints), which
the replay reaches before any slow env. Hostile files and folders: ``test_hostile_submissions.py``.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from rl4vlm_gym.agents import Agent, make_agent
from rl4vlm_gym.cli import app
from rl4vlm_gym.harness.leaderboard import (
    build_leaderboard,
    find_submissions,
    mark_verified,
    read_maintainers,
    replay_episode,
    validate_submission,
)
from rl4vlm_gym.harness.runner import make_task_env, play_episode
from rl4vlm_gym.harness.suite import load_suite

SMOKE = load_suite("smoke")


class _Outputs(Agent):
    """Answers with the given outputs in a loop (a scripted player, for honest logs with invalid steps)."""

    def __init__(self, outputs: Sequence[str]) -> None:
        super().__init__()
        self.outputs = itertools.cycle(outputs)

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        return next(self.outputs)


class _Noisy(Agent):
    """Seeded: an admissible action, garbage, a JSON answer or a near miss; raises at ``fail_at``."""

    def __init__(self, seed: int, fail_at: int | None = None) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)
        self.fail_at, self.steps = fail_at, 0

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        self.steps += 1
        if self.steps == self.fail_at:
            raise TimeoutError("the model server went away")
        action = str(self.rng.choice(list(obs["actions"]))) if obs["actions"] else "noop"
        return [action, "\u00bfqu\u00e9?", json.dumps({"action": action}), action.upper() + "!", ""][int(self.rng.integers(5))]


def _honest_record(task_name: str, seed: int, outputs: Sequence[str]) -> dict[str, Any]:
    task = SMOKE.task(task_name)
    env = make_task_env(task)
    try:
        return play_episode(env, _Outputs(outputs), task, seed)
    finally:
        env.close()


def _replace(records: list[dict[str, Any]], record: dict[str, Any]) -> None:
    i = next(i for i, r in enumerate(records) if (r["task"], r["seed"]) == (record["task"], record["seed"]))
    if not any("decision" in s for r in records for s in r["steps"]):  # a log from before the runner recorded facts
        record = {k: v for k, v in record.items() if k != "final_decision"}
        record["steps"] = [{k: v for k, v in s.items() if k != "decision"} for s in record["steps"]]
    records[i] = record


def test_honest_submission_passes_with_replay(submission):
    report = validate_submission(submission.folder)
    assert report.ok, report.problems
    assert report.summary is not None and report.summary["timing"]["steps"] == sum(len(r["steps"]) for r in submission.records())
    assert find_submissions(submission.folder.parents[2]) == [submission.folder]


def test_gzipped_episodes_are_accepted_but_not_both(submission):
    import gzip

    plain = submission.episodes
    (submission.folder / "episodes.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    assert "one of episodes.jsonl or episodes.jsonl.gz, not both" in submission.problem()
    plain.unlink()
    assert validate_submission(submission.folder, replay=False).ok


# -- the protocol, the episode set and the summary -------------------------------------------------


def test_wrong_protocol_hash(submission):
    submission.edit_json("run.json", lambda d: d.update(protocol_hash="0" * 64))
    assert "run.json: protocol hash '000" in submission.problem()


def test_prompt_swapped(submission):
    submission.edit_json("run.json", lambda d: d["prompt"].update(history=3))
    assert "protocol hash" in submission.problem()


def test_protocol_edited_under_the_right_hash(submission):
    submission.edit_json("run.json", lambda d: d["protocol"]["tasks"][0].update(seeds=[1, 2]))
    assert "run.json: protocol is not the protocol of suite 'smoke'" in submission.problem()


def test_run_of_another_suite(submission):
    submission.edit_json("run.json", lambda d: d.update(suite="cards", axis="in-distribution"))
    assert "run.json: the run is of suite 'cards', but it is filed under 'smoke'" in submission.problem()


def test_missing_episode(submission):
    submission.edit_records(lambda rs: rs.pop(), resummarize=False)
    task, seed = SMOKE.episodes[-1]
    assert f"episodes.jsonl: lacks 1 of the suite's episodes, e.g. (task, seed) ({task}, {seed})" in submission.problem()


def test_extra_episode(submission):
    submission.edit_records(lambda rs: rs.append(dict(rs[0], seed=99)), resummarize=False)
    n = len(SMOKE.episodes)
    assert f"episodes.jsonl:{n + 1}: has more than {n} lines, one per episode of the suite" in submission.problem()
    submission.edit_records(lambda rs: rs.__setitem__(slice(-2, None), [dict(rs[0], seed=99)]), resummarize=False)
    assert f"episodes.jsonl:{n}: ('numberline/image+text', 99) is not an episode of suite 'smoke'" in submission.problem()


def test_repeated_episode(submission):
    submission.edit_records(lambda rs: rs.__setitem__(-1, rs[0]), resummarize=False)
    assert f"episodes.jsonl:{len(SMOKE.episodes)}: episode (numberline/image+text, 1835504127) is recorded twice" in submission.problem()


def test_edited_summary(submission):
    submission.edit_json("summary.json", lambda d: d["overall"]["success"].update(mean=0.99))
    assert "summary.json: overall.success.mean is 0.99 but the episodes give 0.208333" in submission.problem()


def test_summary_with_a_task_removed(submission):
    submission.edit_json("summary.json", lambda d: d["tasks"].pop("blackjack"))
    assert "summary.json: tasks.blackjack is '(missing)'" in submission.problem()


def test_summary_timing_is_recomputed(submission):
    submission.edit_json("summary.json", lambda d: d["timing"].update(agent_ms_p50=0.0001))
    assert "summary.json: timing.agent_ms_p50 is 0.0001 but the episodes give" in submission.problem()


def test_summary_that_is_not_complete(submission):
    submission.edit_json("summary.json", lambda d: d.update(complete=False))
    assert "summary.json: complete is False but the episodes give True" in submission.problem()


def test_record_that_does_not_add_up(submission):
    submission.edit_records(lambda rs: rs[0]["steps"][0].update(reward=1.0), resummarize=False)  # was -1.0
    assert "episodes.jsonl:1: episode (numberline/image+text, 1835504127): return is -8.0 but its steps add up to -6.0" in submission.problem()


def test_more_steps_than_the_budget(submission):
    def edit(records):
        r = records[0]
        r["steps"] += [r["steps"][0]] * (13 - len(r["steps"]))
        r["num_steps"] = 13

    submission.edit_records(edit)
    assert "13 steps, more than the task's budget of 12" in submission.problem()


# -- the replay: every field the env decides is recomputed -----------------------------------------


def test_replay_refuses_steps_after_the_end(submission):
    """Issue 18: steps recorded after the episode ended (a forger's padding) must not replay."""

    def edit(records):
        r = records[3]  # numberline/text 1320224556: won at step 8
        assert r["terminated"] and r["num_steps"] == 8
        r["steps"].append(dict(r["steps"][-1], reward=0.0))
        r["num_steps"] += 1

    submission.edit_records(edit)
    assert validate_submission(submission.folder, replay=False).ok  # only the replay can tell
    problem = submission.problem()
    assert "episodes.jsonl:4: episode (numberline/text, 1320224556): the log goes on after the episode ended at step 8" in problem


def test_replay_checks_optimal_steps(submission):
    """Issue 18: the optimal length (the denominator of SPL) comes from the env, not from the log."""
    submission.edit_records(lambda rs: rs[0].update(optimal_steps=10))  # SPL of a failure stays 0: the summary agrees
    assert validate_submission(submission.folder, replay=False).ok
    assert "episodes.jsonl:1: episode (numberline/image+text, 1835504127): optimal_steps is 10 but the env gives 4" in submission.problem()


def test_replay_checks_each_step_validity(submission):
    """An invalid step relabelled valid (and the counts made to agree) does not replay."""
    honest = _honest_record("numberline/image+text", 1835504127, ["jump!", "+", "-", "+"])
    assert not honest["steps"][0]["valid"] and honest["invalid_actions"] >= 1
    submission.edit_records(lambda rs: _replace(rs, honest))
    assert validate_submission(submission.folder, replay=False).ok

    def relabel(records):
        step = records[0]["steps"][0]
        step.update(valid=True, error=None)
        records[0]["invalid_actions"] -= 1

    submission.edit_records(relabel)
    assert validate_submission(submission.folder, replay=False).ok
    assert "episodes.jsonl:1: episode (numberline/image+text, 1835504127): step 1: the log says valid=True; replaying the output gives False" in (
        submission.problem()
    )


def test_replay_checks_each_parser_error_and_parsed_action(submission):
    honest = _honest_record("numberline/image+text", 1835504127, ["jump!", "+"])
    submission.edit_records(lambda rs: _replace(rs, dict(honest, steps=[dict(honest["steps"][0], error="no such move")] + honest["steps"][1:])))
    assert "step 1: the log says error='no such move'" in submission.problem()
    submission.edit_records(lambda rs: rs[0]["steps"][0].update(parsed="-"))
    assert "step 1: the log says parsed='-'; replaying the output gives None" in submission.problem()


def test_replay_checks_the_level(submission):
    submission.edit_records(lambda rs: rs[0].update(level=1))
    assert validate_submission(submission.folder, replay=False).ok
    assert "episodes.jsonl:1: episode (numberline/image+text, 1835504127): the log says level=1; replaying the outputs gives 0" in (
        submission.problem()
    )


def test_replay_checks_the_version(submission):
    submission.edit_records(lambda rs: rs[0].update(version=3))
    assert "the log says version=3; replaying the outputs gives 0" in submission.problem()


def test_replay_checks_success_and_progress(submission):
    """Flip a failure to a success and fix every count and the summary: only replay sees it."""
    submission.edit_records(lambda rs: rs[0].update(success=True, progress=1.0))
    assert validate_submission(submission.folder, replay=False).ok
    assert "episode (numberline/image+text, 1835504127): the log says success=True; replaying the outputs gives False" in submission.problem()


def test_replay_checks_rewards(submission):
    def edit(records):
        step = records[0]["steps"][-1]
        records[0]["return"] += 1.0 - step["reward"]
        step["reward"] = 1.0

    submission.edit_records(edit)
    assert "step 10: the log says reward 1.0; replaying the output gives -1.0" in submission.problem()


def test_replay_refuses_a_log_cut_short(submission):
    def edit(records):
        r = records[0]
        r["steps"], r["num_steps"], r["truncated"] = r["steps"][:3], 3, False
        r["return"] = sum(s["reward"] for s in r["steps"])

    submission.edit_records(edit)
    assert "the log ends after 3 steps, but the env had not ended the episode" in submission.problem()


def test_replay_refuses_an_agent_error_after_the_end(submission):
    submission.edit_records(lambda rs: rs[3].update(error="agent raised TimeoutError: x", success=False))
    assert "the log records an agent error, but the env had ended the episode at step 8" in submission.problem()


@pytest.mark.parametrize("agent_seed", range(4))
def test_replaying_an_honest_log_reproduces_the_log(agent_seed):
    """The law the replay stands on: for any outputs, the runner's record of them is what the replay
    rebuilds (timings aside), in a fresh env; and the replay finds no problem with it."""
    from rl4vlm_gym.harness.leaderboard import _replay_problem

    rng = np.random.default_rng(agent_seed)
    for task in SMOKE.tasks:
        if "MiniWorld" in task.env:  # the slow family; the committed smoke run replays it
            continue
        seed = int(rng.integers(2**32))
        fail_at = int(rng.integers(1, 6)) if agent_seed == 3 else None  # logs that end with an agent error
        agent = _Noisy(agent_seed, fail_at) if agent_seed % 2 else make_agent("random", seed=agent_seed) if agent_seed else make_agent("oracle")
        played, replayed, checked = make_task_env(task), make_task_env(task), make_task_env(task)
        try:
            record = play_episode(played, agent, task, seed)
            rebuilt, used = replay_episode(replayed, task, record)
            if record["error"] is not None:
                assert rebuilt["error"] == "_LogEnded"
                rebuilt["error"], rebuilt["success"] = record["error"], False
            assert used == len(record["steps"])
            timings = {"agent_ms", "env_ms"}
            assert [{k: v for k, v in s.items() if k not in timings} for s in rebuilt.pop("steps")] == [
                {k: v for k, v in s.items() if k not in timings} for s in record["steps"]
            ]
            assert rebuilt == {k: v for k, v in record.items() if k != "steps"}
            assert _replay_problem(checked, task, record) is None
        finally:
            for env in (played, replayed, checked):
                env.close()


# -- metadata and the maintainers' fields ------------------------------------------------------------


def _metadata(submission) -> dict[str, Any]:
    return yaml.safe_load((submission.folder / "metadata.yaml").read_text())


def _write_metadata(submission, data: dict[str, Any]) -> None:
    (submission.folder / "metadata.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))


def test_verified_cannot_be_self_set(submission):
    _write_metadata(submission, dict(_metadata(submission), verified=True))
    assert "metadata.yaml: verified is set by the maintainers (leaderboards/maintainers.yaml), not by a submission" in submission.problem()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "", "name: String should have at least 1 character"),
        ("name", "x" * 81, "name: String should have at most 80 characters"),
        ("name", "Oracle\u202e(ours)", "name: Value error, holds an invisible or control character (U+202E)"),
        ("model", "org/m\u200b", "model: Value error, holds an invisible or control character (U+200B)"),
        ("compute", "1 GPU\x1b[31m", "compute: Value error, holds an invisible or control character (U+001B)"),
        ("env_steps", -1, "env_steps: Input should be greater than or equal to 0"),
        ("env_steps", "200k", "env_steps: Input should be a valid integer"),
        ("env_steps", True, "env_steps: Input should be a valid integer"),
        ("url", "javascript:alert(1)", "url: Value error, must be an http:// or https:// URL"),
        ("url", "https://x.org/a b", "url: Value error, must be an http:// or https:// URL"),
        ("date", "2099-01-01", "date: Value error, must be a date from 2020-01-01 to"),
        ("date", "yesterday", "date: Input should be a valid date"),
        ("agent", "oracle", "metadata.yaml: agent 'oracle' is not the agent of run.json ('random')"),
        ("badge", "gold", "badge: Extra inputs are not permitted"),
    ],
)
def test_metadata_fields_have_types_and_ranges(submission, field, value, message):
    _write_metadata(submission, dict(_metadata(submission), **{field: value}))
    assert message in submission.problem(replay=False)


def test_metadata_accepts_honest_variants(submission):
    data = dict(_metadata(submission), name="Qwen2-VL-2B + VL-DAC (ours) \u4e2d\u6587", url="https://example.org/paper?id=3#x")
    _write_metadata(submission, data)
    (submission.folder / "metadata.yaml").write_bytes(b"\xef\xbb\xbf" + (submission.folder / "metadata.yaml").read_bytes().replace(b"\n", b"\r\n"))
    assert validate_submission(submission.folder, replay=False).ok


# -- the commands ----------------------------------------------------------------------------------


def _board(tmp_path: Path, honest: Path) -> Path:
    root = tmp_path / "lb"
    shutil.copytree(honest, root / "submissions" / "smoke" / "20261122_random")
    return root


@pytest.mark.extra("eval")  # the board's plots
def test_cli_validate_build_and_verify(honest_folder, tmp_path):
    root = _board(tmp_path, honest_folder)
    runner = CliRunner()
    result = runner.invoke(app, ["leaderboard", "validate", "--root", str(root)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["leaderboard", "validate", "--root", str(root), "--suites", str(tmp_path)]).exit_code == 2  # no such option
    tampered = root / "submissions" / "smoke" / "20261122_tampered"
    shutil.copytree(honest_folder, tampered)
    summary = json.loads((tampered / "summary.json").read_text())
    summary["overall"]["success"]["mean"] = 1.0
    (tampered / "summary.json").write_text(json.dumps(summary))
    result = runner.invoke(app, ["leaderboard", "validate", "--root", str(root), "--no-replay"])
    output = " ".join(result.output.split())
    assert result.exit_code == 1 and "rejected" in output and "summary.json: overall.success.mean is 1.0" in output

    site = tmp_path / "site"
    result = runner.invoke(app, ["leaderboard", "build", "--root", str(root), "--out", str(site), "--no-replay"])
    assert result.exit_code == 1 and "left out" in result.output  # the honest row is still built
    seen = []
    build_leaderboard(root, tmp_path / "site2", replay=False, on_submission=lambda folder, done, total: seen.append((folder.name, done, total)))
    assert seen == [(f.name, i, len(find_submissions(root))) for i, f in enumerate(find_submissions(root))] and len(seen) >= 2
    assert "validated" in result.output  # the progress bar's last state (the build said what it was doing)
    page = (site / "LEADERBOARD.md").read_text()
    assert "Random over admissible actions" in page and "tampered" not in page
    assert "tokens (self-reported)" in page and "\u2713" not in page

    result = runner.invoke(app, ["leaderboard", "verify", "--root", str(root), str(tampered)])
    assert result.exit_code == 1 and not (root / "maintainers.yaml").exists()
    shutil.rmtree(tampered)
    result = runner.invoke(app, ["leaderboard", "verify", "--root", str(root), str(root / "submissions" / "smoke" / "20261122_random")])
    assert result.exit_code == 0, result.output
    assert read_maintainers(root) == {"smoke/20261122_random"}
    result = runner.invoke(app, ["leaderboard", "build", "--root", str(root), "--out", str(site), "--no-replay"])
    assert result.exit_code == 0, result.output
    assert "| \u2713 |" in (site / "LEADERBOARD.md").read_text()


def test_maintainers_file_is_checked(honest_folder, tmp_path):
    root = _board(tmp_path, honest_folder)
    (root / "maintainers.yaml").write_text("verified: smoke/20261122_random\n")
    result = CliRunner().invoke(app, ["leaderboard", "build", "--root", str(root), "--out", str(tmp_path / "s"), "--no-replay"])
    assert result.exit_code == 1 and "maintainers.yaml: verified: Input should be a valid list" in " ".join(result.output.split())
    (root / "maintainers.yaml").unlink()
    (root / "maintainers.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    result = CliRunner().invoke(app, ["leaderboard", "build", "--root", str(root), "--out", str(tmp_path / "s"), "--no-replay"])
    assert result.exit_code == 1 and "maintainers.yaml: is a symbolic link" in " ".join(result.output.split())
    assert mark_verified(root, root / "submissions" / "smoke" / "nope").ok is False


def test_build_escapes_submitted_text_and_links_only_http(submission, tmp_path):
    """Markdown and HTML show a submission's text as text: no link, image, autolink, tag or math."""
    evil = "<script>alert(1)</script> [won](https://evil.example) ![](https://t.example/p.png) www.evil.example a@b.example $x$ *b* | `c`"
    data = dict(_metadata(submission), name=evil[:80], model=evil[80:], algorithm="<img src=x onerror=alert(1)>")
    data["url"] = "https://example.org/ours"
    _write_metadata(submission, data)
    root = submission.folder.parents[2]
    pages, rejected = build_leaderboard(root, tmp_path / "site", replay=False)
    assert not rejected, rejected[0].problems
    md, html = (p.read_text() for p in pages)
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| 1 |"))
    row, header = lines[at], lines[at - 2]
    assert row.count("](") == 1 and "](https://example.org/ours)" in row  # the one link is the checked url
    for bad in ("<script", "<img", "![", "https://evil", "https://t.example", "www.evil", "a@b", "$x$", "*b*", "`c`"):
        assert bad not in row, bad
    columns = len(re.findall(r"(?<!\\)\|", header))  # 14: 13 columns, 16 with the decision columns of logs with facts
    assert columns in (14, 16) and len(re.findall(r"(?<!\\)\|", row)) == columns  # the table's own columns, nothing more
    assert "<script>alert(1)" not in html and "<img src" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert re.findall(r'href="([^"#][^"]*)"', html) == ["https://example.org/ours"]  # "#..." are the SVG's own ids


def test_build_replaces_a_planted_link_instead_of_writing_through_it(submission, tmp_path):
    root = submission.folder.parents[2]
    site = root / "site"
    site.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (site / "index.html").symlink_to(victim)
    build_leaderboard(root, replay=False)
    assert victim.read_text() == "keep me" and not (site / "index.html").is_symlink()
    shutil.rmtree(site)
    site.symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ValueError, match="is a symbolic link"):
        build_leaderboard(root, replay=False)
