"""The OpenSpiel adapter's games: how strong the oracle is, and what the adapter costs over pyspiel.

    .venv/bin/python benchmarks/openspiel_adapter.py [--episodes 100] [--steps 2000] [--repeats 3]

Two tables:

- each single-agent id (``rl4vlm/OpenSpiel-<Game>-v0``) at each level: the mean ``info["score"]``
  (1 win, 0.5 draw, 0 loss) of the oracle and of random legal moves against the id's uniformly
  random opponent, over the same ``--episodes`` evaluation seeds, with 95% bootstrap intervals;
- agent steps/s of random legal moves in the adapter's AEC env (text only, and with images) and in
  OpenSpiel's own Python loop on the same game (``state.legal_actions()``, ``apply_action``,
  chance sampled with numpy), each the median of ``--repeats`` runs side by side.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np
import pyspiel
from rich.console import Console
from rich.table import Table

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.openspiel_adapter import TEXT_GAMES, openspiel_env
from rl4vlm_gym.registry import EVAL_SEEDS

IDS = {
    "goofspiel": "rl4vlm/OpenSpiel-Goofspiel-v0",
    "dots_and_boxes": "rl4vlm/OpenSpiel-DotsAndBoxes-v0",
    "pig": "rl4vlm/OpenSpiel-Pig-v0",
}


def scores(env_id: str, level: int, episodes: int, player: str) -> list[float]:
    env = gym.make(env_id, level=level, obs_mode="text")
    rng = np.random.default_rng(0)
    out = []
    for i in range(episodes):
        obs, info = env.reset(seed=EVAL_SEEDS.start + i)
        done = False
        while not done:
            action = (
                env.unwrapped.oracle_action() if player == "oracle" else obs["actions"][int(rng.integers(len(obs["actions"])))]
            )
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        out.append(float(info.get("score", 0.0)))
    env.close()
    return out


def interval(values: list[float], rng: np.random.Generator, draws: int = 2000) -> tuple[float, float]:
    means = rng.choice(values, size=(draws, len(values))).mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def adapter_rate(spec: str, steps: int, obs_mode: str) -> float:
    """Agent steps/s of random legal moves in the adapter's AEC env, observing before each move."""
    env = openspiel_env(spec, obs_mode=obs_mode, max_cycles=10**6)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    done, start = 0, time.perf_counter()
    while done < steps:
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.reset(seed=done)
            continue
        env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
        done += 1
    return steps / (time.perf_counter() - start)


def spiel_rate(spec: str, steps: int) -> float:
    """Agent steps/s of random legal moves in OpenSpiel's own Python loop (turn-based games)."""
    game = pyspiel.load_game(spec)
    rng = np.random.default_rng(0)
    state, done, start = game.new_initial_state(), 0, time.perf_counter()
    while done < steps:
        if state.is_terminal():
            state = game.new_initial_state()
        elif state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            legal = state.legal_actions()
            state.observation_string(state.current_player())  # what an agent reads
            state.apply_action(legal[int(rng.integers(len(legal)))])
            done += 1
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    console, rng = Console(), np.random.default_rng(0)

    table = Table(title=f"Mean score against the uniformly random opponent ({args.episodes} eval seeds, 95% bootstrap)")
    for column in ("id", "level", "oracle", "random"):
        table.add_column(column)
    for name, env_id in IDS.items():
        for level, rung in enumerate(TEXT_GAMES[name].levels):
            cells = []
            for player in ("oracle", "random"):
                values = scores(env_id, level, args.episodes, player)
                low, high = interval(values, rng)
                cells.append(f"{np.mean(values):.2f} [{low:.2f}, {high:.2f}]")
            table.add_row(env_id, f"{level}: {rung.label}", *cells)
    console.print(table)

    table = Table(title=f"Agent steps/s, random legal moves (median of {args.repeats})")
    for column in ("game", "adapter, text", "adapter, image+text", "pyspiel loop"):
        table.add_column(column)
    for name in ("dots_and_boxes", "pig"):  # turn-based: the same loop in both
        spec = TEXT_GAMES[name].levels[0].spec
        runs = [
            (adapter_rate(name, args.steps, "text"), adapter_rate(name, args.steps, "image+text"), spiel_rate(spec, args.steps))
            for _ in range(args.repeats)
        ]
        table.add_row(spec, *(f"{statistics.median(r[i] for r in runs):,.0f}" for i in range(3)))
    console.print(table)


if __name__ == "__main__":
    main()
