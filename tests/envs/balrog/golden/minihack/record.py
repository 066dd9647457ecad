"""Record BALROG's MiniHack as its own wrappers play it: the golden transcripts of ``minihack.json.gz``.

Run with the private reference environment (tests/envs/balrog/golden/make_reference_env.sh), from a
directory other than REF_DIR/src (its checkout folders shadow the packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/minihack/record.py

It drives BALROG's own code: ``balrog.environments.make_env("minihack", task, config)`` with BALROG's
``balrog/config/config.yaml`` (``minihack_kwargs``: ``character="@"``, ``max_episode_steps=100``,
``penalty_step=-0.01``, ``penalty_time=0.0``, ``penalty_mode="constant"``, ``autopickup=False``,
``skip_more``), which stacks ``gym.make(task, observation_keys=[...], **kwargs)`` (balrog-ai/minihack
3ecb6da4 = minihack 0.1.6), ``AutoMore``, BALROG's ``NLELanguageWrapper``, ``NLETimeLimit``,
``GymV21CompatibilityV0`` and ``EnvWrapper``; then, as BALROG's evaluator does, it seeds ``random``
and ``np.random``, calls ``env.reset(seed=seed)``, reads the instruction prompt and plays each
output through ``env.check_action_validity`` (an invalid output plays "north"). Both of BALROG's
text modes (LLM: ``max_image_history 0``; VLM: 1, whose image's sha256 is recorded), on the same
seeds and outputs. The pinned NetHack clock, the display RNG (``disp = core = seed``) and Pillow's
basic layout are as in ``../nle/record.py`` (whose helpers this script uses).

Boxoban's level. BALROG's ``BoxoHack.reset`` picks ``random.choice(levels)`` right after the
evaluator's ``random.seed(seed)``, from the levels as ``os.listdir`` lists the files of
``minihack/dat/boxoban-levels-master/{hard,medium/train}`` (an order that depends on the file
system). Here the level list is set (``_levels``) before the reset to the order our env ships:
the files sorted by name, each file's levels in order; Hard all 3,332 levels (4 files),
Medium the 10,000 levels of ``medium/train/000.txt``..``009.txt`` (of 450 files). So seed ``s``
plays ``levels[random.Random(s)._randbelow(len(levels))]`` on both sides. The header records
the sha256 of each list (its levels joined by blank lines), which our test checks against the
shipped data.

Episodes: each of BALROG's 8 tasks, seeds 0..3 and two drawn like BALROG's (8 hex digits below
2**32), in both modes: random play for 50 steps (the task's actions, 5% invalid strings) on
even seed indices; on odd ones a player that walks to the stairs down when it sees them (a
breadth-first search over the tty's map, 20% random moves), to the end of the episode (MiniHack's
limit: 100 NLE steps), so that some episodes succeed and some are cut by the limit.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "minihack.json.gz"
_spec = importlib.util.spec_from_file_location("nle_record", HERE.parent / "nle" / "record.py")
nle_record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nle_record)

INVALID = ("North", "go north", "", "move east", "up", "pick up")
MEDIUM_FILES = 10  # medium/train/000.txt .. 009.txt
MOVES = {(-1, 0): "north", (1, 0): "south", (0, -1): "west", (0, 1): "east", (-1, 1): "northeast", (1, 1): "southeast", (1, -1): "southwest", (-1, -1): "northwest"}


def boxoban_levels(root: Path, task: str) -> list[str]:
    """The levels our env ships for a Boxoban task, in its order, parsed as minihack parses a file."""
    from minihack.envs.boxohack import load_boxoban_levels

    folder = root / ("hard" if "Hard" in task else "medium/train")
    files = sorted(name for name in os.listdir(folder) if name.endswith(".txt"))
    if "Medium" in task:
        files = files[:MEDIUM_FILES]
    levels = []
    for name in files:  # one file at a time, in sorted order (load_boxoban_levels reads a folder)
        scratch = Path("/tmp/boxoban-record") / task / name[:-4]
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / name).write_bytes((folder / name).read_bytes())
        levels += load_boxoban_levels(str(scratch))
    return levels


def digest_levels(levels: list[str]) -> str:
    return hashlib.sha256("\n".join(levels).encode()).hexdigest()


def random_outputs(rng: np.random.Generator):
    def draw(names: list[str], obs: Any) -> str:
        if rng.random() < 0.05:
            return INVALID[int(rng.integers(len(INVALID)))]
        return names[int(rng.integers(len(names)))]

    return draw


def seeker_outputs(rng: np.random.Generator):
    """Towards the stairs down ('>') when the screen shows them, else a random move."""

    def draw(names: list[str], obs: Any) -> str:
        moves = [name for name in MOVES.values() if name in names]
        chars = obs["obs"]["tty_chars"][1:22]
        start = np.argwhere(chars == ord("@"))
        goals = {tuple(int(v) for v in p) for p in np.argwhere(chars == ord(">"))}
        if rng.random() < 0.2 or not len(start) or not goals:
            return moves[int(rng.integers(len(moves)))] if rng.random() > 0.03 else INVALID[int(rng.integers(len(INVALID)))]
        start = tuple(int(v) for v in start[0])
        frontier, came = deque([start]), {start: None}
        cell = None
        while frontier:
            cell = frontier.popleft()
            if cell in goals:
                break
            for dr, dc in MOVES:
                if MOVES[(dr, dc)] not in names:
                    continue
                nxt = (cell[0] + dr, cell[1] + dc)
                if 0 <= nxt[0] < chars.shape[0] and 0 <= nxt[1] < chars.shape[1] and nxt not in came and chr(chars[nxt]) in ".>#{`<":
                    came[nxt] = cell
                    frontier.append(nxt)
        if cell not in goals:
            return moves[int(rng.integers(len(moves)))]
        while came[cell] != start:
            cell = came[cell]
        return MOVES[(cell[0] - start[0], cell[1] - start[1])]

    return draw


def seeds() -> list[int]:
    rng = np.random.default_rng(20241134)
    return [0, 1, 2, 3] + [int(s) for s in rng.integers(0, 2**32, 2)]


def main() -> None:
    import minihack

    args = nle_record.arguments()
    balrog_dir, config = nle_record.setup(args)
    from balrog.environments import make_env

    boxoban_root = Path(minihack.__file__).resolve().parent / "dat" / "boxoban-levels-master"
    levels = {task: boxoban_levels(boxoban_root, task) for task in config.tasks.minihack_tasks if "Boxoban" in task}
    header = nle_record.header(balrog_dir, config, "BALROG's MiniHack, recorded by tests/envs/balrog/golden/minihack/record.py (see its docstring)", "minihack_kwargs", __file__)
    header["minihack"] = {"repo": "balrog-ai/minihack", "commit": nle_record.commit(Path(minihack.__file__).resolve().parents[1])}
    header["boxoban"] = {
        task: {"levels": len(found), "sha256": digest_levels(found), "files": "hard/*.txt" if "Hard" in task else f"medium/train/000.txt..{MEDIUM_FILES - 1:03d}.txt"}
        for task, found in levels.items()
    }
    table = nle_record.Table()
    data = {"header": header, "tasks": list(config.tasks.minihack_tasks), "episodes": []}
    for task_index, task in enumerate(data["tasks"]):
        for mode in ("hybrid", "vlm"):
            for seed_index, seed in enumerate(seeds()):
                rng = np.random.default_rng([task_index, seed_index])
                seek = seed_index % 2 == 1
                outputs = seeker_outputs(rng) if seek else random_outputs(rng)
                env = make_env("minihack", task, nle_record.mode_config(config, mode))
                episode = nle_record.play(env, seed, outputs, table, 100 if seek else nle_record.STEPS, levels.get(task))
                data["episodes"].append({"task": task, "mode": mode, "kind": "seeker" if seek else "random", **episode})
                env.close()
    data["strings"] = table.strings
    nle_record.write(data, OUT)
    for task in data["tasks"]:
        episodes = [e for e in data["episodes"] if e["task"] == task and e["mode"] == "hybrid"]
        ends = [(len(e["steps"]), e["steps"][-1]["terminated"], e["steps"][-1]["truncated"], e["steps"][-1]["stats"].get("progression")) for e in episodes]
        print(task, ends)


if __name__ == "__main__":
    main()
