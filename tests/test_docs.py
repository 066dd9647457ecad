"""The committed env docs (docs/envs) are what `rl4vlm-gym docs` generates from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

import rl4vlm_gym
from rl4vlm_gym.docs import page_path, write_docs
from rl4vlm_gym.registry import list_envs

COMMITTED = Path(__file__).resolve().parents[1] / "docs" / "envs"
# Our own families' ids: installed plugins may add others, whose pages are not committed here.
OURS = [card.id for card in list_envs() if card.entry_point.startswith("rl4vlm_gym.envs.")]


@pytest.mark.extra(*sorted({card.extra for card in rl4vlm_gym.list_envs() if card.extra}))  # every env draws its image
def test_committed_docs_match_the_code(tmp_path: Path) -> None:
    generated = {page.relative_to(tmp_path).as_posix(): page.read_text(encoding="utf-8") for page in write_docs(tmp_path, OURS)}
    committed = {page.relative_to(COMMITTED).as_posix(): page.read_text(encoding="utf-8") for page in COMMITTED.rglob("*.md")}
    assert committed.keys() == generated.keys(), "regenerate with: rl4vlm-gym docs docs/envs"
    for name, text in generated.items():
        assert committed[name] == text, f"docs/envs/{name} is stale; regenerate with: rl4vlm-gym docs docs/envs"


@pytest.mark.parametrize(
    ("env_id", "path"),
    [
        ("rl4vlm/Sokoban-v0", "rl4vlm/Sokoban-v0.md"),
        ("mygames/Sokoban-v0", "mygames/Sokoban-v0.md"),  # same name, another family: another page
        ("Sokoban-v1", "Sokoban-v1.md"),
        ("a:b/Name-v0", "a_3a_b/Name-v0.md"),
        ("../Name-v0", "_2e__2e_/Name-v0.md"),
    ],
)
def test_pages_are_keyed_by_the_full_id(env_id: str, path: str) -> None:
    assert page_path(env_id) == path


def test_write_docs_writes_only_the_ids_asked_for(tmp_path: Path) -> None:
    pages = write_docs(tmp_path, ["rl4vlm/ColourNaming-v0"])
    assert [p.relative_to(tmp_path).as_posix() for p in pages] == ["index.md", "rl4vlm/ColourNaming-v0.md"]
    assert (tmp_path / "rl4vlm" / "img" / "ColourNaming-v0.png").is_file()
    assert "](rl4vlm/ColourNaming-v0.md)" in pages[0].read_text(encoding="utf-8")


def test_an_index_lists_other_ids_than_the_pages_written(tmp_path: Path) -> None:
    # `rl4vlm-gym docs --family cards` writes the cards' pages and keeps the whole index
    pages = write_docs(tmp_path, ["rl4vlm/ColourNaming-v0"], index_ids=["rl4vlm/ColourNaming-v0", "rl4vlm/NumberLine-v0"])
    assert [p.relative_to(tmp_path).as_posix() for p in pages] == ["index.md", "rl4vlm/ColourNaming-v0.md"]
    index = pages[0].read_text(encoding="utf-8")
    assert "](rl4vlm/NumberLine-v0.md)" in index and "](rl4vlm/ColourNaming-v0.md)" in index
    assert not (tmp_path / "rl4vlm" / "NumberLine-v0.md").exists()
