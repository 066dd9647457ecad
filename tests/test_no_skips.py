"""``--no-skips`` (scripts/test.sh, CI): a skipped test or module fails the run and is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_skip_fails_the_run_under_no_skips(tmp_path: Path) -> None:
    # A skipped test and a skipped module in one folder (three runs of pytest, not three for each):
    # the count and both reasons, each beside its test or module, show that neither kind is missed.
    shutil.copy(ROOT_CONFTEST, tmp_path / "conftest.py")  # the hook as the suite runs it
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    skipping = {
        "test_skips_a_test.py": 'import pytest\ndef test_skips():\n    pytest.skip("the nav extra is not installed")\n',
        "test_skips_its_module.py": 'import pytest\npytest.skip("the games extra is not installed", allow_module_level=True)\n',
    }
    for name, body in skipping.items():
        (tmp_path / name).write_text(body)
    assert _run(tmp_path).returncode == 0  # the inner loop on a partial install: a skip is a skip
    strict = _run(tmp_path, "--no-skips")
    assert strict.returncode == 1, strict.stdout
    assert "2 skipped under --no-skips" in strict.stdout, strict.stdout
    assert "test_skips_a_test.py::test_skips: " in strict.stdout and "the nav extra is not installed" in strict.stdout
    assert "test_skips_its_module.py: " in strict.stdout and "the games extra is not installed" in strict.stdout
    for name in skipping:
        (tmp_path / name).unlink()
    assert _run(tmp_path, "--no-skips").returncode == 0


def test_scripts_test_sh_runs_with_no_skips() -> None:
    text = (Path(__file__).resolve().parents[1] / "scripts" / "test.sh").read_text()
    assert "pytest -n auto --no-skips" in text
