"""Shopping goals as WebShop builds them (``web_agent_site/engine/goal.py``), but seeded.

Synthetic goals: one per combination of a product's option values, for every product with an
``items_ins_v2`` instruction ("Find me sulfate free shampoo with color: blue, and size: 16 fl
oz, and price lower than 40.00 dollars"). Human goals: one per crowd-sourced instruction of
``items_human_ins`` that names attributes. Both get WebShop's price cap: two of the first four
steps of ``PRICE_RANGE`` above the product's price are drawn and the larger one is the cap.
WebShop draws caps from the unseeded global ``random`` and shuffles the goals with
``random.seed(233)``; here both come from the catalog's RNG, so one catalog seed fixes them all.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rl4vlm_gym.envs.webshop.catalog import Catalog, Product

__all__ = ["NO_PRICE_CAP", "PRICE_RANGE", "SPLITS", "Goal", "human_goals", "price_cap", "split", "synthetic_goals"]

PRICE_RANGE = tuple(range(10, 1000, 10))  # WebShop's [10, 20, ..., 990]
NO_PRICE_CAP = 1_000_000.0
# WebShop's standard splits of the shuffled goal list (baseline_models/env.py).
SPLITS = {"test": (0, 500), "eval": (500, 1500), "train": (1500, None), "all": (0, None)}


@dataclass(frozen=True)
class Goal:
    """One shopping task: what to buy, which options, under which price.

    ``goal_options`` is a mapping for synthetic goals (``{"color": "blue"}``) and a tuple of
    values for human goals (``("blue", "12 inch (pack of 1)")``), as in WebShop; the reward
    treats the two forms as WebShop's does.
    """

    asin: str
    instruction: str
    attributes: tuple[str, ...]
    goal_options: Mapping[str, str] | tuple[str, ...]
    price_upper: float
    name: str
    query: str
    category: str
    product_category: str
    product_type: str | None = None
    weight: float = 1.0


def price_cap(price: float, rng: np.random.Generator, enabled: bool = True) -> tuple[float, str]:
    """WebShop's price cap and instruction suffix for a product of ``price``."""
    candidates = [p for p in PRICE_RANGE if p > price][:4]
    if not enabled or len(candidates) < 2:
        return NO_PRICE_CAP, ""
    upper = float(max(rng.choice(candidates, 2, replace=False)))
    return upper, f", and price lower than {upper:.2f} dollars"


def _with_weights(goals: list[Goal]) -> list[Goal]:
    """WebShop's sampling weight: the mean over a goal's attributes of 1 / (goals naming it)."""
    counts = Counter(a for g in goals for a in g.attributes)
    return [replace(g, weight=sum(1.0 / counts[a] for a in g.attributes) / len(g.attributes)) for g in goals]


def _goal(product: Product, instruction: str, attributes: Sequence[str], options: Any, upper: float, weight: float = 1.0) -> Goal:
    return Goal(
        asin=product.asin,
        instruction=instruction,
        attributes=tuple(attributes),
        goal_options=options,
        price_upper=upper,
        name=product.title,
        query=product.query,
        category=product.category,
        product_category=product.product_category,
        product_type=product.product_type,
        weight=weight,
    )


def synthetic_goals(catalog: Catalog, rng: np.random.Generator, price_caps: bool = True) -> list[Goal]:
    """One goal per option combination of each product with a synthetic instruction."""
    drafts: list[tuple[Product, str, dict[str, str], float]] = []
    for product in catalog.products:
        if not product.instruction or not product.instruction_attributes:
            continue
        upper, price_text = price_cap(product.price, rng, price_caps)
        names = sorted(product.options)  # WebShop sorts the option names
        for combination in itertools.product(*(product.options[n] for n in names)):
            options = dict(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in options.items())
            option_text = f" with {option_text}" if option_text else ""
            drafts.append((product, f"{product.instruction}{option_text}{price_text}", options, upper))
    # _with_weights' weights, each goal made once with its weight (68,678 goals at level 4: replacing
    # each made goal took seconds); a product's goals share its attributes, hence their weight.
    counts = Counter(a for product, *_ in drafts for a in product.instruction_attributes)
    weights: dict[str, float] = {}
    goals = []
    for product, instruction, options, upper in drafts:
        attributes = product.instruction_attributes
        if product.asin not in weights:
            weights[product.asin] = sum(1.0 / counts[a] for a in attributes) / len(attributes)
        goals.append(_goal(product, instruction, attributes, options, upper, weights[product.asin]))
    return goals


def human_goals(catalog: Catalog, rng: np.random.Generator, price_caps: bool = True) -> list[Goal]:
    """One goal per human instruction that names at least one attribute."""
    goals: list[Goal] = []
    for product in catalog.products:
        for entry in product.human:
            attributes = entry.get("instruction_attributes") or ()
            if not attributes:
                continue
            upper, price_text = price_cap(product.price, rng, price_caps)
            instruction = str(entry.get("instruction", "")).strip(".") + price_text
            options = tuple(str(o) for o in entry.get("instruction_options") or ())
            goals.append(_goal(product, instruction, attributes, options, upper))
    return _with_weights(goals)


def split(goals: Sequence[Goal], name: str) -> Sequence[Goal]:
    """WebShop's standard split of the shuffled goals: test 0-499, eval 500-1499, train 1500+."""
    if name not in SPLITS:
        raise ValueError(f"split={name!r} is unknown; choose one of {tuple(SPLITS)}")
    start, stop = SPLITS[name]
    return goals[start:stop]
