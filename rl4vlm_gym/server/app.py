"""The FastAPI app and the uvicorn process of ``rl4vlm-gym serve``, on openenv-core's ``HTTPEnvServer``.

openenv-core provides the routes (``/ws`` sessions, stateless ``/reset`` ``/step`` ``/state``,
``/health``, ``/metadata``, ``/schema``, ``/mcp``), the session pool (a cap, an idle reaper, one
thread per session) and the error shapes. This module adds what a public server needs around it
(:class:`_Transport`, an ASGI middleware): an optional bearer token, request bodies and WebSocket
messages bounded before they are parsed, malformed messages answered without ending the session,
sessions counted from their first message, the stateless routes bounded (or off) with their envs
closed off the event loop, ``state`` computed in the session's thread, errors that never quote the
client's input, every refusal logged with the client's address, and every session's env closed when
the server stops.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hmac
import ipaddress
import json
import logging
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
from fastapi import FastAPI, HTTPException, Request, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import HTTPEnvServer, create_fastapi_app
from openenv.core.env_server.types import (
    ConcurrencyConfig,
    SchemaResponse,
    WSErrorCode,
    WSErrorResponse,
    WSStateMessage,
    WSStateResponse,
)
from pydantic import ValidationError
from uvicorn.protocols.utils import ClientDisconnected

from rl4vlm_gym import patches
from rl4vlm_gym.server.environment import Catalog, ServedEnv
from rl4vlm_gym.server.models import VLMAction, VLMObservation, VLMState

if TYPE_CHECKING:
    from rl4vlm_gym.server.policy import ClientPolicy

__all__ = [
    "FIRST_MESSAGE_TIMEOUT_S",
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_WS_MESSAGE_BYTES",
    "STATELESS_ROUTES",
    "TOKEN_ENV",
    "create_app",
    "json_depth",
    "parse_message",
    "serve",
]

logger = logging.getLogger(__name__)

MAX_WS_MESSAGE_BYTES = 8 << 20
"""A WebSocket message longer than this closes its connection (code 1009) before it is parsed."""
MAX_BODY_BYTES = 8 << 20
"""An HTTP request body longer than this gets 413 before it is parsed."""
MAX_JSON_DEPTH = 64
"""A WebSocket message nesting arrays and objects deeper than this is refused before it is parsed."""
FIRST_MESSAGE_TIMEOUT_S = 10.0
"""A WebSocket that sends nothing this many seconds after connecting is closed (code 1008)."""
TOKEN_ENV = "RL4VLM_GYM_SERVER_TOKEN"
"""The environment variable ``serve`` reads the bearer token from when none is given."""


class _Connection:
    """What the transport knows of one WebSocket connection: the client's address, and the session
    openenv-core made for it (set by :func:`_note_session`, the patch ``openenv-websocket-session``)."""

    __slots__ = ("capacity", "env", "peer", "session_id")

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.session_id: str | None = None
        self.env: Any = None
        self.capacity = False


_CONNECTION: contextvars.ContextVar[_Connection | None] = contextvars.ContextVar("rl4vlm_gym_ws_connection", default=None)
"""The WebSocket connection whose handler runs in this task (None elsewhere)."""
_STATELESS_CLOSES: contextvars.ContextVar[list[Future[None]] | None] = contextvars.ContextVar("rl4vlm_gym_closes", default=None)
"""In a stateless HTTP request's task: the closes of the envs it made, run in worker threads (None elsewhere)."""

STATELESS_ROUTES = frozenset({("POST", "/reset"), ("POST", "/step"), ("GET", "/state")})
"""OpenEnv's stateless HTTP calls (a fresh env per request): bounded by ``stateless_limit``, or off."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NESTING = np.zeros(256, np.int8)  # +1 for an opening bracket's byte, -1 for a closing one's
_NESTING[[ord("["), ord("{")]], _NESTING[[ord("]"), ord("}")]] = 1, -1
_PARSE_IN_THREAD = 64 << 10
"""Messages longer than this are checked and parsed in a worker thread, not on the event loop (an 8 MiB
bracket bomb takes ~0.1 s to measure)."""


def json_depth(text: str) -> int:
    """How deep the arrays and objects of the JSON ``text`` nest, read without parsing it (brackets
    inside strings do not count): checked before ``json.loads``, whose recursion it protects. A text with
    at most :data:`MAX_JSON_DEPTH` opening brackets in all answers their count (a bound, found in C)."""
    openers = text.count("[") + text.count("{")
    if openers <= MAX_JSON_DEPTH:
        return openers
    codes = np.frombuffer(_STRING.sub('""', text).encode("utf-8", "surrogatepass"), np.uint8)
    return int(np.cumsum(_NESTING[codes], dtype=np.int32).max(initial=0))


def parse_message(text: str) -> tuple[dict[str, Any] | None, str]:
    """A WebSocket message as OpenEnv reads it (a JSON object), or None and why it cannot be one (the
    reason never quotes the message): nested deeper than :data:`MAX_JSON_DEPTH` (checked before
    parsing), not JSON, a number over Python's 4,300 digits, or JSON that is not an object."""
    if json_depth(text) > MAX_JSON_DEPTH:
        return None, f"Invalid JSON: arrays and objects nested deeper than {MAX_JSON_DEPTH}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"Invalid JSON: {err.msg} at character {err.pos}"
    except (ValueError, RecursionError) as err:  # int digits over sys.get_int_max_str_digits()
        return None, f"Invalid JSON: {str(err).split(':')[0][:200]}"
    if not isinstance(value, dict):
        return None, f'Invalid JSON: a message is a JSON object {{"type": ..., "data": ...}}, not a JSON {_json_kind(value)}'
    return value, ""


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _peer(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "unknown client"


def _bearer_ok(scope: Mapping[str, Any], token: bytes) -> bool:
    """Whether the request carries ``Authorization: Bearer <token>`` (compared in constant time)."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            scheme, _, given = value.partition(b" ")
            return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)
    return False


_FORBIDDEN = "forbidden: this server needs the header 'Authorization: Bearer <token>' (the operator's --token)"
_SANITISED_CODES = ("VALIDATION_ERROR", "INVALID_JSON", "EXECUTION_ERROR", "UNKNOWN_TYPE")


def _plain_errors(errors: Any) -> Any:
    """Pydantic's error list without the ``input`` (and ``ctx``, ``url``) it quotes: an error names the
    field and the problem, never echoes what the client sent (a 7 MB action must not get a 7 MB answer)."""
    if not isinstance(errors, list):
        return str(errors)[:2000] if not isinstance(errors, (str, int, float, bool, type(None))) else errors
    return [
        {k: v for k, v in e.items() if k not in ("input", "ctx", "url")} if isinstance(e, dict) else str(e)[:500] for e in errors
    ]


class _Transport:
    """ASGI middleware between the network and openenv-core's routes: what a public server needs.

    HTTP: the bearer token (every route but ``/health``), bodies over ``limit`` bytes (413, counted as
    they arrive: a client may lie in Content-Length or send none), and the stateless routes
    (:data:`STATELESS_ROUTES`: off with 404, or at most ``stateless_limit`` at once, 503 over it; the
    envs they make are closed in worker threads, awaited before the slot is free).

    WebSocket: the token on the handshake (HTTP 403 otherwise); then, on ``/ws`` (OpenEnv's sessions; other
    paths such as ``/mcp`` are passed on as they come), openenv-core's session starts only
    at the first well-formed message (a socket silent for ``first_message_timeout`` s is closed with
    1008), so idle sockets hold no session; a malformed message is answered with ``INVALID_JSON`` and
    never reaches openenv-core (which would end the session); ``state`` is computed in the session's
    thread; a full server answers the first message with ``CAPACITY_REACHED`` and closes with 1013;
    error answers never quote the client's input. Every refusal is logged once at WARNING with the
    client's address, never with its input.
    """

    def __init__(
        self,
        app: Any,
        *,
        limit: int,
        server: HTTPEnvServer | None,
        token: str | None,
        stateless: bool,
        stateless_limit: int,
        first_message_timeout: float | None,
    ) -> None:
        self.app, self.limit, self.server = app, limit, server
        self.token = token.encode() if token else None
        self.stateless, self.stateless_limit, self.stateless_busy = stateless, stateless_limit, 0
        self.first_message_timeout = first_message_timeout

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            try:
                await self._websocket(scope, receive, send)
            except (WebSocketDisconnect, ClientDisconnected):
                pass  # the client left first (openenv-core's handler then fails to close): nothing to report
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        if self.token is not None and path != "/health" and not _bearer_ok(scope, self.token):
            logger.warning("%s: %s %s refused: no or wrong bearer token", _peer(scope), method, path)
            await _json_response(send, 403, _FORBIDDEN)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            logger.warning("%s: %s %s refused: a body over %d bytes declared", _peer(scope), method, path, self.limit)
            await _json_response(send, 413, f"request body over {self.limit} bytes")
            return
        if (method, path) not in STATELESS_ROUTES:
            await self._bounded(scope, receive, send)
            return
        if not self.stateless:
            detail = f"{method} {path}: the stateless HTTP routes are off on this server; play over the WebSocket /ws"
            await _json_response(send, 404, detail)
            return
        if self.stateless_busy >= self.stateless_limit:
            logger.warning(
                "%s: %s %s refused: %d stateless requests already running", _peer(scope), method, path, self.stateless_busy
            )
            detail = f"server busy: {self.stateless_limit} stateless requests already running (the cap); retry, or use the WebSocket /ws"
            await _json_response(send, 503, detail, [(b"retry-after", b"1")])
            return
        self.stateless_busy += 1
        closes: list[Future[None]] = []
        reset = _STATELESS_CLOSES.set(closes)
        try:
            await self._bounded(scope, receive, send)
        finally:
            _STATELESS_CLOSES.reset(reset)
            try:
                for future in closes:  # the slot is free once the request's envs are closed
                    await asyncio.wrap_future(future)
            finally:
                self.stateless_busy -= 1

    async def _bounded(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The app, with a 413 once the body's bytes counted as they arrive pass ``limit`` (a client may lie in
        Content-Length or send none; a declared length over it was refused already)."""
        seen = 0
        started = False

        async def limited_receive() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            logger.warning(
                "%s: %s %s refused: a body over %d bytes sent", _peer(scope), scope["method"], scope["path"], self.limit
            )
            if not started:
                await _json_response(send, 413, f"request body over {self.limit} bytes")

    # -- WebSocket -----------------------------------------------------------------------------------

    async def _websocket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        connection = _Connection(_peer(scope))
        connect = await receive()
        if connect["type"] != "websocket.connect":
            return
        if self.token is not None and not _bearer_ok(scope, self.token):
            logger.warning("%s: WebSocket %s refused: no or wrong bearer token", connection.peer, scope.get("path", ""))
            await _deny(scope, send, 403, _FORBIDDEN)
            return
        if scope.get("path") != "/ws":  # another protocol (openenv-core's /mcp speaks JSON-RPC, batches are arrays)
            replayed = [connect]

            async def replay() -> dict[str, Any]:
                return replayed.pop() if replayed else await receive()

            await self.app(scope, replay, send)
            return
        await send({"type": "websocket.accept"})
        first = await self._first_message(connection, receive, send)
        if first is None:
            return
        pending: list[dict[str, Any]] = [connect, first]

        async def inner_receive() -> dict[str, Any]:
            if pending:
                return pending.pop(0)
            return await self._next_message(connection, receive, send)

        async def inner_send(message: dict[str, Any]) -> None:
            kind = message["type"]
            if kind == "websocket.accept":
                return  # accepted above, before the first message
            if kind == "websocket.send" and message.get("text", "").startswith('{"type":"error"'):
                message = {**message, "text": self._error_out(connection, message["text"])}
            elif kind == "websocket.close" and connection.capacity:
                message = {"type": "websocket.close", "code": 1013, "reason": "server at capacity"}
            await send(message)

        token = _CONNECTION.set(connection)
        try:
            await self.app(scope, inner_receive, inner_send)
        finally:
            _CONNECTION.reset(token)

    async def _first_message(self, connection: _Connection, receive: Any, send: Any) -> dict[str, Any] | None:
        """The first well-formed message (as ``websocket.receive``), or None when the client left or sent
        none within ``first_message_timeout`` s (the socket is then closed with 1008)."""
        try:  # malformed messages meanwhile are answered, and count no session
            message = await asyncio.wait_for(self._next_message(connection, receive, send), self.first_message_timeout)
        except TimeoutError:
            reason = f"no message within {self.first_message_timeout:g} s of connecting"
            logger.warning("%s: WebSocket closed: %s", connection.peer, reason)
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return None
        return None if message["type"] == "websocket.disconnect" else message

    async def _next_message(self, connection: _Connection, receive: Any, send: Any) -> dict[str, Any]:
        """The client's next well-formed message for openenv-core, or its disconnect. Malformed messages are
        answered here (``INVALID_JSON``); ``state`` is answered here, computed in the session's thread."""
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                if message.get("code") == 1009:
                    logger.warning("%s: WebSocket closed: a message over %d bytes", connection.peer, MAX_WS_MESSAGE_BYTES)
                return message
            text = message.get("text")
            if text is None:  # a binary frame: UTF-8 JSON is read as text
                try:
                    text = (message.get("bytes") or b"").decode("utf-8")
                except UnicodeDecodeError:
                    text = "\x00"
            parsed, why = parse_message(text) if len(text) <= _PARSE_IN_THREAD else await asyncio.to_thread(parse_message, text)
            if parsed is None:
                logger.warning("%s: malformed WebSocket message (%d characters): %s", connection.peer, len(text), why)
                await _ws_error(send, why, "INVALID_JSON")
                continue
            if parsed.get("type") == "state" and connection.session_id is not None and self.server is not None:
                await self._state(connection, parsed, send)
                continue
            return {"type": "websocket.receive", "text": text}

    async def _state(self, connection: _Connection, parsed: dict[str, Any], send: Any) -> None:
        """openenv-core's answer to ``state``, computed in the session's thread (openenv-core reads the
        property on its event loop, where a plan or a fresh render would hold up every client)."""
        assert self.server is not None and connection.session_id is not None
        error: dict[str, Any] | None = None
        try:
            WSStateMessage(**parsed)
        except ValidationError as err:  # openenv-core's answers; the session goes on
            error = {"message": "Invalid message", "code": WSErrorCode.VALIDATION_ERROR, "errors": err.errors()}
        if error is None:
            executor = self.server._session_executors.get(connection.session_id)
            env = connection.env
            try:
                state = await asyncio.get_running_loop().run_in_executor(executor, lambda: env.state)
                data = state.model_dump() if hasattr(state, "model_dump") else dict(state or {})
                text = WSStateResponse(data=data).model_dump_json()
            except Exception as err:
                error = {"message": str(err), "code": WSErrorCode.EXECUTION_ERROR}
        if error is not None:
            text = self._error_out(connection, WSErrorResponse(data=error).model_dump_json())
        self.server._update_session_activity(connection.session_id)
        await send({"type": "websocket.send", "text": text})

    def _error_out(self, connection: _Connection, text: str) -> str:
        """An error answer on its way out: logged once with the client's address, capacity noted (the close
        that follows becomes 1013), and the client's input removed from it."""
        try:
            error = json.loads(text)
            data = error["data"]
            code = str(data.get("code", ""))
        except (ValueError, KeyError, TypeError, AttributeError):
            return text
        if code == "CAPACITY_REACHED":
            connection.capacity = True
            logger.warning("%s: WebSocket refused: server at capacity (%s sessions)", connection.peer, data.get("max_sessions"))
            return text
        logger.warning("%s: WebSocket message refused: %s: %s", connection.peer, code, str(data.get("message", ""))[:200])
        if code in _SANITISED_CODES:
            data["message"] = str(data.get("message", ""))[:2000]
            if "errors" in data:
                data["errors"] = _plain_errors(data["errors"])
            return json.dumps(error)
        return text


class _TooLarge(Exception):
    pass


async def _json_response(send: Any, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": start_headers})
    await send({"type": "http.response.body", "body": body})


async def _deny(scope: Mapping[str, Any], send: Any, status: int, detail: str) -> None:
    """Refuse a WebSocket handshake with an HTTP answer (ASGI's denial response), or close with 1008
    where the server cannot send one."""
    if "websocket.http.response" in (scope.get("extensions") or {}):
        body = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})


async def _ws_error(send: Any, message: str, code: str) -> None:
    await send({"type": "websocket.send", "text": json.dumps({"type": "error", "data": {"message": message, "code": code}})})


def create_app(
    catalog: Catalog,
    *,
    max_sessions: int = 16,
    idle_timeout: float | None = 600.0,
    reap_every: float | None = None,
    token: str | None = None,
    stateless: bool = True,
    stateless_limit: int | None = None,
    first_message_timeout: float | None = FIRST_MESSAGE_TIMEOUT_S,
    environment: Callable[[Catalog], ServedEnv] = ServedEnv,
) -> FastAPI:
    """The OpenEnv app serving ``catalog``.

    Args:
        catalog: the ids or suite tasks served.
        max_sessions: at most this many WebSocket sessions at once; a session counts from its first message.
        idle_timeout: a session without a message for this many seconds is closed (None: never).
        reap_every: how often the reaper looks (None: openenv-core's ``max(idle_timeout / 4, 5)``; our reaper
            with the patch ``openenv-idle-reaper`` of :mod:`rl4vlm_gym.patches`, openenv-core's where it is refused).
        token: when given, every route but ``GET /health`` needs ``Authorization: Bearer <token>`` (the
            WebSocket on its handshake); 403 otherwise.
        stateless: whether the stateless HTTP routes (:data:`STATELESS_ROUTES`) are served (404 when off).
        stateless_limit: at most this many stateless requests at once, 503 over it (None: ``max_sessions``).
        first_message_timeout: a WebSocket silent this many seconds after connecting is closed (None: never).
        environment: what each session (and stateless request) plays: ``environment(catalog)``, a
            :class:`ServedEnv` or a subclass of it (e.g. :class:`~rl4vlm_gym.server.mcp.MCPServedEnv`).
    """
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
    stateless_limit = max_sessions if stateless_limit is None else stateless_limit
    if stateless_limit < 1:
        raise ValueError(f"stateless_limit must be >= 1, got {stateless_limit}")
    if first_message_timeout is not None and first_message_timeout <= 0:
        raise ValueError(f"first_message_timeout must be > 0 seconds, got {first_message_timeout}")
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout)
    factory = functools.partial(_make_env, environment, catalog)
    app = create_fastapi_app(factory, VLMAction, VLMObservation, concurrency_config=config)
    app.title = f"RL4VLM Gym OpenEnv server: {catalog.title}"
    _serve_our_schema(app)

    # Errors of the env or of the client's arguments: JSON, never a traceback, never the client's input.
    @app.exception_handler(ValueError)
    async def _bad_request(request: Request, err: ValueError) -> JSONResponse:
        return _refused(request, 400, str(err)[:2000])

    @app.exception_handler(RuntimeError)
    async def _conflict(request: Request, err: RuntimeError) -> JSONResponse:
        return _refused(request, 409, str(err)[:2000])

    @app.exception_handler(RequestValidationError)
    async def _malformed(request: Request, err: RequestValidationError) -> JSONResponse:
        return _refused(request, 422, _plain_errors(list(err.errors())))

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, err: HTTPException) -> JSONResponse:
        return _refused(request, err.status_code, _plain_errors(err.detail), err.headers)

    @app.exception_handler(Exception)
    async def _failed(request: Request, err: Exception) -> JSONResponse:
        logger.warning("%s %s failed: %s: %s", request.method, request.url.path, type(err).__name__, str(err)[:200])
        return JSONResponse(status_code=500, content={"detail": f"{type(err).__name__}: {str(err)[:2000]}"})

    server = app.state.openenv_server = _server_of(app)
    if reap_every is not None:
        if reap_every <= 0:
            raise ValueError(f"reap_every must be > 0 seconds, got {reap_every}")
        if server is not None and idle_timeout is not None and patches.guard("openenv-idle-reaper"):
            # the instance's, so openenv-core's _start_reaper (at startup) runs it in its own task
            server._reap_idle_sessions = functools.partial(_reap_idle_sessions, server, reap_every)
    noted = server is not None and patches.guard("openenv-websocket-session")
    if noted:
        server._create_session = functools.partial(_note_session, server._create_session)  # type: ignore[union-attr]
        server._destroy_session = functools.partial(_destroy_to_the_end, server._destroy_session)  # type: ignore[union-attr]

    async def _close_sessions() -> None:
        if app.state.openenv_server is not None:
            for session_id in list(app.state.openenv_server._sessions):
                await app.state.openenv_server._destroy_session(session_id)

    app.router.on_shutdown.append(_close_sessions)

    app.add_middleware(
        _Transport,
        limit=MAX_BODY_BYTES,
        server=server if noted else None,  # None: openenv-core answers state itself
        token=token,
        stateless=stateless,
        stateless_limit=stateless_limit,
        first_message_timeout=first_message_timeout,
    )
    return app


def _serve_our_schema(app: FastAPI) -> None:
    """``GET /schema`` with our :class:`~rl4vlm_gym.server.models.VLMState` as its ``state`` (openenv-core's route
    answers its generic ``State``, which names none of STATE's keys): openenv-core's route is replaced by one of the
    same path and answer model."""
    app.router.routes[:] = [r for r in app.router.routes if not (isinstance(r, APIRoute) and r.path == "/schema")]

    @app.get("/schema", response_model=SchemaResponse, tags=["Schema"], summary="Get all JSON schemas")
    async def get_schemas() -> SchemaResponse:
        """The JSON schemas of the action, the observation and the state."""
        return SchemaResponse(
            action=VLMAction.model_json_schema(),
            observation=VLMObservation.model_json_schema(),
            state=VLMState.model_json_schema(),
        )


def _refused(request: Request, status: int, detail: Any, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An HTTP error answer, logged once with the client's address (without the client's input)."""
    if status != 404:
        summary = (
            detail
            if isinstance(detail, str)
            else "; ".join(f"{e.get('loc')}: {e.get('msg')}" for e in detail if isinstance(e, dict))
        )
        logger.warning(
            "%s: %s %s refused (%d): %s", _peer(request.scope), request.method, request.url.path, status, str(summary)[:200]
        )
    return JSONResponse(status_code=status, content={"detail": detail}, headers=dict(headers) if headers else None)


def _make_env(environment: Callable[[Catalog], ServedEnv], catalog: Catalog) -> ServedEnv:
    """openenv-core's env factory: ``environment(catalog)``; in a stateless HTTP request, with its ``close``
    handed to a worker thread (openenv-core closes it on the event loop, and closing a browser there held up
    every client for a second), awaited by the transport before the request's slot is free."""
    env = environment(catalog)
    closes = _STATELESS_CLOSES.get()
    if closes is not None:
        close = env.close
        env.close = lambda: closes.append(_closer().submit(close))  # type: ignore[method-assign]
    return env


@functools.cache
def _closer() -> ThreadPoolExecutor:
    """The worker threads that close stateless requests' envs (at most 8 at once; the rest queue)."""
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="rl4vlm-stateless-close")


async def _destroy_to_the_end(destroy: Any, session_id: str) -> None:
    """openenv-core's ``_destroy_session``, run to its end even when the task awaiting it is cancelled (the
    patch ``openenv-websocket-session``): it takes the session out of the table before it closes the env in
    the session's thread, so a handler cancelled in between (its client gone at shutdown, a test client's
    socket closed) left the env open, out of reach of the shutdown's closing."""
    await asyncio.shield(destroy(session_id))


async def _note_session(create: Any) -> tuple[str, Any]:
    """openenv-core's ``_create_session``, then the session it made noted on the connection being served
    (the patch ``openenv-websocket-session``), so the transport can answer ``state`` in its thread."""
    session_id, env = await create()
    connection = _CONNECTION.get()
    if connection is not None:
        connection.session_id, connection.env = session_id, env
    return session_id, env


async def _reap_idle_sessions(server: HTTPEnvServer, every: float) -> None:
    """openenv-core's ``HTTPEnvServer._reap_idle_sessions`` (0.3.0), restated with the interval ``every``
    instead of its ``max(timeout / 4, 5)`` s: destroys the sessions idle beyond the timeout, each
    checked again under the lock (a message may have come since), until cancelled."""
    timeout = server._session_idle_timeout_s
    while True:
        await asyncio.sleep(every)
        try:
            now = time.time()
            async with server._session_lock:
                stale = [sid for sid, info in server._session_info.items() if now - info.last_activity_at > timeout]
            for sid in stale:
                async with server._session_lock:
                    info = server._session_info.get(sid)
                    if info is None or time.time() - info.last_activity_at <= timeout:
                        continue
                await server._destroy_session(sid)
        except Exception as exc:  # as openenv-core's: a failure is logged and the next round tries again
            logger.warning("Idle-session reaper encountered an error (will retry): %s", exc)


def _server_of(app: FastAPI) -> HTTPEnvServer | None:
    """The ``HTTPEnvServer`` that registered the app's routes (its sessions are closed at shutdown),
    found in their closure cells: the patch ``openenv-session-table`` of :mod:`rl4vlm_gym.patches`
    (None where it is refused: another openenv-core than 0.3.0)."""
    if not patches.guard("openenv-session-table"):
        return None
    for route in app.routes:
        endpoint = getattr(route, "endpoint", None)
        for cell in getattr(endpoint, "__closure__", None) or ():
            value = cell.cell_contents
            if isinstance(value, HTTPEnvServer):
                return value
    return None


def serve(
    target: str | Catalog,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = 16,
    idle_timeout: float | None = 600.0,
    make_kwargs: Mapping[str, Any] | None = None,
    expose_oracle: bool = False,
    log_level: str = "warning",
    token: str | None = None,
    stateless: bool = True,
    stateless_limit: int | None = None,
    first_message_timeout: float | None = FIRST_MESSAGE_TIMEOUT_S,
    environment: Callable[[Catalog], ServedEnv] = ServedEnv,
    policy: ClientPolicy | None = None,
) -> None:
    """Serve an env id or a suite until interrupted. Port 0 picks a free port; the first line on
    stdout says where (``serving TARGET on http://HOST:PORT``). ``target`` may be a ready
    :class:`Catalog` (its own ``expose_oracle`` then applies), e.g. of test-only envs.

    ``policy`` says which ``make_kwargs`` clients may set (:class:`~rl4vlm_gym.server.policy.ClientPolicy`; None:
    the safe default); ``token`` (else the environment variable :data:`TOKEN_ENV`), ``stateless``,
    ``stateless_limit``, ``first_message_timeout`` and ``environment`` are :func:`create_app`'s. A host other than a loopback address without a
    token prints a warning on stderr: anyone who can reach the port can then play (and load) the server."""
    import uvicorn

    token = token or os.environ.get(TOKEN_ENV) or None
    if isinstance(target, Catalog):
        catalog = target
    else:
        chosen: dict[str, Any] = {} if policy is None else {"policy": policy}
        catalog = Catalog.of(target, make_kwargs, expose_oracle=expose_oracle, **chosen)
    target = catalog.title
    app = create_app(
        catalog,
        max_sessions=max_sessions,
        idle_timeout=idle_timeout,
        token=token,
        stateless=stateless,
        stateless_limit=stateless_limit,
        first_message_timeout=first_message_timeout,
        environment=environment,
    )
    if token is None and not _loopback(host):
        print(
            f"warning: serving on {host}, which is not a loopback address, without a token: anyone who reaches the port "
            f"can play; pass --token or set {TOKEN_ENV}",
            file=sys.stderr,
            flush=True,
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections queue from now on, so the line below means "ready"
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"serving {target} on http://{shown}:{bound} (WebSocket ws://{shown}:{bound}/ws)", flush=True)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        ws_max_size=MAX_WS_MESSAGE_BYTES,
        # No permessage-deflate: images are PNG (compressed already) or raw for speed, and deflating a
        # 224x224 raw frame cost 7 ms a step (benchmarks/server_latency.py).
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=5,
        lifespan="on",
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    sys.stdout.flush()


def _loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
