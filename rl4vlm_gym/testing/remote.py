"""An env's card and class rules as the kit reads them: locally from the registry and the class, remotely
from the server (``rl4vlm/Remote-v0``), and a served env's local twin."""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rl4vlm_gym.registry import env_card, env_class
from rl4vlm_gym.testing.common import NotCheckable, _env_class, _make, _oracle, is_remote
from rl4vlm_gym.testing.rollouts import _rollout_trace

_SERVED: contextvars.ContextVar[dict[str, dict[str, Any]] | None] = contextvars.ContextVar("served_cards", default=None)


@contextmanager
def served_cards_kept() -> Iterator[None]:
    """Within it, each served card is asked of its server once: :func:`~rl4vlm_gym.testing.run_checks`
    opens one session for the card of a remote id, not one per check (each makes the served env). Nested,
    it keeps the outer block's cards (a caller that made the remote env already: :func:`keep_served_card`)."""
    token = _SERVED.set({} if _SERVED.get() is None else _SERVED.get())
    try:
        yield
    finally:
        _SERVED.reset(token)


def keep_served_card(env: Any, env_id: str, /, **kwargs: Any) -> None:
    """Within :func:`served_cards_kept`, keep the card of ``env``, just made by ``gym.make(env_id, **kwargs)``
    for a remote id and not yet reset: the card the kit would open a session of its own to read."""
    kept = _SERVED.get()
    if kept is None:
        raise RuntimeError("keep_served_card() outside served_cards_kept(): nothing would keep it")
    kept[_key(env_id, kwargs)] = _card_of(env.unwrapped)


def _key(env_id: str, kwargs: Mapping[str, Any]) -> str:
    return json.dumps([env_id, kwargs], sort_keys=True, default=repr)


def _card_of(base: Any) -> dict[str, Any]:
    """A RemoteEnv's card and served id, and the facts of its first reset (its card and served id come with the env API)."""
    card = dict(base.card)
    card["served_id"] = base.served_id
    if "class" in card and "levels" in card:
        card["facts"] = base.facts()
    return card


def _served(env_id: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The card a remote env's server gives for the id it serves (a session is opened to ask, unless
    :func:`served_cards_kept` holds the answer)."""
    kept, key = _SERVED.get(), _key(env_id, kwargs)
    if kept is not None and key in kept:
        card = kept[key]
    else:
        env = _make(env_id, **kwargs)
        try:
            card = _card_of(env.unwrapped)
        finally:
            env.close()
    if "facts" not in card:
        raise NotCheckable(f"the server gives no card for {card['served_id']!r}: it is not an RL4VLM Gym env with a card")
    if kept is not None:
        kept[key] = card
    return card


@dataclass(frozen=True)
class _Card:
    """What the kit reads of an env card (the registry's, or the one a remote server gives)."""

    obs_modes: tuple[str, ...]
    levels: tuple[str, ...]
    default_level: int
    reward_variants: tuple[str, ...]


def _card(env_id: str, kwargs: Mapping[str, Any]) -> Any:
    if not is_remote(env_id):
        return env_card(env_id)
    card = _served(env_id, kwargs)
    return _Card(tuple(card["obs_modes"]), tuple(card["levels"]), card["default_level"], tuple(card["reward_variants"]))


def _rules(env_id: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The env class's rules the kit reads without an env: locally from the class, remotely from the server's card."""
    from rl4vlm_gym.docs import SECTIONS, missing_sections

    if is_remote(env_id):
        card = _served(env_id, kwargs)
        facts, sections = dict(card["facts"]), card["class"]["doc_sections"]
        facts.update(
            {k: tuple(facts[k]) for k in ("APPEARANCES", "WORDINGS")},
            missing_sections=[name for name in SECTIONS if not sections.get(name)],
            name=f"{facts['name']} (served as {card['served_id']})",
        )
        return facts
    cls = _env_class(env_id, **kwargs)
    return {
        "name": cls.__name__,
        "APPEARANCES": cls.APPEARANCES,
        "WORDINGS": cls.WORDINGS,
        "REWARDS": cls.REWARDS,
        "levels": len(cls.LEVELS),
        "DEFAULT_LEVEL": cls.DEFAULT_LEVEL,
        "missing_sections": missing_sections(cls),
    }


def _local_twin_trace(env_id: str, seed: int, steps: int, kwargs: Mapping[str, Any]) -> dict[str, tuple[str, list[list[str]]]]:
    """The rollout digest and trace of the served id made here with the server's make arguments, if it is registered
    here (a remote env's twin: the same bytes, from a process with other str hashing)."""
    env = _make(env_id, **kwargs)
    try:
        base: Any = env.unwrapped  # a RemoteEnv
        served, made, oracle = base.served_id, base.served_make_kwargs, _oracle(base)
    finally:
        env.close()
    try:
        if not oracle and env_class(served).HAS_ORACLE:
            return {}  # the policies would differ: the remote one plays without the hidden oracle
    except KeyError:
        return {}  # not registered here (or without a card): no local twin
    local = {k: tuple(v) if isinstance(v, list) else v for k, v in made.items()}
    return {f"the local {served}": _rollout_trace(served, seed, steps, local)}
