"""Record BALROG's protocol as its own agents, prompt builder, evaluator and client play it: the golden
transcripts of ``protocol.json.gz``.

Run with the private reference environment (tests/envs/balrog/golden/make_reference_env.sh), from a
directory other than REF_DIR/src (its checkout folders shadow the packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/protocol/record.py

It drives BALROG's own code, nothing of ours, on scripted observations:

- ``balrog.evaluator.Evaluator.run_episode`` (the episode loop: the instruction prompt with the
  mission, ``agent.act(obs, prev_action)``, ``env.check_action_validity``, the invalid-output feedback
  written into ``long_term_context``, the history keeping the agent's own output, the few-shot
  demonstrations loaded by ``balrog.dataset.InContextDataset`` from ``records/<env>/<task>/*.npz``);
- the agents of ``balrog.agents.AgentFactory`` (``naive``, ``cot``, ``robust_naive``, ``robust_cot``,
  ``few_shot``) with ``balrog.prompt_builder.create_prompt_builder`` (``HistoryPromptBuilder``) and
  BALROG's ``balrog/config/config.yaml`` (temperature 1.0, max_tokens 8192, max_text_history 16,
  max_cot_history 1, max_icl_history 1000; ``max_image_history`` 0 for LLM mode, 1 for VLM mode);
- BALROG's OpenAI client, ``balrog.client.OpenAIWrapper``, whose ``convert_messages`` turns the
  agents' messages into the request (text first, then the PNG image, base64) and whose ``generate``
  strips the completion. Only the network is replaced: ``OpenAIWrapper._initialize_client`` installs
  a fake ``openai`` client that records each ``chat.completions.create`` call and answers with the
  scenario's next scripted completion.

The env is a scripted stand-in wrapped in BALROG's own ``EnvWrapper`` (named ``babyai`` so that the
evaluator passes the mission to ``get_instruction_prompt``, which the stand-in answers with a fixed
text): at reset and after step k it returns observation k of the scenario,
``{"text": {"long_term_context", "short_term_context"}, "image": PIL image or None}``, with BabyAI's
six action names and default action ``go forward``; an episode lasts ``max_steps`` steps.

Scenarios (from a fixed generator): every agent in LLM mode (max_image_history 0) and VLM mode (1),
for 1, 2, 16, 17 and 40 steps; plus VLM mode without images (TextWorld's case), more images than text
history (max_text_history 2, max_image_history 4), few-shot with two demonstrations and a cut
``max_icl_history``, and an instruction with "PLAY" inside a word. Completions mix valid actions with
junk, digits, wrong case, missing or broken tags, several ``ACTION:`` lines and white space around.
Recorded per scenario: its settings, the instruction, the observations as the env gave them (before
BALROG's feedback), the demonstrations in the order BALROG loaded them, the completions, and per step
the request exactly as the client sent it (model, max_tokens, temperature, messages), the agent's
extracted output (``completion``), its ``reasoning`` and the action the env played. Also a table of
what each agent extracts from a list of replies.

google-genai and anthropic are not installed in the reference environment: ``balrog.client``
imports them at module level, so the script puts empty stand-in modules in ``sys.modules`` first (only
the OpenAI client is used).
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import types
from importlib import metadata
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("protocol.json.gz")
COMMITS = {"BALROG": "af7d1f17e0deec3a7a0e334beae5f11b7a21371b"}
ACTIONS = ["turn left", "turn right", "go forward", "pick up", "drop", "toggle"]
DEFAULT_ACTION = "go forward"
MISSION = "go to the red ball"
TASK = "BabyAI-MixedTrainLocal-v0/goto"
AGENTS = ("naive", "cot", "robust_naive", "robust_cot", "few_shot")
LENGTHS = (1, 2, 16, 17, 40)


def _stub_unused_clients() -> None:
    """``balrog.client`` imports google-genai and anthropic at module level; only OpenAI is used here."""
    google = types.ModuleType("google")
    genai = types.ModuleType("google.genai")
    genai.types = types.ModuleType("google.genai.types")
    google.genai = genai
    anthropic = types.ModuleType("anthropic")
    anthropic.Anthropic = object
    sys.modules.setdefault("google", google)
    sys.modules.setdefault("google.genai", genai)
    sys.modules.setdefault("google.genai.types", genai.types)
    sys.modules.setdefault("anthropic", anthropic)


def _commit(path: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{COMMITS[path.name]} (make_reference_env.sh's; {path} has no .git)"


# Scripted content -----------------------------------------------------------------------------------

WORDS = ["a red ball", "a wall", "a blue key", "a grey door", "a green box", "a purple ball", "a yellow key"]
JUNK = [
    "", "   ", "I don't know", "123", "Go Forward", "go forward.", "1. go forward", "  turn left \n", "turn left\nturn right",
    "ACTION: pick up", "<|ACTION|>drop<|END|>", "ACTION: toggle\nACTION: drop", "pick up!!", "tógglé", "go  forward", "\n\ndrop\n",
    "2", "go forward 2", "move forward", "action: turn left", "ACTION:turn right", "<|ACTION|>pick up", "<|action|>drop<|end|>",
    "<|ACTION|>\n go forward \n<|END|>", "<|ACTION|>turn left<|END|> or <|ACTION|>drop<|END|>", "ACTION: 2. turn left",
    "ACTION: go forward\n\nPrevious plan: keep going", "The ball is ahead.", "toggle\n", "\tdrop\t",
]
THOUGHTS = ["The ball is ahead.", "I see a wall on my left,\nso I turn.", "Let me think step by step: the key is 2 steps away.", ""]


def _text(rng: random.Random) -> dict[str, str]:
    lines = [f"{rng.choice(WORDS)} {rng.randint(1, 5)} steps {rng.choice(['left', 'right', 'forward'])}" for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.3:
        lines.append(f"You carry {rng.choice(WORDS)}")
    short = "" if rng.random() < 0.5 else "inventory:\n" + "\n".join(f"{c}: {rng.choice(WORDS)}" for c in "abc"[: rng.randint(1, 3)])
    return {"long_term_context": "\n".join(lines), "short_term_context": short}


def _image(rng: random.Random, with_images: bool):
    if not with_images:
        return None
    from PIL import Image

    w, h = rng.randint(2, 6), rng.randint(2, 6)
    data = bytes(rng.randrange(256) for _ in range(w * h * 3))
    return Image.frombytes("RGB", (w, h), data)


def _completion(rng: random.Random, agent: str) -> str:
    if rng.random() < 0.45:
        return rng.choice(JUNK)
    action, thought = rng.choice(ACTIONS), rng.choice(THOUGHTS)
    if agent in ("cot",):
        return rng.choice([f"{thought}\nACTION: {action}", f"{thought} ACTION: {action}.", f"ACTION: {rng.choice(ACTIONS)}\n{thought}\nACTION: {action}"])
    if agent in ("robust_naive", "robust_cot"):
        return rng.choice([f"<|ACTION|>{action}<|END|>", f"{thought}\n<|ACTION|> {action} <|END|>", f"  <|ACTION|>{action}<|END|>\n"])
    return rng.choice([action, f" {action}\n", action])


def _encode_image(image) -> dict | None:
    if image is None:
        return None
    return {"size": list(image.size), "rgb": base64.b64encode(image.tobytes()).decode("ascii")}


# BALROG's code, with the network replaced ------------------------------------------------------------


class FakeOpenAI:
    """Stands in for ``openai.OpenAI``: records each request, answers the next scripted completion."""

    def __init__(self, script: list[str], requests: list[dict]) -> None:
        self.script, self.requests = script, requests
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self.create))

    def create(self, **kwargs):
        self.requests.append(copy.deepcopy(kwargs))
        content = self.script.pop(0)
        message = types.SimpleNamespace(content=content)
        usage = types.SimpleNamespace(prompt_tokens=1, completion_tokens=1)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message, finish_reason="stop")], usage=usage)


def _scripted_env_class():
    import gymnasium as gym

    class ScriptedEnv(gym.Env):
        """Returns the scenario's observations; BabyAI's action names; ``max_steps`` steps."""

        def __init__(self, observations: list[dict], max_steps: int, played: list[str]) -> None:
            self.observations, self.max_steps, self.played = observations, max_steps, played
            self.language_action_space = list(ACTIONS)
            self.default_action = DEFAULT_ACTION
            self.t = 0

        def _obs(self) -> dict:
            obs = self.observations[self.t]
            return {"text": dict(obs["text"]), "image": obs["image"], "mission": MISSION}

        def reset(self, seed=None, options=None):
            self.t = 0
            return self._obs(), {}

        def step(self, action):
            self.played.append(action)
            self.t += 1
            return self._obs(), 0.0, False, False, {}

        def get_stats(self):
            return {"progression": 0.0}

    return ScriptedEnv


def _config(agent: str, text: int, images: int, icl_history: int = 1000, icl_episodes: int = 1):
    import balrog
    from omegaconf import OmegaConf

    config = OmegaConf.load(Path(balrog.__file__).parent / "config" / "config.yaml")
    config.agent.type = agent
    config.agent.max_text_history = text
    config.agent.max_image_history = images
    config.agent.max_icl_history = icl_history
    config.eval.icl_episodes = icl_episodes
    config.eval.num_workers = 1
    config.envs.names = "babyai"
    config.envs.env_kwargs.seed = 7
    config.client.model_id = "scripted-model"
    return config


def _write_demo(root: Path, name: str, demo: list[dict], actions: list[str]) -> None:
    """A demonstration in BALROG's records format (``records/<env>/<task>/<stem>-seedN-....npz``):
    per transition the observation, the action that led to it (a dummy one first), reward, done."""
    folder = root / "records" / "babyai" / TASK
    folder.mkdir(parents=True, exist_ok=True)
    text = np.empty(len(demo), dtype=object)
    text[:] = [o["text"] for o in demo]
    n = len(demo)
    np.savez_compressed(
        folder / name,
        text=text,
        action=np.array(["", *actions], dtype=object),
        reward=np.zeros(n),
        terminated=np.array([False] * (n - 1) + [True]),
        truncated=np.zeros(n, dtype=bool),
    )


def run_scenario(spec: dict, rng: random.Random) -> dict:
    import balrog.client
    import balrog.evaluator
    from balrog.agents import AgentFactory
    from balrog.environments.env_wrapper import EnvWrapper

    steps, agent_type = spec["steps"], spec["agent"]
    observations = [{"text": _text(rng), "image": _image(rng, spec["with_images"])} for _ in range(steps + 1)]
    for i in spec.get("empty_long", []):  # an observation whose long-term text is empty
        if i < len(observations):
            observations[i]["text"]["long_term_context"] = ""
    completions = [_completion(rng, agent_type) for _ in range(steps)]
    demos = []
    for d in range(spec.get("demos", 1) if agent_type == "few_shot" else 0):
        length = spec.get("demo_lengths", [4, 3])[d]
        demos.append({"observations": [{"text": _text(rng)} for _ in range(length + 1)], "actions": [rng.choice(ACTIONS) for _ in range(length)]})
    instruction = spec.get("instruction", "You are an agent playing a simple navigation game. Your goal is to {mission}.\n\nPLAY!")

    requests: list[dict] = []
    played: list[str] = []
    script = list(completions)
    ScriptedEnv = _scripted_env_class()

    class ScriptedWrapper(EnvWrapper):
        def get_instruction_prompt(self, instructions=None):
            return instruction.format(mission=instructions)

    balrog.client.OpenAIWrapper._initialize_client = lambda self: (
        setattr(self, "client", FakeOpenAI(script, requests)),
        setattr(self, "_initialized", True),
    )
    balrog.evaluator.make_env = lambda env_name, task, config: ScriptedWrapper(ScriptedEnv(observations, steps, played), env_name, task)
    loaded: list[str] = []
    original_load = balrog.evaluator.InContextDataset.load_in_context_learning_episode
    balrog.evaluator.InContextDataset.load_in_context_learning_episode = lambda self, path, agent: (
        loaded.append(Path(path).name),
        original_load(self, path, agent),
    )[-1]

    config = _config(agent_type, spec["text"], spec["images"], spec.get("icl_history", 1000), max(1, len(demos)))
    extracted: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for d, demo in enumerate(demos):
            _write_demo(Path(tmp), f"20240101T000000-seed{100 + d}-rew1.00-len{len(demo['actions'])}.npz", demo["observations"], demo["actions"])
        evaluator = balrog.evaluator.Evaluator("babyai", config, original_cwd=tmp, output_dir=tmp)
        agent = AgentFactory(config).create_agent()
        act = agent.act

        def recording_act(obs, prev_action=None):
            response = act(obs, prev_action=prev_action)
            extracted.append({"completion": response.completion, "reasoning": response.reasoning})
            return response

        agent.act = recording_act
        evaluator.run_episode(TASK, agent)
    balrog.evaluator.InContextDataset.load_in_context_learning_episode = original_load
    assert not script and len(requests) == steps, (spec, len(script), len(requests))
    demo_by_name = {f"20240101T000000-seed{100 + d}-rew1.00-len{len(demo['actions'])}.npz": demo for d, demo in enumerate(demos)}
    return {
        **{k: v for k, v in spec.items() if k != "with_images"},
        "with_images": spec["with_images"],
        "instruction": instruction.format(mission=MISSION),
        "observations": [{"text": o["text"], "image": _encode_image(o["image"])} for o in observations],
        "demos": [demo_by_name[name] for name in loaded],
        "completions": completions,
        "steps_recorded": [
            {"request": request, **e, "played": p} for request, e, p in zip(requests, extracted, played, strict=True)
        ],
    }


def extraction_table() -> list[dict]:
    """What each agent extracts from each reply (``generate`` strips it first)."""
    import balrog.client
    import balrog.evaluator
    from balrog.agents import AgentFactory

    replies = sorted(set(JUNK) | {f"{t}\nACTION: {a}" for t in THOUGHTS[:2] for a in ACTIONS[:2]} | {"<|ACTION|>toggle<|END|>"})
    rows = []
    for agent_type in AGENTS:
        for reply in replies:
            script, requests = [reply], []
            balrog.client.OpenAIWrapper._initialize_client = lambda self, s=script, r=requests: (
                setattr(self, "client", FakeOpenAI(s, r)),
                setattr(self, "_initialized", True),
            )
            agent = AgentFactory(_config(agent_type, 16, 0)).create_agent()
            agent.prompt_builder.update_instruction_prompt("PLAY!")
            response = agent.act({"text": {"long_term_context": "x", "short_term_context": ""}, "image": None})
            rows.append({"agent": agent_type, "reply": reply, "completion": response.completion, "reasoning": response.reasoning})
    return rows


def scenarios() -> list[dict]:
    specs = []
    for agent in AGENTS:
        for images in (0, 1):
            for steps in LENGTHS:
                specs.append({"name": f"{agent}-{'vlm' if images else 'llm'}-{steps}", "agent": agent, "text": 16, "images": images, "steps": steps, "with_images": True, "empty_long": [1, 5]})
    specs += [
        {"name": "naive-vlm-no-images-17", "agent": "naive", "text": 16, "images": 1, "steps": 17, "with_images": False},
        {"name": "cot-text2-images4-9", "agent": "cot", "text": 2, "images": 4, "steps": 9, "with_images": True},
        {"name": "robust_cot-text2-images4-9", "agent": "robust_cot", "text": 2, "images": 4, "steps": 9, "with_images": True},
        {"name": "few_shot-two-demos-5", "agent": "few_shot", "text": 16, "images": 1, "steps": 5, "with_images": True, "demos": 2, "demo_lengths": [3, 2]},
        {"name": "few_shot-cut-icl-4", "agent": "few_shot", "text": 16, "images": 0, "steps": 4, "with_images": True, "demos": 2, "demo_lengths": [3, 4], "icl_history": 9},
        {"name": "few_shot-cut-first-icl-3", "agent": "few_shot", "text": 16, "images": 0, "steps": 3, "with_images": True, "demos": 1, "demo_lengths": [6], "icl_history": 4},
        {
            "name": "few_shot-play-in-a-word-3", "agent": "few_shot", "text": 16, "images": 0, "steps": 3, "with_images": True,
            "instruction": "PLAYERS play here. Your goal is to {mission}.\n\nPLAY!",
        },
    ]
    return specs


def main() -> None:
    os.environ.setdefault("TQDM_DISABLE", "1")  # the evaluator's progress bars
    _stub_unused_clients()
    import balrog

    rng = random.Random(20240601)
    records = [run_scenario(spec, rng) for spec in scenarios()]
    checkout = Path(balrog.__file__).resolve().parent.parent
    data = {
        "header": {
            "what": "BALROG's protocol (prompt builder, agents, evaluator loop, OpenAI client) on scripted observations",
            "command": "cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/protocol/record.py",
            "balrog_commit": _commit(checkout),
            "packages": {p: metadata.version(p) for p in ("numpy", "pillow", "gymnasium", "omegaconf", "openai")},
            "python": sys.version.split()[0],
            "actions": ACTIONS,
            "default_action": DEFAULT_ACTION,
            "mission": MISSION,
            "task": TASK,
        },
        "scenarios": records,
        "extractions": extraction_table(),
    }
    blob = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    OUT.write_bytes(gzip.compress(blob, mtime=0))
    print(f"{OUT}: {len(records)} scenarios, {sum(len(r['steps_recorded']) for r in records)} steps, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
