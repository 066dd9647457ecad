"""Liar's dice for two or more players as an OpenSpiel game: ``python_rl4vlm_liars_dice``.

OpenSpiel's own ``liars_dice`` (C++) takes at most two players. This module registers, on
import, a Python OpenSpiel game with its rules for any number of players, written from its
documented rules (``open_spiel/games/liars_dice/liars_dice.h``) and checked move for move against
it at two players (``tests/envs/games/test_liars_dice_players.py``):

- chance rolls each player's ``numdice`` dice, player 0's first (six faces, uniform);
- players bid in turn, 0, 1, ..., N-1, 0, ...; a bid ``q-f`` ("at least q of all dice show face
  f") is action ``(q - 1) * 6 + f - 1``, and each bid must be a higher action than the last
  (OpenSpiel's default ``bidding_rule=reset-face``); the face 6 is wild (it counts as any face,
  and a bid on 6 counts only sixes);
- instead of bidding, a player may call ``Liar`` (action ``6 * N * numdice``) once a bid stands:
  the dice are shown; if the bid holds its maker wins, else the caller wins.

The returns: +1 to the winner of the challenge and -1 to its loser, as OpenSpiel pays at two
players; with more players the others, who took no part in the challenge, get 0 (the game stays
zero-sum). The information state string and tensor have OpenSpiel's format (the sorted dice, then
the bids; one-hot player, one-hot dice, a bit per action taken), so policies keyed by OpenSpiel's
strings read it unchanged. Python states are slower than C++: the envs use OpenSpiel's own
``liars_dice`` at two players and this game only beyond.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.extras import require

require("games", "The two-player games")  # before importing it: an error naming the extra

import pyspiel

__all__ = ["GAME_NAME", "MAX_PLAYERS", "spec"]

GAME_NAME = "python_rl4vlm_liars_dice"
FACES = 6
MAX_PLAYERS = 6

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Liar's dice for N players (RL4VLM Gym, OpenSpiel's liars_dice rules)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=False,
    provides_observation_tensor=True,
    parameter_specification={"players": 3, "numdice": 1},
)


def spec(players: int, numdice: int) -> str:
    """The game string of ``players`` players rolling ``numdice`` dice each."""
    return f"{GAME_NAME}(numdice={numdice},players={players})"


class LiarsDiceGame(pyspiel.Game):
    """Liar's dice for ``players`` players with ``numdice`` dice each (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        players, numdice = int(params["players"]), int(params["numdice"])
        if not 2 <= players <= MAX_PLAYERS or numdice < 1:
            raise ValueError(
                f"{GAME_NAME}: players must be in 2..{MAX_PLAYERS} and numdice at least 1 (got {players}, {numdice})"
            )
        total = players * numdice
        info = pyspiel.GameInfo(
            num_distinct_actions=total * FACES + 1,
            max_chance_outcomes=FACES,
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=total * FACES + 1,  # every bid once, then Liar
        )
        super().__init__(_GAME_TYPE, info, params)
        self.numdice, self.total = numdice, total

    def new_initial_state(self) -> LiarsDiceState:
        return LiarsDiceState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> LiarsDiceObserver:
        return LiarsDiceObserver(self)


class LiarsDiceState(pyspiel.State):
    """A game of :class:`LiarsDiceGame`: the dice rolled so far and the bids."""

    def __init__(self, game: LiarsDiceGame) -> None:
        super().__init__(game)
        self.players, self.numdice, self.total = game.num_players(), game.numdice, game.total
        self.liar = self.total * FACES  # the Liar action
        self.dice: list[list[int]] = [[] for _ in range(self.players)]  # faces 1..6, by player
        self.bids: list[int] = []
        self.rolled = 0
        self.called = False

    def current_player(self) -> int:
        if self.called:
            return pyspiel.PlayerId.TERMINAL
        if self.rolled < self.total:
            return pyspiel.PlayerId.CHANCE
        return len(self.bids) % self.players

    def _legal_actions(self, player: int) -> list[int]:
        start = self.bids[-1] + 1 if self.bids else 0
        return [*range(start, self.liar), *([self.liar] if self.bids else [])]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(face, 1.0 / FACES) for face in range(FACES)]

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self.dice[self.rolled // self.numdice].append(action + 1)
            self.rolled += 1
        elif action == self.liar:
            self.called = True
        else:
            self.bids.append(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"Roll {action + 1}"
        if action == self.liar:
            return "Liar"
        return f"{action // FACES + 1}-{action % FACES + 1}"

    def is_terminal(self) -> bool:
        return self.called

    def challenge(self) -> tuple[int, int]:
        """The (winner, loser) of the call: the bid's maker wins if it holds, else the caller."""
        bid = self.bids[-1]
        quantity, face = bid // FACES + 1, bid % FACES + 1
        count = sum(1 for dice in self.dice for d in dice if d == face or (d == FACES and face != FACES))
        bidder, caller = (len(self.bids) - 1) % self.players, len(self.bids) % self.players
        return (bidder, caller) if count >= quantity else (caller, bidder)

    def returns(self) -> list[float]:
        paid = [0.0] * self.players
        if self.called:
            winner, loser = self.challenge()
            paid[winner], paid[loser] = 1.0, -1.0
        return paid

    def __str__(self) -> str:
        dice = " ".join("".join(map(str, sorted(d))) for d in self.dice)
        return " ".join([dice, *(self._action_to_string(0, b) for b in self.bids), *(["Liar"] if self.called else [])])


class LiarsDiceObserver:
    """OpenSpiel's liars_dice information state: the string ``"<sorted dice> <bid> ... [Liar]"``
    and the tensor [one-hot player, one-hot face of each sorted die, a bit per action taken]."""

    def __init__(self, game: LiarsDiceGame) -> None:
        self.players, self.numdice = game.num_players(), game.numdice
        self.tensor = np.zeros(self.players + self.numdice * FACES + game.total * FACES + 1, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: LiarsDiceState, player: int) -> None:
        self.tensor.fill(0)
        self.tensor[player] = 1
        for i, face in enumerate(sorted(state.dice[player])):
            self.tensor[self.players + i * FACES + face - 1] = 1
        taken = self.players + self.numdice * FACES
        for action in [*state.bids, *([state.liar] if state.called else [])]:
            self.tensor[taken + action] = 1

    def string_from(self, state: LiarsDiceState, player: int) -> str:
        dice = "".join(map(str, sorted(state.dice[player])))
        moves = [state._action_to_string(player, b) for b in state.bids] + (["Liar"] if state.called else [])
        return " ".join([dice, *moves])


pyspiel.register_game(_GAME_TYPE, LiarsDiceGame)
