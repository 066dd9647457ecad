"""The OpenSpiel adapter's games in the match harness (``rl4vlm-gym match``).

:data:`GAMES` holds a :class:`~rl4vlm_gym.games.GameSpec` for each game of
:data:`rl4vlm_gym.envs.games.openspiel_adapter.TEXT_GAMES`, for the games family's entry point to
register (``arena.register``). Like :mod:`~rl4vlm_gym.envs.games.arena`, this module is imported
only when the game registry (:mod:`rl4vlm_gym.games`) loads its entry points, never by the env
registry; neither imports the harness.
Their players are the harness's own: ``random``, ``oracle`` (the adapter's expectimax against
random opponents) and any agent; levels are the env's ``level`` (``-g level=1``).
"""

from __future__ import annotations

from rl4vlm_gym.games import GameSpec

_HERE = "rl4vlm_gym.envs.games.openspiel_adapter"

GAMES = (
    GameSpec(
        "goofspiel",
        f"{_HERE}:goofspiel_env",
        summary="Goofspiel (OpenSpiel's goofspiel, simultaneous bids; -g level=0..2: 4, 5 or 6 cards), through the OpenSpiel adapter.",
    ),
    GameSpec(
        "dots_and_boxes",
        f"{_HERE}:dots_and_boxes_env",
        summary="Dots and Boxes (OpenSpiel's dots_and_boxes; -g level=0..2: 2x2, 2x3 or 3x3 boxes), through the OpenSpiel adapter.",
    ),
    GameSpec(
        "pig",
        f"{_HERE}:pig_env",
        summary="Pig (OpenSpiel's pig, a dice game; -g level=0..2: first to 10, 20 or 30 points), through the OpenSpiel adapter.",
    ),
)
