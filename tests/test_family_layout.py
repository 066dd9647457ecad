"""Every env family names its role files the same way (CONTRIBUTING.md, "A family's files"): the
solver is an ``oracle``, the drawing a ``renderer``, shipped files live in ``assets/``, so a newcomer
finds each in any family at the same place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ENVS = Path(__file__).resolve().parents[1] / "envs"
# A role's other names, and the name CONTRIBUTING.md's table gives that role.
OTHER_NAMES = {
    "solver": "oracle",
    "planner": "oracle",
    "strategy": "oracle",
    "render": "renderer",
    "drawing": "renderer",
    "data": "assets",
}


def misnamed(root: Path) -> list[str]:
    """``root``'s files and folders whose name (or a ``_``-separated part of it) is another name for a role."""
    found = []
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or not (path.is_dir() or path.suffix == ".py"):
            continue
        words = re.split(r"[_.]", path.stem if path.is_file() else path.name)
        for word in words:
            if word in OTHER_NAMES:
                found.append(f"{path.relative_to(root).as_posix()}: a {OTHER_NAMES[word]} role under another name ({word!r})")
    return found


def test_every_family_names_its_role_files_by_their_role() -> None:
    assert misnamed(ENVS) == []


@pytest.mark.parametrize(
    ("name", "is_dir"),
    [("solver.py", False), ("babyai_planner.py", False), ("blackjack_strategy.py", False), ("render.py", False), ("data", True)],
)
def test_a_role_file_under_another_name_is_refused(tmp_path: Path, name: str, is_dir: bool) -> None:
    family = tmp_path / "gridgames"
    family.mkdir()
    (family / "oracle.py").write_text("")
    (family / "renderer.py").write_text("")
    (family / "assets").mkdir()
    assert misnamed(tmp_path) == []
    (family / name).mkdir() if is_dir else (family / name).write_text("")
    assert [line.split(":")[0] for line in misnamed(tmp_path)] == [f"gridgames/{name}"]
