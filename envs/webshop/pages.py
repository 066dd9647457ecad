"""The shop's pages as data: what each page shows, what can be clicked and where it leads.

A :class:`Route` is a page of the site: it is the URL (WebShop keeps a session's whole state in
its URLs, and so do we), so an env's state is a Route, and a restarted browser is restored by
opening it. :func:`build_page` turns a Route into a :class:`Page`: a list of blocks in screen
order. The HTML templates draw the blocks, and the observation text is read off the same blocks,
so the text an agent gets and the page the browser shows cannot drift apart.

Text follows WebShop's ``WebAgentTextEnv``: ``text`` joins the visible strings with ``" [SEP] "``;
``text_rich`` marks buttons ``[button] x [button_]`` and chosen options
``[clicked button] x [clicked button_]``. Clickables are WebShop's, lower-cased: buttons,
product ASINs and option values, as ``click[...]``; a page with a search bar takes
``search[...]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit

if TYPE_CHECKING:
    from rl4vlm_gym.envs.webshop.catalog import Product
    from rl4vlm_gym.envs.webshop.goals import Goal
    from rl4vlm_gym.envs.webshop.shop import Shop

__all__ = [
    "PER_PAGE",
    "SEARCH_ACTION",
    "Block",
    "Page",
    "Route",
    "build_page",
    "normalize_query",
    "option_clicks",
]

PER_PAGE = 10  # WebShop's PRODUCT_WINDOW
MAX_QUERY_CHARS = 1000  # keeps URLs short; the index reads at most 32 terms anyway
SEARCH_ACTION = "search[...]"
SUB_PAGES = ("description", "features", "reviews")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def normalize_query(text: str) -> str:
    """WebShop lower-cases search keywords; we also drop control characters and squeeze spaces."""
    text = _CONTROL.sub(" ", text)
    return " ".join(text.lower().split())[:MAX_QUERY_CHARS]


@dataclass(frozen=True)
class Route:
    """One page of the shop, with everything needed to show it again.

    Attributes:
        page: ``search``, ``results``, ``item``, ``description``, ``features``, ``reviews`` or ``done``.
        query: the search keywords (kept on item pages, for "< Prev").
        number: the results page, from 1.
        asin: the product of an item, sub or done page.
        options: the chosen options, ``((name, value), ...)`` in the product's option order.
    """

    page: str = "search"
    query: str = ""
    number: int = 1
    asin: str = ""
    options: tuple[tuple[str, str], ...] = ()

    def path(self) -> str:
        """The URL path and query string of this page on the shop's server."""
        if self.page == "search":
            return "/"
        params = [("q", self.query), ("page", str(self.number))]
        params += [("opt", f"{name}:{value}") for name, value in self.options]
        if self.page == "results":
            return f"/results?{urlencode(params[:2])}"
        base = "/done" if self.page == "done" else "/item"
        sub = f"/{self.page}" if self.page in SUB_PAGES else ""
        return f"{base}/{self.asin}{sub}?{urlencode(params)}"

    @classmethod
    def from_url(cls, url: str) -> Route | None:
        """The Route of a shop URL, or ``None`` if the URL is not a page of the shop."""
        parts = urlsplit(url)
        segments = [s for s in parts.path.split("/") if s]
        args = parse_qsl(parts.query, keep_blank_values=True)
        get = dict(args)
        try:
            number = int(get.get("page", "1"))
        except ValueError:
            return None
        options = tuple(tuple(v.split(":", 1)) for k, v in args if k == "opt" and ":" in v)
        query = get.get("q", "")
        if not segments:
            return cls()
        if segments == ["results"]:
            return cls("results", query, number)
        if segments[0] in ("item", "done") and len(segments) in (2, 3):
            page = "item" if segments[0] == "item" else "done"
            if len(segments) == 3:
                if segments[0] != "item" or segments[2] not in SUB_PAGES:
                    return None
                page = segments[2]
            return cls(page, query, number, segments[1], options)  # type: ignore[arg-type]
        return None

    def chosen(self) -> dict[str, str]:
        return dict(self.options)


@dataclass(frozen=True)
class Block:
    """One thing on a page, in screen order.

    ``kind`` is ``banner`` (the site name), ``instruction``, ``searchbox``, ``button``, ``info``
    (a line of text), ``result`` (a product in a result list), ``options`` (one option's
    values), ``product`` (title, price and rating of an item) or ``image``. ``actions`` maps each
    clickable label of the block to its action; ``targets`` maps each action to its Route.
    """

    kind: str
    texts: tuple[str, ...] = ()
    actions: Mapping[str, str] = field(default_factory=dict)
    selected: frozenset[str] = frozenset()
    asin: str = ""

    def strings(self, rich: bool) -> list[str]:
        """The block's visible strings, marked up in WebShop's ``text_rich`` form if ``rich``."""
        out = []
        for text in self.texts:
            if rich and text in self.actions:
                tag = "clicked button" if text in self.selected else "button"
                out.append(f"[{tag}] {text} [{tag}_]")
            else:
                out.append(text)
        return out


@dataclass(frozen=True)
class Page:
    """A page: its blocks, its admissible actions and where each action leads."""

    route: Route
    blocks: tuple[Block, ...]
    targets: Mapping[str, Route]
    has_search: bool = False

    @property
    def actions(self) -> tuple[str, ...]:
        """Admissible actions in screen order (``search[...]`` first when there is a search bar)."""
        return ((SEARCH_ACTION,) if self.has_search else ()) + tuple(self.targets)

    def text(self, rich: bool = False) -> str:
        return " [SEP] ".join(s for block in self.blocks for s in block.strings(rich))


class _PageBuilder:
    def __init__(self, route: Route) -> None:
        self.route = route
        self.blocks: list[Block] = []
        self.targets: dict[str, Route] = {}

    def add(self, kind: str, *texts: str, asin: str = "") -> None:
        self.blocks.append(Block(kind, tuple(texts), asin=asin))

    def button(self, label: str, target: Route, kind: str = "button", key: str | None = None) -> None:
        action = f"click[{(key or label).lower()}]"
        if action in self.targets:
            return  # WebShop's text_to_clickable keeps one element per text
        self.targets[action] = target
        self.blocks.append(Block(kind, (label,), {label: action}))

    def page(self, has_search: bool = False) -> Page:
        return Page(self.route, tuple(self.blocks), self.targets, has_search)


def _instruction(builder: _PageBuilder, goal: Goal) -> None:
    builder.add("instruction", "Instruction:", goal.instruction)


def price_text(product: Product) -> str:
    """The price the shop charges (WebShop shows a range and charges a hidden draw; we show the draw)."""
    return f"${product.price:.2f}"


def option_clicks(product: Product) -> dict[str, list[str]]:
    """The option values an item page offers as clicks, by option name: WebShop keeps one element
    per text, so a value already clickable (a button above, or a value of an earlier option) is not."""
    taken = {"back to search", "< prev"}  # the item page's buttons above its options
    clicks: dict[str, list[str]] = {}
    for name, values in product.options.items():
        clicks[name] = []
        for value in values:
            if value not in taken:
                taken.add(value)
                clicks[name].append(value)
    return clicks


def build_page(shop: Shop, goal: Goal, route: Route, score: float | None = None) -> Page:
    """The page at ``route`` for a shopper pursuing ``goal``; ``score`` is shown on the done page."""
    b = _PageBuilder(route)
    home = Route()
    if route.page == "search":
        b.add("banner", "WebShop")
        _instruction(b, goal)
        b.blocks.append(Block("searchbox", ("Search",), {"Search": SEARCH_ACTION}))
        return b.page(has_search=True)
    if route.page == "done":
        product = shop.catalog.by_asin[route.asin]
        b.add("info", "Thank you for shopping with us!")
        b.add("info", "Purchased", product.asin, product.title)
        picked = ", ".join(f"{k}: {v}" for k, v in route.options) or "none"
        b.add("info", f"Options: {picked}", f"Price: {price_text(product)}")
        b.add("info", "Your score (min 0.0, max 1.0)", f"{score if score is not None else 0.0:.4g}")
        b.add("image", asin=product.asin)
        return b.page()
    _instruction(b, goal)
    b.button("Back to Search", home)
    if route.page == "results":
        asins = shop.index.search(route.query)
        pages = max(1, -(-len(asins) // PER_PAGE))
        b.add("info", f"Page {route.number} (Total results: {len(asins)})")
        if route.number > 1:
            b.button("< Prev", replace(route, number=route.number - 1))
        if route.number < pages:
            b.button("Next >", replace(route, number=route.number + 1))
        start = (route.number - 1) * PER_PAGE
        for asin in asins[start : start + PER_PAGE]:
            product = shop.catalog.by_asin[asin]
            target = Route("item", route.query, route.number, asin)
            action = f"click[{asin.lower()}]"
            b.targets[action] = target
            b.blocks.append(Block("result", (asin, product.title, price_text(product)), {asin: action}, asin=asin))
        return b.page()
    product = shop.catalog.by_asin[route.asin]
    item = Route("item", route.query, route.number, route.asin, route.options)
    if route.page in SUB_PAGES:
        b.button("< Prev", item)
        if route.page == "description":
            b.add("info", product.description)
        elif route.page == "features":
            b.add("info", *product.bullet_points)
        return b.page()
    b.button("< Prev", Route("results", route.query, route.number))
    chosen = route.chosen()
    clickable = option_clicks(product)
    for name, values in product.options.items():
        actions: dict[str, str] = {}
        for value in clickable[name]:
            options = tuple((n, value if n == name else chosen[n]) for n in product.options if n == name or n in chosen)
            b.targets[f"click[{value}]"] = replace(item, options=options)
            actions[value] = f"click[{value}]"
        selected = frozenset(v for v in values if chosen.get(name) == v)
        b.blocks.append(Block("options", (name, *values), actions, selected, asin=product.asin))
    b.add("image", asin=product.asin)
    b.add("product", product.title, f"Price: {price_text(product)}", f"Rating: {product.rating}", asin=product.asin)
    for sub in SUB_PAGES:
        b.button(sub.capitalize(), replace(item, page=sub))
    b.button("Buy Now", replace(item, page="done"))
    return b.page()
