"""The cards games' held-out wording: their missions and feedback in sentences training never reads.

Each template (a key the env passes to ``VLMEnv._say``) has three independent phrasings, other
sentence structures rather than synonyms; which one an episode reads is fixed by its seed
(:mod:`rl4vlm_gym.wording`). The actions (``+``, ``hit``, ``=``...) keep their names.
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "SOFT17", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

NUMBERLINE = {
    "mission": (
        "Each reply nudges the current value by one, '+' up and '-' down; keep replying until it equals the target.",
        "Your job is to make the current number equal the target. Write '+' to increase it by one or '-' to decrease it by one.",
        "Bring the current value onto the goal value one unit at a time, with '+' for one more and '-' for one less.",
    ),
    "reach": (
        "The current number now equals the target.",
        "Done: both numbers match.",
        "Target hit: the two numbers are the same.",
    ),
    "out_of_steps": ("No moves are left.", "The step budget is used up.", "Time is up: the episode ends here."),
}

POINTS = {
    "mission": (
        "Build an expression whose value is {target}, with each card used once and only the operators {ops}; a J, Q "
        "or K is worth {faces}. Add one number or operator per reply and finish with '='.",
        "The goal value is {target}. Write it as an expression over all of the cards, each exactly once, joined by "
        "{ops} (J, Q and K are worth {faces}). Every step adds a single token; '=' hands the expression in.",
        "With the operators {ops} and every card once, reach {target}. Face cards (J, Q, K) are worth {faces}. Type "
        "the expression token by token, then send '=' to have it checked.",
    ),
    "no_card": (
        "None of the remaining cards has the value {number}; the formula stays as it was.",
        "There is no unused {number} among the cards, so that token was not added.",
        "Refused: {number} is not the value of any card still unused.",
    ),
    "wrong_cards": (
        "Not accepted: {shown} must use each card one time, no more and no less.",
        "{shown} misses a card or repeats one, so it is wrong.",
        "Incorrect. Every card has to appear once in {shown}, and it does not.",
    ),
    "not_formula": (
        "{shown} cannot be evaluated, so it is wrong.",
        "Not accepted: {shown} is not a well-formed expression.",
        "Incorrect. The expression {shown} does not parse.",
    ),
    "wrong_value": (
        "{shown} comes to {value}, which misses {target}.",
        "Not accepted: the expression {shown} is worth {value} and the goal was {target}.",
        "Incorrect. {shown} evaluates to {value} instead of {target}.",
    ),
    "correct": (
        "Well done: {shown} evaluates to {target}.",
        "{shown} gives exactly {target}: solved.",
        "Accepted. The value of {shown} is {target}.",
    ),
    "too_long": (
        "No steps are left for the expression.",
        "The step budget ran out before '=' was sent.",
        "Time is up: the expression grew past its limit.",
    ),
}

BLACKJACK = {
    "mission": (
        "A hand of blackjack against the dealer: finish nearer to 21 than the dealer, never above it. Say 'hit' for "
        "one more card or 'stand' to keep your hand. An ace is worth 1 or 11 and a face card 10; the dealer keeps "
        "drawing below 17 and {soft17}.",
        "Beat the dealer at blackjack by ending with a total nearer 21 without passing it. Each turn, reply 'hit' "
        "(draw a card) or 'stand' (stop drawing). Face cards are worth 10, aces 1 or 11. Below 17 the dealer must "
        "draw, and it {soft17}.",
        "Your total must end up higher than the dealer's while staying at 21 or less. 'hit' draws a card, 'stand' "
        "ends your turn. Aces are 1 or 11; J, Q and K are 10. The dealer takes cards until reaching 17 and {soft17}.",
    ),
    "bust": ("Your total went over 21: you lose the hand.", "Over 21, so the hand is lost.", "Busted: more than 21."),
    "hit": ("One more card is dealt to you.", "A card is added to your hand.", "You draw another card."),
    "stand_win": (
        "You stop drawing and beat the dealer.",
        "The dealer's hand is played out, and yours is better: a win.",
        "Standing pays off: you win the hand.",
    ),
    "stand_natural_win": (
        "Standing on a natural, you are paid 3 to 2.",
        "A natural 21 beats the dealer and pays 3:2.",
        "Blackjack: your natural wins at 3 to 2.",
    ),
    "stand_push": (
        "You stop drawing; the hand is a tie.",
        "The dealer matches you: nobody wins.",
        "It is a draw with the dealer.",
    ),
    "stand_lose": (
        "You stop drawing, and the dealer's hand is better.",
        "The dealer wins this hand.",
        "Standing was not enough: you lose.",
    ),
}

SOFT17 = {True: "draws again on a soft 17", False: "stops on a soft 17"}
"""The dealer's soft-17 rule in the held-out mission, by ``dealer_hits_soft_17``."""

PHRASES = {"numberline": {HELD_OUT: NUMBERLINE}, "points": {HELD_OUT: POINTS}, "blackjack": {HELD_OUT: BLACKJACK}}
"""Each game's ``PHRASES`` (``{wording: {key: phrasings}}``)."""
