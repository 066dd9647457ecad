"""Model agents on the tiny offline Qwen2-VL: loading, generation, batching, the HTTP agent against
a real local server, and the failures an endpoint can produce."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401
from rl4vlm_gym.agents.hf import HFAgent
from rl4vlm_gym.agents.openai_api import AgentError, OpenAIAgent
from rl4vlm_gym.agents.tiny import build_tiny_vlm, load_vlm
from rl4vlm_gym.harness.suite import load_suite
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig, to_hf

# torch and transformers are imported by the tests that use them, not here: every test worker imports
# this module to collect it, and they take seconds to import (the extra's absence is a skip, below).
pytestmark = [pytest.mark.extra("hf"), pytest.mark.usefixtures("one_torch_thread")]  # tests/conftest.py
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return str(build_tiny_vlm(tmp_path_factory.mktemp("tiny") / "model"))


@pytest.fixture(scope="module")
def server(tiny):
    from rl4vlm_gym.agents.serve import ModelServer

    with ModelServer(tiny, model_name="tiny") as running:
        yield running


def _obs(env_id="rl4vlm/NumberLine-v0", obs_mode="image+text", seed=1):
    env = gym.make(env_id, obs_mode=obs_mode, image_size=(128, 128))
    obs, _ = env.reset(seed=seed)
    return env, obs


def test_build_is_deterministic_and_reloads_exactly(tiny, tmp_path):
    import torch

    from rl4vlm_gym.agents.tiny import ImageOnlyQwen2VLProcessor

    again = build_tiny_vlm(tmp_path / "again")
    for name in ("model.safetensors", "tokenizer.json"):
        assert (again / name).read_bytes() == (Path(tiny) / name).read_bytes(), name
    model, processor = load_vlm(tiny)
    assert isinstance(processor, ImageOnlyQwen2VLProcessor) and processor.image_processor is not None
    assert sum(p.numel() for p in model.parameters()) < 1_000_000
    env, obs = _obs()
    messages, images = to_hf(PromptBuilder(PromptConfig()).messages(obs))
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=images, return_tensors="pt")
    assert int((inputs["input_ids"] == model.config.image_token_id).sum()) > 0  # the image reached the prompt
    other, other_processor = load_vlm(again)
    again_inputs = other_processor(text=[text], images=images, return_tensors="pt")
    assert torch.equal(inputs["input_ids"], again_inputs["input_ids"])
    with torch.no_grad():
        assert torch.equal(model(**inputs).logits, other(**again_inputs).logits)  # same weights, bit for bit


def test_loading_something_that_is_not_a_vlm_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model folder at .*nothing-here"):
        load_vlm(tmp_path / "nothing-here")


def test_hf_agent_plays_and_counts_tokens(tiny):
    agent = HFAgent(tiny, max_new_tokens=8)
    env, obs = _obs()
    agent.begin(env, 1)
    for _ in range(3):
        output = agent.act(obs)
        assert isinstance(output, str)
        usage = agent.usage[0]
        assert usage.input_tokens > 64 and 1 <= usage.output_tokens <= 8
        actions = obs["actions"]
        obs, _, terminated, truncated, info = env.step(output)
        # The env saw the agent's text unchanged and judged it as its parser does.
        assert info["action"]["raw"] == output, "the env did not receive the agent's output"
        assert info["action"] == env.unwrapped.parser.parse(output, actions).as_info()
        if terminated or truncated:
            break
    assert agent.describe()["model"] == tiny


def test_sampling_is_reproducible_and_batches_mix_modes(tiny):
    env, obs = _obs()
    text_env, text_obs = _obs(obs_mode="text", seed=2)
    runs = []
    for _ in range(2):
        agent = HFAgent(tiny, max_new_tokens=6, temperature=1.0, seed=7)
        agent.begin(env, 1, 0)
        agent.begin(text_env, 2, 1)
        agent.begin(env, 3, 2)
        runs.append(agent.act_batch([obs, text_obs, obs]))
    assert runs[0] == runs[1] and len(runs[0]) == 3 and all(isinstance(o, str) for o in runs[0])
    assert agent.usage[1].input_tokens < agent.usage[0].input_tokens  # the text-mode prompt has no image tokens
    greedy = [HFAgent(tiny, max_new_tokens=6).act(obs) for _ in range(2)]
    assert greedy[0] == greedy[1]


def test_openai_agent_against_the_local_server(tiny, server):
    agent = OpenAIAgent("tiny", base_url=server.url, max_tokens=8, max_retries=0)
    env, obs = _obs()
    agent.begin(env, 1)
    output = agent.act(obs)
    assert isinstance(output, str)
    assert agent.usage[0].input_tokens > 64 and agent.usage[0].output_tokens >= 1
    # the server runs the same generation code as the local agent: same greedy reply
    local = HFAgent(tiny, max_new_tokens=8)
    local.begin(env, 1)
    assert local.act(obs) == output
    assert len(agent.act_batch([obs, obs])) == 2


def test_server_rejects_malformed_requests(server):
    import httpx

    cases = [
        ({"messages": []}, "non-empty list"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "role system, user or assistant"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]}, "no downloads"),
        ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens must be"),
    ]
    for body, message in cases:
        reply = httpx.post(server.url + "/chat/completions", json=body, timeout=30)
        assert reply.status_code == 400 and message in reply.json()["error"]["message"], (body, reply.text)
    reply = httpx.post(server.url + "/chat/completions", content=b"{not json", timeout=30)
    assert reply.status_code == 400
    assert httpx.get(server.url + "/models", timeout=30).json()["data"][0]["id"] == "tiny"


def _listening_socket():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_silent_endpoint_times_out_with_a_clear_error():
    sock = _listening_socket()  # accepts connections, never answers
    try:
        agent = OpenAIAgent("m", base_url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1", timeout=0.5, max_retries=0)
        env, obs = _obs(obs_mode="text")
        with pytest.raises(AgentError, match=r"did not answer within 0.5 s"):
            agent.act(obs)
    finally:
        sock.close()


def test_garbage_answers_are_named():
    from flask import Flask
    from werkzeug.serving import make_server

    garbage = Flask("garbage")
    garbage.add_url_rule("/v1/chat/completions", "c", lambda: ({"foo": 1}, 200), methods=["POST"])
    garbage.add_url_rule("/v2/chat/completions", "d", lambda: ("<html>oops</html>", 502), methods=["POST"])
    server = make_server("127.0.0.1", 0, garbage, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env, obs = _obs(obs_mode="text")
        base = f"http://127.0.0.1:{server.server_port}"
        with pytest.raises(AgentError, match="answered without choices"):
            OpenAIAgent("m", base_url=base + "/v1", max_retries=0).act(obs)
        with pytest.raises(AgentError, match="answered HTTP 502"):
            OpenAIAgent("m", base_url=base + "/v2", max_retries=0).act(obs)
        with pytest.raises(AgentError, match="cannot reach"):
            OpenAIAgent("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2).act(obs)
    finally:
        server.shutdown()
        thread.join()


@pytest.mark.slow
def test_eval_smoke_suite_with_the_model_agents(tiny, server, tmp_path):
    """`rl4vlm-gym eval` over the smoke suite with the local VLM and with the HTTP agent: every task (one of each
    family), on its first seed (``--limit 1``: the second seed of each would double the model's time and test nothing new)."""
    from typer.testing import CliRunner

    from rl4vlm_gym.cli import app

    runner = CliRunner()
    # Replies of 4 tokens: the random tiny model writes no valid action at any length, and generation
    # (one forward pass a token) is most of this test's time.
    for agent, args in (
        ("hf", ["-a", f"model={tiny}", "-a", "max_new_tokens=4", "-a", "temperature=1.0"]),
        ("openai", ["-a", "model=tiny", "-a", f"base_url={server.url}", "-a", "max_tokens=4", "-a", "max_retries=0"]),
    ):
        out = tmp_path / agent
        result = runner.invoke(app, ["eval", "--agent", agent, *args, "--suite", "smoke", "--limit", "1", "--out", str(out), "--no-progress"])
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] and summary["overall"]["failed_episodes"] == 0
        assert summary["overall"]["episodes"] == len(load_suite("smoke").tasks)  # every task played
        assert summary["overall"]["input_tokens"] > 0 and summary["overall"]["output_tokens"] > 0
        records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        assert all(isinstance(s["raw"], str) for r in records for s in r["steps"])
