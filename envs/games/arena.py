"""The games family's entries in the match harness: each AEC game, its built-in players and, for
the poker games, how OpenSpiel states look to an agent (``rl4vlm-gym match``,
:mod:`rl4vlm_gym.harness.matches`).

``register`` is this family's ``rl4vlm_gym.games`` entry point: the match harness calls it when a
match needs the game registry, never on ``import rl4vlm_gym``. A new game is one more
:class:`~rl4vlm_gym.harness.matches.GameSpec` in ``GAMES``; the harness itself needs no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rl4vlm_gym.harness.matches import GameSpec, register_game

_HERE = "rl4vlm_gym.envs.games.arena"

GAMES = (
    GameSpec(
        "tictactoe",
        "rl4vlm_gym.envs.games.aec:tictactoe_env",
        players={"heuristic": f"{_HERE}:heuristic", "perfect": f"{_HERE}:perfect"},
        summary="Tic-Tac-Toe (PettingZoo's tictactoe_v3); built-in players: heuristic, perfect (minimax).",
    ),
    GameSpec(
        "connect_four",
        "rl4vlm_gym.envs.games.aec:connect_four_env",
        players={"heuristic": f"{_HERE}:heuristic", "search": f"{_HERE}:search"},
        summary="Connect Four (PettingZoo's connect_four_v3); built-in players: heuristic, search (alpha-beta, 3 plies).",
    ),
    GameSpec(
        "kuhn_poker",
        "rl4vlm_gym.envs.games.kuhn_aec:kuhn_poker_env",
        players={"cfr": f"{_HERE}:kuhn_cfr"},
        spiel_game="kuhn_poker",
        spiel_observation=f"{_HERE}:kuhn_observation",
        summary="Kuhn poker (OpenSpiel's kuhn_poker), one hand per game; built-in player: cfr (the equilibrium).",
    ),
)


def register() -> None:
    """Register the games' match entries (the ``rl4vlm_gym.games`` entry point)."""
    for spec in GAMES:
        register_game(spec)


# Board games: the opponents of the single-agent views, reading the AEC env's board.


@dataclass(frozen=True)
class BoardPlayer:
    """One of :mod:`rl4vlm_gym.envs.games.opponents`' players in a seat of a ``BoardGameAEC``."""

    name: str
    depth: int = 3

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.opponents import PLAYERS, SearchPlayer

        player = SearchPlayer(depth=self.depth) if self.name == "search" else PLAYERS[self.name]()
        return env.game.moves[player.choose(env.game, env.board, rng)]


def heuristic() -> BoardPlayer:
    return BoardPlayer("heuristic")


def perfect() -> BoardPlayer:
    return BoardPlayer("perfect")


def search() -> BoardPlayer:
    return BoardPlayer("search", depth=3)  # the depth of rl4vlm/ConnectFour-vs-Search-v0


# Kuhn poker: the CFR equilibrium, known at every information state.


@dataclass(frozen=True)
class KuhnTablePlayer:
    """A Kuhn poker policy by OpenSpiel information state (``kuhn.KuhnOpponent``)."""

    name: str

    def policy(self, state: Any) -> dict[int, float]:
        from rl4vlm_gym.envs.games.kuhn import KuhnOpponent

        p = KuhnOpponent(self.name).probs(state.information_state_string())
        return {0: p[0], 1: p[1]}

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.kuhn import ACTIONS

        p = self.policy(env.state)
        return ACTIONS[int(rng.random() >= p[0])]  # the single-agent view's draw


def kuhn_cfr() -> KuhnTablePlayer:
    return KuhnTablePlayer("cfr")


def kuhn_observation(state: Any, obs_mode: str = "image+text", image_size: int = 256, **_: Any) -> tuple[dict[str, Any], Any]:
    """What the player to move at OpenSpiel ``state`` sees in ``KuhnPokerAEC`` (its card, the
    moves, the pot), and the env's parser."""
    from rl4vlm_gym.envs.games.kuhn import ACTIONS, MISSION, hand_image, hand_text
    from rl4vlm_gym.envs.games.kuhn_aec import SYNONYMS
    from rl4vlm_gym.parsing import ActionParser

    seat = state.current_player()
    history = [int(a) for a in state.history()]
    cards, moves = (history[0], history[1]), tuple(history[2:])
    text = hand_text(seat, cards, moves, None) if obs_mode != "image" else ""
    if obs_mode == "text":
        image = np.zeros((image_size, image_size, 3), np.uint8)
    else:
        image = hand_image((image_size, image_size), seat, cards, moves, False)
    obs = {"image": image, "text": text, "mission": MISSION, "actions": tuple(ACTIONS[a] for a in state.legal_actions())}
    return obs, ActionParser(synonyms=SYNONYMS)
