"""The product catalog: WebShop's raw product files turned into the products the shop sells.

One code path serves the real WebShop data and our procedural catalogs: :func:`load_products`
takes records in the schema of WebShop's ``items_shuffle*.json`` (plus the attribute and
instruction entries of ``items_ins_v2*.json`` and ``items_human_ins.json``) and does what
WebShop's ``engine.load_products`` does; the procedural generator emits records in that schema.
Where WebShop draws a product's price from its price range with the unseeded global ``random``,
we draw it from the catalog's own RNG, so a catalog seed fixes every price.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rl4vlm_gym.core import MissingDataError

__all__ = ["DATA_FILES", "Catalog", "Product", "find_data_files", "load_products", "read_data_files"]

DEFAULT_PRICE = 100.0  # WebShop's price of a product without pricing
_PRICE = re.compile(r"\$([\d,]+(?:\.\d+)?)")

# WebShop's file names: the 1,000-product subset first (WebShop's default), then the full catalog.
DATA_FILES = {
    "products": ("items_shuffle_1000.json", "items_shuffle.json"),
    "attributes": ("items_ins_v2_1000.json", "items_ins_v2.json"),
    "human": ("items_human_ins.json",),
}
DATA_URL = "https://github.com/princeton-nlp/WebShop#setup (setup.sh -d small|all)"


@dataclass(frozen=True)
class Product:
    """One product as WebShop's engine holds it (``Title``, ``BulletPoints``, ``options``, ...).

    Attributes:
        asin: the product id (lower-cased in actions: ``click[b06y3vldfb]``).
        title: ``Title`` (the scraped ``name``).
        query: the search query the product was scraped under, lower-cased and stripped.
        category: WebShop's top category (``beauty``, ``fashion``, ``garden``, ``grocery``,
            ``electronics``).
        product_category: the ``›``-separated category path.
        description: ``Description``.
        bullet_points: ``BulletPoints``.
        pricing: the parsed price or price range (at most two floats).
        price_text: ``Price`` as shown: ``"$a"`` or ``"$a to $b"``.
        price: the price paid, drawn once from ``pricing`` by the catalog's RNG.
        options: option name -> values, in the file's order (``{"color": ("blue", ...)}``).
        option_images: (option name, value) -> image URL, where the file gives one.
        attributes: ``Attributes`` from ``items_ins_v2`` (``("DUMMY_ATTR",)`` when missing; an
            empty list stays empty, as in WebShop).
        main_image: ``MainImage`` (a URL; offline we draw the picture instead).
        rating: ``Rating`` (WebShop master loads no reviews, so it is "N.A.").
        instruction: the synthetic instruction of ``items_ins_v2``, if any.
        instruction_attributes: the attributes that instruction asks for.
        human: WebShop's human instructions for this product (``items_human_ins``).
        product_type: the product's kind in a procedural catalog (``"shampoo"``), else ``None``.
        silhouette: how a procedural product is drawn (``"bottle"``), else ``None``.
        brand: the brand (drawn on the product image).
    """

    asin: str
    title: str
    query: str
    category: str
    product_category: str
    description: str
    bullet_points: tuple[str, ...]
    pricing: tuple[float, ...]
    price_text: str
    price: float
    options: Mapping[str, tuple[str, ...]]
    option_images: Mapping[tuple[str, str], str]
    attributes: tuple[str, ...]
    main_image: str
    rating: str = "N.A."
    instruction: str | None = None
    instruction_attributes: tuple[str, ...] = ()
    human: tuple[Mapping[str, Any], ...] = ()
    product_type: str | None = None
    silhouette: str | None = None
    brand: str = ""


@dataclass
class Catalog:
    """The products of one shop, in file order, with their index by ASIN."""

    products: tuple[Product, ...]
    source: str
    by_asin: dict[str, Product] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_asin = {p.asin: p for p in self.products}

    def __len__(self) -> int:
        return len(self.products)


def _pricing(text: Any) -> tuple[float, ...]:
    """WebShop's ``"$19.99$27.99"`` -> (19.99, 27.99); ``""`` -> (); at most two prices."""
    if not isinstance(text, str):
        return ()
    return tuple(float(m.replace(",", "")) for m in _PRICE.findall(text))[:2]


def _price_text(pricing: Sequence[float]) -> str:
    if not pricing:
        return f"${DEFAULT_PRICE:.2f}"
    if len(pricing) == 1:
        return f"${pricing[0]:.2f}"
    return f"${pricing[0]:.2f} to ${pricing[1]:.2f}"


def _options(raw: Any) -> tuple[dict[str, tuple[str, ...]], dict[tuple[str, str], str]]:
    """WebShop's ``customization_options`` -> ({name: values}, {(name, value): image url})."""
    options: dict[str, tuple[str, ...]] = {}
    images: dict[tuple[str, str], str] = {}
    if not isinstance(raw, Mapping):
        return options, images
    for name, entries in raw.items():
        if not entries or not isinstance(entries, list):
            continue  # {"Color": null}: WebShop skips it
        key = str(name).lower()
        values = []
        for entry in entries:
            if not isinstance(entry, Mapping) or entry.get("value") is None:
                continue
            value = str(entry["value"]).strip().replace("/", " | ").lower()
            values.append(value)
            if entry.get("image"):
                images[(key, value)] = str(entry["image"])
        if values:
            options[key] = tuple(dict.fromkeys(values))
    return options, images


def _attributes(asin: str, entry: Any) -> tuple[str, ...]:
    """WebShop's ``Attributes``: the entry's list as it is (an empty one stays empty), or
    ``("DUMMY_ATTR",)`` when the product has no entry or the entry no ``attributes``."""
    if not isinstance(entry, Mapping) or entry.get("attributes") is None:
        return ("DUMMY_ATTR",)
    raw = entry["attributes"]
    if not isinstance(raw, list):
        raise ValueError(f"items_ins_v2 entry of {asin}: 'attributes' is a {type(raw).__name__}, expected a list")
    return tuple(str(a) for a in raw)


def load_products(
    records: Iterable[Mapping[str, Any]],
    attributes: Mapping[str, Mapping[str, Any]],
    human: Mapping[str, Sequence[Mapping[str, Any]]] | None,
    rng: np.random.Generator,
    source: str,
) -> Catalog:
    """Build a catalog as WebShop's ``load_products`` + ``generate_product_prices`` do.

    Records with a duplicate ASIN, the ASIN ``"nan"`` or an ASIN longer than 10 characters are
    skipped, as in WebShop. A product's price is ``pricing[0]`` for one price and
    ``uniform(lo, hi)`` for a range, drawn from ``rng`` in catalog order; 100 without pricing.
    """
    products: list[Product] = []
    seen: set[str] = set()
    for record in records:
        asin = str(record.get("asin", ""))
        if not asin or asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        pricing = _pricing(record.get("pricing"))
        if len(pricing) == 2:
            price = float(rng.uniform(pricing[0], pricing[1]))
        else:
            price = pricing[0] if pricing else DEFAULT_PRICE
        options, option_images = _options(record.get("customization_options"))
        extra = attributes.get(asin, {})
        images = record.get("images") or [""]
        products.append(
            Product(
                asin=asin,
                title=str(record.get("name", "")),
                query=str(record.get("query", "")).lower().strip(),
                category=str(record.get("category", "")),
                product_category=str(record.get("product_category", "")),
                description=str(record.get("full_description") or ""),
                bullet_points=tuple(str(b) for b in record.get("small_description") or ()),
                pricing=pricing,
                price_text=_price_text(pricing),
                price=round(price, 2),
                options=options,
                option_images=option_images,
                attributes=_attributes(asin, extra),
                main_image=str(images[0]),
                instruction=extra.get("instruction"),
                instruction_attributes=tuple(extra.get("instruction_attributes") or ()),
                human=tuple((human or {}).get(asin, ())),
                product_type=record.get("product_type"),
                silhouette=record.get("silhouette"),
                brand=str(record.get("brand") or ""),
            )
        )
    return Catalog(tuple(products), source)


def find_data_files(data_dir: str | os.PathLike[str] | None) -> dict[str, Path]:
    """Locate WebShop's files in ``data_dir`` (else ``$WEBSHOP_DATA``), or raise MissingDataError."""
    tried: list[str] = []
    folder = data_dir if data_dir is not None else os.environ.get("WEBSHOP_DATA")
    if folder is None:
        raise MissingDataError(
            "WebShop's product files were not found: pass data_dir=... or set $WEBSHOP_DATA to the folder "
            f"holding {DATA_FILES['products'][0]}, {DATA_FILES['attributes'][0]} and "
            f"{DATA_FILES['human'][0]} (download: {DATA_URL})"
        )
    root = Path(folder).expanduser()
    found: dict[str, Path] = {}
    for role, names in DATA_FILES.items():
        for name in names:
            candidate = root / name
            tried.append(str(candidate))
            if candidate.is_file():
                found[role] = candidate
                break
    missing = [role for role in DATA_FILES if role not in found]
    if missing:
        raise MissingDataError(
            f"WebShop data in {root} lacks the {', '.join(missing)} file(s); looked for: {', '.join(tried)}. "
            f"Pass data_dir=... or set $WEBSHOP_DATA (download: {DATA_URL})"
        )
    return found


def read_data_files(files: Mapping[str, Path]) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Read the three JSON files, with an error that names a malformed one."""
    loaded: dict[str, Any] = {}
    expected = {"products": list, "attributes": dict, "human": dict}
    for role, path in files.items():
        try:
            with path.open(encoding="utf-8") as f:
                value = json.load(f)
        except (OSError, ValueError) as err:
            raise ValueError(f"WebShop {role} file {path} cannot be read as JSON: {err}") from err
        if not isinstance(value, expected[role]):
            raise ValueError(
                f"WebShop {role} file {path} holds a JSON {type(value).__name__}, expected a {expected[role].__name__}"
            )
        loaded[role] = value
    return loaded["products"], loaded["attributes"], loaded["human"]
