"""RL4VLM Gym's OpenEnv server with MCP tools, as this OpenEnv environment project serves it.

``app`` is ``rl4vlm-gym serve``'s app (:func:`rl4vlm_gym.server.app.create_app`) whose sessions also
answer MCP tools (:mod:`rl4vlm_gym.server.mcp`). It is configured as docker/server.Dockerfile's
container is, from environment variables:

- ``ENV_ID``: an env id or a suite (default ``rl4vlm/NumberLine-v0``);
- ``MAX_SESSIONS``: concurrent sessions at most (default 16);
- ``IDLE_TIMEOUT``: seconds before an idle session is closed (default 600; ``none``: never);
- ``RL4VLM_GYM_SERVER_TOKEN``: a bearer token every route but ``/health`` then requires (header
  ``Authorization: Bearer TOKEN``); set it on any host others can reach.

Run it in any of OpenEnv's ways (``openenv validate .`` checks this directory is ready for them)::

    uv run --project . server --port 8000
    python -m server.app --port 8000
    uvicorn server.app:app --host 0.0.0.0 --port 8000     # openenv.yaml's app
    ENV_ID=rl4vlm/Sokoban-v0 openenv serve
"""

from __future__ import annotations

import argparse
import os

from rl4vlm_gym.server.app import TOKEN_ENV, serve
from rl4vlm_gym.server.environment import Catalog
from rl4vlm_gym.server.mcp import MCPServedEnv, create_mcp_app

ENV_ID = os.environ.get("ENV_ID", "rl4vlm/NumberLine-v0")
MAX_SESSIONS = int(os.environ.get("MAX_SESSIONS", "16"))
_IDLE = os.environ.get("IDLE_TIMEOUT", "600")
IDLE_TIMEOUT = None if _IDLE.lower() == "none" else float(_IDLE)

CATALOG = Catalog.of(ENV_ID)

app = create_mcp_app(CATALOG, max_sessions=MAX_SESSIONS, idle_timeout=IDLE_TIMEOUT, token=os.environ.get(TOKEN_ENV) or None)


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve ``app``'s server on ``host:port`` until interrupted (the entry point ``server`` of pyproject.toml),
    as ``rl4vlm-gym serve`` serves (:func:`rl4vlm_gym.server.app.serve`: the token of the environment, a
    warning when a reachable host has none, bounded messages, sessions closed at shutdown)."""
    parser = argparse.ArgumentParser(description="RL4VLM Gym's OpenEnv server (env id from ENV_ID)")
    parser.add_argument("--host", default=host)
    parser.add_argument("--port", type=int, default=port)
    args = parser.parse_args()
    serve(CATALOG, host=args.host, port=args.port, max_sessions=MAX_SESSIONS, idle_timeout=IDLE_TIMEOUT, environment=MCPServedEnv)


if __name__ == "__main__":
    main()
