"""RL4VLM Gym's OpenEnv server with MCP tools, as this OpenEnv environment project serves it.

``app`` is ``rl4vlm-gym serve``'s app (:func:`rl4vlm_gym.server.app.create_app`) whose sessions also
answer MCP tools (:mod:`rl4vlm_gym.server.mcp`). It is configured as docker/server.Dockerfile's
container is, from environment variables:

- ``ENV_ID``: an env id or a suite (default ``rl4vlm/NumberLine-v0``);
- ``MAX_SESSIONS``: concurrent sessions at most (default 16);
- ``IDLE_TIMEOUT``: seconds before an idle session is closed (default 600; ``none``: never).

Run it in any of OpenEnv's ways (``openenv validate .`` checks this directory is ready for them)::

    uv run --project . server --port 8000
    python -m server.app --port 8000
    uvicorn server.app:app --host 0.0.0.0 --port 8000     # openenv.yaml's app
    ENV_ID=rl4vlm/Sokoban-v0 openenv serve
"""

from __future__ import annotations

import argparse
import os

from rl4vlm_gym.server.app import MAX_WS_MESSAGE_BYTES
from rl4vlm_gym.server.environment import Catalog
from rl4vlm_gym.server.mcp import create_mcp_app

ENV_ID = os.environ.get("ENV_ID", "rl4vlm/NumberLine-v0")
MAX_SESSIONS = int(os.environ.get("MAX_SESSIONS", "16"))
_IDLE = os.environ.get("IDLE_TIMEOUT", "600")
IDLE_TIMEOUT = None if _IDLE.lower() == "none" else float(_IDLE)

app = create_mcp_app(Catalog.of(ENV_ID), max_sessions=MAX_SESSIONS, idle_timeout=IDLE_TIMEOUT)


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve ``app`` on ``host:port`` until interrupted (the entry point ``server`` of pyproject.toml)."""
    import uvicorn

    parser = argparse.ArgumentParser(description="RL4VLM Gym's OpenEnv server (env id from ENV_ID)")
    parser.add_argument("--host", default=host)
    parser.add_argument("--port", type=int, default=port)
    args = parser.parse_args()
    # as rl4vlm-gym serve: messages bounded before parsing; no permessage-deflate (frames are PNG already)
    uvicorn.run(app, host=args.host, port=args.port, ws_max_size=MAX_WS_MESSAGE_BYTES, ws_per_message_deflate=False)


if __name__ == "__main__":
    main()
