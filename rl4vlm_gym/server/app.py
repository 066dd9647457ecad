"""The FastAPI app and the uvicorn process of ``rl4vlm-gym serve``, on openenv-core's ``HTTPEnvServer``.

openenv-core provides the routes (``/ws`` sessions, stateless ``/reset`` ``/step`` ``/state``,
``/health``, ``/metadata``, ``/schema``, ``/mcp``), the session pool (a cap, an idle reaper, one
thread per session) and the error shapes. This module adds what a public server needs around it:
request bodies and WebSocket messages bounded before they are parsed, clear JSON errors instead of
tracebacks over HTTP, and every session's env closed when the server stops.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import HTTPEnvServer, create_fastapi_app
from openenv.core.env_server.types import ConcurrencyConfig
from uvicorn.protocols.utils import ClientDisconnected

from rl4vlm_gym import patches
from rl4vlm_gym.server.environment import Catalog, ServedEnv
from rl4vlm_gym.server.models import VLMAction, VLMObservation

__all__ = ["MAX_BODY_BYTES", "MAX_WS_MESSAGE_BYTES", "create_app", "serve"]

logger = logging.getLogger(__name__)

MAX_WS_MESSAGE_BYTES = 8 << 20
"""A WebSocket message longer than this closes its connection (code 1009) before it is parsed."""
MAX_BODY_BYTES = 8 << 20
"""An HTTP request body longer than this gets 413 before it is parsed."""


class _Guard:
    """ASGI middleware: 413 for HTTP bodies over ``limit`` bytes, counted as they arrive (a client may
    lie in Content-Length or send none); a WebSocket client that left is not an error."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            try:
                await self.app(scope, receive, send)
            except (WebSocketDisconnect, ClientDisconnected):
                pass  # the client left first (openenv-core's handler then fails to close): nothing to report
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(send, self.limit)
            return
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
            if not started:
                await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Any, limit: int) -> None:
    body = json.dumps({"detail": f"request body over {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def create_app(
    catalog: Catalog,
    *,
    max_sessions: int = 16,
    idle_timeout: float | None = 600.0,
    reap_every: float | None = None,
) -> FastAPI:
    """The OpenEnv app serving ``catalog``: at most ``max_sessions`` WebSocket sessions, each closed
    after ``idle_timeout`` seconds without a message (None: never). The reaper looks every
    ``reap_every`` seconds (None: openenv-core's ``max(idle_timeout / 4, 5)``; our reaper with the
    patch ``openenv-idle-reaper`` of :mod:`rl4vlm_gym.patches`, openenv-core's where it is refused)."""
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout)
    factory = functools.partial(ServedEnv, catalog)
    app = create_fastapi_app(factory, VLMAction, VLMObservation, concurrency_config=config)
    app.title = f"RL4VLM Gym OpenEnv server: {catalog.title}"

    # Errors of the env or of the client's arguments: JSON, never a traceback.
    @app.exception_handler(ValueError)
    async def _bad_request(request: Request, err: ValueError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(err)[:2000]})

    @app.exception_handler(RuntimeError)
    async def _conflict(request: Request, err: RuntimeError) -> JSONResponse:
        return JSONResponse(status_code=409, content={"detail": str(err)[:2000]})

    @app.exception_handler(Exception)
    async def _failed(request: Request, err: Exception) -> JSONResponse:
        logger.warning("%s %s failed: %s: %s", request.method, request.url.path, type(err).__name__, err)
        return JSONResponse(status_code=500, content={"detail": f"{type(err).__name__}: {str(err)[:2000]}"})

    server = _server_of(app)
    if reap_every is not None:
        if reap_every <= 0:
            raise ValueError(f"reap_every must be > 0 seconds, got {reap_every}")
        if server is not None and idle_timeout is not None and patches.guard("openenv-idle-reaper"):
            # the instance's, so openenv-core's _start_reaper (at startup) runs it in its own task
            server._reap_idle_sessions = functools.partial(_reap_idle_sessions, server, reap_every)

    async def _close_sessions() -> None:
        if server is not None:
            for session_id in list(server._sessions):
                await server._destroy_session(session_id)

    app.router.on_shutdown.append(_close_sessions)

    app.state.openenv_server = server
    app.add_middleware(_Guard, limit=MAX_BODY_BYTES)
    return app


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
) -> None:
    """Serve an env id or a suite until interrupted. Port 0 picks a free port; the first line on
    stdout says where (``serving TARGET on http://HOST:PORT``). ``target`` may be a ready
    :class:`Catalog` (its own ``expose_oracle`` then applies), e.g. of test-only envs."""
    import uvicorn

    catalog = target if isinstance(target, Catalog) else Catalog.of(target, make_kwargs, expose_oracle=expose_oracle)
    target = catalog.title
    app = create_app(catalog, max_sessions=max_sessions, idle_timeout=idle_timeout)
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
