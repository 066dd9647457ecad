"""MCP tools for a served env's actions: how OpenEnv's tool-calling clients (``MCPToolClient``, TRL's
``environment_factory``) play an RL4VLM Gym env.

:class:`MCPServedEnv` is a :class:`~rl4vlm_gym.server.environment.ServedEnv` with an ``mcp_server``: the
attribute openenv-core's ``/mcp`` route (JSON-RPC 2.0, ``tools/list`` and ``tools/call``, over HTTP
``POST /mcp`` or a WebSocket ``/mcp`` or an ``"mcp"`` message on ``/ws``) reads to list and call a
session's tools. Its tools, one FastMCP server per session, made on the first MCP request (a session
that never asks pays nothing, and a process that never serves MCP never imports FastMCP):

- ``start_episode(seed, options, env_id, make_kwargs)``: the env's ``reset``, with the arguments and
  checks of a WebSocket reset; returns the observation (below) without the image;
- ``act(action)``: one ``step`` with the model's reply (free text, parsed by the env as a local env
  parses it); returns the observation without the image, ``reward`` and ``done``;
- ``look()``: the latest observation with its image, encoded as in ``/ws`` (PNG in base64, the
  session's default; :func:`~rl4vlm_gym.server.models.decode_image` or any PNG reader turns it into an
  array; ``"black"`` with no data for an all-black frame, as in ``obs_mode="text"``).

``reset``, ``step``, ``state`` and ``close`` are OpenEnv's reserved tool names (its ``MCPEnvironment``
refuses them), hence ``start_episode`` and ``act``. A session's tools run in a thread of their own, one
per session, never on the server's event loop (a step may render, plan or load a page for seconds).

Serve them with :func:`create_mcp_app` (``deploy/rl4vlm_gym_env/server/app.py`` does), and call them over
HTTP with a session, as ``MCPToolClient`` does in its production mode::

    POST /mcp {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    POST /mcp {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"session_id": SID, "name": "act", "arguments": {"action": "<action>up</action>"}}}

``examples/trl_environment_factory.py`` trains with them through TRL's ``GRPOTrainer``. ``MCPToolClient``'s
default mode (``call_tool`` actions as ``/ws`` steps) does not apply: a ``/ws`` step here is a
:class:`~rl4vlm_gym.server.models.VLMAction`, the env's reply, and openenv-core routes ``call_tool``
steps only for envs whose action class is its generic one.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import FastAPI

from rl4vlm_gym.server.app import create_app
from rl4vlm_gym.server.environment import Catalog, ServedEnv
from rl4vlm_gym.server.models import MAX_ACTION_CHARS, VLMAction, VLMObservation

__all__ = ["TOOL_NAMES", "MCPServedEnv", "create_mcp_app"]

TOOL_NAMES = ("start_episode", "act", "look")
"""The tools of every session, in the order ``tools/list`` gives them."""


class MCPServedEnv(ServedEnv):
    """A session's env with MCP tools for its actions (the module's docstring lists them)."""

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(catalog)
        self._mcp: Any = None
        self._worker: ThreadPoolExecutor | None = None
        self._last: VLMObservation | None = None

    @property
    def mcp_server(self) -> Any:
        """This session's FastMCP server (made on first use): what openenv-core's ``/mcp`` route calls."""
        if self._mcp is None:
            self._mcp = self._tools()
        return self._mcp

    def close(self) -> None:
        super().close()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=False)

    # -- the tools ---------------------------------------------------------------------------------

    def _tools(self) -> Any:
        from fastmcp import FastMCP

        server = FastMCP(f"rl4vlm-gym: {self.catalog.title}")

        @server.tool
        async def start_episode(
            seed: int | None = None,
            options: dict[str, Any] | None = None,
            env_id: str | None = None,
            make_kwargs: dict[str, Any] | None = None,
        ) -> dict[str, Any]:
            """Start a new episode (the env's reset) and return its first observation, without the image.

            Args:
                seed: the episode's seed (a non-negative int); none: a fresh one.
                options: Gymnasium's reset options, e.g. {"level": 2}.
                env_id: which served env or suite task to play (the session's current one by default).
                make_kwargs: the env's gym.make arguments, as far as the server allows them.

            Returns:
                The observation: text, mission, actions (the admissible actions), info, terminated, truncated.
            """
            return await self._in_session(self._start, seed, options, env_id, make_kwargs)

        @server.tool
        async def act(action: str) -> dict[str, Any]:
            """Play one step: send your reply to the env, which parses the action in it as it parses a local reply.

            Args:
                action: your reply, e.g. "<action>up</action>" (the format the env's prompt asks for).

            Returns:
                The observation after the step (text, mission, actions, info, terminated, truncated), reward and done.
            """
            if not isinstance(action, str):
                raise ValueError(f"action must be a string, got {type(action).__name__}")
            if len(action) > MAX_ACTION_CHARS:
                raise ValueError(f"action is {len(action)} characters, over the limit of {MAX_ACTION_CHARS}")
            return await self._in_session(self._act, action)

        @server.tool
        async def look() -> dict[str, Any]:
            """Return the latest observation with its image (format "png": base64 PNG data, shape [H, W, 3]).

            Returns:
                The latest observation, its reward and done, and image: {"format", "shape", "data"}.
            """
            return await self._in_session(self._look)

        return server

    async def _in_session(self, work: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        """``work(*args)`` in this session's thread (one per session, so an env that keeps thread-bound
        state, such as a GL context, always sees the same thread), awaited on the event loop."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rl4vlm-mcp-session")
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(work, *args))

    def _start(self, seed: Any, options: Any, env_id: Any, make_kwargs: Any) -> dict[str, Any]:
        self._last = self.reset(seed=seed, options=options, env_id=env_id, make_kwargs=make_kwargs)
        return _result(self._last, image=False)

    def _act(self, action: str) -> dict[str, Any]:
        self._last = self.step(VLMAction(text=action))
        return _result(self._last, image=False)

    def _look(self) -> dict[str, Any]:
        if self._last is None:
            raise RuntimeError("no episode yet: call start_episode first")
        return _result(self._last, image=True)


def _result(observation: VLMObservation, *, image: bool) -> dict[str, Any]:
    """A tool's answer: the observation's fields as JSON data (the image only if asked), reward and done."""
    result = observation.model_dump(include={"text", "mission", "actions", "info", "terminated", "truncated"})
    result["reward"] = float(observation.reward or 0.0)
    result["done"] = bool(observation.done)
    if image:
        result["image"] = observation.image.model_dump()
    return result


def create_mcp_app(catalog: Catalog, **options: Any) -> FastAPI:
    """:func:`~rl4vlm_gym.server.app.create_app` (same ``options``) whose sessions are :class:`MCPServedEnv`:
    the same server, plus MCP tools on its ``/mcp`` route (``rl4vlm-gym serve``'s ``environment=MCPServedEnv``)."""
    return create_app(catalog, environment=MCPServedEnv, **options)
