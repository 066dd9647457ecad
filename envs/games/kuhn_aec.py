"""Kuhn poker as a PettingZoo AEC env where each agent sees only its own card.

``kuhn_poker_env()`` plays OpenSpiel's ``kuhn_poker`` through :class:`~.spiel.SpielAEC`, as Leduc
hold'em and Liar's dice do; the deal is OpenSpiel's chance node sampled with the env's RNG
(seeded by ``reset(seed=...)``), so two envs with one seed deal the same hands.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rl4vlm_gym.envs.games.kuhn import KUHN, SPEC
from rl4vlm_gym.envs.games.spiel import SpielAEC, SpielGame

__all__ = ["KuhnPokerAEC", "kuhn_poker_env"]


class KuhnPokerAEC(SpielAEC):
    """Kuhn poker for two VLM agents behind PettingZoo's AEC API; hidden cards stay hidden.

    ## Description
    OpenSpiel's ``kuhn_poker`` plays the rules and pays the chips; ``player_0`` acts first.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own card face
    up, the other face down (face up after a showdown), the moves and the pot, the same in
    words, the rules, and ``pass``/``bet`` when it is its turn (else nothing).

    ## Action Space
    Free text parsed against ``pass``/``bet`` (``check``/``fold`` mean pass, ``call`` bet). An
    invalid move changes nothing, keeps the turn and pays nothing; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's returns at the end of the hand (+-1 or +-2 chips), 0 before.

    ## Arguments
    ``obs_mode``, ``image_size`` (a square side), ``action_format``, ``action_match`` as in
    ``VLMEnv``; ``render_mode`` (``rgb_array`` and ``human`` show the view of the agent to move,
    ``ansi`` its text); ``max_cycles``: steps after which every agent is truncated (20 from
    :func:`kuhn_poker_env`); ``render_fps``: the pace of the ``human`` window.
    ``oracle_action(agent)`` is the CFR equilibrium's most likely move (``kuhn_cfr.json``, at the
    agent's information state; pass among equals).
    """

    metadata: ClassVar[dict[str, Any]] = {**SpielAEC.metadata, "name": "rl4vlm_kuhn_poker_v0"}
    GAME: ClassVar[SpielGame] = KUHN
    SPECS: ClassVar[tuple[str, ...]] = (SPEC,)
    EQUILIBRIUM: ClassVar[tuple[str, ...]] = ("cfr",)


def kuhn_poker_env(**kwargs: Any) -> KuhnPokerAEC:
    """Kuhn poker (OpenSpiel's ``kuhn_poker``) with VLM observations and hidden cards."""
    return KuhnPokerAEC(**{"max_cycles": 20, **kwargs})  # a hand is at most three moves
