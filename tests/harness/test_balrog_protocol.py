"""BALROG's protocol in the harness: its prompt, agents and reply parsing byte for byte against
recordings of BALROG's own code (tests/envs/balrog/golden/protocol), the default action on an
invalid reply, its sampling settings, the few-shot agent's demonstrations, the balrog suites,
BALROG's figures in the summary and its result layout."""

from __future__ import annotations

import base64
import csv
import gzip
import json
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.harness.metrics import balrog_progression, balrog_summary
from rl4vlm_gym.harness.runner import AgentSpec, make_task_env, run_suite, write_summary
from rl4vlm_gym.harness.suite import SUITES_DIR, load_suite
from rl4vlm_gym.parsing import ActionParser, balrog_extract, balrog_reasoning
from rl4vlm_gym.prompts import BalrogDemo, PromptBuilder, PromptConfig
from rl4vlm_gym.registry import env_card
from rl4vlm_gym.wrappers import BalrogActions

BABYAI = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")


# Golden recordings of BALROG's own code (tests/envs/balrog/golden/protocol/record.py) ---------------

GOLDEN = json.loads(gzip.decompress((Path(__file__).parents[1] / "envs/balrog/golden/protocol/protocol.json.gz").read_bytes()))
HEADER = GOLDEN["header"]
SCENARIOS = {s["name"]: s for s in GOLDEN["scenarios"]}
AGENTS = {"naive": "balrog-naive", "cot": "balrog-cot", "robust_naive": "balrog-robust-naive", "robust_cot": "balrog-robust-cot", "few_shot": "balrog-few-shot"}
ACTIONS = tuple(HEADER["actions"])


class ScriptedBalrogEnv(gym.Env):
    """A recorded scenario's observations with the balrog envs' interface: ``info["balrog"]``
    holds BALROG's text, ``obs["text"]`` its short- and long-term parts joined, ``None`` images
    drawn blank with ``info["balrog"]["image"] = None``; BabyAI's actions and default action."""

    metadata = {"render_modes": []}
    DEFAULT_ACTION = HEADER["default_action"]
    obs_mode = "image+text"

    def __init__(self, scenario: dict) -> None:
        self.scenario = scenario
        self.parser = ActionParser(format=AGENTS[scenario["agent"]], match="strict")  # type: ignore[arg-type]
        self.played: list[str] = []
        self.t = 0

    def instruction_prompt(self) -> str:
        return self.scenario["instruction"]

    def _observe(self) -> tuple[dict, dict]:
        recorded = self.scenario["observations"][self.t]
        context = dict(recorded["text"])
        if recorded["image"] is None:
            image = np.zeros((2, 2, 3), np.uint8)
            context["image"] = None
        else:
            w, h = recorded["image"]["size"]
            image = np.frombuffer(base64.b64decode(recorded["image"]["rgb"]), np.uint8).reshape(h, w, 3)
        text = "\n".join(p for p in (context["short_term_context"], context["long_term_context"]) if p)
        obs = {"image": image, "text": text, "mission": HEADER["mission"], "actions": ACTIONS}
        return obs, {"balrog": context}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._observe()

    def step(self, action):
        result = self.parser.parse(action, ACTIONS)
        self.played.append(result.parsed)
        self.t += 1
        obs, info = self._observe()
        return obs, 0.0, False, self.t == self.scenario["steps"], {**info, "action": result.as_info()}


def _fake_openai(agent, replies: list[str], requests: list[dict]) -> None:
    """Answer ``agent``'s requests with ``replies`` and keep what it sent."""

    def create(**kwargs):
        requests.append(kwargs)
        message = types.SimpleNamespace(content=replies.pop(0))
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)], usage=types.SimpleNamespace(prompt_tokens=1, completion_tokens=1))

    agent.client.chat.completions.create = create


def _play(scenario: dict) -> tuple[list[dict], ScriptedBalrogEnv, dict]:
    """Play ``scenario`` through the harness (BalrogActions, the OpenAI agent, play_episode)."""
    from rl4vlm_gym.agents.openai_api import OpenAIAgent
    from rl4vlm_gym.harness.runner import play_episode
    from rl4vlm_gym.harness.suite import Task

    demos = [BalrogDemo(tuple(o["text"]["long_term_context"] for o in d["observations"]), tuple(d["actions"])) for d in scenario["demos"]]

    class RecordedDemos(OpenAIAgent):
        def demonstrations(self, env):
            return demos

    prompt = PromptConfig(template="balrog", output_format=AGENTS[scenario["agent"]], history=scenario["text"], images=scenario["images"])
    agent = RecordedDemos("scripted-model", prompt=prompt)  # BALROG's sampling: the balrog template's defaults
    agent.builder_options = {"icl_episodes": max(1, len(demos)), "max_icl_history": scenario.get("icl_history", 1000)}
    requests: list[dict] = []
    _fake_openai(agent, list(scenario["completions"]), requests)
    base = ScriptedBalrogEnv(scenario)
    record = play_episode(BalrogActions(base), agent, Task(name="t", env="balrog/Scripted-v0", seeds=(7,)), 7)
    return requests, base, record


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_balrog_template_sends_what_balrogs_client_sends(name: str) -> None:
    """Byte for byte: every request (messages with their images, model, max_tokens, temperature) of
    our OpenAI agent under the balrog template, against BALROG's agents and OpenAI client on the
    same observations and replies; and the actions the env played (the default on invalid ones)."""
    scenario = SCENARIOS[name]
    requests, env, record = _play(scenario)
    assert record["error"] is None and record["num_steps"] == scenario["steps"]
    for step, (ours, theirs) in enumerate(zip(requests, scenario["steps_recorded"], strict=True)):
        assert json.dumps(ours, sort_keys=True) == json.dumps(theirs["request"], sort_keys=True), f"{name}: step {step}"
    assert env.played == [s["played"] for s in scenario["steps_recorded"]]
    agent = AGENTS[scenario["agent"]]
    for reply, s in zip(scenario["completions"], scenario["steps_recorded"], strict=True):
        assert balrog_extract(agent, reply) == s["completion"]
    invalid = [s["played"] != s["completion"] for s in scenario["steps_recorded"]]
    assert [not s["valid"] for s in record["steps"]] == invalid


@pytest.mark.parametrize("row", GOLDEN["extractions"], ids=lambda r: f"{r['agent']}-{r['reply'][:20]!r}")
def test_balrog_agents_read_replies_as_balrog_does(row: dict) -> None:
    """What each of BALROG's agents takes from a reply (after its client strips it), and whether the
    env then counts it valid (exact, case- and space-sensitive)."""
    agent = AGENTS[row["agent"]]
    assert balrog_extract(agent, row["reply"]) == row["completion"]
    if row["agent"] == "cot":
        assert balrog_reasoning(agent, row["reply"]) == row["reasoning"]
    parsed = ActionParser(format=agent, match="strict").parse(row["reply"], ACTIONS).parsed  # type: ignore[arg-type]
    assert parsed == (row["completion"] if row["completion"] in ACTIONS else None)


def test_the_golden_scenarios_cover_the_protocols_edges() -> None:
    """The recordings hold what the issue names: 1, 2, 16, 17 and 40 steps per agent and mode, a
    prompt opening with an assistant turn, the invalid-output feedback, CoT plans, demonstrations."""
    for agent in AGENTS:
        for mode in ("llm", "vlm"):
            assert all(f"{agent}-{mode}-{n}" in SCENARIOS for n in (1, 2, 16, 17, 40))
    for name in ("naive-vlm-17", "robust_cot-llm-40"):  # no empty outputs near the start: the deque is full
        messages = SCENARIOS[name]["steps_recorded"][-1]["request"]["messages"]
        assert [m["role"] for m in messages[:3]] == ["user", "assistant", "user"]  # the first observation has left
        assert sum(m["role"] == "user" for m in messages) == 1 + 16 and len(messages) == 1 + 32
    # an empty output adds no assistant turn: two observations in a row
    assert any(["user", "user"] in [[a["role"], b["role"]] for a, b in zip(m, m[1:])] for m in
               (s["steps_recorded"][-1]["request"]["messages"][1:] for s in GOLDEN["scenarios"] if s["agent"] == "naive"))
    texts = [c["text"] for s in GOLDEN["scenarios"] for m in s["steps_recorded"][-1]["request"]["messages"] for c in m["content"] if c["type"] == "text"]
    assert any(t.startswith("Observation:\n\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\n") for t in texts)
    assert any(t.startswith("Previous plan:\n") for t in texts) and any(t.startswith("Obesrvation:\n") for t in texts)
    vlm = SCENARIOS["naive-vlm-16"]["steps_recorded"][-1]["request"]["messages"][-1]["content"]
    assert [c["type"] for c in vlm] == ["text", "image_url"]  # the image after the text


def test_a_break_in_the_template_fails_the_golden_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison sees one character: a changed agent instruction fails it."""
    from rl4vlm_gym.prompts import templates as prompts

    changed = dict(prompts._BALROG_AGENT_INSTRUCTIONS, **{"balrog-naive": prompts._BALROG_AGENT_INSTRUCTIONS["balrog-naive"] + " "})
    monkeypatch.setattr(prompts, "_BALROG_AGENT_INSTRUCTIONS", changed)
    with pytest.raises(AssertionError):
        test_the_balrog_template_sends_what_balrogs_client_sends("naive-llm-2")


# The default action ------------------------------------------------------------------------------


@pytest.mark.extra("balrog")
def test_an_invalid_reply_plays_the_default_action_and_says_so() -> None:
    wrapped = BalrogActions(gym.make("balrog/BabyAI-GoTo-v0", action_format="balrog-naive", action_match="strict"))
    twin = gym.make("balrog/BabyAI-GoTo-v0")
    wrapped.reset(seed=5)
    twin.reset(seed=5)
    obs, _, _, _, info = wrapped.step("Go Forward")  # wrong case: not an action in BALROG
    twin_obs, _, _, _, twin_info = twin.step("go forward")
    assert info["state_key"] == twin_info["state_key"]  # the default action was played, once
    assert wrapped.unwrapped.elapsed_steps == 1
    assert info["action"]["valid"] is False and info["action"]["played"] == "go forward" and info["action"]["raw"] == "Go Forward"
    feedback = "\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\n"
    if "balrog" in twin_info:  # BALROG's text: the feedback opens the long-term context
        assert info["balrog"]["long_term_context"] == feedback + twin_info["balrog"]["long_term_context"]
        assert feedback in obs["text"]
    else:
        assert obs["text"] == feedback + twin_obs["text"]
    obs, _, _, _, info = wrapped.step("turn left")  # a valid reply goes through untouched
    _, _, _, _, twin_info = twin.step("turn left")
    assert info["action"]["valid"] and info["state_key"] == twin_info["state_key"] and wrapped.unwrapped.elapsed_steps == 2
    assert "Your previous output" not in obs["text"]


def test_envs_without_a_default_action_keep_the_invalid_step() -> None:
    wrapped = BalrogActions(gym.make("rl4vlm/NumberLine-v0", action_format="balrog-naive", action_match="strict"))
    _, info = wrapped.reset(seed=3)
    key = info["state_key"]
    obs, reward, _, _, info = wrapped.step("plus")
    assert not info["action"]["valid"] and "played" not in info["action"] and info["state_key"] == key
    assert obs["text"].startswith("\n\nYour previous output did not contain a valid action. Nothing happened.\n\nObservation:\n")
    assert reward == wrapped.unwrapped.REWARDS[wrapped.unwrapped.reward_variant]["invalid"]


def test_feedback_goes_into_balrogs_long_term_text() -> None:
    scenario = SCENARIOS["naive-llm-2"]
    env = BalrogActions(ScriptedBalrogEnv(scenario))
    env.reset()
    obs, _, _, _, info = env.step("Go Forward")
    recorded = scenario["observations"][1]["text"]
    long = "\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\n" + recorded["long_term_context"]
    assert info["balrog"] == {**recorded, "long_term_context": long}
    assert obs["text"] == "\n".join(p for p in (recorded["short_term_context"], long) if p)


# The prompt without BALROG's text ------------------------------------------------------------------


def _obs(text: str, actions: tuple[str, ...] = BABYAI) -> dict:
    return {"image": np.full((8, 8, 3), len(text), np.uint8), "text": text, "mission": "go to the red ball", "actions": actions}


def test_envs_without_balrogs_text_get_its_layout_from_their_own_text() -> None:
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-cot", history=16, images=0))
    for t, reply in enumerate(["I see a wall. ACTION: turn left", "The ball is ahead. ACTION: go forward"]):
        builder.messages(_obs(f"view {t}"))
        builder.record(_obs(f"view {t}"), reply)
    messages = builder.messages(_obs("view now"))
    assert [m["content"][0]["text"] for m in messages[1:-1]] == [
        "Observation:\nview 0", "turn left", "Observation:\nview 1", "Previous plan:\nThe ball is ahead. ACTION: go forward"
    ]
    assert messages[0]["content"][0]["text"].startswith("You are an agent playing a game. Your goal is to go to the red ball.")
    current = messages[-1]["content"][0]["text"]
    assert current.startswith("Current Observation:\nview now\nAdmissible actions: turn left, turn right")  # no env instructions
    assert current.endswith("ACTION: <action>")


def test_the_builder_takes_info_from_messages_when_record_gets_none() -> None:
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-naive", history=16, images=0), instructions="PLAY!")
    obs, info = _obs("ours"), {"balrog": {"long_term_context": "theirs", "short_term_context": "inventory"}}
    assert builder.messages(obs, info)[-1]["content"][0]["text"].startswith("Current Observation:\ninventory\ntheirs\n\n")
    builder.record(obs, "turn left")
    assert builder.messages(_obs("next"))[1]["content"][0]["text"] == "Observation:\ntheirs"


def test_the_balrog_template_and_balrog_agents_go_together() -> None:
    with pytest.raises(ValueError, match="does not go with template 'balrog'"):
        PromptConfig(template="balrog", output_format="json")
    with pytest.raises(ValueError, match="does not go with template 'default'"):
        PromptConfig(template="default", output_format="balrog-cot")


# Sampling ------------------------------------------------------------------------------------------


def test_model_agents_take_balrogs_sampling_under_its_template() -> None:
    from rl4vlm_gym.agents.openai_api import OpenAIAgent

    balrog = PromptConfig(template="balrog", output_format="balrog-naive", history=16, images=0)
    agent = OpenAIAgent("m", prompt=balrog)
    assert agent.settings == {"max_tokens": 8192, "temperature": 1.0, "seed": None}
    assert OpenAIAgent("m").settings == {"max_tokens": 256, "temperature": 0.0, "seed": 0}  # other templates: as before
    assert OpenAIAgent("m", prompt=balrog, temperature=0.0).settings["temperature"] == 0.0  # an explicit choice wins
    spec = AgentSpec("openai", {"model": "m", "max_tokens": 100}).for_prompt(balrog)
    assert spec.kwargs == {"model": "m", "max_tokens": 100, "temperature": 1.0, "seed": None}  # written into run.json
    assert AgentSpec("openai", {"model": "m"}).for_prompt(PromptConfig()).kwargs == {"model": "m"}
    assert AgentSpec("random").for_prompt(balrog).kwargs == {}
    from rl4vlm_gym.agents.hf import HFAgent

    assert HFAgent.protocol_defaults(balrog) == {"temperature": 1.0, "max_new_tokens": 8192}
    recorded = SCENARIOS["naive-llm-1"]["steps_recorded"][0]["request"]
    assert (recorded["temperature"], recorded["max_tokens"]) == (1.0, 8192)


# Few-shot ------------------------------------------------------------------------------------------


@pytest.mark.extra("balrog")
def test_the_few_shot_agent_shows_the_oracles_demonstration_on_a_training_seed() -> None:
    from rl4vlm_gym.agents.demos import DEMO_SEEDS, DemoError, oracle_demos

    env = make_task_env(load_suite("balrog-smoke").task("babyai-goto"), PromptConfig(template="balrog", output_format="balrog-few-shot"))
    demos = oracle_demos(env)
    assert [d.source for d in demos] == [f"balrog/BabyAI-GoTo-v0 oracle, seed {s}" for s in DEMO_SEEDS]
    twin = gym.make("balrog/BabyAI-GoTo-v0")
    obs, info = twin.reset(seed=DEMO_SEEDS[0])
    assert demos[0].observations[0] == info.get("balrog", {}).get("long_term_context", obs["text"])
    assert len(demos[0].actions) == twin.unwrapped.optimal_steps  # the oracle solves it
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-few-shot", history=16, images=0), instructions="Go. PLAY!", demos=demos)
    messages = builder.messages(_obs("somewhere else"))
    assert messages[0]["content"][0]["text"] == "Go. First, observe the demonstrations provided and learn from them!!"
    assert messages[1]["content"][0]["text"] == "****** START OF DEMONSTRATION EPISODE 1 ******"
    assert messages[2]["content"][0]["text"] == "Obesrvation:\n" + demos[0].observations[0]
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-few-shot", history=16, images=0), instructions="PLAY!", demos=demos)
    messages = builder.messages(_obs(demos[0].observations[0]))  # the episode is the demonstration's: the next one
    assert messages[2]["content"][0]["text"] == "Obesrvation:\n" + demos[1].observations[0]
    with pytest.raises(DemoError, match="has no oracle"):
        oracle_demos(gym.make("balrog/Crafter-v0"))


# Suites, summary and result layout -----------------------------------------------------------------


BALROG_ENVS = {"babyai", "babaisai", "textworld", "crafter", "nle", "minihack"}
BALROG_EPISODES = {"babyai": 10, "babaisai": 3, "textworld": 10, "crafter": 10, "nle": 5, "minihack": 5}  # config.yaml


@pytest.mark.parametrize(("name", "images"), [("balrog", 0), ("balrog-vlm", 1)])
def test_the_balrog_suites_play_balrogs_58_tasks_with_its_protocol(name: str, images: int) -> None:
    suite = load_suite(name)
    assert suite.prompt == PromptConfig(template="balrog", output_format="balrog-naive", history=16, images=images)
    played = {env_card(t.env).benchmark: t for t in suite.tasks}
    assert len(played) == len(suite.tasks) == 58  # every BALROG task once: 5 + 40 + 3 + 1 + 1 + 8
    assert {env for env, _ in played} == BALROG_ENVS
    assert sum(env == "babaisai" for env, _ in played) == 40 and sum(env == "minihack" for env, _ in played) == 8
    assert {("minihack", "MiniHack-Boxoban-Hard-v0"), ("minihack", "MiniHack-Boxoban-Medium-v0")} <= set(played)
    for (env, _), task in played.items():
        assert len(task.seeds) == BALROG_EPISODES[env], task.name
        assert task.max_steps == env_card(task.env).max_episode_steps, task.name  # the env's own limit, as BALROG
        assert task.wrappers == ("balrog-actions",)
        assert task.obs_mode == ("image+text" if images and env != "textworld" else "text")  # BALROG: no TextWorld image
    budgets = {env: t.max_steps for (env, _), t in played.items()}
    assert budgets["nle"] == 100_000 and budgets["minihack"] == 100 and budgets["crafter"] == 2000 and budgets["babaisai"] == 100
    text = "vlm" if images else "hybrid"  # BALROG's NetHack / MiniHack text differs between its modes
    assert all(t.kwargs == {"text_format": text} for (env, _), t in played.items() if env in ("nle", "minihack"))
    assert all(t.kwargs == {"free_commands": True} for (env, _), t in played.items() if env == "textworld")
    smoke = load_suite("balrog-smoke")
    assert {t.name for t in smoke.tasks} == {t.name for t in suite.tasks} and all(len(t.seeds) == 1 for t in smoke.tasks)


def test_the_balrog_suites_are_what_their_script_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # scripts/make_balrog_suites.py writes them from the registry's cards: a card added or changed
    # without re-running it fails here.
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_balrog_suites.py"
    spec = importlib.util.spec_from_file_location("make_balrog_suites", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "SUITES", tmp_path)
    monkeypatch.setattr(module, "load_suite", lambda path: None)
    module.main()
    for name in ("balrog", "balrog-vlm", "balrog-smoke"):
        assert (tmp_path / f"{name}.yaml").read_text() == (SUITES_DIR / f"{name}.yaml").read_text(), name


@pytest.mark.extra("balrog")
def test_the_env_parses_replies_as_the_prompts_agent_writes_them() -> None:
    task = load_suite("balrog-smoke").task("babyai-goto")
    env = make_task_env(task, PromptConfig(template="balrog", output_format="balrog-robust-cot"))
    assert env.unwrapped.parser == ActionParser(format="balrog-robust-cot", match="strict")
    assert isinstance(env, BalrogActions)
    assert make_task_env(task).unwrapped.parser.format == "auto"  # no prompt, the env's own defaults


def _record(task: str, seed: int, progress: float, error: str | None = None, steps: int = 3) -> dict:
    return {"task": task, "seed": seed, "progress": progress, "error": error, "num_steps": steps, "input_tokens": 0, "output_tokens": 0}


def test_balrog_summary_pools_an_envs_tasks_and_counts_failed_episodes() -> None:
    benchmark = {"a": ("babyai", "t/a"), "b": ("babyai", "t/b"), "c": ("crafter", "default")}
    records = [_record("a", 1, 1.0), _record("a", 2, 0.0), _record("b", 3, 1.0, error="env raised"), _record("c", 4, 0.25), _record("x", 5, 1.0)]
    summary = balrog_summary(records, benchmark)
    babyai = summary["envs"]["babyai"]
    assert babyai["progression_percentage"] == pytest.approx(100 / 3)  # the failed episode counts as 0, not dropped
    assert babyai["standard_error"] == balrog_progression([1.0, 0.0, 0.0])["standard_error"]
    assert babyai["episodes_played"] == 3 and babyai["episodes_failed"] == 1
    assert babyai["tasks"]["t/b"]["progression_percentage"] == 0.0
    assert 0.0 <= babyai["ci95"][0] <= babyai["progression_percentage"] <= babyai["ci95"][1] <= 100.0
    assert set(summary["envs"]) == {"babyai", "crafter"}  # task x names no BALROG task
    assert summary["average_progress"] == pytest.approx((100 / 3 + 25) / 2)


@pytest.mark.extra("balrog", "nethack")
@pytest.mark.slow  # ~7 s
def test_a_balrog_smoke_run_gives_balrogs_figures_and_layout(tmp_path: Path) -> None:
    from rl4vlm_gym.harness.balrog_results import write_balrog_results

    suite = load_suite("balrog-smoke")
    # Without decision facts: BALROG's figures and files never read them, and asking BabaIsAI's and BabyAI's
    # searches at every step tripled this run (7 -> 22 s). The facts' recording is the runner's, the same for
    # every env (tests/harness/test_decisions*.py); the facts themselves are the kit's `decisions` check's.
    records = run_suite(suite, AgentSpec("random"), tmp_path / "run", decisions=False)
    summary = write_summary(tmp_path / "run", suite, records)
    balrog = summary["balrog"]
    assert set(balrog["envs"]) == BALROG_ENVS  # BALROG's average is over its six envs
    envs = balrog["envs"]
    assert envs["babyai"]["episodes_played"] == 5 and envs["minihack"]["episodes_played"] == 8 and envs["textworld"]["episodes_played"] == 3
    assert envs["babaisai"]["episodes_played"] == 40
    pooled = [r["progress"] for r in records if r["env_id"].startswith("balrog/BabyAI")]
    assert balrog["envs"]["babyai"]["progression_percentage"] == pytest.approx(balrog_progression(pooled)["progression_percentage"])
    overall = write_balrog_results(tmp_path / "run", tmp_path / "out")
    assert overall["average_progress"] == pytest.approx(balrog["average_progress"])
    episode = json.loads((tmp_path / "out/babyai/BabyAI-MixedTrainLocal-v0/goto/goto_run_00.json").read_text())
    goto = next(r for r in records if r["task"] == "babyai-goto")
    assert episode["seed"] == goto["seed"] and episode["num_steps"] == goto["num_steps"] and episode["progression"] == goto["progress"]
    assert sum(episode["action_frequency"].values()) == goto["num_steps"]
    rows = list(csv.reader((tmp_path / "out/babyai/BabyAI-MixedTrainLocal-v0/goto/goto_run_00.csv").open()))
    assert rows[0] == ["Step", "Action", "Reasoning", "Observation", "Reward", "Done"] and len(rows) == goto["num_steps"] + 1
    assert (tmp_path / "out/crafter/default/default_run_00.json").exists()
    assert json.loads((tmp_path / "out/crafter/crafter_summary.json").read_text())["episodes_played"] == 1
    assert (tmp_path / "out/nle/NetHackChallenge-v0/NetHackChallenge-v0_run_00.json").exists()
    assert (tmp_path / "out/minihack/MiniHack-MazeWalk-9x9-v0/MiniHack-MazeWalk-9x9-v0_run_00.json").exists()
    assert (tmp_path / "out/textworld/coin_collector/coin_collector_run_00.json").exists()


@pytest.mark.parametrize(
    ("agent", "kept"),
    [("balrog-naive", ""), ("balrog-few-shot", ""), ("balrog-robust-naive", ""), ("balrog-cot", "think\nACTION: go"), ("balrog-robust-cot", "think\nACTION: go")],
)
def test_balrogs_csv_reasoning_is_the_cot_agents_stripped_completion(agent: str, kept: str) -> None:
    # BALROG's evaluator writes response.reasoning: the CoT agents set it to the completion (which
    # its client stripped); the OpenAI client's None is an empty cell for the others.
    from rl4vlm_gym.harness.balrog_results import _reasoning

    assert _reasoning(PromptConfig(template="balrog", output_format=agent), "  think\nACTION: go \n") == kept
