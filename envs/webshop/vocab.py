"""The words of the procedural catalog: WebShop's five categories and 25 product types.

Each product type lists the attributes a product of it may have (WebShop's attribute phrases:
"sulfate free", "long lasting"), its option pools and its price band. Two values of one pool, and
two attributes of one type, never score above 85 in WebShop's ``token_set_ratio`` (a test checks
it), so buying the wrong option or a product lacking an attribute really costs reward.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BRAND_SYLLABLES", "COLORS", "EXTRA_OPTIONS", "SIZES", "TYPES", "ProductType"]


@dataclass(frozen=True)
class ProductType:
    """One kind of product.

    Attributes:
        name: the product noun phrase ("shampoo", "running shoes"); its words are the title nouns.
        category: WebShop's top category.
        path: the category path (``product_category``), ``›``-separated in the records.
        silhouette: how its image is drawn (see ``images.SILHOUETTES``).
        attributes: attribute phrases products of this type may have.
        sizes: the key of its size pool in ``SIZES``.
        extra: the key of its third option pool in ``EXTRA_OPTIONS`` (``None``: colour and size only).
        price: (low, high) dollars.
        features: phrases for titles and bullet points.
    """

    name: str
    category: str
    path: tuple[str, ...]
    silhouette: str
    attributes: tuple[str, ...]
    sizes: str
    extra: str | None
    price: tuple[float, float]
    features: tuple[str, ...]


# Colour names with the RGB the product image uses; no two share a word.
COLORS: dict[str, tuple[int, int, int]] = {
    "black": (30, 30, 30), "white": (245, 245, 245), "red": (200, 30, 40), "blue": (40, 90, 200),
    "green": (40, 150, 60), "grey": (128, 128, 128), "pink": (240, 130, 170), "purple": (120, 60, 160),
    "yellow": (240, 210, 40), "orange": (240, 130, 30), "brown": (120, 75, 40), "beige": (225, 205, 165),
    "teal": (30, 130, 130), "ivory": (250, 245, 225), "maroon": (120, 20, 40), "khaki": (190, 175, 120),
    "silver": (190, 195, 200), "gold": (212, 175, 55), "coral": (250, 120, 100), "olive": (110, 120, 40),
    "lavender": (180, 160, 220), "turquoise": (60, 200, 200), "burgundy": (130, 20, 50), "charcoal": (60, 65, 70),
}  # fmt: skip

SIZES: dict[str, tuple[str, ...]] = {
    "apparel": ("xs", "small", "medium", "large", "xl", "xxl"),
    "shoes": ("6", "7", "8", "9", "10", "11", "12"),
    "volume": ("60ml", "125ml", "250ml", "500ml", "1 liter"),
    "weight": ("5.3 oz", "12 oz", "1 lb", "2.2 lb", "5 lb"),
    "count": ("single", "twin pack", "family bundle", "value box", "bulk case"),
    "furniture": ("compact", "regular", "oversized", "king", "queen"),
    "length": ("3 ft", "6 ft", "10 ft", "15 ft"),
    "device": ("38mm", "41mm", "45mm", "49mm"),
}  # fmt: skip

EXTRA_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "scent": ("scent", ("meadow breeze", "fresh citrus", "coconut", "unscented", "cedar musk", "ocean mist")),
    "flavor": ("flavor name", ("vanilla", "cocoa crunch", "sea salt", "cinnamon", "original", "spicy mango")),
    "style": ("style", ("wireless", "corded", "pro", "lite", "sport edition")),
    "material": ("material type", ("cotton", "polyester", "wool blend", "linen", "twill weave")),
    "finish": ("finish type", ("matte", "glossy", "satin", "brushed")),
}  # fmt: skip

# Brand names are drawn as two syllables from this list (deterministic, pronounceable).
BRAND_SYLLABLES = (
    "lu", "mo", "ra", "vi", "ka", "ze", "no", "ta", "bri", "so", "fen", "dor", "mi", "quo", "la", "xen",
    "pel", "cor", "ami", "sun", "ver", "ost", "hal", "tri",
)  # fmt: skip

_BEAUTY = ("Beauty & Personal Care",)
_FASHION = ("Clothing, Shoes & Jewelry",)
_GARDEN = ("Home & Kitchen",)
_GROCERY = ("Grocery & Gourmet Food",)
_ELECTRONICS = ("Electronics",)

TYPES: tuple[ProductType, ...] = (
    # beauty
    ProductType("shampoo", "beauty", _BEAUTY + ("Hair Care", "Shampoo & Conditioner"), "bottle",
                ("sulfate free", "paraben free", "argan oil", "hair growth", "color safe", "dry scalp", "tea tree",
                 "cruelty free"), "volume", "scent", (6, 45), ("salon formula", "daily care", "deep cleansing")),
    ProductType("face cream", "beauty", _BEAUTY + ("Skin Care", "Face", "Moisturizers"), "jar",
                ("hyaluronic acid", "anti aging", "fragrance free", "sensitive skin", "vitamin c", "spf 30",
                 "oil control"), "weight", "scent", (9, 80), ("night repair", "hydrating", "lightweight")),
    ProductType("lipstick", "beauty", _BEAUTY + ("Makeup", "Lips", "Lipstick"), "tube",
                ("long lasting", "matte finish", "vegan formula", "moisturizing shea", "smudge proof"),
                "count", "finish", (5, 35), ("creamy", "high pigment", "all day wear")),
    ProductType("nail polish", "beauty", _BEAUTY + ("Makeup", "Nails", "Nail Polish"), "bottle",
                ("quick dry", "chip resistant", "non toxic", "gel effect", "high shine"),
                "count", "finish", (4, 20), ("salon quality", "easy apply", "bold color")),
    ProductType("eau de parfum", "beauty", _BEAUTY + ("Fragrance", "Women", "Eau de Parfum"), "bottle",
                ("long lasting", "travel spray", "floral notes", "woody accord", "gift ready"),
                "volume", "scent", (25, 160), ("signature scent", "elegant bottle", "evening wear")),
    # fashion
    ProductType("t-shirt", "fashion", _FASHION + ("Men", "Clothing", "Shirts", "T-Shirts"), "shirt",
                ("machine wash", "short sleeve", "crew neck", "moisture wicking", "relaxed fit", "tagless label"),
                "apparel", "material", (8, 40), ("everyday basic", "soft touch", "breathable knit")),
    ProductType("running shoes", "fashion", _FASHION + ("Women", "Shoes", "Athletic", "Running"), "shoe",
                ("rubber sole", "lace up", "arch support", "slip resistant", "memory foam", "mesh upper"),
                "shoes", None, (30, 150), ("road running", "lightweight trainer", "cushioned ride")),
    ProductType("summer dress", "fashion", _FASHION + ("Women", "Clothing", "Dresses"), "dress",
                ("v neck", "pocket design", "button closure", "hand wash", "floral print", "high waist"),
                "apparel", "material", (18, 70), ("flowy hem", "beach casual", "midi length")),
    ProductType("baseball cap", "fashion", _FASHION + ("Men", "Accessories", "Hats & Caps"), "cap",
                ("adjustable strap", "embroidered logo", "sun protection", "curved brim", "breathable mesh"),
                "apparel", None, (9, 35), ("classic fit", "outdoor sport", "unstructured crown")),
    ProductType("hiking backpack", "fashion", _FASHION + ("Luggage & Travel Gear", "Backpacks"), "backpack",
                ("water resistant", "laptop sleeve", "padded straps", "hydration compatible", "usb charging port"),
                "count", None, (25, 120), ("day pack", "trail ready", "multi compartment")),
    # garden (home & kitchen)
    ProductType("office chair", "garden", _GARDEN + ("Furniture", "Home Office Furniture", "Chairs"), "chair",
                ("lumbar support", "height adjustable", "swivel base", "ergonomic design", "easy assembly",
                 "padded armrests"), "furniture", "material", (60, 420), ("home office", "mesh back", "task seating")),
    ProductType("coffee table", "garden", _GARDEN + ("Furniture", "Living Room Furniture", "Tables"), "table",
                ("solid wood", "storage shelf", "tempered glass", "mid century", "easy assembly"),
                "furniture", "finish", (70, 500), ("living room", "rustic look", "modern style")),
    ProductType("table lamp", "garden", _GARDEN + ("Lighting & Ceiling Fans", "Lamps & Shades"), "lamp",
                ("dimmable light", "usb charging port", "touch control", "linen shade", "bulb included"),
                "furniture", "finish", (20, 110), ("bedside light", "warm glow", "nightstand")),
    ProductType("throw pillow", "garden", _GARDEN + ("Home Décor", "Decorative Pillows"), "pillow",
                ("hidden zipper", "machine wash", "insert included", "faux fur", "double sided"),
                "furniture", "material", (10, 45), ("sofa accent", "soft cushion", "cozy texture")),
    ProductType("blackout curtains", "garden", _GARDEN + ("Home Décor", "Window Treatments", "Curtains"), "curtain",
                ("thermal insulated", "noise reducing", "grommet top", "room darkening", "wrinkle free"),
                "length", "material", (15, 90), ("bedroom window", "energy saving", "privacy panel")),
    # grocery
    ProductType("coffee beans", "grocery", _GROCERY + ("Beverages", "Coffee", "Whole Coffee Beans"), "bag",
                ("single origin", "dark roast", "fair trade", "organic certified", "low acid"),
                "weight", "flavor", (8, 45), ("whole bean", "rich aroma", "small batch")),
    ProductType("green tea", "grocery", _GROCERY + ("Beverages", "Tea", "Green Tea"), "box",
                ("caffeine free", "loose leaf", "antioxidant rich", "organic certified", "individually wrapped"),
                "count", "flavor", (4, 30), ("calming blend", "morning cup", "premium leaves")),
    ProductType("granola bars", "grocery", _GROCERY + ("Snack Foods", "Bars", "Granola Bars"), "box",
                ("gluten free", "high protein", "non gmo", "low sugar", "plant based"),
                "count", "flavor", (5, 35), ("on the go", "crunchy oats", "lunchbox snack")),
    ProductType("olive oil", "grocery", _GROCERY + ("Pantry Staples", "Oils", "Olive Oil"), "bottle",
                ("extra virgin", "cold pressed", "first harvest", "kosher certified", "organic certified"),
                "volume", None, (9, 60), ("mediterranean", "peppery finish", "cooking essential")),
    ProductType("hot sauce", "grocery", _GROCERY + ("Condiments & Salad Dressings", "Hot Sauce"), "bottle",
                ("extra hot", "small batch", "no preservatives", "keto friendly", "vegan recipe"),
                "volume", "flavor", (4, 25), ("fiery kick", "bbq partner", "chef crafted")),
    # electronics
    ProductType("wireless headphones", "electronics", _ELECTRONICS + ("Headphones", "Over-Ear Headphones"),
                "headphones", ("noise cancelling", "bluetooth 5.3", "long battery life", "foldable design",
                               "built in microphone"), "count", "style", (25, 300),
                ("studio sound", "deep bass", "travel case")),
    ProductType("bluetooth speaker", "electronics", _ELECTRONICS + ("Portable Audio & Video", "Speakers"), "speaker",
                ("waterproof rating", "long battery life", "stereo pairing", "built in microphone", "bass boost"),
                "count", "style", (20, 200), ("outdoor party", "360 sound", "rugged build")),
    ProductType("phone case", "electronics", _ELECTRONICS + ("Cell Phones & Accessories", "Cases"), "phone",
                ("shockproof bumper", "wireless charging compatible", "slim fit", "kickstand stand",
                 "raised edges"), "device", "finish", (6, 40), ("drop protection", "grip texture", "clear back")),
    ProductType("usb c cable", "electronics", _ELECTRONICS + ("Computer Accessories", "Cables"), "cable",
                ("fast charging", "braided nylon", "data transfer", "tangle free", "gold plated"),
                "length", None, (5, 25), ("durable cord", "universal fit", "charging lead")),
    ProductType("smart watch", "electronics", _ELECTRONICS + ("Wearable Technology", "Smartwatches"), "watch",
                ("heart rate monitor", "sleep tracking", "gps built in", "water resistant", "always on display"),
                "device", "style", (40, 400), ("fitness tracker", "notifications", "all day battery")),
)  # fmt: skip
