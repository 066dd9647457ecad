"""Blackjack: hit or stand against the dealer (Sutton & Barto's game, drawn as cards)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.cards import layout, renderer, wording
from rl4vlm_gym.envs.cards.blackjack_oracle import BlackjackRules, action_values, hand_value, optimal_action
from rl4vlm_gym.envs.cards.deck import Card, random_card
from rl4vlm_gym.envs.cards.levels import BLACKJACK_LEVELS, BlackjackLevel

if TYPE_CHECKING:
    from numpy.typing import NDArray

_CARD = (70, 98)  # RL4VLM's card size at 300x300


class Blackjack(VLMEnv):
    """Play a hand of blackjack against the dealer: ``hit`` or ``stand``.

    ## Description
    RL4VLM's Blackjack (Zhai et al., 2024), which is Gymnasium's Blackjack-v1 (Sutton & Barto,
    Example 5.1) drawn as cards: an infinite deck, the player hits until they stand or bust,
    then the dealer draws to 17 or more and the higher total without busting wins. Aces count
    11 unless that busts. Every rank is equally likely, so a 10-valued card is a 10, J, Q or K
    (RL4VLM never drew a 10).

    Decisions (``decision()``): a game of chance; ``values`` are the exact expected rewards of
    standing and of hitting (then playing optimally) given the hand and the up card, from the
    oracle's infinite-deck recursion, and the optimal actions the best of them. Features ``total``,
    ``soft`` (1 with an ace counted 11) and ``dealer`` (the up card).

    ## Observation
    - ``image``: green felt with the dealer's face-up card and a face-down card at the top and
      the player's cards below (300x300: 70x98 cards, dealer at (5, 25), player from (5, 150),
      as in RL4VLM); a row that would not fit shrinks its cards instead of running off the
      image (RL4VLM's fifth card fell outside it). Once the hand is over the dealer's cards are shown.
    - ``text``: ``"Dealer: 9♣ and a face-down card\\nPlayer: 7♠, 8♦"`` in ``text`` and
      ``image+text`` modes (cards only, no totals: as in the image); in ``image`` mode only the
      feedback on the last action.
    - ``mission``: the rules.
    - ``actions``: ``("stand", "hit")``, RL4VLM's vocabulary.

    ## Actions
    ``hit`` draws a card, ``stand`` ends the player's turn (``stick`` is accepted in lenient
    matching).

    ## Rewards
    ``rl4vlm``: +1 for a win, 0 for a push, -1 for a loss or a bust, +1.5 for a winning natural
    on levels where naturals pay 3:2; an invalid action costs -1. ``verl-agent``: losses, busts
    and invalid actions give 0.

    ## Levels
    Level 0 is RL4VLM's game (the dealer stands on all 17s, naturals pay 1:1). Level 1: the
    dealer hits soft 17. Level 2: the dealer hits soft 17 and a natural (a two-card 21) pays 3:2
    when the player stands on it, unless the dealer's first two cards are a natural too (a push).

    ## Arguments
    The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 300x300), ``reward_variant`` (``rl4vlm``, ``verl-agent``),
    ``action_format``, ``action_match``, ``render_mode``, ``appearance`` (``default``; ``held-out``:
    a wine cloth, cream serif lettering and a dark page, a look no training frame shows; the cards'
    faces, the text and the rules stay the same), ``wording`` (``train``; ``held-out``: the mission
    and the feedback in sentences no training episode reads, three phrasings of each, the seed
    picking one; the episode, the images and the actions stay the same).

    ## Version History
    - v0: RL4VLM's rules and layout with our own card art; 10s drawn as 10, J, Q or K; no
      random action on unparseable output.
    """

    LEVELS: ClassVar[tuple[BlackjackLevel, ...]] = BLACKJACK_LEVELS
    APPEARANCES: ClassVar[tuple[str, ...]] = tuple(layout.LOOKS)
    WORDINGS: ClassVar[tuple[str, ...]] = wording.WORDINGS
    PHRASES: ClassVar = wording.PHRASES["blackjack"]
    MIN_IMAGE_SIDE: ClassVar[int] = 128  # smaller, the cards are no longer legible
    CHANCE: ClassVar[bool] = True  # cards drawn after reset decide the hand
    REWARDS: ClassVar = {
        "rl4vlm": {"hit": 0.0, "win": 1.0, "natural_win": 1.5, "push": 0.0, "lose": -1.0, "bust": -1.0, "invalid": -1.0},
        "verl-agent": {"hit": 0.0, "win": 1.0, "natural_win": 1.5, "push": 0.0, "lose": 0.0, "bust": 0.0, "invalid": 0.0},
    }
    ACTIONS: ClassVar[tuple[str, ...]] = ("stand", "hit")
    SYNONYMS: ClassVar = {"stick": "stand", "stay": "stand", "hold": "stand", "draw": "hit"}

    def _new_episode(self, config: BlackjackLevel) -> None:
        self.config = config
        self.rules = BlackjackRules(dealer_hits_soft_17=config.dealer_hits_soft_17, natural=config.natural)
        rng = self.np_random
        self.dealer = [random_card(rng), random_card(rng)]
        self.player = [random_card(rng), random_card(rng)]
        self.result: str | None = None

    def _actions(self) -> tuple[str, ...]:
        return self.ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        if action == "hit":
            self.player.append(random_card(self.np_random))
            if self._total(self.player) > 21:
                self.result = "bust"
                return StepOutcome("bust", terminated=True, feedback=self._say("bust", "You bust."))
            return StepOutcome("hit", feedback=self._say("hit", "You take a card."))
        while self._dealer_draws():
            self.dealer.append(random_card(self.np_random))
        self.result = self._settle()
        # Feedback names the outcome only: cards and totals are state, shown per obs_mode.
        feedback = self._say(f"stand_{self.result}", f"You stand: {_VERDICT[self.result]}")
        return StepOutcome(self.result, terminated=True, feedback=feedback)

    def _dealer_draws(self) -> bool:
        total, soft = hand_value([c.value() for c in self.dealer])
        return total < 17 or (total == 17 and soft and self.rules.dealer_hits_soft_17)

    def _settle(self) -> str:
        player, dealer = self._total(self.player), self._total(self.dealer)
        if self.rules.natural and _is_natural(self.player):
            # Casino rule (and BlackjackRules'): a natural pays 3:2 unless the dealer has one too.
            return "push" if _is_natural(self.dealer[:2]) else "natural_win"
        if dealer > 21 or player > dealer:
            return "win"
        return "push" if player == dealer else "lose"

    @staticmethod
    def _total(cards: list[Card]) -> int:
        return hand_value([c.value() for c in cards])[0]

    # -- observation ------------------------------------------------------------------------------

    def _describe(self) -> str:
        if self.result is None:
            dealer = f"{self.dealer[0]} and a face-down card"
        else:
            dealer = ", ".join(str(c) for c in self.dealer)
        return f"Dealer: {dealer}\nPlayer: {', '.join(str(c) for c in self.player)}"

    def _mission(self) -> str:
        dealer = "hits" if self.rules.dealer_hits_soft_17 else "stands on"
        train = (
            "Play blackjack: get closer to 21 than the dealer without going over. Answer 'hit' "
            f"to take a card or 'stand' to stop. Aces count 1 or 11, J, Q and K count 10; the "
            f"dealer draws to 17 and {dealer} soft 17."
        )
        return self._say("mission", train, soft17=wording.SOFT17[self.rules.dealer_hits_soft_17])

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        sx, sy = width / 300, height / 300
        font_size = max(8, round(16 * min(sx, sy)))
        labels = (("Dealer", 5 * sx, 4 * sy, font_size), ("Player", 5 * sx, 129 * sy, font_size))
        frame = layout.labelled_table((width, height), labels, layout.LOOKS[self.appearance]).copy()
        dealer: list[tuple[str, str] | None] = [(c.rank, c.suit) for c in self.dealer]
        if self.result is None:
            dealer = [dealer[0], None]  # the hole card lies face down
        self._lay_row(frame, dealer, round(25 * sy))
        self._lay_row(frame, [(c.rank, c.suit) for c in self.player], round(150 * sy))
        return frame

    def _lay_row(self, frame: NDArray[np.uint8], cards: Sequence[tuple[str, str] | None], top: int) -> None:
        """Cards left to right at RL4VLM's size and spacing, shrunk (then overlapped) to fit."""
        height, width = self.image_size
        scale = min(width, height) / 300  # cards keep their aspect ratio on non-square images
        left, gap = round(5 * width / 300), max(1, round(4 * width / 300))
        room = width - 2 * left
        card_w = max(renderer.MIN_SIZE, min(round(_CARD[0] * scale), (room - (len(cards) - 1) * gap) // len(cards)))
        size = (card_w, round(card_w * _CARD[1] / _CARD[0]))
        step = card_w + gap
        if len(cards) > 1 and left + (len(cards) - 1) * step + card_w > width - left:
            step = (room - card_w) // (len(cards) - 1)  # overlap: each card's left edge stays visible
        for i, card in enumerate(cards):
            look = layout.LOOKS[self.appearance]
            tile = layout.back_tile(size, look) if card is None else layout.card_tile(*card, size, look)
            layout.blit(frame, tile, (left + i * step, top))

    def _frame_key(self) -> tuple[tuple[Card, ...], tuple[Card, ...], bool]:
        return tuple(self.player), tuple(self.dealer), self.result is None

    def _state_key(self) -> str:
        # The Markov state: totals and the dealer's up card (the hole card is an unseen draw).
        total, soft = hand_value([c.value() for c in self.player])
        state = f"player={total}{'s' if soft else ''}|dealer={self.dealer[0].value()}"
        if self.result is not None:
            state += f"|result={self.result}|dealer_total={self._total(self.dealer)}"
        return state

    # -- scoring and oracle -------------------------------------------------------------------------

    def _success(self) -> bool:
        return self.result in ("win", "natural_win")

    def _progress(self) -> float:
        return {"win": 1.0, "natural_win": 1.0, "push": 0.5}.get(self.result or "", 0.0)

    def _optimal_steps(self) -> None:
        return None  # a game of chance: no fixed solution length

    def _decision(self) -> Decision:
        total, soft = hand_value([c.value() for c in self.player])
        key = (total, soft, self.dealer[0].value(), len(self.player) == 2 and total == 21)
        found = _table(self.rules.dealer_hits_soft_17, self.rules.natural).get(key)
        return found if found is not None else _decision(total, soft, key[2], self.rules, key[3])

    def oracle_action(self) -> str:
        """The expected-return-maximising action for this hand (exact infinite-deck policy)."""
        if self.result is not None:
            return "stand"
        total, soft = hand_value([c.value() for c in self.player])
        return optimal_action(total, soft, self.dealer[0].value(), self.rules)


@functools.lru_cache(maxsize=1024)
def _decision(total: int, soft: bool, upcard: int, rules: BlackjackRules, natural: bool) -> Decision:
    """The decision facts of a hand (memoised: they depend on nothing else). A game of chance: the
    values are the exact expected rewards of standing and of hitting (then playing optimally), from
    blackjack_oracle's infinite-deck recursion given what the player sees (the hand's total and the
    dealer's up card; whether it is a natural where one pays 3:2)."""
    values: dict[str, float] = {str(action): float(value) for action, value in action_values(total, soft, upcard, rules, natural).items()}
    best = max(values.values())
    optimal = tuple(a for a in Blackjack.ACTIONS if values[a] >= best - 1e-9)
    features: dict[str, int | str] = {"total": total, "soft": int(soft), "dealer": upcard}
    return Decision(optimal, None, values=values, reason="a game of chance: the cards drawn decide the hand", features=features)


@functools.cache
def _table(dealer_hits_soft_17: bool, natural: bool) -> dict[tuple[int, bool, int, bool], Decision]:
    """The facts of every hand a player can face under one rule set (each total, soft or not, against each
    up card; the naturals), keyed by (total, soft, up card, natural). Built whole at the first decision (~20
    ms, once a process): a hand's exact values cost ~60 us of fractions the first time, ~30% of a step,
    and an evaluation meets most of the 290 hands; every env with these rules shares the table."""
    rules = BlackjackRules(dealer_hits_soft_17=dealer_hits_soft_17, natural=natural)
    table = {}
    for upcard in range(1, 11):
        for total in range(4, 22):
            for soft in (False, True) if total >= 12 else (False,):  # a soft hand counts an ace as 11
                table[total, soft, upcard, False] = _decision(total, soft, upcard, rules, False)
        table[21, True, upcard, True] = _decision(21, True, upcard, rules, True)  # an ace and a ten
    return table


def _is_natural(cards: list[Card]) -> bool:
    return len(cards) == 2 and hand_value([c.value() for c in cards])[0] == 21


_VERDICT = {"win": "you win.", "natural_win": "a natural: you win 3:2.", "push": "a push.", "lose": "you lose."}
