"""The committed env docs (docs/envs) are what `rl4vlm-gym docs` generates from the code; each page has every section and its image."""

from __future__ import annotations

from pathlib import Path

import pytest
from gymnasium.envs.registration import load_env_creator
from typer.testing import CliRunner

import rl4vlm_gym
from rl4vlm_gym.cli import app
from rl4vlm_gym.docs import SECTIONS, page_path, write_docs
from rl4vlm_gym.registry import list_envs

COMMITTED = Path(__file__).resolve().parents[1] / "docs" / "envs"
# Our own families' ids: installed plugins may add others, whose pages are not committed here.
OURS = [card.id for card in list_envs() if card.entry_point.startswith("rl4vlm_gym.envs.")]


@pytest.mark.slow  # every env draws its image: ~5 s
@pytest.mark.extra(*sorted({card.extra for card in rl4vlm_gym.list_envs() if card.extra}))  # every env draws its image
def test_committed_docs_match_the_code(tmp_path: Path) -> None:
    # One run of `rl4vlm-gym docs` (it draws every env's image: ~5 s) serves both checks: its pages
    # are the committed ones, and each page has every section and its image, linked from the index.
    result = CliRunner().invoke(app, ["docs", str(tmp_path)])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "index.md").read_text()
    for card in rl4vlm_gym.list_envs():
        path = Path(page_path(card.id))  # pages are keyed by the full id: <namespace>/<Name>-vN.md
        assert f"]({path.as_posix()})" in index
        page = (tmp_path / path).read_text()
        assert all(f"## {section}" in page for section in SECTIONS)
        name = path.stem
        image = tmp_path / path.parent / "img" / f"{name}.png"
        if load_env_creator(card.entry_point).NEEDS_DATA:  # its example would depend on the machine's data
            assert "shows no example" in page and not image.exists()
        else:
            assert f"![{card.id}, seed 0](img/{name}.png)" in page
            assert image.exists()
        assert "| event |" in page and "| level |" in page
    root = tmp_path
    if sorted(card.id for card in list_envs()) != sorted(OURS):  # installed plugins add pages and index rows
        root = tmp_path / "ours"
        write_docs(root, OURS)
    generated = {page.relative_to(root).as_posix(): page.read_text(encoding="utf-8") for page in root.rglob("*.md")}
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
    assert not (tmp_path / "rl4vlm" / "NumberLine-v0.md").exists()
    # a page not in the folder is listed without a link (a plugin's index had 60 broken links of 61)
    assert "| rl4vlm/NumberLine-v0 | cards |" in index and "](rl4vlm/ColourNaming-v0.md)" in index
    write_docs(tmp_path, ["rl4vlm/NumberLine-v0"])  # its page written once, later indexes link it
    again = write_docs(tmp_path, ["rl4vlm/ColourNaming-v0"], index_ids=["rl4vlm/ColourNaming-v0", "rl4vlm/NumberLine-v0"])
    assert "](rl4vlm/NumberLine-v0.md)" in again[0].read_text(encoding="utf-8")
