"""Find the textworld seeds of BALROG's treasure hunter pool: the first 25 whose games are made quickly.

textworld makes a treasure hunter game of level 30 in 7 s to over 45 minutes, depending on the
seed (its ``compress_policy`` walks a tree of repeated sub-quests, exponential in the locked doors
and containers on the way). Generation draws only from the seed, so a seed that is quick once is
quick everywhere. This script tries seeds 0, 1, 2, ... one at a time, each in its own process
stopped after ``--timeout`` seconds of CPU time, keeps the first ``--count`` that finish,
and writes them with their CPU times to ``envs/balrog/data/treasure_hunter_seeds.json``, the pool the env plays
(``rl4vlm_gym.envs.balrog.textworld_games.seeds``). The games made on the way are put in the user
cache, so the env does not make them again.

Usage: ``python scripts/find_treasure_hunter_seeds.py [--count 25] [--timeout 20] [--out PATH]``.
One process at a time: it uses one core for up to (count + rejected) x timeout CPU seconds. The
output file is written after every seed, and a search stopped half-way resumes from it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import textworld

from rl4vlm_gym.envs.balrog import textworld_games

TASK = "treasure_hunter"
OUT = Path(textworld_games.__file__).parent / "data" / "treasure_hunter_seeds.json"
BUILD = "import sys; from pathlib import Path; from rl4vlm_gym.envs.balrog.textworld_games import build_game; build_game(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))"


def attempt(seed: int, limit: float, folder: Path) -> float | None:
    """CPU seconds to make the game of ``seed`` in ``folder``, or None past ``limit`` CPU seconds.

    The limit is on CPU time (``RLIMIT_CPU``), not on the clock: on a shared machine the clock
    measures the other users' load, the CPU time only the game (so the list does not depend on the
    load when it was made). A wall clock of 20 x ``limit`` guards against a child that waits."""
    path = folder / f"game-{seed:02d}.z8"
    cpu = int(limit) + 1

    def limit_cpu() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # its own session, so a timeout kills the whole group (textworld may start the inform compiler)
    process = subprocess.Popen(
        [sys.executable, "-c", BUILD, TASK, str(seed), str(path)],
        start_new_session=True,
        preexec_fn=limit_cpu,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.wait(timeout=20 * limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if process.returncode in (-signal.SIGXCPU, -signal.SIGKILL) or used > limit:
        return None
    if process.returncode != 0:
        raise RuntimeError(f"making the game of seed {seed} failed (exit {process.returncode})")
    return used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=textworld_games.POOL)
    parser.add_argument("--timeout", type=float, default=20.0, help="CPU seconds per game (default 20)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    found = {
        "task": TASK,
        "challenge": textworld_games.SETTINGS[TASK][0],
        "settings": textworld_games.SETTINGS[TASK][1],
        "textworld": textworld.__version__,
        "cpu_limit_s": args.timeout,
        "seeds": [],
        "cpu_seconds": [],
        "rejected": [],
        "made_by": "python scripts/find_treasure_hunter_seeds.py"
        + (f" --timeout {args.timeout:g}" if args.timeout != 20.0 else ""),
    }
    if args.out.is_file():  # resume a search with the same settings (the file is written after every seed)
        before = json.loads(args.out.read_text())
        if {k: v for k, v in before.items() if k not in ("seeds", "cpu_seconds", "rejected")} == {
            k: v for k, v in found.items() if k not in ("seeds", "cpu_seconds", "rejected")
        }:
            found = before
    kept, seconds, rejected = found["seeds"], found["cpu_seconds"], found["rejected"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="treasure-seeds-") as tmp:
        for seed in itertools.count(max([*kept, *rejected], default=-1) + 1):
            if len(kept) >= args.count:
                break
            took = attempt(seed, args.timeout, Path(tmp))
            print(f"seed {seed}: " + (f"{took:.1f} s" if took is not None else f"over {args.timeout:g} s"), flush=True)  # CPU
            if took is None:
                rejected.append(seed)
            else:
                kept.append(seed)
                seconds.append(round(took, 1))
                made = Path(tmp) / f"game-{seed:02d}.z8"
                cached = textworld_games.seed_path(TASK, seed)
                if not cached.is_file():  # into the user cache, .json first (a .z8 in place means complete)
                    cached.parent.mkdir(parents=True, exist_ok=True)
                    for suffix in (".json", ".z8"):
                        staged = cached.with_name(f".{cached.stem}-{os.getpid()}{suffix}")
                        staged.write_bytes(made.with_suffix(suffix).read_bytes())
                        os.replace(staged, cached.with_suffix(suffix))
            args.out.write_text(json.dumps(found, indent=1) + "\n")
    print(f"{len(kept)} seeds in {args.out}; rejected {rejected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
