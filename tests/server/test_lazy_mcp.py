"""The patch ``openenv-lazy-mcp`` (rl4vlm_gym.server._openenv): importing our server and client leaves
FastMCP out until an MCP part of openenv-core is used (a session of a server with MCP tools,
rl4vlm_gym.server.mcp, makes its FastMCP server on the first MCP request), and every MCP part is then openenv-core's own;
refused (another openenv-core), openenv-core is imported as it is. Each case in a fresh interpreter:
openenv-core is imported once per process."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("openenv")  # the server extra (openenv-core: imported by the tests, not here)

# In a fresh interpreter: import what a server and a RemoteEnv import, then use every MCP part
# openenv-core offers where we imported it (http_server's get_server_tools on a FastMCP server with a
# tool, MCPEnvironment from both packages that export it).
SCRIPT = """
import sys, warnings
{prelude}
import rl4vlm_gym.server.app, rl4vlm_gym.server.remote, rl4vlm_gym.server.mcp
from rl4vlm_gym.server.environment import Catalog
served = rl4vlm_gym.server.mcp.MCPServedEnv(Catalog.of("rl4vlm/NumberLine-v0"))
served.reset(seed=0)  # a session of a server with MCP tools, played without them
print("fastmcp imported:", "fastmcp" in sys.modules)
import openenv.core
from openenv.core.env_server import http_server, mcp_environment
from openenv.core.env_server import MCPEnvironment
assert openenv.core.MCPEnvironment is MCPEnvironment is mcp_environment.MCPEnvironment, MCPEnvironment
from fastmcp import FastMCP
server = FastMCP("t")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

assert list(http_server.get_server_tools(server)) == ["add"]
assert tuple(http_server.get_server_tools(served.mcp_server)) == rl4vlm_gym.server.mcp.TOOL_NAMES
served.close()
assert "MCPEnvironment" in dir(openenv.core.env_server) or openenv.core.env_server.MCPEnvironment is MCPEnvironment
print("ok")
"""


def _run(prelude: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(prelude=prelude)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.slow  # a fresh interpreter imports the server: 2-3 s
def test_the_server_imports_no_fastmcp_and_every_mcp_part_is_openenv_s_own() -> None:
    out = _run('warnings.simplefilter("error")')  # the patch is allowed: no PatchRefusedWarning
    assert "fastmcp imported: False" in out and out.rstrip().endswith("ok"), out


@pytest.mark.slow  # a fresh interpreter imports the server: 2-3 s
def test_lazy_mcp_falls_back() -> None:
    # Another openenv-core (its version read as 0.0.1): the patch is refused, loudly, and FastMCP is
    # imported with openenv-core as the library does by itself.
    prelude = (
        "import importlib.metadata as m; real = m.version\n"
        "m.version = lambda d: '0.0.1' if d == 'openenv-core' else real(d)\n"
        "warnings.simplefilter('always')"
    )
    out = _run(prelude)
    assert "refused the patch 'openenv-lazy-mcp'" in out and "fastmcp imported: True" in out and "ok" in out, out
