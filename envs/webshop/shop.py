"""A shop: a catalog, its goals and its search index, built once and shared in the process.

Building a shop costs from milliseconds (100 products) to seconds (100k products), while every
env of a process that asks for the same catalog can share it read-only, so shops are cached by
what defines them: the level and catalog seed of a procedural catalog, or the data folder and
goal kind of real WebShop files.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rl4vlm_gym.envs.webshop.catalog import Catalog, find_data_files, load_products, read_data_files
from rl4vlm_gym.envs.webshop.generator import generate
from rl4vlm_gym.envs.webshop.goals import Goal, human_goals, synthetic_goals
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.envs.webshop.search import SearchIndex

__all__ = ["Shop", "data_shop", "procedural_shop"]


@dataclass(frozen=True)
class Shop:
    """What the web shop sells and what shoppers are asked to buy.

    Attributes:
        catalog: the products.
        goals: the goals in their seeded shuffled order (WebShop's session order).
        index: the search engine.
    """

    catalog: Catalog
    goals: tuple[Goal, ...]
    index: SearchIndex


def _shuffled(goals: list[Goal], rng: np.random.Generator) -> tuple[Goal, ...]:
    return tuple(goals[i] for i in rng.permutation(len(goals)))


@functools.lru_cache(maxsize=8)
def procedural_shop(level: int, seed: int) -> Shop:
    """The procedural shop of ``LEVELS[level]`` drawn from ``seed`` (same arguments, same shop)."""
    config = LEVELS[level]
    rng = np.random.default_rng([seed, level])
    records, attributes = generate(config, rng)
    catalog = load_products(records, attributes, {}, rng, source=f"procedural level {level}, seed {seed}")
    goals = _shuffled(synthetic_goals(catalog, rng, config.price_cap), rng)
    return Shop(catalog, goals, SearchIndex(catalog))


@functools.lru_cache(maxsize=4)
def _data_shop(folder: Path, goal_kind: str, seed: int) -> Shop:
    records, attributes, human = read_data_files(find_data_files(folder))
    rng = np.random.default_rng(seed)
    catalog = load_products(records, attributes, human, rng, source=str(folder))
    build = human_goals if goal_kind == "human" else synthetic_goals
    goals = _shuffled(build(catalog, rng), rng)
    if not goals:
        raise ValueError(f"WebShop data in {folder} gives no {goal_kind} goals (no product has an instruction)")
    return Shop(catalog, goals, SearchIndex(catalog))


def data_shop(data_dir: str | os.PathLike[str] | None, goal_kind: str, seed: int) -> Shop:
    """The shop of WebShop's real files in ``data_dir`` (or ``$WEBSHOP_DATA``)."""
    if goal_kind not in ("human", "synthetic"):
        raise ValueError(f"goals={goal_kind!r} is unknown; choose 'human' or 'synthetic'")
    files = find_data_files(data_dir)
    return _data_shop(files["products"].parent.resolve(), goal_kind, seed)
