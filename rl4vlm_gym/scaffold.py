"""``rl4vlm-gym new-env``: write a new env family, in this repository or as a plugin package.

The family holds a small, correct example env (a grid walk subclassing :class:`VLMEnv`, with
levels, two reward variants, ``state_key``, an oracle with ``optimal_steps``, every docstring
section and an :class:`EnvCard`), a test file and its docs page, and passes the conformance kit
as written. Templates are package data (``rl4vlm_gym/templates/new_env``), filled with
:class:`string.Template` (``${name}`` placeholders never clash with Python's braces).

- ``repo``: ``envs/<family>/`` of an RL4VLM Gym checkout, its package and entry point added to
  ``setup.cfg``, ``tests/envs/<family>/test_<family>.py`` and ``docs/envs/<namespace>/<Name>-v0.md``.
- ``plugin``: a standalone package ``<dest>/`` with ``pyproject.toml`` (the ``rl4vlm_gym.envs``
  entry point), the package ``rl4vlm_<family>/``, ``tests/`` (rules and the kit) and ``docs/``.
"""

from __future__ import annotations

import keyword
import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

__all__ = ["ScaffoldError", "Scaffold", "new_env"]

_FAMILY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_CLASS = re.compile(r"^[A-Z][A-Za-z0-9]{0,59}$")
_NAMESPACE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_ENTRY_GROUP = "rl4vlm_gym.envs ="


class ScaffoldError(ValueError):
    """The family cannot be written as asked; the message says why and what to change."""


@dataclass(frozen=True)
class Scaffold:
    """What ``new-env`` writes: names derived once, checked on construction.

    Attributes:
        family: the family's name, a lower-case Python identifier (``"gridgames"``).
        class_name: the example env's class, CamelCase (``"GridWalk"``); the id is
            ``<namespace>/<class_name>-v0``.
        plugin: a standalone package instead of a folder of this repository.
        namespace: the id's namespace (``"rl4vlm"`` in the repository, the family's name in a plugin).
    """

    family: str
    class_name: str
    plugin: bool = False
    namespace: str | None = None

    def __post_init__(self) -> None:
        if not _FAMILY.match(self.family) or keyword.iskeyword(self.family):
            raise ScaffoldError(
                f"family {self.family!r} is not a valid name: use lower-case letters, digits and '_', starting with a letter"
            )
        if not _CLASS.match(self.class_name):
            raise ScaffoldError(f"env name {self.class_name!r} is not valid: use CamelCase letters and digits, e.g. GridWalk")
        if self.namespace is not None and not _NAMESPACE.match(self.namespace):
            raise ScaffoldError(f"namespace {self.namespace!r} is not valid: use lower-case letters, digits, '_' and '-'")

    @property
    def ns(self) -> str:
        return self.namespace or (self.family if self.plugin else "rl4vlm")

    @property
    def env_id(self) -> str:
        return f"{self.ns}/{self.class_name}-v0"

    @property
    def module(self) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.class_name).lower()

    @property
    def package(self) -> str:
        """The import path of the family's package."""
        return f"rl4vlm_{self.family}" if self.plugin else f"rl4vlm_gym.envs.{self.family}"

    @property
    def dist_name(self) -> str:
        return f"rl4vlm-{self.family.replace('_', '-')}"

    def fields(self) -> dict[str, str]:
        from rl4vlm_gym.docs import page_path

        plugin_test = (
            "\n\n@pytest.mark.parametrize(\"check\", list(CHECKS))\n"
            "def test_conformance(check: str) -> None:\n"
            '    """The conformance kit, as `rl4vlm-gym check` runs it."""\n'
            "    CHECKS[check](ENV_ID)\n"
        )
        return {
            "family": self.family,
            "family_title": self.family.replace("_", " ").title(),
            "class_name": self.class_name,
            "env_id": self.env_id,
            "entry_point": f"{self.package}.{self.module}:{self.class_name}",
            "module": self.module,
            "package": self.package,
            "dist_name": self.dist_name,
            "doc_page": page_path(self.env_id),
            "plugin_note": f" (the {self.dist_name} plugin of RL4VLM Gym)" if self.plugin else " of RL4VLM Gym",
            "kit_note": ", and the conformance kit on it" if self.plugin else " (tests/test_conformance.py runs the conformance kit on it)",
            # isort: rl4vlm_gym is first-party in the repository, a third-party package to a plugin
            "first_party": "" if self.plugin else "\n",
            "kit_imports": "from rl4vlm_gym.testing import CHECKS\n" if self.plugin else "",
            "kit_test": plugin_test if self.plugin else "",
        }


def _template(name: str) -> Template:
    return Template((resources.files("rl4vlm_gym") / "templates" / "new_env" / name).read_text(encoding="utf-8"))


def _write(path: Path, text: str) -> Path:
    if path.exists():
        raise ScaffoldError(f"{path} already exists; choose another family or env name, or remove it")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _files(scaffold: Scaffold, dest: Path) -> dict[Path, str]:
    fields = scaffold.fields()
    code = {name: _template(f"{name}.tmpl").substitute(fields) for name in ("env.py", "family_init.py", "test_family.py")}
    if scaffold.plugin:
        package = dest / scaffold.package
        return {
            dest / "pyproject.toml": _template("pyproject.toml.tmpl").substitute(fields),
            dest / "README.md": _template("README.md.tmpl").substitute(fields),
            package / "__init__.py": code["family_init.py"],
            package / f"{scaffold.module}.py": code["env.py"],
            dest / "tests" / f"test_{scaffold.family}.py": code["test_family.py"],
        }
    family_dir = dest / "envs" / scaffold.family
    return {
        family_dir / "__init__.py": code["family_init.py"],
        family_dir / f"{scaffold.module}.py": code["env.py"],
        dest / "tests" / "envs" / scaffold.family / f"test_{scaffold.family}.py": code["test_family.py"],
    }


def _edited_setup_cfg(scaffold: Scaffold, setup_cfg: Path) -> str:
    """setup.cfg with the family's package and entry point added, its layout kept."""
    lines = setup_cfg.read_text(encoding="utf-8").splitlines()
    package_line = f"    {scaffold.package}"
    entry_line = f"    {scaffold.family} = {scaffold.package}:register"
    if package_line in lines or any(line.strip().startswith(f"{scaffold.family} =") for line in lines):
        raise ScaffoldError(f"setup.cfg already names the family {scaffold.family!r}")
    last_family = max((i for i, line in enumerate(lines) if line.startswith("    rl4vlm_gym.envs.")), default=None)
    group = next((i for i, line in enumerate(lines) if line.strip() == _ENTRY_GROUP), None)
    if last_family is None or group is None:
        raise ScaffoldError(f"{setup_cfg} has no `rl4vlm_gym.envs.*` packages or no `{_ENTRY_GROUP}` entry-point group")
    end = group + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    lines.insert(end, entry_line)
    lines.insert(last_family + 1, package_line)
    return "\n".join(lines) + "\n"


def _edited_architecture(scaffold: Scaffold, page: Path) -> str | None:
    """docs/architecture.md with the family's folder in the layer table's "env families" row, among the
    others in alphabetical order (tests/test_architecture.py holds the page to every module); None when
    the checkout has no such page or row (an old or trimmed checkout: nothing to keep in step)."""
    if not page.is_file():
        return None
    lines = page.read_text(encoding="utf-8").splitlines()
    row = next((i for i, line in enumerate(lines) if line.startswith("| env families |")), None)
    if row is None:
        return None
    named = re.findall(r"`envs/([a-z0-9_]+)/`", lines[row])
    if not named:
        return None
    after = max((f for f in named if f < scaffold.family), default=None)
    ours = f"`envs/{scaffold.family}/`"
    if after is None:
        lines[row] = lines[row].replace(f"`envs/{named[0]}/`", f"{ours}, `envs/{named[0]}/`", 1)
    else:
        lines[row] = lines[row].replace(f"`envs/{after}/`", f"`envs/{after}/`, {ours}", 1)
    return "\n".join(lines) + "\n"


# Run in a child process: the new family is imported from `dest` (not from wherever this process
# imports rl4vlm_gym from) and its registration does not leak into the caller's registry.
_DOCS_CHILD = """
import importlib, sys
from pathlib import Path
import rl4vlm_gym.envs
mode, dest, package, env_id, out = sys.argv[1:]
if mode == "repo":
    rl4vlm_gym.envs.__path__.insert(0, str(Path(dest) / "envs"))
else:
    sys.path.insert(0, dest)
importlib.import_module(package).register()
from rl4vlm_gym.docs import write_page
write_page(env_id, Path(out))
"""


def _write_docs(scaffold: Scaffold, dest: Path, out: Path) -> Path:
    from rl4vlm_gym.docs import page_path

    mode = "plugin" if scaffold.plugin else "repo"
    done = subprocess.run(
        [sys.executable, "-c", _DOCS_CHILD, mode, str(dest), scaffold.package, scaffold.env_id, str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ScaffoldError(f"the docs page of {scaffold.env_id} could not be generated:\n{done.stderr[-3000:]}")
    return out / page_path(scaffold.env_id)


def new_env(scaffold: Scaffold, dest: str | Path) -> list[Path]:
    """Write ``scaffold``'s family under ``dest``; return the files written (or changed).

    ``dest`` is the repository's root (``plugin=False``) or the new package's folder (``plugin=True``,
    created if missing, and it must not hold a ``pyproject.toml`` yet).
    """
    root = Path(dest)
    if scaffold.plugin:
        if (root / "pyproject.toml").exists():
            raise ScaffoldError(f"{root} already holds a pyproject.toml; give an empty or new folder for the plugin")
    else:
        if not (root / "setup.cfg").is_file() or not (root / "envs" / "__init__.py").is_file():
            raise ScaffoldError(
                f"{root} is not an RL4VLM Gym checkout (no setup.cfg and envs/); run new-env from the repository's root, "
                "or pass --plugin to write a standalone package"
            )
        if (root / "envs" / scaffold.family).exists():
            raise ScaffoldError(f"envs/{scaffold.family} already exists in {root}")
    files = _files(scaffold, root)
    for path in files:
        if path.exists():
            raise ScaffoldError(f"{path} already exists; choose another family or env name, or remove it")
    setup_cfg = None if scaffold.plugin else _edited_setup_cfg(scaffold, root / "setup.cfg")  # checked before any write
    architecture = None if scaffold.plugin else _edited_architecture(scaffold, root / "docs" / "architecture.md")
    written = [_write(path, text) for path, text in files.items()]
    if setup_cfg is not None:
        (root / "setup.cfg").write_text(setup_cfg, encoding="utf-8")
        written.append(root / "setup.cfg")
    if architecture is not None:
        (root / "docs" / "architecture.md").write_text(architecture, encoding="utf-8")
        written.append(root / "docs" / "architecture.md")
    written.append(_write_docs(scaffold, root, root / ("docs" if scaffold.plugin else "docs/envs")))
    return written
