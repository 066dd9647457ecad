"""The exactly optimal stand/hit policy for Blackjack-v1 (Sutton & Barto, Example 5.1).

Rules: an infinite deck, so every draw is independent: ranks 1 (ace) to 9 each with probability
1/13, and 10 with probability 4/13 (ten, jack, queen, king). An ace counts 11 when that does not
bust the hand (a "usable" ace, making the total "soft"), else 1. The player may only stand or
hit; going over 21 loses at once. On stand, the dealer turns the hidden card (one more
independent draw) and draws to 17 or more (see :class:`BlackjackRules` for soft 17). A dealer
bust or a higher player total wins +1, equal totals draw 0, anything else loses -1.

Values are computed by exact recursion over (total, usable ace) with :class:`fractions.Fraction`
and memoised, so ties between standing and hitting are detected exactly (they go to "stand").
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

__all__ = [
    "BUST",
    "CARD_PROBABILITIES",
    "DEALER_TOTALS",
    "Action",
    "BlackjackRules",
    "action_values",
    "dealer_distribution",
    "deal_value",
    "expected_return",
    "hand_value",
    "hit_value",
    "optimal_action",
    "stand_value",
]

Action = Literal["hit", "stand"]
BUST: Final = 22  # the dealer outcome "went over 21"
DEALER_TOTALS: Final = (17, 18, 19, 20, 21, BUST)
CARD_PROBABILITIES: Final = {card: Fraction(4 if card == 10 else 1, 13) for card in range(1, 11)}
_NATURAL_PAYOUT: Final = Fraction(3, 2)


@dataclass(frozen=True)
class BlackjackRules:
    """The rule options that change optimal play or its value.

    Attributes:
        dealer_hits_soft_17: the dealer draws on a soft 17 (ace counted 11); by default the dealer
            stands on every 17, as in Gymnasium.
        natural: a two-card 21 pays +1.5 unless the dealer's first two cards are also 21 (then
            it draws 0). Gymnasium's legacy ``natural=True`` differs in one case: there a dealer
            who draws to a three-card 21 also draws with the natural, here the natural still wins.
            The option only changes the value of the starting hand, never a decision, since
            standing on 21 is always optimal.
    """

    dealer_hits_soft_17: bool = False
    natural: bool = False


_STANDARD: Final = BlackjackRules()


def hand_value(cards: Sequence[int]) -> tuple[int, bool]:
    """Return ``(total, usable_ace)`` of a hand of card values 1..10 (1 is an ace).

    The total counts one ace as 11 when that keeps it at 21 or under, as Gymnasium's
    ``sum_hand`` does; a busted hand returns its total over 21.

    Raises:
        ValueError: if ``cards`` is empty or holds a value outside 1..10.
    """
    values = [_card(card, "cards") for card in cards]
    if not values:
        raise ValueError("cards must hold at least one card value in 1..10, got none")
    total = sum(values)
    usable = 1 in values and total + 10 <= 21
    return total + 10 * usable, usable


def dealer_distribution(upcard: int, rules: BlackjackRules = _STANDARD) -> dict[int, Fraction]:
    """Exact probabilities of the dealer's final total given the face-up card.

    Args:
        upcard: the dealer's face-up card, 1 (ace) to 10.
        rules: the rule options.

    Returns:
        A dict from each of :data:`DEALER_TOTALS` (17..21, and :data:`BUST` = 22) to its
        probability; the probabilities sum to exactly 1. A dealer natural counts as 21.
    """
    upcard = _card(upcard, "upcard")
    return dict(zip(DEALER_TOTALS, _dealer_outcomes(*_start(upcard), _checked(rules))))


def stand_value(
    player_total: int, dealer_upcard: int, rules: BlackjackRules = _STANDARD
) -> float:
    """Expected reward of standing on ``player_total`` (2..21) against ``dealer_upcard``."""
    total = _total(player_total, usable_ace=False)
    return float(_stand(total, _card(dealer_upcard, "dealer_upcard"), _checked(rules)))


def hit_value(
    player_total: int, usable_ace: bool, dealer_upcard: int, rules: BlackjackRules = _STANDARD
) -> float:
    """Expected reward of hitting once, then playing optimally.

    Args:
        player_total: the hand's total, 2..21 (11..21 when ``usable_ace``), as :func:`hand_value`
            counts it.
        usable_ace: whether the hand counts an ace as 11.
        dealer_upcard: the dealer's face-up card, 1 (ace) to 10.
        rules: the rule options.
    """
    state = _state(player_total, usable_ace, dealer_upcard, rules)
    return float(_hit(*state))


def optimal_action(
    player_total: int, usable_ace: bool, dealer_upcard: int, rules: BlackjackRules = _STANDARD
) -> Action:
    """The action with the highest expected reward: ``"hit"`` or ``"stand"`` (ties stand).

    Arguments are as in :func:`hit_value`. The decision is exact, not floating point.
    """
    total, soft, upcard, checked = _state(player_total, usable_ace, dealer_upcard, rules)
    hit_better = _hit(total, soft, upcard, checked) > _stand(total, upcard, checked)
    return "hit" if hit_better else "stand"


def action_values(
    player_total: int,
    usable_ace: bool,
    dealer_upcard: int,
    rules: BlackjackRules = _STANDARD,
    natural: bool = False,
) -> dict[Action, Fraction]:
    """The exact expected reward of standing and of hitting (then playing optimally).

    The values of a decision in a game of chance: :func:`optimal_action` takes the action of the
    higher one (ties stand). They are exact fractions, so a tie is found exactly.

    Args:
        player_total, usable_ace, dealer_upcard, rules: as in :func:`hit_value`.
        natural: the hand is a natural (a two-card 21). Where ``rules.natural`` pays 3:2, standing
            on it pays +1.5 unless the dealer's hidden card completes a natural too (a push), as in
            :func:`deal_value`; otherwise a natural stands like any 21.
    """
    total, soft, upcard, checked = _state(player_total, usable_ace, dealer_upcard, rules)
    hit = _hit(total, soft, upcard, checked)
    if natural and checked.natural:
        if total != 21:
            raise ValueError(f"a natural totals 21, got {player_total!r}")
        completing = {1: 10, 10: 1}.get(upcard)  # the hidden card completes a dealer natural only behind an ace or a ten
        dealer_natural = CARD_PROBABILITIES[completing] if completing else Fraction(0)
        return {"stand": _NATURAL_PAYOUT * (1 - dealer_natural), "hit": hit}
    return {"stand": _stand(total, upcard, checked), "hit": hit}


def deal_value(
    player_cards: Sequence[int], dealer_upcard: int, rules: BlackjackRules = _STANDARD
) -> float:
    """Expected reward of a freshly dealt two-card hand under optimal play, naturals included."""
    first, second = _two_cards(player_cards)
    upcard = _card(dealer_upcard, "dealer_upcard")
    return float(_deal(first, second, upcard, _checked(rules)))


def expected_return(rules: BlackjackRules = _STANDARD) -> float:
    """Expected reward per game of the optimal policy, averaged exactly over every deal."""
    return float(_expected_return(_checked(rules)))


# --------------------------------------------------------------------------------------------
# Exact recursion (all cached on hashable arguments; rules is a frozen dataclass)
# --------------------------------------------------------------------------------------------


def _add_card(total: int, soft: bool, card: int) -> tuple[int, bool]:
    """The ``(total, soft)`` state after drawing ``card``.

    A hard hand that holds an ace counted as 1 already totals 12 or more, so that ace can never
    become usable again: the state needs no memory of it.
    """
    raw = total - 10 * soft + card  # every ace counted as 1
    if (soft or card == 1) and raw + 10 <= 21:
        return raw + 10, True
    return raw, False


def _start(card: int) -> tuple[int, bool]:
    """The ``(total, soft)`` state of a one-card hand."""
    return (11, True) if card == 1 else (card, False)


def _dealer_stands(total: int, soft: bool, rules: BlackjackRules) -> bool:
    """Whether the dealer stops drawing at ``(total, soft)`` (a bust also stops)."""
    if total == 17 and soft:
        return not rules.dealer_hits_soft_17
    return total >= 17


@functools.cache
def _dealer_outcomes(total: int, soft: bool, rules: BlackjackRules) -> tuple[Fraction, ...]:
    """Probabilities of the dealer's final total (aligned with DEALER_TOTALS) from a state."""
    if total > 21:
        return tuple(Fraction(final == BUST) for final in DEALER_TOTALS)
    if _dealer_stands(total, soft, rules):
        return tuple(Fraction(final == total) for final in DEALER_TOTALS)
    outcomes = [Fraction(0)] * len(DEALER_TOTALS)
    for card, probability in CARD_PROBABILITIES.items():
        after = _dealer_outcomes(*_add_card(total, soft, card), rules)
        outcomes = [mass + probability * p for mass, p in zip(outcomes, after)]
    return tuple(outcomes)


@functools.cache
def _stand(total: int, upcard: int, rules: BlackjackRules) -> Fraction:
    """Expected reward of standing on ``total`` (at most 21)."""
    outcomes = _dealer_outcomes(*_start(upcard), rules)
    value = Fraction(0)
    for dealer, probability in zip(DEALER_TOTALS, outcomes):
        if dealer == BUST or total > dealer:
            value += probability
        elif total < dealer:
            value -= probability
    return value


@functools.cache
def _hit(total: int, soft: bool, upcard: int, rules: BlackjackRules) -> Fraction:
    """Expected reward of hitting once from ``(total, soft)``, then playing optimally.

    Terminates because every card raises the hand's all-aces-as-1 total by at least 1.
    """
    value = Fraction(0)
    for card, probability in CARD_PROBABILITIES.items():
        new_total, new_soft = _add_card(total, soft, card)
        if new_total > 21:
            value -= probability
        else:
            value += probability * _optimal(new_total, new_soft, upcard, rules)
    return value


def _optimal(total: int, soft: bool, upcard: int, rules: BlackjackRules) -> Fraction:
    """Expected reward of the better action from ``(total, soft)``."""
    return max(_stand(total, upcard, rules), _hit(total, soft, upcard, rules))


def _deal(first: int, second: int, upcard: int, rules: BlackjackRules) -> Fraction:
    """Expected reward of the two-card hand ``first, second`` under optimal play."""
    total, soft = hand_value((first, second))
    if rules.natural and total == 21:
        # The hidden card completes a dealer natural only behind an ace or a ten.
        completing = {1: 10, 10: 1}.get(upcard)
        dealer_natural = CARD_PROBABILITIES[completing] if completing else Fraction(0)
        natural_value = _NATURAL_PAYOUT * (1 - dealer_natural)
        return max(natural_value, _hit(total, soft, upcard, rules))
    return _optimal(total, soft, upcard, rules)


@functools.cache
def _expected_return(rules: BlackjackRules) -> Fraction:
    """Exact mean of :func:`_deal` over the player's two cards and the dealer's upcard."""
    value = Fraction(0)
    for first, p_first in CARD_PROBABILITIES.items():
        for second, p_second in CARD_PROBABILITIES.items():
            for upcard, p_upcard in CARD_PROBABILITIES.items():
                value += p_first * p_second * p_upcard * _deal(first, second, upcard, rules)
    return value


# --------------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------------


def _card(value: int, name: str) -> int:
    """``value`` as a card value 1..10, or a ValueError naming ``name``."""
    try:
        card = operator.index(value)
    except TypeError:
        card = 0
    if not 1 <= card <= 10:
        raise ValueError(f"{name} must be a card value in 1..10 (1 is an ace), got {value!r}")
    return card


def _total(value: int, usable_ace: bool) -> int:
    """``value`` as a player total a non-busted hand can show, or a ValueError."""
    low = 11 if usable_ace else 2  # a soft hand counts an ace as 11
    try:
        total = operator.index(value)
    except TypeError:
        total = 0
    if not low <= total <= 21:
        kind = "with a usable ace" if usable_ace else "without a usable ace"
        raise ValueError(f"player_total must be in {low}..21 {kind}, got {value!r}")
    return total


def _checked(rules: BlackjackRules) -> BlackjackRules:
    """``rules``, or a TypeError if it is not a :class:`BlackjackRules`."""
    if not isinstance(rules, BlackjackRules):
        raise TypeError(f"rules must be a BlackjackRules, got {type(rules).__name__}")
    return rules


def _state(
    player_total: int, usable_ace: bool, dealer_upcard: int, rules: BlackjackRules
) -> tuple[int, bool, int, BlackjackRules]:
    """Validate and normalise a decision state."""
    soft = bool(usable_ace)
    total = _total(player_total, soft)
    return total, soft, _card(dealer_upcard, "dealer_upcard"), _checked(rules)


def _two_cards(cards: Sequence[int]) -> tuple[int, int]:
    """``cards`` as the two card values of a fresh deal, or a ValueError."""
    values = tuple(_card(card, "player_cards") for card in cards)
    if len(values) != 2:
        raise ValueError(f"player_cards must hold exactly two card values, got {len(values)}")
    return values[0], values[1]
