"""WebShop's reward for a purchase, term by term (master branch, ``engine/goal.py: get_reward``).

.. math::

    r = \\frac{n_{att} + n_{opt} + [\\text{price} \\le \\text{cap}]}{|att| + |opt| + 1} \\cdot r_{type}

- ``n_att``: goal attributes matched by a product attribute (``token_set_ratio > 85``) or found
  as a substring of the title, the bullet points or the description;
- ``n_opt``: goal options matched by a chosen option (``token_set_ratio > 85`` after
  ``normalize_color``);
- ``r_type`` in {0, 0.1, 0.5, 1}: whether the product is the goal's kind of product, from the
  shared scrape query, the shared category path (2 parts or more) and ``title_score``, the share
  of the goal title's nouns found among the bought title's nouns (``> 0.2``; ``< 0.1`` gives 0.1,
  ``0`` gives 0).

The ``original`` scorer is WebShop's, quirks included: a synthetic goal's options reach the
option matching as ``(name, value)`` pairs, which ``normalize_color`` leaves alone unless the value
is exactly a listed colour and which ``token_set_ratio`` compares as the text of the pair, so a
goal colour "sunflowers" never matches the chosen "sunflowers" (normalised to "sunflower"); and
title nouns come from spaCy's ``en_core_web_sm`` when a model is installed (``nouns.py``; else
an approximation, named in each run's protocol). The ``corrected`` scorer compares plain option
values, colour-normalised on both sides, and takes title nouns from the known product type (the
approximation), so it never depends on spaCy.

Fuzzy matching is RapidFuzz's ``token_set_ratio`` with thefuzz's processing (code points 128-255
dropped, non-word characters as spaces, lower-cased, rounded), which is what ``thefuzz`` runs.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from rapidfuzz import fuzz

from rl4vlm_gym.envs.webshop.catalog import Product
from rl4vlm_gym.envs.webshop.goals import Goal
from rl4vlm_gym.envs.webshop.normalize import COLOR_SET, normalize_color
from rl4vlm_gym.envs.webshop.nouns import approximate_nouns, title_nouns

__all__ = [
    "COLOR_SET", "MATCH", "SCORERS", "Reward", "get_reward", "goal_option_list", "has_every_attribute", "normalize_color", "option_score",
    "title_nouns", "token_set_ratio",
]  # fmt: skip

SCORERS = ("original", "corrected")
MATCH = 85  # a fuzzy score above this is a match (attributes and options)
_DROP_LATIN1 = dict.fromkeys(range(128, 256))  # thefuzz's "asciidammit" drops only these


def token_set_ratio(a: Any, b: Any) -> int:
    """``thefuzz.fuzz.token_set_ratio``: non-strings are ``str()``-ed, code points 128-255 dropped, rounded."""
    a, b = str(a).translate(_DROP_LATIN1), str(b).translate(_DROP_LATIN1)
    return round(fuzz.token_set_ratio(a, b, processor=_full_process))


def _full_process(text: str) -> str:
    # thefuzz's full_process: non-word characters become spaces, lower-case, trimmed.
    return re.sub(r"(?ui)\W", " ", text).lower().strip()


_Nouns = tuple[str, "str | None", str]  # the arguments of _nouns: a title, its product type, the scorer


@dataclass(frozen=True)
class Reward:
    """The reward and its terms (WebShop's ``verbose=True`` output).

    ``title_score`` is computed when first read if the total did not need it (see ``_type_reward``):
    tagging a title loads spaCy's model, seconds in a new process, for a number nobody may ask for."""

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
    _title: float | _Nouns = field(repr=False)
    """The title score, or the ``_nouns`` arguments of both titles (they are the same) that decide it."""

    @property
    def title_score(self) -> float:
        """The share of the goal title's nouns among the bought title's nouns (0.2 when it has none)."""
        if isinstance(self._title, float):
            return self._title
        nouns = _nouns(*self._title)  # both titles' nouns: the share is that of distinct ones
        return len(set(nouns)) / len(nouns) if nouns else 0.2

    def __repr__(self) -> str:
        terms = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"Reward({terms}, title_score={self.title_score!r})"


def _nouns(title: str, product_type: str | None, scorer: str) -> tuple[str, ...]:
    return approximate_nouns(title, product_type) if scorer == "corrected" else title_nouns(title, product_type)


def _under_eleven_alike(title: str, product_type: str | None) -> bool:
    """Whether no noun can occur 11 times among ``title``'s nouns (a title score under 1/10 needs one
    that does). Nouns are disjoint pieces of the text that start at different characters, each
    lower-casing to the noun's first letter; with single spaces only, no piece starts with one."""
    for text in (title, product_type or ""):
        if " ".join(text.split()) != text:
            return False
        if max(Counter(c.lower()[:1] for c in text if c != " ").values(), default=0) > 10:
            return False
    return True


def _type_reward(product: Product, goal: Goal, scorer: str) -> tuple[float, bool, bool, float | _Nouns]:
    query_match = product.query == goal.query
    purchased_path = {c.strip() for c in product.product_category.split("›")}
    goal_path = {c.strip() for c in goal.product_category.split("›")}
    category_match = len(purchased_path & goal_path) >= 2
    goal_title: _Nouns = (goal.name, goal.product_type, scorer)
    # the approximation may use product types only when both products have one
    bought_title: _Nouns = (product.title, product.product_type if goal.product_type else None, scorer)
    if bought_title == goal_title and (query_match or category_match) and _under_eleven_alike(goal.name, goal.product_type):
        # The same nouns on both sides, none 11 times: a title score of at least 1/10 (1 without repeats,
        # 0.2 without nouns), so a type factor of 1 whatever the nouns are; they (spaCy's model, seconds
        # to load in a new process) are left until title_score is read. The oracle buys the goal's own
        # product, whose title and query are the goal's.
        return 1.0, query_match, category_match, goal_title
    goal_nouns = _nouns(*goal_title)
    if goal_nouns:
        bought = set(_nouns(*bought_title))
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
    return sum(1 for wanted in goal.attributes if _has_attribute(product, wanted))


def has_every_attribute(product: Product, goal: Goal) -> bool:
    """Whether ``product`` has every goal attribute (the attribute term is full); stops at the first it lacks."""
    return all(_has_attribute(product, wanted) for wanted in goal.attributes)


def _has_attribute(product: Product, wanted: str) -> bool:
    # The text first: a substring test is far cheaper than the fuzzy match, and either counts.
    if wanted in product.title.lower() or wanted in " ".join(product.bullet_points).lower() or wanted in product.description.lower():
        return True
    return _fuzzy_attribute(tuple(product.attributes), wanted)


@functools.lru_cache(maxsize=1 << 16)
def _fuzzy_attribute(attributes: tuple[str, ...], wanted: str) -> bool:
    # Goals of a catalog share a small vocabulary of attributes, and decision facts test many products per page.
    return any(token_set_ratio(have, wanted) > MATCH for have in attributes)


def goal_option_list(goal_options: Mapping[str, str] | Sequence[str], scorer: str = "original") -> list[Any]:
    """The goal options as the option matching sees them: WebShop passes a synthetic goal's
    ``dict.items()``, so (name, value) pairs; the corrected scorer passes the values."""
    if isinstance(goal_options, Mapping):
        return list(goal_options.values()) if scorer == "corrected" else list(goal_options.items())
    return list(goal_options)


def option_score(chosen: str, wanted: Any) -> int:
    """How well a chosen option value meets one goal option (from :func:`goal_option_list`)."""
    return token_set_ratio(normalize_color(chosen), normalize_color(wanted))


def _option_matches(chosen: Mapping[str, str], goal_options: Mapping[str, str] | Sequence[str], scorer: str) -> int:
    wanted = goal_option_list(goal_options, scorer)
    return sum(1 for g in wanted if any(option_score(p, g) > MATCH for p in chosen.values()))


def get_reward(
    product: Product, goal: Goal, price: float, chosen: Mapping[str, str], scorer: str = "original"
) -> Reward:
    """WebShop's reward for buying ``product`` at ``price`` with the ``chosen`` options.

    ``scorer="original"`` is WebShop's ``get_reward``; ``"corrected"`` compares plain option
    values and the known product types (see the module docstring)."""
    if scorer not in SCORERS:
        raise ValueError(f"scorer={scorer!r} is unknown; choose one of {SCORERS}")
    r_type, query_match, category_match, title = _type_reward(product, goal, scorer)
    n_att = _attribute_matches(product, goal)
    n_opt = _option_matches(chosen, goal.goal_options, scorer)
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
        _title=title,
    )
