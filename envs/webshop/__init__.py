"""WebShop family: search a web shop and buy what an instruction asks for (Yao et al., 2022).

``register`` is this family's ``rl4vlm_gym.envs`` entry point; it imports only the level ladder.
``rl4vlm/WebShop-v1`` needs the core install; screenshots (``renderer="browser"``,
``rl4vlm/WebShop-Browser-v2``) need the ``webshop`` extra (Flask, Selenium) and Debian's
``chromium`` and ``chromium-driver``; ``rl4vlm/WebShop-Amazon-v1`` needs WebShop's data files.
The ``webshop`` extra also installs spaCy's ``en_core_web_sm``, with which the reward's title
nouns are WebShop's own (``nouns.py``).
"""

from __future__ import annotations

from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

WEBSHOP = "Yao et al., WebShop: Towards Scalable Real-World Web Interaction with Grounded Language Agents, NeurIPS 2022"
VLDAC = "Bredis et al., Enhancing Vision-Language Model Training with Reinforcement Learning in Synthetic Worlds, 2025 (VL-DAC)"
GIGPO = "Feng et al., Group-in-Group Policy Optimization for LLM Agent Training, 2025 (GiGPO, verl-agent)"
_VARIANTS = ("webshop", "webshop-corrected", "verl-agent")
_GRAMMAR = (
    "WebShop's actions: search[keywords] on a page with a search bar, click[x] for a button, a product's "
    "ASIN or an option value shown on the page (obs['actions'] lists them)"
)
_EXAMPLES = (
    "search[sulfate free shampoo 500ml]",
    '{"thoughts": "this one has argan oil", "action": "click[b0xrg0vquy]"}',
    "<think>the goal asks for blue</think><action>click[blue]</action>",
    "click[buy now]",
)
_STEPS = 15  # verl-agent's and most LLM-agent harnesses' WebShop step budget
_SKILLS = ("web-navigation", "search", "instruction-following", "reading")
_SUCCESS = "the purchase scores 1.0: every attribute, option and the price cap matched, the right kind of product"

CARDS = (
    EnvCard(
        id="rl4vlm/WebShop-v1",
        entry_point="rl4vlm_gym.envs.webshop.webshop:WebShop",
        family="webshop",
        summary="Search a procedural web shop and buy the product, options and price the instruction asks for.",
        skills=_SKILLS,
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success=_SUCCESS,
        max_episode_steps=_STEPS,
        obs_modes=("image+text", "text"),
        references=(WEBSHOP, VLDAC, GIGPO),
        protocol_facts="rl4vlm_gym.envs.webshop.nouns:protocol_facts",
    ),
    EnvCard(
        id="rl4vlm/WebShop-Browser-v2",
        entry_point="rl4vlm_gym.envs.webshop.webshop:WebShop",
        family="webshop",
        summary="WebShop-v1 seen through a real browser: screenshots of the shop's pages taken by headless Chromium; the text is WebShop's text_rich, which names the chosen options the page highlights.",
        skills=("web-navigation", "search", "instruction-following", "reading", "gui-reading"),
        levels=tuple(level.describe() for level in LEVELS),
        default_level=2,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success=_SUCCESS,
        max_episode_steps=_STEPS,
        references=(WEBSHOP, VLDAC, GIGPO),
        extra="webshop",
        kwargs={"renderer": "browser", "text_format": "text_rich"},
        protocol_facts="rl4vlm_gym.envs.webshop.nouns:protocol_facts",
        resources={"num_cpus": 1, "memory": 805306368},
    ),
    EnvCard(
        id="rl4vlm/WebShop-Amazon-v1",
        entry_point="rl4vlm_gym.envs.webshop.webshop:WebShopData",
        family="webshop",
        summary="Shop WebShop's real scraped Amazon products for its human (or synthetic) instructions.",
        skills=("web-navigation", "search", "instruction-following", "reading", "transfer"),
        levels=("WebShop's real products and goals (split: test 0-499, eval 500-1499, train 1500+)",),
        default_level=0,
        action_grammar=_GRAMMAR,
        action_examples=_EXAMPLES,
        reward_variants=_VARIANTS,
        success=_SUCCESS,
        max_episode_steps=_STEPS,
        obs_modes=("image+text", "text"),
        references=(WEBSHOP, VLDAC, GIGPO),
        protocol_facts="rl4vlm_gym.envs.webshop.nouns:protocol_facts",
    ),
)


def register() -> None:
    """Register the WebShop family's ids (the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
