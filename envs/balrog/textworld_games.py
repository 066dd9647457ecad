"""BALROG's 75 TextWorld games: shipped as their game definitions, compiled once per machine.

BALROG (balrog-ai/BALROG af7d1f17, ``balrog/environments/textworld/base.py``) plays 25 fixed games
per task from conglu1997/intelligent-go-explore ``textworld/tw_games`` (MIT; commit bcb4052e):
each a textworld ``.json`` game definition (world, quests, text, walkthrough) with the game
compiled from it, Glulx ``.ulx`` for the treasure hunter and coin collector, z-machine ``.z8`` for
the cooking game. It lists a task's games in sorted file order and plays index ``seed mod 25``.

Here ``assets/textworld/tw_games.tar.xz`` (0.15 MB) holds the 75 ``.json`` files byte for byte
(``assets/textworld/tw_games.json`` names the source and each file's SHA-256; LICENSE beside them;
``tw_plans.json`` the walkthrough steps the oracle leaves out, :func:`skipped_steps`).
Each game is compiled to ``.z8`` by textworld 1.7.0's own Inform 7 (textworld 1.7 plays z-machine
games only), once per machine into the cache; the set-up (``scripts/setup.sh``, balrog extra) does
all 75 in about a minute on 2 cores, and an env compiles a missing one at its first reset (about
1 s). The Inform 7 source of each game is the one BALROG's files were built from (the ``.ni``
files match byte for byte); the z-story's serial number (the compile date) is set to BALROG's
cooking games' ``240517`` so that a compile gives the same bytes on any day
(``tw_games.json`` holds each ``.z8``'s SHA-256, checked after compiling). How the z-machine's
text is turned into the Glulx interpreter's for the two Glulx tasks: :mod:`.textworld_env`.

Cache: ``$RL4VLM_GYM_CACHE/textworld/balrog-<textworld version>-<archive hash>/<task>/<name>.z8``
(default ``~/.cache/rl4vlm_gym``) with the original ``.json`` beside it (textworld reads the
objective, score and walkthrough from it). Several processes may compile one game at once: each
builds in its own temporary folder and moves the files in with ``os.replace`` (the ``.json``
first, so a ``.z8`` in place means the game is complete).
``python -m rl4vlm_gym.envs.balrog.textworld_games [--jobs N] [task ...]`` compiles whatever is
missing.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import lzma
import os
import shutil
import sys
import tarfile
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rl4vlm_gym.cache import cache_dir

POOL = 25  # games per task, as BALROG
TASKS = ("treasure_hunter", "the_cooking_game", "coin_collector")
GLULX_TASKS = frozenset({"treasure_hunter", "coin_collector"})  # BALROG plays their .ulx builds
DATA = Path(__file__).parent / "assets" / "textworld"
ARCHIVE = DATA / "tw_games.tar.xz"
MANIFEST = DATA / "tw_games.json"
PLANS = DATA / "tw_plans.json"
SERIAL = b"240517"  # the z-story serial of BALROG's cooking .z8 files (header bytes 0x12-0x17)


@functools.cache
def manifest() -> dict[str, Any]:
    """``tw_games.json``: the source, and per task its 25 games in BALROG's (sorted) order with the
    SHA-256 of each ``.json`` and of the ``.z8`` compiled from it."""
    return json.loads(MANIFEST.read_text())


@functools.cache
def _archive_tag() -> str:
    return hashlib.sha256(ARCHIVE.read_bytes()).hexdigest()[:12]


@functools.cache
def _definitions() -> dict[str, bytes]:
    """Every member of the archive by name (``<task>/<name>.json``): 20 MB once decompressed."""
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(ARCHIVE.read_bytes()))) as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}  # type: ignore[union-attr]


@functools.cache
def _plans() -> dict[str, Any]:
    return json.loads(PLANS.read_text())


def reload() -> None:
    """Forget what was read from ``assets/textworld`` (after it was rewritten)."""
    for cached in (manifest, _archive_tag, _definitions, _plans):
        cached.cache_clear()


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")


def names(task: str) -> tuple[str, ...]:
    """The 25 games of ``task`` in BALROG's order (sorted file names): game ``k`` is ``names(task)[k]``."""
    _check_task(task)
    return tuple(entry["name"] for entry in manifest()["games"][task])


def definition(task: str, index: int) -> dict[str, Any]:
    """Game ``index`` of ``task``'s textworld definition (the ``.json``: world, quests, walkthrough)."""
    return json.loads(_definition_bytes(task, index))


def walkthrough(task: str, index: int) -> tuple[str, ...]:
    """The commands that win game ``index`` of ``task`` (its ``.json``'s ``metadata.walkthrough``)."""
    return tuple(definition(task, index)["metadata"]["walkthrough"])


def skipped_steps(task: str, index: int) -> frozenset[int]:
    """The steps of game ``index`` of ``task``'s walkthrough (0-based) that the oracle leaves out:
    not admissible when they come (the cooking walkthroughs take inventory and open a fridge or a
    door twice). ``tw_plans.json`` holds them, found by playing each walkthrough with textworld's
    admissible commands (:func:`~rl4vlm_gym.envs.balrog.textworld_env.inadmissible_steps`, a second
    or two per cooking game; ``--plans`` writes the file again)."""
    _check_task(task)
    if not 0 <= index < POOL:
        raise ValueError(f"game index {index} is outside the pool 0..{POOL - 1}")
    return frozenset(_plans()["skipped"][task][index])


def write_plans() -> None:
    """Play every game's walkthrough with textworld's admissible commands and write the steps left
    out to ``tw_plans.json`` (about a minute)."""
    import textworld

    from rl4vlm_gym.envs.balrog.textworld_env import inadmissible_steps

    skipped = {task: [list(inadmissible_steps(task, index)) for index in range(POOL)] for task in TASKS}
    how = (
        "per task and game (tw_games.json's order), the 0-based steps of the walkthrough that are not among "
        "textworld's admissible commands when they come, the admissible ones played: the oracle leaves them out"
    )
    lines = [f' "how": {json.dumps(how)},', f' "textworld": {json.dumps(textworld.__version__)},', ' "skipped": {']
    for t, task in enumerate(TASKS):  # one game a line
        games = ",\n".join(f"   {json.dumps(steps)}" for steps in skipped[task])
        lines.append(f'  "{task}": [\n{games}\n  ]' + ("," if t < len(TASKS) - 1 else ""))
    PLANS.write_text("{\n" + "\n".join(lines) + "\n }\n}\n")
    _plans.cache_clear()


def _definition_bytes(task: str, index: int) -> bytes:
    _check_task(task)
    if not 0 <= index < POOL:
        raise ValueError(f"game index {index} is outside the pool 0..{POOL - 1}")
    return _definitions()[f"{task}/{names(task)[index]}.json"]


def cache_root() -> Path:
    """This archive's compiled games: ``$RL4VLM_GYM_CACHE/textworld/balrog-<version>-<hash>``."""
    import textworld

    return cache_dir("textworld", f"balrog-{textworld.__version__}-{_archive_tag()}")


def game_path(task: str, index: int) -> Path:
    """Where game ``index`` of ``task`` is compiled to (made or not)."""
    _check_task(task)
    if not 0 <= index < POOL:
        raise ValueError(f"game index {index} is outside the pool 0..{POOL - 1}")
    return cache_root() / task / f"{names(task)[index]}.z8"


def missing_games(task: str) -> list[int]:
    """The indices of ``task``'s games not compiled yet."""
    return [index for index in range(POOL) if not game_path(task, index).is_file()]


def make_game(task: str, index: int) -> Path:
    """The path of game ``index`` of ``task``'s ``.z8``, compiled first if needed."""
    path = game_path(task, index)
    if not path.is_file():
        build_game(task, index)
    return path


def build_game(task: str, index: int, *, check: bool = True) -> Path:
    """Compile game ``index`` of ``task`` with textworld's Inform 7 to its cache path, the original
    ``.json`` beside it; with ``check``, warn if the ``.z8`` is not the one ``tw_games.json`` names
    (another textworld version's compiler)."""
    import textworld
    from textworld import GameOptions
    from textworld.generator import Game, compile_game

    path = game_path(task, index)
    data = _definition_bytes(task, index)
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.stem}-", dir=path.parent))
    try:
        source = work / "source.json"
        source.write_bytes(data)
        options = GameOptions()
        options.path = str(work / "game.z8")
        options.file_ext = ".z8"
        options.force_recompile = True
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", textworld.GenerationWarning)
            compiled = Path(compile_game(Game.load(str(source)), options))
        story = bytearray(compiled.read_bytes())
        story[0x12:0x18] = SERIAL  # the compile date otherwise (outside the checksummed area)
        expected = manifest()["games"][task][index].get("z8_sha256")
        digest = hashlib.sha256(story).hexdigest()
        if check and expected and digest != expected:
            warnings.warn(
                f"{task} game {index} ({names(task)[index]}) compiled to a .z8 with SHA-256 {digest[:16]}..., "
                f"not {expected[:16]}... (textworld {textworld.__version__}; the data was made with 1.7.0)",
                RuntimeWarning,
                stacklevel=2,
            )
        compiled.write_bytes(story)
        os.replace(source, path.with_suffix(".json"))
        os.replace(compiled, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def _build(job: tuple[str, int]) -> tuple[str, int, float]:
    start = time.perf_counter()
    build_game(*job)
    return job[0], job[1], time.perf_counter() - start


def main(argv: list[str]) -> int:
    """Compile the missing games of each task named (all three by default), ``--jobs`` at a time,
    printing each game's path and seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", default=list(TASKS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--plans", action="store_true", help=f"then write {PLANS.name} again (write_plans)")
    args = parser.parse_args(argv)
    jobs = [(task, index) for task in args.tasks for index in missing_games(task)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for task, index, seconds in pool.map(_build, jobs):
            print(f"{game_path(task, index)} {seconds:.1f} s", flush=True)
    print(f"{len(jobs)} games compiled in {time.perf_counter() - start:.0f} s", flush=True)
    if args.plans:
        write_plans()
        print(f"{PLANS} written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
