"""The shop's data layer: WebShop's loader semantics, goals, search safety, pages (the reward: test_reward.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rl4vlm_gym.envs.webshop.catalog import load_products
from rl4vlm_gym.envs.webshop.goals import NO_PRICE_CAP, PRICE_RANGE, price_cap, split, synthetic_goals
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.envs.webshop.pages import SEARCH_ACTION, Route, build_page, normalize_query
from rl4vlm_gym.envs.webshop.reward import normalize_color, token_set_ratio
from rl4vlm_gym.envs.webshop.search import MAX_QUERY_TERMS, SearchIndex, query_terms
from rl4vlm_gym.envs.webshop.shop import procedural_shop
from rl4vlm_gym.envs.webshop.vocab import COLORS, EXTRA_OPTIONS, SIZES, TYPES


def record(asin: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "asin": asin,
        "name": f"Product {asin}",
        "full_description": "A fine product.",
        "small_description": ["Bullet one", "Bullet two"],
        "pricing": "$10.00",
        "images": [f"https://m.media-amazon.com/images/I/{asin}.jpg"],
        "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
        "customization_options": "",
        "category": "beauty",
        "query": "  Shampoo ",
    }
    base.update(fields)
    return base


# -- loader -----------------------------------------------------------------------------------------


def test_load_products_follows_webshop_engine() -> None:
    records = [
        record("B000000001", pricing="$19.99$27.99"),
        record("B000000002", pricing=""),
        record("B000000003", pricing="$1,234.50"),
        record("B000000001", name="duplicate asin"),
        record("nan"),
        record("B0000000001234", name="asin too long"),
        record(
            "B000000004",
            customization_options={
                "Color": None,
                "Size": [{"is_selected": False, "is_available": True, "value": " 12 Inch/Pack of 2 ", "asin": ""}],
                "Style": [{"value": "Classic", "image": "https://x/classic.jpg"}, {"value": None}],
            },
        ),
    ]
    attributes = {"B000000001": {"attributes": ["sulfate free"], "instruction": "Find me shampoo",
                                 "instruction_attributes": ["sulfate free"]}}  # fmt: skip
    catalog = load_products(records, attributes, {}, np.random.default_rng(0), "test")
    assert [p.asin for p in catalog.products] == ["B000000001", "B000000002", "B000000003", "B000000004"]
    ranged, unpriced, thousands, optioned = catalog.products
    assert ranged.pricing == (19.99, 27.99) and ranged.price_text == "$19.99 to $27.99"
    assert 19.99 <= ranged.price <= 27.99
    assert unpriced.pricing == () and unpriced.price == 100.0 and unpriced.price_text == "$100.00"
    assert thousands.price == 1234.5
    assert ranged.query == "shampoo" and ranged.attributes == ("sulfate free",)
    assert ranged.instruction == "Find me shampoo" and ranged.instruction_attributes == ("sulfate free",)
    assert unpriced.attributes == ("DUMMY_ATTR",)
    assert dict(optioned.options) == {"size": ("12 inch | pack of 2",), "style": ("classic",)}
    assert optioned.option_images == {("style", "classic"): "https://x/classic.jpg"}
    assert optioned.main_image.endswith("B000000004.jpg")


def test_prices_are_drawn_from_the_catalog_rng() -> None:
    records = [record(f"B00000000{i}", pricing="$10.00$90.00") for i in range(5)]
    a = load_products(records, {}, {}, np.random.default_rng(1), "a")
    b = load_products(records, {}, {}, np.random.default_rng(1), "b")
    c = load_products(records, {}, {}, np.random.default_rng(2), "c")
    assert [p.price for p in a.products] == [p.price for p in b.products] != [p.price for p in c.products]


# -- goals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("price", [5.0, 10.0, 123.4, 955.0, 985.0, 2000.0])
def test_price_cap_is_webshops(price: float) -> None:
    candidates = [p for p in PRICE_RANGE if p > price][:4]
    for seed in range(20):
        upper, text = price_cap(price, np.random.default_rng(seed))
        if len(candidates) < 2:
            assert (upper, text) == (NO_PRICE_CAP, "")
        else:
            assert upper in candidates[1:] and upper > price
            assert text == f", and price lower than {upper:.2f} dollars"
    assert price_cap(price, np.random.default_rng(0), enabled=False) == (NO_PRICE_CAP, "")


def test_synthetic_goals_cover_every_option_combination() -> None:
    options = {"Size": [{"value": "S"}, {"value": "M"}], "Color": [{"value": "Red"}, {"value": "Blue"}, {"value": "Black"}]}
    records = [record("B000000001", pricing="$15.00", customization_options=options), record("B000000002")]
    attributes = {"B000000001": {"attributes": ["a", "b"], "instruction": "i need b shampoo", "instruction_attributes": ["b"]}}
    catalog = load_products(records, attributes, {}, np.random.default_rng(0), "t")
    goals = synthetic_goals(catalog, np.random.default_rng(0))
    assert len(goals) == 6  # 2 sizes x 3 colours; the product without an instruction has none
    assert [dict(g.goal_options) for g in goals][:2] == [{"color": "red", "size": "s"}, {"color": "red", "size": "m"}]
    first = goals[0]
    assert first.instruction.startswith("i need b shampoo with color: red, and size: s, and price lower than ")
    assert first.attributes == ("b",) and first.price_upper in (30.0, 40.0, 50.0)
    assert all(g.price_upper == first.price_upper for g in goals)  # one cap per product, as WebShop
    assert all(g.weight == pytest.approx(1 / 6) for g in goals)


def test_splits_are_webshops() -> None:
    goals = list(range(2000))
    assert split(goals, "test") == list(range(500))  # type: ignore[arg-type]
    assert split(goals, "eval") == list(range(500, 1500))  # type: ignore[arg-type]
    assert split(goals, "train") == list(range(1500, 2000))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="split"):
        split(goals, "dev")  # type: ignore[arg-type]


def test_procedural_shop_is_fixed_by_its_seed() -> None:
    a, b = procedural_shop(0, 0), procedural_shop(0, 1)
    assert len(a.catalog) == LEVELS[0].products == len(b.catalog)
    assert [p.asin for p in a.catalog.products] != [p.asin for p in b.catalog.products]
    assert procedural_shop(0, 0) is a  # cached and shared


# -- vocabulary: wrong choices must cost reward ----------------------------------------------------


def test_option_values_and_attributes_are_distinct_under_webshops_matching() -> None:
    pools = [tuple(COLORS), *SIZES.values(), *(values for _, values in EXTRA_OPTIONS.values())]
    pools += [kind.attributes for kind in TYPES]
    for pool in pools:
        for a, b in itertools.combinations(pool, 2):
            assert token_set_ratio(normalize_color(a), normalize_color(b)) <= 85, (a, b)
    for pool in pools[1 : 1 + len(SIZES) + len(EXTRA_OPTIONS)]:
        for value in pool:  # WebShop's substring colour test would turn "standard" into "tan"
            assert normalize_color(value) == value, value


# -- search -----------------------------------------------------------------------------------------

HOSTILE_QUERIES = [
    '"', "'", '"unbalanced', "NEAR(a b)", "a AND OR NOT", "title:x", "^start", "col*", "(((", ")",
    "'; DROP TABLE products; --", "\"; DELETE FROM products WHERE 1; --", "x" * 10_000, "word " * 2_000,
    "\x00\x01\x02", "\ud800", "动作 🙂", "", "   ", "-", "+", "{a}", "a:b:c", "* OR *",
]  # fmt: skip


def test_search_survives_any_query_and_never_changes_the_index() -> None:
    shop = procedural_shop(0, 0)
    index = SearchIndex(shop.catalog)
    before = index._db.execute("SELECT count(*) FROM products").fetchone()
    for query in HOSTILE_QUERIES:
        results = index.search(query)
        assert isinstance(results, tuple) and len(results) <= 50
    assert index._db.execute("SELECT count(*) FROM products").fetchone() == before
    import sqlite3

    with pytest.raises(sqlite3.OperationalError):
        index._db.execute("DELETE FROM products")  # query_only: nothing can write
    assert len(query_terms("w " * 100 + " ".join(f"t{i}" for i in range(100)))) == MAX_QUERY_TERMS


def test_search_ranks_the_title_first_and_pages_by_ten() -> None:
    shop = procedural_shop(2, 0)
    product = shop.catalog.products[7]
    results = shop.index.search(normalize_query(product.title))
    assert results[0] == product.asin and len(results) == 50
    page = build_page(shop, shop.goals[0], Route("results", normalize_query(product.title), 2))
    shown = [b.asin for b in page.blocks if b.kind == "result"]
    assert shown == list(results[10:20])
    assert page.actions[:3] == ("click[back to search]", "click[< prev]", "click[next >]")


# -- pages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "route",
    [
        Route(),
        Route("results", "red shoes & more / 100% ?#", 3),
        Route("item", "q", 2, "B0ABCDEFGH", (("color", "navy blue"), ("size", "12 inch | pack of 2"))),
        Route("features", "q", 1, "B0ABCDEFGH", (("style", "a:b"),)),
        Route("done", "q", 1, "B0ABCDEFGH", (("color", "red"),)),
    ],
)
def test_routes_round_trip_through_urls(route: Route) -> None:
    assert Route.from_url(f"http://127.0.0.1:1234{route.path()}") == route


def test_pages_speak_webshops_text() -> None:
    shop = procedural_shop(2, 0)
    goal = shop.goals[0]
    search = build_page(shop, goal, Route())
    assert search.text() == f"WebShop [SEP] Instruction: [SEP] {goal.instruction} [SEP] Search"
    assert search.actions == (SEARCH_ACTION,)
    product = shop.catalog.by_asin[goal.asin]
    value = next(iter(goal.goal_options.values()))  # type: ignore[union-attr]
    name = next(iter(goal.goal_options))  # type: ignore[arg-type]
    item = build_page(shop, goal, Route("item", "q", 1, goal.asin, ((name, value),)))
    text, rich = item.text(), item.text(rich=True)
    assert text.startswith(f"Instruction: [SEP] {goal.instruction} [SEP] Back to Search [SEP] < Prev [SEP] {name}")
    assert f"{product.title} [SEP] Price: ${product.price:.2f} [SEP] Rating: N.A." in text
    assert text.endswith("Description [SEP] Features [SEP] Reviews [SEP] Buy Now")
    assert f"[clicked button] {value} [clicked button_]" in rich and "[button] Buy Now [button_]" in rich
    assert item.actions[-1] == "click[buy now]" and f"click[{value}]" in item.actions
