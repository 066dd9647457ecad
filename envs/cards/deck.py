"""Playing cards: ranks, suits, values and seeded draws from an infinite deck."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


@dataclass(frozen=True, order=True)
class Card:
    """One card, e.g. ``Card("10", "H")``; ``str`` gives ``"10♥"``."""

    rank: str
    suit: str

    def value(self, face_values: int = 10) -> int:
        """Ace is 1; J/Q/K are 10 (``face_values=10``) or 11/12/13 (``face_values=13``)."""
        index = RANKS.index(self.rank) + 1
        return min(index, face_values)

    def __str__(self) -> str:
        return f"{self.rank}{SUIT_SYMBOLS[self.suit]}"


def random_suit(rng: np.random.Generator) -> str:
    """A uniformly random suit."""
    return SUITS[int(rng.integers(len(SUITS)))]


def random_card(rng: np.random.Generator) -> Card:
    """A card from an infinite deck: every rank and suit equally likely."""
    return Card(RANKS[int(rng.integers(len(RANKS)))], random_suit(rng))

