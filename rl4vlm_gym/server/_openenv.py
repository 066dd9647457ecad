"""Import openenv-core's server and client without its optional web UI and MCP client.

``openenv.core.env_server``'s ``__init__`` imports its Gradio web interface when Gradio is installed
(it is one of openenv-core's requirements), which takes about 8 s and is never used here (the UI
is off unless ENABLE_WEB_INTERFACE is set). Gradio is hidden while openenv-core is first imported,
so that import fails as openenv-core expects of a missing optional dependency and it carries on
without the UI; Gradio stays importable afterwards for anyone else.

Its ``http_server`` imports ``mcp_environment`` for one function, ``get_server_tools``, which it
calls only for an env that carries an MCP server (none of ours does); that module imports FastMCP
and the MCP SDK at the top: 1.2 s of CPU, 60% of importing our server, paid by every process that
serves or plays a remote env (each kit worker, each spawned vector env). :func:`import_openenv`
gives ``http_server`` a stand-in module whose ``get_server_tools`` imports the real one when first
called, and makes ``MCPEnvironment`` the real class on first access: the patch
``openenv-lazy-mcp`` of :mod:`rl4vlm_gym.patches` (refused, openenv-core is imported as it is).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import openenv  # noqa: F401
except ImportError as err:
    raise ImportError(
        f"rl4vlm_gym.server (rl4vlm-gym serve, rl4vlm/Remote-v0) needs openenv-core: pip install 'rl4vlm-gym[server]' ({err})"
    ) from err

_MCP = "openenv.core.env_server.mcp_environment"
_CORE = Path(openenv.__file__).resolve().parent / "core"
# What the patch openenv-lazy-mcp relies on, fingerprinted by file (reading them imports nothing): the
# modules that import mcp_environment while openenv.core is imported, and what each takes from it.
CORE_INIT = str(_CORE / "__init__.py")
"""``openenv.core``: star-imports ``env_server`` (``MCPEnvironment`` included)."""
ENV_SERVER_INIT = str(_CORE / "env_server" / "__init__.py")
"""``openenv.core.env_server``: ``MCPEnvironment``, ``None`` on a ``ModuleNotFoundError``."""
HTTP_SERVER = str(_CORE / "env_server" / "http_server.py")
"""``openenv.core.env_server.http_server``: ``get_server_tools``, called for an env with an MCP server only."""


def import_openenv() -> None:
    """Import ``openenv.core.env_client`` and ``openenv.core.env_server`` (once per process), without
    Gradio, and without FastMCP until an MCP part is used (when the patch ``openenv-lazy-mcp`` is allowed)."""
    if "openenv.core.env_server" in sys.modules:
        return
    from rl4vlm_gym import patches

    hidden: dict[str, Any] = {}
    if "gradio" not in sys.modules:
        hidden["gradio"] = None  # makes `import gradio` raise ModuleNotFoundError
    lazy = _MCP not in sys.modules and patches.guard("openenv-lazy-mcp")
    if lazy:
        hidden[_MCP] = _stand_in()
    sys.modules.update(hidden)
    try:
        import openenv.core.env_client  # noqa: F401
        import openenv.core.env_server  # noqa: F401
    finally:
        for name, value in hidden.items():
            if sys.modules.get(name, 0) is value:
                del sys.modules[name]  # the next `import` of it finds the real module
    if lazy:
        import openenv.core as core
        import openenv.core.env_server as env_server

        if getattr(env_server, "mcp_environment", None) is hidden[_MCP]:
            del env_server.mcp_environment
        for package in (env_server, core):  # MCPEnvironment is None there (as without FastMCP): the real class on first use
            if package.__dict__.get("MCPEnvironment", 0) is None:
                del package.MCPEnvironment
                package.__getattr__ = _on_first_use(package, "MCPEnvironment", package.__dict__.get("__getattr__"))


def _stand_in() -> types.ModuleType:
    """What ``http_server`` imports in ``mcp_environment``'s place: its ``get_server_tools``, which imports
    the real module (and FastMCP) when first called; any other name is missing as if FastMCP were."""
    module = types.ModuleType(_MCP, "openenv-core's mcp_environment, imported on first use (rl4vlm_gym.server._openenv)")

    def get_server_tools(mcp_server: Any) -> dict[str, Any]:
        return importlib.import_module(_MCP).get_server_tools(mcp_server)

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # the import system's questions (__path__, ...): a plain module
        raise ModuleNotFoundError(f"{_MCP} is imported on first use", name=_MCP)  # env_server's `except` takes it

    module.get_server_tools = get_server_tools  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def _on_first_use(package: types.ModuleType, name: str, previous: Callable[[str], Any] | None) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``mcp_environment`` for ``name`` (kept in ``package`` then),
    and asks ``previous`` (the package's own, if any) for anything else."""

    def __getattr__(attribute: str) -> Any:
        if attribute == name:
            value = getattr(importlib.import_module(_MCP), name)
            setattr(package, name, value)
            return value
        if previous is not None:
            return previous(attribute)
        raise AttributeError(f"module {package.__name__!r} has no attribute {attribute!r}")

    return __getattr__


import_openenv()
