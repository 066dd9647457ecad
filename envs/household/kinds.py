"""What exists in a household: ALFRED's receptacle and object types, their properties, and rooms.

Names are the lowercase type names ALFWorld prints ("countertop", "sinkbasin", "alarmclock").
The properties follow ALFRED's object metadata as ALFWorld's PDDL uses it: which objects can be
picked up, cleaned in a sink basin, heated in a microwave, cooled in a fridge, switched on or
sliced, which receptacles open, and which object kinds each receptacle kind can hold
(``canContain``). The rooms are ALFRED's four scene kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["APPLIANCES", "LAMPS", "LOOKALIKES", "OBJECTS", "RECEPTACLES", "ROOMS", "TASK_OBJECTS", "ObjectKind", "ReceptacleKind", "Room"]


@dataclass(frozen=True)
class ObjectKind:
    """A kind of object and what can be done with it."""

    name: str
    pickupable: bool = True
    cleanable: bool = False
    heatable: bool = False
    coolable: bool = False
    toggleable: bool = False
    sliceable: bool = False
    holds_things: bool = False
    """A receptacle object (bowl, mug, ...): ALFWorld's "This is a normal bowl 1. In it, you see nothing." """
    sharp: bool = False
    """Can slice sliceable objects (knife, butterknife)."""

    def treatable(self, verb: str) -> bool:
        """Whether ``clean``, ``heat`` or ``cool`` (an appliance's verb) applies to this kind."""
        return {"clean": self.cleanable, "heat": self.heatable, "cool": self.coolable}[verb]


@dataclass(frozen=True)
class ReceptacleKind:
    """A kind of receptacle: whether it opens, and which object kinds it can hold."""

    name: str
    contains: frozenset[str]
    openable: bool = False
    appliance: str | None = None
    """``"clean"``, ``"heat"`` or ``"cool"`` for the sink basin, microwave and fridge."""


def _objects(*kinds: ObjectKind) -> MappingProxyType[str, ObjectKind]:
    return MappingProxyType({kind.name: kind for kind in kinds})


O = ObjectKind
OBJECTS = _objects(
    # food
    O("apple", cleanable=True, heatable=True, coolable=True, sliceable=True),
    O("bread", heatable=True, coolable=True, sliceable=True),
    O("egg", cleanable=True, heatable=True, coolable=True, sliceable=True),
    O("lettuce", cleanable=True, coolable=True, sliceable=True),
    O("potato", cleanable=True, heatable=True, coolable=True, sliceable=True),
    O("tomato", cleanable=True, heatable=True, coolable=True, sliceable=True),
    # dishes and cookware
    O("bowl", cleanable=True, coolable=True, holds_things=True),
    O("cup", cleanable=True, heatable=True, coolable=True, holds_things=True),
    O("mug", cleanable=True, heatable=True, coolable=True, holds_things=True),
    O("plate", cleanable=True, heatable=True, coolable=True, holds_things=True),
    O("pan", cleanable=True, coolable=True, holds_things=True),
    O("pot", cleanable=True, coolable=True, holds_things=True),
    O("kettle", cleanable=True),
    O("winebottle", coolable=True),
    # utensils
    O("butterknife", cleanable=True, sharp=True),
    O("knife", cleanable=True, sharp=True),
    O("fork", cleanable=True),
    O("spoon", cleanable=True),
    O("ladle", cleanable=True),
    O("spatula", cleanable=True),
    O("dishsponge", cleanable=True),
    O("peppershaker"),
    O("saltshaker"),
    O("soapbottle"),
    # bathroom
    O("cloth", cleanable=True),
    O("soapbar", cleanable=True),
    O("candle"),
    O("spraybottle"),
    O("toiletpaper"),
    O("towel"),
    O("handtowel"),
    # bedroom and living room
    O("alarmclock"),
    O("book"),
    O("cd"),
    O("cellphone"),
    O("creditcard"),
    O("keychain"),
    O("laptop"),
    O("newspaper"),
    O("pen"),
    O("pencil"),
    O("pillow"),
    O("remotecontrol"),
    O("statue"),
    O("vase"),
    O("watch"),
    O("tissuebox"),
    # lamps: switched on with "use", never carried
    O("desklamp", pickupable=False, toggleable=True),
    O("floorlamp", pickupable=False, toggleable=True),
)
del O

LAMPS = ("desklamp", "floorlamp")

_SMALL = frozenset(
    {"alarmclock", "book", "cd", "cellphone", "creditcard", "keychain", "pen", "pencil", "remotecontrol", "watch",
     "statue", "vase", "newspaper", "laptop", "tissuebox", "candle", "spraybottle", "soapbottle"}
)  # fmt: skip
_FOOD = frozenset({"apple", "bread", "egg", "lettuce", "potato", "tomato"})
_DISHES = frozenset({"bowl", "cup", "mug", "plate"})
_COOKWARE = frozenset({"pan", "pot", "kettle"})
_UTENSILS = frozenset({"butterknife", "knife", "fork", "spoon", "ladle", "spatula"})
_KITCHEN_SMALL = frozenset({"dishsponge", "peppershaker", "saltshaker", "soapbottle", "winebottle"})
_KITCHEN = _FOOD | _DISHES | _COOKWARE | _UTENSILS | _KITCHEN_SMALL
_BATH = frozenset({"cloth", "soapbar", "candle", "spraybottle", "toiletpaper", "towel", "handtowel", "soapbottle",
                   "tissuebox"})  # fmt: skip
_SOFT = frozenset({"pillow", "book", "laptop", "cellphone", "remotecontrol", "keychain", "creditcard", "newspaper",
                   "cd"})  # fmt: skip
_TABLE = _KITCHEN | _SMALL | _BATH | {"pillow"} | set(LAMPS)

LOOKALIKES: tuple[frozenset[str], ...] = (
    _FOOD,
    _DISHES,
    _COOKWARE,
    _UTENSILS,
    frozenset({"alarmclock", "cellphone", "remotecontrol", "laptop", "cd", "creditcard", "keychain", "watch"}),
    frozenset({"book", "newspaper", "pen", "pencil"}),
    frozenset({"statue", "vase", "candle"}),
    frozenset({"cloth", "soapbar", "soapbottle", "spraybottle", "towel", "handtowel", "toiletpaper", "tissuebox"}),
    frozenset({"peppershaker", "saltshaker", "winebottle", "dishsponge"}),
)
"""Groups of kinds easy to confuse; a level's distractors come from the target's group."""


def _receptacles(*kinds: ReceptacleKind) -> MappingProxyType[str, ReceptacleKind]:
    return MappingProxyType({kind.name: kind for kind in kinds})


R = ReceptacleKind
RECEPTACLES = _receptacles(
    R("countertop", _TABLE - {"floorlamp", "desklamp"}),
    R("diningtable", _TABLE - {"floorlamp"}),
    R("coffeetable", _SMALL | _DISHES | _SOFT | {"desklamp"}),
    R("sidetable", _SMALL | _DISHES | _SOFT | _BATH | set(LAMPS)),
    R("desk", _SMALL | _DISHES | _SOFT | {"desklamp"}),
    R("dresser", _SMALL | _DISHES | _SOFT | _BATH | {"desklamp"}),
    R("shelf", _SMALL | _DISHES | _BATH | _KITCHEN_SMALL | {"kettle", "pot", "pan"}),
    R("tvstand", _SMALL | {"desklamp"}),
    R("armchair", _SOFT),
    R("sofa", _SOFT),
    R("bed", _SOFT),
    R("cabinet", _DISHES | _COOKWARE | _KITCHEN_SMALL | _BATH | _SMALL | {"ladle", "spatula"}, openable=True),
    R("drawer", _SMALL | _UTENSILS | _BATH | {"dishsponge", "peppershaker", "saltshaker", "soapbar"}, openable=True),
    R("safe", frozenset({"cd", "cellphone", "creditcard", "keychain", "watch", "statue", "vase"}), openable=True),
    R("fridge", _FOOD | _DISHES | {"pan", "pot", "winebottle"}, openable=True, appliance="cool"),
    R("microwave", _FOOD | _DISHES, openable=True, appliance="heat"),
    R("sinkbasin", _FOOD | _DISHES | _COOKWARE | _UTENSILS | {"dishsponge", "cloth", "soapbar"}, appliance="clean"),
    R("stoveburner", _COOKWARE),
    R("garbagecan", _FOOD | {"cd", "cloth", "dishsponge", "newspaper", "pen", "pencil", "soapbar", "soapbottle",
                             "spraybottle", "tissuebox", "toiletpaper", "winebottle", "creditcard", "candle"}),
    R("toilet", frozenset({"cloth", "soapbar", "soapbottle", "spraybottle", "toiletpaper", "candle", "tissuebox"})),
    R("bathtubbasin", frozenset({"cloth", "soapbar", "soapbottle", "spraybottle", "handtowel", "towel"})),
    R("towelholder", frozenset({"towel"})),
    R("handtowelholder", frozenset({"handtowel"})),
    R("toiletpaperhanger", frozenset({"toiletpaper"})),
)  # fmt: skip
del R

APPLIANCES = MappingProxyType({k.appliance: k.name for k in RECEPTACLES.values() if k.appliance})
"""The receptacle kind of each appliance verb: clean at a sink basin, heat in a microwave, cool in a fridge."""


@dataclass(frozen=True)
class Room:
    """One of ALFRED's four scene kinds: the receptacles it can have and the objects found in it.

    Attributes:
        name: the room kind.
        fixed: receptacles every room of this kind has (one of each).
        optional: the receptacles drawn (without replacement) to fill the room; a kind listed
            several times can appear that often (cabinet 1, cabinet 2, ...).
        objects: object kinds found in the room.
    """

    name: str
    fixed: tuple[str, ...]
    optional: tuple[str, ...]
    objects: tuple[str, ...]


ROOMS = MappingProxyType(
    {
        room.name: room
        for room in (
            Room(
                "kitchen",
                fixed=("countertop", "fridge", "microwave", "sinkbasin"),
                optional=("cabinet",) * 8 + ("drawer",) * 6 + ("stoveburner",) * 4 + ("countertop",) * 2
                + ("shelf",) * 2 + ("diningtable", "garbagecan"),
                objects=tuple(sorted(_KITCHEN)),
            ),
            Room(
                "livingroom",
                fixed=("sofa", "coffeetable", "sidetable"),
                optional=("drawer",) * 4 + ("shelf",) * 3 + ("armchair",) * 2 + ("cabinet",) * 2
                + ("tvstand", "diningtable", "garbagecan", "safe", "dresser", "sidetable"),
                objects=tuple(sorted(_SMALL | {"pillow"})),
            ),
            Room(
                "bedroom",
                fixed=("bed", "desk", "sidetable"),
                optional=("drawer",) * 6 + ("shelf",) * 3 + ("dresser", "garbagecan", "safe", "armchair", "sidetable"),
                objects=tuple(sorted(_SMALL | {"pillow"})),
            ),
            Room(
                "bathroom",
                fixed=("sinkbasin", "toilet", "countertop"),
                optional=("cabinet",) * 4 + ("drawer",) * 4 + ("shelf",) * 2
                + ("bathtubbasin", "towelholder", "handtowelholder", "toiletpaperhanger", "garbagecan", "dresser",
                   "sinkbasin"),
                objects=tuple(sorted(_BATH)),
            ),
        )
    }
)  # fmt: skip

TASK_OBJECTS = MappingProxyType(
    {
        # the object kinds ALFWorld's games use for each task type
        "pick_and_place_simple": tuple(
            sorted(k for k, o in OBJECTS.items() if o.pickupable and k not in {"towel", "handtowel", "toiletpaper"})
        ),
        "look_at_obj_in_light": ("alarmclock", "book", "bowl", "cd", "cellphone", "creditcard", "keychain", "laptop",
                                 "mug", "newspaper", "pen", "pencil", "pillow", "remotecontrol", "statue", "vase",
                                 "watch"),
        "pick_clean_then_place_in_recep": tuple(sorted(k for k, o in OBJECTS.items() if o.cleanable)),
        "pick_heat_then_place_in_recep": tuple(sorted(k for k, o in OBJECTS.items() if o.heatable)),
        "pick_cool_then_place_in_recep": tuple(sorted(k for k, o in OBJECTS.items() if o.coolable)),
        "pick_two_obj_and_place": tuple(
            sorted(k for k, o in OBJECTS.items() if o.pickupable and k not in {"towel", "handtowel", "toiletpaper"})
        ),
    }
)  # fmt: skip
