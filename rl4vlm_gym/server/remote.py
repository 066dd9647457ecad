"""``rl4vlm/Remote-v0``: a Gymnasium env that plays an env served by ``rl4vlm-gym serve`` (or any server
speaking the same OpenEnv messages), through openenv-core's own WebSocket client (``EnvClient``).

    env = gym.make("rl4vlm/Remote-v0", url="http://host:8000", env_id="rl4vlm/Sokoban-v0", level=1)
    obs, info = env.reset(seed=7)          # the same four keys, info and rewards as the local env

Keyword arguments other than the remote env's own are the served env's ``gym.make`` arguments
(``level``, ``obs_mode``, ``image_size``, ``reward_variant``...). A seeded rollout is byte for byte
the local env's (``tests/server/test_remote.py`` compares their digests).

As ``gym.make(served_id)`` wraps the served class in a ``TimeLimit`` of its spec's ``max_episode_steps``,
``gym.make("rl4vlm/Remote-v0", ...)`` (:func:`make_remote`) wraps a :class:`RemoteEnv` that plays the
served env without its limit in a ``TimeLimit`` of the same length: ``env.unwrapped`` is the served env
unwrapped, as the conformance kit reads a local env (Gymnasium's ``check_env`` runs on it).
"""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from rl4vlm_gym.server.environment import ARGUMENT_ERROR
from rl4vlm_gym.server.models import EXTRA_GROUPS, IMAGE_FORMATS, EncodedImage, VLMState, decode_image
from rl4vlm_gym.spaces import Unicode, UnicodeTuple

__all__ = ["RemoteArgumentError", "RemoteEnv", "RemoteError", "VLMEnvClient", "make_remote"]

# The local env's limits (rl4vlm_gym.core.VLMEnv), so a remote observation fits the same space.
MAX_TEXT_LENGTH, MAX_ACTIONS, MAX_ACTION_LENGTH, MAX_OUTPUT_LENGTH = 1 << 16, 1 << 12, 1 << 10, 1 << 20

# The group of state's extras each key belongs to (EXTRA_GROUPS; any other key is a rule: "rules").
_GROUP = {"oracle_action": "oracle", "oracle_error": "oracle", "optimal_steps": "oracle", "fresh_frame_sha256": "frame"}


_OPEN: weakref.WeakSet[RemoteEnv] = weakref.WeakSet()


@atexit.register
def _close_open() -> None:
    """Close sessions while the clients' event-loop threads can still run (not from ``__del__`` at exit)."""
    for env in list(_OPEN):
        env.close()


class RemoteError(RuntimeError):
    """The server answered with OpenEnv's error shape; ``code`` is its ``WSErrorCode``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(f"{message} (server error {code})")
        self.code = code


class RemoteArgumentError(RemoteError, ValueError):
    """The server refused an argument of ``make`` or ``reset`` (a ``ValueError`` with the local env)."""


class VLMEnvClient(EnvClient[Any, dict[str, Any], VLMState]):
    """openenv-core's WebSocket client for our server: actions are text, results are observation dicts
    (image decoded to ``uint8[H, W, 3]``). Use it async, or ``.sync()`` for blocking calls."""

    def _step_payload(self, action: Any) -> dict[str, Any]:
        extras = None
        if isinstance(action, _WithExtras):
            action, extras = action.action, action.extras
        if isinstance(action, bytes):  # as the local parser does
            action = action.decode("utf-8", errors="replace")
        if not (action is None or isinstance(action, (str, int, float, bool))):
            action = repr(action)
        return {"text": action} if not extras else {"text": action, "metadata": {"state_extras": list(extras)}}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[dict[str, Any]]:
        obs = dict(payload.get("observation", {}))
        obs["image"] = decode_image(EncodedImage.model_validate(obs["image"]))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, Any]) -> VLMState:
        return VLMState.model_validate(payload)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        await self._send(message)
        response = await self._receive()
        if response.get("type") == "error":
            data = response.get("data") or {}
            text, code = str(data.get("message", "unknown error")), str(data.get("code", "UNKNOWN"))
            if text.startswith(ARGUMENT_ERROR):
                raise RemoteArgumentError(text[len(ARGUMENT_ERROR) :], code)
            raise RemoteError(text, code)
        return response


class _WithExtras:
    """An action and the groups of state's extras to get with its step (RemoteEnv's, to VLMEnvClient)."""

    __slots__ = ("action", "extras")

    def __init__(self, action: Any, extras: list[str]) -> None:
        self.action, self.extras = action, extras


def make_remote(url: str, env_id: str | None = None, **kwargs: Any) -> gym.Env:
    """``rl4vlm/Remote-v0``'s entry point: a :class:`RemoteEnv` (same arguments) playing the served env
    without its time limit, in a ``TimeLimit`` of the served id's ``max_episode_steps`` (none if it has
    none): the wrapping ``gym.make(served_id)`` gives, so ``env.unwrapped`` is the served env unwrapped."""
    env = RemoteEnv(url, env_id, served_time_limit=False, **kwargs)
    limit = env.served_max_episode_steps
    return TimeLimit(env, limit) if limit is not None and limit > 0 else env


class RemoteEnv(gym.Env):
    """A served env, played over OpenEnv's WebSocket protocol.

    ## Arguments

    - ``url``: the server (``http://host:port`` or ``ws://host:port``).
    - ``env_id``: the served id or suite task (optional when the server serves one).
    - ``image_format``: ``"png"`` (default: small messages) or ``"raw"`` (no encoding cost).
    - ``connect_timeout_s``, ``message_timeout_s``: the client's timeouts.
    - ``render_mode``: ``"rgb_array"`` (the observed frame), ``"ansi"`` or None.
    - ``served_time_limit``: True (default) plays the served env in its ``TimeLimit``; False without it
      (:func:`make_remote`, ``gym.make("rl4vlm/Remote-v0")``, then wraps this env in one of its length).
    - any other keyword: the served env's ``gym.make`` arguments.

    Pickling (and ``AsyncVectorEnv`` with ``spawn``) opens a new session and replays the episode
    from its seed, so a seeded episode continues identically; an unseeded one cannot be pickled.

    It answers :class:`~rl4vlm_gym.core.VLMEnv`'s public inspection API (``facts()``, ``describe()``,
    ``admissible_actions``, ``elapsed_steps``, ``optimal_steps``, ``oracle_action()``) from the
    server's ``state``, so the conformance kit reads a served env as it reads a local one. Each group
    of it (:data:`~rl4vlm_gym.server.models.EXTRA_GROUPS`: the rules, the oracle, the fresh frame) read
    once after a reset comes with every later reset, and one read after a step with every later step
    (``state_extras``), so reading them costs no round trip of its own and the server computes no more
    than is read (the oracle check reads the rules after resets, the oracle after steps); an env that
    reads none (training) asks for none.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}
    action_space: Unicode  # as VLMEnv declares it: its vocabulary is the served state's admissible actions
    KIT_PROXY = True  # the kit checks it as a served env: its code and frames stay in the server

    def __init__(
        self,
        url: str,
        env_id: str | None = None,
        *,
        image_format: str = "png",
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = 120.0,
        render_mode: str | None = None,
        served_time_limit: bool = True,
        **make_kwargs: Any,
    ) -> None:
        if image_format not in IMAGE_FORMATS:
            raise ValueError(f"image_format must be one of {IMAGE_FORMATS}, got {image_format!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is unknown; choose one of {self.metadata['render_modes']} or None")
        self.url, self.env_id, self.image_format = url, env_id, image_format
        self.make_kwargs = {k: list(v) if isinstance(v, tuple) else v for k, v in make_kwargs.items()}
        self._unlimited = not served_time_limit and "max_episode_steps" not in self.make_kwargs
        if self._unlimited:
            self.make_kwargs["max_episode_steps"] = -1  # gym.make's "no TimeLimit"
        self.render_mode = render_mode
        self._timeouts = (connect_timeout_s, message_timeout_s)
        self._client: Any = None
        self._last: dict[str, Any] | None = None
        self._history: tuple[dict[str, Any], list[Any]] | None = None  # (reset kwargs, actions) for pickling
        self._state: dict[str, Any] | None = None  # the server's state since the last reset or step
        # The groups of state's extras read in this env after a reset, and after a step: asked for with each later one.
        self._asked: dict[str, set[str]] = {"reset": {"rules"}, "step": set()}
        self._after = "reset"  # what the current state follows
        first = self._call("reset", **self._reset_kwargs(None, None))  # makes the env, shows the image size
        h, w, _ = first.observation["image"].shape
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (h, w, 3), np.uint8),
                "text": Unicode(MAX_TEXT_LENGTH),
                "mission": Unicode(MAX_TEXT_LENGTH),
                "actions": UnicodeTuple(MAX_ACTIONS, MAX_ACTION_LENGTH),
            }
        )
        self.action_space = Unicode(MAX_OUTPUT_LENGTH, vocabulary=first.observation["actions"])
        self._started = False
        # Fixed by env_id and make_kwargs (read after close too), from the first reset's state; from now on
        # a group of state's extras comes with each reset and step once it was read.
        self._card: dict[str, Any] = self._extra("card") or {}
        self._max_episode_steps: int | None = self._extra("max_episode_steps")
        self._asked["reset"] = set()

    # -- Gymnasium ----------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        kwargs = self._reset_kwargs(seed, options)
        result = self._call("reset", **kwargs)
        self._history = (kwargs, []) if seed is not None else None
        self._started = True
        return self._unpack(result)[0], self._last["info"]  # type: ignore[index]

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        extras = self._asked_list("step")
        result = self._call("step", _WithExtras(action, extras) if extras else action)
        if self._history is not None:
            self._history[1].append(action)
        return self._unpack(result)

    def render(self) -> Any:
        if self._last is None or self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            return self._last["image"].copy()
        obs = self._last
        return f"{obs['mission']}\n\n{obs['text']}\n\nActions: {', '.join(obs['actions'])}"

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - the server may be gone already
                pass

    def __del__(self) -> None:
        if not sys.is_finalizing():  # the client's loop thread cannot run any more
            self.close()

    # -- the served env's public inspection API (VLMEnv's), one state round trip per reset or step --

    def server_state(self) -> VLMState:
        """OpenEnv's ``state`` of this session: the served env, its rules and the episode's position."""
        return self._connected().state()

    def facts(self) -> dict[str, Any]:
        """The served env's :meth:`~rl4vlm_gym.core.VLMEnv.facts`, as the server sent them (JSON data)."""
        facts = self._extra("facts")
        if facts is None:
            raise RuntimeError(f"the server sends no facts for {self.served_id!r}: it is not an RL4VLM Gym env")
        return dict(facts)

    def describe(self) -> str:
        """The served state in words (:meth:`~rl4vlm_gym.core.VLMEnv.describe`)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before describe()")
        return self._extra("description")

    @property
    def admissible_actions(self) -> tuple[str, ...]:
        """The served state's admissible actions."""
        return tuple(self._extra("admissible") or ())

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in the served episode, invalid ones included."""
        return int(self._extra("elapsed_steps"))

    @property
    def served_id(self) -> str | None:
        """The Gymnasium id the server plays for this session (``env_id`` may name a suite's task)."""
        return self._extra("served_id")

    @property
    def served_make_kwargs(self) -> dict[str, Any]:
        """The ``gym.make`` arguments the server made the served env with (its catalog's and ours; not the
        ``max_episode_steps=-1`` that asks for it without its time limit, which :func:`make_remote` applies)."""
        made = dict(self._extra("make_kwargs") or {})
        if self._unlimited:
            made.pop("max_episode_steps", None)
        return made

    @property
    def served_max_episode_steps(self) -> int | None:
        """The time limit ``gym.make`` puts on the served id (its spec's ``max_episode_steps``)."""
        return self._max_episode_steps

    @property
    def card(self) -> dict[str, Any]:
        """The served id's card (``obs_modes``, ``levels``, ``default_level``, ``reward_variants``) and
        under ``"class"`` its env class's name and docstring sections, as the server describes them."""
        return self._card

    @property
    def oracle_exposed(self) -> bool:
        """Whether the server shows its oracle, plans and fresh frames (``--expose-oracle``)."""
        return bool(self._extra("oracle_exposed"))

    @property
    def HAS_ORACLE(self) -> bool:  # noqa: N802 - the served class's flag, under its name
        return bool(self._extra("has_oracle"))

    @property
    def obs_mode(self) -> str | None:
        return self._extra("obs_mode")

    @property
    def reward_variant(self) -> str:
        return self._extra("reward_variant")

    @property
    def optimal_steps(self) -> Any:
        """The served episode's plan length (only from a server started with ``--expose-oracle``)."""
        value = self._extra("optimal_steps")
        if value is None:
            raise RuntimeError(
                self._extra("oracle_error")
                or "the server does not expose optimal_steps (--expose-oracle), or has not computed it (optimal_steps_at_reset=True)"
            )
        return value  # as the served env reports it (the kit checks that it is an int)

    def fresh_frame_sha256(self) -> str | None:
        """SHA-256 of a fresh render of the served state (``--expose-oracle`` servers; else None)."""
        return self._extra("fresh_frame_sha256")

    def oracle_action(self) -> str:
        """The served env's oracle move (only from a server started with ``--expose-oracle``)."""
        action = self._extra("oracle_action")
        if action is None:
            raise RuntimeError(self._extra("oracle_error") or "the server does not expose its oracle (--expose-oracle)")
        return action

    # -- helpers ------------------------------------------------------------------------------------

    def _extra(self, key: str) -> Any:
        group = _GROUP.get(key, "rules")
        self._asked[self._after].add(group)  # from now on it comes with each reset (or step)
        if self._state is None or group not in self._state.get("extras", EXTRA_GROUPS):
            self._state = self.server_state().model_dump()  # a state round trip: every group, however many are read
        return self._state.get(key)

    def _asked_list(self, after: str) -> list[str]:
        return [g for g in EXTRA_GROUPS if g in self._asked[after]]

    def _reset_kwargs(self, seed: int | None, options: Mapping[str, Any] | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"make_kwargs": self.make_kwargs, "image_format": self.image_format}
        if self._asked["reset"]:
            kwargs["state_extras"] = self._asked_list("reset")
        if self.env_id is not None:
            kwargs["env_id"] = self.env_id
        if seed is not None:
            kwargs["seed"] = seed
        if options is not None:
            kwargs["options"] = dict(options)
        return kwargs

    def _connected(self) -> Any:
        if self._client is None:
            connect, message = self._timeouts
            self._client = VLMEnvClient(base_url=self.url, connect_timeout_s=connect, message_timeout_s=message).sync()
            self._client.connect()
            _OPEN.add(self)
        return self._client

    def _call(self, what: str, *args: Any, **kwargs: Any) -> StepResult[dict[str, Any]]:
        self._state, self._after = None, what
        result = getattr(self._connected(), what)(*args, **kwargs)
        self._state = result.observation.get("state")  # the extras asked for with it (None: none)
        return result

    def _unpack(self, result: StepResult[dict[str, Any]]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        data = result.observation
        obs = {"image": data["image"], "text": data["text"], "mission": data["mission"], "actions": tuple(data["actions"])}
        self.action_space.vocabulary = obs["actions"]  # as VLMEnv keeps it: check_env samples admissible actions
        self._last = {**obs, "info": data["info"]}
        return obs, float(result.reward or 0.0), bool(data["terminated"]), bool(data["truncated"]), data["info"]

    def __getstate__(self) -> dict[str, Any]:
        if self._started and self._history is None:
            raise TypeError("a remote env can be pickled only before its first reset or in a seeded episode")
        state = {k: v for k, v in self.__dict__.items() if k != "_client"}
        state["_client"], state["_state"] = None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._history is not None:  # replay the seeded episode in a new session
            kwargs, actions = self._history
            self._call("reset", **kwargs)
            for action in actions:
                self._call("step", action)


make_remote.KIT_PROXY = True  # type: ignore[attr-defined]  # the kit checks what it makes as a served env (testing.is_remote)
