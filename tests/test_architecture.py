"""The import contract: docs/architecture.md's layers as data, held on every import of the code.

Each module of the installed package (``rl4vlm_gym/``, ``envs/`` as ``rl4vlm_gym.envs``,
``baselines/`` as ``rl4vlm_gym.baselines``: setup.cfg's ``package_dir``) belongs to one layer of
:data:`LAYERS`, listed from the bottom up. A module may import its own layer and the layers below
it, except that

- the members of an ``independent`` layer (the env families) never import one another, and
- a ``leaves`` layer (the env families again) is imported by nothing outside it: a family is
  reached through its entry points and its lazy ``"module:Class"`` strings (setup.cfg,
  :class:`rl4vlm_gym.registry.EnvCard`, :class:`rl4vlm_gym.games.GameSpec`), which are not imports.

Every import counts: at module level, inside functions (the lazy ones), under ``TYPE_CHECKING``,
and ``importlib.import_module`` / ``__import__`` with a literal name. The check is our own walk
over the AST (the standard library's ``ast``), not import-linter: import-linter's graph (grimp)
does see imports inside functions, but it finds a package's modules by walking the one folder the
package is imported from, and ours is spread over three (``rl4vlm_gym/``, ``envs/``,
``baselines/``), so in the editable install it sees no family at all.

The page is held to the contract: its layer table has the contract's rows in the same order, each
row names every module and package of its layer, and every repository path the page cites exists;
no file of the repository cites the design notes' ``reference/*.md`` (they are not in it).
"""

from __future__ import annotations

import ast
import configparser
import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"


@dataclass(frozen=True)
class Layer:
    """A layer of the contract.

    Attributes:
        name: the row of docs/architecture.md's layer table that describes it.
        members: installed module names; a package covers its submodules, and ``"pkg.*"`` makes
            each subpackage of ``pkg`` a member of its own (``pkg`` itself is one too).
        independent: members never import one another.
        leaves: no module outside a member imports it.
    """

    name: str
    members: tuple[str, ...]
    independent: bool = False
    leaves: bool = False


# From the bottom up: a module may import its own layer and those below it.
LAYERS = (
    Layer(
        "core",
        (
            "rl4vlm_gym",  # the package's __init__ alone: `import rl4vlm_gym` registers the ids
            "rl4vlm_gym.core",
            "rl4vlm_gym.registry",
            "rl4vlm_gym.games",
            "rl4vlm_gym.parsing",
            "rl4vlm_gym.spaces",
            "rl4vlm_gym.rendering",
            "rl4vlm_gym.wrappers",
            "rl4vlm_gym.curriculum",
            "rl4vlm_gym.wording",
            "rl4vlm_gym.processes",
            "rl4vlm_gym.cache",
            "rl4vlm_gym.patches",
            "rl4vlm_gym.extras",
        ),
    ),
    Layer("env families", ("rl4vlm_gym.envs.*",), independent=True, leaves=True),
    Layer("agents", ("rl4vlm_gym.prompts", "rl4vlm_gym.agents")),
    Layer("backends", ("rl4vlm_gym.backends",)),
    Layer("harness", ("rl4vlm_gym.harness", "rl4vlm_gym.suites")),
    Layer(
        "services and tooling",
        ("rl4vlm_gym.server", "rl4vlm_gym.integrations", "rl4vlm_gym.testing", "rl4vlm_gym.docs", "rl4vlm_gym.scaffold"),
    ),
    Layer("baselines", ("rl4vlm_gym.baselines",)),
    Layer("applications", ("rl4vlm_gym.cli",)),
)

# (importer, imported) -> why the contract allows it; both are module names or package prefixes.
# None today: no family shares code with another, and no family imports the harness.
EXCEPTIONS: Mapping[tuple[str, str], str] = {}


# The code ---------------------------------------------------------------------------------------


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """Installed package name -> its folder in the repository (setup.cfg's ``package_dir``)."""
    config = configparser.ConfigParser()
    config.read(root / "setup.cfg", encoding="utf-8")
    pairs = (line.split("=") for line in config["options"]["package_dir"].strip().splitlines())
    return {name.strip(): root / folder.strip() for name, folder in pairs}


def iter_modules(dirs: Mapping[str, Path]) -> Iterator[tuple[str, Path]]:
    """``(installed module name, file)`` of every ``.py`` file under the package folders."""
    for package, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join((package, *parts)), path


@dataclass(frozen=True)
class Import:
    """``importer`` imports ``imported`` at ``path``:``line``."""

    importer: str
    imported: str
    path: Path
    line: int


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _absolute(name: str, level: int, package: str) -> str:
    """The absolute name of ``from <level dots><name> import ...`` in ``package``."""
    if not level:
        return name
    anchor = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join([*anchor, *([name] if name else [])])


def _nearest(name: str, known: frozenset[str]) -> str | None:
    """The nearest known module: ``import a.b.c`` of a package ``a.b`` without a module ``c`` is ``a.b``."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, known: frozenset[str], source: str | None = None) -> Iterator[Import]:
    """Every import of a module of ``known`` that ``module`` makes, anywhere in its file."""
    package = _package_of(module, path)
    tree = ast.parse(path.read_bytes() if source is None else source, str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            # `from pkg import sub` imports the module pkg.sub where there is one
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in {"import_module", "__import__"})
            )
        ):
            names = [node.args[0].value]
        for name in {n for n in (_nearest(x, known) for x in names) if n}:
            yield Import(module, name, path, node.lineno)


# Parsing every file takes seconds; a file whose text names no module it may not import is clean
# without parsing. The text is searched for a superset of what the file can import: every dotted
# name of the package anywhere in it, the names after each `from X import`, and literal names
# given to import_module / __import__ (test_the_search_finds_every_import holds the superset).
_MENTION = re.compile(r"(?<![\w.])rl4vlm_gym(?:\.\w+)*")
_FROM = re.compile(r"^[ \t]*from[\s\\]+(\.*)([\w.]*)[\s\\]+import[\s\\]+(\([^)]*\)|[^\n]*)", re.M)
_DYNAMIC = re.compile(r"(?:import_module|__import__)\(\s*[\"']([\w.]+)[\"']")


def mentioned(module: str, path: Path, source: str, known: frozenset[str]) -> set[str]:
    """The modules of ``known`` that the text of ``module`` names: a superset of those it imports."""
    names = set(_MENTION.findall(source)) | set(_DYNAMIC.findall(source))
    package = _package_of(module, path)
    for dots, name, what in _FROM.findall(source):
        base = _absolute(name, len(dots), package)
        names.add(base)
        names.update(f"{base}.{part}" for part in re.findall(r"\w+", re.sub(r"#[^\n]*", "", what)))
    return {n for n in (_nearest(x, known) for x in names) if n}


def _covers(prefix: str, module: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def member_of(module: str, layers: Iterable[Layer] = LAYERS) -> tuple[int, str] | None:
    """The layer index of ``module`` and the member it belongs to (the most specific one)."""
    best: tuple[int, str] | None = None
    for index, layer in enumerate(layers):
        for entry in layer.members:
            if entry.endswith(".*"):
                parent = entry[:-2]
                if not _covers(parent, module):
                    continue
                rest = module[len(parent) + 1 :].split(".")[0] if module != parent else ""
                member = f"{parent}.{rest}" if rest else parent
            elif entry == "rl4vlm_gym":
                if module != entry:
                    continue  # the package's __init__ alone, not everything under it
                member = entry
            elif _covers(entry, module):
                member = entry
            else:
                continue
            if best is None or len(member) > len(best[1]):
                best = (index, member)
    return best


def _why(source: tuple[int, str] | None, target: tuple[int, str] | None, layers: tuple[Layer, ...]) -> str | None:
    """Why the contract refuses an import from member ``source`` of member ``target``, or ``None``."""
    if source is None or target is None or source[1] == target[1]:
        return None
    (i, member), (j, other) = source, target
    if j > i:
        return f"the {layers[i].name} layer imports the {layers[j].name} layer above it"
    if j == i and layers[i].independent:
        return f"{member} imports {other}: the members of the {layers[i].name} layer are independent"
    if layers[j].leaves:
        return f"{member} imports {other}, which is reached only through its entry points"
    return None


def violations(
    dirs: Mapping[str, Path], layers: tuple[Layer, ...] = LAYERS, exceptions: Mapping[tuple[str, str], str] = EXCEPTIONS
) -> tuple[list[str], list[str], set[tuple[str, str]]]:
    """The contract's verdict on the code under ``dirs``: (broken imports, modules no layer
    places, exceptions used)."""
    modules = dict(iter_modules(dirs))
    known = frozenset(modules)
    root = Path(os.path.commonpath(list(dirs.values())))
    broken: list[str] = []
    unplaced = sorted(m for m in modules if member_of(m, layers) is None)
    used: set[tuple[str, str]] = set()
    for module, path in modules.items():
        source = member_of(module, layers)
        text = path.read_text(encoding="utf-8")
        if source is None or not any(_why(source, member_of(m, layers), layers) for m in mentioned(module, path, text, known)):
            continue
        for imp in sorted(imports_of(module, path, known, text), key=lambda imp: (imp.line, imp.imported)):
            why = _why(source, member_of(imp.imported, layers), layers)
            if why is None:
                continue
            allowed_by = next((k for k in exceptions if _covers(k[0], module) and _covers(k[1], imp.imported)), None)
            if allowed_by is not None:
                used.add(allowed_by)
            else:
                broken.append(f"{imp.path.relative_to(root).as_posix()}:{imp.line}: {module} imports {imp.imported}: {why}")
    return broken, unplaced, used


@functools.cache
def verdict() -> tuple[list[str], list[str], set[tuple[str, str]]]:
    return violations(package_dirs())


def test_every_import_keeps_the_layers() -> None:
    broken, _, _ = verdict()
    assert not broken, "imports against docs/architecture.md's layers:\n" + "\n".join(broken)


def test_every_module_is_placed_in_a_layer() -> None:
    _, unplaced, _ = verdict()
    assert not unplaced, (
        f"place these modules in a layer of LAYERS (tests/test_architecture.py) and of docs/architecture.md: {unplaced}"
    )


def test_every_exception_is_still_needed_and_every_member_exists() -> None:
    _, _, used = verdict()
    assert set(EXCEPTIONS) <= used, f"exceptions no import needs any more: {sorted(set(EXCEPTIONS) - used)}"
    modules = {m for m, _ in iter_modules(package_dirs())}
    for layer in LAYERS:
        for entry in layer.members:
            assert any(_covers(entry.removesuffix(".*"), m) for m in modules), f"{entry} (layer {layer.name}) names no module"


# The check itself, on a small tree of the same shape --------------------------------------------


def _tree(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return {"rl4vlm_gym": root / "rl4vlm_gym", "rl4vlm_gym.envs": root / "envs", "rl4vlm_gym.baselines": root / "baselines"}


CLEAN = {
    "rl4vlm_gym/__init__.py": "from rl4vlm_gym.core import VLMEnv\n",
    "rl4vlm_gym/core.py": "import numpy\n",
    "rl4vlm_gym/games.py": "",
    "rl4vlm_gym/harness/__init__.py": "",
    "rl4vlm_gym/harness/matches.py": "from rl4vlm_gym.games import GameSpec\nfrom . import runner\n",
    "rl4vlm_gym/harness/runner.py": "import rl4vlm_gym\n",
    "rl4vlm_gym/cli.py": "def main():\n    from rl4vlm_gym.harness import matches\n",
    "envs/__init__.py": "",
    "envs/cards/__init__.py": "from rl4vlm_gym.registry import register\n",
    "envs/cards/deck.py": "from .__init__ import register\nfrom rl4vlm_gym.envs.cards import deck\n",
    "envs/games/__init__.py": "",
    "envs/games/arena.py": "from rl4vlm_gym.games import GameSpec, register_game\n",
    "baselines/__init__.py": "",
    "baselines/trainer.py": "from rl4vlm_gym.harness.runner import load_episodes\n",
    "rl4vlm_gym/registry.py": "ENTRY = 'rl4vlm_gym.envs.cards:register'  # a string, not an import\n",
}


@pytest.mark.parametrize(
    ("file", "text", "problem"),
    [
        (  # a family imports the harness, lazily
            "envs/games/arena.py",
            "def register():\n    from rl4vlm_gym.harness.matches import GameSpec\n",
            "envs/games/arena.py:2: rl4vlm_gym.envs.games.arena imports rl4vlm_gym.harness.matches: the env families layer imports the harness",
        ),
        (  # the core imports a family, lazily and relatively
            "rl4vlm_gym/core.py",
            "def f():\n    from .envs.cards import deck\n",
            "core.py:2: rl4vlm_gym.core imports rl4vlm_gym.envs.cards.deck: the core layer imports the env families layer above it",
        ),
        (  # the core imports a family by importlib
            "rl4vlm_gym/core.py",
            "import importlib\nimportlib.import_module('rl4vlm_gym.envs.games.arena')\n",
            "rl4vlm_gym/core.py:2: rl4vlm_gym.core imports rl4vlm_gym.envs.games.arena",
        ),
        (  # the core imports the harness under TYPE_CHECKING
            "rl4vlm_gym/games.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import rl4vlm_gym.harness.runner\n",
            "the core layer imports the harness layer above it",
        ),
        (  # one family imports another
            "envs/cards/deck.py",
            "from rl4vlm_gym.envs import games\n",
            "rl4vlm_gym.envs.cards imports rl4vlm_gym.envs.games: the members of the env families layer are independent",
        ),
        (  # the harness imports a family
            "rl4vlm_gym/harness/runner.py",
            "from rl4vlm_gym.envs.cards.deck import Deck\n",
            "rl4vlm_gym.harness imports rl4vlm_gym.envs.cards, which is reached only through its entry points",
        ),
        (  # a family imports the harness through the package, in parentheses over lines
            "envs/cards/deck.py",
            "try:\n    from rl4vlm_gym import (  # the runner\n        registry,\n        harness,\n    )\nexcept ImportError:\n    pass\n",
            "envs/cards/deck.py:2: rl4vlm_gym.envs.cards.deck imports rl4vlm_gym.harness: the env families layer imports the harness",
        ),
        (  # the harness imports a baseline
            "rl4vlm_gym/harness/runner.py",
            "def f():\n    import rl4vlm_gym.baselines.trainer\n",
            "the harness layer imports the baselines layer above it",
        ),
    ],
)
def test_the_check_sees_every_kind_of_import(tmp_path: Path, file: str, text: str, problem: str) -> None:
    clean = _tree(tmp_path, CLEAN)
    assert violations(clean) == ([], [], set())
    _tree(tmp_path, {file: text})
    broken, _, _ = violations(clean)
    assert len(broken) == 1 and problem in broken[0], broken


@pytest.mark.slow
def test_the_search_finds_every_import() -> None:
    """What :func:`mentioned` finds in a file's text is a superset of what its AST imports."""
    modules = dict(iter_modules(package_dirs()))
    known = frozenset(modules)
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        missed = {imp.imported for imp in imports_of(module, path, known, text)} - mentioned(module, path, text, known)
        assert not missed, f"{path}: the text search misses {missed}"


def test_an_exception_allows_its_import_and_a_new_module_must_be_placed(tmp_path: Path) -> None:
    dirs = _tree(tmp_path, {**CLEAN, "envs/cards/deck.py": "from rl4vlm_gym.envs.games import arena\n", "rl4vlm_gym/new.py": ""})
    allowed = {("rl4vlm_gym.envs.cards", "rl4vlm_gym.envs.games.arena"): "a test"}
    assert violations(dirs, exceptions=allowed) == ([], ["rl4vlm_gym.new"], set(allowed))


# The page ---------------------------------------------------------------------------------------


def layer_table(page: str) -> list[tuple[str, str]]:
    """(layer, where) of each row of the page's layer table, top row first."""
    section = page.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    return [(cells[0].strip(), cells[1]) for cells in rows[2:]]  # after the header and its rule


def repository_path(member: str, dirs: Mapping[str, Path], root: Path = ROOT) -> str:
    """How the page names a member: its folder (``rl4vlm_gym/harness/``) or file (``rl4vlm_gym/core.py``)."""
    package = max((p for p in dirs if _covers(p, member)), key=len)
    folder = dirs[package].joinpath(*member[len(package) :].split(".")[1:])
    if member == "rl4vlm_gym":
        return "rl4vlm_gym/__init__.py"
    if folder.is_dir():
        return folder.relative_to(root).as_posix() + "/"
    return folder.with_suffix(".py").relative_to(root).as_posix()


def test_the_page_s_layer_table_is_the_contract() -> None:
    table = layer_table(PAGE.read_text(encoding="utf-8"))
    assert [name for name, _ in table] == [layer.name for layer in reversed(LAYERS)], "the page's rows, top first"
    where = dict(table)
    dirs = package_dirs()
    members = {member_of(m)[1] for m, _ in iter_modules(dirs) if member_of(m) is not None}
    missing = []
    for member in sorted(members):
        index, _ = member_of(member)
        path = repository_path(member, dirs)
        if f"`{path}`" not in where[LAYERS[index].name]:
            missing.append(f"`{path}` in the row {LAYERS[index].name!r}")
    assert not missing, "docs/architecture.md's layer table does not name: " + ", ".join(missing)


_PATH = re.compile(r"`([A-Za-z0-9_.<>*-]+(?:/[A-Za-z0-9_.<>*-]*)+)`")  # `a/b.c`, `envs/<family>/`
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def cited_paths(page: str, root: Path = ROOT) -> set[str]:
    """Repository paths the page cites: in code spans (starting at a top-level folder of the
    repository) and in relative links (from docs/)."""
    tops = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}
    spans = {m for m in _PATH.findall(page) if m.split("/")[0] in tops}
    links = {
        os.path.relpath((PAGE.parent / m).resolve(), root)
        for m in _LINK.findall(page)
        if "://" not in m and not m.startswith("mailto:")
    }
    return spans | {Path(link).as_posix() for link in links}


def test_every_path_the_page_cites_exists() -> None:
    # a placeholder (`envs/<family>/`) must match at least one path
    missing = [p for p in sorted(cited_paths(PAGE.read_text(encoding="utf-8"))) if not any(ROOT.glob(re.sub(r"<[^>]+>", "*", p)))]
    assert not missing, f"docs/architecture.md cites paths that are not in the repository: {missing}"


# Design notes kept outside the repository; a citation of them means nothing to a reader of it.
_NOTES = re.compile(r"\breference/[\w-]+\.md")
_DOCS = re.compile(r"(?<![\w/.])docs/[\w./-]+\.md")
# docs/ paths of other repositories that our code names, with the repository
FOREIGN_DOCS = {("rl4vlm_gym/agents/demos.py", "docs/few_shot_learning.md"): "BALROG's documentation"}
_TEXT = {".py", ".md", ".yaml", ".yml", ".sh", ".cfg", ".toml", ".txt", ".tmpl", ".html"}


def _text_files(root: Path = ROOT) -> Iterator[Path]:
    for top in sorted(root.iterdir()):
        if top.name.startswith(".") or top.name in {"build", "dist", "node_modules"} or top.name.endswith(".egg-info"):
            continue
        files = [top] if top.is_file() else top.rglob("*")
        yield from (p for p in files if p.suffix in _TEXT and p.is_file() and p != Path(__file__).resolve())


def test_every_citation_of_a_file_resolves() -> None:
    notes, docs = [], []
    for path in _text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        name = path.relative_to(ROOT).as_posix()
        notes += [f"{name}: {m}" for m in _NOTES.findall(text)]
        if path.suffix in {".py", ".yaml", ".yml", ".sh", ".cfg", ".toml"} and not name.startswith("tests/"):
            docs += [f"{name}: {m}" for m in _DOCS.findall(text) if not (ROOT / m).is_file() and (name, m) not in FOREIGN_DOCS]
    assert not notes, f"citations of notes that are not in the repository (cite the paper, repository or file instead): {notes}"
    assert not docs, f"code cites docs/ pages that do not exist: {docs}"
    stale = [k for k in FOREIGN_DOCS if k[1] not in (ROOT / k[0]).read_text(encoding="utf-8")]
    assert not stale, f"FOREIGN_DOCS entries no file cites any more: {stale}"
