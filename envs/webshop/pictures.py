"""A product's picture as the shop shows it: drawn from its type, colour and chosen options.

The shop's server sends these as PNGs and ``renderer="none"`` returns them as the observation
image. Real WebShop products point at Amazon image URLs that cannot be fetched offline; they get
a placeholder card with their title.
"""

from __future__ import annotations

from collections.abc import Iterable

from PIL import Image

from rl4vlm_gym.envs.webshop.catalog import Product
from rl4vlm_gym.envs.webshop.images import placeholder_image, product_image
from rl4vlm_gym.envs.webshop.vocab import COLORS

__all__ = ["product_picture"]

_COLOR_OPTION = "color"


def product_picture(
    product: Product, options: Iterable[tuple[str, str]], size: tuple[int, int], theme: str = "default"
) -> Image.Image:
    """The picture of ``product`` with the chosen ``(name, value)`` options, at (height, width), in
    ``theme`` (``images.THEMES``)."""
    if product.silhouette is None:
        return placeholder_image(product.title, size, theme)
    chosen = dict(options)
    shown = chosen.get(_COLOR_OPTION) or next(iter(product.options.get(_COLOR_OPTION, ())), "")
    color = COLORS.get(shown)  # before a colour is chosen, the first one is shown
    badges = tuple(value for name, value in chosen.items() if name != _COLOR_OPTION)
    return product_image(product.silhouette, color, product.brand, badges, size, theme)
