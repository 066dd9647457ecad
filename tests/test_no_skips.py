"""``--no-skips`` (scripts/test.sh, CI): a skipped test or module fails the run and is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["test", "module"])
def test_a_skip_fails_the_run_under_no_skips(tmp_path: Path, how: str) -> None:
    shutil.copy(ROOT_CONFTEST, tmp_path / "conftest.py")  # the hook as the suite runs it
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    skipping = 'pytest.skip("the nav extra is not installed"' + (", allow_module_level=True)\n" if how == "module" else ")\n")
    body = skipping if how == "module" else "def test_skips():\n    " + skipping
    (tmp_path / "test_skipping.py").write_text("import pytest\n" + body)
    assert _run(tmp_path).returncode == 0  # the inner loop on a partial install: a skip is a skip
    strict = _run(tmp_path, "--no-skips")
    assert strict.returncode == 1, strict.stdout
    assert "1 skipped under --no-skips" in strict.stdout and "the nav extra is not installed" in strict.stdout
    (tmp_path / "test_skipping.py").unlink()
    assert _run(tmp_path, "--no-skips").returncode == 0


def test_scripts_test_sh_runs_with_no_skips() -> None:
    text = (Path(__file__).resolve().parents[1] / "scripts" / "test.sh").read_text()
    assert "pytest -n auto --no-skips" in text
