"""Points24: make 24 from four cards with + - * / and parentheses."""

from __future__ import annotations

from typing import ClassVar

from rl4vlm_gym.envs.cards.levels import POINTS24_LEVELS, PointsLevel
from rl4vlm_gym.envs.cards.points import PointsGame


class Points24(PointsGame):
    """Build a formula from the cards with ``+ - * /`` and parentheses that equals 24.

    ## Description
    RL4VLM's Points24 (Zhai et al., 2024), the game of 24: four cards are dealt and the agent
    writes a formula, one token per step, that uses every card once and equals 24, then
    submits it with ``=``. Arithmetic is exact, so ``8/(3-8/3)`` counts (RL4VLM's float
    ``eval`` rejects it).

    Decisions (``decision()``): exact from any partial formula: ``steps_to_go`` is the fewest
    tokens that complete it to a right formula, plus the ``=`` (``points_oracle.Completions``), the
    optimal actions the tokens that keep to such a completion; "unsolvable from here" once none
    exists or the step budget is shorter. Features ``cards_used``, ``cards_left``, ``open_parens``.
    With four cards a formula that keeps to a shortest solution is read off a shipped table of every
    hand's shortest solutions (``points24_table.py``) instead of searched.

    ## Observation
    - ``image``: the cards on green felt, ``Formula:`` at 0.70 and the formula at 0.80 of the
      height (300x300: four 67x93 cards, as in RL4VLM). A 10 shows as 10.
    - ``text``: ``"Cards: A♣, 7♦, 10♥, Q♠\\nFormula: (7-1)"`` in ``text`` and ``image+text``
      modes; in ``image`` mode only the feedback on the last action.
    - ``mission``: the target, the operators and the face-card rule.
    - ``actions``: RL4VLM's 17 tokens ``1..10 + - * / ( ) =`` (``1..13`` when faces count
      11..13), all of them every step. So ``actions`` holds words the rules refuse: a number no
      unused card is worth is an invalid action that changes nothing.

    ## Actions
    A number (refused, as an invalid action, if no unused card is worth it), an operator or a
    parenthesis, or ``=`` to submit.

    ## Rewards
    ``rl4vlm``: +10 for a correct submission, -1 for a wrong one, an invalid action, or running
    out of steps (RL4VLM truncates once the formula is longer than 20 tokens); 0 for other
    tokens. ``verl-agent``: the same with every -1 replaced by 0.

    ## Levels
    Level 1 (the default) is RL4VLM's game: four cards from a full deck, faces count 10, and
    the hand may be unsolvable. Level 0 deals only solvable hands; level 2 counts J, Q, K as
    11, 12, 13 (solvable hands); level 3 deals five cards (solvable hands).

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

    LEVELS: ClassVar[tuple[PointsLevel, ...]] = POINTS24_LEVELS
    DEFAULT_LEVEL: ClassVar[int] = 1
    OPERATORS: ClassVar[tuple[str, ...]] = ("+", "-", "*", "/", "(", ")")
    PARENTHESES: ClassVar[bool] = True
    CARD_WIDTH: ClassVar[float] = 67 / 300
    FORMULA_Y: ClassVar[float] = 0.80
    FONT_SIZE: ClassVar[int] = 16
    LABEL_ON_OWN_LINE: ClassVar[bool] = True
    SYNONYMS: ClassVar = {"plus": "+", "minus": "-", "times": "*", "×": "*", "÷": "/", "equals": "="}
