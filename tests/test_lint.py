"""The code passes ruff with the project's settings (ruff.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.fail("ruff is not installed: run `bash scripts/setup.sh dev`")
    done = subprocess.run(
        [ruff, "check", "--no-cache", "--output-format", "concise", "rl4vlm_gym", "envs", "baselines", "benchmarks", "tests"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
