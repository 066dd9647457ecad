"""The web shop's held-out wording: the env's own framing of the instruction in other sentences.

The instruction itself is data (a goal of the shop's, "i need sulfate free shampoo ..."), and the
page text is the page (its words are on the screenshot and its buttons are the actions), so both
stay WebShop's. What the env says in its own words is reworded: the mission frames the instruction
in one of three independent phrasings, the seed picking one (:mod:`rl4vlm_gym.wording`), and the
base class rewords the invalid-action feedback.
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

PHRASES = {
    HELD_OUT: {
        "mission": (
            'A customer writes: "{instruction}". Find that product in the shop and buy it.',
            "Shopping request: {instruction}. Search, pick the matching item and options, then buy it.",
            "Buy what this request describes, within its price: {instruction}",
        ),
    }
}
