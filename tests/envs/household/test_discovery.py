"""ALFWorld game discovery (:func:`rl4vlm_gym.envs.household.alfworld.find_games`) without ALFWorld's data.

test_alfworld.py plays the real games and is skipped when discovery finds none: a discovery bug
there turns its tests into skips, not failures. Here discovery runs on a layout written by the test,
game files as ALFWorld writes them (one JSON object, ``"solvable"`` its last key) and the ones it
must pass over, so it fails loudly with or without the data. Needs no extra (no game is played)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rl4vlm_gym.core import MissingDataError
from rl4vlm_gym.envs.household.alfworld import GAME_FILE, find_games, task_type
from rl4vlm_gym.envs.household.goals import TASK_TYPES

PROBLEM = "(define (problem plan_trial)\n    (:domain alfred)\n" + "    (:objects apple_1 - object)\n" * 12 + ")\n"


def _game(folder: Path, *, solvable: object = True, first: bool = False) -> str:
    """A game file of ALFWorld's layout (``solvable`` last), or with ``solvable`` first and a long
    problem after it (``first``: the tail does not answer, the file is read in full)."""
    fields = {"pddl_domain": ";; the Alfred domain\n", "grammar": "{}", "pddl_problem": PROBLEM}
    content = {"solvable": solvable, **fields} if first else {**fields, "solvable": solvable}
    folder.mkdir(parents=True)
    (folder / GAME_FILE).write_text(json.dumps(content))
    return str(folder / GAME_FILE)


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, dict[str, list[str]]]:
    """``<data>/json_2.1.1/<split>/<task>-<Obj>-<MRecep>-<Recep>-<scene>/trial_*/game.tw-pddl``: per
    split the games discovery must find, beside games it must skip."""
    found: dict[str, list[str]] = {"valid_unseen": [], "train": []}
    for split in found:
        root = tmp_path / "json_2.1.1" / split
        for i, task in enumerate(TASK_TYPES):
            found[split].append(_game(root / f"{task}-Apple-None-Fridge-{10 + i}" / "trial_T1", first=i == 2))
        found[split].append(_game(root / "pick_and_place_simple-Book-None-Desk-301" / "trial_T2"))  # a second trial
        # ALFWorld skips these: unsolvable, movable or sliced objects
        _game(root / "pick_and_place_simple-Mug-None-Desk-302" / "trial_T1", solvable=False)
        _game(root / "pick_and_place_simple-Mug-None-Desk-303" / "trial_T1", solvable=False, first=True)
        _game(root / "pick_and_place_simple-AppleSliced-None-Fridge-1" / "trial_T1")
        _game(root / "pick_and_place_simple-movable-None-Fridge-2" / "trial_T1")
        # not a game: not JSON, not an object, no "solvable"
        for name, text in (("304", "{not json"), ("305", "[1]"), ("306", json.dumps({"pddl_problem": PROBLEM}))):
            folder = root / f"pick_and_place_simple-Mug-None-Desk-{name}" / "trial_T1"
            folder.mkdir(parents=True)
            (folder / GAME_FILE).write_text(text)
        (root / "pick_and_place_simple-Book-None-Desk-301" / "loop").symlink_to(root, target_is_directory=True)
        found[split].sort()
    return tmp_path, found


def test_discovery_finds_exactly_the_solvable_games_sorted(data: tuple[Path, dict[str, list[str]]]) -> None:
    base, found = data
    assert find_games(base, "valid_unseen") == tuple(found["valid_unseen"])
    assert find_games(base, "train") == tuple(found["train"])
    assert find_games(base) == tuple(sorted(found["valid_unseen"] + found["train"]))  # every split
    assert sorted(task_type(g) for g in found["train"]) == sorted([*TASK_TYPES, "pick_and_place_simple"])


def test_a_split_is_looked_up_in_json_2_1_1_then_beside_it(data: tuple[Path, dict[str, list[str]]]) -> None:
    base, found = data
    os.rename(base / "json_2.1.1" / "train", base / "train")
    assert find_games(base, "train") == tuple(g.replace(os.sep + "json_2.1.1", "") for g in found["train"])
    with pytest.raises(MissingDataError) as err:
        find_games(base, "valid_seen")
    assert str(base / "json_2.1.1" / "valid_seen") in str(err.value) and str(base / "valid_seen") in str(err.value)
    with pytest.raises(ValueError, match="split='test' is unknown"):
        find_games(base, "test")


def test_task_types_filter_by_id_or_name(data: tuple[Path, dict[str, list[str]]]) -> None:
    base, found = data
    games = find_games(base, "valid_unseen", [1, TASK_TYPES[5]])
    assert games == tuple(g for g in found["valid_unseen"] if task_type(g) in (TASK_TYPES[0], TASK_TYPES[5]))
    assert len(games) == 3  # two trials of the first type, one of the sixth
    for bad in ([7], [0], ["cook"], [True], []):
        with pytest.raises(ValueError, match="task_types"):
            find_games(base, "valid_unseen", bad)


def test_a_folder_without_games_is_missing_data(tmp_path: Path) -> None:
    root = tmp_path / "json_2.1.1" / "valid_unseen"
    _game(root / "pick_and_place_simple-Mug-None-Desk-302" / "trial_T1", solvable=False)
    with pytest.raises(MissingDataError, match="no ALFWorld games"):
        find_games(tmp_path, "valid_unseen")
    _game(root / "look_at_obj_in_light-Book-None-DeskLamp-9" / "trial_T1")
    with pytest.raises(MissingDataError, match="none of the 1 ALFWorld games"):
        find_games(tmp_path, "valid_unseen", [TASK_TYPES[0]])
