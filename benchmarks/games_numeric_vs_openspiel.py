"""Throughput of the games' numeric interface beside OpenSpiel's own Python game loop, same games.

    .venv/bin/python benchmarks/games_numeric_vs_openspiel.py [--games 300] [--repeats 5]

Each side plays ``--games`` whole games with uniformly random legal moves, ``--repeats`` times,
and the table gives the median over repeats of decisions (agent moves) per second and games per
second, side by side in one run:

- **OpenSpiel**: ``pyspiel`` alone, the loop of OpenSpiel's Python examples: a new state, chance
  outcomes drawn from ``chance_outcomes()``, at each decision the mover's tensor (the information
  state where the game has one, else the observation tensor: what our numeric observation holds)
  and its ``legal_actions_mask``, a random legal action, ``apply_action``, ``returns()`` at the end.
- **numeric**: ``numeric_env(game)`` (:mod:`rl4vlm_gym.envs.games.numeric`) through PettingZoo's
  AEC loop: ``reset(seed)``, ``agent_iter``, ``last()`` (the observation and its action mask), a
  random legal id, ``step``; each agent's final dead step included, as every AEC loop has it.
- **VLM text**: the family's VLM env with ``obs_mode="text"`` (the text and the legal move names),
  for reference: what the numeric interface adds to or saves on it.

Tic-Tac-Toe is OpenSpiel's ``tic_tac_toe`` beside our env, which plays PettingZoo's
``tictactoe_v3``; Kuhn, Leduc and Liar's dice (one die each) are OpenSpiel's games on both sides.
Both sides draw from a NumPy generator seeded the same; no process pinning (run it on an idle
machine and say the load).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pyspiel
from rich.console import Console
from rich.table import Table

from rl4vlm_gym.envs.games.numeric import GAMES, numeric_env

# our game -> OpenSpiel's game string (the same rules)
SPECS = {
    "tictactoe": "tic_tac_toe",
    "kuhn_poker": "kuhn_poker",
    "leduc": "leduc_poker",
    "liars_dice": "liars_dice(numdice=1)",
}


def openspiel(game: str, games: int, seed: int) -> tuple[int, float]:
    """Decisions and seconds for ``games`` random games of pyspiel alone."""
    spiel = pyspiel.load_game(SPECS[game])
    info_state = spiel.get_type().provides_information_state_tensor
    rng = np.random.default_rng(seed)
    decisions, start = 0, time.perf_counter()
    for _ in range(games):
        state = spiel.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(outcomes[int(rng.choice(len(outcomes), p=probs))])
                continue
            player = state.current_player()
            _ = state.information_state_tensor(player) if info_state else state.observation_tensor(player)
            mask = state.legal_actions_mask(player)
            legal = [a for a, ok in enumerate(mask) if ok]
            state.apply_action(legal[int(rng.integers(len(legal)))])
            decisions += 1
        state.returns()
    return decisions, time.perf_counter() - start


def aec(make: Callable[[], object], numeric: bool, games: int, seed: int) -> tuple[int, float]:
    """Decisions and seconds for ``games`` random games through PettingZoo's AEC loop."""
    env = make()
    rng = np.random.default_rng(seed)
    decisions, start = 0, time.perf_counter()
    for g in range(games):
        env.reset(seed=seed + g)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if numeric:
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[int(rng.integers(len(legal)))]))
            else:
                env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
            decisions += 1
    return decisions, time.perf_counter() - start


def vlm_text(game: str) -> Callable[[], object]:
    module, factory = GAMES[game].split(":")
    return lambda: getattr(importlib.import_module(module), factory)(obs_mode="text", image_size=64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=300, help="games per repeat and side")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the table shows medians")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sides: dict[str, Callable[[str, int, int], tuple[int, float]]] = {
        "OpenSpiel": openspiel,
        "numeric": lambda game, n, seed: aec(lambda: numeric_env(game), True, n, seed),
        "VLM text": lambda game, n, seed: aec(vlm_text(game), False, n, seed),
    }
    table = Table(
        "game",
        "side",
        "decisions/s",
        "games/s",
        "decisions/game",
        "vs OpenSpiel",
        title=f"median of {args.repeats} repeats of {args.games} games",
    )
    for game in SPECS:
        rates: dict[str, float] = {}
        for side, run in sides.items():
            per_repeat = [run(game, args.games, args.seed + r) for r in range(args.repeats)]
            rate = statistics.median(d / s for d, s in per_repeat)
            games_rate = statistics.median(args.games / s for _, s in per_repeat)
            rates[side] = games_rate
            length = statistics.mean(d for d, _ in per_repeat) / args.games
            ratio = "1" if side == "OpenSpiel" else f"{games_rate / rates['OpenSpiel']:.3f}"
            table.add_row(game, side, f"{rate:,.0f}", f"{games_rate:,.0f}", f"{length:.2f}", ratio)
    Console().print(table)
    print(f"load average {os.getloadavg()[0]:.2f}; pyspiel {pyspiel.__file__.split('/')[-2]}")


if __name__ == "__main__":
    main()
