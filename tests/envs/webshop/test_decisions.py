"""WebShop's decision facts (``oracle.py``): the fewest steps to a purchase scoring 1, from any page.

The ``webshop-corrected`` scorer throughout: its title nouns need no spaCy model (seconds to load),
and the distances' code is the same for every scorer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.envs.webshop.generator import write_files
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.envs.webshop.nouns import approximate_nouns
from rl4vlm_gym.envs.webshop.oracle import Fit, ShopDistances
from rl4vlm_gym.envs.webshop.pages import PER_PAGE, Route
from rl4vlm_gym.envs.webshop.reward import get_reward
from rl4vlm_gym.testing import check_decisions

ENV = "rl4vlm/WebShop-v1"
ENV_DATA = "rl4vlm/WebShop-Amazon-v1"


def make(level: int) -> gym.Env:
    return gym.make(ENV, obs_mode="text", level=level, reward_variant="webshop-corrected")


def test_fewest_option_clicks_by_hand() -> None:
    # Goal options 0 (blue) and 1 (xl); "navy xl" meets both at once, "red" and "s" neither.
    fit = Fit({"color": {"blue": 0b01, "red": 0}, "size": {"xl": 0b10, "s": 0}}, goal=0b11)
    assert fit.clicks({}) == 2
    assert fit.clicks({"color": "blue"}) == 1 and fit.clicks({"color": "red", "size": "xl"}) == 1
    assert fit.clicks({"color": "blue", "size": "xl"}) == 0
    both = Fit({"color": {"blue": 0b01, "navy xl": 0b11}, "size": {"s": 0}}, goal=0b11)
    assert both.clicks({}) == 1 and both.clicks({"color": "blue", "size": "s"}) == 1
    # A kept value still counts: xl chosen, only the colour is missing.
    assert Fit({"color": {"blue": 0b01}, "size": {"xl": 0b10}}, goal=0b11).clicks({"size": "xl"}) == 1
    assert Fit({"color": {"red": 0}}, goal=0b1).clicks({}) is None  # no value meets the goal
    assert Fit({}, goal=0).clicks({}) == 0  # no goal options: buy at once


def test_a_hand_worked_episode() -> None:
    env = make(1)  # one option kind: search, open, pick the option, buy
    obs, _ = env.reset(seed=4)
    base = env.unwrapped
    wanted = base.oracle_action()
    assert base.decision() == {
        "optimal_actions": [wanted], "steps_to_go": 4, "values": None, "reason": None,
        "features": {"page": "search", "options_left": 1},
    }  # fmt: skip
    assert base.optimal_steps == 4
    env.step(wanted)
    facts = base.decision()
    assert facts["steps_to_go"] == 3 and f"click[{base.goal.asin.lower()}]" in facts["optimal_actions"]
    assert "click[back to search]" not in facts["optimal_actions"] and "click[next >]" not in facts["optimal_actions"]
    env.step(f"click[{base.goal.asin.lower()}]")
    facts = base.decision()
    (value,) = base._target_options().values()
    assert facts["steps_to_go"] == 2 and facts["features"] == {"page": "item", "options_left": 1}
    assert f"click[{value}]" in facts["optimal_actions"] and "click[buy now]" not in facts["optimal_actions"]
    env.step("click[description]")  # a detour: one step back to the item page
    assert base.decision() == {**facts, "steps_to_go": 3, "optimal_actions": ["click[< prev]"], "features": {"page": "description", "options_left": 1}}
    env.step("click[< prev]")
    env.step(f"click[{value}]")
    assert base.decision()["optimal_actions"] == ["click[buy now]"] and base.decision()["steps_to_go"] == 1
    env.step("click[buy now]")
    assert base.decision() == {"optimal_actions": None, "steps_to_go": 0, "values": None, "reason": "the episode is over", "features": None}


def _reference(base: gym.Env, start: Route, search: int, bound: int) -> int | None:
    """The fewest steps from ``start`` by breadth-first search over the pages' clicks, judged by the
    env's own reward (a purchase scoring 1), the search page counting ``search`` steps (its own claim)."""
    seen, frontier, best = {start}, deque([(start, 0)]), None
    while frontier:
        route, depth = frontier.popleft()
        if best is not None and depth >= best:
            break
        if route.page == "search":
            best = min(best or depth + search, depth + search)
            continue
        for target in base._build(route).targets.values():
            if target.page == "done":
                if base._score(target).total == 1.0:
                    best = min(best or depth + 1, depth + 1)
            elif target not in seen and depth + 1 < bound:
                seen.add(target)
                frontier.append((target, depth + 1))
    return best


@pytest.mark.slow  # 0.25 s (level 2's two option kinds make 5 times as many pages to search: Fit by hand covers them)
def test_steps_to_go_equal_a_breadth_first_search_of_the_pages() -> None:
    level, pages = 1, 10
    env = make(level)
    obs, _ = env.reset(seed=level)
    base, rng = env.unwrapped, np.random.default_rng(level)
    search = base.decision()["steps_to_go"]
    checked = 0
    while checked < pages:  # a seeded random walk (the search: the oracle's), checked at each page
        action = str(rng.choice(obs["actions"]))
        action = base.oracle_action() if action == "search[...]" else action
        if action == "click[buy now]":
            continue
        obs, *_ = env.step(action)
        facts = base.decision()
        assert facts["steps_to_go"] == _reference(base, base.route, search, facts["steps_to_go"] + 2), base.route
        checked += 1


# Levels 3 and 4 only grow the catalog (0.5 and 2 s to build); level 2's two option kinds, in the full run.
@pytest.mark.parametrize("level", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_oracle_play_and_a_random_walk_keep_the_semantics(level: int) -> None:
    env = make(level)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        base = env.unwrapped
        before = base.decision()
        assert before["steps_to_go"] == base.optimal_steps
        done = False
        while not done:  # the oracle: one of the optimal actions, one step less each time
            action = base.oracle_action()
            assert action in before["optimal_actions"]
            _, _, done, _, _ = env.step(action)
            after = base.decision()
            assert after["steps_to_go"] == before["steps_to_go"] - 1
            before = after
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:  # a random walk: optimal exactly when the steps to go drop by one
            before = base.decision()
            assert base.oracle_action() in before["optimal_actions"]  # off its way too: a product as good, bought
            action = str(rng.choice(obs["actions"]))
            if action == "search[...]":
                action = str(rng.choice([base.oracle_action(), "search[soft blue]"]))
            obs, _, done, truncated, info = env.step(action)
            after = base.decision()
            optimal = action in before["optimal_actions"]
            if done:  # a purchase: optimal exactly when it scores 1
                assert optimal == info["success"] == (after["steps_to_go"] == 0)
            elif not action.startswith("search["):  # a search not the oracle's is not listed, optimal or not
                assert (after["steps_to_go"] == before["steps_to_go"] - 1) == optimal, (action, before, after)
            assert after["steps_to_go"] >= before["steps_to_go"] - 1 or after["steps_to_go"] == -1
            done = done or truncated


def test_a_product_fits_only_if_every_term_of_its_score_can_be_full() -> None:
    env = make(1)
    env.reset(seed=4)
    base = env.unwrapped
    goal, product = base.goal, base.product(base.goal.asin)

    def fits(**changes: object) -> bool:
        return ShopDistances(base.shop(), replace(goal, **changes), "corrected", "").fit(goal.asin) is not None

    assert fits()
    assert not fits(price_upper=product.price - 0.01) and fits(price_upper=product.price)  # the cap: at, just below
    assert not fits(attributes=(*goal.attributes, "made of moon rock"))  # an attribute it lacks
    assert not fits(goal_options={**goal.goal_options, "color": "no such colour"})  # an option it cannot meet
    assert not fits(name="zz qq", query="zz qq", product_category="zz qq", product_type="zz qq")  # another kind of product
    # A type factor of 0.5: one of ten title nouns shared (title score 0.1), no query or category in common.
    word = approximate_nouns(product.title)[0]
    half = {"name": " ".join([word, *"alpha beta gamma delta epsilon zeta theta iota kappa".split()]), "product_type": None}
    assert get_reward(product, replace(goal, query="zz", product_category="zz", **half), product.price, {}, "corrected").r_type == 0.5
    assert not fits(query="zz", product_category="zz", **half)


def test_results_pages_take_the_nearest_fitting_product() -> None:
    # The search stops at the first pages that cannot beat the best found: the same as trying all 50.
    env = make(0)
    for seed in range(4):
        env.reset(seed=seed)
        base = env.unwrapped
        distances = ShopDistances(base.shop(), base.goal, "corrected", "")
        for query in ("soft", "blue", base.goal.name.split()[-1], base.goal.name):
            asins = base.shop().index.search(query)
            for number in range(1, -(-len(asins) // PER_PAGE) + 1):
                costs = [
                    (abs(i // PER_PAGE + 1 - number) + 2 + clicks, clicks)
                    for i, asin in enumerate(asins)
                    if (fit := distances.fit(asin)) is not None and (clicks := fit.clicks({})) is not None
                ]
                assert distances._results(Route("results", query, number)) == min(costs, default=None)


@pytest.mark.slow  # 0.2 s: WebShop's file schema written, then the kit's check
def test_human_goals_of_webshops_files_keep_the_laws(tmp_path: Path) -> None:
    # Human goals name plain option values, matched fuzzily: one value may meet a goal option another also meets.
    write_files(tmp_path, LEVELS[1], np.random.default_rng(7), hints=False)
    for goals in ("human", "synthetic"):
        report = check_decisions(ENV_DATA, data_dir=tmp_path, goals=goals, reward_variant="webshop-corrected")
        assert report.startswith("optimal actions known in 33/33 states"), report
