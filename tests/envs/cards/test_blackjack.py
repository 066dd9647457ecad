"""Behaviour of rl4vlm/Blackjack-v0: Gymnasium's Blackjack rules, levels, verl-agent's rewards.

Hands are set on ``env.unwrapped`` (``u.player``, ``u.dealer``) after a reset, and the cards
drawn afterwards are scripted by replacing the env's generator: a draw is ``integers(13)`` for
the rank then ``integers(4)`` for the suit.
"""

from __future__ import annotations

import itertools
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.cards.blackjack_oracle import BlackjackRules, deal_value
from rl4vlm_gym.envs.cards.deck import RANKS, SUITS, Card

ENV_ID = "rl4vlm/Blackjack-v0"
VARIANTS = ("rl4vlm", "verl-agent")
FELT = np.array((0x35, 0x65, 0x4D), np.uint8)


class ScriptedDraws:
    """Stands in for ``np_random``: deals the scripted cards, and fails on any other draw."""

    def __init__(self, *ranks: str) -> None:
        self.ints = [v for rank in ranks for v in (RANKS.index(rank), 0)]

    def integers(self, low: int, high: int | None = None) -> int:
        if high is None:
            low, high = 0, low
        assert self.ints, "the env drew a card the test did not script"
        value = self.ints.pop(0)
        assert low <= value < high
        return value


def hand(*ranks: str, suit: str = "S") -> list[Card]:
    return [Card(rank, suit) for rank in ranks]


def make(level: int = 0, **kwargs):
    kwargs.setdefault("obs_mode", "text")
    env = gym.make(ENV_ID, level=level, **kwargs)
    env.reset(seed=0)
    return env


def deal(env, player, dealer, *draws: str):
    u = env.unwrapped
    u.player = hand(*player, suit="H")
    u.dealer = hand(*dealer, suit="C")
    u.np_random = ScriptedDraws(*draws)
    return u


# -- the dealer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", [("A", "6"), ("A", "A", "5"), ("6", "A")])
def test_dealer_stands_on_soft_17_at_level_0(dealer):
    env = make(level=0)
    u = deal(env, ("10", "8"), dealer)  # no draw scripted: drawing would fail the test
    obs, reward, terminated, truncated, info = env.step("stand")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert len(u.dealer) == len(dealer)
    assert info["success"] is True
    assert "you win" in obs["text"]


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("dealer", [("A", "6"), ("A", "A", "5")])
def test_dealer_hits_soft_17_at_levels_1_and_2(level, dealer):
    env = make(level=level)
    u = deal(env, ("10", "10"), dealer, "3")  # soft 17 + 3 = soft 20: stands
    _, reward, terminated, _, info = env.step("stand")
    assert [c.rank for c in u.dealer] == [*dealer, "3"]
    assert (reward, terminated) == (0.0, True)  # 20 against 20: a push
    assert info["success"] is False


@pytest.mark.parametrize("level", [1, 2])
def test_soft_17_turned_hard_17_stands_at_levels_1_and_2(level):
    env = make(level=level)
    u = deal(env, ("10", "8"), ("A", "6"), "10")  # A + 6 + 10 = hard 17
    _, reward, _, _, _ = env.step("stand")
    assert [c.rank for c in u.dealer] == ["A", "6", "10"]
    assert reward == 1.0


@pytest.mark.parametrize("level", [0, 1, 2])
def test_dealer_stands_on_hard_17_at_every_level(level):
    env = make(level=level)
    u = deal(env, ("10", "7"), ("10", "7"))
    _, reward, _, _, _ = env.step("stand")
    assert (reward, len(u.dealer)) == (0.0, 2)


@pytest.mark.parametrize(
    ("dealer", "draws", "player", "reward"),
    [
        (("10", "6"), ("A",), ("10", "7"), 0.0),  # 16 + A = hard 17: stop, push
        (("10", "6"), ("5",), ("10", "10"), -1.0),  # 21 beats 20
        (("10", "6"), ("K",), ("10", "2"), 1.0),  # dealer busts with 26: 12 wins
        (("2", "3"), ("2", "A"), ("10", "9"), 1.0),  # 2+3+2 = 7, + A = soft 18: stop; 19 wins
        (("2", "2"), ("2", "2", "2", "2", "8"), ("10", "9"), -1.0),  # 4, 6, 8, 10, 12, 20: stop
    ],
)
def test_dealer_draws_until_17(dealer, draws, player, reward):
    env = make(level=0)
    u = deal(env, player, dealer, *draws)
    _, got, terminated, _, _ = env.step("stand")
    assert [c.rank for c in u.dealer] == [*dealer, *draws]
    assert (got, terminated) == (reward, True)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_dealer_always_finishes_on_17_or_more_over_seeds(level):
    env = gym.make(ENV_ID, level=level, obs_mode="text")
    rules = BlackjackRules(dealer_hits_soft_17=level > 0)
    for seed in range(300):
        env.reset(seed=seed)
        env.step("stand")
        values = [c.value() for c in env.unwrapped.dealer]
        totals = [_hand(values[: i + 1]) for i in range(1, len(values))]
        final_total, _ = totals[-1]
        assert final_total >= 17
        for total, soft in totals[:-1]:  # every earlier total was one the dealer hits
            assert total < 17 or (total == 17 and soft and rules.dealer_hits_soft_17), (seed, values)


def _hand(values):
    total = sum(values)
    soft = 1 in values and total + 10 <= 21
    return total + 10 * soft, soft


# -- the player -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_hitting_to_a_bust(variant):
    env = make(reward_variant=variant)
    u = deal(env, ("10", "9", "2"), ("10", "7"), "A")  # hard 21 + anything busts
    obs, reward, terminated, truncated, info = env.step("hit")
    assert (reward, terminated, truncated) == ((-1.0 if variant == "rl4vlm" else 0.0), True, False)
    assert [c.rank for c in u.player] == ["10", "9", "2", "A"]
    assert len(u.dealer) == 2  # the dealer does not draw after a bust
    assert info["success"] is False and info["progress"] == 0.0
    assert "bust" in obs["text"]


def test_hitting_without_busting_continues():
    env = make()
    u = deal(env, ("2", "3"), ("10", "7"), "4")
    obs, reward, terminated, truncated, info = env.step("hit")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert [c.rank for c in u.player] == ["2", "3", "4"]
    assert obs["text"].startswith("You take a card.")
    assert info["state_key"] == "player=9|dealer=10"


def test_an_ace_counts_one_when_eleven_would_bust():
    env = make()
    u = deal(env, ("A", "6"), ("10", "8"), "10")  # soft 17 + 10 = hard 17, not a bust
    _, reward, terminated, _, info = env.step("hit")
    assert (reward, terminated) == (0.0, False)
    assert info["state_key"] == "player=17|dealer=10"
    _, reward, _, _, _ = env.step("stand")
    assert reward == -1.0  # 17 against 18
    assert len(u.dealer) == 2


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    ("player", "dealer", "result"),
    [
        (("10", "9"), ("10", "8"), "win"),
        (("10", "8"), ("K", "8"), "push"),
        (("10", "7"), ("Q", "J"), "lose"),
        (("7", "7", "7"), ("10", "9"), "win"),
        (("A", "K"), ("A", "Q"), "push"),  # two naturals
    ],
)
def test_win_push_lose(variant, player, dealer, result):
    expected = {"win": 1.0, "push": 0.0, "lose": -1.0 if variant == "rl4vlm" else 0.0}[result]
    env = make(reward_variant=variant)
    u = deal(env, player, dealer)
    _, reward, terminated, truncated, info = env.step("stand")
    assert (reward, terminated, truncated) == (expected, True, False)
    assert u.result == result
    assert info["success"] is (result == "win")
    assert info["progress"] == {"win": 1.0, "push": 0.5, "lose": 0.0}[result]


@pytest.mark.parametrize(("level", "payout"), [(0, 1.0), (1, 1.0), (2, 1.5)])
def test_natural_pays_one_and_a_half_only_at_level_2(level, payout):
    env = make(level=level)
    deal(env, ("A", "K"), ("10", "7"))
    _, reward, terminated, _, info = env.step("stand")
    assert (reward, terminated, info["success"]) == (payout, True, True)


def test_natural_against_a_dealer_bust_pays_one_and_a_half_at_level_2():
    env = make(level=2)
    deal(env, ("10", "A"), ("10", "6"), "9")
    _, reward, _, _, _ = env.step("stand")
    assert reward == 1.5


def test_three_card_21_is_not_a_natural():
    env = make(level=2)
    deal(env, ("7", "7", "7"), ("10", "7"))
    _, reward, _, _, _ = env.step("stand")
    assert reward == 1.0


def test_natural_beats_a_dealers_drawn_21_at_level_2():
    env = make(level=2)
    deal(env, ("A", "K"), ("5", "6"), "10")  # dealer: 5 + 6 + 10 = 21 in three cards
    _, reward, _, _, _ = env.step("stand")
    # blackjack_oracle values this natural at exactly 1.5 * (1 - P(dealer natural)) = 1.5,
    # since a 5 up can never complete a dealer natural.
    assert deal_value([1, 10], 5, BlackjackRules(dealer_hits_soft_17=True, natural=True)) == 1.5
    assert reward == 1.5


def test_invalid_action_rewards_and_no_state_change():
    for variant, penalty in (("rl4vlm", -1.0), ("verl-agent", 0.0)):
        env = make(reward_variant=variant)
        u = deal(env, ("10", "6"), ("9", "7"))
        obs, reward, terminated, truncated, info = env.step('{"thoughts": "hmm", "action": "double down"}')
        assert (reward, terminated, truncated) == (penalty, False, False)
        assert info["action"]["valid"] is False and info["action"]["error"]
        assert [c.rank for c in u.player] == ["10", "6"] and u.result is None


# -- actions ------------------------------------------------------------------------------------


def test_actions_are_stand_and_hit():
    obs, _ = gym.make(ENV_ID, obs_mode="text").reset(seed=0)
    assert obs["actions"] == ("stand", "hit")


@pytest.mark.parametrize("answer", ["stick", '{"thoughts": "17 is enough", "action": "stick"}', "<action>stick</action>"])
def test_stick_is_stand_in_lenient_mode(answer):
    env = make(action_match="lenient")
    u = deal(env, ("10", "9"), ("10", "8"))
    _, reward, terminated, _, info = env.step(answer)
    assert info["action"]["parsed"] == "stand"
    assert (reward, terminated, u.result) == (1.0, True, "win")


def test_stick_is_not_stand_in_strict_mode():
    env = make(action_match="strict")
    u = deal(env, ("10", "9"), ("10", "8"))
    _, reward, terminated, truncated, info = env.step("stick")
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert info["action"]["valid"] is False and info["action"]["parsed"] is None
    assert u.result is None and len(u.dealer) == 2
    _, reward, terminated, _, info = env.step('{"thoughts": "19", "action": "stand"}')
    assert info["action"]["parsed"] == "stand"
    assert (reward, terminated) == (1.0, True)


# -- the deal -----------------------------------------------------------------------------------


def test_every_rank_including_10_is_dealt():
    env = gym.make(ENV_ID, obs_mode="text")
    ranks, suits = Counter(), Counter()
    for seed in range(400):
        env.reset(seed=seed)
        u = env.unwrapped
        assert len(u.player) == 2 and len(u.dealer) == 2
        for card in (*u.player, *u.dealer):
            ranks[card.rank] += 1
            suits[card.suit] += 1
    assert set(ranks) == set(RANKS)  # RL4VLM drew 10-valued cards only as J, Q, K
    assert set(suits) == set(SUITS)
    n = sum(ranks.values())  # 1600 cards, each rank 1/13
    for rank in RANKS:
        assert 0.5 / 13 < ranks[rank] / n < 1.5 / 13, rank


def test_same_seed_same_hand():
    a = gym.make(ENV_ID)
    b = gym.make(ENV_ID)
    for seed in (0, 11, 2**30 + 3):
        obs_a, _ = a.reset(seed=seed)
        obs_b, _ = b.reset(seed=seed)
        assert obs_a["text"] == obs_b["text"]
        assert np.array_equal(obs_a["image"], obs_b["image"])
        for action in ("hit", "stand"):
            steps_a, steps_b = a.step(action), b.step(action)
            assert steps_a[0]["text"] == steps_b[0]["text"] and steps_a[1] == steps_b[1]


# -- what the agent sees -------------------------------------------------------------------------


def test_hole_card_is_hidden_in_text_until_the_hand_is_over():
    env = make(render_mode="ansi")
    deal(env, ("9", "7"), ("8", "K"), "2")
    assert "\nDealer: 8♣ and a face-down card\nPlayer: 9♥, 7♥\n" in env.render()
    obs, _, terminated, _, _ = env.step("hit")
    assert not terminated
    assert obs["text"].endswith("Dealer: 8♣ and a face-down card\nPlayer: 9♥, 7♥, 2♣")
    assert "K♣" not in obs["text"]
    obs, _, terminated, _, _ = env.step("stand")
    assert terminated
    assert obs["text"].endswith("Dealer: 8♣, K♣\nPlayer: 9♥, 7♥, 2♣")


def test_hole_card_is_shown_after_a_bust():
    env = make()
    deal(env, ("10", "9", "2"), ("8", "K"), "5")
    obs, _, terminated, _, _ = env.step("hit")
    assert terminated
    assert obs["text"].endswith("Dealer: 8♣, K♣\nPlayer: 10♥, 9♥, 2♥, 5♣")


def test_hole_card_is_hidden_in_the_image_until_the_hand_is_over():
    def frames(hole: str):
        env = make(obs_mode="image", render_mode="rgb_array")
        deal(env, ("10", "9"), ("8", hole))
        before = env.render()
        env.step("stand")
        return before, env.render()

    before_k, after_k = frames("K")
    before_9, after_9 = frames("9")
    assert np.array_equal(before_k, before_9)  # the hole card does not show
    assert not np.array_equal(after_k, after_9)  # and is turned over at the end
    assert not np.array_equal(before_k, after_k)


def test_state_key_ignores_suits_and_which_ten():
    keys = set()
    for suits in ("HCDS", "SSSS", "DHCS"):
        for ten in ("10", "J", "K"):
            env = make()
            u = env.unwrapped
            u.player = [Card(ten, suits[0]), Card("6", suits[1])]
            u.dealer = [Card("9", suits[2]), Card("5", suits[3])]
            keys.add(env.step("?")[4]["state_key"])  # an invalid action changes nothing
    assert keys == {"player=16|dealer=9"}


def test_state_key_depends_on_totals_soft_aces_and_up_card():
    env = make()
    u = env.unwrapped

    def key(player, dealer):
        u.player, u.dealer = hand(*player), hand(*dealer)
        return env.step("?")[4]["state_key"]

    assert key(("A", "6"), ("9", "5")) == "player=17s|dealer=9"
    assert key(("10", "7"), ("9", "5")) == "player=17|dealer=9"
    assert key(("10", "7"), ("A", "5")) == "player=17|dealer=1"
    # The hole card is unseen: it is not part of the key while the hand is on.
    assert key(("10", "7"), ("9", "5")) == key(("10", "7"), ("9", "K"))


# -- rendering ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(224, 224), (300, 300), (448, 448)])
def test_five_card_hand_stays_inside_the_frame(size):
    env = make(obs_mode="image+text", image_size=size)
    deal(env, ("2", "3", "4", "5"), ("10", "7"), "6")
    obs, _, terminated, _, _ = env.step("hit")  # 2+3+4+5+6 = 20
    assert not terminated
    image = obs["image"]
    assert image.shape == (*size, 3)
    assert env.observation_space.contains(obs)
    assert (image[:, -1] == FELT).all()  # nothing cut at the right edge
    assert (image[-1] == FELT).all()  # nor at the bottom
    # The fifth card is drawn: the right part of the player row differs from a 4-card hand.
    env4 = make(obs_mode="image+text", image_size=size)
    deal(env4, ("2", "3", "4", "5"), ("10", "7"), "A")
    four = env4.step("hit")[0]["image"]  # hand: 2, 3, 4, 5, A
    cols = np.flatnonzero((four != image).any(axis=(0, 2)))
    assert cols.min() > 0.6 * size[1]


@pytest.mark.parametrize("size", [(224, 224), (448, 448)])
def test_image_sizes_show_every_card(size):
    env = make(obs_mode="image", image_size=size, render_mode="rgb_array")
    deal(env, ("9", "8"), ("Q", "5"))
    image = env.render()
    assert image.shape == (*size, 3)
    for edge in (image[0], image[-1], image[:, 0], image[:, -1]):
        assert (edge == FELT).all()


def test_a_10_renders_differently_from_j_q_k_and_suits_differ():
    def frame(rank: str, suit: str) -> np.ndarray:
        env = make(render_mode="rgb_array")
        u = env.unwrapped
        u.player = [Card(rank, suit), Card("5", "S")]
        u.dealer = hand("9", "7")
        return env.render()

    ranks = {rank: frame(rank, "H") for rank in ("10", "J", "Q", "K")}
    for a, b in itertools.combinations(ranks, 2):
        assert not np.array_equal(ranks[a], ranks[b]), f"{a} and {b} look the same"
    changed = np.flatnonzero((ranks["10"] != ranks["J"]).any(axis=(1, 2)))
    assert changed.min() >= 150  # only the player's first card changed
    suits = {suit: frame("10", suit) for suit in SUITS}
    for a, b in itertools.combinations(suits, 2):
        assert not np.array_equal(suits[a], suits[b]), f"{a} and {b} look the same"


def test_wide_image_keeps_cards_inside_the_frame():
    env = make(obs_mode="image", image_size=(300, 600), render_mode="rgb_array")
    deal(env, ("9", "8"), ("Q", "5"))
    image = env.render()
    assert (image[-1] == FELT).all()


@pytest.mark.parametrize(
    ("size", "ranks"),
    [((224, 224), ("A", "A", "A", "A", "2", "2", "2", "2", "3", "3", "3", "K")), ((128, 128), ("2", "3", "4", "5", "6")), ((128, 128), ("A", "A", "A", "A", "2", "2", "2", "2", "3", "3", "3", "K"))],
)
def test_long_hands_stay_inside_the_frame(size, ranks):
    env = make(obs_mode="image", image_size=size, render_mode="rgb_array")
    u = deal(env, ranks, ("Q", "5"))
    u.result = "bust" if sum(min(RANKS.index(r) + 1, 10) for r in ranks) > 21 else None
    image = env.render()
    assert (image[:, -1] == FELT).all()


def test_image_mode_feedback_carries_no_cards():
    # In obs_mode="image" the cards are only in the image: feedback must not name them.
    env = make(obs_mode="image")
    deal(env, ("2", "3"), ("10", "7"), "4")
    obs, *_ = env.step("hit")
    assert obs["text"] == "You take a card."
    obs, *_ = env.step("stand")
    assert not any(symbol in obs["text"] for symbol in "♣♦♥♠") and not any(ch.isdigit() for ch in obs["text"])


# -- thresholds: 21 and 22, the dealer's 16 and 17, one point either side of the dealer ------------


@pytest.mark.parametrize(("draw", "total", "bust"), [("A", 20, False), ("2", 21, False), ("3", 22, True)])
def test_a_hit_busts_only_above_21(draw: str, total: int, bust: bool) -> None:
    env = make()
    deal(env, ("10", "9"), ("10", "7"), draw)
    _, reward, terminated, _, info = env.step("hit")
    assert (reward, terminated) == ((-1.0, True) if bust else (0.0, False)), f"a hit to {total}"
    if not bust:
        assert info["state_key"] == f"player={total}|dealer=10"


@pytest.mark.parametrize(
    ("dealer", "draws", "result"),
    [(("10", "6"), ("5",), "lose"), (("10", "6"), ("6",), "win"), (("10", "7"), (), "win")],
)  # fmt: skip
def test_the_dealer_busts_only_above_21(dealer: tuple[str, ...], draws: tuple[str, ...], result: str) -> None:
    env = make()
    u = deal(env, ("10", "8"), dealer, *draws)  # 18 against the dealer's 21, 22 and 17
    _, reward, _, _, _ = env.step("stand")
    assert u.result == result and reward == {"win": 1.0, "lose": -1.0}[result]


@pytest.mark.parametrize(("player", "result"), [(("10", "7"), "lose"), (("10", "8"), "push"), (("10", "9"), "win")])
def test_one_point_below_equal_and_above_the_dealers_18(player: tuple[str, ...], result: str) -> None:
    env = make()
    u = deal(env, player, ("10", "8"))
    _, reward, _, _, _ = env.step("stand")
    assert u.result == result, f"{player} against 18"
    assert reward == {"lose": -1.0, "push": 0.0, "win": 1.0}[result]
