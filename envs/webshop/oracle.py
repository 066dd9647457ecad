"""The shop's decision facts: the fewest steps to a purchase scoring 1 from any page, and the clicks that take them.

A page is a :class:`~rl4vlm_gym.envs.webshop.pages.Route`, and every route's distance has a closed
form over the page graph (``pages.py``):

- an item page of product ``p`` with options ``c`` chosen: ``clicks(p, c) + 1`` (pick the missing
  options, then buy) if ``p`` can score 1, else a detour through the results or the search page;
- a description, features or reviews page: one step more than its item page (``< Prev``);
- a results page ``n`` of query ``q``: for each result ``p`` on page ``m`` that can score 1,
  ``|m - n|`` page turns, the click that opens it and ``clicks(p, {}) + 1``; or back to search;
- the search page: one search, which lists the oracle's target first on page 1, then as above.

``clicks(p, c)`` is exact: each option value the item page offers (WebShop keeps one element per
text, so a value repeated under two names is clickable under the first only) matches a set of the
goal's options (``option_score > 85``, the reward's own matching); a click replaces one option's
value; the fewest clicks are the smallest set of options whose values, re-chosen, cover every goal
option together with the values kept. A product can score 1 when its type factor is 1, it has every
goal attribute, its price is under the cap and its values can cover the goal's options.

The search page's distance is the oracle's (``optimal_steps``): its query lists the goal's product
on page 1, and, as ``optimal_steps`` assumes, no product needs fewer option clicks than the goal's
own (each goal option a value of its own: no value meets two goal options).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rl4vlm_gym.envs.webshop.nouns import tag_titles
from rl4vlm_gym.envs.webshop.pages import PER_PAGE, SUB_PAGES, Route, option_clicks
from rl4vlm_gym.envs.webshop.reward import MATCH, get_reward, goal_option_list, has_every_attribute, option_score

if TYPE_CHECKING:
    from rl4vlm_gym.envs.webshop.goals import Goal
    from rl4vlm_gym.envs.webshop.shop import Shop

__all__ = ["Fit", "ShopDistances"]


@dataclass(frozen=True)
class Fit:
    """How a product can meet the goal: the goal options each clickable value matches.

    Attributes:
        masks: for each option name, in the product's order, the bit masks (bit ``i``: goal option
            ``i``) of its clickable values, by value.
        goal: the mask of every goal option.
    """

    masks: Mapping[str, Mapping[str, int]]
    goal: int
    _known: dict[tuple[int, ...], int | None] = field(default_factory=dict, init=False, compare=False, repr=False)
    """``clicks`` by the masks kept: the decision facts ask again for each page that lists the product."""

    def clicks(self, chosen: Mapping[str, str]) -> int | None:
        """The fewest option clicks from ``chosen`` after which every goal option is matched (None: never)."""
        kept = {name: self.masks[name].get(chosen[name], 0) if name in chosen else 0 for name in self.masks}
        key = tuple(kept.values())
        if key not in self._known:
            self._known[key] = self._fewest(kept)
        return self._known[key]

    def _fewest(self, kept: Mapping[str, int]) -> int | None:
        names = list(self.masks)
        for size in range(len(names) + 1):
            for picked in itertools.combinations(names, size):
                have = _union(kept[name] for name in names if name not in picked)
                # Each re-chosen option takes one of its values' masks (a few distinct masks each).
                choices = [set(self.masks[name].values()) for name in picked]
                if any(_covers(have | _union(combo), self.goal) for combo in itertools.product(*choices)):
                    return size
        return None


def _union(masks: Iterable[int]) -> int:
    out = 0
    for mask in masks:
        out |= mask
    return out


def _covers(have: int, wanted: int) -> bool:
    return have & wanted == wanted


class ShopDistances:
    """The distances of one episode's pages (one goal, one scorer); results are kept per route."""

    def __init__(self, shop: Shop, goal: Goal, scorer: str, oracle_query: str) -> None:
        self.shop, self.goal, self.scorer, self.oracle_query = shop, goal, scorer, oracle_query
        self._wanted = goal_option_list(goal.goal_options, scorer)
        self._fits: dict[str, Fit | None] = {}
        self._untyped: dict[str, Fit | None] = {}  # _fit_but_type's, kept for _fit
        self._masks: dict[str, int] = {}
        self._routes: dict[Route, tuple[int, int] | None] = {}

    # Products -------------------------------------------------------------------------------------

    def fit(self, asin: str) -> Fit | None:
        """How product ``asin`` can score 1 (None: it cannot, whatever its options)."""
        if asin not in self._fits:
            self._fits[asin] = self._fit(asin)
        return self._fits[asin]

    def _fit(self, asin: str) -> Fit | None:
        # The cheap tests first; the type factor may tag titles (spaCy's model, when installed).
        fit = self._fit_but_type(asin)
        if fit is None:
            return None
        product = self.shop.catalog.by_asin[asin]
        if get_reward(product, self.goal, product.price, {}, self.scorer).r_type != 1.0:
            return None
        return fit

    def _fit_but_type(self, asin: str) -> Fit | None:
        """How product ``asin`` can meet the price, every attribute and every option (None: it cannot)."""
        if asin not in self._untyped:
            self._untyped[asin] = None
            product = self.shop.catalog.by_asin[asin]
            if product.price <= self.goal.price_upper and has_every_attribute(product, self.goal):
                options = option_clicks(product).items()
                fit = Fit(
                    {name: {value: self._mask(value) for value in values} for name, values in options},
                    (1 << len(self._wanted)) - 1,
                )
                self._untyped[asin] = None if fit.clicks({}) is None else fit
        return self._untyped[asin]

    def _mask(self, value: str) -> int:
        """The goal options ``value`` matches, as bits (values recur across products: kept)."""
        if value not in self._masks:
            self._masks[value] = sum(1 << i for i, wanted in enumerate(self._wanted) if _matches(value, wanted))
        return self._masks[value]

    # Pages ----------------------------------------------------------------------------------------

    def distance(self, route: Route) -> tuple[int, int] | None:
        """The fewest steps from ``route`` to a purchase scoring 1, and the option clicks among them
        (None: no such purchase is known from here)."""
        if route not in self._routes:
            self._routes[route] = self._distance(route)
        return self._routes[route]

    def _distance(self, route: Route) -> tuple[int, int] | None:
        if route.page == "search":  # no way back here is shorter: the search's results, without "back to search"
            return _plus(self._results(Route("results", self.oracle_query, 1)), 1)
        if route.page == "done":
            return None
        if route.page in SUB_PAGES:
            return _best(_plus(self.distance(replace(route, page="item")), 1), _plus(self.distance(Route()), 1))
        if route.page == "results":
            return _best(_plus(self.distance(Route()), 1), self._results(route))
        fit = self.fit(route.asin)
        clicks = None if fit is None else fit.clicks(route.chosen())
        here = None if clicks is None else (clicks + 1, clicks)
        return _best(here, _plus(self.distance(Route("results", route.query, route.number)), 1), _plus(self.distance(Route()), 1))

    def _results(self, route: Route) -> tuple[int, int] | None:
        """The best way through one of the results: the nearest pages first, as a product ``k`` pages
        away costs at least ``k + 2`` steps (turn the pages, open it, buy), which ends the search early
        (never within one page: a product there costs at least ``k + 2``)."""
        best = None
        asins = self.shop.index.search(route.query)
        nearest = sorted((abs(i // PER_PAGE + 1 - route.number), i) for i in range(len(asins)))
        for away, page in itertools.groupby(nearest, key=lambda entry: entry[0]):
            if best is not None and away + 2 > best[0]:
                break
            shown = [asins[i] for _, i in page]
            self._tag([asin for asin in shown if asin not in self._fits])
            for asin in shown:
                fit = self.fit(asin)
                clicks = None if fit is None else fit.clicks({})
                if clicks is not None:
                    best = _best(best, (away + 1 + clicks + 1, clicks))
        return best

    def _tag(self, asins: list[str]) -> None:
        """Tag in one batch the titles whose nouns :meth:`_fit` will ask for: the goal's and those of the
        products that pass its other tests (see ``nouns.tag_titles``); the goal's own title decides
        without nouns (``reward._type_reward``)."""
        if self.scorer == "corrected":  # its nouns need no tagger
            return
        titles = [self.shop.catalog.by_asin[asin].title for asin in asins if self._fit_but_type(asin) is not None]
        if any(title != self.goal.name for title in titles):
            tag_titles([self.goal.name, *titles])


@functools.lru_cache(maxsize=1 << 16)
def _matches(value: str, wanted: Any) -> bool:
    # The reward's option matching; a catalog's values and goal options recur from episode to episode.
    return option_score(value, wanted) > MATCH


def _plus(found: tuple[int, int] | None, steps: int) -> tuple[int, int] | None:
    return None if found is None else (found[0] + steps, found[1])


def _best(*found: tuple[int, int] | None) -> tuple[int, int] | None:
    known = [f for f in found if f is not None]
    return min(known, default=None)
