"""Leaderboard fixtures: the committed honest smoke run of the random agent, one fresh copy per test
(filed under ``submissions/smoke/``), with helpers to damage it and to read the verdict."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rl4vlm_gym.harness.leaderboard import validate_submission
from rl4vlm_gym.harness.runner import write_summary
from rl4vlm_gym.harness.suite import load_suite

HONEST = Path(__file__).resolve().parents[2] / "leaderboards" / "submissions" / "smoke" / "20261122_random"


class Submission:
    """A copy of the honest smoke submission, with ``episodes.jsonl`` unzipped for editing."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.episodes = folder / "episodes.jsonl"

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.episodes.read_text().splitlines()]

    def write_records(self, records: list[dict[str, Any]], *, resummarize: bool = True) -> None:
        """Write ``records`` as the runner does; with ``resummarize``, a summary that agrees with them
        (a careful forger's summary: only the replay can tell)."""
        self.episodes.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records))
        if resummarize:
            write_summary(self.folder, load_suite("smoke"), records)

    def edit_records(self, edit: Callable[[list[dict[str, Any]]], None], *, resummarize: bool = True) -> None:
        records = self.records()
        edit(records)
        self.write_records(records, resummarize=resummarize)

    def edit_json(self, name: str, edit: Callable[[Any], object]) -> None:
        """Edit a JSON file in place (``edit`` changes the parsed data)."""
        path = self.folder / name
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))

    def problem(self, replay: bool = True) -> str:
        """The verdict's message; fails the test if the submission passes."""
        report = validate_submission(self.folder, replay=replay)
        assert not report.ok, "the damage went unnoticed"
        assert len(report.problems) == 1, report.problems
        return report.problems[0]


@pytest.fixture(scope="session")
def honest_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("honest") / "submissions" / "smoke" / HONEST.name
    shutil.copytree(HONEST, folder)
    gz = folder / "episodes.jsonl.gz"
    (folder / "episodes.jsonl").write_bytes(gzip.decompress(gz.read_bytes()))
    gz.unlink()
    return folder


@pytest.fixture
def new_submission(honest_folder: Path, tmp_path: Path) -> Callable[[str], Submission]:
    """Makes fresh copies: ``tmp_path/leaderboards/submissions/smoke/<id>``."""

    def make(submission_id: str = honest_folder.name) -> Submission:
        folder = tmp_path / "leaderboards" / "submissions" / "smoke" / submission_id
        shutil.copytree(honest_folder, folder)
        return Submission(folder)

    return make


@pytest.fixture
def submission(new_submission: Callable[[str], Submission]) -> Submission:
    return new_submission()
