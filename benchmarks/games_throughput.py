"""Throughput of every game, beside the cards games: steps/s with images and text only, reset time.

    .venv/bin/python benchmarks/games_throughput.py [--steps 2000] [--size 256] [--repeats 3] [--only kuhn ...]

Three tables, each figure the median of ``--repeats`` runs measured side by side in one process
pinned to one core (the machine is shared and noisy):

- every multi-agent game of the match registry (``rl4vlm-gym match --list``; a game added there
  is measured with no change here: Tic-Tac-Toe, Connect Four, Kuhn poker, Leduc hold'em, Liar's dice
  at each level, the referential game at each level): agent steps/s of an AEC loop in which both seats write random
  legal moves and observe before acting (``env.last()``), and the median time of a ``reset`` and the first observation;
- whole matches: games/s of ``rl4vlm_gym.harness.matches.play_game`` with two random players
  (the harness's own cost over the env's);
- the games family's single-agent views and the cards family (Blackjack, NumberLine) for
  comparison, by ``rl4vlm_gym.testing.measure_throughput`` with random admissible actions, as
  ``benchmarks/env_throughput.py`` measures every id.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym
from rl4vlm_gym.harness import matches
from rl4vlm_gym.testing import measure_throughput

MODES = ("image+text", "text")
LEVELS = {"liars_dice": (0, 1), "referential": (0, 1, 2)}  # games whose levels differ in cost (dice, candidates)


def aec_rates(spec: matches.GameSpec, steps: int, resets: int, **kwargs: object) -> tuple[float, float]:
    """Agent steps/s of a random AEC loop and the median time (ms) of a reset and the first
    observation (AEC envs draw lazily, so a bare reset would not count the first frame)."""
    env = spec.make(**kwargs)
    times = []
    for seed in range(resets):
        start = time.perf_counter()
        env.reset(seed=seed)
        env.observe(env.agent_selection)
        times.append(time.perf_counter() - start)
    rng = np.random.default_rng(0)
    env.reset(seed=resets)
    done, seed = 0, resets
    start = time.perf_counter()
    while done < steps:
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
            done += 1
            if done >= steps:
                break
        seed += 1
        env.reset(seed=seed)
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate, statistics.median(times) * 1e3


def match_rate(spec: matches.GameSpec, games: int, **kwargs: object) -> float:
    """Games/s of ``play_game`` with two random players (the harness's loop and records)."""
    with tempfile.TemporaryDirectory(prefix="games_throughput_") as out:
        pool = [matches.parse_player("a=random", spec), matches.parse_player("b=random", spec)]
        start = time.perf_counter()
        matches.run_matches(spec, pool, range(games // 2), out, game_kwargs=kwargs)
        return games // 2 * 2 / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="agent steps per figure")
    parser.add_argument("--resets", type=int, default=100, help="timed resets per figure")
    parser.add_argument("--games", type=int, default=100, help="games per match figure")
    parser.add_argument("--size", type=int, default=256, help="square image side")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median reported)")
    parser.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: no pinning)")
    parser.add_argument("--only", action="append", default=[], help="measure only games and ids containing this (repeatable)")
    args = parser.parse_args()

    def wanted(name: str) -> bool:
        return not args.only or any(part.lower() in name.lower() for part in args.only)

    if args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    console = Console(width=140)

    aec = Table(
        "game",
        "obs_mode",
        "agent steps/s",
        "reset+observe ms (median)",
        title=f"Multi-agent games (AEC), {args.size}x{args.size}",
    )
    full = Table("game", "obs_mode", "games/s", title="Whole matches (play_game, two random players)")
    for spec in matches.list_games():
        for level in LEVELS.get(spec.name, (None,)):
            name, kwargs = (spec.name, {}) if level is None else (f"{spec.name} level {level}", {"level": level})
            if not wanted(name):
                continue
            for mode in MODES:
                runs = [
                    aec_rates(spec, args.steps, args.resets, obs_mode=mode, image_size=args.size, **kwargs)
                    for _ in range(args.repeats)
                ]
                aec.add_row(
                    name, mode, f"{statistics.median(r[0] for r in runs):,.0f}", f"{statistics.median(r[1] for r in runs):.3f}"
                )
                games = [match_rate(spec, args.games, obs_mode=mode, image_size=args.size, **kwargs) for _ in range(args.repeats)]
                full.add_row(name, mode, f"{statistics.median(games):,.1f}")
    console.print(aec)
    console.print(full)

    single = Table(
        "id",
        "obs_mode",
        "steps/s",
        "reset ms (median)",
        title=f"Single-agent views and the cards games, {args.size}x{args.size}, random actions",
    )
    ids = [c.id for c in rl4vlm_gym.list_envs(family="games")] + ["rl4vlm/Blackjack-v0", "rl4vlm/NumberLine-v0"]
    ids = [i for i in ids if wanted(i)]
    for env_id in ids:
        for mode in MODES:
            runs = [
                measure_throughput(env_id, steps=args.steps, resets=args.resets, obs_mode=mode, image_size=args.size)
                for _ in range(args.repeats)
            ]
            single.add_row(
                env_id,
                mode,
                f"{statistics.median(r['steps_per_s'] for r in runs):,.0f}",
                f"{statistics.median(r['reset_ms_p50'] for r in runs):.3f}",
            )
    console.print(single)


if __name__ == "__main__":
    main()
