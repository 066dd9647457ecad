"""EZPoints: make 12 from two cards with + and *."""

from __future__ import annotations

from typing import ClassVar

from rl4vlm_gym.envs.cards.deck import RANKS, Card, random_suit
from rl4vlm_gym.envs.cards.levels import EZPOINTS_LEVELS, PointsLevel
from rl4vlm_gym.envs.cards.points import PointsGame


class EZPoints(PointsGame):
    """Build a formula from the cards, with ``+`` and ``*``, that equals the target.

    ## Description
    RL4VLM's EZPoints (Zhai et al., 2024): two cards are dealt and the agent writes a formula,
    one token per step, that uses both cards once and equals 12, then submits it with ``=``.
    J, Q and K count as 10. Higher levels deal more cards and other targets. The formula is
    evaluated exactly (never with ``eval``), and ``1`` then ``2`` are two numbers, not 12.

    Decisions (``decision()``): exact from any partial formula: ``steps_to_go`` is the fewest
    tokens that complete it to a right formula, plus the ``=`` (``points_oracle.Completions``), the
    optimal actions the tokens that keep to such a completion; "unsolvable from here" once none
    exists or the step budget is shorter. Features ``cards_used``, ``cards_left``, ``open_parens``.

    ## Observation
    - ``image``: the cards on green felt (#35654d) and ``Formula: ...`` below them (300x300:
      two 135x189 cards, the formula at 0.86 of the height, as in RL4VLM). A 10 shows as 10.
    - ``text``: ``"Cards: 5♥, K♠\\nFormula: 5+"`` in ``text`` and ``image+text`` modes; in
      ``image`` mode only the feedback on the last action.
    - ``mission``: the target, the operators and the face-card rule.
    - ``actions``: RL4VLM's 13 tokens ``1..10 + * =`` (all of them, every step: which numbers
      are on the cards is for the agent to see). So ``actions`` holds words the rules refuse:
      a number no unused card is worth is an invalid action that changes nothing.

    ## Actions
    A number (refused, as an invalid action, if no unused card is worth it), ``+``, ``*``, or
    ``=`` to submit. RL4VLM's JSON answers parse (``"action": "10"`` is ten, never one).

    ## Rewards
    ``rl4vlm``: +10 for a correct submission, -1 for a wrong one, an invalid action, or running
    out of steps; 0 for other tokens. ``verl-agent``: the same with every -1 replaced by 0.

    ## Levels
    Level 0 is RL4VLM's deal: a first card 2..K, then a second card that completes 12 by ``+``
    (or, half the time when the first is 2, 3, 4 or 6, by ``*``), in random order. Higher levels
    deal 3 or 4 cards from a full deck (aces count 1), keeping only hands that can make the
    target; levels 2 and 3 draw the target per episode. RL4VLM truncates when the formula is
    too long (more than 5 tokens before a step); here that is a budget of ``max_steps`` steps.

    ## Arguments
    The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 300x300), ``reward_variant`` (``rl4vlm``, ``verl-agent``),
    ``action_format``, ``action_match``, ``render_mode``, ``appearance`` (``default``; ``held-out``:
    a wine cloth, cream serif lettering and a dark page, a look no training frame shows; the cards'
    faces, the text and the rules stay the same), ``wording`` (``train``; ``held-out``: the mission
    and the feedback in sentences no training episode reads, three phrasings of each, the seed
    picking one; the episode, the images and the actions stay the same).

    ## Version History
    - v0: RL4VLM's rules, deal and layout with our own card art; seeded through
      ``reset(seed)``; exact evaluation; no random action on unparseable output.
    """

    LEVELS: ClassVar[tuple[PointsLevel, ...]] = EZPOINTS_LEVELS
    OPERATORS: ClassVar[tuple[str, ...]] = ("+", "*")
    PARENTHESES: ClassVar[bool] = False
    CARD_WIDTH: ClassVar[float] = 135 / 300
    FORMULA_Y: ClassVar[float] = 0.86
    FONT_SIZE: ClassVar[int] = 20
    SYNONYMS: ClassVar = {"plus": "+", "times": "*", "x": "*", "×": "*", "equals": "="}

    def _deal(self, config: PointsLevel) -> tuple[tuple[Card, ...], int]:
        if not config.rl4vlm_deal:
            return super()._deal(config)
        rng = self.np_random
        rank = int(rng.integers(2, 14))  # 2..K, faces worth 10
        first = min(rank, 10)
        if first in (2, 3, 4, 6) and rng.random() < 0.5:
            second = 12 // first
        else:
            second = 12 - first
        cards = (Card(RANKS[rank - 1], random_suit(rng)), Card(RANKS[second - 1], random_suit(rng)))
        if rng.random() < 0.5:
            cards = cards[::-1]
        return cards, 12
