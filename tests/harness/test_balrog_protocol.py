"""BALROG's protocol in the harness: its agents' reply parsing, the default action on an invalid
reply, its prompt, the balrog suites, BALROG's figures in the summary and its result layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.harness.metrics import balrog_progression, balrog_summary
from rl4vlm_gym.harness.runner import AgentSpec, make_task_env, run_suite, write_summary
from rl4vlm_gym.harness.suite import load_suite
from rl4vlm_gym.parsing import ActionParser, balrog_extract
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig
from rl4vlm_gym.wrappers import BalrogActions

BABYAI = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")


# Replies ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "reply", "action"),
    [
        ("balrog-naive", "go forward", "go forward"),
        ("balrog-naive", "go forward.", "go forward"),  # the filter deletes punctuation ...
        ("balrog-naive", "1. go forward", "go forward"),  # ... and digits
        ("balrog-naive", "Go forward", None),  # matching is case-sensitive
        ("balrog-naive", "go forwards", None),  # and exact
        ("balrog-cot", "The key is ahead. ACTION: pick up", "pick up"),
        ("balrog-cot", "ACTION: turn left. On second thought ACTION: toggle!", "toggle"),  # the last ACTION:
        ("balrog-cot", "pick up", "pick up"),  # no ACTION: at all, the whole (filtered) reply
        ("balrog-robust-naive", "I think <|ACTION|>drop<|END|> then more", "drop"),
        ("balrog-robust-naive", "drop", "drop"),  # no tags: the whole reply
        ("balrog-robust-naive", "<|ACTION|>drop", None),  # an unclosed tag: the whole reply, not an action
        ("balrog-robust-cot", "thinking... <|ACTION|>toggle<|END|>", "toggle"),
        ("balrog-robust-cot", "toggle", None),  # no tags: invalid
    ],
)
def test_balrog_agents_read_replies_as_balrog_does(agent: str, reply: str, action: str | None) -> None:
    assert ActionParser(format=agent, match="strict").parse(reply, BABYAI).parsed == action  # type: ignore[arg-type]


@pytest.mark.parametrize("agent", ["balrog-naive", "balrog-cot", "balrog-robust-naive", "balrog-robust-cot"])
def test_an_action_written_in_an_agents_format_reads_back(agent: str) -> None:
    parser = ActionParser(format=agent, match="strict")  # type: ignore[arg-type]
    for action in BABYAI:
        assert parser.parse(parser.format_action(action, thoughts="the ball is left"), BABYAI).parsed == action


def test_balrog_extract_keeps_what_the_agent_took() -> None:
    assert balrog_extract("balrog-naive", "go forward!!") == "go forward"
    assert balrog_extract("balrog-robust-cot", "no tags") is None


# The default action ------------------------------------------------------------------------------


@pytest.mark.extra("balrog")
def test_an_invalid_reply_plays_the_default_action_and_says_so() -> None:
    wrapped = BalrogActions(gym.make("balrog/BabyAI-GoTo-v0", action_format="balrog-naive", action_match="strict"))
    twin = gym.make("balrog/BabyAI-GoTo-v0")
    wrapped.reset(seed=5)
    twin.reset(seed=5)
    obs, _, _, _, info = wrapped.step("Go Forward")  # wrong case: not an action in BALROG
    _, _, _, _, twin_info = twin.step("go forward")
    assert info["state_key"] == twin_info["state_key"]  # the default action was played, once
    assert wrapped.unwrapped.elapsed_steps == 1
    assert info["action"]["valid"] is False and info["action"]["played"] == "go forward" and info["action"]["raw"] == "Go Forward"
    assert obs["text"].startswith("Your previous output did not contain a valid action. Defaulted to action: go forward\n")
    obs, _, _, _, info = wrapped.step("turn left")  # a valid reply goes through untouched
    _, _, _, _, twin_info = twin.step("turn left")
    assert info["action"]["valid"] and info["state_key"] == twin_info["state_key"] and wrapped.unwrapped.elapsed_steps == 2
    assert not obs["text"].startswith("Your previous output")


def test_envs_without_a_default_action_keep_the_invalid_step() -> None:
    wrapped = BalrogActions(gym.make("rl4vlm/NumberLine-v0", action_format="balrog-naive", action_match="strict"))
    _, info = wrapped.reset(seed=3)
    key = info["state_key"]
    obs, reward, _, _, info = wrapped.step("plus")
    assert not info["action"]["valid"] and "played" not in info["action"] and info["state_key"] == key
    assert obs["text"].startswith("Your previous output did not contain a valid action. Nothing happened.")
    assert reward == wrapped.unwrapped.REWARDS[wrapped.unwrapped.reward_variant]["invalid"]


# The prompt --------------------------------------------------------------------------------------


def _obs(text: str, actions: tuple[str, ...] = BABYAI) -> dict:
    return {"image": np.full((8, 8, 3), len(text), np.uint8), "text": text, "mission": "go to the red ball", "actions": actions}


def test_the_prompt_opens_with_the_envs_instructions_and_keeps_16_observations() -> None:
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-naive", history=16, images=1), instructions="PLAY the game!")
    for t in range(20):
        builder.messages(_obs(f"view {t}"))
        builder.record(_obs(f"view {t}"), f"turn left {t}")
    messages = builder.messages(_obs("view now"))
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "PLAY the game!"}]}
    past = messages[1:-1]
    assert len(past) == 32 and [m["role"] for m in past] == ["user", "assistant"] * 16
    assert past[0]["content"][0]["text"] == "Observation:\nview 4"  # 20 steps played, the last 16 kept
    assert past[1]["content"][0]["text"] == "turn left "  # the action as the naive agent took it
    current = messages[-1]["content"]
    assert [p["type"] for p in current] == ["image", "text"]  # images=1: only the current observation's
    assert current[1]["text"].startswith("Current Observation:\nview now\nImage observation provided.\n\nYou always have to output")
    assert all(p["type"] == "text" for m in messages[:-1] for p in m["content"])


def test_the_newest_cot_answer_is_replayed_as_the_previous_plan() -> None:
    builder = PromptBuilder(PromptConfig(template="balrog", output_format="balrog-cot", history=16, images=0))
    for t, reply in enumerate(["I see a wall. ACTION: turn left", "The ball is ahead. ACTION: go forward"]):
        builder.messages(_obs(f"view {t}"))
        builder.record(_obs(f"view {t}"), reply)
    messages = builder.messages(_obs("view now"))
    answers = [m["content"][0]["text"] for m in messages if m["role"] == "assistant"]
    assert answers == ["turn left", "Previous plan:\nThe ball is ahead. ACTION: go forward"]
    assert messages[0]["content"][0]["text"].startswith("You are an agent playing a game. Your goal is to go to the red ball.")
    assert "Admissible actions: turn left, turn right" in messages[-1]["content"][0]["text"]  # no env instructions
    assert "ACTION: <action>" in messages[-1]["content"][0]["text"]


def test_the_balrog_template_and_balrog_agents_go_together() -> None:
    with pytest.raises(ValueError, match="does not go with template 'balrog'"):
        PromptConfig(template="balrog", output_format="json")
    with pytest.raises(ValueError, match="does not go with template 'default'"):
        PromptConfig(template="default", output_format="balrog-cot")


@pytest.mark.extra("balrog")
def test_babyai_and_crafter_give_balrogs_instructions() -> None:
    env = gym.make("balrog/BabyAI-Pickup-v0")
    obs, _ = env.reset(seed=1)
    text = env.unwrapped.instruction_prompt()
    assert text.startswith(f"You are an agent playing a simple navigation game. Your goal is to {obs['mission']}. ")
    assert "go forward: take one step forward" in text and text.endswith("PLAY!")
    assert env.unwrapped.DEFAULT_ACTION in obs["actions"]
    crafter = gym.make("balrog/Crafter-v0").unwrapped
    text = crafter.instruction_prompt()
    assert "Make Iron Sword: craft an iron sword" in text and "22. " in text and "23. " not in text
    assert crafter.DEFAULT_ACTION == "Noop"


# Suites, summary and result layout -----------------------------------------------------------------


def test_the_balrog_suites_load_with_balrogs_protocol() -> None:
    suite = load_suite("balrog")
    assert suite.prompt == PromptConfig(template="balrog", output_format="balrog-naive", history=16, images=1)
    counts = {t.name: len(t.seeds) for t in suite.tasks}
    babyai = ["babyai-goto", "babyai-pickup", "babyai-open", "babyai-putnext", "babyai-pick_up_seq_go_to"]
    minihack = ["minihack-corridor-r3", "minihack-corridorbattle-dark", "minihack-mazewalk-9x9", "minihack-mazewalk-15x15", "minihack-quest-easy", "minihack-quest-medium"]
    textworld = ["textworld-treasure_hunter", "textworld-the_cooking_game", "textworld-coin_collector"]
    assert counts == {**dict.fromkeys([*babyai, "crafter", *textworld], 10), **dict.fromkeys(["nle", *minihack], 5)}  # BALROG's episodes per task
    assert all(t.wrappers == ("balrog-actions",) for t in suite.tasks)
    budgets = {t.name: t.max_steps for t in suite.tasks}
    assert budgets["babyai-goto"] == 64 and budgets["babyai-open"] == 128 and budgets["crafter"] == 2000
    assert all(budgets[name] == 100 for name in minihack) and budgets["nle"] == 2000  # NetHack: not BALROG's 100,000
    assert all(t.kwargs == {"text_format": "vlm"} for t in suite.tasks if t.name in {"nle", *minihack})  # images: BALROG's VLM text
    assert all(budgets[name] == 80 and suite.task(name).kwargs == {"free_commands": True} for name in textworld)
    assert {t.name for t in load_suite("balrog-smoke").tasks} == set(counts)


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
@pytest.mark.slow  # ~15 s; a cold cache first makes three TextWorld games (~10-30 s)
def test_a_balrog_smoke_run_gives_balrogs_figures_and_layout(tmp_path: Path) -> None:
    from rl4vlm_gym.harness.balrog_results import write_balrog_results

    suite = load_suite("balrog-smoke")
    records = run_suite(suite, AgentSpec("random"), tmp_path / "run")
    summary = write_summary(tmp_path / "run", suite, records)
    balrog = summary["balrog"]
    assert set(balrog["envs"]) == {"babyai", "crafter", "minihack", "nle", "textworld"}
    envs = balrog["envs"]
    assert envs["babyai"]["episodes_played"] == 5 and envs["minihack"]["episodes_played"] == 6 and envs["textworld"]["episodes_played"] == 3
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
