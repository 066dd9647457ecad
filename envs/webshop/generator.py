"""The procedural catalog: seeded products written in WebShop's own file schema.

:func:`generate` returns what WebShop's data files hold: a list of ``items_shuffle`` records and
an ``items_ins_v2`` mapping (attributes, and a synthetic instruction for goal products), so the
shop loads them with the same :func:`~rl4vlm_gym.envs.webshop.catalog.load_products` as the real
files. Two extra keys, ``product_type`` and ``silhouette``, say how to draw a product and let
the reward use the known product type; WebShop's loader would ignore them.

Products come in families: a goal product with an instruction and ``twins`` look-alikes of the
same type and options, each lacking one attribute the instruction names. The rest of the catalog
is filled with such families over all 25 product types.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.envs.webshop.levels import ShopLevel
from rl4vlm_gym.envs.webshop.vocab import BRAND_SYLLABLES, COLORS, EXTRA_OPTIONS, SIZES, TYPES, ProductType

__all__ = ["generate", "write_files"]

_ASIN_CHARS = np.array(list("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"))
_TEMPLATES = (
    "i need {attrs} {type}",
    "find me {attrs} {type}",
    "i am looking for {attrs} {type}",
    "i want to buy {attrs} {type}",
)
_IMAGE_URL = "rl4vlm-gym://product/{asin}"  # drawn by the shop (no remote images offline)


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _pick(rng: np.random.Generator, pool: tuple[str, ...] | list[str], k: int) -> list[str]:
    k = min(k, len(pool))
    return [pool[i] for i in sorted(rng.choice(len(pool), k, replace=False))]


class _Writer:
    """Writes families of records; one instance per catalog (it tracks used ASINs and titles)."""

    def __init__(self, level: ShopLevel, rng: np.random.Generator) -> None:
        self.level, self.rng = level, rng
        self.asins: set[str] = set()
        self.titles: set[str] = set()
        self.records: list[dict[str, Any]] = []
        self.instructions: dict[str, dict[str, Any]] = {}

    def asin(self) -> str:
        while True:
            asin = "B0" + "".join(self.rng.choice(_ASIN_CHARS, 8))
            if asin not in self.asins:
                self.asins.add(asin)
                return asin

    def brand(self) -> str:
        a, b = self.rng.choice(len(BRAND_SYLLABLES), 2)
        return (BRAND_SYLLABLES[a] + BRAND_SYLLABLES[b]).capitalize()

    def options(self, kind: ProductType) -> dict[str, list[str]]:
        """Option name -> values (title-cased as scraped): colour, then size, then the third kind."""
        pools: list[tuple[str, tuple[str, ...]]] = [("Color", tuple(COLORS)), ("Size", SIZES[kind.sizes])]
        if kind.extra is not None:
            name, values = EXTRA_OPTIONS[kind.extra]
            pools.append((name.title(), values))
        chosen: dict[str, list[str]] = {}
        for name, pool in pools[: self.level.options]:
            k = int(self.rng.integers(2, min(5, len(pool)) + 1))
            chosen[name] = [v if name == "Size" else v.title() for v in _pick(self.rng, pool, k)]
        return chosen

    def family(self, kind: ProductType) -> None:
        rng, level = self.rng, self.level
        n_attrs = int(rng.integers(max(level.goal_attributes, 2), min(len(kind.attributes), 5) + 1))
        attributes = _pick(rng, kind.attributes, n_attrs)
        wanted = _pick(rng, attributes, level.goal_attributes)
        options = self.options(kind)
        low, high = kind.price
        price = float(np.round(rng.uniform(low, high), 2))
        goal = self.record(kind, attributes, options, price)
        template = _TEMPLATES[int(rng.integers(len(_TEMPLATES)))]
        self.instructions[goal["asin"]] = {
            "attributes": attributes,
            "instruction": template.format(attrs=_join(wanted), type=kind.name),
            "instruction_attributes": wanted,
        }
        for i in range(level.twins):
            missing = wanted[i % len(wanted)]
            spare = [a for a in kind.attributes if a not in attributes]
            twin_attrs = [a for a in attributes if a != missing]
            if spare:
                twin_attrs.append(spare[int(rng.integers(len(spare)))])
            twin_price = float(np.round(price * rng.uniform(0.8, 1.2), 2))
            twin = self.record(kind, twin_attrs, options, twin_price)
            self.instructions[twin["asin"]] = {"attributes": twin_attrs}

    def record(self, kind: ProductType, attributes: list[str], options: dict[str, list[str]], price: float) -> dict[str, Any]:
        rng = self.rng
        brand = self.brand()
        features = _pick(rng, kind.features, 2)
        shown = _pick(rng, attributes, min(3, len(attributes)))
        title = f"{brand} {kind.name.title()} {' '.join(a.title() for a in shown)}, {features[0].title()}"
        while title in self.titles:  # a repeated title would make a title search ambiguous
            brand = self.brand()
            title = f"{brand} {kind.name.title()} {' '.join(a.title() for a in shown)}, {features[0].title()}"
        self.titles.add(title)
        asin = self.asin()
        if rng.random() < 0.3:
            pricing = f"${price:.2f}${price * rng.uniform(1.1, 1.5):.2f}"
        else:
            pricing = f"${price:.2f}"
        bullets = [f"{a.capitalize()}: {brand}'s {kind.name} is {a}." for a in attributes]
        bullets.append(f"{features[-1].capitalize()} for every day.")
        customization: dict[str, Any] = {}
        for name, values in options.items():
            entries = []
            for value in values:
                entry: dict[str, Any] = {"is_selected": False, "value": value}
                if name == "Color":
                    entry.update(url="", price_string="", price=None,
                                 image=_IMAGE_URL.format(asin=asin) + f"?color={value.lower()}")  # fmt: skip
                else:
                    entry.update(is_available=True, asin="")
                entries.append(entry)
            customization[name] = entries
        record = {
            "name": title,
            "product_information": {"Brand": brand},
            "brand": brand,
            "brand_url": "",
            "full_description": (
                f"The {brand} {kind.name} brings {_join(attributes)}. "
                f"{features[0].capitalize()}, {features[-1]}, made for everyday use."
            ),
            "pricing": pricing,
            "list_price": "",
            "availability_quantity": None,
            "availability_status": "In Stock.",
            "images": [_IMAGE_URL.format(asin=asin)],
            "product_category": " › ".join(kind.path),
            "average_rating": "",
            "small_description": bullets,
            "total_reviews": "",
            "total_answered_questions": "",
            "customization_options": customization or "",
            "seller_id": "",
            "seller_name": "",
            "fulfilled_by_amazon": None,
            "fast_track_message": "",
            "aplus_present": None,
            "asin": asin,
            "category": kind.category,
            "query": kind.name,
            "page": 1,
            "small_description_old": "",
            "product_type": kind.name,
            "silhouette": kind.silhouette,
        }
        self.records.append(record)
        return record


def generate(level: ShopLevel, rng: np.random.Generator) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """``level.products`` records and their ``items_ins_v2`` entries, in a shuffled catalog order."""
    writer = _Writer(level, rng)
    family = 1 + level.twins
    while len(writer.records) + family <= level.products:
        writer.family(TYPES[int(rng.integers(len(TYPES)))])
    while len(writer.records) < level.products:  # fill up with products no goal asks for
        kind = TYPES[int(rng.integers(len(TYPES)))]
        attributes = _pick(rng, kind.attributes, int(rng.integers(2, 5)))
        product = writer.record(kind, attributes, writer.options(kind), float(np.round(rng.uniform(*kind.price), 2)))
        writer.instructions[product["asin"]] = {"attributes": attributes}
    order = rng.permutation(len(writer.records))
    return [writer.records[i] for i in order], writer.instructions


def write_files(folder: Any, level: ShopLevel, rng: np.random.Generator, hints: bool = True) -> None:
    """Write a procedural catalog as WebShop's three data files.

    ``items_human_ins.json`` gets one instruction per goal product, in the human entries' form
    (plain option values). ``hints=False`` drops our ``product_type`` and ``silhouette`` keys, so
    the files look like real WebShop data to the loader (tests use it; users can try their tools).
    """
    import json
    from pathlib import Path

    records, instructions = generate(level, rng)
    human: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        entry = instructions[record["asin"]]
        if "instruction" not in entry:
            continue
        options = record["customization_options"] or {}
        values = [entries[0]["value"].lower() for entries in options.values()]
        text = entry["instruction"] + (" in " + ", ".join(values) if values else "") + "."
        human[record["asin"]] = [{
            "asin": record["asin"], "instruction": text, "attributes": entry["attributes"],
            "instruction_attributes": entry["instruction_attributes"],
            "options": [f"{name.lower()}: {value}" for name, value in zip(options, values, strict=True)],
            "instruction_options": values,
        }]  # fmt: skip
    if not hints:
        for record in records:
            record.pop("product_type", None)
            record.pop("silhouette", None)
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    (root / "items_shuffle_1000.json").write_text(json.dumps(records), encoding="utf-8")
    (root / "items_ins_v2_1000.json").write_text(json.dumps(instructions), encoding="utf-8")
    (root / "items_human_ins.json").write_text(json.dumps(human), encoding="utf-8")
