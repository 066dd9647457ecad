"""WebShop's reward for a purchase, term by term (master branch, ``engine/goal.py: get_reward``).

.. math::

    r = \\frac{n_{att} + n_{opt} + [\\text{price} \\le \\text{cap}]}{|att| + |opt| + 1} \\cdot r_{type}

- ``n_att``: goal attributes matched by a product attribute (``token_set_ratio > 85``) or found
  as a substring of the title, the bullet points or the description;
- ``n_opt``: goal options matched by a chosen option (``token_set_ratio > 85`` after
  ``normalize_color``);
- ``r_type`` in {0, 0.1, 0.5, 1}: whether the product is the goal's kind of product, from the
  shared scrape query, the shared category path and the overlap of title nouns.

Fuzzy matching is RapidFuzz's ``token_set_ratio`` with thefuzz's processing (ASCII only,
lower-cased, non-alphanumerics as spaces, rounded), which is what ``thefuzz`` itself runs.
Title nouns: WebShop tags them with spaCy's ``en_core_web_sm``, a model that cannot be fetched at
run time here. For procedural products the product type is known and its words are the nouns;
for real products we keep the title's words that are not stop words, numbers, units or colours,
a documented approximation of spaCy's noun filter (it errs towards more words, which lowers
``title_score`` only when titles share few words).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from rl4vlm_gym.envs.webshop.catalog import Product
from rl4vlm_gym.envs.webshop.goals import Goal

__all__ = ["COLOR_SET", "Reward", "get_reward", "normalize_color", "title_nouns", "token_set_ratio"]

# The colour names of WebShop's normalize.py, checked in order as substrings ("light blue" comes
# before "blue", so it is kept whole). The reference notes do not list WebShop's set verbatim;
# this is our list of 100 names in the same spirit.
COLOR_SET = (
    "alice blue", "dusty rose", "indigo", "light blue", "sea green", "almond", "ecru", "ivory", "light brown",
    "sepia", "amber", "emerald", "jade", "light green", "silver", "amethyst", "espresso", "jet black",
    "light grey", "sky blue", "apricot", "fawn", "khaki", "light pink", "slate", "aqua", "fuchsia", "lavender",
    "light purple", "tan", "baby blue", "gold", "lemon", "light yellow", "taupe", "beige", "hot pink", "lilac",
    "lime", "teal", "black", "hunter green", "magenta", "mint", "turquoise", "blush", "navy blue", "mahogany",
    "mustard", "violet", "bronze", "dark blue", "maroon", "neon green", "wine", "brown", "dark brown", "mauve",
    "off white", "white", "burgundy", "dark green", "olive", "orange", "yellow", "charcoal", "dark grey",
    "orchid", "peach", "rose gold", "chocolate", "denim", "pink", "plum", "rust", "coral", "forest green",
    "purple", "raspberry", "salmon", "cream", "grey", "gray", "red", "sand", "crimson", "cyan", "navy", "rose",
    "scarlet", "copper", "blue", "green", "ruby", "camel", "multicolor", "clear", "nude", "caramel", "mocha",
)  # fmt: skip

_STOP = frozenset(
    "a an and are as at be but by for from if in into is it its of on or such that the their then there these they "
    "this to was will with without your you our new pack set pcs piece pieces count inch inches oz fl ml lb lbs "
    "cm mm ft size small medium large x xl xxl s m l women men womens mens kids unisex".split()
)
_WORD = re.compile(r"[a-z][a-z'-]+")


def token_set_ratio(a: Any, b: Any) -> int:
    """``thefuzz.fuzz.token_set_ratio``: non-strings are ``str()``-ed, text ASCII-only, rounded."""
    a, b = str(a).encode("ascii", "ignore").decode(), str(b).encode("ascii", "ignore").decode()
    return round(fuzz.token_set_ratio(a, b, processor=_full_process))


def _full_process(text: str) -> str:
    # thefuzz's full_process: non-alphanumerics become spaces, lower-case, trimmed.
    return re.sub(r"(?ui)\W", " ", text).lower().strip()


def normalize_color(value: Any) -> Any:
    """WebShop's ``normalize_color``: the first colour of COLOR_SET found ``in`` the value.

    As in WebShop, ``in`` is a substring test for strings and a membership test for the
    ``(name, value)`` tuples synthetic goals pass."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def title_nouns(title: str, product_type: str | None = None) -> list[str]:
    """The words standing in for spaCy's NOUN/PROPN tokens of a title (see the module docstring)."""
    if product_type is not None:
        return product_type.lower().split()
    words = _WORD.findall(title.lower())
    return [w for w in words if w not in _STOP and not any(w == c for c in COLOR_SET)]


@dataclass(frozen=True)
class Reward:
    """The reward and its terms (WebShop's ``verbose=True`` output)."""

    total: float
    r_type: float
    r_att: float
    w_att: float
    r_option: float
    w_option: float
    r_price: bool
    w_price: float
    query_match: bool
    category_match: bool
    title_score: float


def _type_reward(product: Product, goal: Goal) -> tuple[float, bool, bool, float]:
    query_match = product.query == goal.query
    purchased_path = {c.strip() for c in product.product_category.split("›")}
    goal_path = {c.strip() for c in goal.product_category.split("›")}
    category_match = len(purchased_path & goal_path) >= 2
    goal_nouns = title_nouns(goal.name, goal.product_type)
    if goal_nouns:
        bought = set(title_nouns(product.title, product.product_type if goal.product_type else None))
        title_score = len(bought & set(goal_nouns)) / len(goal_nouns)
    else:
        title_score = 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def _attribute_matches(product: Product, goal: Goal) -> int:
    title, bullets, description = product.title.lower(), " ".join(product.bullet_points).lower(), product.description.lower()
    matches = 0
    for wanted in goal.attributes:
        if any(token_set_ratio(have, wanted) > 85 for have in product.attributes):
            matches += 1
        elif wanted in title or wanted in bullets or wanted in description:
            matches += 1
    return matches


def _option_matches(chosen: Mapping[str, str], goal_options: Mapping[str, str] | Sequence[str]) -> int:
    wanted = list(goal_options.items()) if isinstance(goal_options, Mapping) else list(goal_options)
    bought = [normalize_color(v) for v in chosen.values()]
    goals = [normalize_color(g) for g in wanted]
    return sum(1 for g in goals if any(token_set_ratio(p, g) > 85 for p in bought))


def get_reward(product: Product, goal: Goal, price: float, chosen: Mapping[str, str]) -> Reward:
    """WebShop's reward for buying ``product`` at ``price`` with the ``chosen`` options."""
    r_type, query_match, category_match, title_score = _type_reward(product, goal)
    n_att = _attribute_matches(product, goal)
    n_opt = _option_matches(chosen, goal.goal_options)
    r_price = price <= goal.price_upper
    n_goal_att, n_goal_opt = len(goal.attributes), len(goal.goal_options)
    denominator = n_goal_att + n_goal_opt + 1
    total = (n_att + n_opt + int(r_price)) / denominator * r_type
    return Reward(
        total=total,
        r_type=r_type,
        r_att=n_att / n_goal_att if n_goal_att else 0.0,
        w_att=n_goal_att / denominator,
        r_option=n_opt / n_goal_opt if n_goal_opt else 0.0,
        w_option=n_goal_opt / denominator,
        r_price=r_price,
        w_price=1 / denominator,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
    )
