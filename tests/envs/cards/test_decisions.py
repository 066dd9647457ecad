"""Decision facts of the cards family (issue 38): NumberLine, EZPoints, Points24 and Blackjack.

Hand-worked states (two optimal actions, a move that does not shorten the plan, an unsolvable
state, the step budget at and around its limit), and the points games' shortest completions
against an independent brute force over every formula of a small hand. The kit's ``decisions``
check (tests/test_conformance.py) plays the oracle and seeded walks on every level.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.cards import points_oracle
from rl4vlm_gym.envs.cards.deck import RANKS, Card


def make(env_id: str, **kwargs: Any) -> gym.Env:
    env = gym.make(env_id, obs_mode="text", **kwargs)
    env.reset(seed=0)
    return env


# -- NumberLine ----------------------------------------------------------------------------------


def test_numberline_steps_to_go_is_the_distance_and_only_the_move_towards_the_target_is_optimal() -> None:
    env = make("rl4vlm/NumberLine-v0", level=0)  # positions 0..5, 10 steps
    base = env.unwrapped
    base.position, base.target = 0, 3
    assert base.decision() == {"optimal_actions": ["+"], "steps_to_go": 3, "values": None, "reason": None, "features": {"distance": 3}}
    env.step("-")  # into the edge: valid, nothing moves, the plan is no shorter
    assert base.decision()["steps_to_go"] == 3
    env.step("+")
    assert base.decision()["steps_to_go"] == 2
    base.position = 4  # past the target: the other move is the one
    assert base.decision()["optimal_actions"] == ["-"] and base.decision()["steps_to_go"] == 1
    env.step("+")  # away from it: one step more
    assert base.decision()["steps_to_go"] == 2


@pytest.mark.parametrize(("left", "known"), [(4, True), (3, True), (2, False)])
def test_numberline_is_unsolvable_once_fewer_steps_are_left_than_the_distance(left: int, known: bool) -> None:
    env = make("rl4vlm/NumberLine-v0", level=0)
    base = env.unwrapped
    base.position, base.target = 0, 3
    for _ in range(base.config.max_steps - left):
        env.step("-")  # at 0: a valid step that moves nothing
    facts = base.decision()
    assert (facts["steps_to_go"] == 3) is known and (facts["optimal_actions"] == ["+"]) is known
    assert known or facts["reason"] == "unsolvable from here: 3 steps to go, 2 left"


# -- EZPoints and Points24 -----------------------------------------------------------------------


def deal(env: gym.Env, values: tuple[int, ...], target: int) -> None:
    """Give the env's episode this hand (suits do not matter) and target, with an empty formula."""
    base = env.unwrapped
    base.cards = tuple(Card(RANKS[v - 1], "S") for v in values)
    base.target, base.formula = target, []
    base._plan = points_oracle.solve(base.values, target, base._arithmetic(), base.PARENTHESES)


def test_ezpoints_both_cards_of_a_product_start_a_shortest_formula() -> None:
    env = make("rl4vlm/EZPoints-v0", level=0)
    base = env.unwrapped
    deal(env, (2, 6), 12)  # 2*6 or 6*2; 2+6 is 8
    facts = base.decision()
    assert facts["optimal_actions"] == ["2", "6"] and facts["steps_to_go"] == 4
    assert facts["features"] == {"cards_used": 0, "cards_left": 2, "open_parens": 0}
    env.step("5")  # no card is worth 5: refused, nothing changes but the step spent
    assert base.decision()["steps_to_go"] == 4
    env.step("2")
    assert base.decision()["optimal_actions"] == ["*"] and base.decision()["steps_to_go"] == 3
    env.step("+")  # 2+6 can no longer be 12
    assert base.decision()["optimal_actions"] is None and base.decision()["reason"].startswith("unsolvable from here")


def test_ezpoints_a_right_formula_has_only_the_submission_left() -> None:
    env = make("rl4vlm/EZPoints-v0", level=0)
    deal(env, (2, 6), 12)
    for token in ("6", "*", "2"):
        env.step(token)
    assert env.unwrapped.decision()["optimal_actions"] == ["="] and env.unwrapped.decision()["steps_to_go"] == 1
    env.step("=")
    assert env.unwrapped.decision()["steps_to_go"] == 0  # won: the episode is over


@pytest.mark.parametrize(("spent", "known"), [(1, True), (2, True), (3, False)])
def test_ezpoints_budget_at_and_around_its_limit(spent: int, known: bool) -> None:
    env = make("rl4vlm/EZPoints-v0", level=0)  # 6 steps for a 4-step formula
    deal(env, (2, 6), 12)
    for _ in range(spent):
        env.step("9")  # refused: a step spent, the formula unchanged
    facts = env.unwrapped.decision()
    assert (facts["steps_to_go"] == 4) is known
    assert known or facts["reason"] == "unsolvable from here: 4 steps to go, 3 left"


def test_points24_parentheses_that_are_not_needed_cost_their_two_tokens() -> None:
    env = make("rl4vlm/Points24-v0", level=0)
    base = env.unwrapped
    deal(env, (1, 1, 4, 6), 24)  # 1*1*4*6: 7 tokens, and any card may come first
    facts = base.decision()
    assert facts["optimal_actions"] == ["1", "4", "6"] and facts["steps_to_go"] == 8
    env.step("(")  # not optimal: "(1*1*4*6)" is two tokens longer, one of them written
    assert base.decision()["steps_to_go"] == 9
    assert base.decision()["features"]["open_parens"] == 1
    env.step(")")  # out of place: no completion can make a formula of "()"
    assert base.decision()["reason"].startswith("unsolvable from here")


def test_points24_exact_arithmetic_finds_the_only_formula() -> None:
    env = make("rl4vlm/Points24-v0", level=0)
    base = env.unwrapped
    deal(env, (3, 3, 8, 8), 24)  # only 8/(3-8/3)
    assert base.decision()["optimal_actions"] == ["8"] and base.decision()["steps_to_go"] == 10
    for token in ("8", "/", "("):
        assert token in base.decision()["optimal_actions"]
        env.step(token)
    assert base.decision()["optimal_actions"] == ["3"] and base.decision()["steps_to_go"] == 7
    env.step("8")  # 8/(8...: off the only formula
    assert base.decision()["optimal_actions"] is None


def brute_shortest(numbers: tuple[int, ...], target: int, ops: str, parens: bool, longest: int) -> dict[tuple[str, ...], int]:
    """The fewest tokens still to write from every prefix of every right formula of at most
    ``longest`` tokens, by listing every formula (the independent reference)."""
    hand, best = Counter(numbers), {}

    def grow(tokens: list[str], used: Counter[int], depth: int, waiting: bool) -> None:
        if not waiting and not depth and used == hand and points_oracle.evaluate(tokens) == target:
            for k in range(len(tokens) + 1):
                best[tuple(tokens[:k])] = min(best.get(tuple(tokens[:k]), longest), len(tokens) - k)
        if len(tokens) == longest:
            return
        nexts = [str(n) for n in hand if used[n] < hand[n]] + (["("] if parens else []) if waiting else list(ops) + ([")"] if depth else [])
        for token in nexts:
            number = int(token) if token.isdigit() else None
            if number is not None:
                used[number] += 1
            grow([*tokens, token], used, depth + (token == "(") - (token == ")"), token in "(" + ops)
            if number is not None:
                used[number] -= 1

    grow([], Counter(), 0, True)
    return best


@pytest.mark.parametrize(
    ("numbers", "target", "ops", "parens", "longest"),
    [
        ((2, 3, 4), 20, "+*", False, 5),  # EZPoints rules: (2+3)*4 is out of reach, 4*3+... is not
        ((2, 3, 4), 14, "+*", False, 5),
        pytest.param((2, 3, 4), 20, "+-*/", True, 7, marks=pytest.mark.slow),  # (2+3)*4: parentheses needed; 0.2 s
        ((1, 3, 3), 0, "+-*/", True, 7),  # zero: (3-3)*1, 1*(3-3), 3-3*1...; one spare pair of parentheses
        pytest.param((2, 5, 7), 1, "+-*/", True, 7, marks=pytest.mark.slow),  # 0.2 s
    ],
)
def test_shortest_completions_match_a_brute_force_over_every_formula(
    numbers: tuple[int, ...], target: int, ops: str, parens: bool, longest: int
) -> None:
    best = brute_shortest(numbers, target, ops, parens, longest)
    completions = points_oracle.Completions(numbers, target, ops, parens)
    vocabulary = [str(n) for n in sorted(set(numbers))] + list(ops) + (["(", ")"] if parens else [])
    checked = 0
    for length in range(longest + 1):
        for prefix in itertools.product(vocabulary, repeat=length) if length <= 3 else (p for p in best if len(p) == length):
            want, got = best.get(prefix), completions.shortest(prefix)
            # A prefix no listed formula completes has no completion within `longest` tokens.
            assert got == want if want is not None else (got is None or length + got > longest), (prefix, got, want)
            checked += 1
    assert checked > 100
    # A bound only cuts the search: asked first (nothing memoised yet), the answer within it is the same.
    points_oracle._SHARED_COMPLETERS.clear()
    # The next tokens of a shortest completion, each searched at one length only, nothing memoised yet.
    fresh = points_oracle.Completions(numbers, target, ops, parens)
    for prefix, want in best.items():
        nexts = [a for a in vocabulary if want and best.get((*prefix, a)) == want - 1]
        assert fresh.next_tokens(prefix, vocabulary) == (want, tuple(nexts)), prefix
    points_oracle._SHARED_COMPLETERS.clear()
    for prefix, want in best.items():
        assert want == 0 or points_oracle.Completions(numbers, target, ops, parens).shortest(prefix, at_most=want - 1) is None
        assert points_oracle.Completions(numbers, target, ops, parens).shortest(prefix, at_most=want) == want


@pytest.mark.parametrize(("env_id", "level"), [("rl4vlm/EZPoints-v0", 1), ("rl4vlm/Points24-v0", 0)])
def test_points_facts_kept_across_episodes_equal_facts_computed_afresh(env_id: str, level: int) -> None:
    # The facts of a formula are kept per hand and shared by every episode and env that deals it: one env
    # playing three deals (the first again last), with a refused number and an off-plan token in each,
    # must say what a new env says for each deal with every cache cleared. 0.2 s.
    from rl4vlm_gym.envs.cards import points

    def play(env: gym.Env, seed: int) -> list[dict[str, Any]]:
        env.reset(seed=seed)
        base, seen = env.unwrapped, []
        refused = next(str(n) for n in range(1, 11) if n not in base.values)
        for action in (refused, "(" if base.PARENTHESES else "+"):
            seen.append(base.decision())
            env.step(action)
        done = False
        while not done:
            seen.append(base.decision())
            _, _, terminated, truncated, _ = env.step(base.oracle_action())
            done = terminated or truncated
        return seen

    env = gym.make(env_id, obs_mode="text", level=level)
    kept = [play(env, seed) for seed in (0, 1, 0)]
    for seed, facts in zip((0, 1, 0), kept):
        points._facts_table.cache_clear()
        points._completions.cache_clear()
        points_oracle._SHARED_COMPLETERS.clear()
        assert facts == play(gym.make(env_id, obs_mode="text", level=level), seed), seed
    assert sum(bool(facts["optimal_actions"]) for episode in kept for facts in episode) > 5


# -- Blackjack -----------------------------------------------------------------------------------


def hand(env: gym.Env, player: tuple[str, ...], up: str) -> dict[str, Any]:
    base = env.unwrapped
    base.player = [Card(rank, "S") for rank in player]
    base.dealer = [Card(up, "H"), Card("2", "H")]
    return base.decision()


def test_blackjack_values_are_expected_rewards_and_the_best_is_optimal() -> None:
    env = make("rl4vlm/Blackjack-v0", level=0)
    facts = hand(env, ("10", "5", "6"), "7")  # a hard 21: any card busts a hit
    assert facts["values"]["hit"] == -1.0 and facts["values"]["stand"] > -1.0 and facts["optimal_actions"] == ["stand"]
    assert facts["steps_to_go"] == -1 and "chance" in facts["reason"]
    assert facts["features"] == {"total": 21, "soft": 0, "dealer": 7}
    facts = hand(env, ("2", "3"), "10")  # 5: a hit cannot bust, standing on 5 loses unless the dealer busts
    assert facts["optimal_actions"] == ["hit"] and facts["values"]["hit"] > facts["values"]["stand"]
    facts = hand(env, ("A", "7"), "9")  # soft 18 against a 9: the textbook hit
    assert facts["optimal_actions"] == ["hit"] and facts["features"]["soft"] == 1


@pytest.mark.parametrize(("up", "stand"), [("5", 1.5), ("A", 1.5 * 9 / 13), ("K", 1.5 * 12 / 13)])
def test_blackjack_a_natural_pays_three_to_two_unless_the_hole_card_completes_one(up: str, stand: float) -> None:
    env = make("rl4vlm/Blackjack-v0", level=2)
    facts = hand(env, ("A", "K"), up)
    assert facts["values"]["stand"] == pytest.approx(stand, abs=1e-12) and facts["optimal_actions"] == ["stand"]
    assert hand(make("rl4vlm/Blackjack-v0", level=0), ("A", "K"), "5")["values"]["stand"] < 1.0  # 1:1 there


def test_points_facts_follow_the_level_when_the_same_cards_come_again() -> None:
    # The same seed deals the same cards on every level; J, Q, K are worth 10 on level 1, 11-13 on level 2.
    env = make("rl4vlm/Points24-v0")

    def deals_a_face(seed: int) -> bool:
        env.reset(seed=seed, options={"level": 2})
        return any(card.rank in ("J", "Q", "K") for card in env.unwrapped.cards)

    seed = next(s for s in range(100) if deals_a_face(s))
    fresh = make("rl4vlm/Points24-v0", level=2)
    fresh.reset(seed=seed)
    env.reset(seed=seed, options={"level": 1})
    env.unwrapped.decision()
    env.reset(seed=seed, options={"level": 2})
    assert env.unwrapped.decision() == fresh.unwrapped.decision()
