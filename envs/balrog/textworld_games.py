"""BALROG's TextWorld games, generated here: a fixed pool of 25 games per task, made offline by
``textworld``'s own challenge generators at first use and kept in a user cache folder.

BALROG plays 25 fixed games per task that its installer downloads from Google Drive
(reference/balrog.md §3); we may not download from file hosts, so game ``k`` of a task is made with
BALROG's settings (``SETTINGS``, unchanged for every task) from textworld seed ``seeds(task)[k]``:
the same seed gives the same game on every machine (the generators draw only from the seed). The
cooking game and coin collector use seeds 0..24. The treasure hunter uses the first 25 seeds whose
games textworld makes within 20 s of CPU time (``data/treasure_hunter_seeds.json``, written by
``scripts/find_treasure_hunter_seeds.py``, which says how). The games are not BALROG's 25.

Cache: ``$RL4VLM_GYM_CACHE/textworld/<task>/<tag>/game-<seed>.z8`` (default
``~/.cache/rl4vlm_gym``) and textworld's ``.json`` beside it; ``<tag>`` names the textworld version
and the settings, so another version or setting never reads stale games. Several processes may make
one game at once (``pytest -n auto``): each builds in its own temporary folder and moves the files in
with ``os.replace`` (the ``.json`` first, so a ``.z8`` in place means the game is complete).

Cost (2 cores shared with other work): a coin collector game takes 2-7 s to make, a cooking game
3-5 s, a treasure hunter game of the pool up to 20 s of CPU. Other treasure hunter seeds (about
half) take from 20 s to over 45 minutes: textworld shortens the quest's walkthrough
(``EventProgression.compress_policy``, whose result the objective's text is written from) by
walking a dependency tree that repeats shared sub-quests, exponential in the locked doors and
containers on the way; that is why the treasure hunter's seeds are chosen.
``python -m rl4vlm_gym.envs.balrog.textworld_games [task ...]`` makes whole pools ahead of time.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from rl4vlm_gym.cache import cache_dir

POOL = 25  # games per task, as BALROG
SEEDS_FILE = Path(__file__).parent / "data" / "treasure_hunter_seeds.json"
TASKS = ("treasure_hunter", "the_cooking_game", "coin_collector")
# BALROG's settings (reference/balrog.md §3): treasure hunter level 30, coin collector level 220
# (60 rooms: a chain of 20 with distractor rooms), the cooking game with 5 ingredients. BALROG's note
# names no other cooking skill: taking all 5, 6 rooms, opening, cooking and cutting is our choice.
SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "treasure_hunter": ("tw-treasure_hunter", {"level": 30}),
    "the_cooking_game": (
        "tw-cooking",
        {
            "recipe": 5,
            "take": 5,
            "go": 6,
            "open": True,
            "cook": True,
            "cut": True,
            "drop": False,
            "recipe_seed": 0,
            "split": None,
        },
    ),
    "coin_collector": ("tw-coin_collector", {"level": 220}),
}


def cache_root() -> Path:
    """``$RL4VLM_GYM_CACHE/textworld`` (default ``~/.cache/rl4vlm_gym/textworld``), as the tiny model's cache."""
    return cache_dir("textworld")


def _tag(task: str) -> str:
    import textworld

    challenge, settings = SETTINGS[task]
    spec = "-".join(f"{k}{int(v) if isinstance(v, bool) else v}" for k, v in sorted(settings.items()) if v is not None)
    return f"textworld{textworld.__version__}-{challenge}-{spec}"


def seeds(task: str) -> tuple[int, ...]:
    """The textworld seeds of ``task``'s pool: game ``k`` is made from ``seeds(task)[k]``.

    The cooking game and coin collector use seeds 0..24. The treasure hunter uses the first 25 seeds
    whose games textworld makes within 20 s (``data/treasure_hunter_seeds.json``, found by
    ``scripts/find_treasure_hunter_seeds.py``): made from seeds 0..24, some of its games take an hour."""
    if task not in SETTINGS:
        raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")
    if task == "treasure_hunter":
        return _treasure_hunter_seeds()
    return tuple(range(POOL))


@functools.cache
def _treasure_hunter_seeds() -> tuple[int, ...]:
    found = json.loads(SEEDS_FILE.read_text())
    assert found["settings"] == SETTINGS["treasure_hunter"][1], "the seed list was found with other settings"
    return tuple(int(seed) for seed in found["seeds"][:POOL])


def game_path(task: str, index: int) -> Path:
    """Where game ``index`` of ``task`` lives in the cache (made or not); the file is named by its seed."""
    if task not in SETTINGS:
        raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")
    if not 0 <= index < POOL:
        raise ValueError(f"game index {index} is outside the pool 0..{POOL - 1}")
    return seed_path(task, seeds(task)[index])


def seed_path(task: str, seed: int) -> Path:
    """Where the game of ``task`` made from textworld seed ``seed`` lives in the cache."""
    return cache_root() / task / _tag(task) / f"game-{seed:02d}.z8"


def missing_games(task: str) -> list[int]:
    """The indices of ``task``'s pool not yet in the cache."""
    return [index for index in range(POOL) if not game_path(task, index).is_file()]


def make_game(task: str, index: int) -> Path:
    """The path of game ``index`` of ``task``, made and cached first if needed."""
    path = game_path(task, index)
    if not path.is_file():
        build_game(task, seeds(task)[index], path)
    return path


def build_game(task: str, seed: int, path: Path) -> None:
    """Make the game of ``task`` from textworld seed ``seed`` with BALROG's settings at ``path``
    (a ``.z8``, textworld's ``.json`` beside it), through a temporary folder beside it."""
    import textworld
    from textworld import GameOptions
    from textworld.challenges import CHALLENGES
    from textworld.generator import compile_game

    challenge, settings = SETTINGS[task]
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.stem}-", dir=path.parent))
    try:
        options = GameOptions()
        options.seeds = seed
        options.path = str(work / "game.z8")
        options.file_ext = ".z8"
        options.force_recompile = True
        # textworld's generators print progress and warn about their own grammar files ("Not enough
        # variation ... falling back on an adjective": the game is made, with another name); a
        # library keeps stdout clean, and the warnings would reach the env's users as theirs.
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", textworld.GenerationWarning)
            game = CHALLENGES[challenge][1](dict(settings), options)
            compiled = Path(compile_game(game, options))
        os.replace(compiled.with_suffix(".json"), path.with_suffix(".json"))
        os.replace(compiled, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    """Make the whole pool of each task named (all three by default), printing each game's path and
    the seconds it took (0 when it was in the cache)."""
    for task in argv or TASKS:
        for index in range(POOL):
            start = time.perf_counter()
            path = make_game(task, index)
            print(f"{path} {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
