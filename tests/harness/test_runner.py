"""The runner: eval through the CLI, resume after an interruption or a kill, failed agents and
workers, corrupted logs, and the metrics it reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from typer.testing import CliRunner

from rl4vlm_gym.cli import app
from rl4vlm_gym.harness.metrics import compare, episode_scores, summarize
from rl4vlm_gym.harness.runner import AgentSpec, RunError, load_episodes, run_suite, write_summary
from rl4vlm_gym.harness.suite import Suite, load_suite

SMALL = {
    "name": "small",
    "axis": "smoke",
    "max_steps": 8,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 0, "obs_mode": "text", "seeds": [11, 12, 13, 14]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "obs_mode": "text", "seeds": [21, 22, 23]},
        {"name": "ez", "env": "rl4vlm/EZPoints-v0", "obs_mode": "text", "seeds": [31, 32, 33]},
    ],
}

# Agents for the failure tests, importable in spawned workers and subprocesses via PYTHONPATH.
AGENTS_MODULE = textwrap.dedent(
    """
    import os, time
    from rl4vlm_gym.agents.simple import RandomAgent

    class Raising(RandomAgent):
        def act(self, obs, index=0):
            if self.seed_now % 2:
                raise ValueError("model overloaded")
            return super().act(obs, index)
        def begin(self, env, seed, index=0):
            self.seed_now = seed
            super().begin(env, seed, index)

    class NotAString(RandomAgent):
        def act(self, obs, index=0):
            return 42

    class DiesOnSeed12(RandomAgent):
        def begin(self, env, seed, index=0):
            if seed == 12:
                os._exit(3)
            super().begin(env, seed, index)

    class Slow(RandomAgent):
        def act(self, obs, index=0):
            time.sleep(0.03)
            return super().act(obs, index)
    """
)


@pytest.fixture
def agents_module(tmp_path, monkeypatch):
    folder = tmp_path / "agentsmod"
    folder.mkdir()
    (folder / "fake_agents.py").write_text(AGENTS_MODULE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    return folder


def _scores(summary):
    return {k: v for k, v in summary.items() if k != "timing"}


@pytest.mark.extra("nav", "games", "eval")  # the smoke suite has a MiniWorld task and a game; the report has plots
def test_eval_cli_smoke_suite_with_oracle_and_random(tmp_path):
    runner = CliRunner()
    results = {}
    for agent in ("oracle", "random"):
        out = tmp_path / agent
        result = runner.invoke(app, ["eval", "--agent", agent, "--suite", "smoke", "--out", str(out), "--no-progress"])
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] and summary["overall"]["episodes"] == len(load_suite("smoke").episodes)
        assert (out / "report.md").exists() and (out / "report.html").exists()
        results[agent] = summary
    oracle, rand = results["oracle"]["overall"], results["random"]["overall"]
    assert oracle["failed_episodes"] == rand["failed_episodes"] == 0
    # The oracle solves every deterministic task in its optimal number of steps (a game has no step count:
    # it wins against the random opponent on these seeds).
    for name, task in results["oracle"]["tasks"].items():
        if name == "tictactoe":
            assert task["success"]["mean"] == 1.0 and task["normalised_steps"] is None, name
        elif name != "blackjack":
            assert task["success"]["mean"] == 1.0 and task["normalised_steps"]["mean"] == 1.0, name
    assert oracle["success"]["mean"] > rand["success"]["mean"]
    # Every decision of the oracle is optimal, wherever its env scores it (issue 38).
    for name, task in results["oracle"]["decisions"]["tasks"].items():
        assert task["accuracy"] is None or (task["accuracy"]["mean"] == 1.0 and task["errors"] == 0), name
        assert task["regret_steps"] is None or task["regret_steps"]["ci95"] == [0.0, 0.0], name
    assert "decisions: " in result.output or results["random"]["decisions"]["overall"]["scored_steps"] == 0


def test_recorded_optimal_steps_are_asked_for_when_reset_leaves_them_out():
    import gymnasium as gym

    from rl4vlm_gym.agents import make_agent
    from rl4vlm_gym.core import NOT_COMPUTED
    from rl4vlm_gym.envs.cards.numberline import NumberLine
    from rl4vlm_gym.harness.runner import play_episode

    class Planned(NumberLine):
        EXPENSIVE_PLAN = True  # as MiniWorld and ALFWorld: reset reports NOT_COMPUTED

    task = Suite.from_dict(SMALL).tasks[0]
    env = gym.wrappers.PassiveEnvChecker(Planned(level=0, obs_mode="text"))
    assert env.reset(seed=11)[1]["optimal_steps"] == NOT_COMPUTED
    eager = NumberLine(level=0, obs_mode="text").reset(seed=11)[1]["optimal_steps"]
    record = play_episode(env, make_agent("oracle"), task, 11)
    assert eager > 0 and record["optimal_steps"] == record["num_steps"] == eager and record["success"]


def test_bad_cli_input_is_named(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--agent", "psychic", "--suite", "smoke", "--out", str(tmp_path / "x"), "--no-progress"])
    assert result.exit_code == 2 and "unknown agent 'psychic'" in result.output
    result = runner.invoke(app, ["eval", "--agent", "random", "--suite", "nope", "--no-progress"])
    assert result.exit_code == 2 and "no suite 'nope'" in result.output
    result = runner.invoke(app, ["eval", "--agent", "random", "-a", "seed", "--no-progress"])
    assert result.exit_code == 2 and "expected KEY=VALUE" in result.output


def test_interrupted_run_resumes_to_the_same_summary(tmp_path):
    suite = Suite.from_dict(SMALL)
    full = run_suite(suite, AgentSpec("random", {"seed": 5}), tmp_path / "full")
    expected = _scores(write_summary(tmp_path / "full", suite, full))

    class Interrupt(Exception):
        pass

    def stop_after_4(record, done, total):
        if done == 4:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_suite(suite, AgentSpec("random", {"seed": 5}), tmp_path / "cut", on_episode=stop_after_4)
    assert len(load_episodes(tmp_path / "cut" / "episodes.jsonl")) == 4
    played = []
    resumed = run_suite(suite, AgentSpec("random", {"seed": 5}), tmp_path / "cut", on_episode=lambda r, d, t: played.append(d))
    assert played[4:] == list(range(5, 11))  # the 4 saved ones are reported, 6 more are played
    assert _scores(write_summary(tmp_path / "cut", suite, resumed)) == expected
    lines = (tmp_path / "cut" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == len(suite.episodes)  # nothing lost, nothing repeated


@pytest.mark.slow  # three CLI processes, one SIGKILLed (~6 s); the inner loop has the in-process cut above and the torn-line repair below
def test_killed_run_resumes_to_the_same_summary(tmp_path, agents_module):
    """SIGKILL the CLI half-way (a torn last line included), re-run it, compare with a clean run."""
    out = tmp_path / "killed"
    suite_file = tmp_path / "small.yaml"
    suite_file.write_text(json.dumps(SMALL))
    command = [sys.executable, "-m", "rl4vlm_gym.cli", "eval", "--agent", "fake_agents:Slow", "--suite", str(suite_file),
               "--out", str(out), "--no-progress", "--no-report"]  # fmt: skip
    clean = tmp_path / "clean"
    # The clean run goes alongside the killed one and its resumption (its own folder; the agent mostly sleeps).
    clean_run = subprocess.Popen(
        [*command[:-4], "--out", str(clean), "--no-progress", "--no-report"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        episodes = out / "episodes.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not episodes.exists() or episodes.read_text().count("\n") < 3):
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        done = episodes.read_text().count("\n")
        assert 3 <= done < len(Suite.from_dict(SMALL).episodes), "the run was not killed half-way"
        with episodes.open("a") as f:
            f.write('{"task": "nl", "seed": 1')  # a write torn by the kill
        subprocess.run(command, check=True, capture_output=True)
        _, err = clean_run.communicate(timeout=120)
        assert clean_run.returncode == 0, err[-2000:]
    finally:
        if clean_run.poll() is None:
            os.killpg(clean_run.pid, signal.SIGKILL)
            clean_run.wait()
    assert _scores(json.loads((out / "summary.json").read_text())) == _scores(json.loads((clean / "summary.json").read_text()))
    assert len(load_episodes(episodes)) == len(Suite.from_dict(SMALL).episodes)


def test_failing_agents_are_recorded_not_fatal(tmp_path, agents_module):
    suite = Suite.from_dict(SMALL)
    records = run_suite(suite, AgentSpec("fake_agents:Raising"), tmp_path / "raising")
    failed = [r for r in records if r["error"]]
    assert {r["seed"] for r in failed} == {s for _, s in suite.episodes if s % 2}
    assert all(r["error"] == "agent raised ValueError: model overloaded" and not r["success"] for r in failed)
    records = run_suite(suite, AgentSpec("fake_agents:NotAString"), tmp_path / "int")
    assert all(r["error"].startswith("agent returned int, not str") for r in records)
    summary = summarize(records)
    assert summary["overall"]["failed_episodes"] == len(records) and summary["overall"]["success"]["mean"] == 0


def test_agent_arguments_are_checked_before_the_run_folder_is_written(tmp_path):
    """A wrong agent argument is named before anything is written, so the corrected command starts
    afresh (it used to leave run.json behind, and the corrected run was refused as another agent's)."""
    suite = Suite.from_dict({**SMALL, "tasks": [{**SMALL["tasks"][0], "seeds": [11]}]})
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"agent 'oracle': got an unexpected keyword argument 'colour' \(it takes no arguments"):
        run_suite(suite, AgentSpec("oracle", {"colour": "red"}), out)
    assert not out.exists()
    pytest.importorskip("openai")
    with pytest.raises(ValueError, match="agent 'openai': missing a required argument: 'model' \\(it takes model, base_url"):
        run_suite(suite, AgentSpec("openai", {}), out)
    assert not out.exists()
    assert run_suite(suite, AgentSpec("oracle"), out)[0]["success"]


@pytest.mark.extra("eval", "webshop")  # the OpenAI-compatible agent; Flask serves the model when it is up
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])  # 2: spawned workers, 6 s
def test_an_unreachable_model_stops_the_run_which_resumes_once_it_answers(tmp_path, workers):
    """A model endpoint nobody listens on: the run stops with an error naming it and saves nothing as
    played (before, every episode was recorded failed and the run called complete); once a model
    answers, the same folder resumes."""
    import socket

    with socket.socket() as sock:  # a port nobody listens on: connections are refused at once
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    suite = Suite.from_dict({**SMALL, "max_steps": 3, "tasks": [{**SMALL["tasks"][0], "seeds": [11, 12, 13]}]})
    spec = AgentSpec("openai", {"model": "m", "base_url": f"http://127.0.0.1:{port}/v1", "max_retries": 0, "timeout": 5})
    out = tmp_path / "run"
    with pytest.raises(RunError, match=rf"cannot reach http://127.0.0.1:{port}/v1 .*run the same command again to resume"):
        run_suite(suite, spec, out, workers=workers)
    assert load_episodes(out / "episodes.jsonl") == []  # nothing recorded as played
    with pytest.raises(RunError, match="cannot reach"):  # still down: it stops again, never "complete"
        run_suite(suite, spec, out, workers=workers)

    import threading

    from flask import Flask
    from werkzeug.serving import make_server

    model = Flask("model")  # the model is up: an OpenAI-compatible endpoint answering "1" to everything
    reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "1"}}]}  # fmt: skip
    model.add_url_rule("/v1/chat/completions", "c", lambda: (reply, 200), methods=["POST"])
    server = make_server("127.0.0.1", port, model, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        records = run_suite(suite, spec, out, workers=workers)
    finally:
        server.shutdown()
        thread.join()
    assert len(records) == len(suite.episodes) and not any(r["error"] for r in records)
    assert records[0]["steps"][0]["raw"] == "1"


def test_two_workers_and_a_dying_worker(tmp_path, agents_module):
    suite = Suite.from_dict(SMALL)
    one = run_suite(suite, AgentSpec("random", {"seed": 1}), tmp_path / "one")
    two = run_suite(suite, AgentSpec("random", {"seed": 1}), tmp_path / "two", workers=2)
    strip = [{k: v for k, v in r.items() if k != "steps"} for r in one]
    assert strip == [{k: v for k, v in r.items() if k != "steps"} for r in two]
    assert [[s["raw"] for s in r["steps"]] for r in one] == [[s["raw"] for s in r["steps"]] for r in two]
    records = run_suite(suite, AgentSpec("fake_agents:DiesOnSeed12"), tmp_path / "dies", workers=2)
    assert len(records) == len(suite.episodes)
    dead = [r for r in records if r["error"]]
    assert [(r["task"], r["seed"]) for r in dead] == [("nl", 12)]
    assert "worker process died" in dead[0]["error"]


def test_resume_refuses_another_protocol_or_agent(tmp_path):
    suite = Suite.from_dict(SMALL)
    run_suite(suite, AgentSpec("random"), tmp_path / "run")
    with pytest.raises(RunError, match="another agent"):
        run_suite(suite, AgentSpec("oracle"), tmp_path / "run")
    other = Suite.from_dict({**SMALL, "max_steps": 9})
    with pytest.raises(RunError, match="another protocol hash"):
        run_suite(other, AgentSpec("random"), tmp_path / "run")


def test_corrupted_logs_are_named(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"task": "a", "seed": 1}\nnot json\n{"task": "a", "seed": 2}\n')
    with pytest.raises(RunError, match=r"episodes.jsonl:2: not valid JSON"):
        load_episodes(path, repair=True)
    path.write_text('{"task": "a", "seed": 1}\n[1, 2]\n')
    with pytest.raises(RunError, match=r":2: not an episode record"):
        load_episodes(path)
    path.write_text('{"task": "a", "seed": 1}\n{"task": "a", "se')
    assert len(load_episodes(path, repair=True)) == 1
    assert path.read_text() == '{"task": "a", "seed": 1}\n'


def test_metrics_by_hand():
    def record(task, seed, success, steps, optimal, invalid=0, progress=None):
        return {"task": task, "env_id": "e", "level": 0, "obs_mode": "text", "seed": seed, "success": success,
                "progress": float(success) if progress is None else progress, "num_steps": steps, "optimal_steps": optimal,
                "invalid_actions": invalid, "return": float(success), "input_tokens": 1, "output_tokens": 2, "error": None,
                "steps": []}  # fmt: skip

    assert episode_scores(record("a", 1, True, 8, 4))["normalised_steps"] == 0.5
    assert episode_scores(record("a", 1, True, 3, 4))["normalised_steps"] == 1.0  # taken < optimal cannot beat 1
    assert episode_scores(record("a", 1, False, 3, 4))["normalised_steps"] == 0.0
    assert episode_scores(record("a", 1, True, 3, -1))["normalised_steps"] is None
    records = [record("a", 1, True, 4, 4), record("a", 2, False, 10, 4, invalid=5), record("b", 1, True, 2, -1)]
    summary = summarize(records)
    assert summary["tasks"]["a"]["success"]["mean"] == 0.5
    assert summary["tasks"]["a"]["invalid_action_rate"] == pytest.approx(5 / 14)
    assert summary["tasks"]["b"]["normalised_steps"] is None
    assert summary["overall"]["success"]["mean"] == 0.75  # the mean of task means
    lo, hi = summary["overall"]["success"]["ci95"]
    assert 0.5 <= lo <= 0.75 <= hi <= 1.0
    assert summary == summarize(list(reversed(records)))  # order-free and deterministic
    better = [record("a", 1, True, 4, 4), record("a", 2, True, 4, 4), record("b", 1, True, 2, -1)]
    paired = compare(better, records)
    assert paired["pairs"] == 3 and paired["success"]["wins"] == 1 and paired["success"]["ties"] == 2
    assert paired["success"]["mean"] == 0.25  # task a gains 0.5, task b 0
    assert compare(records, records)["success"]["ci95"] == [0.0, 0.0]
