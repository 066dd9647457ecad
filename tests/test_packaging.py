"""The built wheel: its layout and entry points, and the wheel installed with its extras into a fresh
virtual environment, where one id of each family plays and a scaffolded plugin installs beside it."""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
# Source folder in the repo -> package it becomes once installed (setup.cfg package_dir).
PACKAGE_DIRS = {
    "rl4vlm_gym": "rl4vlm_gym",
    "envs": "rl4vlm_gym/envs",
    "baselines": "rl4vlm_gym/baselines",
    "leaderboards/suites": "rl4vlm_gym/suites",
}
IGNORED = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "*.pyc", "runs", ".cache"
)
HEAVY = {"torch", "selenium", "pyglet", "transformers", "peft", "miniworld", "ray", "matplotlib", "openai"}
SUBPROCESS_TIMEOUT = 300


def _missing_build_requirements() -> list[str]:
    """The build-system requirements of pyproject.toml that this environment does not satisfy."""
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    missing = []
    for text in requires:
        requirement = Requirement(text)
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(f"{text} (not installed)")
            continue
        if version not in requirement.specifier:
            missing.append(f"{text} (found {version})")
    return missing


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository, so building leaves no build/ or *.egg-info in the work tree."""
    dest = tmp_path_factory.mktemp("source") / "rl4vlm-gym"
    shutil.copytree(REPO, dest, ignore=IGNORED)
    return dest


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = _missing_build_requirements()
    if missing:
        pytest.fail(
            "cannot build the wheel with `python -m build --no-isolation`: the environment lacks the "
            f"build-system requirements {missing}; add them to the dev extra and install them"
        )
    outdir = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(outdir), str(source)],
        capture_output=True,
        text=True,
        cwd=source,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(outdir.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.fixture(scope="module")
def dist_info(names: list[str]) -> str:
    infos = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
    assert len(infos) == 1, infos
    return infos.pop()


def _read(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name).decode("utf-8")


# --------------------------------------------------------------------------------------------
# What is in the wheel
# --------------------------------------------------------------------------------------------


def test_wheel_installs_only_the_package(names: list[str], dist_info: str) -> None:
    tops = {name.split("/")[0] for name in names}
    assert tops == {"rl4vlm_gym", dist_info}
    assert not [n for n in names if n.startswith(("envs/", "baselines/", "tests/"))]


@pytest.mark.parametrize(
    "path",
    [
        "rl4vlm_gym/__init__.py",
        "rl4vlm_gym/envs/__init__.py",
        "rl4vlm_gym/envs/cards/__init__.py",
        "rl4vlm_gym/envs/cards/numberline.py",
        "rl4vlm_gym/baselines/__init__.py",
        "rl4vlm_gym/assets/fonts/DejaVuSans.ttf",
        "rl4vlm_gym/assets/fonts/DejaVuSans-Bold.ttf",
        "rl4vlm_gym/assets/fonts/DejaVuSerif.ttf",
        "rl4vlm_gym/assets/fonts/DejaVuSerif-Bold.ttf",
        "rl4vlm_gym/assets/fonts/LICENSE-DejaVu.txt",
        "rl4vlm_gym/py.typed",
        "rl4vlm_gym/templates/new_env/env.py.tmpl",
        "rl4vlm_gym/templates/new_env/pyproject.toml.tmpl",
        "rl4vlm_gym/suites/smoke.yaml",
        "rl4vlm_gym/suites/transfer-modality.yaml",
        "rl4vlm_gym/envs/games/assets/kuhn_cfr.json",
        "rl4vlm_gym/envs/games/assets/leduc_cfr.json.gz",
        "rl4vlm_gym/envs/games/assets/liars_dice_1_cfr.json.gz",
        "rl4vlm_gym/envs/games/assets/liars_dice_1_br.json.gz",
        "rl4vlm_gym/envs/balrog/assets/nle_progression.json",
        "rl4vlm_gym/envs/balrog/assets/boxoban/hard.txt.gz",
        "rl4vlm_gym/envs/balrog/assets/boxoban/medium.txt.gz",
        "rl4vlm_gym/envs/balrog/assets/boxoban/LICENSE",
        "rl4vlm_gym/envs/balrog/assets/textworld/tw_games.tar.xz",
        "rl4vlm_gym/envs/balrog/assets/textworld/tw_games.json",
        "rl4vlm_gym/envs/balrog/assets/textworld/LICENSE",
        "rl4vlm_gym/envs/balrog/babaisai/env.py",
        "rl4vlm_gym/envs/webshop/static/held-out.css",
    ],
)
def test_wheel_contains(names: list[str], path: str) -> None:
    assert path in names


def test_every_source_module_is_in_the_wheel(source: Path, names: list[str]) -> None:
    # Catches a sub-package (e.g. a new env family) missing from setup.cfg's `packages`.
    expected = set()
    for folder, package in PACKAGE_DIRS.items():
        for path in (source / folder).rglob("*.py"):
            expected.add(f"{package}/{path.relative_to(source / folder).as_posix()}")
    assert expected, "no sources found"
    assert sorted(expected - set(names)) == []


def test_font_files_are_not_empty(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        assert archive.getinfo("rl4vlm_gym/assets/fonts/DejaVuSans.ttf").file_size > 100_000
        assert "Bitstream" in archive.read("rl4vlm_gym/assets/fonts/LICENSE-DejaVu.txt").decode("utf-8", "replace")


def test_entry_points(wheel: Path, dist_info: str) -> None:
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep names as written
    parser.read_string(_read(wheel, f"{dist_info}/entry_points.txt"))
    assert parser["console_scripts"]["rl4vlm-gym"].strip() == "rl4vlm_gym.cli:main"
    assert parser["rl4vlm_gym.envs"]["cards"].strip() == "rl4vlm_gym.envs.cards:register"


def test_core_requirements_have_no_heavy_dependencies(wheel: Path, dist_info: str) -> None:
    metadata = _read(wheel, f"{dist_info}/METADATA")
    core = [
        Requirement(line.split(":", 1)[1].strip())
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    core_names = {r.name.lower() for r in core}
    assert {"gymnasium", "numpy", "pillow"} <= core_names
    assert not core_names & HEAVY


# --------------------------------------------------------------------------------------------
# The installed wheel, in a fresh virtual environment away from the repository
# --------------------------------------------------------------------------------------------

EXTRAS = ("all", "dev")
"""The extras CI installs (scripts/test.sh); the wheel is installed with them, resolved by pip."""
OUR_SITE_PACKAGES = sorted({Path(sysconfig.get_path(name)).resolve() for name in ("purelib", "platlib")})
"""This environment's site-packages: the fresh venv borrows its third-party packages, never its rl4vlm-gym."""


@dataclass(frozen=True)
class FreshVenv:
    """A virtual environment made for the test, holding the built wheel (and, later, the plugin).

    The third-party packages it needs come from this environment's site-packages through a folder
    of links to each of them, named by a ``.pth`` file: our own (editable) rl4vlm-gym, its
    ``.pth`` files and any ``rl4vlm`` plugin are left out, so the only rl4vlm-gym the venv can see
    is the one pip installed into it from the wheel. pip resolves the wheel's requirements, with
    the extras, against those packages (``--no-index``: no network, so the test is hermetic)."""

    root: Path
    site: Path  # its own site-packages

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self) -> dict[str, str]:
        """The environment of an activated venv: nothing of ours on PYTHONPATH, the venv's scripts first."""
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH"}}
        env["VIRTUAL_ENV"] = str(self.root)
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        return env

    def run(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run ``args`` (a script of the venv, or its python's arguments when the first is not a path) from ``cwd``."""
        command = [str(arg) for arg in args]
        if not Path(command[0]).is_absolute():
            command.insert(0, str(self.python))
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=self.env(), timeout=SUBPROCESS_TIMEOUT, check=False)

    def pip_install(self, *args: str | Path, cwd: Path) -> None:
        done = self.run("-m", "pip", "install", "--no-index", "--no-compile", "--disable-pip-version-check", "--quiet", *args, cwd=cwd)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _unsatisfied(extras: tuple[str, ...]) -> list[str]:
    """The wheel's requirements (core and ``extras``) this environment does not satisfy."""
    missing = []
    for text in importlib.metadata.requires("rl4vlm-gym") or []:
        requirement = Requirement(text)
        if requirement.marker and not any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras)):
            continue
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(f"{requirement} (not installed)")
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            missing.append(f"{requirement} (found {version})")
    return missing


def _ours(name: str) -> bool:
    """A site-packages entry of rl4vlm-gym (or a plugin of it), or a ``.pth`` file (the editable finder's among them)."""
    lowered = name.lower()
    return lowered.startswith(("rl4vlm", "__editable__")) or lowered.endswith((".pth", ".egg-link"))


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    base = tmp_path_factory.mktemp("venv")
    deps = base / "deps"
    deps.mkdir()
    for site in OUR_SITE_PACKAGES:
        for entry in site.iterdir():
            if not _ours(entry.name) and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    root = base / "fresh"
    done = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    site = root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    assert site.is_dir(), sorted(root.rglob("site-packages"))
    # A .pth line puts the folder on sys.path; its own .pth files are not run (and there are none).
    (site / "_test_third_party.pth").write_text(f"{deps}\n", encoding="utf-8")
    fresh = FreshVenv(root, site)
    # --no-deps here (0.6 s of CPU, the inner loop); pip resolves every requirement in `plugin` (slow).
    fresh.pip_install("--no-deps", wheel, cwd=base)
    return fresh


INSTALLED_CHECK = textwrap.dedent(
    """
    import importlib.metadata, json, sys
    import gymnasium as gym
    import rl4vlm_gym

    env = gym.make("rl4vlm/EZPoints-v0")
    obs, info = env.reset(seed=0)
    steps = []
    for _ in range(4):
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        steps.append([reward, terminated, info["action"]["valid"]])
        if terminated or truncated:
            break

    failed_imports = {}
    for name in ("envs", "baselines"):
        try:
            __import__(name)
            failed_imports[name] = None
        except ModuleNotFoundError as err:
            failed_imports[name] = err.name

    import rl4vlm_gym.baselines
    from rl4vlm_gym.harness.suite import load_suite
    from rl4vlm_gym.rendering import font

    dists = [d for d in importlib.metadata.distributions() if d.metadata["Name"] == "rl4vlm-gym"]
    entry_points = importlib.metadata.entry_points(group="rl4vlm_gym.envs")
    print(json.dumps({
        "package": rl4vlm_gym.__file__,
        "envs_package": sys.modules["rl4vlm_gym.envs.cards"].__file__,
        "env_module": sys.modules["rl4vlm_gym.envs.cards.ezpoints"].__file__,
        "baselines": rl4vlm_gym.baselines.__file__,
        "font": font(12).path,
        "ids": [c.id for c in rl4vlm_gym.list_envs()],
        "image": [list(obs["image"].shape), int(obs["image"].max())],
        "steps": steps,
        "success": info["success"],
        "failed_imports": failed_imports,
        "smoke_tasks": len(load_suite("smoke").tasks),
        "sys_path": sys.path,
        "prefix": [sys.prefix, sys.base_prefix],
        "dists": [str(d.locate_file("")) for d in dists],  # the folder each was installed into
        "direct_url": json.loads(dists[0].read_text("direct_url.json") or "{}")["url"],
        "entry_point_dists": sorted({str(e.dist.locate_file("")) for e in entry_points if e.value.startswith("rl4vlm_gym.")}),
    }))
    """
)


def test_installed_wheel_imports_and_runs_outside_the_repo(venv: FreshVenv, wheel: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    assert REPO not in run_dir.parents and run_dir != REPO
    proc = venv.run("-c", INSTALLED_CHECK, cwd=run_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no stray warning of ours or a third party's
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    site = venv.site.resolve()
    for key in ("package", "envs_package", "env_module", "baselines", "font"):
        assert site in Path(result[key]).resolve().parents, (key, result[key])
    # the fresh venv's interpreter, and only the wheel's rl4vlm-gym: not the repository, not our venv's
    assert [Path(p).resolve() for p in result["prefix"]] == [venv.root.resolve(), Path(sys.base_prefix).resolve()]
    assert str(REPO) not in result["sys_path"]
    assert not {Path(p).resolve() for p in result["sys_path"] if p} & set(OUR_SITE_PACKAGES)
    assert [Path(p).resolve() for p in result["dists"]] == [site], result["dists"]
    assert result["direct_url"] == wheel.as_uri()  # the distribution pip installed from the built wheel
    assert result["entry_point_dists"] == result["dists"]  # every family's entry point, from it alone
    assert {"rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0", "rl4vlm/Blackjack-v0"} <= set(
        result["ids"]
    )
    assert result["image"] == [[300, 300, 3], 255]
    # the oracle solves EZPoints' level 0 in at most four tokens, every one valid
    assert all(valid for _, _, valid in result["steps"])
    assert result["steps"][-1][:2] == [10.0, True]
    assert result["success"] is True
    assert result["failed_imports"] == {"envs": "envs", "baselines": "baselines"}
    assert result["smoke_tasks"] > 0  # the built-in suites ship in the wheel


PLAYED_FROM_THE_WHEEL = {
    "balrog": "balrog/BabyAI-GoTo-v0",  # first: minigrid imports pygame, whose warning only its first importer sees
    "cards": "rl4vlm/Blackjack-v0",
    "navigation": "rl4vlm/MiniWorld-OneRoom-v1",
    "household": "rl4vlm/Household-v0",
    "webshop": "rl4vlm/WebShop-v1",
    "probe": "rl4vlm/ColourNaming-v0",
    "sokoban": "rl4vlm/Sokoban-v0",
    "frozenlake": "rl4vlm/FrozenLake-v0",
    "games": "rl4vlm/KuhnPoker-vs-CFR-v0",
}
"""One id of each family (Kuhn's reads its packaged CFR table), played from the installed wheel in this order."""
PLUGIN = ("tinygrid", "TinyWalk", "tinygrid/TinyWalk-v0")
"""The plugin ``new-env --plugin`` scaffolds beside the wheel: family, env name, id."""

PLAY_EACH_FAMILY = textwrap.dedent(
    """
    import importlib.metadata, json, sys
    from packaging.requirements import Requirement
    import gymnasium as gym
    import rl4vlm_gym

    played = {}
    for family, env_id in json.loads(sys.argv[1]).items():
        env = gym.make(env_id)
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        module = sys.modules[type(env.unwrapped).__module__].__file__
        played[family] = [env_id, info["action"]["valid"], list(obs["image"].shape), module]
        env.close()
    families = sorted({card.family for card in rl4vlm_gym.list_envs()})
    # the plugin's requirements, as its pyproject.toml declares them, met by what the venv holds
    needs = {}
    for text in importlib.metadata.requires(sys.argv[2]) or []:
        requirement = Requirement(text)
        if requirement.marker is None:
            dist = importlib.metadata.distribution(requirement.name)
            needs[requirement.name] = [requirement.specifier.contains(dist.version), str(dist.locate_file(""))]
    print(json.dumps({"played": played, "families": families, "plugin_needs": needs}))
    """
)


@pytest.fixture(scope="module")
def plugin(venv: FreshVenv, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``rl4vlm-gym new-env --plugin`` run by the wheel's own command, then installed into the same venv
    as its README says (``pip install -e '.[dev]'``), in one pip run with the wheel and the extras CI
    installs: pip's resolver meets every requirement of both (the plugin's rl4vlm-gym: the wheel's) from
    what is installed, or fails (a missing or conflicting package, a plugin asking for another version)."""
    missing = _unsatisfied(EXTRAS)
    if missing:
        pytest.skip(f"the wheel's extras {EXTRAS} cannot resolve from this environment, which lacks {missing}: "
                    "install them with `bash scripts/setup.sh dev all`")  # fmt: skip
    family, name, _ = PLUGIN
    base = tmp_path_factory.mktemp("plugin")
    written = venv.run(venv.bin / "rl4vlm-gym", "new-env", family, "--plugin", "--dest", base / "src", "--name", name, cwd=base)
    assert written.returncode == 0, written.stdout + written.stderr
    venv.pip_install("--no-build-isolation", "-e", ".[dev]", f"{wheel}[{','.join(EXTRAS)}]", cwd=base / "src")
    return base / "src"


@pytest.mark.slow  # a plugin written, then installed with the wheel's [all,dev] resolved (4 s of CPU); ten envs play in one process (5 s)
def test_one_id_of_each_family_and_a_plugin_play_from_the_fresh_venv(venv: FreshVenv, plugin: Path, tmp_path: Path) -> None:
    """Each family's code and package data (textures, fonts, tables, templates) as the wheel installs them:
    an id of each family makes, resets and takes the oracle's move, its module loaded from the venv, and
    so does the env of a plugin scaffolded by the installed wheel and installed beside it; nothing is
    printed on stderr (no stray third-party warning: pygame's, when minigrid imports it, once was)."""
    family, _, plugin_id = PLUGIN
    ids = {**PLAYED_FROM_THE_WHEEL, family: plugin_id}
    proc = venv.run("-c", PLAY_EACH_FAMILY, json.dumps(ids), f"rl4vlm-{family}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(ids) == result["families"]  # a new family needs an id here
    site = venv.site.resolve()
    for name, (env_id, valid, shape, module) in result["played"].items():
        assert valid, (name, env_id)
        assert len(shape) == 3 and shape[2] == 3, (name, shape)
        # the families from the wheel's copy in the venv; the plugin (editable) from its own folder
        where = plugin.resolve() / f"rl4vlm_{family}" if name == family else site
        assert where in Path(module).resolve().parents, (name, module)
    satisfied, where = result["plugin_needs"].pop("rl4vlm-gym")
    assert satisfied and Path(where).resolve() == site  # met by the wheel's distribution
    assert result["plugin_needs"] == {}


def test_installed_console_script_lists_the_envs(venv: FreshVenv, tmp_path: Path) -> None:
    script = venv.bin / "rl4vlm-gym"
    assert script.is_file()
    assert script.read_text().splitlines()[0] == f"#!{venv.python}"  # it runs the venv's interpreter
    env = venv.env()
    env["COLUMNS"] = "250"
    proc = subprocess.run(
        [str(script), "list", "--family", "cards"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    for env_id in ("rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0", "rl4vlm/Blackjack-v0"):
        assert env_id in proc.stdout


# --------------------------------------------------------------------------------------------
# The metadata Python sees from the repository's root
# --------------------------------------------------------------------------------------------


def _setup_cfg_families() -> dict[str, str]:
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(REPO / "setup.cfg")
    lines = parser["options.entry_points"]["rl4vlm_gym.envs"].strip().splitlines()
    return dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)  # type: ignore[misc]


def test_the_all_extra_holds_every_other_extra() -> None:
    # `all` is what CI and the README install: a package added to one extra only (numba once, in
    # balrog) is then missing where the suite runs, and its tests pass slower or not at all.
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(REPO / "setup.cfg")
    extras = {
        name: {str(Requirement(line)) for line in value.splitlines() if line.strip() and not line.strip().startswith("#")}
        for name, value in parser["options.extras_require"].items()
    }
    held = extras.pop("all")
    missing = {name: sorted(reqs - held) for name, reqs in extras.items() if name != "dev" and reqs - held}
    assert not missing, f"setup.cfg's `all` extra lacks: {missing}"


def test_setup_writes_no_metadata_onto_the_import_path() -> None:
    # `python -m pytest` or `python -c` from the root puts the root on sys.path: an
    # rl4vlm_gym.egg-info there, once stale, shadows the installed metadata (and its entry points).
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    base = REPO / parser["egg_info"]["egg_base"]
    assert base.is_dir() and base != REPO and not (base / "__init__.py").exists()
    assert "scripts/egg-info/README.md" in (REPO / "MANIFEST.in").read_text()  # sdists keep the folder


def test_the_entry_points_python_sees_from_the_root_are_setup_cfgs() -> None:
    code = (
        "import importlib.metadata, json; "
        "print(json.dumps({e.name: e.value for e in importlib.metadata.entry_points(group='rl4vlm_gym.envs') "
        "if e.value.startswith('rl4vlm_gym.envs.')}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == _setup_cfg_families(), (
        "the installed metadata differs from setup.cfg: reinstall with `bash scripts/setup.sh dev` "
        "(and remove any rl4vlm_gym.egg-info at the repository's root)"
    )
