"""Step latency of WebShop without and with the browser, and search latency by catalog size.

    .venv/bin/python benchmarks/webshop_latency.py [--episodes 40] [--browser-episodes 8]

Steps: ``rl4vlm/WebShop-v1`` (level 2, 1,000 products) in ``text`` and ``image+text`` modes with
``renderer="none"``, and with ``renderer="browser"`` (headless Chromium, 512x512 screenshots).
Each episode plays the oracle's steps (search, open, options, buy) and then, on a fresh episode,
random admissible clicks; every step is timed. Search: BM25 queries (product titles and goal
instructions) over procedural catalogs of 1k, 10k and 100k products, each query uncached.
Targets: text-mode step p50 under 5 ms, browser-mode step p50 under 250 ms. Medians and 95th
percentiles in milliseconds, all measured in one invocation (the machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import rl4vlm_gym  # noqa: F401 - registers the ids
from rl4vlm_gym.envs.webshop.catalog import load_products
from rl4vlm_gym.envs.webshop.generator import generate
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.envs.webshop.pages import normalize_query
from rl4vlm_gym.envs.webshop.search import SearchIndex


def step_latencies(env: gym.Env, episodes: int, rng: np.random.Generator) -> list[float]:
    """Milliseconds per step: the oracle's episodes, then as many with random admissible actions."""
    base, times = env.unwrapped, []
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        done, oracle = False, episode % 2 == 0
        while not done:
            actions = obs["actions"]
            if oracle or actions == ("search[...]",):
                action = base.oracle_action()
            else:
                action = actions[int(rng.integers(len(actions)))]
            start = time.perf_counter()
            obs, _, terminated, truncated, _ = env.step(action)
            times.append((time.perf_counter() - start) * 1e3)
            done = terminated or truncated
    return times


def search_latencies(products: int, queries: int) -> tuple[float, list[float]]:
    """Index build seconds and per-query milliseconds over a catalog of ``products``."""
    level = replace(LEVELS[4], products=products)
    rng = np.random.default_rng(0)
    records, attributes = generate(level, rng)
    catalog = load_products(records, attributes, {}, rng, f"{products} products")
    start = time.perf_counter()
    index = SearchIndex(catalog)
    build = time.perf_counter() - start
    picks = rng.choice(len(catalog), queries, replace=False)
    texts = []
    for i in picks:
        product = catalog.products[int(i)]
        texts.append(normalize_query(product.title))
        texts.append(f"i need {' and '.join(product.attributes[:2])} {product.product_type}")
    times = []
    for text in texts:
        start = time.perf_counter()
        index._search(text)  # uncached
        times.append((time.perf_counter() - start) * 1e3)
    index.close()
    return build, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=40, help="episodes per renderer-less mode")
    parser.add_argument("--browser-episodes", type=int, default=8, help="episodes with the browser")
    parser.add_argument("--queries", type=int, default=100, help="products whose title and goal are searched")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    console = Console()

    steps = Table(title="WebShop-v1 step latency (ms), level 2, 1,000 products")
    for column in ("renderer", "obs_mode", "steps", "p50", "p95"):
        steps.add_column(column, justify="right")
    runs = [("none", "text", args.episodes), ("none", "image+text", args.episodes),
            ("browser", "image+text", args.browser_episodes)]  # fmt: skip
    for renderer, obs_mode, episodes in runs:
        env = gym.make("rl4vlm/WebShop-v1", renderer=renderer, obs_mode=obs_mode)
        env.reset(seed=10_000)  # builds the shop (and starts the browser) before timing
        times = step_latencies(env, episodes, rng)
        env.close()
        steps.add_row(renderer, obs_mode, str(len(times)), f"{np.median(times):.2f}", f"{np.percentile(times, 95):.2f}")
    console.print(steps)

    search = Table(title="BM25 search latency (ms, uncached), SQLite FTS5")
    for column in ("products", "index build (s)", "queries", "p50", "p95"):
        search.add_column(column, justify="right")
    for products in (1_000, 10_000, 100_000):
        build, times = search_latencies(products, args.queries)
        search.add_row(f"{products:,}", f"{build:.2f}", str(len(times)), f"{np.median(times):.2f}",
                       f"{np.percentile(times, 95):.2f}")  # fmt: skip
    console.print(search)


if __name__ == "__main__":
    main()
