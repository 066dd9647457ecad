"""Write the games suite (leaderboards/suites/games.yaml): the games family's single-agent views.

    .venv/bin/python scripts/make_games_suite.py

Each task's seeds are drawn once from the training range (``draw_seeds``, root ``400 + 2k`` for the
k-th task), so a re-run writes the same file. Board games score a win 1, a draw 1/2, a loss 0 (the
native return, from -1 to 1). Poker tasks are played in the duplicate format (the views'
``duplicate=True``: seeds 2k and 2k+1 deal the same cards from both seats) and scored in chips, with
as many deals as separating the oracle, random and always-raise (``prefer -a
moves=raise,bet,call``) at 95% needs: ``benchmarks/games_board_power.py`` gives, at 80% / 99%
power, kuhn-random 2,158 / 4,306 deals, kuhn-cfr 7,193 / 14,368 and leduc-cfr 1,982 / 4,018.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

import rl4vlm_gym  # noqa: F401  (registers every id)
from rl4vlm_gym.harness.suite import draw_seeds, load_suite

SUITE = Path(__file__).resolve().parents[1] / "leaderboards" / "suites" / "games.yaml"
WIN_DRAW_LOSS = {"metric": "return", "low": -1, "high": 1, "unit": "points"}  # PettingZoo's: win 1, draw 0, loss -1

# name, env id, level, seeds (deals for duplicate tasks), score, kwargs
TASKS: list[tuple[str, str, int | None, int, dict[str, Any] | None, dict[str, Any]]] = [
    ("tictactoe-random", "rl4vlm/TicTacToe-vs-Random-v0", None, 50, WIN_DRAW_LOSS, {}),
    ("tictactoe-perfect", "rl4vlm/TicTacToe-vs-Perfect-v0", None, 50, WIN_DRAW_LOSS, {}),
    ("connectfour-random", "rl4vlm/ConnectFour-vs-Random-v0", None, 30, WIN_DRAW_LOSS, {}),
    ("connectfour-search", "rl4vlm/ConnectFour-vs-Search-v0", None, 30, WIN_DRAW_LOSS, {}),
    (
        "kuhn-random",
        "rl4vlm/KuhnPoker-vs-Random-v0",
        0,
        3_000,
        {"metric": "return", "low": -2, "high": 2, "unit": "chips"},
        {"duplicate": True},
    ),
    (
        "kuhn-cfr",
        "rl4vlm/KuhnPoker-vs-CFR-v0",
        0,
        10_000,
        {"metric": "return", "low": -2, "high": 2, "unit": "chips"},
        {"duplicate": True},
    ),
    (
        "leduc-cfr",
        "rl4vlm/LeducHoldem-vs-CFR-v0",
        None,
        3_000,
        {"metric": "return", "low": -13, "high": 13, "unit": "chips"},
        {"duplicate": True},
    ),
    ("liarsdice-heuristic", "rl4vlm/LiarsDice-vs-Heuristic-v0", 0, 100, None, {}),
    ("referential-listener", "rl4vlm/ReferentialGame-Listener-v0", 1, 50, None, {}),
]

DESCRIPTION = (
    "The games family's single-agent views, one seat against a fixed opponent on training seeds: Tic-Tac-Toe "
    "against the random and the perfect opponent and Connect Four against the random and the alpha-beta opponent "
    "(a win scores 1, a draw 1/2), Kuhn poker against the random and the CFR equilibrium opponent and Leduc "
    "hold'em against the CFR+ equilibrium (scored in chips, each deal played from both seats), Liar's dice (one "
    "die each) against the heuristic bidder and the cooperative referential game as listener (4 candidates in "
    "size, colour and shape). Ranked by the mean over tasks of each task's score mapped onto [0, 1]."
)


def main() -> None:
    tasks = []
    for k, (name, env, level, n, score, kwargs) in enumerate(TASKS):
        task: dict[str, Any] = {"name": name, "env": env}
        if level is not None:
            task["level"] = level
        if kwargs:
            task["kwargs"] = kwargs
        if kwargs.get("duplicate"):
            # deal d is seeds 2d (seat 0) and 2d+1 (seat 1): the first n distinct deals of the
            # training range's draw, each whole (both its seeds are in the range: it starts even)
            deals = list(dict.fromkeys(s // 2 for s in draw_seeds("train", 2 * n, root=400 + 2 * k)))[:n]
            seeds = [2 * d + seat for d in deals for seat in (0, 1)]
            task["score"] = {**score, "duplicate": 2}
        else:
            seeds = draw_seeds("train", n, root=400 + 2 * k)
            if score is not None:
                task["score"] = dict(score)  # a copy: yaml would write anchors for a shared one
        task["seeds"] = seeds
        tasks.append(task)
    suite = {
        "name": "games",
        "axis": "in-distribution",
        "description": DESCRIPTION,
        "prompt": {"template": "default", "output_format": "json", "history": 0, "images": 1},
        "tasks": tasks,
    }
    header = (
        "# In-distribution: the two-player games against built-in opponents on training seeds.\n"
        "# Written by scripts/make_games_suite.py (its docstring: the seeds, the scores, the deals); do not edit.\n"
    )
    SUITE.write_text(header + yaml.safe_dump(suite, sort_keys=False, width=110, default_flow_style=None), encoding="utf-8")
    loaded = load_suite(SUITE)
    loaded.check_envs()
    print(f"wrote {SUITE}: {len(loaded.episodes)} episodes in {len(loaded.tasks)} tasks")


if __name__ == "__main__":
    main()
