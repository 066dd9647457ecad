"""The MCP tools of a served env (rl4vlm_gym.server.mcp) on openenv-core's /mcp route: an episode
played with them is the local env's, bad calls get JSON-RPC errors and the session goes on, and each
session's tools run in a thread of its own. In this process, through FastAPI's TestClient (no port)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split

import rl4vlm_gym  # noqa: E402, F401 - registers the envs
from rl4vlm_gym.server.environment import Catalog  # noqa: E402
from rl4vlm_gym.server.mcp import TOOL_NAMES, create_mcp_app  # noqa: E402
from rl4vlm_gym.server.models import MAX_ACTION_CHARS, decode_image  # noqa: E402

ENV = "rl4vlm/NumberLine-v0"


class Rpc:
    """JSON-RPC 2.0 calls to ``POST /mcp`` in one MCP session (``openenv/session/create``), as
    openenv-core's ``MCPToolClient`` makes them in its production mode."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.session = self.call("openenv/session/create")["result"]["session_id"]

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        answer = self.client.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).json()
        assert answer["jsonrpc"] == "2.0" and answer["id"] == 7, answer
        return answer

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.call("tools/call", session_id=self.session, name=name, arguments=arguments)

    def close(self) -> None:
        assert self.call("openenv/session/close", session_id=self.session)["result"]["closed"]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    from fastapi.testclient import TestClient

    with TestClient(create_mcp_app(Catalog.of(ENV), max_sessions=4, idle_timeout=None)) as test_client:
        yield test_client


def test_the_tools_are_listed_with_their_schemas(client: Any) -> None:
    rpc = Rpc(client)
    tools = {tool["name"]: tool for tool in rpc.call("tools/list", session_id=rpc.session)["result"]["tools"]}
    assert list(tools) == list(TOOL_NAMES)
    assert tools["act"]["inputSchema"]["required"] == ["action"]
    assert tools["act"]["inputSchema"]["properties"]["action"]["type"] == "string"
    assert set(tools["start_episode"]["inputSchema"]["properties"]) == {"seed", "options", "env_id", "make_kwargs"}
    assert all(tool["description"] for tool in tools.values())
    rpc.close()


def test_an_episode_played_with_the_tools_is_the_local_one(client: Any) -> None:
    local = gym.make(ENV)
    obs, info = local.reset(seed=3)
    rpc = Rpc(client)
    first = rpc.tool("start_episode", seed=3)["result"]
    assert (first["text"], first["mission"], first["actions"], first["info"]) == (
        obs["text"],
        obs["mission"],
        list(obs["actions"]),
        info,
    )
    assert "image" not in first and first["reward"] == 0.0 and not first["done"]
    for reply in ["+", "nonsense", "-", "-", "-", "-", "-"]:
        obs, reward, terminated, truncated, info = local.step(reply)
        got = rpc.tool("act", action=reply)["result"]
        assert (got["text"], got["reward"], got["terminated"], got["truncated"]) == (obs["text"], reward, terminated, truncated)
        assert got["info"] == info and got["done"] == (terminated or truncated)
    assert got["terminated"] and got["info"]["success"]  # the episode was played to its end
    seen = rpc.tool("look")["result"]
    assert np.array_equal(decode_image(seen["image"]), obs["image"]) and seen["image"]["format"] == "png"
    assert seen["text"] == obs["text"]
    rpc.close()
    local.close()


def test_bad_calls_get_errors_and_the_session_goes_on(client: Any) -> None:
    rpc = Rpc(client)
    assert "start_episode first" in rpc.tool("look")["error"]["message"]
    assert "call reset before step" in rpc.tool("act", action="+")["error"]["message"]
    rpc.tool("start_episode", seed=1)
    refused = {
        "not a string": (rpc.tool("act", action=5), "action must be a string, got int"),
        "unknown argument": (rpc.tool("act", move="+"), "unexpected keyword argument 'move'"),
        "bad seed": (rpc.tool("start_episode", seed=-1), "seed must be"),
        "unknown tool": (rpc.tool("step", action="+"), "Tool not found: step"),
    }
    for case, (answer, words) in refused.items():
        assert words in answer["error"]["message"], (case, answer)
    # the action's length limit: at it, played (the env parses nothing valid); one over, refused by length, unechoed
    at_limit = rpc.tool("act", action="x" * MAX_ACTION_CHARS)["result"]
    assert at_limit["info"]["action"]["valid"] is False
    over = rpc.tool("act", action="y" * (MAX_ACTION_CHARS + 1))["error"]["message"]
    assert f"over the limit of {MAX_ACTION_CHARS}" in over and "yyy" not in over
    assert rpc.tool("act", action="+")["result"]["info"]["action"]["valid"]  # the session went on
    rpc.close()
    assert "Unknown session_id" in rpc.tool("act", action="+")["error"]["message"]


def test_each_sessions_tools_run_in_a_thread_of_their_own(client: Any) -> None:
    """Off the event loop, one thread per session (an env's thread-bound state, such as a GL context,
    always sees the same thread), ended with its session."""

    def mcp_threads() -> set[threading.Thread]:
        return {thread for thread in threading.enumerate() if thread.name.startswith("rl4vlm-mcp-session")}

    before = mcp_threads()
    first, second = Rpc(client), Rpc(client)
    for rpc in (first, second, first, second):
        rpc.tool("start_episode", seed=0)
        rpc.tool("act", action="+")
    made = mcp_threads() - before
    assert len(made) == 2, made
    first.close()
    second.close()
    for thread in made:
        thread.join(5)
        assert not thread.is_alive(), thread


@pytest.mark.slow
@pytest.mark.extra("trl")
def test_trl_environment_factory_example_trains_through_the_tools(tmp_path: Any) -> None:
    """examples/trl_environment_factory.py, one GRPO step on CPU with the tiny model: each rollout's
    environment plays through the MCP tools (openenv-core's MCPToolClient; the server in a thread here, as
    ``--url``: the example's own ``rl4vlm-gym serve --mcp`` child costs 4 s of CPU more), and every
    rollout's return, the reward TRL logs, is what the local env pays for the moves it sent."""
    import importlib.util
    from pathlib import Path

    import torch
    from serving import served_app

    path = Path(__file__).resolve().parents[2] / "examples" / "trl_environment_factory.py"
    spec = importlib.util.spec_from_file_location("trl_environment_factory", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the tiny model gains nothing from more; on a busy 2-core machine they cost 10x
    try:
        # level 3's seeds 0 and 1 take 11 and 2 moves at best: no episode ends before its second call
        argv = ["--steps", "1", "--batch", "2", "--num-generations", "2", "--max-tool-calls", "2", "--seeds", "2", "--level", "3"]
        with served_app(create_mcp_app(Catalog.of(ENV))) as url:
            trainer, environments = example.main([*argv, "--url", url, "--output", str(tmp_path)])
    finally:
        torch.set_num_threads(threads)
    assert trainer.state.global_step == 1 and len(environments) == 2
    logged = next(entry for entry in trainer.state.log_history if "reward" in entry)
    assert logged["tools/call_frequency"] > 0 and logged["tools/failure_frequency"] == 0, logged
    returns = []
    for environment in environments:
        assert environment.moves and environment.seed in (0, 1), environment.moves
        local = gym.make(ENV)
        local.reset(seed=environment.seed, options={"level": 3})
        returns.append(sum(float(local.step(move)[1]) for move in environment.moves))
        local.close()
        assert environment.episode_return == returns[-1]
    assert logged["reward"] == pytest.approx(sum(returns) / len(returns))
