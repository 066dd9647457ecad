"""Product pictures of the procedural shop, ``rl4vlm_gym.envs.webshop.images``."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from rl4vlm_gym.envs.webshop.images import SILHOUETTES, blank_image, placeholder_image, png_bytes, product_image

RED, BLUE, WHITE = (200, 30, 40), (40, 90, 200), (245, 245, 245)
BADGES = ("x-large", "16 fl oz", "vanilla")
SIZES = [(96, 96), (300, 300), (200, 320)]


def pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image).astype(np.int16)


def share_of(image: Image.Image, color: tuple[int, int, int], tol: int = 3) -> float:
    """Fraction of the pixels within ``tol`` of ``color`` in every channel."""
    return float(np.mean(np.all(np.abs(pixels(image) - color) <= tol, axis=-1)))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("silhouette", SILHOUETTES)
def test_every_silhouette_draws_at_the_requested_size(silhouette: str, size: tuple[int, int]) -> None:
    image = product_image(silhouette, RED, "Lumora", BADGES, size)
    assert image.mode == "RGB" and image.size == (size[1], size[0])
    assert np.asarray(image).shape == (*size, 3)


def test_silhouettes_are_all_different() -> None:
    drawn = {product_image(s, BLUE, "Lumora", BADGES, (128, 128)).tobytes() for s in SILHOUETTES}
    assert len(drawn) == len(SILHOUETTES)


@pytest.mark.parametrize("silhouette", SILHOUETTES)
def test_the_object_is_drawn_in_the_requested_colour(silhouette: str) -> None:
    red = product_image(silhouette, RED, "Lumora", BADGES, (256, 256))
    blue = product_image(silhouette, BLUE, "Lumora", BADGES, (256, 256))
    assert red.tobytes() != blue.tobytes()
    assert share_of(red, RED) > 0.03 and share_of(blue, BLUE) > 0.03
    assert share_of(red, BLUE) == 0.0


def test_a_white_object_stays_visible_on_the_white_background() -> None:
    image = product_image("shirt", WHITE, "", (), (128, 128))
    assert (pixels(image).sum(axis=-1) < 3 * 160).mean() > 0.01  # its outline


def test_no_colour_gives_a_muted_colour_of_the_brand() -> None:
    a = pixels(product_image("box", None, "Lumora", (), (128, 128)))
    b = pixels(product_image("box", None, "Kazebri", (), (128, 128)))
    assert not np.array_equal(a, b)
    assert np.array_equal(a, pixels(product_image("box", None, "Lumora", (), (128, 128))))


def test_badges_and_brand_change_the_picture() -> None:
    base = product_image("bottle", RED, "Lumora", (), (256, 256)).tobytes()
    assert product_image("bottle", RED, "Lumora", ["x-large"], (256, 256)).tobytes() != base
    assert product_image("bottle", RED, "Lumora", ["small"], (256, 256)).tobytes() != base
    assert product_image("bottle", RED, "Sunver", (), (256, 256)).tobytes() != base
    # any sequence of badges is accepted, and blank ones are ignored
    assert product_image("bottle", RED, "Lumora", ["x-large", " "], (256, 256)).tobytes() == (
        product_image("bottle", RED, "Lumora", ("x-large",), (256, 256)).tobytes()
    )


def test_same_arguments_give_the_same_png_bytes() -> None:
    first = png_bytes(product_image("watch", RED, "Lumora", BADGES, (200, 320)))
    assert png_bytes(product_image("watch", RED, "Lumora", list(BADGES), (200, 320))) == first
    decoded = Image.open(io.BytesIO(first))
    assert decoded.size == (320, 200) and not decoded.info.get("dpi") and not decoded.text
    assert np.array_equal(
        np.asarray(decoded.convert("RGB")), np.asarray(product_image("watch", RED, "Lumora", BADGES, (200, 320)))
    )


def test_pictures_are_the_same_in_another_process() -> None:
    code = (
        "import hashlib\n"
        "from rl4vlm_gym.envs.webshop.images import png_bytes, product_image, placeholder_image\n"
        "print(hashlib.sha256(png_bytes(product_image('lamp', None, 'Corsun', ('king', 'matte'), (256, 256)))"
        " + png_bytes(placeholder_image('Amazon Basics Bed Sheet Set', (128, 128)))).hexdigest())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = png_bytes(product_image("lamp", None, "Corsun", ("king", "matte"), (256, 256)))
    here += png_bytes(placeholder_image("Amazon Basics Bed Sheet Set", (128, 128)))
    assert done.stdout.strip() == hashlib.sha256(here).hexdigest()


def test_callers_get_copies_they_may_change() -> None:
    image = product_image("jar", RED, "Lumora", BADGES, (128, 128))
    image.paste((0, 0, 0), (0, 0, 128, 128))
    assert product_image("jar", RED, "Lumora", BADGES, (128, 128)).getpixel((0, 0)) == (255, 255, 255)
    card = placeholder_image("Some product", (128, 128))
    card.paste((0, 0, 0), (0, 0, 128, 128))
    assert placeholder_image("Some product", (128, 128)).getpixel((64, 64)) != (0, 0, 0)


def test_an_unknown_silhouette_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'spaceship'.*bottle"):
        product_image("spaceship", RED, "Lumora", (), (96, 96))


@pytest.mark.parametrize("size", [(96, 96), (300, 300), (200, 320), (64, 1024), (1024, 64)])
def test_placeholder_and_blank_sizes(size: tuple[int, int]) -> None:
    card = placeholder_image("Amazon Basics Lightweight Super Soft Microfiber Bed Sheet Set", size)
    assert card.mode == "RGB" and card.size == (size[1], size[0])
    assert len(np.unique(np.asarray(card).reshape(-1, 3), axis=0)) > 2  # pictogram and title
    blank = blank_image(size)
    assert blank.mode == "RGB" and blank.size == (size[1], size[0])
    assert blank.getextrema() == ((255, 255), (255, 255), (255, 255))


@pytest.mark.parametrize("size", [(64, 64), (96, 96), (160, 160), (300, 300), (200, 320), (64, 1024)])
def test_very_long_texts_do_not_raise(size: tuple[int, int]) -> None:
    long = "w" * 200
    words = " ".join(["supercalifragilistic"] * 10)
    image = product_image("bag", (240, 210, 40), long, [long, words, *BADGES * 5], size)
    assert image.size == (size[1], size[0])
    for title in (long, words, "", "   "):
        assert placeholder_image(title, size).size == (size[1], size[0])
    assert product_image("bag", None, "", [], size).size == (size[1], size[0])


# -- the shop's pictures of its products (pictures.product_picture) ----------------------------------


def colored_products(level: int = 2, seed: int = 0) -> list:
    from rl4vlm_gym.envs.webshop.shop import procedural_shop

    return [p for p in procedural_shop(level, seed).catalog.products if len(p.options.get("color", ())) >= 2]


def test_a_product_picture_shows_the_chosen_colour_and_the_first_one_before() -> None:
    from rl4vlm_gym.envs.webshop.pictures import product_picture
    from rl4vlm_gym.envs.webshop.vocab import COLORS

    for product in colored_products()[:12]:
        first, second = product.options["color"][:2]
        before = product_picture(product, (), (256, 256))
        chosen = product_picture(product, (("color", second),), (256, 256))
        assert share_of(before, COLORS[first]) > 0.03, (product.asin, first)
        assert share_of(chosen, COLORS[second]) > 0.03 and share_of(chosen, COLORS[first]) < 0.005, (product.asin, second)


def test_a_product_picture_shows_its_kind_brand_and_chosen_options() -> None:
    from rl4vlm_gym.envs.webshop.pictures import product_picture
    from rl4vlm_gym.envs.webshop.vocab import COLORS

    product = next(p for p in colored_products() if "size" in p.options)
    color, size = product.options["color"][0], product.options["size"][0]
    picture = product_picture(product, (("color", color), ("size", size)), (256, 256))
    # the silhouette of its type in the chosen colour, its brand, and the size as a chip
    assert picture.tobytes() == product_image(product.silhouette, COLORS[color], product.brand, (size,), (256, 256)).tobytes()
    assert picture.tobytes() != product_picture(product, (("color", color),), (256, 256)).tobytes()
    other = next(p for p in colored_products() if p.silhouette != product.silhouette)
    assert product_picture(other, (), (256, 256)).tobytes() != product_picture(product, (), (256, 256)).tobytes()


def test_product_pictures_depend_on_the_product_and_are_reproduced_by_the_catalog_seed() -> None:
    from rl4vlm_gym.envs.webshop.pictures import product_picture

    def digest(seed: int) -> list[str]:
        return [hashlib.sha256(png_bytes(product_picture(p, (), (128, 128)))).hexdigest() for p in colored_products(1, seed)[:20]]

    here = digest(0)
    assert len(set(here)) >= 15  # products of one catalog look different (brand, type, colour)
    assert digest(1) != here  # another catalog seed, other products
    code = (
        "import hashlib\n"
        "from rl4vlm_gym.envs.webshop.shop import procedural_shop\n"
        "from rl4vlm_gym.envs.webshop.images import png_bytes\n"
        "from rl4vlm_gym.envs.webshop.pictures import product_picture\n"
        "ps = [p for p in procedural_shop(1, 0).catalog.products if len(p.options.get('color', ())) >= 2][:20]\n"
        "print(' '.join(hashlib.sha256(png_bytes(product_picture(p, (), (128, 128)))).hexdigest() for p in ps))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == here


def test_real_products_get_a_placeholder_with_their_title() -> None:
    from rl4vlm_gym.envs.webshop.catalog import load_products
    from rl4vlm_gym.envs.webshop.pictures import product_picture

    record = {"asin": "B000000001", "name": "Amazon Basics Bed Sheet Set", "pricing": "$1.00"}
    product = load_products([record], {}, {}, np.random.default_rng(0), "t").products[0]
    picture = product_picture(product, (("color", "red"),), (128, 128))
    assert picture.tobytes() == placeholder_image("Amazon Basics Bed Sheet Set", (128, 128)).tobytes()
    assert picture.tobytes() != placeholder_image("Another Title", (128, 128)).tobytes()


# --- the held-out theme (the visual transfer axis) -----------------------------------------------


def test_held_out_theme_changes_all_but_the_product() -> None:
    from rl4vlm_gym.envs.webshop.images import THEMES

    assert tuple(THEMES) == ("default", "held-out")
    default = product_image("dress", BLUE, "Lumora", BADGES, (256, 256))
    held_out = product_image("dress", BLUE, "Lumora", BADGES, (256, 256), theme="held-out")
    assert default.tobytes() == product_image("dress", BLUE, "Lumora", BADGES, (256, 256), theme="default").tobytes()
    assert share_of(default, (255, 255, 255)) > 0.5 and share_of(held_out, (255, 255, 255)) < 0.01  # other paper
    assert share_of(held_out, THEMES["held-out"].background) > 0.4
    assert abs(share_of(held_out, BLUE, tol=8) - share_of(default, BLUE, tol=8)) < 0.02  # the product keeps its colour
    assert placeholder_image("A title", (128, 128), "held-out").tobytes() != placeholder_image("A title", (128, 128)).tobytes()
    assert np.array_equal(np.asarray(blank_image((8, 8), "held-out"))[0, 0], THEMES["held-out"].background)
    for call in (lambda: product_image("dress", BLUE, "L", (), (64, 64), theme="neon"), lambda: blank_image((8, 8), "neon")):
        with pytest.raises(ValueError, match="theme"):
            call()
