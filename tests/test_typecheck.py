"""mypy finds no error in the package as installed (settings: mypy.ini).

setup.cfg installs ``envs/`` as ``rl4vlm_gym.envs``, ``baselines/`` as ``rl4vlm_gym.baselines`` and
``leaderboards/suites/`` as ``rl4vlm_gym.suites``, so mypy cannot resolve ``rl4vlm_gym.envs.cards`` from the
source folders, and the editable install is an import hook that mypy does not follow. The test lays out the
modules of setup.cfg's ``packages`` where ``package_dir`` puts them, as setuptools does when it builds the
wheel (tests/test_packaging.py checks the wheel holds every module), runs ``mypy -p rl4vlm_gym`` there, and
reports each error at its path in the repository.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _package_dirs(setup_cfg: Path) -> dict[str, Path]:
    """Each package of setup.cfg's ``packages``, mapped to its source folder by ``package_dir``.

    A package without a ``package_dir`` entry of its own lives inside its nearest mapped parent, as in
    setuptools: ``rl4vlm_gym.envs.cards`` is ``envs/cards``.
    """
    parser = configparser.ConfigParser()
    parser.read(setup_cfg)
    options = parser["options"]
    mapped = dict(
        (name.strip(), folder.strip())
        for name, _, folder in (line.partition("=") for line in options["package_dir"].splitlines() if line.strip())
    )
    found = {}
    for package in (line.strip() for line in options["packages"].splitlines() if line.strip()):
        parent, rest = package, []
        while parent not in mapped:
            if "." not in parent:
                raise AssertionError(f"package {package} has no package_dir entry above it")
            parent, _, tail = parent.rpartition(".")
            rest.insert(0, tail)
        found[package] = setup_cfg.parent.joinpath(mapped[parent], *rest)
    return found


def lay_out_installed(destination: Path, setup_cfg: Path = ROOT / "setup.cfg") -> dict[Path, Path]:
    """Copy the package's modules to where the wheel installs them, under ``destination``.

    Returns each copied file's path relative to ``destination``, mapped to its source path relative to the
    repository, so that mypy's messages can name the file a contributor edits.
    """
    origin = {}
    for package, folder in _package_dirs(setup_cfg).items():
        target = destination.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(folder.iterdir()):
            if source.suffix in (".py", ".pyi") or source.name == "py.typed":
                shutil.copyfile(source, target / source.name)
                origin[(target / source.name).relative_to(destination)] = source.relative_to(setup_cfg.parent)
    return origin


_MESSAGE = re.compile(r"^(?P<path>[^:\s]+\.pyi?)(?P<rest>:\d+:.*)$")


def to_repository_paths(report: str, origin: dict[Path, Path]) -> str:
    """mypy's report with each installed path replaced by the repository path it was copied from."""
    lines = []
    for line in report.splitlines():
        match = _MESSAGE.match(line)
        if match and Path(match["path"]) in origin:
            line = f"{origin[Path(match['path'])]}{match['rest']}"
        lines.append(line)
    return "\n".join(lines)


def run_mypy(tree: Path) -> subprocess.CompletedProcess[str]:
    """``mypy -p rl4vlm_gym`` over ``tree`` with the repository's mypy.ini, from ``tree``, cold (no cache is read or written)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "mypy.ini"),
            "--cache-dir",
            os.devnull,
            "--python-executable",
            sys.executable,
            "--no-color-output",
            "--no-error-summary",
            "-p",
            "rl4vlm_gym",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_layout_places_every_mapped_package() -> None:
    dirs = _package_dirs(ROOT / "setup.cfg")
    assert dirs["rl4vlm_gym.envs.cards"] == ROOT / "envs" / "cards"
    assert dirs["rl4vlm_gym.suites"] == ROOT / "leaderboards" / "suites"
    assert dirs["rl4vlm_gym.baselines.common"] == ROOT / "baselines" / "common"
    assert all(folder.is_dir() for folder in dirs.values())


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_installed_package(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: run `bash scripts/setup.sh dev`")
    tree = tmp_path / "site"
    origin = lay_out_installed(tree)
    assert Path("rl4vlm_gym/envs/cards/__init__.py") in origin and Path("rl4vlm_gym/py.typed") in origin
    done = run_mypy(tree)
    assert done.returncode == 0, to_repository_paths(done.stdout + done.stderr, origin)


def test_mypy_reports_an_error_at_its_repository_path(tmp_path: Path) -> None:
    # The check can fail: an ill-typed module in a mapped folder is found, and named by its source path.
    setup_cfg = tmp_path / "repo" / "setup.cfg"
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "families" / "one").mkdir(parents=True)
    setup_cfg.write_text(
        "[options]\npackage_dir =\n    rl4vlm_gym = pkg\n    rl4vlm_gym.envs = families\n"
        "packages =\n    rl4vlm_gym\n    rl4vlm_gym.envs\n    rl4vlm_gym.envs.one\n"
    )
    (tmp_path / "repo" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "repo" / "families" / "__init__.py").write_text("")
    (tmp_path / "repo" / "families" / "one" / "__init__.py").write_text(
        "from rl4vlm_gym import LIMIT\n\n\ndef half() -> int:\n    return LIMIT / 2\n"
    )
    (tmp_path / "repo" / "pkg" / "__init__.py").write_text("LIMIT: int = 4\n")
    tree = tmp_path / "site"
    origin = lay_out_installed(tree, setup_cfg)
    done = run_mypy(tree)
    report = to_repository_paths(done.stdout, origin)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "families/one/__init__.py:5: error: Incompatible return value type" in report, report
