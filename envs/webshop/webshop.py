"""The WebShop envs: find and buy the product an instruction asks for, in a real local web shop.

:class:`WebShop` plays a procedural catalog (``generator.py``) at a level of the ladder;
:class:`WebShopData` plays WebShop's real product files. Both share everything else: the pages
(``pages.py``), the search engine (``search.py``), the reward (``reward.py``), the oracle and,
with ``renderer="browser"``, the server (``site.py``) and Chromium (``browser.py``).
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.webshop.goals import SPLITS, Goal
from rl4vlm_gym.envs.webshop.images import THEMES
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.envs.webshop.oracle import ShopDistances
from rl4vlm_gym.envs.webshop.pages import PER_PAGE, SUB_PAGES, Page, Route, build_page, normalize_query
from rl4vlm_gym.envs.webshop.reward import MATCH, Reward, get_reward, goal_option_list, option_score
from rl4vlm_gym.envs.webshop.shop import Shop, data_shop, procedural_shop
from rl4vlm_gym.envs.webshop.wording import PHRASES, WORDINGS
from rl4vlm_gym.rendering import to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rl4vlm_gym.envs.webshop.browser import Browser
    from rl4vlm_gym.envs.webshop.catalog import Product
    from rl4vlm_gym.envs.webshop.site import ShopServer

__all__ = ["REWARDS", "WebShop", "WebShopData"]

logger = logging.getLogger(__name__)

REWARDS = {
    # WebShop: the purchase's score in [0, 1] when Buy Now is clicked, 0 otherwise.
    "webshop": {"step": 0.0, "invalid": 0.0, "purchase": 1.0, "success": 1.0, "timeout": 0.0},
    # WebShop's score with its quirks corrected (plain option values, product-type nouns; reward.py).
    "webshop-corrected": {"step": 0.0, "invalid": 0.0, "purchase": 1.0, "success": 1.0, "timeout": 0.0},
    # verl-agent: 10 if the score is 1 (its info["task_score"] is our info["score"]), else 0.
    "verl-agent": {"step": 0.0, "invalid": 0.0, "purchase": 0.0, "success": 10.0, "timeout": 0.0},
}
RENDERERS = ("none", "browser")
TEXT_FORMATS = ("text", "text_rich")
_SEARCH = "search["


class _Site:
    """The server and the browser of one env; a finalizer closes them if the env is never closed."""

    def __init__(self) -> None:
        self.server: ShopServer | None = None
        self.browser: Browser | None = None

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
            self.browser = None
        if self.server is not None:
            self.server.close()
            self.server = None


class WebShop(VLMEnv):
    """Search a web shop and buy the product, options and price an instruction asks for.

    ## Description
    WebShop (Yao et al., 2022), rebuilt as a seeded, self-contained shop. A procedural catalog
    of WebShop's five categories (25 product types with their attributes, colours, sizes and a
    third option kind, prices, titles, bullet points, descriptions and a drawn picture) is
    written in WebShop's own file schema and loaded by WebShop's loading rules; goals are built
    as WebShop builds its synthetic goals ("i need sulfate free shampoo with color: blue, and
    size: 500ml, and price lower than 40.00 dollars"). The catalog is fixed by ``catalog_seed``
    and the level; ``reset(seed)`` draws the goal. Search is BM25 over a full-text index (SQLite
    FTS5), 50 results shown 10 per page, as in WebShop. With ``renderer="browser"`` a real
    Flask server on 127.0.0.1 serves the pages and a real headless Chromium clicks through them
    (one Chromium per process, a window per env: ``browser.py``).

    Decisions (``decision()``): exact from any page: ``steps_to_go`` is the fewest steps to a purchase
    scoring 1 (any product that can score 1, not only the goal's), the optimal actions the clicks that
    keep to one (``oracle.py``); on the search page the oracle's query stands for every search listing
    such a product on page 1. Features ``page`` and ``options_left`` (option clicks still to make).

    ## Observation
    - ``image``: ``renderer="browser"``: a screenshot of the page, exactly ``image_size``.
      ``renderer="none"``: the picture of the product on show (its colour and options drawn),
      white before a product is opened.
    - ``text``: the page in WebShop's words: ``text_format="text"`` joins the visible strings
      with `` [SEP] ``; ``"text_rich"`` marks ``[button] x [button_]`` and chosen options
      ``[clicked button] x [clicked button_]``. In ``image`` mode only an invalid action's
      feedback. Prices shown are the prices charged (WebShop shows a range and charges a draw).
    - ``mission``: the instruction.
    - ``actions``: ``search[...]`` on the search page; otherwise ``click[x]`` for each button,
      product ASIN and option value on the page, lower-cased as in WebShop.

    ## Actions
    ``search[keywords]`` (any text: it is lower-cased, cleaned and searched safely) and
    ``click[x]``. Anything else is an invalid action: nothing changes and ``info["action"]``
    says why (WebShop ignores it silently).

    ## Rewards
    Paid when ``click[buy now]`` ends the episode. ``webshop``: WebShop's score, as its
    master-branch ``get_reward`` computes it: the share of goal attributes, goal options and the
    price cap the purchase meets, times the product-type factor (0, 0.1, 0.5 or 1), with
    WebShop's colour list and its quirks: a synthetic goal's options are compared as
    ``(name, value)`` pairs (a goal colour "sunflowers" never matches), and the product-type
    factor compares title nouns tagged by spaCy's ``en_core_web_sm``. The ``webshop`` extra
    installs that model; without it an approximation tags the nouns (the product type's words
    for procedural products, the title's words minus stop words, units and colours otherwise).
    ``rl4vlm-gym info`` shows which tagger this machine uses, and every evaluation run records
    it in its protocol, so results of the two never share a leaderboard.
    ``webshop-corrected``: the same score with the quirks corrected: plain option values,
    colour-normalised on both sides, and title nouns from the approximation, so it never
    depends on spaCy. ``verl-agent``: 10 when the (``webshop``) score is 1, else 0.
    ``info["score"]`` is the variant's score (verl-agent's ``task_score``); success is a score of 1.

    ## Levels
    Catalogs of 100 to 10,000 products; goals name 1 to 3 attributes and 0 to 3 options, with
    or without WebShop's price cap; up to 4 look-alike products per goal product, each lacking
    one asked-for attribute. Level 2 is WebShop's default 1,000-product scale.

    ## Arguments
    The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode`` (``image``
    needs the browser), ``image_size`` (default 512x512), ``reward_variant`` (``webshop``,
    ``webshop-corrected``, ``verl-agent``), ``action_format``, ``action_match``, ``render_mode``,
    ``wording`` (``train``: the instruction alone; ``held-out``: the instruction framed by the env in
    sentences no training episode reads, three phrasings, the seed picking one, and the invalid-action
    feedback reworded; the instruction, the pages and the actions stay WebShop's); and ``renderer``
    (``"none"`` or ``"browser"``; the browser is started only when an image is observed),
    ``text_format`` (``"text"`` or ``"text_rich"``), ``catalog_seed`` (which catalog), ``appearance``
    (``default``; ``held-out``, the ``visual`` transfer axis's theme no training frame shows: the
    pages get ``static/held-out.css`` after ``style.css`` (kraft paper, a serif face, a centred
    banner bar, square buttons, striped results, the picture on the left) and the product pictures
    a kraft background, serif lettering, dark chips and a frame; the product keeps its colour).

    ## Version History
    - v2 (``WebShop-Browser`` only): the text is ``text_rich`` by default, which names the options
      chosen so far, as the page highlights them (the kit found screenshots differing where
      WebShop's ``text`` did not: the image told more than the text).
    - v1: WebShop's own colour list and order; title nouns from spaCy's ``en_core_web_sm`` when
      installed; an empty attribute list stays empty; the oracle prefers the exact option value;
      the ``webshop-corrected`` variant.
    - v0: WebShop's page flow, text forms, action grammar and master-branch reward; 5 levels.
    """

    LEVELS: ClassVar[tuple[Any, ...]] = LEVELS
    DEFAULT_LEVEL: ClassVar[int] = 2
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (512, 512)
    MIN_IMAGE_SIDE: ClassVar[int] = 128  # smaller pages are unreadable
    MAX_IMAGE_SIDE: ClassVar[int] = 2048
    REWARDS = REWARDS
    MAX_ACTION_LENGTH: ClassVar[int] = 1024
    WORDINGS: ClassVar[tuple[str, ...]] = WORDINGS
    PHRASES: ClassVar = PHRASES
    APPEARANCES: ClassVar[tuple[str, ...]] = tuple(THEMES)  # held-out: the visual axis's theme (images.py, held-out.css)
    VIEW_ARGUMENTS: ClassVar[tuple[str, ...]] = ("renderer", "text_format")
    """Arguments that change only how the state is shown (the image's source, the text's marks), never
    the shop, the episodes, the rewards or the oracle: the kit's oracle check plays an id differing from
    another only in these as that id (``rl4vlm_gym.testing.oracle``)."""

    def __init__(self, *, renderer: str = "none", text_format: str = "text", catalog_seed: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if renderer not in RENDERERS:
            raise ValueError(f"renderer={renderer!r} is unknown; choose one of {RENDERERS}")
        if renderer == "none" and self.obs_mode == "image":
            raise ValueError(
                "obs_mode='image' needs renderer='browser': with renderer='none' the image is only the "
                "product picture, and the page would be unseen"
            )
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"text_format={text_format!r} is unknown; choose one of {TEXT_FORMATS}")
        if isinstance(catalog_seed, bool) or not isinstance(catalog_seed, (int, np.integer)) or catalog_seed < 0:
            raise ValueError(f"catalog_seed={catalog_seed!r} must be a non-negative int")
        self.renderer = renderer
        self.text_format = text_format
        self.catalog_seed = int(catalog_seed)
        self.route = Route()
        self.goal_index = -1
        self.reward_terms: Reward | None = None
        self._goal: Goal | None = None
        self._page: Page | None = None
        self._shortest: int | None = None
        self._distances: ShopDistances | None = None  # the episode's distances, made when first asked
        self._decided: dict[Route, Decision] = {}  # the episode's decision facts, by page
        self._site = _Site()
        self._finalizer = weakref.finalize(self, self._site.close)

    # What differs between the procedural and the real shops ---------------------------------------

    def shop(self) -> Shop:
        """The shop of the current level (shared, read-only, by every env of this process)."""
        return procedural_shop(self.level, self.catalog_seed)

    def _goal_range(self, shop: Shop) -> range:
        return range(len(shop.goals))

    # VLMEnv hooks ---------------------------------------------------------------------------------

    def _new_episode(self, config: Any) -> None:
        shop = self.shop()
        goals = self._goal_range(shop)
        before = self._goal
        self.goal_index = goals[int(self.np_random.integers(len(goals)))]
        self._goal = shop.goals[self.goal_index]
        self.reward_terms = None
        self._go(Route())
        self._distances, self._decided = None, {}
        self._shortest = self._solve()
        if self._browsing:
            if self._goal is before:
                # The same goal (a seed replayed): its search page, if the browser shows it, is this
                # episode's page; a reload cost 0.1-0.2 s of Chromium's CPU for the same pixels.
                self._in_browser(lambda browser, server: None, Route())
            else:  # the search page shows the new instruction: always reload
                self._in_browser(lambda browser, server: browser.open(server.url(self.route)), None)

    def _actions(self) -> tuple[str, ...]:
        return self.page.actions

    def _apply(self, action: str) -> StepOutcome:
        here, page = self.route, self.page
        searching = action.startswith(_SEARCH) and page.has_search
        target = Route("results", normalize_query(action[len(_SEARCH) : -1]), 1) if searching else page.targets[action]
        if target.page == "done":
            self.reward_terms = self._score(target)
        self._go(target)  # first, so that the server shows the new page (and the receipt)
        if self._browsing:
            arrived = _arrives_at(target)
            if searching:
                self._in_browser(lambda browser, server: browser.search(target.query, arrived), here)
            else:
                element = f"act-{page.actions.index(action)}"
                self._in_browser(lambda browser, server: browser.click(element, arrived), here)
        if self.reward_terms is None:
            return StepOutcome("step")
        if self.reward_terms.total == 1.0:
            return StepOutcome("success", terminated=True)
        return StepOutcome("purchase", terminated=True, scale=self.reward_terms.total)

    def _describe(self) -> str:
        return self.page.text(rich=self.text_format == "text_rich")

    def _mission(self) -> str:
        instruction = self.goal.instruction
        return self._say("mission", instruction, instruction=instruction)

    def _render(self) -> NDArray[np.uint8]:
        if self._browsing:
            return self._in_browser(lambda browser, server: browser.screenshot(), self.route)
        if not self.route.asin:
            return np.full((*self.image_size, 3), THEMES[self.appearance].background, np.uint8)
        from rl4vlm_gym.envs.webshop.pictures import product_picture

        picture = product_picture(self.product(self.route.asin), self.route.options, self.image_size, self.appearance)
        return to_array(picture)

    def _frame_key(self) -> Any:
        return (self.goal_index, self.route, self.appearance)

    def _state_key(self) -> str:
        return f"goal {self.goal_index} {self.route.path()}"

    def _success(self) -> bool:
        return self.reward_terms is not None and self.reward_terms.total == 1.0

    def _progress(self) -> float:
        return 0.0 if self.reward_terms is None else self.reward_terms.total

    def _optimal_steps(self) -> int | None:
        return self._shortest

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        info["score"] = self._progress()  # WebShop's score of the purchase (verl-agent's task_score)
        return info

    def oracle_action(self) -> str:
        """The next step towards buying the goal's product with the goal's options, from any page; off
        that way, where a shorter one to another purchase scoring 1 exists (a random click opened a
        product as good), the first action of the decision facts' optimal ones."""
        step = self._oracle_step(self.route)
        if self._shortest is None:
            return step
        optimal = self._decision().optimal_actions
        return step if not optimal or step in optimal else optimal[0]

    def _decision(self) -> Decision:
        """The fewest steps to a purchase scoring 1 and the actions that take one of them (``oracle.py``);
        on the search page, the oracle's query stands for every search that lists such a product on
        page 1. Kept per page for the episode: the oracle asks too, and agents come back to pages."""
        if self._shortest is None:
            return Decision(None, None, reason="unsolvable from here: the oracle knows no purchase scoring 1 (optimal_steps is -1)")
        if self._distances is None:
            query = self._oracle_step(Route())[len(_SEARCH) : -1]
            self._distances = ShopDistances(self.shop(), self.goal, self._scorer, query)
        decided = self._decided.get(self.route)
        if decided is None:
            decided = self._decided[self.route] = self._decide(self._distances)
        return decided

    def _decide(self, distances: ShopDistances) -> Decision:
        route, page = self.route, self.page
        found = distances.distance(route)
        if found is None:
            return Decision(None, None, reason="unsolvable from here: no purchase scoring 1 is known from this page")
        steps, clicks = found
        features: dict[str, int | str] = {"page": route.page, "options_left": clicks}
        if page.has_search:
            return Decision((self._oracle_step(route),), steps, features=features)
        optimal = []
        for action, target in page.targets.items():
            if target.page == "done":  # buying ends the episode: right only if it scores 1
                fit = distances.fit(target.asin)
                after = 0 if fit is not None and fit.clicks(target.chosen()) == 0 else None
            else:
                after = _steps(distances.distance(target))
            if after == steps - 1:
                optimal.append(action)
        return Decision(tuple(optimal), steps, features=features)

    # Oracle ---------------------------------------------------------------------------------------

    def _target_options(self) -> dict[str, str]:
        """The options the oracle picks: a synthetic goal's own; for a human goal, the product's
        value the reward's option matching scores highest for each goal option (if above 85),
        the value equal to the goal option first among equals ("blue" over "light blue")."""
        goal, product = self.goal, self.product(self.goal.asin)
        if isinstance(goal.goal_options, Mapping):
            return {n: v for n, v in goal.goal_options.items() if v in product.options.get(n, ())}
        chosen: dict[str, str] = {}
        for wanted in goal_option_list(goal.goal_options, self._scorer):
            scored = [
                (option_score(value, wanted), value == wanted, name, value)
                for name, values in product.options.items()
                if name not in chosen
                for value in values
            ]
            if scored:
                score, _, name, value = max(scored, key=lambda s: s[:2])
                if score > MATCH:
                    chosen[name] = value
        return chosen

    def _oracle_step(self, route: Route) -> str:
        asin = self.goal.asin
        if route.page == "search":
            return f"{_SEARCH}{normalize_query(self.product(asin).title)}]"
        if route.page == "results":
            results = self.shop().index.search(route.query)
            if asin not in results:
                return "click[back to search]"
            where = results.index(asin) // PER_PAGE + 1
            if where == route.number:
                return f"click[{asin.lower()}]"
            return "click[next >]" if where > route.number else "click[< prev]"
        if route.page in SUB_PAGES or (route.page == "item" and route.asin != asin):
            return "click[< prev]"
        if route.page == "item":
            chosen = route.chosen()
            for name, value in self._target_options().items():
                if chosen.get(name) != value:
                    return f"click[{value}]"
            return "click[buy now]"
        return "click[back to search]"  # the done page: the episode is over

    def _solve(self) -> int | None:
        """Play the oracle from the start on the page graph; its length if it earns score 1.

        Every path must search, open a product, pick each goal option and buy, so a plan that
        finds the product on the first results page and earns 1 is a shortest one."""
        route, steps = Route(), 0
        while route.page != "done" and steps < 50:
            action = self._oracle_step(route)
            if action.startswith(_SEARCH):
                route = Route("results", normalize_query(action[len(_SEARCH) : -1]), 1)
            else:
                targets = self._build(route).targets
                if action not in targets:
                    return None
                route = targets[action]
            steps += 1
        if route.page != "done" or self._score(route).total != 1.0:
            return None
        return steps if steps == 3 + len(self._target_options()) else None

    # Shop state -----------------------------------------------------------------------------------

    @property
    def goal(self) -> Goal:
        if self._goal is None:
            raise RuntimeError("call reset() first")
        return self._goal

    @property
    def page(self) -> Page:
        if self._page is None:
            raise RuntimeError("call reset() first")
        return self._page

    def product(self, asin: str) -> Product:
        return self.shop().catalog.by_asin[asin]

    @property
    def _scorer(self) -> str:
        return "corrected" if self.reward_variant == "webshop-corrected" else "original"

    def _score(self, route: Route) -> Reward:
        product = self.product(route.asin)
        return get_reward(product, self.goal, product.price, route.chosen(), self._scorer)

    def _build(self, route: Route) -> Page:
        score = self.reward_terms.total if route.page == "done" and self.reward_terms is not None else None
        return build_page(self.shop(), self.goal, route, score)

    def _go(self, route: Route) -> None:
        self.route = route
        self._page = self._build(route)

    # Server and browser ---------------------------------------------------------------------------

    @property
    def _browsing(self) -> bool:
        # Without an image to show (obs_mode="text") Chromium would have nothing to do.
        return self.renderer == "browser" and self.obs_mode != "text"

    def _server_page(self, route: Route) -> Page | None:
        if route.asin and route.asin not in self.shop().catalog.by_asin:
            return None
        if route.page == "done" and route != self.route:
            return None  # only the purchase just made has a receipt
        return self._build(route)

    def _server_image(self, asin: str, options: tuple[tuple[str, str], ...], side: int) -> bytes | None:
        from rl4vlm_gym.envs.webshop.images import png_bytes
        from rl4vlm_gym.envs.webshop.pictures import product_picture

        product = self.shop().catalog.by_asin.get(asin)
        return None if product is None else png_bytes(product_picture(product, options, (side, side), self.appearance))

    def _in_browser(self, do: Callable[[Browser, ShopServer], Any], at: Route | None) -> Any:
        """Run ``do(browser, server)`` with the browser at page ``at`` (``None``: anywhere). A dead
        server or browser is restarted, the browser reopened at ``at``, and ``do`` tried once more."""
        from rl4vlm_gym.envs.webshop.browser import BrowserError

        for attempt in (1, 2):
            try:
                browser, server = self._ensure_site(at)
                return do(browser, server)
            except Exception as err:
                if isinstance(err, BrowserError) and err.fatal:
                    raise
                if attempt == 2:
                    raise BrowserError(f"the shop's browser failed twice in a row: {err}") from err
                logger.warning("WebShop's browser or server failed (%s); restarting them at %s", err, at)
                self._site.close()
        raise AssertionError("unreachable")

    def _ensure_site(self, at: Route | None) -> tuple[Browser, ShopServer]:
        from rl4vlm_gym.envs.webshop.browser import Browser
        from rl4vlm_gym.envs.webshop.site import ShopServer, create_app

        site, restarted = self._site, False
        if site.server is None or not site.server.alive():
            if site.server is not None:
                site.server.close()
            site.server = ShopServer(create_app(self._server_page, self._server_image, self.appearance))
            restarted = True
        # No round trip to the browser here (it was two per call, 2 of a step's 5 browser calls): a
        # browser whose driver runs is tried, and one that fails is restarted by _in_browser's retry.
        if site.browser is None or not site.browser.driver_running():
            if site.browser is not None:
                site.browser.close()
            site.browser = Browser(self.image_size)
            restarted = True
        shown = site.browser.arrived_at  # only the browser's own moves change it (None: unknown)
        if at is not None and (restarted or shown is None or Route.from_url(shown) != at):
            site.browser.open(site.server.url(at))
        return site.browser, site.server

    def close(self) -> None:
        """Stop the browser and the server (no process is left behind); safe to call twice."""
        self._site.close()
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_site"] = _Site()  # a live browser cannot cross processes; the copy starts its own
        state["_distances"], state["_decided"] = None, {}  # the distances hold the shop: the copy makes its own
        state.pop("_finalizer", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._finalizer = weakref.finalize(self, self._site.close)


def _steps(found: tuple[int, int] | None) -> int | None:
    return None if found is None else found[0]


def _arrives_at(target: Route) -> Callable[[str], bool]:
    return lambda url: Route.from_url(url) == target


class WebShopData(WebShop):
    """Shop WebShop's real scraped Amazon products for its human or synthetic instructions.

    ## Description
    Loads WebShop's own files (``items_shuffle_1000.json`` or ``items_shuffle.json``,
    ``items_ins_v2_1000.json`` or ``items_ins_v2.json``, ``items_human_ins.json``) from
    ``data_dir`` or ``$WEBSHOP_DATA`` with WebShop's loading rules, builds its goals, shuffles
    them with ``goal_seed`` (WebShop uses 233) and keeps WebShop's splits. Prices and price caps
    come from ``goal_seed`` too, so every process sees the same shop. Product images are remote
    Amazon URLs, so pictures are placeholders with the product's title. Decisions as in
    ``rl4vlm/WebShop-v1``.

    ## Observation
    As in ``rl4vlm/WebShop-v1``.

    ## Actions
    As in ``rl4vlm/WebShop-v1``.

    ## Rewards
    As in ``rl4vlm/WebShop-v1``: with spaCy's model installed, ``webshop`` is WebShop's
    ``get_reward`` exactly. Human goals name plain option values, so the pair quirk does not
    arise; ``goals="synthetic"`` has it.

    ## Levels
    One: the goals of the chosen split of the shuffled goal list: ``all`` (the default, as
    WebShop's text env), or WebShop's standard ``test`` 0-499, ``eval`` 500-1499, ``train`` 1500+.

    ## Arguments
    As in ``rl4vlm/WebShop-v1`` (but ``catalog_seed``), and ``data_dir``, ``goals``
    (``"human"`` or ``"synthetic"``), ``split``, ``goal_seed``.

    ## Version History
    - v1: the reward of ``rl4vlm/WebShop-v1``; an empty ``attributes`` list stays empty.
    - v0: WebShop's files, goals and splits, seeded.
    """

    LEVELS: ClassVar[tuple[Any, ...]] = ("WebShop's real products and goals",)
    DEFAULT_LEVEL: ClassVar[int] = 0
    NEEDS_DATA: ClassVar[bool] = True

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        goals: str = "human",
        split: str = "all",
        goal_seed: int = 233,
        **kwargs: Any,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"split={split!r} is unknown; choose one of {tuple(SPLITS)}")
        super().__init__(**kwargs)
        self.split, self.goal_kind, self.goal_seed, self.data_dir = split, goals, goal_seed, data_dir
        self._shop = data_shop(data_dir, goals, goal_seed)  # MissingDataError without the files
        self._goal_range(self._shop)  # an empty split is a bad argument, found now

    def shop(self) -> Shop:
        return self._shop

    def _goal_range(self, shop: Shop) -> range:
        start, stop = SPLITS[self.split]
        goals = range(len(shop.goals))[start:stop]
        if not goals:
            raise ValueError(f"split={self.split!r} holds no goals: the data gives only {len(shop.goals)}")
        return goals

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_shop")
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._shop = data_shop(self.data_dir, self.goal_kind, self.goal_seed)
