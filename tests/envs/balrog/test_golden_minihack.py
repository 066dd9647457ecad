"""balrog/MiniHack-*-v0 against BALROG's own wrappers, byte for byte (golden/minihack/minihack.json.gz,
made by golden/minihack/record.py from BALROG af7d1f17 with balrog-ai/minihack 3ecb6da4 on balrog-nle
0.9.0): BALROG's eight tasks, 6 seeds each, in both text modes: the instruction prompt, the action
list, every long- and short-term context, the image's hash (VLM mode), the rewards, the ends of
episodes and ``get_stats()``; and the shipped Boxoban levels against the lists BALROG played."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

# the replay of recorded episodes is test_golden_nle's (pytest's importlib mode: loaded by path)
_spec = importlib.util.spec_from_file_location("_golden_nle", Path(__file__).with_name("test_golden_nle.py"))
_golden_nle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_golden_nle)
replay_all = _golden_nle.replay_all

pytestmark = pytest.mark.extra("nethack")

DATA = Path(__file__).parent / "golden" / "minihack" / "minihack.json.gz"
TASKS = (
    "Boxoban-Hard",
    "Boxoban-Medium",
    "MazeWalk-9x9",
    "MazeWalk-15x15",
    "Corridor-R3",
    "CorridorBattle-Dark",
    "Quest-Easy",
    "Quest-Medium",
)


@cache
def golden() -> dict[str, Any]:
    return json.loads(gzip.decompress(DATA.read_bytes()))


def test_recording_covers_balrogs_eight_tasks_with_its_kwargs() -> None:
    data = golden()
    assert data["tasks"] == [f"MiniHack-{name}-v0" for name in TASKS]
    assert data["header"]["balrog"]["commit"].startswith("af7d1f17e0deec3a7a0e334beae5f11b7a21371b")
    assert data["header"]["minihack"]["commit"].startswith("3ecb6da4eadcac7a4dbc5f8e801ccf636e34d7ec")
    assert data["header"]["kwargs"] == {
        "character": "@",
        "max_episode_steps": 100,
        "penalty_step": -0.01,
        "penalty_time": 0.0,
        "penalty_mode": "constant",
        "savedir": None,
        "save_ttyrec_every": 0,
        "autopickup": False,
        "skip_more": True,
    }


@pytest.mark.parametrize("level_set", ["hard", "medium"])
def test_shipped_boxoban_levels_are_the_ones_recorded(level_set: str) -> None:
    from rl4vlm_gym.envs.balrog.minihack import boxoban_levels

    levels = boxoban_levels(level_set)
    recorded = golden()["header"]["boxoban"][f"MiniHack-Boxoban-{level_set.title()}-v0"]
    assert len(levels) == recorded["levels"] == {"hard": 3332, "medium": 10000}[level_set]
    assert hashlib.sha256("\n".join(levels).encode()).hexdigest() == recorded["sha256"]


@pytest.mark.parametrize("name", TASKS)
def test_minihack_matches_balrogs_transcripts(name: str) -> None:
    data = golden()
    task = f"MiniHack-{name}-v0"
    episodes = [e for e in data["episodes"] if e["task"] == task]
    assert len({e["seed"] for e in episodes}) >= 5 and {e["mode"] for e in episodes} == {"hybrid", "vlm"}
    for mode in ("hybrid", "vlm"):
        replay_all(f"balrog/{task}", [e for e in episodes if e["mode"] == mode], data["strings"])
