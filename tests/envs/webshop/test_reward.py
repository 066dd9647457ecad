"""WebShop's reward (``reward.py``, ``normalize.py``, ``nouns.py``) against WebShop's ``get_reward``.

Worked examples of WebShop's ``get_reward`` (princeton-nlp/WebShop at d149d0d, ``web_agent_site/engine/goal.py``), and every threshold of the
reward at, just above and just below it. Tests that need spaCy's ``en_core_web_sm`` skip without
it (the ``webshop`` extra installs it; CI has it).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.envs.webshop import nouns, reward
from rl4vlm_gym.envs.webshop.catalog import Product, load_products
from rl4vlm_gym.envs.webshop.goals import Goal
from rl4vlm_gym.envs.webshop.normalize import COLOR_SET, normalize_color
from rl4vlm_gym.envs.webshop.reward import SCORERS, get_reward, token_set_ratio
from rl4vlm_gym.envs.webshop.shop import procedural_shop

HAS_MODEL = nouns._installed_model() is not None
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="spaCy's en_core_web_sm is not installed (the webshop extra)")


def make_product(asin: str = "B000000001", **fields: Any) -> Product:
    """One product loaded by WebShop's loading rules from a raw record; ``attributes`` goes to items_ins_v2."""
    attributes = fields.pop("attributes", ["sulfate free", "argan oil"])
    record = {
        "asin": asin,
        "name": "Acme Shampoo Sulfate Free with Argan Oil",
        "full_description": "Gentle daily shampoo for dry scalp.",
        "small_description": ["Paraben free formula"],
        "pricing": "$25.00",
        "images": [""],
        "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
        "customization_options": {"Color": [{"value": "Navy Blue"}, {"value": "Red"}],
                                  "Size": [{"value": "Large"}, {"value": "Small"}]},
        "category": "beauty",
        "query": "shampoo",
    }  # fmt: skip
    record.update(fields)
    return load_products([record], {asin: {"attributes": attributes}}, {}, np.random.default_rng(0), "t").products[0]


def make_goal(product: Product, **fields: Any) -> Goal:
    goal: dict[str, Any] = {
        "asin": product.asin, "instruction": "i need shampoo", "attributes": ("sulfate free",),
        "goal_options": {"color": "navy blue", "size": "large"}, "price_upper": 30.0, "name": product.title,
        "query": product.query, "category": product.category, "product_category": product.product_category,
        "product_type": product.product_type,
    }  # fmt: skip
    goal.update(fields)
    return Goal(**goal)


# -- the terms ---------------------------------------------------------------------------------------


def test_a_perfect_purchase_scores_one() -> None:
    product = make_product()
    r = get_reward(product, make_goal(product), 25.0, {"color": "navy blue", "size": "large"})
    assert (r.total, r.r_type, r.r_att, r.r_option, r.r_price) == (1.0, 1.0, 1.0, 1.0, True)


def test_reward_terms_one_by_one() -> None:
    product = make_product()
    goal = make_goal(product, attributes=("sulfate free", "paraben free", "dry scalp", "tea tree"), price_upper=20.0)
    # attributes: "sulfate free" (Attributes), "paraben free" (bullet), "dry scalp" (description); not "tea tree";
    # options: red is not navy blue, large is large; the price 25 is above the cap 20
    r = get_reward(product, goal, 25.0, {"color": "red", "size": "large"})
    assert (r.r_att, r.r_option, r.r_price) == (0.75, 0.5, False)
    assert r.w_att == pytest.approx(4 / 7) and r.w_option == pytest.approx(2 / 7) and r.w_price == pytest.approx(1 / 7)
    assert r.total == pytest.approx((3 + 1 + 0) / (4 + 2 + 1))


def test_human_goal_options_are_plain_values() -> None:
    product = make_product()
    r = get_reward(product, make_goal(product, goal_options=("navy blue", "small")), 25.0,
                   {"color": "navy blue", "size": "large"})  # fmt: skip
    assert r.r_option == 0.5 and r.total == pytest.approx((1 + 1 + 1) / 4)


# -- colours: WebShop's COLOR_SET, in its order -----------------------------------------------------


def test_color_set_is_webshops_list_in_its_order() -> None:
    assert COLOR_SET[:6] == ("alabaster", "apricot", "aqua", "ash", "asphalt", "azure")
    assert COLOR_SET[-4:] == ("wheat", "white", "wine", "yellow")
    assert COLOR_SET.index("blue") < COLOR_SET.index("light") and COLOR_SET.index("ash") < COLOR_SET.index("gray")
    assert len(COLOR_SET) == len(set(COLOR_SET)) == 102


@pytest.mark.parametrize(
    ("value", "color"),
    [
        ("antique graywash", "ash"),  # "ash" in "wash" is listed before "gray"
        ("dash kit", "ash"),
        ("espresso + beige 9", "beige"),  # "beige" is listed before "espresso"
        ("light blue", "blue"),  # "blue" is listed before "light"
        ("navy blue", "blue"),
        ("standard", "tan"),  # a substring test, as WebShop's
        ("12 inch (pack of 1)", "12 inch (pack of 1)"),  # no colour: unchanged
        (("color", "blue"), "blue"),  # a (name, value) pair: a membership test
        (("color", "sunflowers"), ("color", "sunflowers")),
    ],
)
def test_normalize_color_is_webshops(value: Any, color: Any) -> None:
    assert normalize_color(value) == color


def test_token_set_ratio_processes_text_as_thefuzz() -> None:
    assert token_set_ratio("Navy-Blue!", "blue navy") == 100  # punctuation as spaces, lower-cased, token sets
    assert token_set_ratio("caf\u00e9", "caf") == 100  # code points 128-255 are dropped, as thefuzz's asciidammit
    assert token_set_ratio("a\u2122b", "a b") == 100  # others are not dropped: "™" is a non-word character, a space
    assert token_set_ratio(("size", "large"), "large") == 100  # a pair is compared as its text "('size', 'large')"


# -- synthetic goals: options compared as (name, value) pairs -----------------------------------------

SIX = ("sulfate free", "argan oil", "paraben free", "dry scalp", "gentle daily", "hair care")


def sunflower_case() -> tuple[Product, Goal]:
    product = make_product(
        attributes=list(SIX),
        customization_options={"Color": [{"value": "Sunflowers"}, {"value": "Red"}], "Size": [{"value": "Large"}]},
    )
    return product, make_goal(product, attributes=SIX, goal_options={"color": "sunflowers", "size": "large"})


def test_synthetic_goal_options_are_pairs_the_worked_example_scores_0_889() -> None:
    product, goal = sunflower_case()
    r = get_reward(product, goal, 25.0, {"color": "sunflowers", "size": "large"})
    # "sunflowers" is normalised to "sunflower" on the purchase side only; it never matches
    # "('color', 'sunflowers')" above 85, while "large" matches "('size', 'large')".
    assert token_set_ratio("sunflower", ("color", "sunflowers")) <= 85
    assert r.r_option == 0.5 and r.total == pytest.approx(8 / 9) and round(r.total, 3) == 0.889
    corrected = get_reward(product, goal, 25.0, {"color": "sunflowers", "size": "large"}, scorer="corrected")
    assert corrected.total == 1.0  # plain values, normalised on both sides
    human = get_reward(product, make_goal(product, attributes=SIX, goal_options=("sunflowers", "large")), 25.0,
                       {"color": "sunflowers", "size": "large"})  # fmt: skip
    assert human.total == 1.0  # human goals pass plain strings


def test_every_procedural_option_value_matches_as_a_pair_and_no_other_does() -> None:
    """Our catalog's synthetic goals score 1 for the right options under WebShop's pair quirk."""
    from rl4vlm_gym.envs.webshop.vocab import COLORS, EXTRA_OPTIONS, SIZES

    pools = [("color", tuple(COLORS)), *(("size", values) for values in SIZES.values()), *EXTRA_OPTIONS.values()]
    for name, values in pools:
        for wanted in values:
            for chosen in values:
                score = token_set_ratio(normalize_color(chosen), normalize_color((name, wanted)))
                assert (score > 85) == (chosen == wanted), (name, wanted, chosen, score)


# -- title nouns: spaCy's en_core_web_sm, or the approximation --------------------------------------


@needs_model
def test_title_nouns_are_spacys_noun_and_propn_tokens() -> None:
    assert nouns.title_nouns("Sunny Hair Conditioner with Argan Oil") == ("hair", "conditioner", "argan", "oil")
    assert nouns.title_nouns("Gentle Face Cream", "face cream") == ("face", "cream")  # the product type is not used
    assert nouns.tagger() == "spacy:{}=={}".format(*nouns._installed_model())  # type: ignore[str-format]


@needs_model
def test_title_nouns_equal_those_of_the_whole_pipeline_webshop_loads() -> None:
    # Tags that the parser (kept) changes: "Sound" is a verb here, while a pipeline without it says PROPN.
    title = "Moami Wireless Headphones Noise Cancelling Bluetooth 5.3 Built In Microphone, Studio Sound"
    assert nouns.title_nouns(title) == ("moami", "wireless", "headphones", "noise", "cancelling", "bluetooth",
                                        "microphone", "studio")  # fmt: skip
    titles = [title] + [p.title for p in procedural_shop(1, 0).catalog.products[:80]]
    whole = [tuple(t.text.lower() for t in webshop_nlp()(x) if t.pos_ in ("PNOUN", "NOUN", "PROPN")) for x in titles]
    assert [nouns.title_nouns(x) for x in titles] == whole  # one at a time
    nouns._TAGGED.clear()
    nouns.tag_titles(titles[::-1])  # in one batch, as the decision facts tag a page's products
    assert [nouns._TAGGED[x] for x in titles] == whole


@needs_model
def test_the_default_reward_uses_spacys_nouns_and_the_corrected_one_the_approximation() -> None:
    # spaCy tags "Sunny" an adjective: no goal noun is in the towel's title, so the type factor is 0.
    # The approximation keeps "sunny" (1 of 5 words): 0.2, not above 0.2, and no query or category match: 0.5.
    goal_product = make_product(name="Sunny Hair Conditioner with Argan Oil")
    towel = make_product("B000000002", name="Sunny Beach Towel", query="beach towel",
                         product_category="Home & Kitchen › Bath › Towels")  # fmt: skip
    goal = make_goal(goal_product)
    original = get_reward(towel, goal, 25.0, {"color": "navy blue", "size": "large"})
    assert (original.title_score, original.r_type, original.total) == (0.0, 0.0, 0.0)
    corrected = get_reward(towel, goal, 25.0, {"color": "navy blue", "size": "large"}, scorer="corrected")
    assert (corrected.title_score, corrected.r_type) == (0.2, 0.5)


@pytest.fixture
def no_spacy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as if spaCy were not installed."""
    monkeypatch.setitem(sys.modules, "spacy", None)  # find_spec() then finds nothing
    nouns._installed_model.cache_clear()
    yield
    monkeypatch.undo()
    nouns._installed_model.cache_clear()


def test_without_spacy_the_approximation_scores_and_says_so(no_spacy: None) -> None:
    assert nouns.tagger() == nouns.APPROXIMATION
    assert nouns.title_nouns("Sunny Hair Conditioner with Argan Oil") == ("sunny", "hair", "conditioner", "argan", "oil")
    assert nouns.title_nouns("Lumora Face Cream Vitamin C", "face cream") == ("face", "cream")  # the known type
    product = make_product(name="Acme Shampoo Gift Set Box Deluxe Edition")
    bought = make_product("B000000002", query="conditioner")
    r = get_reward(bought, make_goal(product), 25.0, {"color": "navy blue", "size": "large"})
    # goal words: acme, shampoo, gift, box, deluxe, edition ("set" is a stop word); 2 of 6 in the title
    assert r.category_match and r.title_score == pytest.approx(2 / 6) and r.r_type == 1.0


def test_the_protocol_names_the_noun_tagger(no_spacy: None) -> None:
    from rl4vlm_gym.harness.suite import Suite

    data = {"name": "s", "axis": "smoke", "tasks": [{"name": "w", "env": "rl4vlm/WebShop-v1", "seeds": [1]}]}
    without = Suite.from_dict(data).protocol()
    assert without["env_facts"] == {"w": {"title_nouns": nouns.APPROXIMATION}}
    corrected = dict(data, tasks=[{"name": "w", "env": "rl4vlm/WebShop-v1", "seeds": [1],
                                   "kwargs": {"reward_variant": "webshop-corrected"}}])  # fmt: skip
    assert Suite.from_dict(corrected).protocol()["env_facts"] == {"w": {"title_nouns": nouns.APPROXIMATION}}


@needs_model
def test_runs_scored_by_spacy_and_by_the_approximation_never_share_a_protocol_hash() -> None:
    from rl4vlm_gym.harness.suite import Suite

    data = {"name": "s", "axis": "smoke", "tasks": [{"name": "w", "env": "rl4vlm/WebShop-v1", "seeds": [1]}]}
    with_model = Suite.from_dict(data)
    assert with_model.protocol()["env_facts"] == {"w": {"title_nouns": nouns.tagger()}}
    nouns._installed_model.cache_clear()
    saved = sys.modules.get("spacy")
    sys.modules["spacy"] = None  # type: ignore[assignment]
    try:
        without = Suite.from_dict(data).protocol_hash()
    finally:
        if saved is None:
            del sys.modules["spacy"]
        else:
            sys.modules["spacy"] = saved
        nouns._installed_model.cache_clear()
    assert without != with_model.protocol_hash()


def test_buying_the_goals_product_tags_no_title_until_title_score_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The goal's own product (the oracle's purchase, and the env's check of its plan at every reset)
    has the goal's title and query: the type factor is 1 whatever the nouns are, so they (spaCy's
    model, seconds to load in a new process) are tagged only when ``title_score`` is read, and then
    give the score the whole computation gives."""
    shop = procedural_shop(2, 0)
    tagged: list[tuple[Any, ...]] = []
    real = reward._nouns
    monkeypatch.setattr(reward, "_nouns", lambda *args: tagged.append(args) or real(*args))
    lazy = 0
    for goal in shop.goals[:150]:
        product = shop.catalog.by_asin[goal.asin]
        for scorer in SCORERS:
            tagged.clear()
            r = get_reward(product, goal, product.price, dict(goal.goal_options), scorer)  # type: ignore[arg-type]
            lazy += not tagged
            nouns_ = real(goal.name, goal.product_type, scorer)
            assert r.r_type == 1.0 and r.title_score == (len(set(nouns_)) / len(nouns_) if nouns_ else 0.2)
            assert tagged or r.total == 1.0  # every goal of level 2 is met by its own product and options
    assert lazy > 250, f"only {lazy} of 300 purchases of the goal's product left the nouns untagged"


def test_a_noun_repeated_counts_once_in_the_title_score_and_eleven_times_lowers_the_type_factor() -> None:
    """With one noun 11 times (the approximation takes the known product type's words), even the goal's
    own title scores 1/11, under 0.1: the type factor is 0.1, so the nouns cannot be left for later."""
    product = make_product(name="Acme Oil", product_type=" ".join(["oil"] * 11))
    goal = make_goal(product)
    r = get_reward(product, goal, 25.0, {"color": "navy blue", "size": "large"}, scorer="corrected")
    assert (r.title_score, r.r_type, r.total) == (pytest.approx(1 / 11), 0.1, pytest.approx(0.1))
    twice = make_product(name="Acme Oil", product_type="oil oil")  # under 11: left for later, then 1/2
    r = get_reward(twice, make_goal(twice), 25.0, {"color": "navy blue", "size": "large"}, scorer="corrected")
    assert (r.title_score, r.r_type, r.total) == (0.5, 1.0, 1.0)


def test_the_goals_own_title_without_nouns_and_no_query_or_category_match_pays_half() -> None:
    """The same title on both sides is a type factor of 1 only with a query or category match: a
    title without nouns scores 0.2, not above 0.2 (the approximation drops stop words and colours)."""
    product = make_product(name="The Blue And Red", product_category="Home › Decor")
    goal = make_goal(product, query="lamp", product_category="Garden › Tools")
    r = get_reward(product, goal, 25.0, {"color": "navy blue", "size": "large"}, scorer="corrected")
    assert (r.query_match, r.category_match, r.title_score, r.r_type) == (False, False, 0.2, 0.5)


# -- against a transcription of WebShop's get_reward -------------------------------------------------


@functools.cache
def webshop_nlp() -> Any:
    """The model's whole pipeline, as WebShop loads it (ours leaves out parts that cannot change POS tags)."""
    import spacy

    return spacy.load(nouns._installed_model()[0])  # type: ignore[index]


@functools.cache
def webshop_nouns(name: str) -> list[str]:
    """WebShop's ``[t.text.lower() for t in nlp(name) if t.pos_ in ("PNOUN", "NOUN", "PROPN")]`` with the
    whole pipeline; kept per title (the pipeline gives a title the same tags every time), as goals and
    products repeat across purchases. Callers only read the list."""
    return [t.text.lower() for t in webshop_nlp()(name) if t.pos_ in ("PNOUN", "NOUN", "PROPN")]


def webshop_get_reward(purchased: dict[str, Any], goal: dict[str, Any], price: float, options: dict[str, str]) -> float:
    """WebShop master's ``get_type_reward`` + ``get_attribute_reward`` + ``get_option_reward`` +
    ``get_reward``, line by line on WebShop's dicts (spaCy's model and thefuzz's matching)."""
    query_match = purchased["query"] == goal["query"]
    p_cat = [x.strip() for x in purchased["product_category"].split("›")]
    g_cat = [x.strip() for x in goal["product_category"].split("›")]
    category_match = len(set(p_cat) & set(g_cat)) >= 2
    p_type = webshop_nouns(purchased["name"])
    g_type = webshop_nouns(goal["name"])
    title_score = 0.2 if len(g_type) == 0 else len(set(p_type) & set(g_type)) / len(g_type)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    r_price = price <= goal["price_upper"]
    n_att = 0
    for g_attr in goal["attributes"]:
        matched = any(token_set_ratio(p_attr, g_attr) > 85 for p_attr in purchased["Attributes"])
        if not matched and (g_attr in purchased["Title"].lower() or g_attr in " ".join(purchased["BulletPoints"]).lower()
                            or g_attr in purchased["Description"].lower()):  # fmt: skip
            matched = True
        n_att += matched
    goal_options = goal["goal_options"].items() if isinstance(goal["goal_options"], dict) else goal["goal_options"]
    bought = [normalize_color(o) for o in options.values()]
    wanted = [normalize_color(o) for o in goal_options]
    n_opt = sum(1 for g in wanted if any(token_set_ratio(p, g) > 85 for p in bought))
    total = (n_att + n_opt + r_price) / (len(goal["attributes"]) + len(goal["goal_options"]) + 1)
    return total * r_type


def as_webshop_product(p: Product) -> dict[str, Any]:
    return {"name": p.title, "Title": p.title, "query": p.query, "product_category": p.product_category,
            "Attributes": list(p.attributes), "BulletPoints": list(p.bullet_points), "Description": p.description}  # fmt: skip


def as_webshop_goal(g: Goal) -> dict[str, Any]:
    return {"name": g.name, "query": g.query, "product_category": g.product_category, "attributes": list(g.attributes),
            "goal_options": dict(g.goal_options) if isinstance(g.goal_options, dict) else list(g.goal_options),
            "price_upper": g.price_upper}  # fmt: skip


def attribute_branches(product: Product, goal: Goal) -> list[str]:
    """Which test of WebShop's ``get_attribute_reward`` decides each goal attribute, in its order: a product
    attribute's fuzzy match, then the title, the bullet points, the description (its fallbacks), or none."""
    branches = []
    for wanted in goal.attributes:
        if any(token_set_ratio(have, wanted) > 85 for have in product.attributes):
            branches.append("attribute")
        elif wanted in product.title.lower():
            branches.append("title")
        elif wanted in " ".join(product.bullet_points).lower():
            branches.append("bullet points")
        elif wanted in product.description.lower():
            branches.append("description")
        else:
            branches.append("none")
    return branches


@pytest.mark.slow
@needs_model
def test_the_default_reward_equals_webshops_get_reward_on_400_purchases() -> None:
    shop = procedural_shop(2, 0)
    rng = np.random.default_rng(17)
    products = shop.catalog.products
    differ, kinds, branches = [], set(), collections.Counter()
    purchases = []
    for i in range(400):
        goal = shop.goals[int(rng.integers(len(shop.goals)))]
        # the goal's product, a look-alike of its type, or any product
        pick = i % 3
        same_type = [p for p in products if p.product_type == goal.product_type]
        product = (shop.catalog.by_asin[goal.asin] if pick == 0 else
                   same_type[int(rng.integers(len(same_type)))] if pick == 1 else products[int(rng.integers(len(products)))])  # fmt: skip
        chosen = {name: values[int(rng.integers(len(values)))] for name, values in product.options.items()}
        purchases.append((goal, product, chosen))
    # Our titles in batches, as the decision facts tag them (WebShop's reference tags one at a time).
    nouns._TAGGED.clear()
    nouns.tag_titles(title for goal, product, _ in purchases for title in (goal.name, product.title))
    for goal, product, chosen in purchases:
        # Each purchase also as WebShop's scraped products often are: without items_ins_v2 attributes
        # (DUMMY_ATTR), then without bullet points too. A procedural product states its attributes in
        # its attribute list, so only these reach get_attribute_reward's title, bullet-point and
        # description fallbacks (the description's only once the bullet points are gone).
        bare = dataclasses.replace(product, attributes=("DUMMY_ATTR",))
        for bought in (product, bare, dataclasses.replace(bare, bullet_points=())):
            ours = get_reward(bought, goal, bought.price, chosen)
            theirs = webshop_get_reward(as_webshop_product(bought), as_webshop_goal(goal), bought.price, chosen)
            kinds.add(ours.r_type)
            branches.update(attribute_branches(bought, goal))
            if ours.total != theirs:
                differ.append((goal.asin, bought.asin, bought.attributes, bought.bullet_points, chosen, ours.total, theirs))
    assert not differ, differ[:5]
    assert kinds >= {0.0, 1.0}  # both ends of the type factor were exercised
    # every branch of the attribute term was exercised, each in many purchases
    assert min(branches[b] for b in ("attribute", "title", "bullet points", "description", "none")) >= 20, branches


# -- thresholds: at, just above, just below ----------------------------------------------------------


@pytest.mark.parametrize(("price", "paid"), [(29.99, True), (30.0, True), (30.01, False)])
def test_price_cap_is_inclusive(price: float, paid: bool) -> None:
    product = make_product()
    r = get_reward(product, make_goal(product, price_upper=30.0), price, {"color": "navy blue", "size": "large"})
    assert r.r_price is paid, f"price {price} vs cap 30.0: WebShop's test is price <= cap (a '<' would refuse the cap itself)"
    assert r.total == pytest.approx(1.0 if paid else 3 / 4)


def typed(name: str) -> tuple[Product, str]:
    return make_product(name=name, product_type=name), name


@pytest.mark.parametrize(
    ("goal_type", "bought_type", "score", "r_type"),
    [
        ("a b c d e f g h i j k", "a", 1 / 11, 0.1),  # below 0.1
        ("a b c d e f g h i j", "a", 0.1, 0.5),  # at 0.1: not below it; no match either
        ("a b c d e f", "a", 1 / 6, 0.5),  # below 0.2
        ("a b c d e", "a", 0.2, 0.5),  # at 0.2: not above it
        ("a b c d", "a", 0.25, 1.0),  # above 0.2
        ("a b c d", "z", 0.0, 0.0),  # no shared noun
    ],
)
def test_type_factor_thresholds_of_title_score(goal_type: str, bought_type: str, score: float, r_type: float) -> None:
    # Distinct queries and category paths, so only title_score decides (the corrected scorer's nouns
    # are the product types' words, so the score is set exactly).
    goal_product = make_product(product_type=goal_type, query="q1", product_category="A › B › C")
    bought = make_product("B000000002", product_type=bought_type, query="q2", product_category="X › Y › Z")
    r = get_reward(bought, make_goal(goal_product), 25.0, {"color": "navy blue", "size": "large"}, scorer="corrected")
    assert r.title_score == score
    assert r.r_type == r_type, (
        f"title_score {score}: WebShop keeps 1.0 only for title_score > 0.2 (a '>=' would pay 1.0 at exactly 0.2), "
        f"0.1 below 0.1 and 0 at 0; got r_type {r.r_type}"
    )


@pytest.mark.parametrize(("bought_path", "match"), [("A › Q › R", False), ("A › B › R", True), ("A › B › C", True)])
def test_category_match_needs_two_shared_parts(bought_path: str, match: bool) -> None:
    goal_product = make_product(product_type="a b c d e", query="q1", product_category="A › B › C")
    bought = make_product("B000000002", product_type="a", query="q2", product_category=bought_path)
    r = get_reward(bought, make_goal(goal_product), 25.0, {}, scorer="corrected")
    assert r.category_match is match and r.r_type == (1.0 if match else 0.5)  # title_score 0.2 alone is no match


def test_query_match_alone_keeps_the_type_factor_at_0_2() -> None:
    goal_product = make_product(product_type="a b c d e", query="q", product_category="A › B › C")
    bought = make_product("B000000002", product_type="a", query="q", product_category="X › Y › Z")
    assert get_reward(bought, make_goal(goal_product), 25.0, {}, scorer="corrected").r_type == 1.0


@pytest.mark.parametrize(("have", "wanted", "ratio", "match"), [
    ("lightweightness", "lightweight", 85, False),  # at 85: not above it
    ("rechargeableness", "rechargeable", 86, True),  # just above
    ("rechargeable", "rechargeable", 100, True),
])  # fmt: skip
def test_attribute_fuzzy_match_is_above_85(have: str, wanted: str, ratio: int, match: bool) -> None:
    assert token_set_ratio(have, wanted) == ratio
    product = make_product(attributes=[have])  # title, bullets and description do not hold the words
    r = get_reward(product, make_goal(product, attributes=(wanted,), goal_options=()), 25.0, {})
    assert (r.r_att == 1.0) is match, f"token_set_ratio {ratio}: a match needs > 85"


@pytest.mark.parametrize(("chosen", "wanted", "ratio", "match"), [
    ("comfortableness", "comfortable", 85, False),
    ("rechargeableness", "rechargeable", 86, True),
])  # fmt: skip
def test_option_fuzzy_match_is_above_85(chosen: str, wanted: str, ratio: int, match: bool) -> None:
    assert token_set_ratio(normalize_color(chosen), normalize_color(wanted)) == ratio
    product = make_product()
    r = get_reward(product, make_goal(product, goal_options=(wanted,)), 25.0, {"style": chosen})
    assert (r.r_option == 1.0) is match, f"token_set_ratio {ratio}: a match needs > 85"


# -- WebShop's files: empty attributes; the oracle's choice among equal options -----------------------


def test_empty_attributes_stay_empty_and_missing_ones_are_dummy() -> None:
    records = [{"asin": a, "name": a, "pricing": "$1.00"} for a in ("B000000001", "B000000002", "B000000003")]
    attributes = {"B000000001": {"attributes": []}, "B000000002": {"instruction": "x"}}
    p1, p2, p3 = load_products(records, attributes, {}, np.random.default_rng(0), "t").products
    assert p1.attributes == () and p2.attributes == ("DUMMY_ATTR",) and p3.attributes == ("DUMMY_ATTR",)
    with pytest.raises(ValueError, match=r"B000000001.*'attributes' is a str, expected a list"):
        load_products(records[:1], {"B000000001": {"attributes": "abc"}}, {}, np.random.default_rng(0), "t")


def test_the_oracle_picks_the_exact_value_among_equal_fuzzy_scores(tmp_path: Path) -> None:
    # "light blue", "navy blue" and "blue" all normalise to "blue": a tie at 100 for the goal option "blue".
    colors = [{"value": v} for v in ("Light Blue", "Navy Blue", "Blue")]
    record = {"asin": "B000000001", "name": "Acme Rain Jacket", "pricing": "$20.00", "query": "jacket",
              "product_category": "Clothing › Coats", "customization_options": {"Color": colors},
              "full_description": "A light jacket.", "small_description": [], "images": [""], "category": "fashion"}  # fmt: skip
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps([record]))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps({"B000000001": {"attributes": ["waterproof"]}}))
    human = {"B000000001": [{"instruction": "i want a waterproof rain jacket in blue", "instruction_attributes":
                             ["waterproof"], "instruction_options": ["blue"]}]}  # fmt: skip
    (tmp_path / "items_human_ins.json").write_text(json.dumps(human))
    env = gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=str(tmp_path), obs_mode="text")
    env.reset(seed=0)
    actions = []
    while env.unwrapped.route.page != "done":
        actions.append(env.unwrapped.oracle_action())
        *_, info = env.step(actions[-1])
    env.close()
    assert "click[blue]" in actions and "click[light blue]" not in actions, actions
    assert info["success"]


def test_the_reward_variant_chooses_the_scorer_in_the_env(tmp_path: Path) -> None:
    # A synthetic goal of WebShop's files asking for colour "sunflowers": the env pays WebShop's
    # 0.889-like partial score by default, and 1 with the corrected variant.
    colors = [{"value": "Sunflowers"}, {"value": "Red"}]
    record = {"asin": "B000000001", "name": "Acme Garden Umbrella", "pricing": "$20.00", "query": "umbrella",
              "product_category": "Garden › Umbrellas", "customization_options": {"Color": colors},
              "full_description": "A tilting umbrella.", "small_description": [], "images": [""], "category": "garden"}  # fmt: skip
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps([record]))
    ins = {"B000000001": {"attributes": ["tilting"], "instruction": "i want a tilting umbrella", "instruction_attributes": ["tilting"]}}
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps(ins))
    (tmp_path / "items_human_ins.json").write_text("{}")
    plan = ["search[acme garden umbrella]", "click[b000000001]", "click[sunflowers]", "click[buy now]"]
    scores = {}
    for variant in ("webshop", "webshop-corrected"):
        env = gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=str(tmp_path), goals="synthetic", obs_mode="text",
                       reward_variant=variant)  # fmt: skip
        env.reset(seed=next(s for s in range(50) if env.reset(seed=s)[0]["mission"].find("sunflowers") > 0))
        total = sum(float(env.step(action)[1]) for action in plan)
        scores[variant] = (total, env.unwrapped.reward_terms.r_option)
        env.close()
    assert scores["webshop"] == (pytest.approx(2 / 3), 0.0)  # (tilting + price) / (1 + 1 + 1): the colour never matches
    assert scores["webshop-corrected"] == (1.0, 1.0)
