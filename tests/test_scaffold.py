"""`rl4vlm-gym new-env`: the scaffolded family is correct as written, in the repository's layout and
as a plugin package that is really installed (into a throw-away target folder, beside this checkout's
editable install) and then found by the registry, the CLI, the conformance kit, pytest and the docs build.
tests/test_packaging.py installs a plugin into a fresh venv beside the built wheel, as a user would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl4vlm_gym.cli import app
from rl4vlm_gym.scaffold import Scaffold, ScaffoldError, new_env

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 600


def _ruff(*paths: Path, cwd: Path, isort_first_party: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None, "ruff is not installed: run `bash scripts/setup.sh dev`"
    return subprocess.run(
        [ruff, "check", "--no-cache", "--config", str(REPO / "ruff.toml"), "--config",
         f"lint.isort.known-first-party={isort_first_party}", *map(str, paths)],
        cwd=cwd, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("family", "name", "namespace", "problem"),
    [
        ("Grid", "GridWalk", None, "family 'Grid'"),
        ("class", "GridWalk", None, "family 'class'"),
        ("grid-games", "GridWalk", None, "family 'grid-games'"),
        ("grid", "gridWalk", None, "env name 'gridWalk'"),
        ("grid", "Grid_Walk", None, "env name 'Grid_Walk'"),
        ("grid", "GridWalk", "My/NS", "namespace 'My/NS'"),
    ],
)
def test_bad_names_are_refused_with_the_reason(family: str, name: str, namespace: str | None, problem: str) -> None:
    with pytest.raises(ScaffoldError, match=problem):
        Scaffold(family, name, namespace=namespace)


def test_names_derive_from_the_family_and_the_class() -> None:
    repo, plugin = Scaffold("grid_games", "GridWalk2"), Scaffold("grid_games", "GridWalk2", plugin=True)
    assert repo.env_id == "rl4vlm/GridWalk2-v0" and repo.package == "rl4vlm_gym.envs.grid_games"
    assert repo.module == "grid_walk2"
    assert plugin.env_id == "grid_games/GridWalk2-v0" and plugin.package == "rl4vlm_grid_games"
    assert plugin.dist_name == "rl4vlm-grid-games"


def _fake_repo(root: Path) -> Path:
    (root / "envs").mkdir(parents=True)
    (root / "envs" / "__init__.py").write_text('"""Env families."""\n')
    shutil.copy(REPO / "setup.cfg", root / "setup.cfg")
    (root / "docs").mkdir()
    shutil.copy(REPO / "docs" / "architecture.md", root / "docs" / "architecture.md")
    return root


def test_repository_layout(tmp_path: Path) -> None:
    root = _fake_repo(tmp_path / "repo")
    written = new_env(Scaffold("gridgames", "GridWalk"), root)
    rel = sorted(p.relative_to(root).as_posix() for p in written)
    assert rel == [
        "docs/architecture.md",
        "docs/envs/rl4vlm/GridWalk-v0.md",
        "envs/gridgames/__init__.py",
        "envs/gridgames/grid_walk.py",
        "setup.cfg",
        "tests/envs/gridgames/test_gridgames.py",
    ]
    setup_cfg = (root / "setup.cfg").read_text().splitlines()
    packages = setup_cfg.index("packages =")
    assert "    rl4vlm_gym.envs.gridgames" in setup_cfg[packages : setup_cfg.index("install_requires =")]
    group = setup_cfg.index("rl4vlm_gym.envs =")
    end = setup_cfg.index("", group)  # the group ends at the first blank line
    assert "    gridgames = rl4vlm_gym.envs.gridgames:register" in setup_cfg[group:end]
    # the rest of setup.cfg is untouched
    original = (REPO / "setup.cfg").read_text().splitlines()
    assert [line for line in setup_cfg if "gridgames" not in line] == original
    # the architecture page names the family among the others, in order; nothing else changes
    page = (root / "docs" / "architecture.md").read_text()
    assert "`envs/games/`, `envs/gridgames/`, `envs/household/`" in page
    assert page.replace("`envs/gridgames/`, ", "") == (REPO / "docs" / "architecture.md").read_text()
    first = _fake_repo(tmp_path / "first")
    new_env(Scaffold("aaa", "GridWalk"), first)  # before every family
    assert "`envs/aaa/`, `envs/balrog/`" in (first / "docs" / "architecture.md").read_text()
    page = (root / "docs/envs/rl4vlm/GridWalk-v0.md").read_text()
    assert page.startswith("# rl4vlm/GridWalk-v0") and "](img/GridWalk-v0.png)" in page
    assert (root / "docs/envs/rl4vlm/img/GridWalk-v0.png").is_file()
    done = _ruff(root / "envs", root / "tests", cwd=root, isort_first_party='["rl4vlm_gym"]')
    assert done.returncode == 0, done.stdout + done.stderr
    # a second run refuses to overwrite anything
    with pytest.raises(ScaffoldError, match="already exists"):
        new_env(Scaffold("gridgames", "GridWalk"), root)
    with pytest.raises(ScaffoldError, match="not an RL4VLM Gym checkout"):
        new_env(Scaffold("other", "GridWalk"), tmp_path)


def _new_plugin(tmp_path: Path) -> Path:
    """``new-env --plugin`` into ``tmp_path/plugin``: the command says how to install it, and ruff passes."""
    plugin = tmp_path / "plugin"
    result = CliRunner().invoke(app, ["new-env", "tinygrid", "--plugin", "--dest", str(plugin), "--name", "TinyWalk"])
    assert result.exit_code == 0, result.output
    assert "pip install -e ." in result.output
    done = _ruff(plugin, cwd=plugin, isort_first_party="[]")
    assert done.returncode == 0, done.stdout + done.stderr
    return plugin


def test_a_plugin_is_written_lint_clean_with_its_entry_point_and_docs(tmp_path: Path) -> None:
    # The inner loop's check of `new-env --plugin` (installing it and running the kit, its tests and the
    # docs build, below, is slow: seven processes). Its entry point names its register(), and its docs
    # page has the rewards table.
    plugin = _new_plugin(tmp_path)
    assert 'tinygrid = "rl4vlm_tinygrid:register"' in (plugin / "pyproject.toml").read_text()
    page = (plugin / "docs" / "tinygrid" / "TinyWalk-v0.md").read_text()
    assert page.startswith("# tinygrid/TinyWalk-v0") and "## Rewards" in page and "| goal | +1 | +1 |" in page
    assert (plugin / "docs" / "tinygrid" / "img" / "TinyWalk-v0.png").is_file()


@pytest.mark.slow  # pip installs the plugin, then the CLI, the kit, pytest and the docs build each run in a process (~13 s)
def test_plugin_installs_and_passes_the_kit_the_tests_and_the_docs_build(tmp_path: Path) -> None:
    plugin = _new_plugin(tmp_path)

    # Install for real, without network or build isolation, into a folder only the children see:
    # the test's own environment (and its rl4vlm-gym) is left as it was.
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
         "--disable-pip-version-check", "--quiet", "--target", str(target), str(plugin)],
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {**os.environ, "PYTHONPATH": str(target), "COLUMNS": "200"}
    env_id = "tinygrid/TinyWalk-v0"

    def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)

    # Seen from the repository's root (sys.path[0] is the root there) and from elsewhere.
    for cwd in (REPO, tmp_path):
        seen = run("-c", "import rl4vlm_gym; print([c.id for c in rl4vlm_gym.list_envs(family='tinygrid')])", cwd=cwd)
        assert seen.stdout.strip() == f"['{env_id}']", seen.stderr
    cli = [str(Path(sys.executable).parent / "rl4vlm-gym")]
    listed = subprocess.run([*cli, "list", "--family", "tinygrid"], env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert env_id in listed.stdout, listed.stdout + listed.stderr

    check = subprocess.run([*cli, "check", env_id, "--throughput-steps", "0"], env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert check.returncode == 0 and "all checks passed for 1 env(s)" in check.stdout, check.stdout[-4000:] + check.stderr[-2000:]

    # The plugin's own tests (rules and kit), run the way its README says, from its folder.
    tests = run("-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "tests", cwd=plugin)
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert " passed" in tests.stdout and "failed" not in tests.stdout

    docs = subprocess.run([*cli, "docs", str(tmp_path / "docs"), "--family", "tinygrid"], env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert docs.returncode == 0, docs.stdout + docs.stderr
    page = (tmp_path / "docs" / "tinygrid" / "TinyWalk-v0.md").read_text()
    assert page == (plugin / "docs" / "tinygrid" / "TinyWalk-v0.md").read_text()  # what new-env wrote
    assert "## Rewards" in page and "| goal | +1 | +1 |" in page
    index = (tmp_path / "docs" / "index.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", index)
    assert links == ["tinygrid/TinyWalk-v0.md"], links  # the plugin's page only: no link to a page it does not have


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new-env", "Bad-Name", "--plugin"], "family 'Bad-Name' is not a valid name"),
        (["new-env", "grid", "--name", "lower"], "env name 'lower' is not valid"),
        (["new-env", "grid"], "is not an RL4VLM Gym checkout"),  # run outside a checkout, without --plugin
    ],
)
def test_cli_refuses_bad_requests_with_exit_2(args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [*args, "--dest", str(tmp_path / "out")] if "--plugin" in args else args)
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())  # nothing half-written


def test_a_setup_cfg_without_the_entry_point_group_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    root = _fake_repo(tmp_path / "repo")
    text = (root / "setup.cfg").read_text().replace("rl4vlm_gym.envs =\n", "other.group =\n")
    (root / "setup.cfg").write_text(text)
    with pytest.raises(ScaffoldError, match="no `rl4vlm_gym.envs =` entry-point group"):
        new_env(Scaffold("gridgames", "GridWalk"), root)
    assert not (root / "envs" / "gridgames").exists() and (root / "setup.cfg").read_text() == text
