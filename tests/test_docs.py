"""The committed env docs (docs/envs) are what `rl4vlm-gym docs` generates from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

import rl4vlm_gym
from rl4vlm_gym.docs import write_docs

COMMITTED = Path(__file__).resolve().parents[1] / "docs" / "envs"


@pytest.mark.extra(*sorted({card.extra for card in rl4vlm_gym.list_envs() if card.extra}))  # every env draws its image
def test_committed_docs_match_the_code(tmp_path: Path) -> None:
    generated = {page.name: page.read_text(encoding="utf-8") for page in write_docs(tmp_path)}
    committed = {page.name: page.read_text(encoding="utf-8") for page in COMMITTED.glob("*.md")}
    assert committed.keys() == generated.keys(), "regenerate with: rl4vlm-gym docs docs/envs"
    for name, text in generated.items():
        assert committed[name] == text, f"docs/envs/{name} is stale; regenerate with: rl4vlm-gym docs docs/envs"
