"""What every check shares: the result types, making an env and reading it through its public inspection API
(locally or through ``rl4vlm/Remote-v0``), and the moves the checks play."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from rl4vlm_gym.core import VLMEnv
from rl4vlm_gym.registry import env_class


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check on one env id."""

    env_id: str
    check: str
    passed: bool
    detail: str
    seconds: float
    not_checked: bool = False
    """The check could not run on this env (e.g. a remote env whose server hides its oracle): not passed."""


class NotCheckable(Exception):
    """Raised by a check that cannot run on this env; ``run_checks`` reports it as not checked, not passed."""


REMOTE = "NOT CHECKED remotely: "
"""The prefix of the part of a check's summary that a remote env (``KIT_PROXY``) could not check."""


def _make(env_id: str, /, **kwargs: Any) -> gym.Env:
    return gym.make(env_id, **kwargs)


def _base(env: gym.Env) -> VLMEnv:
    base = env.unwrapped
    if getattr(base, "KIT_PROXY", False):  # rl4vlm/Remote-v0: the served env's rules, read over the wire
        return base  # type: ignore[return-value]
    assert isinstance(base, VLMEnv), f"{type(base).__name__} does not derive from rl4vlm_gym.VLMEnv"
    return base


def _is_proxy(env: Any) -> bool:
    """A remote env (``rl4vlm/Remote-v0``): the served env's rules come over the wire, its code stays there."""
    return bool(getattr(type(env), "KIT_PROXY", False))


def is_remote(env_id: str) -> bool:
    """Whether ``env_id`` makes a remote env (its entry point a ``KIT_PROXY`` class), without making one."""
    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        entry = getattr(__import__(module, fromlist=[name]), name, None)
    return bool(getattr(entry, "KIT_PROXY", False))


def _view_overridden(base: Any) -> bool:
    return bool(base.facts()["view_overridden"])


def _oracle(env: Any) -> bool:
    """Whether the kit may ask ``env`` for oracle moves (a remote env only if its server exposes them)."""
    return bool(env.facts()["HAS_ORACLE"]) and (not _is_proxy(env) or env.oracle_exposed)


def _assert_fresh_frame(base: Any, image: np.ndarray, at: str) -> bool:
    """The observed image equals a fresh ``_render()`` (remotely: its SHA-256 from an ``--expose-oracle``
    server); False when that cannot be checked."""
    if _is_proxy(base):
        fresh_sha = base.fresh_frame_sha256()
        if fresh_sha is None:
            return False
        same, where = hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest() == fresh_sha, "(the server's SHA-256)"
    else:
        fresh = base.fresh_render()
        same = np.array_equal(image, fresh)
        where = "" if same else f"({_pixels_differing(image, fresh)})"
    assert same, (
        f"{at}: the observed image differs from a fresh _render() of the same state {where}: "
        "the frame cache key (_frame_key) leaves out part of what is drawn"
    )
    return True


def _pixels_differing(a: np.ndarray, b: np.ndarray) -> str:
    """Where two frames differ, to tell a missing key part (a region) from noise (scattered pixels)."""
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape}"
    rows, cols = np.nonzero((a != b).any(axis=-1))
    return f"{rows.size} pixels in rows {rows.min()}-{rows.max()}, columns {cols.min()}-{cols.max()}"


def _spec_json(env_id: str) -> str | None:
    """The id's Gymnasium spec as JSON, so another process can register a test-only env."""
    spec = gym.spec(env_id)
    return spec.to_json() if isinstance(spec.entry_point, str) else None


def _ensure_registered(env_id: str, spec_json: str | None) -> None:
    import rl4vlm_gym  # noqa: F401 - registers the packaged envs

    if env_id not in gym.registry and spec_json is not None:
        gym.registry[env_id] = EnvSpec.from_json(spec_json)


@dataclass(frozen=True)
class _Maker:
    """A picklable env factory for vector workers, which registers a test-only id if needed."""

    env_id: str
    spec_json: str | None
    kwargs: Mapping[str, Any]

    def __call__(self) -> gym.Env:
        _ensure_registered(self.env_id, self.spec_json)
        return _make(self.env_id, **self.kwargs)


@contextmanager
def _no_frame_wait(cls: type) -> Iterator[None]:
    """Human windows wait 1/render_fps per frame; the kit checks that they work, not their pace."""
    metadata = cls.__dict__.get("metadata")
    cls.metadata = {**cls.metadata, "render_fps": 10_000}  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if metadata is None:
            del cls.metadata  # type: ignore[attr-defined]
        else:
            cls.metadata = metadata  # type: ignore[attr-defined]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return hashlib.sha256(value.tobytes()).hexdigest()
    if isinstance(value, np.generic):
        return value.item()
    return repr(value)


def _digest(image: np.ndarray) -> str:
    return hashlib.sha256(image.tobytes()).hexdigest()[:16]


def _policy_action(env: VLMEnv, obs: Mapping[str, Any], rng: np.random.Generator, random_moves: float = 0.5) -> str:
    """Oracle or random admissible action: reaches deep states and explores off-plan."""
    actions = obs["actions"]
    if actions and (rng.random() < random_moves or not _oracle(env)):
        return actions[int(rng.integers(len(actions)))]
    return _move(env)


EXPENSIVE_PLAN_RUN = 4
"""How many moves in a row the kit's mixed policy (:class:`Moves`) gives the oracle, or random words, in an
``EXPENSIVE_PLAN`` env."""


class Moves:
    """The checks' mixed policy: a share ``random_moves`` of random admissible actions, the oracle's
    moves otherwise (``_move``), drawn from ``rng``.

    Moves are drawn one by one (as :func:`_policy_action`), except in ``EXPENSIVE_PLAN`` envs, where
    they come in runs of ``EXPENSIVE_PLAN_RUN`` of one kind: every oracle move that follows a random
    one is a search from a new state (seconds in ALFWorld, MiniWorld), and the moves of a run after the
    first follow the plan the search made. Runs keep the share of each kind and reach the states of
    both (along the plan and off it), with a search per run instead of one at most moves."""

    def __init__(self, env: VLMEnv, rng: np.random.Generator, random_moves: float = 0.5) -> None:
        self.env, self.rng, self.random_moves = env, rng, random_moves
        self.run = EXPENSIVE_PLAN_RUN if env.facts()["EXPENSIVE_PLAN"] else 1
        self.left, self.random = 0, False

    def __call__(self, obs: Mapping[str, Any]) -> str:
        if self.run == 1:
            return _policy_action(self.env, obs, self.rng, self.random_moves)
        if not self.left:
            self.random, self.left = bool(self.rng.random() < self.random_moves), self.run
        self.left -= 1
        actions = obs["actions"]
        if actions and (self.random or not _oracle(self.env)):
            return actions[int(self.rng.integers(len(actions)))]
        return _move(self.env)


def _move(env: VLMEnv) -> str:
    """A move that advances the episode: the oracle's, or for oracle-free envs (``HAS_ORACLE = False``)
    the admissible actions in turn (deterministic, so clones and replays see the same moves)."""
    if _oracle(env):
        return env.oracle_action()
    actions = env.admissible_actions or ("look",)
    return actions[env.elapsed_steps % len(actions)]


def _state_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _env_class(env_id: str, /, **kwargs: Any) -> type[VLMEnv]:
    """The id's env class from its entry point, without building an env (a GL world, a game
    engine); a factory function's env is built to find its class."""
    found = env_class(env_id)
    if isinstance(found, type) and issubclass(found, VLMEnv):
        return found
    env = _make(env_id, **kwargs)
    cls = type(_base(env))
    env.close()
    return cls
