"""Tests for the exactly optimal Blackjack-v1 stand/hit policy."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from gymnasium.envs.toy_text.blackjack import BlackjackEnv

from rl4vlm_gym.envs.cards import blackjack_oracle as bs
from rl4vlm_gym.envs.cards.blackjack_oracle import BlackjackRules

STANDARD = BlackjackRules()
HITS_SOFT_17 = BlackjackRules(dealer_hits_soft_17=True)
UPCARDS = range(1, 11)
P = {card: Fraction(4 if card == 10 else 1, 13) for card in range(1, 11)}

Policy = Callable[[int, bool, int], str]


# --------------------------------------------------------------------------------------------
# hand_value
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        ([1, 10], (21, True)),
        ([1, 1], (12, True)),
        ([1, 1, 10], (12, False)),
        ([1, 5], (16, True)),
        ([1, 5, 10], (16, False)),
        ([1], (11, True)),
        ([9, 7], (16, False)),
        ([10, 10, 5], (25, False)),  # busted totals are reported, not clipped
        ([np.int64(1), np.int64(6)], (17, True)),
    ],
)
def test_hand_value(cards: list[int], expected: tuple[int, bool]) -> None:
    assert bs.hand_value(cards) == expected


@pytest.mark.parametrize("cards", [[], [0], [11], [1, 2.5], ["A"]])
def test_hand_value_rejects_bad_cards(cards: list[object]) -> None:
    with pytest.raises(ValueError, match="cards"):
        bs.hand_value(cards)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The dealer
# --------------------------------------------------------------------------------------------


@functools.cache
def enumerate_dealer(cards: tuple[int, ...], hits_soft_17: bool) -> dict[int, Fraction]:
    """Dealer outcome distribution by explicit enumeration of card sequences (independent)."""
    total, soft = bs.hand_value(cards)
    if total > 21:
        return {22: Fraction(1)}
    if total > 17 or (total == 17 and not (soft and hits_soft_17)):
        return {total: Fraction(1)}
    outcome: dict[int, Fraction] = {}
    for card, probability in P.items():
        for final, p in enumerate_dealer((*cards, card), hits_soft_17).items():
            outcome[final] = outcome.get(final, Fraction(0)) + probability * p
    return outcome


@pytest.mark.parametrize("rules", [STANDARD, HITS_SOFT_17])
@pytest.mark.parametrize("upcard", UPCARDS)
def test_dealer_distribution_matches_enumeration(rules: BlackjackRules, upcard: int) -> None:
    distribution = bs.dealer_distribution(upcard, rules)
    assert list(distribution) == [17, 18, 19, 20, 21, 22]
    assert sum(distribution.values()) == 1
    expected = enumerate_dealer((upcard,), rules.dealer_hits_soft_17)
    assert {k: v for k, v in distribution.items() if v} == expected


def test_dealer_bust_rates_match_published_infinite_deck_values() -> None:
    # Infinite deck, dealer stands on soft 17 (e.g. the Wizard of Odds dealer-outcome tables).
    # Ten and ace are left out: published tables condition those on the dealer having no
    # blackjack (hole-card peek), which Blackjack-v1 does not do.
    published = {2: 0.3536, 3: 0.3739, 4: 0.3945, 5: 0.4164, 6: 0.4232, 7: 0.2623, 8: 0.2447,
                 9: 0.2284}
    for upcard, bust in published.items():
        assert float(bs.dealer_distribution(upcard)[bs.BUST]) == pytest.approx(bust, abs=5e-5)


def test_hitting_soft_17_matters_only_where_a_soft_17_can_occur() -> None:
    # A soft 17 is an ace counted 11 plus 6 more points, so an upcard of 7 or more never makes one.
    for upcard in (7, 8, 9, 10):
        assert bs.dealer_distribution(upcard, HITS_SOFT_17) == bs.dealer_distribution(upcard)
    for upcard in (1, 2, 3, 4, 5, 6):
        s17, h17 = bs.dealer_distribution(upcard), bs.dealer_distribution(upcard, HITS_SOFT_17)
        assert h17[17] < s17[17] and h17[bs.BUST] > s17[bs.BUST]


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def independent_values(rules: BlackjackRules) -> Callable[[tuple[int, ...], int], Fraction]:
    """Optimal value of an explicit hand, by recursion over card lists (independent)."""

    @functools.cache
    def stand(total: int, upcard: int) -> Fraction:
        value = Fraction(0)
        for final, p in enumerate_dealer((upcard,), rules.dealer_hits_soft_17).items():
            value += p if final == 22 or total > final else -p if total < final else 0
        return value

    @functools.cache
    def summary_value(raw_total: int, has_ace: bool, upcard: int) -> Fraction:
        # A hand is summed by its cards' total with aces as 1, and whether it holds an ace.
        total = raw_total + 10 if has_ace and raw_total + 10 <= 21 else raw_total
        if total > 21:
            return Fraction(-1)
        hit = sum(
            (p * summary_value(raw_total + card, has_ace or card == 1, upcard)
             for card, p in P.items()),
            Fraction(0),
        )
        return max(stand(total, upcard), hit)

    def value(cards: tuple[int, ...], upcard: int) -> Fraction:
        return summary_value(sum(cards), 1 in cards, upcard)

    return value


@pytest.mark.parametrize("rules", [STANDARD, HITS_SOFT_17])
def test_values_match_an_independent_recursion(rules: BlackjackRules) -> None:
    value = independent_values(rules)
    # One representative hand per (total, usable ace) state: the value depends only on those.
    hands = [(2, t - 2) if t <= 12 else (10, t - 10) for t in range(4, 21)]
    hands += [(1, t - 11) for t in range(13, 21)] + [(1, 1)]
    for cards in hands:
        total, soft = bs.hand_value(cards)
        for upcard in UPCARDS:
            stand = bs.stand_value(total, upcard, rules)
            best = max(stand, bs.hit_value(total, soft, upcard, rules))
            assert best == pytest.approx(float(value(cards, upcard)), abs=1e-12), (cards, upcard)


def test_exact_identities() -> None:
    for upcard in UPCARDS:
        dealer = bs.dealer_distribution(upcard)
        for total in range(2, 17):  # below 17 the player wins only when the dealer busts
            assert bs.stand_value(total, upcard) == pytest.approx(float(2 * dealer[22] - 1))
        assert bs.stand_value(21, upcard) == pytest.approx(float(1 - dealer[21]))
        assert bs.hit_value(21, False, upcard) == -1  # every card busts a hard 21
        assert bs.hit_value(20, False, upcard) == pytest.approx(
            float(P[1] * (1 - dealer[21]) - (1 - P[1]))
        )


# --------------------------------------------------------------------------------------------
# The policy
# --------------------------------------------------------------------------------------------


def textbook_action(total: int, soft: bool, upcard: int) -> str:
    """The known infinite-deck hit/stand strategy (no doubling, splitting or surrender)."""
    if soft:
        if total >= 19:
            return "stand"
        if total == 18:
            return "hit" if upcard in (9, 10, 1) else "stand"
        return "hit"
    if total >= 17:
        return "stand"
    if total >= 13:
        return "stand" if 2 <= upcard <= 6 else "hit"
    if total == 12:
        return "stand" if 4 <= upcard <= 6 else "hit"
    return "hit"


@pytest.mark.parametrize("rules", [STANDARD, HITS_SOFT_17, BlackjackRules(True, True)])
def test_optimal_action_matches_the_textbook_table(rules: BlackjackRules) -> None:
    # Dealer hitting soft 17 moves no hit/stand decision in this game: the table is the same.
    states = [(t, False) for t in range(4, 22)] + [(t, True) for t in range(12, 22)]
    for total, soft in states:
        for upcard in UPCARDS:
            expected = textbook_action(total, soft, upcard)
            assert bs.optimal_action(total, soft, upcard, rules) == expected, (total, soft, upcard)


def test_optimal_action_is_the_argmax_and_ties_stand() -> None:
    for total, soft in [(t, False) for t in range(2, 22)] + [(t, True) for t in range(11, 22)]:
        for upcard in UPCARDS:
            hit, stand = bs.hit_value(total, soft, upcard), bs.stand_value(total, upcard)
            action = bs.optimal_action(total, soft, upcard)
            assert action == ("hit" if hit > stand else "stand")


def test_exact_ties_stand(monkeypatch: pytest.MonkeyPatch) -> None:
    # No state of this game is an exact tie, so make every state one.
    def tied_hit(total: int, soft: bool, upcard: int, rules: BlackjackRules) -> Fraction:
        return bs._stand(total, upcard, rules)

    monkeypatch.setattr(bs, "_hit", tied_hit)
    assert bs.optimal_action(16, False, 10) == "stand"
    assert bs.optimal_action(8, False, 6) == "stand"


def test_close_decisions() -> None:
    # Hard 16 against a ten: hitting is better, but only just.
    assert bs.hit_value(16, False, 10) > bs.stand_value(16, 10)
    assert bs.hit_value(16, False, 10) - bs.stand_value(16, 10) < 0.01
    # Soft 18 against an ace: a hit, because the dealer's hidden card is never peeked at.
    assert bs.hit_value(18, True, 1) > bs.stand_value(18, 1)


# --------------------------------------------------------------------------------------------
# Deals and the game value
# --------------------------------------------------------------------------------------------


def test_deal_value_naturals() -> None:
    natural = BlackjackRules(natural=True)
    assert bs.deal_value([1, 10], 5, natural) == 1.5
    assert bs.deal_value([10, 1], 1, natural) == pytest.approx(1.5 * 9 / 13)  # 4/13 dealer 21
    assert bs.deal_value([1, 10], 10, natural) == pytest.approx(1.5 * 12 / 13)  # 1/13
    assert bs.deal_value([1, 10], 5) == bs.stand_value(21, 5) < 1
    assert bs.deal_value([10, 6], 10) == bs.hit_value(16, False, 10)


def test_natural_bonus_in_expected_return() -> None:
    natural = BlackjackRules(natural=True)
    # Only the 2 * (1/13) * (4/13) of deals that are naturals change value.
    gain = Fraction(0)
    for upcard, p in P.items():
        dealer_natural = {1: P[10], 10: P[1]}.get(upcard, Fraction(0))
        without_bonus = 1 - bs.dealer_distribution(upcard)[21]  # a 21 only draws with a 21
        with_bonus = Fraction(3, 2) * (1 - dealer_natural)
        gain += p * 2 * P[1] * P[10] * (with_bonus - without_bonus)
    assert bs.expected_return(natural) - bs.expected_return() == pytest.approx(float(gain))
    assert bs.expected_return(HITS_SOFT_17) < bs.expected_return() < 0


def play(rng: np.random.Generator, policy: Policy, rules: BlackjackRules) -> float:
    """One game of Blackjack-v1 under ``rules`` (an independent simulator)."""

    def draw() -> int:
        return min(int(rng.integers(1, 14)), 10)

    dealer, player = [draw(), draw()], [draw(), draw()]
    while True:
        total, soft = bs.hand_value(player)
        if total > 21:
            return -1.0
        if policy(total, soft, dealer[0]) == "stand":
            break
        player.append(draw())
    while True:
        total, soft = bs.hand_value(dealer)
        if total > 17 or (total == 17 and not (soft and rules.dealer_hits_soft_17)):
            break
        dealer.append(draw())
    mine, theirs = bs.hand_value(player)[0], bs.hand_value(dealer)[0]
    if rules.natural and sorted(player) == [1, 10] and sorted(dealer) != [1, 10]:
        return 1.5
    return float(theirs > 21 or mine > theirs) - float(theirs <= 21 and mine < theirs)


def optimal(rules: BlackjackRules) -> Policy:
    return lambda total, soft, upcard: bs.optimal_action(total, soft, upcard, rules)


def stick_at_20(total: int, soft: bool, upcard: int) -> str:
    return "stand" if total >= 20 else "hit"


def mean_and_error(returns: list[float]) -> tuple[float, float]:
    return float(np.mean(returns)), float(np.std(returns) / math.sqrt(len(returns)))


@pytest.mark.parametrize(
    "rules", [HITS_SOFT_17, BlackjackRules(natural=True), BlackjackRules(True, True)]
)
def test_monte_carlo_matches_expected_return(rules: BlackjackRules) -> None:
    rng = np.random.default_rng(2024)
    mean, error = mean_and_error([play(rng, optimal(rules), rules) for _ in range(20_000)])
    assert abs(mean - bs.expected_return(rules)) < 4 * error
    naive = [play(rng, stick_at_20, rules) for _ in range(20_000)]
    naive_mean, naive_error = mean_and_error(naive)
    assert naive_mean + 4 * math.hypot(error, naive_error) < mean


def test_monte_carlo_on_gymnasium_blackjack() -> None:
    """Gymnasium's own env (default rules) agrees with the computed value of the policy."""
    env = BlackjackEnv()
    env.reset(seed=7)
    returns = []
    for _ in range(20_000):
        (total, upcard, soft), _ = env.reset()
        terminated, reward = False, 0.0
        while not terminated:
            hit = bs.optimal_action(total, bool(soft), upcard) == "hit"
            (total, upcard, soft), reward, terminated, _, _ = env.step(int(hit))
        returns.append(float(reward))
    mean, error = mean_and_error(returns)
    assert abs(mean - bs.expected_return()) < 4 * error


# --------------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bs.optimal_action(22, False, 5), r"player_total must be in 2\.\.21"),
        (lambda: bs.optimal_action(1, False, 5), r"player_total must be in 2\.\.21"),
        (lambda: bs.optimal_action(10, True, 5), r"player_total must be in 11\.\.21"),
        (lambda: bs.hit_value(16.5, False, 5), "player_total"),
        (lambda: bs.optimal_action(16, False, 11), r"dealer_upcard must be a card value in 1\.\."),
        (lambda: bs.stand_value(16, 0), "dealer_upcard"),
        (lambda: bs.dealer_distribution(11), r"upcard must be a card value in 1\.\.10"),
        (lambda: bs.deal_value([1, 10, 2], 5), "player_cards must hold exactly two"),
        (lambda: bs.deal_value([1, 11], 5), "player_cards"),
    ],
)
def test_bad_arguments_raise_value_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_rules_must_be_blackjack_rules() -> None:
    with pytest.raises(TypeError, match="rules"):
        bs.optimal_action(16, False, 10, {"natural": True})  # type: ignore[arg-type]


def test_numpy_observations_are_accepted() -> None:
    assert bs.optimal_action(np.int64(16), np.int64(0), np.int64(10)) == "hit"
    assert bs.optimal_action(np.int64(18), np.int64(1), np.int64(5)) == "stand"
