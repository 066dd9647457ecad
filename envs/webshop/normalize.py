"""WebShop's colour normalisation (``web_agent_site/engine/normalize.py``), used by its reward.

``COLOR_SET`` is WebShop's list in WebShop's order, and the order decides: the first listed word
found anywhere in a value wins, so "light blue" becomes "blue" (listed before "light") and
"antique graywash" becomes "ash" (in "wash", listed before "gray").
"""

from __future__ import annotations

from typing import Any

__all__ = ["COLOR_SET", "normalize_color"]

COLOR_SET = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue", "blush",
    "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne", "charcoal", "cheetah",
    "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral", "cranberry", "cream",
    "crystal", "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape",
    "graphite", "grass", "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender",
    "lemon", "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint",
    "mocha", "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive", "orange", "peach",
    "pewter", "pink", "plum", "purple", "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire",
    "seashell", "silver", "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe",
    "teal", "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip


def normalize_color(value: Any) -> Any:
    """WebShop's ``normalize_color``: the first word of COLOR_SET found ``in`` the value, else the value.

    As in WebShop, ``in`` is a substring test for a string and a membership test for the
    ``(name, value)`` pairs of a synthetic goal, so a pair is normalised only when its value is
    exactly one of the listed words."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value
