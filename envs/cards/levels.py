"""Level ladders of the cards family: one frozen config per level, lowest first.

Kept apart from the env modules so registering the family (which puts each ``describe()`` on the
env card) imports no rendering code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NumberLineLevel:
    """Positions ``0..max_position``; the episode ends after ``2 * max_position`` steps."""

    max_position: int

    @property
    def max_steps(self) -> int:
        return 2 * self.max_position

    def describe(self) -> str:
        return f"positions 0..{self.max_position}, {self.max_steps} steps"


@dataclass(frozen=True)
class PointsLevel:
    """A points game: make ``target`` from every card once.

    Attributes:
        n_cards: cards dealt.
        target: the number the formula must equal; ``None`` draws one per episode (see
            ``target_range``) that the hand can make.
        target_range: inclusive range for drawn targets.
        face_values: ``10`` counts J, Q and K as 10 (RL4VLM); ``13`` counts them 11, 12, 13.
        solvable_only: redeal until the hand can make the target.
        rl4vlm_deal: EZPoints' original deal (second card completes 12 by + or *).
        max_steps: steps before the formula is too long and the episode is truncated.
    """

    n_cards: int
    target: int | None
    max_steps: int
    target_range: tuple[int, int] = (0, 0)
    face_values: int = 10
    solvable_only: bool = True
    rl4vlm_deal: bool = False

    def describe(self) -> str:
        target = f"target {self.target}" if self.target is not None else (
            f"target drawn from {self.target_range[0]}..{self.target_range[1]}"
        )
        faces = "J/Q/K count 10" if self.face_values == 10 else "J/Q/K count 11/12/13"
        if self.rl4vlm_deal:
            deal = "RL4VLM's deal (always solvable)"
        else:
            deal = "solvable deals only" if self.solvable_only else "any deal (may be unsolvable)"
        return f"{self.n_cards} cards, {target}, {deal}, {faces}, {self.max_steps} steps"


@dataclass(frozen=True)
class BlackjackLevel:
    """Blackjack rules: the dealer hits soft 17 or not; a natural pays 3:2 or 1:1."""

    dealer_hits_soft_17: bool = False
    natural: bool = False

    def describe(self) -> str:
        dealer = "dealer hits soft 17" if self.dealer_hits_soft_17 else "dealer stands on all 17s"
        natural = "natural pays 3:2" if self.natural else "natural pays 1:1"
        return f"infinite deck, {dealer}, {natural}"


NUMBERLINE_LEVELS = tuple(NumberLineLevel(n) for n in (5, 10, 20, 50, 100))

EZPOINTS_LEVELS = (
    PointsLevel(n_cards=2, target=12, max_steps=6, rl4vlm_deal=True),
    PointsLevel(n_cards=3, target=12, max_steps=8),
    PointsLevel(n_cards=3, target=None, target_range=(10, 30), max_steps=8),
    PointsLevel(n_cards=4, target=None, target_range=(10, 50), max_steps=10),
)

POINTS24_LEVELS = (
    PointsLevel(n_cards=4, target=24, max_steps=21),
    PointsLevel(n_cards=4, target=24, max_steps=21, solvable_only=False),
    PointsLevel(n_cards=4, target=24, max_steps=21, face_values=13),
    PointsLevel(n_cards=5, target=24, max_steps=26),
)

BLACKJACK_LEVELS = (
    BlackjackLevel(),
    BlackjackLevel(dealer_hits_soft_17=True),
    BlackjackLevel(dealer_hits_soft_17=True, natural=True),
)
