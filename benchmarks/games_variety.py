"""How many distinct games a deterministic agent meets against the board games' built-in opponents,
before and after issue 34 made them stochastic, and how strong the opponents are.

    .venv/bin/python benchmarks/games_variety.py [--ttt-seeds 200] [--c4-seeds 60] [--games 100]

Two tables:

- variety: for each single-agent view (Connect Four at each board size), two deterministic agents
  (the view's oracle, and "always the first legal move") play seeds ``0..n-1``; a game is its seat and
  its whole move sequence (``env.unwrapped.history``). "before" plays the same view against the old
  opponents (``temperature=0``: uniform over the top moves only; the code before issue 34 drew the
  same moves from the same seeds), "after" against the shipped ones. The mean score (1 win,
  0.5 draw, 0 loss) of the agent is beside each count.
- strength: the mean score of one player against another over ``--games`` games, half from each
  seat (seeded), with a normal 95% interval: the search opponent against the heuristic and random,
  the heuristic against random, on each Connect Four board and on Tic-Tac-Toe.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from rl4vlm_gym.envs.games import views
from rl4vlm_gym.envs.games.boards import CONNECT_FOUR_SIZES, GAMES, BoardGame, connect_four_game
from rl4vlm_gym.envs.games.opponents import HeuristicPlayer, Player, RandomPlayer

VIEWS = (
    views.TicTacToe,
    views.TicTacToeVsHeuristic,
    views.TicTacToeVsPerfect,
    views.ConnectFour,
    views.ConnectFourVsHeuristic,
    views.ConnectFourVsSearch,
)


def label(player: Player) -> str:
    """``search(3 plies, T=3.0)``, ``heuristic(T=1.0)``, ``random``."""
    depth = f"{player.depth} plies, " if hasattr(player, "depth") else ""
    return f"{player.name}({depth}T={player.temperature})" if hasattr(player, "temperature") else player.name


def old(player: Player) -> Player:
    """The player before issue 34: its temperature 0 (players without one were unchanged)."""
    return dataclasses.replace(player, temperature=0.0) if hasattr(player, "temperature") else player  # type: ignore[type-var]


def variety(cls: type[views.BoardGameView], level: int, before: bool, seeds: int, agent: str) -> tuple[int, float]:
    """Distinct games and the mean score of ``agent`` ("oracle" or "first") over ``seeds`` seeds."""
    if before:
        cls = type(cls.__name__, (cls,), {"LEVELS": tuple(views.Level(old(lv.player), lv.game) for lv in cls.LEVELS)})
    env = cls(level=level, obs_mode="text", image_size=32)
    games, scores = set(), []
    for seed in range(seeds):
        env.reset(seed=seed)
        info: dict = {}
        while env.score is None:
            _, _, _, _, info = env.step(env.oracle_action() if agent == "oracle" else env.admissible_actions[0])
        games.add((env.seat, tuple(env.history)))
        scores.append(info["score"])
    return len(games), float(np.mean(scores))


def duel(game: BoardGame, player: Player, opponent: Player, games: int, seed: int) -> tuple[float, float]:
    """``player``'s mean score against ``opponent`` (seats alternate) and its 95% half-width."""
    rng, scores = np.random.default_rng(seed), []
    for n in range(games):
        board, seat = game.empty(), 1 + n % 2
        while not game.over(board):
            piece = game.to_move(board)
            board = game.play(board, (player if piece == seat else opponent).choose(game, board, rng), piece)
        winner = game.winner(board)
        scores.append(1.0 if winner == seat else 0.5 if winner == 0 else 0.0)
    return float(np.mean(scores)), 1.96 * float(np.std(scores, ddof=1)) / math.sqrt(games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ttt-seeds", type=int, default=200)
    parser.add_argument("--c4-seeds", type=int, default=60)
    parser.add_argument("--games", type=int, default=100, help="games per pairing in the strength table")
    args = parser.parse_args()
    console = Console(width=160)

    table = Table(title="Distinct games of a deterministic agent (seat + moves), and its mean score")
    for column in ("view", "board", "agent", "seeds", "games before", "games after", "score before", "score after"):
        table.add_column(column, justify="left" if column in ("view", "agent") else "right")
    start = time.perf_counter()
    for cls in VIEWS:
        tictactoe = issubclass(cls, views.TicTacToe)
        levels = [0] if tictactoe else range(len(CONNECT_FOUR_SIZES)) if cls is views.ConnectFourVsSearch else [cls.DEFAULT_LEVEL]
        for level in levels:
            game = cls.LEVELS[level].game
            seeds = args.ttt_seeds if tictactoe else args.c4_seeds
            for agent in ("oracle", "first"):
                (b, sb), (a, sa) = (variety(cls, level, before, seeds, agent) for before in (True, False))
                table.add_row(
                    cls.__name__, f"{game.rows}x{game.cols}", agent, str(seeds), str(b), str(a), f"{sb:.2f}", f"{sa:.2f}"
                )
    console.print(table)
    console.print(f"({time.perf_counter() - start:.0f} s)")

    search = views.ConnectFourVsSearch.LEVELS[0].player
    table = Table(title=f"Strength: mean score (1 win, 0.5 draw) over {args.games} games, half from each seat, 95% interval")
    for column in ("board", "player", "opponent", "score"):
        table.add_column(column, justify="left" if column in ("player", "opponent") else "right")
    pairings: list[tuple[BoardGame, Player, Player]] = [(GAMES["tictactoe"], HeuristicPlayer(), RandomPlayer())]
    for rows, cols in CONNECT_FOUR_SIZES:
        game = connect_four_game(rows, cols)
        pairings += [
            (game, search, HeuristicPlayer()),
            (game, search, RandomPlayer()),
            (game, search, old(search)),
            (game, HeuristicPlayer(), RandomPlayer()),
        ]
    start = time.perf_counter()
    for n, (game, player, opponent) in enumerate(pairings):
        mean, half = duel(game, player, opponent, args.games, seed=n)
        table.add_row(f"{game.rows}x{game.cols}", label(player), label(opponent), f"{mean:.2f} ± {half:.2f}")
    console.print(table)
    console.print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
