"""Behaviour of rl4vlm/EZPoints-v0 and rl4vlm/Points24-v0: RL4VLM's rules, verl-agent's rewards.

Hands are set directly on ``env.unwrapped`` after a reset (``u.cards``, ``u.formula = []``,
``u.target``), or found by seed.
"""

from __future__ import annotations

import itertools
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.cards import points_oracle
from rl4vlm_gym.envs.cards.deck import RANKS, Card

EZ = "rl4vlm/EZPoints-v0"
P24 = "rl4vlm/Points24-v0"
VARIANTS = ("rl4vlm", "verl-agent")
PENALTY = {"rl4vlm": -1.0, "verl-agent": 0.0}
FELT = np.array((0x35, 0x65, 0x4D), np.uint8)


def make(env_id: str, **kwargs):
    kwargs.setdefault("obs_mode", "text")
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    return env


def set_hand(env, cards, target: int):
    u = env.unwrapped
    u.cards = tuple(Card(*c) if isinstance(c, tuple) else c for c in cards)
    u.formula = []
    u.target = target
    return u


def play(env, tokens):
    """Step every token; return the list of rewards and the last step's result."""
    rewards = []
    for token in tokens:
        obs, reward, terminated, truncated, info = env.step(token)
        rewards.append(reward)
    return rewards, (obs, reward, terminated, truncated, info)


def value(rank: str) -> int:
    return min(RANKS.index(rank) + 1, 10)


# ================================================================================================
# EZPoints
# ================================================================================================


def test_ezpoints_actions_are_rl4vlms_13_tokens():
    env = gym.make(EZ, obs_mode="text")
    obs, info = env.reset(seed=0)
    assert obs["actions"] == ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "+", "*", "=")
    assert info["level"] == 0


def _completes(first: Card, second: Card) -> bool:
    """RL4VLM: card 1 is 2..K; card 2 is 12 - v1, or 12 // v1 when v1 in {2, 3, 4, 6}."""
    if first.rank not in RANKS[1:] or second.rank in ("A", "J", "Q", "K"):
        return False
    a, b = value(first.rank), value(second.rank)
    return a + b == 12 or (a in (2, 3, 4, 6) and a * b == 12)


def test_ezpoints_level_0_deal_is_rl4vlms_over_500_seeds():
    env = gym.make(EZ, obs_mode="text")
    hands = Counter()
    products = faces = 0
    ranks = Counter()
    for seed in range(500):
        _, info = env.reset(seed=seed)
        u = env.unwrapped
        a, b = u.cards
        assert u.target == 12
        assert len(u.cards) == 2
        assert _completes(a, b) or _completes(b, a), f"seed {seed}: {a}, {b}"
        # Never more than one face card, never an ace.
        assert sum(c.rank in ("J", "Q", "K") for c in u.cards) <= 1
        assert "A" not in (a.rank, b.rank)
        # Always solvable with + or * (and the oracle's plan has 3 tokens plus "=").
        assert points_oracle.solvable(u.values, 12, "+*", False)
        assert info["optimal_steps"] == 4
        va, vb = u.values
        products += va + vb != 12
        faces += any(c.rank in ("J", "Q", "K") for c in u.cards)
        hands[(a.rank, b.rank)] += 1
        ranks.update(c.rank for c in u.cards)
    # Every first-card rank 2..K is dealt, in both orders.
    assert set(ranks) == set(RANKS[1:])
    swapped_orders = sum(1 for (x, y) in hands if (y, x) in hands and x != y)
    assert swapped_orders > 10
    # Products: P(v1 in {2,3,4,6}) * 1/2 = 1/6; a J/Q/K: 3/12 = 1/4 (500 draws, loose bounds).
    assert 0.10 < products / 500 < 0.24
    assert 0.18 < faces / 500 < 0.32
    # The product hands are exactly {2, 6} and {3, 4}.
    product_values = {
        tuple(sorted((value(x), value(y)))) for (x, y) in hands if value(x) + value(y) != 12
    }
    assert product_values == {(2, 6), (3, 4)}


def test_ezpoints_a_ten_valued_card_can_be_a_10():
    env = gym.make(EZ, obs_mode="text")
    seen = Counter()
    for seed in range(300):
        obs, _ = env.reset(seed=seed)
        for card in env.unwrapped.cards:
            if value(card.rank) == 10:
                seen[card.rank] += 1
                if card.rank == "10":
                    assert f"10{'♣♦♥♠'['CDHS'.index(card.suit)]}" in obs["text"]
    assert set(seen) == {"10", "J", "Q", "K"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_ezpoints_number_not_on_an_unused_card_is_invalid(variant):
    env = make(EZ, reward_variant=variant)
    u = set_hand(env, [("5", "H"), ("7", "S")], 12)
    obs, reward, terminated, truncated, info = env.step("3")
    assert (reward, terminated, truncated) == (PENALTY[variant], False, False)
    assert u.formula == []
    assert info["action"]["valid"] is False and info["action"]["parsed"] is None
    assert "3" in info["action"]["error"]
    assert "Invalid action" in obs["text"]
    # Using a card twice is the same mistake.
    env.step("5")
    env.step("+")
    _, reward, terminated, _, info = env.step("5")
    assert (reward, terminated) == (PENALTY[variant], False)
    assert u.formula == ["5", "+"]
    assert info["action"]["valid"] is False
    assert info["state_key"] == "values=5,7|target=12|formula=5 +"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    ("cards", "tokens"),
    [
        ([("5", "H"), ("7", "S")], ["5", "+", "7"]),
        ([("5", "H"), ("7", "S")], ["7", "+", "5"]),
        ([("3", "D"), ("4", "C")], ["3", "*", "4"]),
        ([("6", "D"), ("2", "C")], ["2", "*", "6"]),
        ([("K", "D"), ("2", "C")], ["10", "+", "2"]),
        ([("10", "D"), ("2", "C")], ["2", "+", "10"]),
    ],
)
def test_ezpoints_correct_submission_wins_ten(variant, cards, tokens):
    env = make(EZ, reward_variant=variant)
    set_hand(env, cards, 12)
    rewards, (obs, reward, terminated, truncated, info) = play(env, [*tokens, "="])
    assert rewards == [0.0, 0.0, 0.0, 10.0]
    assert (terminated, truncated) == (True, False)
    assert info["success"] is True and info["progress"] == 1.0
    assert info["action"]["valid"] is True


@pytest.mark.parametrize("variant", VARIANTS)
def test_ezpoints_wrong_value_ends_the_episode(variant):
    env = make(EZ, reward_variant=variant)
    set_hand(env, [("5", "H"), ("7", "S")], 12)
    rewards, (obs, reward, terminated, truncated, info) = play(env, ["5", "*", "7", "="])
    assert rewards == [0.0, 0.0, 0.0, PENALTY[variant]]
    assert (terminated, truncated) == (True, False)
    assert info["success"] is False
    assert "35" in obs["text"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_ezpoints_formula_missing_a_card_is_wrong(variant):
    # Level 1 deals three cards: 10 + 2 is 12 but leaves the 5 unused.
    env = make(EZ, level=1, reward_variant=variant)
    set_hand(env, [("10", "H"), ("2", "S"), ("5", "C")], 12)
    rewards, (_, reward, terminated, truncated, info) = play(env, ["10", "+", "2", "="])
    assert rewards == [0.0, 0.0, 0.0, PENALTY[variant]]
    assert (terminated, truncated, info["success"]) == (True, False, False)


def test_ezpoints_submitting_one_card_is_wrong():
    env = make(EZ)
    set_hand(env, [("6", "H"), ("6", "S")], 12)
    _, (_, reward, terminated, _, info) = play(env, ["6", "="])
    assert (reward, terminated, info["success"]) == (-1.0, True, False)


def test_ezpoints_adjacent_numbers_are_two_numbers_not_twelve():
    env = make(EZ)
    u = set_hand(env, [("A", "H"), ("2", "S")], 12)
    rewards, (_, reward, terminated, truncated, info) = play(env, ["1", "2"])
    assert rewards == [0.0, 0.0]  # both cards are on the table, so both tokens are accepted
    assert u.formula == ["1", "2"]
    _, reward, terminated, truncated, info = env.step("=")
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["success"] is False


def test_ezpoints_empty_submission_is_wrong():
    env = make(EZ)
    set_hand(env, [("5", "H"), ("7", "S")], 12)
    _, reward, terminated, _, info = env.step("=")
    assert (reward, terminated, info["success"]) == (-1.0, True, False)


@pytest.mark.parametrize("variant", VARIANTS)
def test_ezpoints_truncated_after_6_steps_at_level_0(variant):
    env = make(EZ, reward_variant=variant)
    set_hand(env, [("5", "H"), ("7", "S")], 12)
    for step in range(1, 7):
        _, reward, terminated, truncated, info = env.step("+")
        assert terminated is False
        assert truncated is (step == 6), f"step {step}"
        assert reward == (PENALTY[variant] if step == 6 else 0.0), f"step {step}"
    assert info["success"] is False
    assert env.unwrapped.elapsed_steps == 6


@pytest.mark.parametrize("variant", VARIANTS)
def test_ezpoints_invalid_steps_count_towards_truncation(variant):
    env = make(EZ, reward_variant=variant)
    u = set_hand(env, [("5", "H"), ("7", "S")], 12)
    for step in range(1, 7):
        _, reward, terminated, truncated, _ = env.step("9" if step % 2 else "no idea")
        assert reward == PENALTY[variant]
        assert (terminated, truncated) == (False, step == 6)
    assert u.formula == []


def test_ezpoints_submission_on_the_last_step_still_counts():
    env = make(EZ)
    set_hand(env, [("5", "H"), ("7", "S")], 12)
    rewards, (_, reward, terminated, truncated, info) = play(env, ["9", "9", "5", "+", "7", "="])
    assert rewards == [-1.0, -1.0, 0.0, 0.0, 0.0, 10.0]
    assert (terminated, truncated, info["success"]) == (True, False, True)


def test_ezpoints_rl4vlm_json_action_10_is_ten_not_one():
    env = make(EZ)
    u = set_hand(env, [("10", "H"), ("2", "S")], 12)
    answer = '{"thoughts": "10 + 2 = 12, start with 10", "action": "10"}'
    _, reward, _, _, info = env.step(answer)
    assert info["action"]["parsed"] == "10" and reward == 0.0
    assert u.formula == ["10"]
    # With an ace and no 10 on the table, "10" is refused: it was never read as "1".
    env2 = make(EZ)
    u2 = set_hand(env2, [("A", "H"), ("2", "S")], 12)
    _, reward, _, _, info = env2.step(answer)
    assert info["action"]["valid"] is False and reward == -1.0
    assert u2.formula == []


@pytest.mark.parametrize(
    ("level", "n_cards", "targets"),
    [(1, 3, range(12, 13)), (2, 3, range(10, 31)), (3, 4, range(10, 51))],
)
def test_ezpoints_higher_levels_deal_solvable_hands(level, n_cards, targets):
    env = gym.make(EZ, level=level, obs_mode="text")
    seen_targets = set()
    for seed in range(60):
        _, info = env.reset(seed=seed)
        u = env.unwrapped
        assert len(u.cards) == n_cards
        assert u.target in targets
        assert points_oracle.solvable(u.values, u.target, "+*", False), f"seed {seed}"
        assert info["optimal_steps"] == 2 * n_cards  # n numbers, n - 1 operators and "="
        assert f"equals {u.target}" in u._mission()
        seen_targets.add(u.target)
    if len(targets) > 1:
        assert len(seen_targets) > 5


def test_ezpoints_level_max_steps():
    # 3 cards: 8 steps; 4 cards: 10 steps.
    for level, budget in ((1, 8), (3, 10)):
        env = make(EZ, level=level)
        for step in range(1, budget + 1):
            _, _, terminated, truncated, _ = env.step("+")
            assert (terminated, truncated) == (False, step == budget)


# ================================================================================================
# Points24
# ================================================================================================


def test_points24_default_level_is_1():
    env = gym.make(P24, obs_mode="text")
    _, info = env.reset(seed=0)
    assert info["level"] == 1
    assert env.unwrapped.target == 24


@pytest.mark.parametrize("level", [0, 1, 3])
def test_points24_has_rl4vlms_17_actions(level):
    env = make(P24, level=level)
    assert env.unwrapped.admissible_actions == (
        "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "+", "-", "*", "/", "(", ")", "=",
    )


def test_points24_level_2_has_20_actions_with_faces_11_to_13():
    env = gym.make(P24, level=2, obs_mode="text")
    obs, _ = env.reset(seed=0)
    assert len(obs["actions"]) == 20
    assert obs["actions"][:13] == tuple(str(n) for n in range(1, 14))
    assert obs["actions"][13:] == ("+", "-", "*", "/", "(", ")", "=")


@pytest.mark.parametrize("variant", VARIANTS)
def test_points24_exact_arithmetic_8_over_3_minus_8_over_3(variant):
    # RL4VLM's float eval gives 23.999999999999996 and misses this answer.
    env = make(P24, reward_variant=variant)
    set_hand(env, [("3", "H"), ("3", "S"), ("8", "D"), ("8", "C")], 24)
    tokens = ["8", "/", "(", "3", "-", "8", "/", "3", ")", "="]
    rewards, (obs, reward, terminated, truncated, info) = play(env, tokens)
    assert rewards == [0.0] * 9 + [10.0]
    assert (terminated, truncated) == (True, False)
    assert info["success"] is True
    assert "Correct" in obs["text"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_points24_wrong_and_invalid(variant):
    env = make(P24, reward_variant=variant)
    u = set_hand(env, [("3", "H"), ("3", "S"), ("8", "D"), ("8", "C")], 24)
    _, reward, terminated, _, info = env.step("9")
    assert (reward, terminated, info["action"]["valid"]) == (PENALTY[variant], False, False)
    rewards, (_, reward, terminated, truncated, info) = play(env, ["8", "+", "8", "+", "3", "+", "3"])
    assert rewards == [0.0] * 7
    _, reward, terminated, _, info = env.step("3")  # both 3s are used
    assert (reward, info["action"]["valid"]) == (PENALTY[variant], False)
    assert u.formula == ["8", "+", "8", "+", "3", "+", "3"]
    _, reward, terminated, truncated, info = env.step("=")  # 22
    assert (reward, terminated, truncated, info["success"]) == (PENALTY[variant], True, False, False)


def test_points24_unbalanced_parentheses_are_wrong():
    env = make(P24)
    set_hand(env, [("6", "H"), ("6", "S"), ("6", "D"), ("6", "C")], 24)
    _, (_, reward, terminated, _, info) = play(env, ["(", "6", "+", "6", "+", "6", "+", "6", "="])
    assert (reward, terminated, info["success"]) == (-1.0, True, False)


def test_points24_face_cards_count_10_at_level_1_and_11_to_13_at_level_2():
    cards = [("K", "H"), ("Q", "S"), ("A", "D"), ("A", "C")]
    env = make(P24, level=2)
    u = set_hand(env, cards, 24)
    assert sorted(u.values) == [1, 1, 12, 13]
    _, (_, reward, terminated, _, info) = play(env, ["13", "+", "12", "-", "1", "*", "1", "="])
    assert (reward, terminated, info["success"]) == (10.0, True, True)
    # At level 1 the same hand is 10, 10, 1, 1, and "13" is not an action.
    env = make(P24, level=1)
    u = set_hand(env, cards, 24)
    assert sorted(u.values) == [1, 1, 10, 10]
    _, reward, _, _, info = env.step("13")
    assert info["action"]["valid"] is False and reward == -1.0
    _, (_, reward, _, _, info) = play(env, ["(", "10", "+", "1", ")", "+", "10", "+", "1"])
    assert reward == 0.0
    _, reward, _, _, info = env.step("=")
    assert (reward, info["success"]) == (-1.0, False)  # 22


def test_points24_level_1_can_deal_unsolvable_hands():
    env = gym.make(P24, level=1, obs_mode="text")
    unsolvable = solvable = 0
    for seed in range(100):
        _, info = env.reset(seed=seed)
        u = env.unwrapped
        assert len(u.cards) == 4
        is_solvable = points_oracle.solvable(u.values, 24)
        assert (info["optimal_steps"] >= 0) is is_solvable, f"seed {seed}"
        if is_solvable:
            solvable += 1
            continue
        unsolvable += 1
        assert info["optimal_steps"] == -1
        assert u.oracle_action() == "="
    assert unsolvable > 0 and solvable > 0


@pytest.mark.parametrize(("level", "n_cards", "faces"), [(0, 4, 10), (2, 4, 13), (3, 5, 10)])
def test_points24_levels_0_2_3_deal_only_solvable_hands(level, n_cards, faces):
    env = gym.make(P24, level=level, obs_mode="text")
    for seed in range(60):
        _, info = env.reset(seed=seed)
        u = env.unwrapped
        assert len(u.cards) == n_cards
        values = [c.value(faces) for c in u.cards]
        assert u.values == values
        assert points_oracle.solvable(values, 24), f"seed {seed}: {values}"
        assert info["optimal_steps"] >= 2 * n_cards


def test_points24_level_3_has_5_cards_in_text():
    env = gym.make(P24, level=3, obs_mode="text")
    obs, _ = env.reset(seed=4)
    cards_line = obs["text"].splitlines()[0]
    assert cards_line.startswith("Cards: ")
    assert len(cards_line[len("Cards: "):].split(", ")) == 5


def test_points24_truncated_after_21_steps():
    # RL4VLM truncates at the first step that finds more than 20 tokens: 21 steps are applied.
    env = make(P24)
    for step in range(1, 22):
        _, reward, terminated, truncated, _ = env.step("(")
        assert terminated is False
        assert truncated is (step == 21), f"step {step}"
        assert reward == (-1.0 if step == 21 else 0.0)


def test_points24_twenty_first_step_can_still_submit():
    # RL4VLM appends " " for every invalid number, so 13 invalid steps + 7 tokens make a
    # 20-character formula; the 21st step ('=') is applied and wins.
    env = make(P24)
    set_hand(env, [("6", "H"), ("6", "S"), ("6", "D"), ("6", "C")], 24)
    tokens = ["9"] * 13 + ["6", "+", "6", "+", "6", "+", "6"]
    _, (_, _, terminated, truncated, _) = play(env, tokens)
    assert (terminated, truncated) == (False, False)
    _, reward, terminated, truncated, info = env.step("=")
    assert (reward, terminated, info["success"]) == (10.0, True, True)


# ================================================================================================
# Rendering (both games)
# ================================================================================================


def _frame(env_id: str, cards, size=(300, 300), level=None, tokens=()):
    kwargs = {"render_mode": "rgb_array", "image_size": size}
    if level is not None:
        kwargs["level"] = level
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    set_hand(env, cards, 12 if env_id == EZ else 24)
    for token in tokens:
        env.step(token)
    return env.render()


def _changed_box(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int]:
    rows = np.flatnonzero((a != b).any(axis=(1, 2)))
    cols = np.flatnonzero((a != b).any(axis=(0, 2)))
    assert rows.size, "the images are identical"
    return rows.min(), rows.max() + 1, cols.min(), cols.max() + 1


def _gold(crop: np.ndarray) -> int:
    return int(np.count_nonzero((np.abs(crop.astype(int) - (250, 233, 178)) <= 6).all(axis=-1)))


def _red(crop: np.ndarray) -> int:
    c = crop.astype(int)
    return int(np.count_nonzero((c[..., 0] > 150) & (c[..., 1] < 90) & (c[..., 2] < 90)))


@pytest.mark.parametrize(("env_id", "other"), [(EZ, [("2", "S")]), (P24, [("2", "S"), ("3", "D"), ("4", "C")])])
def test_a_10_renders_differently_from_j_q_k(env_id, other):
    frames = {rank: _frame(env_id, [(rank, "H"), *other]) for rank in ("10", "J", "Q", "K")}
    # The first card's box: where a 10 and a J differ (and nothing else changes).
    top, bottom, left, right = _changed_box(frames["10"], frames["J"])
    width = frames["10"].shape[1]
    assert right <= width // 2 + 1  # the difference is confined to the first (left) card
    crops = {rank: frame[top:bottom, left:right] for rank, frame in frames.items()}
    for a, b in itertools.combinations(crops, 2):
        assert not np.array_equal(crops[a], crops[b]), f"{a} and {b} look the same"
    assert _gold(crops["10"]) == 0  # a pip card, not a court card
    for rank in ("J", "Q", "K"):
        assert _gold(crops[rank]) > 50, rank
    # Outside the first card nothing differs.
    for rank in ("J", "Q", "K"):
        outside = frames["10"].copy()
        outside[top:bottom, left:right] = frames[rank][top:bottom, left:right]
        assert np.array_equal(outside, frames[rank])


@pytest.mark.parametrize("env_id", [EZ, P24])
def test_suits_render_differently(env_id):
    rest = [("7", "S")] if env_id == EZ else [("7", "S"), ("8", "S"), ("9", "S")]
    frames = {suit: _frame(env_id, [("5", suit), *rest]) for suit in "CDHS"}
    for a, b in itertools.combinations("CDHS", 2):
        assert not np.array_equal(frames[a], frames[b]), f"{a} and {b} look the same"
    top, bottom, left, right = _changed_box(frames["C"], frames["H"])
    reds = {suit: _red(frame[top:bottom, left:right]) for suit, frame in frames.items()}
    assert reds["H"] > 20 and reds["D"] > 20
    assert reds["C"] == 0 and reds["S"] == 0


def test_formula_shows_in_the_image():
    cards = [("5", "H"), ("7", "S")]
    empty = _frame(EZ, cards)
    typed = _frame(EZ, cards, tokens=["5", "+"])
    top, bottom, _, _ = _changed_box(empty, typed)
    assert top >= 0.75 * 300  # the "Formula: ..." line at 0.86 of the height


@pytest.mark.parametrize("size", [(224, 224), (448, 448)])
@pytest.mark.parametrize(("env_id", "level"), [(EZ, 0), (EZ, 3), (P24, 1), (P24, 3)])
def test_image_sizes_keep_cards_inside_the_frame(env_id, level, size):
    env = gym.make(env_id, level=level, image_size=size)
    obs, _ = env.reset(seed=0)
    image = obs["image"]
    assert image.shape == (*size, 3)
    assert env.observation_space.contains(obs)
    # Felt at every edge: no card is cut by the frame.
    for edge in (image[0], image[-1], image[:, 0], image[:, -1]):
        assert (edge == FELT).all()
    # Every card is drawn, side by side: across a band through the cards (no text there), the
    # columns that are not felt form one run per card.
    height = size[0]
    band = image[round(0.1 * height) : round(0.3 * height)]
    covered = (band != FELT).any(axis=-1).all(axis=0)
    runs = np.count_nonzero(np.diff(covered.astype(int)) == 1) + int(covered[0])
    assert runs == len(env.unwrapped.cards)
    obs, *_ = env.step("=")
    assert obs["image"].shape == (*size, 3)


@pytest.mark.parametrize(("env_id", "level"), [(P24, 1), (P24, 3), (EZ, 3)])
def test_smallest_allowed_image_size_renders_and_smaller_is_refused(env_id, level):
    env = gym.make(env_id, level=level, image_size=(128, 128))
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (128, 128, 3)
    with pytest.raises(ValueError, match="image_size"):
        gym.make(env_id, level=level, image_size=(64, 64))


@pytest.mark.parametrize("env_id", [EZ, P24])
def test_success_needs_the_submission_not_just_a_correct_formula(env_id):
    env = gym.make(env_id, level=0, obs_mode="text")
    env.reset(seed=0)
    plan = env.unwrapped._plan
    for token in plan:
        _, _, _, _, info = env.step(token)
        assert info["success"] is False, "a correct formula is not a success until '=' submits it"
    _, reward, terminated, _, info = env.step("=")
    assert (reward, terminated, info["success"], info["progress"]) == (10.0, True, True, 1.0)
