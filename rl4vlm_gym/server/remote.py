"""``rl4vlm/Remote-v0``: a Gymnasium env that plays an env served by ``rl4vlm-gym serve`` (or any server
speaking the same OpenEnv messages), over OpenEnv's WebSocket protocol.

    env = gym.make("rl4vlm/Remote-v0", url="http://host:8000", env_id="rl4vlm/Sokoban-v0", level=1)
    obs, info = env.reset(seed=7)          # the same four keys, info and rewards as the local env

Keyword arguments other than the remote env's own are the served env's ``gym.make`` arguments
(``level``, ``obs_mode``, ``image_size``, ``reward_variant``...). A seeded rollout is byte for byte
the local env's (``tests/server/test_remote.py`` compares their digests).

As ``gym.make(served_id)`` wraps the served class in a ``TimeLimit`` of its spec's ``max_episode_steps``,
``gym.make("rl4vlm/Remote-v0", ...)`` (:func:`make_remote`) wraps a :class:`RemoteEnv` that plays the
served env without its limit in a ``TimeLimit`` of the same length: ``env.unwrapped`` is the served env
unwrapped, as the conformance kit reads a local env (Gymnasium's ``check_env`` runs on it).

A session never desyncs: a request that gets no answer within ``message_timeout_s`` drops the connection
(with it the server's session; its late answer would otherwise answer the next request) and raises
:class:`RemoteTimeoutError`. A session the server ended (idle longer than its ``--idle-timeout``, a
restart) is reopened by the next ``reset``, and by a ``step`` of a seeded episode, which is replayed in
the new session first (as unpickling replays it). Errors, all :class:`RemoteError` (a ``RuntimeError``)
with the server's ``code``:

- :class:`RemoteArgumentError` (also a ``ValueError``): the server refused an argument of ``make`` or
  ``reset``, or a message's content (``VALIDATION_ERROR``);
- :class:`RemoteCapacityError`: the server runs as many sessions as it takes (``--max-sessions``);
- :class:`RemoteAuthError`: the server refused the token (``token=`` or the environment variable
  ``RL4VLM_GYM_SERVER_TOKEN``, sent as ``Authorization: Bearer <token>`` on the WebSocket handshake);
- :class:`RemoteTimeoutError`: no answer in time (above);
- :class:`RemoteSessionLost`: the server ended the session or the connection broke, and it could not be
  reopened here (a ``step`` of an unseeded episode): ``reset()`` opens a new one.

An unreachable server raises ``ConnectionError``, as openenv-core's client does.
"""

from __future__ import annotations

import asyncio
import atexit
import ipaddress
import json
import os
import sys
import weakref
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.utils import convert_to_ws_url
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as sync_connect

from rl4vlm_gym.server.environment import ARGUMENT_ERROR, SESSION_CLOSED
from rl4vlm_gym.server.models import EXTRA_GROUPS, IMAGE_FORMATS, ReceivedFrames, VLMState
from rl4vlm_gym.spaces import Unicode, UnicodeTuple

__all__ = [
    "SERVER_TOKEN_ENV",
    "RemoteArgumentError",
    "RemoteAuthError",
    "RemoteCapacityError",
    "RemoteEnv",
    "RemoteError",
    "RemoteSessionLost",
    "RemoteTimeoutError",
    "VLMEnvClient",
    "make_remote",
]

SERVER_TOKEN_ENV = "RL4VLM_GYM_SERVER_TOKEN"
"""The environment variable holding the server's token, read when ``token`` is not given (the server reads it too)."""

# The local env's limits (rl4vlm_gym.core.VLMEnv), so a remote observation fits the same space.
MAX_TEXT_LENGTH, MAX_ACTIONS, MAX_ACTION_LENGTH, MAX_OUTPUT_LENGTH = 1 << 16, 1 << 12, 1 << 10, 1 << 20

# The group of state's extras each key belongs to (EXTRA_GROUPS; any other key is a rule: "rules").
_GROUP = {
    "oracle_action": "oracle",
    "oracle_error": "oracle",
    "optimal_steps": "oracle",
    "decision": "oracle",
    "decision_error": "oracle",
    "fresh_frame_sha256": "frame",
}
_DECISION_KEYS = ("optimal_actions", "steps_to_go", "values", "reason", "features")
MAX_DECISION_CHARS = 1 << 20  # the server's bound (rl4vlm_gym.server.environment), held again here: a server may be hostile


_OPEN: weakref.WeakSet[RemoteEnv] = weakref.WeakSet()


@atexit.register
def _close_open() -> None:
    """Close open sessions at exit, so their servers free them at once (``__del__`` does not run then)."""
    for env in list(_OPEN):
        env.close()


class RemoteError(RuntimeError):
    """The server answered with OpenEnv's error shape, or the session failed; ``code`` is the server's
    ``WSErrorCode`` or, where the client found the failure, ``TIMEOUT``, ``SESSION_LOST``, ``FORBIDDEN``,
    ``MESSAGE_TOO_BIG`` (WebSocket close code 1009) or ``CAPACITY_REACHED`` (close code 1013)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code


class RemoteArgumentError(RemoteError, ValueError):
    """The server refused an argument of ``make`` or ``reset`` (a ``ValueError`` with the local env), or
    the content of a message (``VALIDATION_ERROR``)."""


class RemoteCapacityError(RemoteError):
    """The server runs as many sessions as it takes (its ``--max-sessions``): try again later, or another server."""


class RemoteAuthError(RemoteError):
    """The server refused the connection: no token, or not its token (``token=`` or ``RL4VLM_GYM_SERVER_TOKEN``)."""


class RemoteTimeoutError(RemoteError):
    """No answer within ``message_timeout_s``: the connection was dropped, and with it the session and its
    episode (its late answer would have answered the next request); ``reset()`` opens a new session."""


class RemoteSessionLost(RemoteError):
    """The server ended the session (idle longer than its ``--idle-timeout``, a restart) or the connection
    broke, mid-episode; ``reset()`` opens a new session."""


# What a session the server closed (reaped idle, or shut down) said before SESSION_CLOSED prefixed it.
_CLOSED_SESSION = "this session is closed"
_MAX_MESSAGE_BYTES = 100 << 20  # openenv-core's client's limit: a 4096x4096 raw frame is 64 MiB, 86 MiB in base64
_CLOSE_TIMEOUT_S = 2.0
# WebSocket close codes the server ends a connection with (besides a plain close).
_TRY_AGAIN_LATER, _MESSAGE_TOO_BIG = 1013, 1009


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _ws_url(base_url: str) -> str:
    return convert_to_ws_url(base_url).rstrip("/") + "/ws"


def _connect_options(ws_url: str, token: str | None, open_timeout: float) -> dict[str, Any]:
    """websockets' ``connect`` keywords: the token's header, no ``permessage-deflate`` (images are PNG,
    compressed already, or raw for speed: deflating a 224x224 raw frame cost 7 ms), no proxy to this machine,
    and a short wait for the server's side of a close (a gone server must not hold ``close()`` for websockets'
    10 s)."""
    return {
        "open_timeout": open_timeout,
        "max_size": _MAX_MESSAGE_BYTES,
        "additional_headers": {"Authorization": f"Bearer {token}"} if token else None,
        "compression": None,
        "proxy": None if _is_loopback(ws_url) else True,
        "close_timeout": _CLOSE_TIMEOUT_S,
    }


def _connect_error(ws_url: str, err: Exception, token: str | None) -> Exception:
    """The exception for a failed handshake: :class:`RemoteAuthError` for HTTP 401/403, else ``ConnectionError``."""
    if isinstance(err, InvalidStatus) and err.response.status_code in (401, 403):
        status, body = err.response.status_code, err.response.body
        detail = body.decode("utf-8", "replace")[:300] if body else "forbidden"
        given = "a token that is not the server's" if token else "no token"
        return RemoteAuthError(
            f"{ws_url} refused the connection (HTTP {status}: {detail}): the client gave {given}; pass token=... or set {SERVER_TOKEN_ENV}",
            "FORBIDDEN",
        )
    return ConnectionError(f"Failed to connect to {ws_url}: {err}")


def _step_payload(action: Any) -> dict[str, Any]:
    """A step message's data: the action as text (bytes decoded, other objects by ``repr``, as the local parser
    sees them) and the groups of state's extras asked for with it."""
    extras = None
    if isinstance(action, _WithExtras):
        action, extras = action.action, action.extras
    if isinstance(action, bytes):  # as the local parser does
        action = action.decode("utf-8", errors="replace")
    if not (action is None or isinstance(action, (str, int, float, bool))):
        action = repr(action)
    return {"text": action} if not extras else {"text": action, "metadata": {"state_extras": list(extras)}}


def _parse_result(payload: dict[str, Any], frames: ReceivedFrames) -> StepResult[dict[str, Any]]:
    obs = dict(payload.get("observation", {}))
    obs["image"] = frames.decode(obs["image"])
    return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done")))


def _answer(raw: str | bytes, drop: Callable[[], None]) -> dict[str, Any]:
    """The server's answer, or the :class:`RemoteError` its error message says; a session the server closed
    but kept the socket of (an idle reap) is dropped with ``drop``, so the next request connects anew."""
    response = json.loads(raw)
    if response.get("type") == "error":
        err = _error(response.get("data") or {})
        if isinstance(err, RemoteSessionLost):
            drop()
        raise err
    return response


def _decision_of(facts: Any) -> dict[str, Any]:
    """The decision facts a server sent, as :meth:`~rl4vlm_gym.core.Decision.as_dict` gives them: the five keys, each
    of its JSON type, the actions' names within the observation's bounds and the whole within ``MAX_DECISION_CHARS``
    (non-finite values, which the server sends as strings, as floats again); else :class:`RemoteError`."""

    def bad(why: str) -> RemoteError:
        return RemoteError(f"the server sent malformed decision facts: {why}", "BAD_DECISION")

    if not isinstance(facts, dict) or sorted(facts) != sorted(_DECISION_KEYS):
        raise bad(f"not a mapping of {list(_DECISION_KEYS)}")
    size = len(json.dumps(facts))
    if size > MAX_DECISION_CHARS:
        raise bad(f"{size} characters of JSON, over {MAX_DECISION_CHARS}")
    optimal, steps, values, reason, features = (facts[k] for k in _DECISION_KEYS)
    if optimal is not None and not (
        isinstance(optimal, list)
        and len(optimal) <= MAX_ACTIONS
        and all(isinstance(a, str) and len(a) <= MAX_ACTION_LENGTH for a in optimal)
    ):
        raise bad("optimal_actions is not null or a list of action names")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < -1:
        raise bad("steps_to_go is not an int of at least -1")
    if values is not None:
        if not isinstance(values, dict) or len(values) > MAX_ACTIONS:
            raise bad("values is not null or a mapping of actions to numbers")
        values = {a: float(v) if v in ("nan", "inf", "-inf") else v for a, v in values.items()}
        if not all(
            len(a) <= MAX_ACTION_LENGTH and isinstance(v, (int, float)) and not isinstance(v, bool) for a, v in values.items()
        ):
            raise bad("values is not null or a mapping of actions to numbers")
    if reason is not None and not isinstance(reason, str):
        raise bad("reason is not null or a string")
    if features is not None and not isinstance(features, dict):
        raise bad("features is not null or a mapping")  # its values' types are the kit's to judge
    return {"optimal_actions": optimal, "steps_to_go": steps, "values": values, "reason": reason, "features": features}


def _timeout_error(what: Any, seconds: float) -> RemoteTimeoutError:
    return RemoteTimeoutError(
        f"no answer to {what!r} within message_timeout_s={seconds} s: the connection was dropped, with the session "
        "and its episode (a late answer would have answered the next request); reset() opens a new session",
        "TIMEOUT",
    )


def _error(data: Mapping[str, Any]) -> RemoteError:
    """The exception for an error message of the server (OpenEnv's error shape)."""
    text, code = str(data.get("message", "unknown error")), str(data.get("code", "UNKNOWN"))
    if code == "CAPACITY_REACHED":
        return RemoteCapacityError(text, code)
    if text.startswith(ARGUMENT_ERROR):
        return RemoteArgumentError(text[len(ARGUMENT_ERROR) :], code)
    if code == "VALIDATION_ERROR":
        errors = data.get("errors")
        said = "; ".join(str(e.get("msg", e)) for e in errors[:3] if isinstance(e, Mapping)) if isinstance(errors, list) else ""
        return RemoteArgumentError(f"{text}: {said}"[:1000] if said else text, code)
    if text.startswith(SESSION_CLOSED):
        return RemoteSessionLost(text[len(SESSION_CLOSED) :], "SESSION_LOST")
    if _CLOSED_SESSION in text:  # a server from before SESSION_CLOSED
        return RemoteSessionLost(text, "SESSION_LOST")
    return RemoteError(text, code)


def _closed_error(closed: ConnectionClosed) -> RemoteError:
    """The exception for a connection the server closed without an error message."""
    code, reason = (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd is not None else (None, "")
    said = f"WebSocket close code {code}" + (f", {reason!r}" if reason else "") if code is not None else "no close code"
    if code == _TRY_AGAIN_LATER:
        return RemoteCapacityError(f"the server is at capacity ({said}): try again later", "CAPACITY_REACHED")
    if code == _MESSAGE_TOO_BIG:
        return RemoteArgumentError(f"the message is over the server's size limit ({said})", "MESSAGE_TOO_BIG")
    return RemoteSessionLost(
        f"the server closed the connection ({said}): the session and its episode are gone; reset() opens a new session",
        "SESSION_LOST",
    )


class VLMEnvClient(EnvClient[Any, dict[str, Any], VLMState]):
    """openenv-core's WebSocket client for our server: actions are text, results are observation dicts
    (image decoded to ``uint8[H, W, 3]``). Use it async, or ``.sync()`` for blocking calls
    (:class:`RemoteEnv` has a blocking session of its own, without the event-loop thread of ``.sync()``).

    ``token`` (default: the environment variable ``RL4VLM_GYM_SERVER_TOKEN``) goes with the WebSocket
    handshake as ``Authorization: Bearer <token>``. Failures raise the :class:`RemoteError` classes
    (module docstring); after a timeout or a closed connection the client is disconnected, and the next
    request connects again (a new session)."""

    def __init__(
        self,
        base_url: str,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = 60.0,
        *,
        token: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(base_url, connect_timeout_s=connect_timeout_s, message_timeout_s=message_timeout_s, **kwargs)
        self._token = token if token is not None else os.environ.get(SERVER_TOKEN_ENV) or None
        self._frames = ReceivedFrames()  # a frame received lately is not decoded again

    async def connect(self) -> VLMEnvClient:
        if self._ws is None:  # type: ignore[has-type]  # openenv-core declares it in __init__, untyped
            try:
                self._ws = await ws_connect(self._ws_url, **_connect_options(self._ws_url, self._token, self._connect_timeout))
            except Exception as err:
                raise _connect_error(self._ws_url, err, self._token) from None
        return self

    def _step_payload(self, action: Any) -> dict[str, Any]:
        return _step_payload(action)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[dict[str, Any]]:
        return _parse_result(payload, self._frames)

    def _parse_state(self, payload: dict[str, Any]) -> VLMState:
        return VLMState.model_validate(payload)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._send(message)
            raw = await asyncio.wait_for(self._ws.recv(), timeout=self._message_timeout)
        except TimeoutError:
            self._drop()
            raise _timeout_error(message.get("type"), self._message_timeout) from None
        except ConnectionClosed as closed:
            try:  # what the server said before it closed (a full server's CAPACITY_REACHED), buffered
                raw = await asyncio.wait_for(self._ws.recv(), timeout=1.0)
            except (ConnectionClosed, TimeoutError):
                raise _closed_error(closed) from None
            finally:
                self._drop()
        return _answer(raw, self._drop)

    def _drop(self) -> None:
        """Disconnect at once, without a closing handshake (the server may be busy or gone)."""
        ws: Any = self._ws
        self._ws = None  # type: ignore[assignment]  # openenv-core types it without None
        if ws is not None:
            ws.transport.abort()


class _Session:
    """One WebSocket session of :class:`RemoteEnv`: OpenEnv's messages over websockets' blocking client, in the
    caller's thread. (openenv-core's ``.sync()`` client runs an event loop in a thread of its own: two thread
    switches a request, which on a loaded machine cost milliseconds of a step's latency.) The same messages,
    errors and timeouts as :class:`VLMEnvClient`; after a timeout or a lost connection it is closed."""

    def __init__(self, base_url: str, connect_timeout_s: float, message_timeout_s: float, token: str | None) -> None:
        self._url, self._message_timeout = _ws_url(base_url), message_timeout_s
        self._frames = ReceivedFrames()  # a frame received lately is not decoded again
        token = token if token is not None else os.environ.get(SERVER_TOKEN_ENV) or None
        try:
            # entered as websockets' context manager (its direct use is deprecated); close() ends it
            self._ws: Any = sync_connect(self._url, **_connect_options(self._url, token, connect_timeout_s)).__enter__()
        except Exception as err:
            raise _connect_error(self._url, err, token) from None

    def reset(self, **kwargs: Any) -> StepResult[dict[str, Any]]:
        return _parse_result(self._request({"type": "reset", "data": kwargs}).get("data", {}), self._frames)

    def step(self, action: Any) -> StepResult[dict[str, Any]]:
        return _parse_result(self._request({"type": "step", "data": _step_payload(action)}).get("data", {}), self._frames)

    def state(self) -> VLMState:
        return VLMState.model_validate(self._request({"type": "state"}).get("data", {}))

    def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                ws.send(json.dumps({"type": "close"}))
                ws.close()
            except Exception:  # noqa: BLE001 - the server may be gone already
                ws.close_socket()

    def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        ws = self._ws
        if ws is None:
            raise RemoteSessionLost("this session was closed; reset() opens a new one", "SESSION_LOST")
        try:
            ws.send(json.dumps(message))
            raw = ws.recv(timeout=self._message_timeout)
        except TimeoutError:
            self._drop()
            raise _timeout_error(message["type"], self._message_timeout) from None
        except ConnectionClosed as closed:
            try:  # what the server said before it closed (a full server's CAPACITY_REACHED), buffered
                raw = ws.recv(timeout=1.0)
            except (ConnectionClosed, TimeoutError):
                raise _closed_error(closed) from None
            finally:
                self._drop()
        return _answer(raw, self._drop)

    def _drop(self) -> None:
        """Disconnect at once, without a closing handshake (the server may be busy or gone)."""
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.close_socket()


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
    - ``image_format``: ``"png"`` (default: small messages, and the fastest on loopback too: a frame sent or
      received lately is not encoded or decoded again) or ``"raw"`` (no encoding, but the frame's bytes in
      base64: 200 KB a step at 224x224, about three times PNG's step overhead on loopback).
    - ``connect_timeout_s``, ``message_timeout_s``: the client's timeouts. A request unanswered in
      ``message_timeout_s`` drops the connection and raises :class:`RemoteTimeoutError`.
    - ``token``: the server's token (``serve(token=...)``); default: the environment variable
      ``RL4VLM_GYM_SERVER_TOKEN``, else none. A given token is pickled with the env (a spawned worker
      reconnects with it); one from the environment is read again where the env is unpickled.
    - ``render_mode``: ``"rgb_array"`` (the observed frame), ``"ansi"`` or None.
    - ``served_time_limit``: True (default) plays the served env in its ``TimeLimit``; False without it
      (:func:`make_remote`, ``gym.make("rl4vlm/Remote-v0")``, then wraps this env in one of its length).
    - any other keyword: the served env's ``gym.make`` arguments.

    Pickling (and ``AsyncVectorEnv`` with ``spawn``) opens a new session and replays the episode
    from its seed, so a seeded episode continues identically; an unseeded one cannot be pickled. The same
    replay reopens a seeded episode whose session the server ended (reaped idle); ``reset`` always opens a
    new session when the old one is gone. See the module docstring for the errors.

    It answers :class:`~rl4vlm_gym.core.VLMEnv`'s public inspection API (``facts()``, ``describe()``,
    ``admissible_actions``, ``elapsed_steps``, ``optimal_steps``, ``oracle_action()``, ``decision()``) from the
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
        token: str | None = None,
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
        self._token = token
        self._client: _Session | None = None
        self._lost: str | None = None  # why the episode's session is gone (a timeout, a closed session)
        self._last: dict[str, Any] | None = None
        self._history: tuple[dict[str, Any], list[Any]] | None = None  # (reset kwargs, actions) for pickling
        self._state: dict[str, Any] | None = None  # the server's state since the last reset or step
        # The groups of state's extras read in this env after a reset, and after a step: asked for with each later one.
        self._asked: dict[str, set[str]] = {"reset": {"rules"}, "step": set()}
        self._after = "reset"  # what the current state follows
        try:
            first = self._call("reset", **self._reset_kwargs(None, None))  # makes the env, shows the image size
        except BaseException:
            self.close()  # a refused argument: the session goes now, not when the half-made env is collected
            raise
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
        self._started, self._lost = True, None
        return self._unpack(result)[0], self._last["info"]  # type: ignore[index]

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise gym.error.ResetNeeded(
                f"{self._lost}: call reset() to open a new session" if self._lost else "call reset() before step()"
            )
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

    def instruction_prompt(self) -> str | None:
        """The served episode's BALROG instructions (:meth:`~rl4vlm_gym.core.VLMEnv.instruction_prompt`),
        which the ``balrog`` prompt template opens with; None for envs without them (and from a server that
        does not send them)."""
        return self._extra("instruction_prompt")

    def __del__(self, _finalizing: Any = sys.is_finalizing) -> None:  # bound now: the module's globals are gone at exit
        if not _finalizing():
            self.close()

    # -- the served env's public inspection API (VLMEnv's), one state round trip per reset or step --

    def server_state(self) -> VLMState:
        """OpenEnv's ``state`` of this session: the served env, its rules and the episode's position."""
        return self._recovering("state")

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

    def decision(self) -> dict[str, Any]:
        """The served state's decision facts (:meth:`~rl4vlm_gym.core.VLMEnv.decision`; only from a server started
        with ``--expose-oracle``), checked for their shape and size (:class:`RemoteError` ``BAD_DECISION`` if not);
        their laws are the conformance kit's (``decisions``)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before decision()")
        facts = self._extra("decision")
        if facts is None:
            raise RuntimeError(self._extra("decision_error") or "the server does not expose decision facts (--expose-oracle)")
        return _decision_of(facts)

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

    def _connected(self) -> _Session:
        if self._client is None:
            connect, message = self._timeouts
            self._client = _Session(self.url, connect, message, self._token)
            _OPEN.add(self)
        return self._client

    def _call(self, what: str, *args: Any, **kwargs: Any) -> StepResult[dict[str, Any]]:
        """A reset or step (:meth:`_recovering`), and the state's extras that came with it."""
        self._state, self._after = None, what
        result = self._recovering(what, *args, **kwargs)
        self._state = result.observation.get("state")  # the extras asked for with it (None: none)
        return result

    def _recovering(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """A request (``reset``, ``step`` or ``state``) in a session that may be gone: a lost session is
        reopened for a reset, and for a step or state read in a seeded episode, which is replayed in the new
        session first (as unpickling replays it); else the loss, or a timeout, ends the episode."""
        try:
            return self._request(what, *args, **kwargs)
        except RemoteSessionLost:
            if what != "reset" and self._history is None:
                raise
            if what != "reset":
                reset, actions = self._history  # type: ignore[misc]
                self._request("reset", **reset)
                for action in actions:
                    self._request("step", action)
                self._started = True
            self._lost = None
            return self._request(what, *args, **kwargs)
        except RemoteTimeoutError:
            self._history = None  # the episode is not replayed: the env may hang on it again
            raise

    def _request(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """One request in the current session (connecting if there is none). A session that is gone or timed
        out is closed, so the next request opens a new one, and its episode is lost (step asks for a reset)."""
        try:
            return getattr(self._connected(), what)(*args, **kwargs)
        except (RemoteSessionLost, RemoteTimeoutError) as err:
            self.close()
            self._started, self._lost = False, str(err)
            raise

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
            self._request("reset", **kwargs)
            for action in actions:
                self._request("step", action)


make_remote.KIT_PROXY = True  # type: ignore[attr-defined]  # the kit checks what it makes as a served env (testing.is_remote)
