"""One server session: an openenv-core ``Environment`` holding one Gymnasium env of ours.

openenv-core makes one of these per WebSocket session (and one per stateless HTTP request) from a
factory, runs its ``reset``/``step`` in the session's own thread and calls ``close`` when the
session ends, is reclaimed idle or its client vanishes. The Gymnasium env is made on the first
``reset`` (so ``/metadata`` and ``/schema`` cost nothing) and closed with the session, and with it
whatever it started (a browser, a GL world).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from rl4vlm_gym.core import VLMEnv
from rl4vlm_gym.server.models import EXTRA_GROUPS, IMAGE_FORMATS, SentFrames, VLMAction, VLMObservation, VLMState
from rl4vlm_gym.server.policy import RESERVED, ClientPolicy, accepted_names, shown_name

__all__ = ["ARGUMENT_ERROR", "MAX_DECISION_CHARS", "SESSION_CLOSED", "Catalog", "ServedEnv"]

logger = logging.getLogger(__name__)

_MAX_KWARGS_CHARS = 10_000
_MAX_OPTIONS_CHARS = 10_000
_MAX_ERROR_CHARS = 500  # an env's own refusal may quote the value it refused: cut
_MAX_DOC_SECTION_CHARS = 4_000
MAX_DECISION_CHARS = 1 << 20
"""The largest decision facts (:meth:`~rl4vlm_gym.core.VLMEnv.decision`, as JSON) a server sends; larger ones
are refused with ``decision_error`` (the conformance kit holds an env to far less: 64 KiB)."""
ARGUMENT_ERROR = "ValueError: "
"""The prefix of an error message that refuses an argument of ``reset`` (a ``ValueError`` locally)."""
SESSION_CLOSED = "SessionClosed: "
"""The prefix of the error a session answers once it is closed (reaped idle, or the server stopping):
a client opens a new session (``rl4vlm/Remote-v0`` reconnects on its next reset)."""


@dataclass(frozen=True)
class Catalog:
    """What a server serves: names (env ids, or a suite's task names) and their ``make`` kwargs.

    ``default`` is the name a session gets when its ``reset`` names none (the only one, if one).
    ``expose_oracle`` puts the oracle's next action into ``state`` (for trusted evaluation and
    the conformance kit; a hosted env for training keeps it off). ``policy`` says which ``make_kwargs``
    a client may set (:class:`~rl4vlm_gym.server.policy.ClientPolicy`; the entries' own kwargs are the
    operator's, not checked)."""

    entries: Mapping[str, tuple[str, Mapping[str, Any]]]
    default: str | None = None
    expose_oracle: bool = False
    title: str = "RL4VLM Gym"
    extra: dict[str, Any] = field(default_factory=dict)
    policy: ClientPolicy = field(default_factory=ClientPolicy)

    @classmethod
    def of(
        cls,
        target: str,
        kwargs: Mapping[str, Any] | None = None,
        *,
        expose_oracle: bool = False,
        policy: ClientPolicy | None = None,
    ) -> Catalog:
        """An env id (``rl4vlm/Sokoban-v0``) or a suite (a built-in name or a YAML file)."""
        import rl4vlm_gym  # noqa: F401 - registers the ids

        kwargs = dict(kwargs or {})
        policy = policy or ClientPolicy()
        if target in gym.registry:
            return cls({target: (target, kwargs)}, default=target, expose_oracle=expose_oracle, title=target, policy=policy)
        from rl4vlm_gym.harness.suite import SuiteError, load_suite

        try:
            suite = load_suite(target)
        except SuiteError as err:
            raise ValueError(f"{target!r} is neither a registered env id nor a suite: {err}") from None
        entries: dict[str, tuple[str, Mapping[str, Any]]] = {}
        for task in suite.tasks:
            make = {k: v for k, v in task.make_kwargs.items() if k != "max_episode_steps"}
            entries[task.name] = (task.env, {**make, **kwargs})
            entries.setdefault(task.env, (task.env, kwargs))
        default = next(iter(entries)) if len(entries) == 1 else None
        return cls(entries, default=default, expose_oracle=expose_oracle, title=f"suite {suite.name}", policy=policy)

    def resolve(self, name: str | None) -> tuple[str, dict[str, Any]]:
        if name is None:
            if self.default is None:
                raise ValueError(f"name an env: reset(env_id=...) with one of {sorted(self.entries)}")
            name = self.default
        if not isinstance(name, str) or name not in self.entries:
            shown = shown_name(name) if isinstance(name, str) else f"a {type(name).__name__}"
            raise ValueError(f"env_id {shown} is not served here; this server serves {sorted(self.entries)[:50]}")
        env_id, kwargs = self.entries[name]
        return env_id, dict(kwargs)


def _plain(value: Any) -> Any:
    """``info`` as JSON data (NumPy scalars as numbers, tuples as lists, non-finite floats as strings)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return _utf8(value)
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return _utf8(repr(value))


def _utf8(text: str) -> str:
    """``text`` if UTF-8 can carry it; lone surrogates (from a hostile action) escaped as ``\\udXXX``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class ServedEnv(Environment[VLMAction, VLMObservation, VLMState]):
    """A session's env. ``reset`` keywords (all optional; unknown ones are refused):

    - ``seed``, ``options``: Gymnasium's ``reset(seed, options)`` (``options={"level": k}``);
    - ``env_id``: which served id or suite task to play (the session's current one by default);
    - ``make_kwargs``: keyword arguments of ``gym.make`` (``level``, ``obs_mode``, ``image_size``,
      ``reward_variant``...); a change remakes the env;
    - ``image_format``: ``"png"`` (default) or ``"raw"``, kept for the session;
    - ``episode_id``: OpenEnv's episode label, echoed in ``state``;
    - ``state_extras``: groups of ``state``'s extras (:data:`~rl4vlm_gym.server.models.EXTRA_GROUPS`) to
      compute after the reset and send with its observation (``observation.state``); a step asks the same
      way with ``{"text": ..., "metadata": {"state_extras": [...]}}``. A client that reads the env's rules
      at every step (the conformance kit, through ``rl4vlm/Remote-v0``) so gets them without a ``state``
      round trip, and the server computes only what it asked for (no plan, no fresh render unasked).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, catalog: Catalog) -> None:
        super().__init__()
        self.catalog = catalog
        self.env: gym.Env | None = None
        self._key: str | None = None
        self._env_id: str | None = None
        self._image_format = "png"
        self._frames = SentFrames()  # a frame sent lately is not encoded again
        self._episode_id: str | None = None
        self._steps = 0
        self._make_kwargs: dict[str, Any] = {}
        self._closed = False
        self._encode_reset = True
        # state's extras, computed in the session's thread after each reset and step once the client has
        # read state, or the groups it asked for with the reset or step (openenv-core reads the property on
        # its event loop: an oracle's plan or a fresh render there would hold up every session's messages
        # and keepalive pings)
        self._extra: dict[str, Any] | None = None
        self._reads_state = False
        self._card_of: tuple[str | None, dict[str, Any]] = (None, {})
        self._lock = threading.Lock()  # close() may come from the reaper while a step runs

    # -- OpenEnv's Environment ---------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        env_id: str | None = None,
        make_kwargs: dict[str, Any] | None = None,
        image_format: str | None = None,
        state_extras: list[str] | None = None,
        **unknown: Any,
    ) -> VLMObservation:
        if unknown:
            names = ", ".join(shown_name(n) for n in sorted(unknown)[:10])
            raise ValueError(
                f"reset() got unknown arguments {names}; it takes seed, options, env_id, "
                "make_kwargs, image_format, episode_id, state_extras"
            )
        asked = _extra_groups(state_extras)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise ValueError(f"seed must be an int in 0..2**63-1 (got {_what(seed)})")
        if options is not None:
            if not isinstance(options, dict):
                raise ValueError(f"options must be an object (got {_what(options)})")
            if len(json.dumps(options, default=str)) > _MAX_OPTIONS_CHARS:
                raise ValueError(f"options is longer than {_MAX_OPTIONS_CHARS} characters as JSON")
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 256):
            raise ValueError(f"episode_id must be a string of at most 256 characters (got {_what(episode_id)})")
        if image_format is not None:
            if not isinstance(image_format, str) or image_format not in IMAGE_FORMATS:
                raise ValueError(f"image_format must be one of {list(IMAGE_FORMATS)} (got {_what(image_format)})")
            self._image_format = image_format
        with self._lock:
            try:
                env = self._env_for(env_id, make_kwargs)
                obs, info = env.reset(seed=seed, options=options)
            except ValueError as err:  # OpenEnv's error shape has no type: the prefix tells clients a refused argument
                raise ValueError(f"{ARGUMENT_ERROR}{_cut(str(err))}") from None
        self._episode_id = episode_id if episode_id is not None else str(uuid.uuid4())
        self._steps = 0
        self._refresh_extra(asked, at_reset=True)
        if self._encode_reset:
            return self._observation(obs, 0.0, False, False, info, asked)
        return None  # type: ignore[return-value]  # step() from stateless HTTP does not send it

    def step(
        self, action: VLMAction, timeout_s: float | None = None, request_id: str | None = None, **reset: Any
    ) -> VLMObservation:
        """A step of the session's episode. Over stateless HTTP (a fresh env per request) the request
        may carry ``reset`` keywords (``seed``, ``env_id``...): the step is then the first of a new
        episode, which suits single-turn tasks."""
        if reset:
            if self.env is not None:
                names = ", ".join(shown_name(n) for n in sorted(reset)[:10])
                raise ValueError(f"step() got reset arguments {names} in a session that has an episode")
            self._encode_reset = False
            try:
                self.reset(**reset)
            finally:
                self._encode_reset = True
        asked = _extra_groups(action.metadata.get("state_extras"))
        with self._lock:
            env = self._require_env()
            obs, reward, terminated, truncated, info = env.step(action.text)
        self._steps += 1
        self._refresh_extra(asked)
        return self._observation(obs, float(reward), bool(terminated), bool(truncated), info, asked)

    @property
    def state(self) -> VLMState:
        if self._closed:  # as reset and step: a client reading state after an idle reap learns it, and reconnects
            raise RuntimeError(f"{SESSION_CLOSED}this session is closed (idle too long, or shut down); open a new one")
        self._reads_state = True
        extra = self._extra
        if extra is None or len(extra["extras"]) < len(EXTRA_GROUPS):  # the first read, or after a partial request
            extra = self._extra = self._state_extra()
        return self._state_of(extra)

    def _state_of(self, extra: dict[str, Any]) -> VLMState:
        return VLMState(episode_id=self._episode_id, step_count=self._steps, env_id=self._key, **extra)

    def _refresh_extra(self, asked: tuple[str, ...] | None, at_reset: bool = False) -> None:
        """After a reset or step, in the session's thread: the groups of state's extras the client asked for
        with it; else all of them if the client reads state (or, at a reset, if the server exposes its oracle:
        its clients read state right after their first reset, and the oracle's first plan would hold up
        the event loop there)."""
        self._extra = None
        if asked is None and (self._reads_state or (at_reset and self.catalog.expose_oracle)):
            asked = EXTRA_GROUPS
        if asked:
            try:
                self._extra = self._state_extra(asked)
            except Exception:  # noqa: BLE001 - the next read of state computes it again, and reports the error
                self._extra = None

    def _state_extra(self, groups: tuple[str, ...] = EXTRA_GROUPS) -> dict[str, Any]:
        """State's extras in ``groups`` (:data:`EXTRA_GROUPS`), which ``extras`` names."""
        extra: dict[str, Any] = {"extras": list(groups)}
        env = self.env
        if env is None or self._closed:
            return extra
        base = env.unwrapped
        if "rules" in groups:
            extra |= {
                "make_kwargs": _plain(self._make_kwargs),
                "served_id": self._env_id,
                "oracle_exposed": self.catalog.expose_oracle,
                "card": self._card(),
                "elapsed_steps": getattr(base, "elapsed_steps", self._steps),
                "max_episode_steps": _registered_limit(self._env_id),
            }
            if isinstance(base, VLMEnv):  # its rules through its public inspection API, as JSON data
                facts = base.facts()
                extra.update(
                    facts=facts,
                    has_oracle=facts["HAS_ORACLE"],
                    reward_variant=facts["reward_variant"],
                    rewards=facts["REWARDS"],
                    invalid_feedback=facts["INVALID_FEEDBACK"],
                    obs_mode=facts["obs_mode"],
                )
                if base.started:
                    extra["admissible"] = list(base.admissible_actions)
                    extra["description"] = base.describe()
                    extra["instruction_prompt"] = base.instruction_prompt()  # BALROG's template reads it (None: generic)
        if self.catalog.expose_oracle and isinstance(base, VLMEnv) and base.started:
            self._trusted_facts(base, extra, groups)
        return extra

    @staticmethod
    def _trusted_facts(base: VLMEnv, extra: dict[str, Any], groups: tuple[str, ...]) -> None:
        """What only a trusted client may see (``--expose-oracle``), in ``groups``: ``oracle``, the oracle's
        move, the plan's length once computed (at reset, or always with ``optimal_steps_at_reset=True``) and the
        decision facts (``decision()``: the optimal actions and steps to go, which give the oracle away);
        ``frame``, the SHA-256 of a fresh render of the state (the kit compares it with the cached frame).
        ``HAS_ORACLE`` is read from the env's facts (the public inspection API, as the kit reads it)."""
        if "oracle" in groups:
            if base.facts()["HAS_ORACLE"]:
                try:
                    extra["oracle_action"] = base.oracle_action()
                except Exception as err:  # noqa: BLE001 - e.g. no plan after the episode ended
                    extra["oracle_error"] = f"{type(err).__name__}: {err}"
            optimal = base.computed_optimal_steps  # as computed: asking would plan, and change later infos
            if optimal is not None:
                extra["optimal_steps"] = _plain(optimal)  # as it is: the kit checks it is an int
            try:
                decision = _plain(base.decision())
                size = len(json.dumps(decision))
                if size > MAX_DECISION_CHARS:
                    raise ValueError(f"the decision facts are {size} characters of JSON, over the server's {MAX_DECISION_CHARS}")
                extra["decision"] = decision
            except Exception as err:  # noqa: BLE001 - sent as the reason, as the oracle's error is
                extra["decision_error"] = f"{type(err).__name__}: {err}"[:_MAX_ERROR_CHARS]
        if "frame" in groups and base.obs_mode != "text":
            extra["fresh_frame_sha256"] = hashlib.sha256(np.ascontiguousarray(base.fresh_render()).tobytes()).hexdigest()

    def _card(self) -> dict[str, Any]:
        """The served env's card and class facts, for a remote conformance kit (computed once per env)."""
        if self._card_of[0] != self._env_id:
            self._card_of = (self._env_id, _card_facts(self._env_id, self.env))
        return self._card_of[1]

    def get_metadata(self) -> EnvironmentMetadata:
        served = sorted(self.catalog.entries)
        return EnvironmentMetadata(
            name=self.catalog.title,
            description=(
                "RL4VLM Gym envs over OpenEnv: free-text actions, observations with image (PNG or raw), "
                f"text, mission and admissible actions, and info. Serves: {', '.join(served[:50])}"
                + (" ..." if len(served) > 50 else "")
            ),
            version=_version(),
            documentation_url="https://pypi.org/project/rl4vlm-gym/",
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._extra = None
            self._frames = SentFrames()  # the frames kept go with the session
            env, self.env = self.env, None
            if env is not None:
                env.close()

    # -- helpers ------------------------------------------------------------------------------------

    def _require_env(self) -> gym.Env:
        if self._closed:
            raise RuntimeError(f"{SESSION_CLOSED}this session is closed (idle too long, or shut down); open a new one")
        if self.env is None:
            raise RuntimeError(
                "call reset before step (HTTP /step is stateless: give it seed and env_id to step from a "
                "reset, or play episodes over the WebSocket /ws)"
            )
        return self.env

    def _env_for(self, name: str | None, make_kwargs: dict[str, Any] | None) -> gym.Env:
        if self._closed:
            raise RuntimeError(f"{SESSION_CLOSED}this session is closed (idle too long, or shut down); open a new one")
        key = name if name is not None else (self._key or self.catalog.default)
        env_id, kwargs = self.catalog.resolve(key)
        if make_kwargs is not None:
            if not isinstance(make_kwargs, dict):
                raise ValueError(f"make_kwargs must be an object (got {_what(make_kwargs)})")
            if len(json.dumps(make_kwargs, default=str)) > _MAX_KWARGS_CHARS:
                raise ValueError(f"make_kwargs is longer than {_MAX_KWARGS_CHARS} characters as JSON")
            reserved = sorted(shown_name(n) for n in set(make_kwargs) & RESERVED)
            if reserved:
                raise ValueError(f"make_kwargs may not set {', '.join(reserved)}: the server decides how envs render and wrap")
            try:
                kwargs.update(self.catalog.policy.check(env_id, make_kwargs, trusted=self.catalog.expose_oracle))
            except ValueError as err:  # the operator hears of clients probing the policy (the message echoes no value)
                logger.warning("%s: refused by the policy: %s", env_id, err)
                raise
            if "image_size" in kwargs and isinstance(kwargs["image_size"], list):
                kwargs["image_size"] = tuple(kwargs["image_size"])
        elif self.env is not None and key == self._key:
            return self.env  # same env, same kwargs: keep it
        if self.env is not None and key == self._key and kwargs == self._make_kwargs:
            return self.env
        self._check_kwargs(env_id, kwargs)
        env = gym.make(env_id, **kwargs)  # first: refused arguments leave the session's env as it was
        if self.env is not None:
            self.env.close()
        self.env, self._key, self._env_id, self._make_kwargs = env, key, env_id, kwargs
        return env

    @staticmethod
    def _check_kwargs(env_id: str, kwargs: Mapping[str, Any]) -> None:
        """Refuse keywords the env does not take, naming them (before making anything); a class taking
        ``**kwargs`` is followed to the bases it passes them to."""
        from rl4vlm_gym.registry import env_class

        try:
            cls = env_class(env_id)
        except KeyError:
            return  # not one of ours (a plain Gymnasium id): make() will say
        takes = accepted_names(cls)
        if takes is None:
            return
        allowed = set(takes) | {"max_episode_steps"}
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            names = ", ".join(shown_name(n) for n in unknown[:10])
            raise ValueError(f"{env_id} takes no arguments {names}; it takes {sorted(allowed - RESERVED)}")

    def _observation(
        self,
        obs: Mapping[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
        asked: tuple[str, ...] | None = None,
    ) -> VLMObservation:
        state = None
        if asked and self._extra is not None:  # else (its computation failed) the client reads state, which reports why
            state = self._state_of(self._extra).model_dump()
        return VLMObservation(
            image=self._frames.encode(obs["image"], self._image_format),
            text=_utf8(obs["text"]),
            mission=_utf8(obs["mission"]),
            actions=[_utf8(a) for a in obs["actions"]],
            info=_plain(info),
            terminated=terminated,
            truncated=truncated,
            done=terminated or truncated,
            reward=reward,
            state=state,
        )


def _extra_groups(asked: Any) -> tuple[str, ...] | None:
    """``state_extras`` of a reset or step, checked: a list of :data:`EXTRA_GROUPS` names (None: not asked)."""
    if asked is None:
        return None
    if not isinstance(asked, list) or len(asked) > 16 or not all(isinstance(g, str) and g in EXTRA_GROUPS for g in asked):
        raise ValueError(f"state_extras must be a list of names from {list(EXTRA_GROUPS)} (got {_what(asked)})")
    return tuple(g for g in EXTRA_GROUPS if g in asked)


def _what(value: Any) -> str:
    """A client's value described without echoing it: its type and size."""
    if isinstance(value, (str, list, dict)):
        unit = "characters" if isinstance(value, str) else "items"
        return f"a {type(value).__name__} of {len(value)} {unit}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an int of {len(str(abs(value)))} digits" if abs(value) >= 2**63 else "an int out of range"
    return f"a {type(value).__name__}"


def _cut(message: str) -> str:
    """An error message kept short (an env's refusal may quote the value refused)."""
    return message if len(message) <= _MAX_ERROR_CHARS else message[:_MAX_ERROR_CHARS] + "..."


def _registered_limit(env_id: str | None) -> int | None:
    """The time limit ``gym.make(env_id)`` wraps the env in (its spec's ``max_episode_steps``)."""
    try:
        return gym.spec(env_id).max_episode_steps  # type: ignore[arg-type]
    except (gym.error.Error, TypeError):
        return None


def _card_facts(env_id: str | None, env: gym.Env | None) -> dict[str, Any]:
    """The registry card of ``env_id`` and, under ``"class"``, its env class's name and docstring
    sections (bounded), as JSON data; the env's rules travel as ``state["facts"]`` (:meth:`VLMEnv.facts`)."""
    from rl4vlm_gym.docs import class_sections
    from rl4vlm_gym.registry import env_card

    facts: dict[str, Any] = {}
    try:
        card = env_card(env_id)  # type: ignore[arg-type]
    except (KeyError, TypeError):
        pass  # not one of ours: no card
    else:
        facts.update(
            obs_modes=list(card.obs_modes),
            levels=list(card.levels),
            default_level=card.default_level,
            reward_variants=list(card.reward_variants),
        )
    cls = type(env.unwrapped) if env is not None else None
    if cls is None or not issubclass(cls, VLMEnv):
        return facts
    sections = {name: body[:_MAX_DOC_SECTION_CHARS] for name, body in class_sections(cls).items()}
    facts["class"] = {"name": cls.__name__, "doc_sections": sections}
    return facts


def _version() -> str:
    import rl4vlm_gym

    return rl4vlm_gym.__version__
