"""The registry: env cards, registration through Gymnasium, plugins and ``list_envs``.

Every id is registered with Gymnasium under a lazy ``"module:Class"`` entry point, so nothing of
an env family is imported before one of its envs is made. Beside the Gymnasium spec, each id has an
:class:`EnvCard`: the facts a user needs to choose and compare envs.

Families, ours and third-party ones alike, are found through the entry-point group
``rl4vlm_gym.envs``: each entry point names a function that calls :func:`register`. A plugin that
fails to load is reported with a warning and skipped; it never breaks ``import rl4vlm_gym``.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "EVAL_SEEDS",
    "OBS_MODES",
    "TEST_SEEDS",
    "TRAIN_SEEDS",
    "EnvCard",
    "env_card",
    "env_class",
    "list_envs",
    "load_plugins",
    "protocol_facts",
    "register",
    "unregister",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "rl4vlm_gym.envs"
OBS_MODES: tuple[str, ...] = ("image+text", "image", "text")

# Disjoint seed ranges, the same for every env. Train on TRAIN_SEEDS; public evaluation suites
# draw from EVAL_SEEDS; TEST_SEEDS are reserved for held-out leaderboard seeds.
TRAIN_SEEDS = range(0, 2**30)
EVAL_SEEDS = range(2**30, 2**31)
TEST_SEEDS = range(2**31, 2**32)

_CARDS: dict[str, EnvCard] = {}


@dataclass(frozen=True)
class EnvCard:
    """What a user needs to know about one registered environment id.

    Attributes:
        id: the versioned Gymnasium id, e.g. ``"rl4vlm/NumberLine-v0"``.
        entry_point: lazy ``"module:Class"`` path of the env class.
        family: the env family (``"cards"``, ``"navigation"``, ...).
        summary: one sentence saying what the agent must do.
        skills: what the env exercises (``"arithmetic"``, ``"visual-reading"``, ...).
        levels: one line per level, in order, saying what the level changes.
        default_level: the level used when ``make`` gets none.
        action_grammar: the admissible actions, in words.
        action_examples: outputs that parse to valid actions.
        reward_variants: the accepted ``reward_variant`` values; the first is the default.
        success: when ``info["success"]`` is true.
        max_episode_steps: the ``TimeLimit`` registered with Gymnasium.
        obs_modes: accepted ``obs_mode`` values.
        references: papers and code this env reproduces.
        extra: the pip extra the env needs (``None`` for the core install).
        kwargs: default constructor arguments registered with the id.
        timeout_reward: some reward variant pays a ``"timeout"`` reward when the time limit
            truncates an episode; the spec then adds :class:`rl4vlm_gym.wrappers.TimeoutReward`
            outside ``TimeLimit``.
        protocol_facts: lazy ``"module:function"`` of a function ``(kwargs) -> {name: text}``
            giving facts of this machine that decide the env's rewards (e.g. which model scores
            them); every run records them in its protocol (see :func:`protocol_facts`).
        benchmark: ``(env, task)``, the names this id's game has in the published benchmark it
            reproduces, e.g. BALROG's ``("babyai", "BabyAI-MixedTrainLocal-v0/goto")``: summaries
            pool episodes by that env, as the benchmark does, and can write its result layout.
        resources: what one worker playing this id asks a scheduler for, as Ray's actor options
            (``num_cpus``, ``memory`` in bytes, ``num_gpus``); empty means one CPU
            (:func:`rl4vlm_gym.harness.ray_runner.task_resources`).
    """

    id: str
    entry_point: str
    family: str
    summary: str
    skills: tuple[str, ...]
    levels: tuple[str, ...]
    default_level: int
    action_grammar: str
    action_examples: tuple[str, ...]
    reward_variants: tuple[str, ...]
    success: str
    max_episode_steps: int
    obs_modes: tuple[str, ...] = OBS_MODES
    references: tuple[str, ...] = ()
    extra: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    timeout_reward: bool = False
    protocol_facts: str | None = None
    benchmark: tuple[str, str] | None = None
    resources: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError(f"{self.id}: an env card needs at least one level")
        if not 0 <= self.default_level < len(self.levels):
            raise ValueError(
                f"{self.id}: default_level={self.default_level} is outside levels 0..{len(self.levels) - 1}"
            )
        if not self.reward_variants:
            raise ValueError(f"{self.id}: an env card needs at least one reward variant")
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        object.__setattr__(self, "resources", MappingProxyType(dict(self.resources)))

    @property
    def seed_ranges(self) -> dict[str, range]:
        """The train / eval / test seed ranges (the same for every env)."""
        return {"train": TRAIN_SEEDS, "eval": EVAL_SEEDS, "test": TEST_SEEDS}

    @property
    def max_level(self) -> int:
        """The highest level."""
        return len(self.levels) - 1


def register(card: EnvCard) -> None:
    """Register ``card.id`` with Gymnasium (lazily) and record its card.

    Registering an id twice with the same card is a no-op (plugins may be loaded twice);
    a different card for an existing id raises ``ValueError``.
    """
    existing = _CARDS.get(card.id)
    if existing is not None:
        if existing == card:
            return
        raise ValueError(f"{card.id} is already registered with a different card")
    wrappers: tuple[WrapperSpec, ...] = ()
    if card.timeout_reward:
        wrappers = (WrapperSpec("TimeoutReward", "rl4vlm_gym.wrappers:TimeoutReward", {}),)
    gym.register(
        id=card.id,
        entry_point=card.entry_point,
        max_episode_steps=card.max_episode_steps,
        kwargs=dict(card.kwargs),
        additional_wrappers=wrappers,
    )
    _CARDS[card.id] = card


def unregister(env_id: str) -> None:
    """Remove ``env_id``'s card and Gymnasium spec (a no-op for unknown ids): a test that
    registers a test-only env removes it afterwards, so other tests never list it."""
    _CARDS.pop(env_id, None)
    gym.registry.pop(env_id, None)


def env_class(env_id: str) -> Any:
    """What the id's entry point names (its env class, or a factory), imported without making an env."""
    from gymnasium.envs.registration import load_env_creator

    return load_env_creator(env_card(env_id).entry_point)


def env_card(env_id: str) -> EnvCard:
    """The card of ``env_id``; unknown ids get a "did you mean" hint."""
    try:
        return _CARDS[env_id]
    except KeyError:
        hint = difflib.get_close_matches(env_id, list(_CARDS), n=1)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
        raise KeyError(
            f"no rl4vlm env is registered as {env_id!r}.{suggestion} `rl4vlm-gym list` shows all ids."
        ) from None


def list_envs(
    *,
    family: str | None = None,
    skill: str | None = None,
    obs_mode: str | None = None,
    extra: str | None = None,
    contains: str | None = None,
) -> list[EnvCard]:
    """Cards of the registered envs that match every given filter, sorted by id.

    Args:
        family: keep this family only.
        skill: keep envs listing this skill.
        obs_mode: keep envs supporting this observation mode.
        extra: keep envs needing this pip extra (``"core"`` for the ones that need none).
        contains: keep ids containing this substring (case-insensitive).
    """
    cards = sorted(_CARDS.values(), key=lambda c: c.id)
    checks: list[Callable[[EnvCard], bool]] = []
    if family is not None:
        checks.append(lambda c: c.family == family)
    if skill is not None:
        checks.append(lambda c: skill in c.skills)
    if obs_mode is not None:
        checks.append(lambda c: obs_mode in c.obs_modes)
    if extra is not None:
        checks.append(lambda c: (c.extra or "core") == extra)
    if contains is not None:
        checks.append(lambda c: contains.lower() in c.id.lower())
    return [c for c in cards if all(check(c) for check in checks)]


def load_plugins() -> list[str]:
    """Call every ``rl4vlm_gym.envs`` entry point; return the names that failed (with a warning)."""
    failed = []
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            register_fn = entry_point.load()
            register_fn()
        except Exception as err:  # noqa: BLE001 - any plugin error must not break the import
            failed.append(entry_point.name)
            warnings.warn(
                f"rl4vlm_gym: env plugin {entry_point.name!r} ({entry_point.value}) failed to "
                f"register and is skipped: {type(err).__name__}: {err}",
                RuntimeWarning,
                stacklevel=2,
            )
    return failed


def protocol_facts(env_id: str, kwargs: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The facts of this machine that decide ``env_id``'s rewards with these ``make`` kwargs
    (``{}`` for an unknown id or a card without ``protocol_facts``); a run records them in its
    protocol, so results scored differently never share a protocol hash."""
    card = _CARDS.get(env_id)
    if card is None or card.protocol_facts is None:
        return {}
    module, _, name = card.protocol_facts.partition(":")
    facts = getattr(importlib.import_module(module), name)({**card.kwargs, **(kwargs or {})})
    return {str(k): str(v) for k, v in facts.items()}
