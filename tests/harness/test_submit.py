"""``rl4vlm-gym submit``: a finished run becomes a folder the board's validator accepts on the first try;
cut, unfinished, foreign or linked runs are refused before anything is written, saying what to do.

The run is the committed honest smoke run of the random agent (``conftest.honest_folder``) laid out as
``eval`` leaves it: with its report and plots beside the files a submission holds. Validation here
skips the replay (smoke's replay takes ~20 s; ``test_hostile_submissions`` covers it): everything
``submit`` decides is in the files it writes, which are checked byte for byte.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from rl4vlm_gym.harness.leaderboard import validate_submission
from rl4vlm_gym.harness.submit import SubmitError, make_submission
from rl4vlm_gym.harness.suite import load_suite

FIELDS = {"name": "Mine (ours)", "contact": "me@example.org", "model": "org/model", "env_steps": 1000}


@pytest.fixture
def run(honest_folder: Path, tmp_path: Path) -> Path:
    """A finished run folder as ``eval`` writes it (report, plots and all)."""
    folder = tmp_path / "runs" / "smoke-random"
    (folder / "plots").mkdir(parents=True)
    for name in ("run.json", "summary.json", "episodes.jsonl"):
        shutil.copyfile(honest_folder / name, folder / name)
    (folder / "report.md").write_text("# report\n")
    (folder / "report.html").write_text("<html></html>\n")
    (folder / "plots" / "run0_success.png").write_bytes(b"\x89PNG")
    return folder


def out_for(tmp_path: Path, submission_id: str = "20261129_mine", suite: str = "smoke") -> Path:
    return tmp_path / "leaderboards" / "submissions" / suite / submission_id


def refused(run: Path, out: Path, match: str, **fields: object) -> None:
    """``submit`` refuses with ``match`` and writes nothing."""
    with pytest.raises(SubmitError, match=match):
        make_submission(run, out, {**FIELDS, **fields}, replay=False)
    assert not out.exists()


def test_a_finished_run_becomes_a_submission_the_validator_accepts(run: Path, tmp_path: Path) -> None:
    out = out_for(tmp_path)
    report = make_submission(run, out, FIELDS, replay=False)
    assert report.ok and report.summary is not None and report.summary["overall"]["episodes"] == len(load_suite("smoke").episodes)
    assert sorted(os.listdir(out)) == ["episodes.jsonl.gz", "metadata.yaml", "run.json", "summary.json"]  # no report, no plots/
    for name in ("run.json", "summary.json"):
        assert (out / name).read_bytes() == (run / name).read_bytes()
    assert gzip.decompress((out / "episodes.jsonl.gz").read_bytes()) == (run / "episodes.jsonl").read_bytes()
    assert (out / "episodes.jsonl.gz").read_bytes()[4:8] == bytes(4)  # no time in the header: the same run, the same bytes
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert yaml.safe_load((out / "metadata.yaml").read_text()) == {
        **{"training_env": "none", "algorithm": "none", "compute": ""},
        **FIELDS,
        **{"agent": "random", "date": today},  # the agent from run.json
    }
    assert validate_submission(out, replay=False).ok  # as the board reads it, again
    # the same run gives the same bytes; uncompressed, with a README
    again = make_submission(run, out_for(tmp_path, "20261129_again"), FIELDS, replay=False)
    assert again.ok and (out_for(tmp_path, "20261129_again") / "episodes.jsonl.gz").read_bytes() == (out / "episodes.jsonl.gz").read_bytes()
    plain = out_for(tmp_path, "20261129_plain")
    assert make_submission(run, plain, FIELDS, readme="# notes\n", replay=False, compress=False).ok
    assert sorted(os.listdir(plain)) == ["README.md", "episodes.jsonl", "metadata.yaml", "run.json", "summary.json"]
    assert (plain / "episodes.jsonl").read_bytes() == (run / "episodes.jsonl").read_bytes()


def test_unfinished_runs_are_refused_with_the_command_that_finishes_them(run: Path, tmp_path: Path) -> None:
    out = out_for(tmp_path)
    lines = (run / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    n = len(lines)
    (run / "episodes.jsonl").write_bytes(b"".join(lines[:-1]))  # one episode short
    refused(run, out, rf"is unfinished: {n - 1} of the {n} episodes of suite 'smoke' are in\. Run the same eval command again "
            r"\(rl4vlm-gym eval --suite smoke --agent random \.\.\. --out .*smoke-random\): it resumes, plays the 1 missing")  # fmt: skip
    (run / "episodes.jsonl").write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # its line cut by a crash
    refused(run, out, rf"episodes.jsonl:{n} is not an episode record \(a line cut short by a crash\?\): run the same eval command")
    (run / "episodes.jsonl").write_bytes(b"".join(lines))
    (run / "summary.json").unlink()  # stopped after the last episode, before the summary
    refused(run, out, "has every episode but no summary of them all")
    (run / "summary.json").write_text(json.dumps({"complete": False}))
    refused(run, out, "has every episode but no summary of them all")
    (run / "run.json").unlink()
    refused(run, out, "holds no run.json: give the folder rl4vlm-gym eval wrote")


@pytest.mark.parametrize("cut", [{"tasks": ["ezpoints"]}, {"limit": 1}, {"positions": [1]}, {"tasks": ["blackjack"], "positions": [0]}])
def test_cut_runs_are_refused_and_told_to_run_the_whole_suite(run: Path, tmp_path: Path, cut: dict) -> None:
    suite = load_suite("smoke")
    cut_suite = suite.subset(**cut)
    played, total = len(cut_suite.episodes), len(suite.episodes)
    assert played in (1, 2, len(suite.tasks))
    manifest = json.loads((run / "run.json").read_text())
    manifest |= {"protocol": cut_suite.protocol(), "protocol_hash": cut_suite.protocol_hash()}
    (run / "run.json").write_text(json.dumps(manifest))
    refused(run, out_for(tmp_path), rf"is a cut run \(eval --task, --limit or --seeds\): it plays {played} of the {total} episodes of suite 'smoke', "
            r"and a board takes the whole suite\. Run it whole, without those options")  # fmt: skip


def test_runs_of_other_suites_or_versions_are_refused(run: Path, tmp_path: Path) -> None:
    manifest = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**manifest, "protocol_hash": "0" * 64}))  # another harness or suite version
    refused(run, out_for(tmp_path), "was run with another version of suite 'smoke' or of rl4vlm-gym")
    (run / "run.json").write_text(json.dumps({**manifest, "suite": "mine"}))  # a suite of one's own (a YAML file)
    refused(run, out_for(tmp_path), "is a run of suite 'mine', which is not a built-in suite")
    (run / "run.json").write_text(json.dumps({**manifest, "prompt": "json"}))
    refused(run, out_for(tmp_path), "run.json is not the manifest rl4vlm-gym eval writes")


@pytest.mark.parametrize("link", [".", "run.json", "summary.json", "episodes.jsonl"])
def test_links_in_the_run_are_refused_unfollowed(run: Path, tmp_path: Path, link: str) -> None:
    if link == ".":
        target = run.with_name("linked")
        target.symlink_to(run)
    else:
        target = run
        real = tmp_path / f"elsewhere-{link}"
        os.replace(run / link, real)
        (run / link).symlink_to(real)
    refused(target, out_for(tmp_path), "is a symbolic link")


def test_the_folder_and_the_metadata_are_checked_before_anything_is_written(run: Path, tmp_path: Path) -> None:
    refused(run, out_for(tmp_path, suite="cards"), r"a submission's folder is \.\.\./submissions/smoke/<id> for a run of suite 'smoke'")
    refused(run, out_for(tmp_path), "metadata: url: Value error, must be an http:// or https:// URL", url="ftp://x")
    refused(run, out_for(tmp_path), "metadata: name: Value error, holds an invisible or control character", name="a\u202eb")
    refused(run, out_for(tmp_path), "metadata: agent 'oracle' is not the run's agent 'random'", agent="oracle")
    taken = out_for(tmp_path)
    taken.mkdir(parents=True)
    (taken / "x").write_text("someone's")
    with pytest.raises(SubmitError, match="already exists: give a new folder"):
        make_submission(run, taken, FIELDS, replay=False)
    assert os.listdir(taken) == ["x"]


def test_what_the_validator_rejects_is_removed(run: Path, tmp_path: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    summary["overall"]["success"]["mean"] += 0.5  # a summary the episodes do not give
    (run / "summary.json").write_text(json.dumps(summary))
    refused(run, out_for(tmp_path), r"the board's validator rejected the submission \(removed from .*\): summary.json: overall.success.mean is")
    assert os.listdir(out_for(tmp_path).parent) == []


def test_an_interrupted_validation_leaves_nothing_behind(run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rl4vlm_gym.harness.submit as submit

    def interrupted(folder: Path, replay: bool) -> None:  # Ctrl-C during a long replay
        assert sorted(os.listdir(folder)) == ["episodes.jsonl.gz", "metadata.yaml", "run.json", "summary.json"]
        raise KeyboardInterrupt

    monkeypatch.setattr(submit, "validate_submission", interrupted)
    with pytest.raises(KeyboardInterrupt):
        make_submission(run, out_for(tmp_path), FIELDS)
    assert not out_for(tmp_path).exists()  # the same command can run again
