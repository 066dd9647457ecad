"""The WebShop level ladder: catalog size, how much the goal asks for, how alike the distractors are.

Level 2 is WebShop's own scale: the 1,000-product catalog WebShop's text env loads by default.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEVELS", "ShopLevel"]


@dataclass(frozen=True)
class ShopLevel:
    """One rung of the ladder.

    Attributes:
        products: products in the catalog.
        goal_attributes: attributes the instruction names (WebShop's ``instruction_attributes``).
        options: option kinds per product (colour, size, then a third such as scent); a synthetic
            goal names a value of each, as WebShop's do.
        price_cap: the goal adds WebShop's "and price lower than X dollars".
        twins: look-alike products per goal product: the same type and options, different brands,
            each lacking one of the goal's attributes (so only a careful reader buys right).
    """

    products: int
    goal_attributes: int
    options: int
    price_cap: bool
    twins: int

    def describe(self) -> str:
        """One line for the env card."""
        cap = "a price cap" if self.price_cap else "no price cap"
        options = "no options" if not self.options else f"{self.options} option kind{'s' * (self.options > 1)}"
        return (
            f"{self.products:,} products; goals name {self.goal_attributes} attribute"
            f"{'s' * (self.goal_attributes > 1)}, {options} and {cap}; {self.twins} look-alikes per goal product"
        )


LEVELS = (
    ShopLevel(products=100, goal_attributes=1, options=0, price_cap=False, twins=0),
    ShopLevel(products=300, goal_attributes=2, options=1, price_cap=True, twins=1),
    ShopLevel(products=1_000, goal_attributes=2, options=2, price_cap=True, twins=2),
    ShopLevel(products=3_000, goal_attributes=3, options=2, price_cap=True, twins=3),
    ShopLevel(products=10_000, goal_attributes=3, options=3, price_cap=True, twins=4),
)
