"""What a client of ``rl4vlm-gym serve`` may choose: the operator's policy on ``reset``'s ``make_kwargs``.

A client's ``make_kwargs`` reach ``gym.make`` on the server, so a name the operator did not allow is
refused before anything is made: on ``WebShop-v1``, ``{"renderer": "browser"}`` would start Chromium
for each session; on ``ALFWorld-v0``, ``{"data_dir": "/"}`` would walk the whole filesystem; an
``image_size`` of 4096 makes a 67 MB message a reset. The operator's own ``--make-kwargs`` are not
checked (they are the operator's).

A :class:`ClientPolicy` is data: the names a client may set, each with a :class:`Rule` (an int in
bounds, a bool, one of some choices, an image size under the cap, or any value the operator trusts).
Without a list from the operator, each served id gets :func:`default_rules`: the arguments every
env takes that only change what the episode shows or asks (``level``, ``obs_mode``, ``image_size``,
``reward_variant``, ``action_format``, ``action_match``, ``appearance``, ``wording``,
``max_episode_steps``) and a few family ones of the same kind (:data:`FAMILY_RULES`); never one that
names a path, starts a process, or bounds a planner (:data:`NEVER_BY_DEFAULT`). ``image_size`` is
capped at ``max_image_size`` per side (:data:`MAX_IMAGE_SIZE` unless the operator says otherwise),
whatever the list.

The operator writes a policy as flags (``--client-kwargs level,obs_mode --max-image-size 512``) or
as a file (``--policy FILE``, YAML or JSON, read as hostile input: bounded in size and depth)::

    max_image_size: 512
    client_kwargs:              # replaces the defaults: the client may set these names only
      level: {min: 0, max: 2}
      obs_mode: {choices: [image, text]}
      image_size: {}            # {}: the env's default rule for the name (any value if it has none)
      catalog_seed: {type: int, min: 0, max: 100}

Errors name the refused name (cut at :data:`MAX_NAME_CHARS`) and the rule, never the value sent.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

__all__ = [
    "FAMILY_RULES",
    "MAX_IMAGE_SIZE",
    "MAX_NAME_CHARS",
    "MAX_POLICY_BYTES",
    "NEVER_BY_DEFAULT",
    "RESERVED",
    "ClientPolicy",
    "PolicyError",
    "Rule",
    "accepted_names",
    "default_rules",
    "shown_name",
]

MAX_IMAGE_SIZE = 1024
"""The default cap on each side of a client's ``image_size`` (a 1024x1024 raw frame is 3 MiB)."""
MAX_NAME_CHARS = 64
"""A refused name is shown cut at this many characters."""
MAX_POLICY_BYTES = 64 << 10
"""The largest policy file read."""
MAX_EPISODE_STEPS = 1_000_000
"""The largest ``max_episode_steps`` a client may ask by default (``-1``: no time limit, as ``gym.make``)."""
RESERVED = frozenset({"render_mode", "disable_env_checker", "apply_api_compatibility", "autoreset"})
"""``gym.make`` arguments the server decides (how envs render and wrap): no policy allows them."""
NEVER_BY_DEFAULT = frozenset(
    {
        "renderer",
        "render_process",
        "data_dir",
        "split",
        "goals",
        "goal_seed",
        "task",
        "task_types",
        "planner_timeout",
        "planner_memory_mb",
    }
)
"""Names the default policy never allows: paths and data, processes (a browser), planner bounds, the task
an id fixes. An operator may still allow one by name (``--client-kwargs``, a policy file)."""

Kind = Literal["int", "bool", "choice", "image_size", "any"]
_KINDS: tuple[str, ...] = ("int", "bool", "choice", "image_size", "any")


class PolicyError(ValueError):
    """A policy the operator wrote is not valid (the message says where, never echoing the file)."""


def shown_name(name: object) -> str:
    """A client's keyword for a message: ASCII, cut at :data:`MAX_NAME_CHARS` characters."""
    text = str(name)
    return ascii(text[:MAX_NAME_CHARS]) + ("..." if len(text) > MAX_NAME_CHARS else "")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Rule:
    """How a client may set one ``make`` keyword.

    Attributes:
        kind: ``"int"`` (an int in ``low..high``), ``"bool"``, ``"choice"`` (one of ``choices``),
            ``"image_size"`` (an int or ``[height, width]``, each side in ``low..high`` and at most
            the policy's cap) or ``"any"`` (any JSON value: the operator trusts the name).
        low: the smallest int (or image side) allowed; None: no bound.
        high: the largest int (or image side) allowed; None: no bound (for an image: the cap).
        choices: the values allowed, for ``"choice"``.
    """

    kind: Kind
    low: int | None = None
    high: int | None = None
    choices: tuple[Any, ...] = ()

    def check(self, name: str, value: Any, max_image_size: int) -> Any:
        """``value`` as ``make`` takes it (an image size as a tuple).

        Raises:
            ValueError: the value breaks the rule; the message names ``name`` and the rule, not the value.
        """
        where = f"make_kwargs {shown_name(name)}"
        if self.kind == "any":
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{where} must be true or false (got a {type(value).__name__})")
            return value
        if self.kind == "choice":
            if not any(type(value) is type(c) and value == c for c in self.choices):
                raise ValueError(f"{where} must be one of {list(self.choices)[:20]}")
            return value
        if self.kind == "int":
            if not _is_int(value) or (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
                raise ValueError(f"{where} must be an int in {_span(self.low, self.high)}")
            return value
        # image_size: one side for both, or [height, width]
        high = max_image_size if self.high is None else min(self.high, max_image_size)
        sides = [value, value] if _is_int(value) else value
        rule = f"an int or [height, width], each side an int in {_span(self.low or 1, high)}"
        if not isinstance(sides, (list, tuple)) or len(sides) != 2 or not all(_is_int(s) for s in sides):
            raise ValueError(f"{where} must be {rule}")
        if any(s > high for s in sides):
            cap = f"this server's cap, --max-image-size {max_image_size}" if high == max_image_size else "the env's largest side"
            raise ValueError(f"{where} is over {high} pixels a side ({cap}): give {rule}")
        if any(s < (self.low or 1) for s in sides):
            raise ValueError(f"{where} must be {rule}")
        return (sides[0], sides[1])


def _span(low: int | None, high: int | None) -> str:
    return f"{'..' if low is None else low}..{'' if high is None else high}".replace("....", "..")


FAMILY_RULES: Mapping[str, Rule] = {
    "duplicate": Rule("bool"),  # games: play each deal from both seats
    "free_commands": Rule("bool"),  # TextWorld: any command, or the admissible ones
    "commands": Rule("choice", choices=("move", "put")),  # household: ALFWorld's command style
    "render_view": Rule("choice", choices=("agent", "top")),  # MiniWorld's camera
    "text_format": Rule("choice", choices=("text", "text_rich", "balrog", "full", "hybrid", "vlm")),  # the env checks its own
    "catalog_seed": Rule("int", 0, 2**32 - 1),  # WebShop's synthetic shop (same cost for any seed)
}
"""Family arguments the default policy allows where the env takes them: choices of what the episode
shows or how it is played, each as cheap as the default (the env refuses a choice that is not its own)."""


def accepted_names(cls: type) -> frozenset[str] | None:
    """The keyword arguments ``cls(...)`` takes, followed through the ``**kwargs`` that each class's
    ``__init__`` passes to its base (None when the chain ends in ``**kwargs`` nobody names)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        params = inspect.signature(init).parameters
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names |= {n for n, p in params.items() if p.kind in kinds and n != "self"}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return frozenset(names)
    return None


@functools.lru_cache(maxsize=256)
def default_rules(env_id: str, trusted: bool = False) -> Mapping[str, Rule]:
    """The names a client of ``env_id`` may set when the operator says nothing, with their rules.

    Every env of ours: ``level`` (its levels), ``obs_mode`` and ``reward_variant`` (its card's),
    ``image_size`` (capped), ``action_format``, ``action_match``, ``appearance``, ``wording`` (its own),
    ``max_episode_steps`` (``-1`` or up to :data:`MAX_EPISODE_STEPS`) and those of :data:`FAMILY_RULES` it
    takes; ``optimal_steps_at_reset`` (a plan at each reset) only on a ``trusted`` server
    (``--expose-oracle``). An id that is not a :class:`~rl4vlm_gym.core.VLMEnv` gets ``max_episode_steps``
    alone."""
    from rl4vlm_gym.core import OBS_MODES, VLMEnv
    from rl4vlm_gym.parsing import ACTION_FORMATS, MATCH_MODES
    from rl4vlm_gym.registry import env_card

    rules: dict[str, Rule] = {"max_episode_steps": Rule("int", -1, MAX_EPISODE_STEPS)}
    cls = _env_class(env_id)
    if cls is None or not issubclass(cls, VLMEnv):
        return MappingProxyType(rules)
    try:
        card = env_card(env_id)
        obs_modes, variants = tuple(card.obs_modes), tuple(card.reward_variants)
    except KeyError:  # a VLMEnv registered with Gymnasium only (a test env): the class's own lists
        obs_modes, variants = tuple(OBS_MODES), tuple(getattr(cls, "REWARD_VARIANTS", ()) or ())
    rules.update(
        level=Rule("int", 0, len(cls.LEVELS) - 1),
        obs_mode=Rule("choice", choices=obs_modes),
        image_size=Rule("image_size", cls.MIN_IMAGE_SIDE, cls.MAX_IMAGE_SIDE),
        action_format=Rule("choice", choices=tuple(ACTION_FORMATS)),
        action_match=Rule("choice", choices=tuple(MATCH_MODES)),
        appearance=Rule("choice", choices=tuple(cls.APPEARANCES)),
        wording=Rule("choice", choices=tuple(cls.WORDINGS)),
    )
    if variants:
        rules["reward_variant"] = Rule("choice", choices=variants)
    if trusted:
        rules["optimal_steps_at_reset"] = Rule("bool")
    takes = accepted_names(cls)
    for name, rule in FAMILY_RULES.items():
        if takes is not None and name in takes:
            rules[name] = rule
    assert not NEVER_BY_DEFAULT & set(rules), "a name the default never allows"  # FAMILY_RULES must not name one
    return MappingProxyType(rules)  # cached: shared, so read-only


def _env_class(env_id: str) -> type | None:
    """The class ``gym.make(env_id)`` builds, without making it (None: not found, or a factory)."""
    import gymnasium as gym

    from rl4vlm_gym.registry import env_class

    try:
        return env_class(env_id)
    except KeyError:
        pass
    try:
        entry = gym.spec(env_id).entry_point
    except gym.error.Error:
        return None
    if not isinstance(entry, str):
        return entry if isinstance(entry, type) else None
    try:
        creator = gym.envs.registration.load_env_creator(entry)
    except (ImportError, AttributeError):
        return None
    return creator if isinstance(creator, type) else None


@dataclass(frozen=True)
class ClientPolicy:
    """The operator's policy on clients' ``make_kwargs``.

    Attributes:
        allowed: the names a client may set, each with its rule or None (the env's default rule for
            the name, any value if it has none); None: each env's :func:`default_rules`.
        max_image_size: the cap on each side of a client's ``image_size``.
        also: names allowed with any value besides the defaults, when ``allowed`` is None (e.g. a test
            env's own arguments).
        source: how messages name the policy.
    """

    allowed: Mapping[str, Rule | None] | None = None
    max_image_size: int = MAX_IMAGE_SIZE
    also: frozenset[str] = frozenset()
    source: str = field(default="the default policy", compare=False)

    def __post_init__(self) -> None:
        if not _is_int(self.max_image_size) or self.max_image_size < 1:
            raise PolicyError("max_image_size must be an int >= 1")
        object.__setattr__(self, "also", frozenset(self.also))
        reserved = sorted((set(self.allowed or ()) | self.also) & RESERVED)
        if reserved:
            raise PolicyError(f"{reserved} are the server's to decide: no policy allows them")

    @classmethod
    def of_names(cls, names: Iterable[str], max_image_size: int = MAX_IMAGE_SIZE) -> ClientPolicy:
        """The client may set exactly ``names`` (``--client-kwargs``), each under the env's default rule
        for it if it has one, else to any value."""
        names = [n.strip() for n in names if n.strip()]
        for name in names:
            if not name.isidentifier():
                raise PolicyError(f"--client-kwargs: {shown_name(name)} is not a keyword name")
        return cls(dict.fromkeys(names), max_image_size, source="--client-kwargs")

    @classmethod
    def from_data(cls, data: Any, source: str = "the policy", max_image_size: int | None = None) -> ClientPolicy:
        """A policy from parsed JSON/YAML data (the module docstring's format); ``max_image_size``
        (the command line's) wins over the data's."""
        if not isinstance(data, dict):
            raise PolicyError(f"{source}: must be a mapping with client_kwargs and/or max_image_size")
        unknown = sorted(set(data) - {"client_kwargs", "max_image_size"})
        if unknown:
            raise PolicyError(f"{source}: unknown key {shown_name(unknown[0])} (it takes client_kwargs, max_image_size)")
        cap = data.get("max_image_size", MAX_IMAGE_SIZE) if max_image_size is None else max_image_size
        if not _is_int(cap) or cap < 1:
            raise PolicyError(f"{source}: max_image_size must be an int >= 1")
        if "client_kwargs" not in data:
            return cls(None, cap, source=source)
        given = data["client_kwargs"]
        if isinstance(given, list):
            given = dict.fromkeys(given)  # names alone
        if not isinstance(given, dict):
            raise PolicyError(f"{source}: client_kwargs must be a list of names or a mapping of names to rules")
        allowed: dict[str, Rule | None] = {}
        for name, spec in given.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise PolicyError(f"{source}: client_kwargs: {shown_name(name)} is not a keyword name")
            allowed[name] = _rule_of(spec, f"{source}: client_kwargs {shown_name(name)}")
        try:
            return cls(allowed, cap, source=source)
        except PolicyError as err:
            raise PolicyError(f"{source}: {err}") from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], max_image_size: int | None = None) -> ClientPolicy:
        """A policy file (``.json``, else YAML), read as untrusted input: at most :data:`MAX_POLICY_BYTES`,
        nesting and items bounded, no YAML anchors or tags (:mod:`rl4vlm_gym.harness.untrusted`'s readers).

        Raises:
            PolicyError: the file cannot be read or is not a valid policy; the message names the rule broken.
        """
        from rl4vlm_gym.harness.untrusted import Refused, parse_json, parse_yaml

        label = os.path.basename(os.fspath(path))[:MAX_NAME_CHARS] or "policy"
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_POLICY_BYTES + 1)
        except OSError as err:
            raise PolicyError(f"policy file {label}: cannot be read ({err.strerror})") from None
        if len(data) > MAX_POLICY_BYTES:
            raise PolicyError(f"policy file {label}: larger than {MAX_POLICY_BYTES} bytes")
        try:
            if label.endswith(".json"):
                parsed = parse_json(data, label)
            else:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise PolicyError(f"policy file {label}: not UTF-8 text (at byte {err.start})") from None
                parsed = parse_yaml(text, label)
        except Refused as err:
            raise PolicyError(f"policy file {err}") from None
        return cls.from_data(parsed, f"policy file {label}", max_image_size)

    def rules_for(self, env_id: str, trusted: bool = False) -> dict[str, Rule]:
        """The names a client of ``env_id`` may set, with their rules."""
        defaults = default_rules(env_id, trusted)
        if self.allowed is None:
            return {**dict.fromkeys(self.also, Rule("any")), **defaults}
        return {name: rule or defaults.get(name) or Rule("any") for name, rule in self.allowed.items()}

    def check(self, env_id: str, make_kwargs: Mapping[str, Any], trusted: bool = False) -> dict[str, Any]:
        """A client's ``make_kwargs`` for ``env_id``, checked (image sizes as tuples).

        Raises:
            ValueError: a name not allowed (named, cut at :data:`MAX_NAME_CHARS`; the allowed names
                listed), or a value that breaks its rule (the rule said, the value not echoed).
        """
        rules = self.rules_for(env_id, trusted)
        checked: dict[str, Any] = {}
        for name, value in make_kwargs.items():
            rule = rules.get(name)
            if rule is None:
                allowed = ", ".join(sorted(rules)) or "none"
                raise ValueError(
                    f"make_kwargs {shown_name(name)} is not allowed on this server ({self.source}); "
                    f"a client of {env_id} may set: {allowed}"
                )
            checked[name] = rule.check(name, value, self.max_image_size)
        return checked


_RULE_KEYS = {"type", "min", "max", "choices"}


def _rule_of(spec: Any, where: str) -> Rule | None:
    """A rule from a policy file's entry: None or ``{}`` (the env's default rule), or ``{type, min, max, choices}``."""
    if spec is None or spec == {}:
        return None
    if not isinstance(spec, dict):
        raise PolicyError(f"{where}: a rule is a mapping of type, min, max, choices")
    unknown = sorted(set(spec) - _RULE_KEYS)
    if unknown:
        raise PolicyError(f"{where}: unknown rule key {shown_name(unknown[0])} (a rule takes type, min, max, choices)")
    kind = spec.get("type", "choice" if "choices" in spec else "int" if {"min", "max"} & set(spec) else "any")
    if kind not in _KINDS:
        raise PolicyError(f"{where}: type must be one of {list(_KINDS)}")
    low, high = spec.get("min"), spec.get("max")
    for bound in (low, high):
        if bound is not None and not _is_int(bound):
            raise PolicyError(f"{where}: min and max must be ints")
    if low is not None and high is not None and low > high:
        raise PolicyError(f"{where}: min is above max")
    if (low is not None or high is not None) and kind not in ("int", "image_size"):
        raise PolicyError(f"{where}: min and max apply to type int or image_size")
    choices = spec.get("choices")
    if kind == "choice":
        if not isinstance(choices, list) or not choices or not all(isinstance(c, (str, int, float, bool)) for c in choices):
            raise PolicyError(f"{where}: choices must be a non-empty list of plain values")
    elif choices is not None:
        raise PolicyError(f"{where}: choices apply to type choice")
    return Rule(kind, low, high, tuple(choices or ()))
