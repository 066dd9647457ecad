"""Kuhn poker as a PettingZoo AEC env where each agent sees only its own card.

``kuhn_poker_env()`` plays OpenSpiel's ``kuhn_poker`` through :class:`~.spiel.SpielAEC`, as Leduc
hold'em and Liar's dice do, with two players or three (``players=3``: OpenSpiel's deck then has
four cards); the deal is OpenSpiel's chance node sampled with the env's RNG (seeded by
``reset(seed=...)``), so two envs with one seed deal the same hands.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rl4vlm_gym.envs.games.kuhn import KUHN, SPEC, SPEC_3
from rl4vlm_gym.envs.games.spiel import SpielAEC, SpielGame

__all__ = ["KuhnPokerAEC", "kuhn_poker_env"]


class KuhnPokerAEC(SpielAEC):
    """Kuhn poker for two or three VLM agents behind PettingZoo's AEC API; hidden cards stay hidden.

    ## Description
    OpenSpiel's ``kuhn_poker`` plays the rules and pays the chips; ``player_0`` acts first. With
    ``players=3`` the deck is Jack < Queen < King < Ace and the agents are ``player_0`` to
    ``player_2``; after a bet every later player calls or folds, and the highest card among the
    players still in wins the pot.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own card face
    up, the others face down (face up at a showdown, for the players still in), the moves and the
    pot, the same in words, the rules, and ``pass``/``bet`` when it is its turn (else nothing).

    ## Action Space
    Free text parsed against ``pass``/``bet`` (``check``/``fold`` mean pass, ``call`` bet). An
    invalid move changes nothing, keeps the turn and pays nothing; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's returns at the end of the hand (the chips won or lost), 0 before.

    ## Arguments
    ``players``: 2 (default) or 3; ``obs_mode``, ``image_size`` (a square side),
    ``action_format``, ``action_match`` as in ``VLMEnv``; ``render_mode`` (``rgb_array`` and
    ``human`` show the view of the agent to move, ``ansi`` its text); ``max_cycles``: steps after
    which every agent is truncated (20 from :func:`kuhn_poker_env`); ``render_fps``: the pace of
    the ``human`` window. ``oracle_action(agent)`` plays the CFR equilibrium as the mixed
    strategy it is, a move sampled with its probabilities at the agent's information state
    (``kuhn_cfr.json``; with three players ``kuhn_3_cfr.json``, CFR's average policy, an
    approximate equilibrium whose NashConv is recorded there), from a generator spawned from the
    env's at reset.
    """

    metadata: dict[str, Any] = {**SpielAEC.metadata, "name": "rl4vlm_kuhn_poker_v0"}
    GAME: ClassVar[SpielGame] = KUHN
    SPECS: ClassVar[tuple[str, ...]] = (SPEC,)
    EQUILIBRIUM: ClassVar[tuple[str, ...]] = ("cfr",)
    PLAYERS: ClassVar[tuple[int, ...]] = (2, 3)

    @classmethod
    def game_spec(cls, level: int, players: int) -> str:
        return SPEC if players == 2 else SPEC_3


def kuhn_poker_env(**kwargs: Any) -> KuhnPokerAEC:
    """Kuhn poker (OpenSpiel's ``kuhn_poker``) with VLM observations and hidden cards; ``players``
    (2 or 3) seats that many agents."""
    return KuhnPokerAEC(**{"max_cycles": 20, **kwargs})  # a hand is at most three moves (five with three players)
