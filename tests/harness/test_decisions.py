"""Decision-level metrics (issue 38): hand-worked episodes scored step by step, their summary with
intervals, the runner's recording of the facts, and the replay that rejects edited facts.

``Walk`` is a test env with a known solver: a line of cells 0..6, the agent at 2, the goal at 5;
``left`` from 0 falls into a pit (the episode ends, failed), ``jump`` is refused by the rules, and
``wait`` stays. Its decision facts are exact by construction.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from rl4vlm_gym.agents import Agent
from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.harness.decisions import decision_summary, episode_decisions, has_decisions, score_steps, steps_to_go_bucket
from rl4vlm_gym.harness.leaderboard import _replay_problem, validate_submission
from rl4vlm_gym.harness.runner import play_episode
from rl4vlm_gym.harness.suite import Task

OVER_WON = {"optimal_actions": None, "steps_to_go": 0, "values": None, "reason": "the episode is over", "features": None}
OVER_LOST = dict(OVER_WON, steps_to_go=-1)


def _facts(optimal: Sequence[str] | None, to_go: int = -1, values=None, reason=None, features=None) -> dict[str, Any]:
    return {"optimal_actions": None if optimal is None else list(optimal), "steps_to_go": to_go, "values": values,
            "reason": reason, "features": features}  # fmt: skip


def _step(parsed: str | None, facts: dict[str, Any], valid: bool = True) -> dict[str, Any]:
    return {"parsed": parsed, "valid": valid, "decision": facts}


def _record(steps, final, task="t", seed=0, success=True, terminated=True, truncated=False) -> dict[str, Any]:
    return {"task": task, "seed": seed, "steps": steps, "final_decision": final, "success": success, "terminated": terminated,
            "truncated": truncated}  # fmt: skip


# A deterministic episode worked by hand (Walk's, below): steps to go 3, 2, 3, 3, 2, 2, 1, then solved.
# step 1 right (optimal, regret 0); 2 left (error, 2 -> 3: regret 2); 3 jump (invalid: error, regret 1);
# 4 right (optimal, after an invalid step); 5 wait (error, 2 -> 2: regret 1); 6, 7 right (optimal) and won.
HAND = _record(
    [
        _step("right", _facts(["right"], 3, features={"side": "far"})),
        _step("left", _facts(["right"], 2, features={"side": "near"})),
        _step(None, _facts(["right"], 3, features={"side": "far"}), valid=False),
        _step("right", _facts(["right"], 3, features={"side": "far"})),
        _step("wait", _facts(["right"], 2, features={"side": "near"})),
        _step("right", _facts(["right"], 2, features={"side": "near"})),
        _step("right", _facts(["right"], 1, features={"side": "near"})),
    ],
    OVER_WON,
)


def test_a_deterministic_episode_by_hand():
    scores = score_steps(HAND)
    assert [s.optimal for s in scores] == [True, False, False, True, False, True, True]
    # regret 1 + after - before: 1+2-3, 1+3-2, invalid 1, 1+2-3, 1+2-2, 1+1-2, 1+0-1
    assert [s.regret_steps for s in scores] == [0, 2, 1, 0, 1, 0, 0]
    assert [s.features["side"] for s in scores] == ["far", "near", "far", "far", "near", "near", "near"]
    assert [s.features["after_invalid"] for s in scores] == ["no", "no", "no", "yes", "no", "no", "no"]
    assert [s.features["after_error"] for s in scores] == ["no", "no", "yes", "yes", "no", "yes", "no"]
    assert [s.features["episode_third"] for s in scores] == ["first", "first", "first", "second", "second", "last", "last"]
    assert [s.features["steps_to_go"] for s in scores] == ["3-4", "2", "3-4", "3-4", "2", "2", "1"]
    e = episode_decisions(HAND)
    assert (e.scored, e.optimal, e.scored_valid, e.invalid_scored) == (7, 4, 6, 1)
    assert e.accuracy() == 4 / 7
    assert (e.regret_steps, e.regret_known, e.first_error, e.with_error, e.lost) == (4, 7, 2, 1, 0)
    # Recovery: the error at step 2 (2 to go) is recovered at the state before step 7 (1 to go): 5 steps;
    # step 3's (3 to go) before step 5 (2 to go): 2 steps; step 5's (2 to go) before step 7: 2 steps.
    assert (e.recoverable, e.recovered, e.recovery_steps) == (3, 3, 9)


def test_regret_sums_to_the_extra_steps_of_a_won_episode():
    """With facts consistent along the path, the regrets of a won episode add up to its steps over the optimum."""
    to_go = [3, 2, 3, 3, 2, 1]  # right, left, jump, right, right, right
    actions = ["right", "left", None, "right", "right", "right"]
    steps = [_step(a, _facts(["right"], s), valid=a is not None) for a, s in zip(actions, to_go, strict=True)]
    e = episode_decisions(_record(steps, OVER_WON))
    assert e.regret_steps == len(steps) - to_go[0] == 3
    assert (e.recovered, e.recovery_steps) == (2, 4 + 2)  # left at 2 to go: back below 2 at step 6; jump at 3: at step 5


def test_lost_truncated_and_unscored_steps():
    # Step 2 walks into the pit: the env ends the episode, failed; the move is lost, not summed, never recovered.
    pit = _record([_step("left", _facts(["right"], 2)), _step("left", _facts(["right"], 3))], OVER_LOST, success=False)
    s = score_steps(pit)
    assert [x.regret_steps for x in s] == [2, None] and [x.lost for x in s] == [False, True]
    e = episode_decisions(pit)
    assert (e.lost, e.lost_step, e.regret_known, e.recoverable, e.recovered, e.tracked) == (1, 2, 1, 2, 0, 1)
    # A state the solver calls unsolvable mid-episode is lost too.
    stuck = _record([_step("push", _facts(["left"], 4)), _step("left", _facts(None, -1, reason="unsolvable from here"))],
                    OVER_LOST, success=False, terminated=False, truncated=True)  # fmt: skip
    s = score_steps(stuck)
    assert s[0].lost and not s[1].scored and s[1].reason == "unsolvable from here"
    # An invalid step that spends the last spare step of the env's budget loses the game too.
    spent = _record([_step(None, _facts(["right"], 2), valid=False), _step("right", _facts(None, reason="unsolvable from here: 2 to go, 1 left"))],
                    OVER_LOST, success=False, terminated=False, truncated=True)  # fmt: skip
    assert [(x.regret_steps, x.lost) for x in score_steps(spent)] == [(None, True), (None, False)]
    # Cut by the step budget: the last move's regret is unknown, not lost.
    cut = _record([_step("right", _facts(["right"], 3)), _step("left", _facts(["right"], 2))], OVER_LOST, success=False,
                  terminated=False, truncated=True)  # fmt: skip
    assert [(x.regret_steps, x.lost) for x in score_steps(cut)] == [(0, False), (None, False)]
    # No solver: unscored, counted by reason; nothing tracked.
    none = _record([_step("a", _facts(None, reason="no solver: x"))] * 2, OVER_WON)
    e = episode_decisions(none)
    assert (e.scored, e.tracked, dict(e.unscored), e.accuracy()) == (0, 0, {"no solver: x": 2}, None)
    assert not has_decisions([{"steps": [{"parsed": "a"}]}]) and has_decisions([none])
    # An episode without a step (the agent failed at once) has its final facts and nothing to score.
    assert score_steps(_record([], OVER_WON)) == [] and episode_decisions(_record([], OVER_WON)).scored == 0
    assert decision_summary([none, _record([], OVER_LOST, seed=1)])["tasks"]["t"]["steps"] == 2
    # A refused move is never optimal, whatever a (forged) log lists.
    refused = score_steps(_record([_step("right", _facts(["right"], 3), valid=False)], _facts(["right"], 3), success=False, terminated=False))
    assert (refused[0].optimal, refused[0].regret_steps) == (False, 1)


def test_a_game_of_chance_scores_expected_value():
    values = {"hit": 0.25, "stand": -0.5, "double": 0.25}
    game = _record(
        [_step("stand", _facts(["hit", "double"], values=values)), _step("double", _facts(["hit", "double"], values=values)),
         _step(None, _facts(["hit"], values={"hit": 0.1, "stand": 0.0}), valid=False)],
        OVER_LOST, success=False,
    )  # fmt: skip
    s = score_steps(game)
    assert [x.regret_value for x in s] == [0.75, 0.0, None]  # an invalid step has no action value
    assert [x.regret_steps for x in s] == [None, None, None]
    e = episode_decisions(game)
    assert (e.optimal, e.scored, e.regret_value, e.value_steps, e.recoverable, e.tracked) == (1, 3, 0.75, 2, 0, 0)
    assert s[0].features["steps_to_go"] == "unknown"


def test_a_free_text_move_is_optimal_when_the_steps_to_go_drop_by_one():
    """WebShop's facts name the oracle's query; another query that is as good (one step fewer to go) is optimal too."""
    own = [_step("search[red shoes size 9]", _facts(["search[red shoes, size 9]"], 3)), _step("click[b01]", _facts(["click[b01]"], 2))]
    assert [s.optimal for s in score_steps(_record(own, OVER_WON, success=False, terminated=False))] == [True, True]
    worse = [_step("search[shoes]", _facts(["search[red shoes, size 9]"], 3)), _step("next >", _facts(["click[b01]"], 3))]
    assert [s.optimal for s in score_steps(_record(worse, OVER_LOST, success=False, terminated=False))] == [False, False]
    other = [_step("click[b02]", _facts(["search[x]"], 3)), _step("back", _facts(["back"], 2))]  # another template: as before
    assert score_steps(_record(other, OVER_LOST, success=False, terminated=False))[0].optimal is False


def test_family_features_and_buckets():
    assert [steps_to_go_bucket(n) for n in (None, -1, 0, 1, 2, 3, 4, 5, 8, 9, 16, 17)] == [
        "unknown", "unknown", "0", "1", "2", "3-4", "3-4", "5-8", "5-8", "9-16", "9-16", "17-32"]  # fmt: skip
    clash = _record([_step("a", _facts(["a"], 1, features={"steps_to_go": 9, "boxes": 2}))], OVER_WON)
    assert score_steps(clash)[0].features == {"env.steps_to_go": "9", "boxes": "2", "steps_to_go": "1", "after_invalid": "no", "after_error": "no",
                                              "episode_third": "first"}  # fmt: skip


def test_decision_summary_with_intervals():
    won = _record([_step("a", _facts(["a"], 2)), _step("a", _facts(["a"], 1))], OVER_WON, seed=1)
    errs = _record([_step("b", _facts(["a"], 2)), _step("a", _facts(["a"], 2)), _step("a", _facts(["a"], 1))], OVER_WON, seed=2)
    other = [_record([_step("x", _facts(["y"], 5))], OVER_LOST, task="u", success=False, terminated=True)]
    nothing = [_record([_step("x", _facts(None, reason="no solver: nothing here")), _step("x", _facts(None, reason="no solver: nor here"))],
                       OVER_WON, task="v")]  # fmt: skip
    summary = decision_summary([won, errs, *other, *nothing], ["t", "u", "v"])
    t = summary["tasks"]["t"]
    assert t["accuracy"]["mean"] == pytest.approx(4 / 5)  # pooled over the task's decisions, not a mean of episodes
    assert t["regret_steps"]["mean"] == pytest.approx(1 / 5)
    assert t["first_error"]["mean"] == 1 and t["recovery"]["mean"] == 1 and t["steps_to_recover"]["mean"] == 2
    lo, hi = t["accuracy"]["ci95"]
    assert 2 / 3 <= lo <= 0.8 <= hi <= 1.0  # resamples of whole episodes: 2/3, 4/5 or 1
    assert t["lost"]["mean"] == 0 and summary["tasks"]["u"]["lost"]["mean"] == 1
    assert summary["tasks"]["u"]["regret_value"] is None and summary["tasks"]["v"]["accuracy"] is None
    assert summary["tasks"]["v"]["unscored"] == {"no solver": 2}  # reasons by their head
    assert t["by_feature"]["steps_to_go"] == {"2": [3, 1], "1": [2, 0]}
    overall = summary["overall"]
    assert overall["accuracy"]["mean"] == pytest.approx((0.8 + 0.0) / 2)  # tasks weigh the same; v has no scored step
    assert (overall["scored_steps"], overall["errors"], overall["lost_episodes"]) == (6, 2, 1)
    assert summary == decision_summary([nothing[0], errs, other[0], won], ["t", "u", "v"])  # order-free, deterministic


# -- the runner records the facts; the replay checks them --------------------------------------------


class Walk(VLMEnv):
    LEVELS = ("one line",)
    REWARDS = {"default": {"move": 0.0, "goal": 1.0, "pit": -1.0, "invalid": -0.1}}
    GOAL = 5

    def _new_episode(self, config):
        self.at = 2

    def _actions(self):
        return ("left", "right", "wait", "jump")

    def _apply(self, action):
        if action == "jump":
            return StepOutcome("invalid", error="you cannot jump here")
        self.at += {"left": -1, "right": 1, "wait": 0}[action]
        if self.at < 0:
            return StepOutcome("pit", terminated=True)
        return StepOutcome("goal", terminated=True) if self.at == self.GOAL else StepOutcome("move")

    def _describe(self):
        return f"At {self.at}."

    def _mission(self):
        return "Walk to 5."

    def _render(self):
        return np.zeros((*self.image_size, 3), np.uint8)

    def _state_key(self):
        return str(self.at)

    def _success(self):
        return self.at == self.GOAL

    def _progress(self):
        return float(self._success())

    def _optimal_steps(self):
        return self.GOAL - 2

    def oracle_action(self):
        return "right"

    def _decision(self):
        return Decision(("right",), self.GOAL - self.at, features={"side": "near" if self.at >= 3 else "far"})


class BrokenWalk(Walk):
    def _decision(self):
        if self.at == 3:
            raise ZeroDivisionError("the solver broke")
        return super()._decision()


class _Outputs(Agent):
    def __init__(self, outputs: Sequence[str]) -> None:
        super().__init__()
        self.outputs = itertools.cycle(outputs)

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        return next(self.outputs)


TASK = Task(name="walk", env="test/Walk-v0", obs_mode="text", seeds=(0,))


def _play(env_class=Walk, outputs=("right", "left", "jump", "right", "wait", "right", "right", "right"), decisions=True):
    env = env_class(obs_mode="text")
    try:
        return play_episode(env, _Outputs(outputs), TASK, 0, decisions=decisions)
    finally:
        env.close()


class CountingWalk(Walk):
    asked = 0

    def _decision(self):
        CountingWalk.asked += 1
        return super()._decision()


def test_a_run_may_record_no_facts_and_its_replay_asks_for_none():
    """--no-decisions (slow planners): no facts in the log, and replaying it does not ask the solver."""
    bare = _play(CountingWalk, decisions=False)
    assert CountingWalk.asked == 0 and not has_decisions([bare]) and "final_decision" not in bare
    def untimed(record, drop=()):
        return {**{k: v for k, v in record.items() if k not in drop},
                "steps": [{k: v for k, v in s.items() if k not in ("agent_ms", "env_ms", *drop)} for s in record["steps"]]}  # fmt: skip

    assert untimed(bare) == untimed(_play(), drop=("decision", "final_decision"))  # the same record, less the facts
    env = CountingWalk(obs_mode="text")
    try:
        assert _replay_problem(env, TASK, bare) is None and CountingWalk.asked == 0
        assert _replay_problem(env, TASK, _play()) is None and CountingWalk.asked == 7  # before each step (the end needs no solver)
    finally:
        env.close()


def test_the_runner_records_the_facts_before_each_step():
    record = _play()
    assert [s["decision"]["steps_to_go"] for s in record["steps"]] == [3, 2, 3, 3, 2, 2, 1]  # wait keeps 2 to go
    assert record["steps"][1]["decision"] == {"optimal_actions": ["right"], "steps_to_go": 2, "values": None, "reason": None,
                                              "features": {"side": "near"}}  # fmt: skip
    assert record["final_decision"] == OVER_WON and record["success"]
    e = episode_decisions(record)
    assert (e.scored, e.optimal, e.regret_steps, e.first_error, e.recovered) == (7, 4, 4, 2, 3)
    assert e.regret_steps == record["num_steps"] - record["optimal_steps"]


def test_a_solver_that_raises_leaves_its_steps_unscored_and_the_run_going():
    record = _play(BrokenWalk)
    assert record["success"] and record["error"] is None
    broke = "decision() raised ZeroDivisionError: the solver broke"
    assert [s["decision"]["reason"] for s in record["steps"]] == [None, broke, None, None, broke, broke, None]  # at cell 3
    e = episode_decisions(record)
    assert (dict(e.unscored), e.scored, e.optimal) == ({broke: 3}, 4, 3)


def test_the_replay_rejects_edited_decision_facts():
    record = _play()
    env = Walk(obs_mode="text")
    try:
        assert _replay_problem(env, TASK, record) is None
        flipped = {**record, "steps": [dict(s) for s in record["steps"]]}
        flipped["steps"][1]["decision"] = dict(flipped["steps"][1]["decision"], optimal_actions=["left"])  # the error made optimal
        assert _replay_problem(env, TASK, flipped) == (
            "step 2: the log's decision facts say optimal_actions=\"['left']\"; replaying the output gives \"['right']\""
        )
        edited = {**record, "steps": [dict(s) for s in record["steps"]]}
        edited["steps"][4]["decision"] = dict(edited["steps"][4]["decision"], steps_to_go=1)
        assert _replay_problem(env, TASK, edited) == "step 5: the log's decision facts say steps_to_go=1; replaying the output gives 2"
        final = dict(record, final_decision=dict(OVER_WON, steps_to_go=3))
        assert _replay_problem(env, TASK, final) == "the log's final decision facts say steps_to_go=3; replaying the output gives 0"
    finally:
        env.close()


# -- a submission's decision facts and metrics -------------------------------------------------------


def _with_facts(records: list[dict[str, Any]]) -> None:
    """Forged facts in every step of the committed smoke log (its runner recorded none): nothing is optimal."""
    for r in records:
        for s in r["steps"]:
            s["decision"] = _facts(["no such action"], 5, features={"phase": "start"})
        r["final_decision"] = OVER_WON if r["success"] else OVER_LOST


def test_a_submission_cannot_claim_its_decision_metrics(submission):
    submission.edit_records(_with_facts)  # the summary written from these facts: consistent, so no replay needed to pass
    assert validate_submission(submission.folder, replay=False).ok
    summary = json.loads((submission.folder / "summary.json").read_text())
    assert summary["decisions"]["overall"]["accuracy"]["mean"] == 0.0
    submission.edit_json("summary.json", lambda s: s["decisions"]["overall"]["accuracy"].update(mean=0.9))
    assert submission.problem(replay=False) == "summary.json: decisions.overall.accuracy.mean is 0.9 but the episodes give 0.0"
    # The facts themselves are the env's: the replay recomputes them.
    submission.edit_records(_with_facts)
    assert submission.problem().startswith(
        "episodes.jsonl:1: episode (numberline/image+text, 1835504127): step 1: the log's decision facts say "
        "optimal_actions=\"['no such action']\"; replaying the output gives "
    )


def test_facts_are_in_every_step_or_in_none(submission):
    def drop_one(records):
        _with_facts(records)
        del records[1]["steps"][2]["decision"]

    submission.edit_records(drop_one)
    assert submission.problem(replay=False) == (
        "episodes.jsonl:2: episode (numberline/image+text, 1320224556): step 3's decision is missing: a log records decision facts "
        "everywhere or nowhere"
    )

    def drop_an_episode(records):
        _with_facts(records)
        for s in records[2]["steps"]:
            del s["decision"]
        del records[2]["final_decision"]

    submission.edit_records(drop_an_episode)
    assert submission.problem(replay=False) == (
        "episodes.jsonl:3: does not record decision facts but line 1 records them: a log records them everywhere or nowhere"
    )
    submission.edit_records(lambda rs: (_with_facts(rs), rs[0].pop("final_decision")))
    assert "episodes.jsonl:1: episode (numberline/image+text, 1835504127): final_decision is missing" in submission.problem(replay=False)


# -- the decision report -------------------------------------------------------------------------------

WALK_ID = "decisiontest/Walk-v0"


@pytest.fixture
def walk_runs(tmp_path):
    """Two run folders of Walk on seeds 0-2: ``before`` errs at steps 2 (left) and 4 (wait) of every episode, ``after`` plays the oracle."""
    import gymnasium as gym

    gym.register(WALK_ID, entry_point=Walk)
    task = Task(name="walk", env=WALK_ID, obs_mode="text", seeds=(0, 1, 2))
    folders = {}
    try:
        for name, outputs in (("before", ("right", "left", "right", "wait", "right", "right")), ("after", ("right",) * 3)):
            folder = tmp_path / name
            folder.mkdir()
            env = gym.make(WALK_ID, obs_mode="text")
            records = [play_episode(env, _Outputs(outputs), task, seed) for seed in task.seeds]
            env.close()
            manifest = {"suite": "walk", "agent": {"name": name, "kwargs": {}}, "prompt": {"template": "default"},
                        "protocol": {"tasks": [task.model_dump(mode="json")]}}  # fmt: skip
            (folder / "run.json").write_text(json.dumps(manifest))
            (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
            folders[name] = folder
        yield folders
    finally:
        gym.registry.pop(WALK_ID, None)


def test_decision_report_errors_frames_comparison_and_transfer(walk_runs, tmp_path):
    from rl4vlm_gym.harness.decision_report import compare_decisions, error_kinds, write_decision_report
    from rl4vlm_gym.harness.runner import load_episodes

    before, after = (load_episodes(walk_runs[n] / "episodes.jsonl") for n in ("before", "after"))
    kinds = error_kinds(before)
    assert [(k.task, k.move, k.optimal, k.count, k.state_text()) for k in kinds] == [
        ("walk", "left", ("right",), 3, "side=near, steps_to_go=2"), ("walk", "wait", ("right",), 3, "side=near, steps_to_go=2")]  # fmt: skip
    assert kinds[0].examples == [(0, 2), (1, 2), (2, 2)]
    c = compare_decisions(after, before)["Walk"]  # this run: after; the other: before
    assert (c.episodes, c.compared, c.kept, c.fixed, c.broken, c.changed, c.diverged) == (3, 6, 3, 3, 0, 0, 3)
    assert c.examples[0] == ("walk", 0, 2, "left", "right", "fixed")
    assert compare_decisions(before, after)["Walk"].broken == 3
    page = write_decision_report(walk_runs["after"], tmp_path / "r" / "after.html", compare=walk_runs["before"], trained_on="Walk", figures=False)
    text = page.read_text()
    assert "Decision transfer" in text and "Walk (trained on)" in text
    assert "<td>6 / 3 / 3 / 0 / 0</td>" in text  # compared / kept / fixed / broken / changed
    assert "<td>0.667 [0.67, 0.67]</td><td>1.000 [1.00, 1.00]</td><td>0.333 [0.33, 0.33]</td>" in text  # 4 of 6 an episode, 3 of 3
    page = write_decision_report(walk_runs["before"], tmp_path / "before.html", images=1, figures=False)
    text = page.read_text()
    assert "<td>walk</td><td>side=near, steps_to_go=2</td><td>left</td><td>right</td><td>3</td>" in text
    assert text.count('<img src="data:image/png;base64,') == 1 and "before step 2: left taken, optimal right" in text
    assert "Errors by state feature" in text and write_decision_report(walk_runs["before"], tmp_path / "b2.html", images=1, figures=False).read_text() == text


@pytest.mark.slow  # 0.4 s of matplotlib; the inner loop checks the tables
def test_decision_report_plots_accuracy_per_family(walk_runs, tmp_path):
    from rl4vlm_gym.harness.decision_report import write_decision_report

    text = write_decision_report(walk_runs["after"], tmp_path / "a.html", compare=walk_runs["before"], images=0).read_text()
    assert text.count("<svg") == 1 and "Decision accuracy per family (95% CI over episodes)." in text
    assert text.count("<path") > 2  # two bars at least


def test_decisions_cli(walk_runs, tmp_path):
    from typer.testing import CliRunner

    from rl4vlm_gym.cli import app
    from rl4vlm_gym.harness.decision_report import DecisionReportError, write_decision_report

    out = tmp_path / "d.html"
    result = CliRunner().invoke(app, ["decisions", str(walk_runs["after"]), "--compare", str(walk_runs["before"]), "--out", str(out), "--images", "0", "--no-figures"])
    assert result.exit_code == 0, result.output
    assert out.exists() and "<img" not in out.read_text() and "<svg" not in out.read_text()
    with pytest.raises(DecisionReportError, match="--trained-on needs --compare"):  # the CLI prints it and exits 2
        write_decision_report(walk_runs["after"], out, trained_on="Walk")
    (walk_runs["before"] / "episodes.jsonl").write_text(json.dumps({"task": "walk", "seed": 0, "steps": [{"parsed": "left"}]}) + "\n")
    with pytest.raises(DecisionReportError, match="carry no decision facts"):
        write_decision_report(walk_runs["before"], out)


def test_reports_and_boards_show_decision_metrics():
    from rl4vlm_gym.harness.pages import _board, _md_table, _ranked
    from rl4vlm_gym.harness.report import decision_blocks, html_from_blocks

    won = _record([_step("a", _facts(["a"], 2)), _step("b", _facts(["a"], 1))], OVER_LOST, success=False, terminated=False, truncated=True)
    decisions = decision_summary([won])
    page = html_from_blocks(decision_blocks(decisions), "t")
    assert "<td>decision accuracy</td><td>0.500 [0.50, 0.50]</td>" in page and "<td>regret, steps per decision</td><td>0.000" in page
    score = {"mean": 0.5, "ci95": [0.0, 1.0]}
    overall = {"success": score, "progress": score, "normalised_steps": None, "invalid_action_rate": 0.0, "episodes": 2,
               "input_tokens": 0, "output_tokens": 0}  # fmt: skip
    entries = [
        {"id": f"x{i}", "suite": "smoke", "axis": "smoke", "suite_description": "d",
         "metadata": {"name": f"n{i}", "date": "2026-11-29", "verified": False},
         "summary": {"overall": overall, **({"decisions": decisions} if i else {})}}
        for i in range(2)
    ]  # fmt: skip
    header, rows = _board(_ranked(entries), scored=False)
    board = "\n".join(_md_table(header, rows))
    assert "| invalid | decision accuracy [95% CI] | regret/decision [95% CI] | episodes |" in board
    assert "| 0.000 | 0.500 [0.50, 0.50] | 0.000 [0.00, 0.00] | 2 |" in board and "| 0.000 | - | - | 2 |" in board
    assert "decision accuracy" not in "".join(_board(_ranked(entries[:1]), scored=False)[0])  # a board without facts keeps its columns


def test_decision_facts_have_types_and_ranges(submission):
    def edit(**change):
        def apply(records):
            _with_facts(records)
            records[0]["steps"][0]["decision"].update(change)

        return apply

    submission.edit_records(edit(steps_to_go=-2), resummarize=False)
    assert submission.problem(replay=False) == "episodes.jsonl:1: steps.0.decision.steps_to_go: Input should be greater than or equal to -1"
    submission.edit_records(edit(optimal_actions="+"), resummarize=False)
    assert submission.problem(replay=False) == "episodes.jsonl:1: steps.0.decision.optimal_actions: Input should be a valid list"
    submission.edit_records(edit(features={"a": [1]}), resummarize=False)
    assert submission.problem(replay=False).startswith("episodes.jsonl:1: steps.0.decision.features.a.int: Input should be a valid integer")
