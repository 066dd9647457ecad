"""Steps per second and reset time of every ``balrog/`` id, beside BALROG's own figures where known.

    .venv/bin/python benchmarks/balrog_throughput.py [--resets 20] [--steps 500] [--obs-mode image+text] [--match NetHack]

One process. For each registered ``balrog/`` id: ``--resets`` resets on seeds 0.. (median and 95th
percentile in ms), then ``--steps`` steps of random admissible actions (fixed RNG), resetting on the
next seed when an episode ends (those resets are not timed); steps/s is the median over 5 chunks.
``--match`` keeps the ids containing a string (``MiniHack``, ``NetHack``: the nethack extra's).
NetHack and MiniHack draw a 384x1760 frame per step in image modes; ``--obs-mode text`` shows
the game and its language wrapper alone.
TextWorld's games are made at first use and cached
(``rl4vlm_gym.envs.balrog.textworld_games``): the games the seeds pick are made before the timing,
so a timed reset is the game's start (its interpreter, once per game and env) and the game's reset.
BALROG publishes no speed figures (its repository holds no results; see
its README, balrog-ai/BALROG at af7d1f1), so the BALROG column says so rather than inventing one.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym  # noqa: F401 (registers the families)
from rl4vlm_gym.registry import list_envs


def measure(env_id: str, resets: int, steps: int, obs_mode: str) -> tuple[list[float], float]:
    env = gym.make(env_id, obs_mode=obs_mode)
    task = getattr(env.unwrapped, "task", None)
    if env_id.startswith("balrog/TextWorld-"):  # make the games first: generation is not a reset's cost
        from rl4vlm_gym.envs.balrog.textworld_games import POOL, make_game

        for seed in range(resets + steps):  # at most every seed of the run (the pool is 25 games)
            make_game(task, int(np.random.default_rng(seed).integers(POOL)))
    times = []
    for seed in range(resets):
        start = time.perf_counter()
        env.reset(seed=seed)
        times.append(1000 * (time.perf_counter() - start))
    rng, episode = np.random.default_rng(0), resets
    obs, _ = env.reset(seed=episode)
    rates = []
    for chunk in np.array_split(np.arange(steps), 5):
        start = time.perf_counter()
        for _ in chunk:
            actions = obs["actions"]
            obs, _, terminated, truncated, _ = env.step(actions[int(rng.integers(len(actions)))])
            if terminated or truncated:
                episode += 1
                obs, _ = env.reset(seed=episode)
        rates.append(len(chunk) / (time.perf_counter() - start))
    env.close()
    return times, float(np.median(rates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=20)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--obs-mode", default="image+text")
    parser.add_argument("--match", default="", help="only the ids containing this string")
    args = parser.parse_args()
    table = Table(title=f"balrog/ ids: {args.resets} resets, {args.steps} random steps, obs_mode={args.obs_mode}")
    for column in ("id", "reset p50 ms", "reset p95 ms", "steps/s (median of 5)", "BALROG's figure"):
        table.add_column(column)
    for env_id in (card.id for card in list_envs(family="balrog") if args.match in card.id):
        times, rate = measure(env_id, args.resets, args.steps, args.obs_mode)
        table.add_row(
            env_id, f"{np.percentile(times, 50):.2f}", f"{np.percentile(times, 95):.2f}", f"{rate:,.0f}", "none published"
        )
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
