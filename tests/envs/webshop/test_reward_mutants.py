"""Tests that kill the mutants of ``rl4vlm_gym.envs.webshop.reward`` that the other fast tests let
live (benchmarks/mutation/: mutmut's survivors)."""

from __future__ import annotations

from typing import Any

import numpy as np

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.envs.webshop.catalog import Product, load_products
from rl4vlm_gym.envs.webshop.goals import Goal
from rl4vlm_gym.envs.webshop.reward import _under_eleven_alike, get_reward, token_set_ratio


def _product(**fields: Any) -> Product:
    record = {
        "asin": "B000000001", "name": "Acme Towel", "full_description": "A towel.", "small_description": ["soft", "cotton blend"],
        "pricing": "$25.00", "images": [""], "product_category": "Home › Bath › Towels", "customization_options": {},
        "category": "home", "query": "towel",
    }  # fmt: skip
    record.update(fields)
    return load_products([record], {"B000000001": {"attributes": []}}, {}, np.random.default_rng(0), "t").products[0]


def test_an_attribute_may_span_two_bullet_points():
    # WebShop joins the bullet points with a space before looking for the attribute in them.
    product = _product()
    goal = Goal(
        asin=product.asin, instruction="i need a towel", attributes=("soft cotton",), goal_options={}, price_upper=30.0,
        name=product.title, query=product.query, category=product.category, product_category=product.product_category,
        product_type=product.product_type,
    )  # fmt: skip
    assert get_reward(product, goal, 25.0, {}).r_att == 1.0


def test_token_set_ratio_lower_cases_as_thefuzz():
    # "ﬁ" (U+FB01, above thefuzz's dropped 128-255) upper-cases to "FI" but lower-cases to itself.
    assert token_set_ratio("ﬁne", "fine") < 100
    assert token_set_ratio("FINE", "fine") == 100


def test_under_eleven_alike_counts_first_letters_after_lower_casing():
    # "İ" lower-cases to "i" + a combining dot: its first letter is "i", so 6 "i" and 5 "İ" are 11 alike.
    assert not _under_eleven_alike("iiiiiiİİİİİ", None)
    assert _under_eleven_alike("iiiiiİİİİİ", None)  # 10
    assert not _under_eleven_alike("a" * 11, None)


def test_a_goal_without_attributes_or_options_scores_them_zero():
    # r_att and r_option are 0 (not 1, not a division by zero) when the goal asks for none; the price decides.
    product = _product()
    goal = Goal(
        asin=product.asin, instruction="i need a towel", attributes=(), goal_options={}, price_upper=30.0,
        name=product.title, query=product.query, category=product.category, product_category=product.product_category,
        product_type=product.product_type,
    )  # fmt: skip
    reward = get_reward(product, goal, 25.0, {})
    assert (reward.r_att, reward.w_att, reward.r_option, reward.w_option, reward.w_price) == (0.0, 0.0, 0.0, 0.0, 1.0)
    assert reward.total == reward.r_type


def test_reward_repr_lists_its_terms_and_the_title_score():
    # WebShop's verbose output: every term by name, then title_score (read through the property).
    from rl4vlm_gym.envs.webshop.reward import Reward

    reward = Reward(1.0, 1.0, 0.5, 0.25, 1.0, 0.5, True, 0.25, True, False, _title=0.2)
    assert repr(reward) == (
        "Reward(total=1.0, r_type=1.0, r_att=0.5, w_att=0.25, r_option=1.0, w_option=0.5, r_price=True, "
        "w_price=0.25, query_match=True, category_match=False, title_score=0.2)"
    )


def test_corrected_title_score_reads_product_types_only_when_both_have_one():
    # The goal has no product type: the bought title's nouns are its words too (not its type's), so buying
    # the goal's own title scores 1, not 1/3 ("towel" of "acme soft towel").
    import dataclasses

    product = dataclasses.replace(_product(name="Acme Soft Towel"), product_type="towel")
    goal = Goal(
        asin=product.asin, instruction="i need a towel", attributes=(), goal_options={}, price_upper=30.0,
        name=product.title, query=product.query, category=product.category, product_category=product.product_category,
        product_type=None,
    )  # fmt: skip
    assert get_reward(product, goal, 25.0, {}, scorer="corrected").title_score == 1.0
