"""Tests that kill the mutants of ``rl4vlm_gym/testing/`` (the conformance kit) that the other fast kit
tests let live (benchmarks/mutation/: mutmut's survivors, each test names the mutation it catches)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from rl4vlm_gym.testing import CHECKS, REMOTE, NotCheckable, run_checks

sys.path.insert(0, str(Path(__file__).resolve().parent))
kit_walk = importlib.import_module("kit_walk")


def test_run_checks_reports_a_failed_check_with_its_error_and_time(walk: str) -> None:
    # runner._run's failure branch: the error's type and message, passed False, a real duration (not
    # perf_counter() + start, not None), not "not checked".
    broken = kit_walk.env_id(kit_walk.UnseededReplay)
    (result,) = run_checks(broken, ["seeding"])
    assert (result.env_id, result.check, result.passed, result.not_checked) == (broken, "seeding", False, False)
    assert result.detail.startswith("AssertionError: ") and "reset() without a seed replays" in result.detail
    assert 0 < result.seconds < 600
    (passed,) = run_checks(walk, ["seeding"])
    assert (passed.env_id, passed.check, passed.passed, passed.not_checked) == (walk, "seeding", True, False)
    assert passed.detail and 0 < passed.seconds < 600


def test_run_checks_gives_make_kwargs_to_every_check(walk: str) -> None:
    # _run dropping **make_kwargs: an obs_mode Walk does not have fails only if it reaches gym.make.
    (result,) = run_checks(walk, ["pickle"], obs_mode="no-such-mode")
    assert not result.passed and "no-such-mode" in result.detail, result


def test_run_checks_reports_a_check_that_cannot_run_as_not_checked(walk: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The NotCheckable branch (a remote env's server hiding what a check needs): not passed, not checked,
    # the reason after REMOTE, a real duration.
    def cannot(env_id: str, /, **kwargs: object) -> str:
        raise NotCheckable("the server hides its oracle")

    monkeypatch.setitem(CHECKS, "docs", cannot)
    (result,) = run_checks(walk, ["docs"])
    assert (result.env_id, result.check, result.passed, result.not_checked) == (walk, "docs", False, True)
    assert result.detail == f"{REMOTE}the server hides its oracle"
    assert 0 <= result.seconds < 600


@pytest.mark.parametrize("name", ["env_id", "kwargs"])
def test_run_checks_refuses_env_id_and_kwargs_as_check_options(walk: str, name: str) -> None:
    # A check's positional env_id and its **kwargs are not options it takes ({"env_id", "kwargs"} mutated).
    with pytest.raises(ValueError, match=rf"check 'seeding' has no options \['{name}'\]"):
        run_checks(walk, options={"seeding": {name: 1}})


def test_run_checks_runs_every_check_by_default() -> None:
    # checks=None means all of CHECKS, in order (not list(None)); an unknown id fails each one at once.
    results = run_checks("kit/NoSuchWalk-v0")
    assert [r.check for r in results] == list(CHECKS) and not any(r.passed for r in results)


def test_check_api_makes_each_obs_mode_with_the_make_kwargs_and_names_the_modes(walk: str) -> None:
    # api.check_api: the summary lists the card's obs modes (", " joined); gym.make gets the make kwargs
    # (a mutant making the bare id passes an argument Walk does not take).
    from rl4vlm_gym.registry import env_card
    from rl4vlm_gym.testing import check_api

    assert check_api(walk) == f"check_env passed in {', '.join(env_card(walk).obs_modes)}"
    with pytest.raises(TypeError, match="no_such_argument"):
        check_api(walk, no_such_argument=1)


def test_the_decisions_summary_counts_states_moves_and_the_reasons_facts_are_missing() -> None:
    # decisions._Seen.report, each branch: the facts known, invalid moves, the three commonest reasons.
    from rl4vlm_gym.testing.decisions import _Seen

    seen = _Seen("kit/Walk-v0", has_oracle=True)
    for reason in ("a", "b", "b", "c", "c", "c", "d"):
        seen.count({"optimal_actions": None, "reason": reason}, 7)
    seen.count({"optimal_actions": ["up"], "reason": None}, 40)
    seen.moves, seen.invalid = 5, 2
    assert seen.report() == (
        "optimal actions known in 1/8 states, 5 moves checked against them (2 invalid); "
        "none in 7: 'c' x3, 'b' x2, 'a' x1; at most 40 bytes of JSON a state"
    )
    free = _Seen("kit/Free-v0", has_oracle=False)
    free.count({"optimal_actions": None, "reason": "no solver"}, 3)
    assert free.report() == "SKIPPED: oracle-free (HAS_ORACLE = False) and no decision facts ('no solver' x1)"
    assert _Seen("kit/Free-v0", has_oracle=True).report().startswith("optimal actions known in 0/0 states")


def test_the_plan_law_names_two_example_missions_of_many(walk: str) -> None:
    # observations._assert_mission_keeps_the_plan: the message counts every mission but quotes two ([:2]).
    from rl4vlm_gym.testing import check_observations

    with pytest.raises(AssertionError, match=r"each of the 3 missions seen at several resets") as caught:
        check_observations(kit_walk.env_id(kit_walk.MissionPointsTheWay))
    assert str(caught.value).count(": first oracle move '") == 2, caught.value


def test_the_decisions_check_holds_every_oracle_move_of_its_episodes_to_the_facts(walk: str) -> None:
    # decisions._oracle_episode plays each oracle episode to its end (not `done = True` from the start): with no
    # walk, the moves checked are the oracle's, optimal_steps per episode, each from a state whose facts are known.
    import gymnasium as gym

    from rl4vlm_gym.registry import EVAL_SEEDS
    from rl4vlm_gym.testing import check_decisions

    env = gym.make(walk)
    plans = [env.reset(seed=EVAL_SEEDS.start + i, options={"level": 1})[1]["optimal_steps"] for i in range(2)]
    env.close()
    report = check_decisions(walk, episodes=2, walk_steps=0, levels=[1])
    assert report.startswith(f"optimal actions known in {sum(plans)}/{sum(plans)} states, {sum(plans)} moves checked"), (
        plans,
        report,
    )


def test_every_check_that_makes_an_env_makes_it_with_the_make_kwargs(walk: str) -> None:
    # A check whose gym.make drops the make kwargs (`_make(env_id, )`: fuzz, arguments, ...) would pass an
    # argument Walk does not take; docs reads the class and makes no env.
    results = {r.check: r for r in run_checks(walk, no_such_argument=1)}
    assert results.pop("docs").passed
    failed = {name: r.detail for name, r in results.items() if r.passed or "no_such_argument" not in r.detail}
    assert not failed, failed
