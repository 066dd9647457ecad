"""Tests that kill the mutants of ``rl4vlm_gym/testing/`` (the conformance kit) that the other fast kit
tests let live (benchmarks/mutation/: mutmut's survivors, each test names the mutation it catches)."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rl4vlm_gym.core import StepOutcome
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


# Envs of this file's own: a correct one each check has no fast test of, or one defect the kit's law names ------


class ChanceWalk(kit_walk.Walk):
    """A correct game of chance (``CHANCE``): no plan length, whatever its oracle manages."""

    CHANCE = True

    def _optimal_steps(self) -> int | None:
        return None


class MapView(kit_walk.Walk):
    """A correct env whose ``render()`` is another view (``_view`` overridden: the grid upside down)."""

    def _view(self) -> Any:
        return self._render()[::-1].copy()


class PickleForgetsTheWind(kit_walk.Walk):
    """A wind drawn at reset shows in the text from the third step on; pickling forgets it. The agent starts
    in a corner and the goal in the other, so that an episode lasts past the third step."""

    def _new_episode(self, config: Any) -> None:
        super()._new_episode(config)
        self.wind = int(self.np_random.integers(1, 100))
        self.agent = self.start = (0, 0)
        self.goal = (self.side - 1, self.side - 1)

    def _describe(self) -> str:
        return super()._describe() + (f"\nWind: {self.wind}" if self.elapsed_steps >= 3 else "")

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "wind": 0}


class ImageCountsResets(kit_walk.Walk):
    """The image shades its background by the number of resets: one seed, same text, another image."""

    resets = 0

    def _new_episode(self, config: Any) -> None:
        super()._new_episode(config)
        self.resets += 1

    def _render(self) -> Any:
        image = super()._render()
        image[0, 0] = (self.resets % 256, 0, 0)
        return image

    def _frame_key(self) -> Any:
        return super()._frame_key(), self.resets


class PickleForgetsTheShade(ImageCountsResets):
    """Pickling forgets the shade (the resets counted): a copy's image differs, its text does not."""

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "resets": 0}


class MoveScaledAboveOne(kit_walk.Walk):
    """A move's outcome has ``scale=1.5`` (the move pays 0, so the reward stays in the table's range)."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return dataclasses.replace(outcome, scale=1.5) if outcome.event == "move" and outcome.error is None else outcome


OWN = (ChanceWalk, MapView, PickleForgetsTheWind, ImageCountsResets, PickleForgetsTheShade, MoveScaledAboveOne)


@pytest.fixture(scope="module")
def own(walk: str) -> Iterator[dict[type, str]]:
    """This file's envs registered as kit_walk registers its own (the same card)."""
    from rl4vlm_gym.registry import EnvCard, register, unregister

    ids = {}
    for cls in OWN:
        ids[cls] = f"kit/Mutants{cls.__name__}-v0"
        register(
            EnvCard(
                id=ids[cls], entry_point=f"{__name__}:{cls.__name__}", family="kit",
                summary="Walk to the goal square (a conformance-kit test env).", skills=("navigation",),
                action_grammar="up, down, left or right", action_examples=("up",), success="the agent stands on the goal",
                max_episode_steps=12, levels=("2x2 grid", "3x3 grid"), default_level=0, reward_variants=tuple(cls.REWARDS),
            )
        )  # fmt: skip
    yield ids
    for env_id in ids.values():
        unregister(env_id)


def test_oracle_counts_its_episodes_from_first_seed_and_searches_one_a_level(walk: str) -> None:
    # check_oracle's seeds first_seed.. first_seed + episodes (not 0..), and SEARCHED_EPISODES (1) searched a
    # level: the counters' +=, < and `and not proxy` mutants search more episodes or count them wrong.
    import gymnasium as gym

    from rl4vlm_gym.registry import EVAL_SEEDS
    from rl4vlm_gym.testing import check_oracle

    env = gym.make(walk)
    plans = [env.reset(seed=EVAL_SEEDS.start + i, options={"level": 1})[1]["optimal_steps"] for i in (4, 5)]
    env.close()
    assert all(p > 1 for p in plans), plans  # both episodes could be searched
    report = check_oracle(walk, episodes=2, first_seed=4, levels=[1])
    assert report.startswith("L1 2/2 solvable solved, mean return +1.00; "), report
    assert report.endswith("; no shorter solution found in 1 episodes searched"), report
    # search=0: nothing searched, and nothing said about a server (not a remote env)
    assert check_oracle(walk, episodes=2, first_seed=4, levels=[1], search=0) == "L1 2/2 solvable solved, mean return +1.00"


def test_oracle_of_a_game_of_chance_reports_no_fixed_solutions(own: dict[type, str]) -> None:
    # A game of chance must report optimal_steps -1 (not +1), and its summary says it has no fixed solutions.
    from rl4vlm_gym.testing import check_oracle

    assert check_oracle(own[ChanceWalk], episodes=2, levels=[0, 1]) == (
        "L0 no fixed solutions, mean return +1.00; L1 no fixed solutions, mean return +1.00"
    )


def test_oracle_of_an_expensive_plan_env_says_shorter_solutions_were_not_searched(walk: str) -> None:
    from rl4vlm_gym.testing import check_oracle

    report = check_oracle(kit_walk.env_id(kit_walk.PlannedWalk), episodes=1, levels=[1])
    assert report == (
        "L1 1/1 solvable solved, mean return +1.00; "
        "shorter solutions not searched (EXPENSIVE_PLAN: optimal_steps is the length the oracle plays)"
    ), report


def test_oracle_search_message_lists_a_path_as_long_as_the_steps_it_names(walk: str) -> None:
    # _assert_no_shorter_solution: "solves the episode in N steps", N the length of the path it quotes.
    import re

    from rl4vlm_gym.testing import check_oracle

    with pytest.raises(AssertionError, match="optimal_steps counts a detour") as caught:
        check_oracle(kit_walk.env_id(kit_walk.DetourOracle), episodes=1, levels=[1])
    path, steps = re.search(r"but (\[.*?\]) solves the episode in (\d+) steps", str(caught.value)).groups()
    assert len(eval(path)) == int(steps), caught.value  # noqa: S307 (the kit's own repr of a list of str)


def test_render_accepts_an_overridden_view_that_is_stable(own: dict[type, str]) -> None:
    # render's overridden-_view branch compares render() with render() again (not with None).
    from rl4vlm_gym.testing import check_render

    assert check_render(own[MapView]) == "rgb_array, ansi and human render at reset and 2 steps; close() twice is safe"


def test_pickle_check_summary_and_a_copy_that_diverges_on_its_second_step(walk: str, own: dict[type, str]) -> None:
    # check_pickle steps the copy 3 times (not one: `a[2] or a[4]` stops after the first) and says so.
    from rl4vlm_gym.testing import check_pickle

    assert check_pickle(walk) == "pickled env continues identically"
    with pytest.raises(AssertionError, match="pickled env diverged"):
        check_pickle(own[PickleForgetsTheWind], level=1)


def test_pickle_check_compares_images_and_texts_both(own: dict[type, str]) -> None:
    # A copy whose image differs but whose text is the same diverged (`and`, not `or`).
    from rl4vlm_gym.testing import check_pickle

    with pytest.raises(AssertionError, match="^pickled env diverged$"):
        check_pickle(own[PickleForgetsTheShade])


def test_seeding_says_a_seed_did_not_repeat_when_only_the_image_differs(own: dict[type, str]) -> None:
    # The same seed's text with another image is "did not repeat" (`and`, not `or`: the options law would
    # otherwise blame the options).
    from rl4vlm_gym.testing import check_seeding

    with pytest.raises(AssertionError, match=r"^seed 0 did not repeat$"):
        check_seeding(own[ImageCountsResets])


def test_first_difference_of_traces_that_agree_and_of_one_that_ended_early() -> None:
    from rl4vlm_gym.testing.rollouts import _first_difference

    a = [["reset(seed=0)", "i", "t", "s"], ["step 1", "i1", "t1", "s1"]]
    assert _first_difference({"here": a, "there": [list(x) for x in a]}) == "their traces agree"
    assert _first_difference({"here": a, "there": a[:1]}) == (
        "here and there first differ after step 1: the image, the text, mission, actions or info, "
        "the action taken, its reward or its flags"
    )


def test_docs_summary_names_the_sections(walk: str) -> None:
    from rl4vlm_gym.docs import SECTIONS
    from rl4vlm_gym.testing import check_docs

    assert check_docs(walk).startswith(f"docstring has {', '.join(SECTIONS)}; card matches the class; ")


def _steps_of(summary: str) -> int:
    return int(summary.split(" steps under ", 1)[0])


def test_rules_defaults_and_episodes_per_seed(walk: str) -> None:
    # check_rules' defaults are 2 seeds x 2 episodes; more episodes a seed play more steps under the default
    # variant (not one: `v == 0 and False`); one episode a seed still probes keys from its own start copy.
    from rl4vlm_gym.testing import check_rules

    assert check_rules(walk) == check_rules(walk, seeds=2, episodes_per_seed=2)
    assert _steps_of(check_rules(walk, seeds=1, episodes_per_seed=2)) > _steps_of(check_rules(walk, seeds=1, episodes_per_seed=1))
    assert check_rules(walk, seeds=3, episodes_per_seed=1)


def test_rules_labels_a_reset_fault_with_where_it_was_found(walk: str) -> None:
    from rl4vlm_gym.testing import check_rules

    with pytest.raises(AssertionError, match=r"^reward_variant='default', seed 0, episode 0, reset: actions has duplicates"):
        check_rules(kit_walk.env_id(kit_walk.DuplicateActions))


def test_rules_state_key_message_quotes_both_action_lists(walk: str) -> None:
    from rl4vlm_gym.testing import check_rules

    with pytest.raises(AssertionError, match="names two different states") as caught:
        check_rules(kit_walk.env_id(kit_walk.StateKeyCollision))
    actions = "('up', 'down', 'left', 'right')"
    assert f"(actions {actions} vs {actions}, success " in str(caught.value), caught.value


def test_rules_refuse_an_outcome_scale_above_one(own: dict[type, str]) -> None:
    from rl4vlm_gym.testing import check_rules

    with pytest.raises(AssertionError, match=r"StepOutcome.scale=1.5 is outside \[0, 1\]"):
        check_rules(own[MoveScaledAboveOne])


def test_rollout_trace_resets_after_every_end_with_the_next_seed(walk: str) -> None:
    # rollouts._rollout_trace: an episode that ends (terminated *or* truncated: with `and`, a Walk episode that
    # terminates runs on until its time limit adds truncated) is followed by a reset labelled with the next
    # seed (not a None label). The labels are worked out from outside: the same env and policy, replayed.
    import gymnasium as gym
    import numpy as np

    from rl4vlm_gym.testing.common import Moves, _base
    from rl4vlm_gym.testing.rollouts import _rollout_trace

    _, trace = _rollout_trace(walk, 5, 30)
    env = gym.make(walk)
    obs, _ = env.reset(seed=5)
    policy, expected, episode = Moves(_base(env), np.random.default_rng(5)), ["reset(seed=5)"], 0
    for step in range(1, 31):
        obs, _, terminated, truncated, _ = env.step(policy(obs))
        expected.append(f"step {step}")
        if terminated or truncated:
            episode += 1
            obs, _ = env.reset(seed=5 + episode)
            expected.append(f"reset(seed={5 + episode})")
    env.close()
    assert [entry[0] for entry in trace] == expected and episode >= 3, expected


def test_a_vector_env_that_does_not_start_in_time_is_named_and_its_builder_is_a_daemon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # vector._start: the builder runs in a daemon thread (a hung constructor must not keep the interpreter
    # from exiting), and a start past VECTOR_TIMEOUT_S fails naming the vector env (not None). The slow
    # constructor here returns after 0.1 s, so no thread outlives the test.
    import threading

    from rl4vlm_gym.testing import vector

    daemon = []

    def slow(fns: list[Any]) -> Any:
        daemon.append(threading.current_thread().daemon)
        threading.Event().wait(0.1)
        return fns

    monkeypatch.setattr(vector, "VECTOR_TIMEOUT_S", 0.01)
    with pytest.raises(AssertionError, match=r"^my vector env did not start within 0.01 s: a worker hangs"):
        vector._start(slow, [], "my vector env")
    assert daemon == [True]


def test_determinism_names_this_process_and_the_fresh_one_where_they_differ(walk: str) -> None:
    # determinism.check_determinism: the rollouts are named "this process" and the fresh process with its
    # PYTHONHASHSEED, in the digests and in where they first differ. The salted goal (one of 3 cells) may
    # agree at a reset by chance: the default 40 steps reset it often enough to differ somewhere.
    import re

    from rl4vlm_gym.testing import check_determinism
    from rl4vlm_gym.testing.fresh import fork_server

    with pytest.raises(AssertionError) as caught:
        check_determinism(kit_walk.env_id(kit_walk.SaltedGoal))
    fresh = f"a process with PYTHONHASHSEED={fork_server().hash_seed}"
    assert "{'this process': '" in str(caught.value) and f"'{fresh}': '" in str(caught.value), caught.value
    where = rf"; this process and {fresh} first differ after reset\(seed=\d+\): the image, the text, mission, actions or info$"
    assert re.search(where, str(caught.value)), caught.value


def test_the_fork_servers_hash_seed_differs_from_the_owners(monkeypatch: pytest.MonkeyPatch) -> None:
    # fresh.ForkServer: the fresh processes hash with PYTHONHASHSEED=1, or 2 when the owner's is 1 (the key read
    # is PYTHONHASHSEED): the determinism check compares two processes whose str hashing differs.
    from rl4vlm_gym.testing.fresh import ForkServer

    monkeypatch.setenv("PYTHONHASHSEED", "1")
    assert ForkServer().hash_seed == "2"
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert ForkServer().hash_seed == "1"


def test_cancelling_a_job_after_its_result_leaves_the_fork_server_serving() -> None:
    # fresh.Job.result marks the job done: a later cancel() neither kills the server nor releases its lock again.
    import os

    from rl4vlm_gym.testing.fresh import fork_server

    server = fork_server()
    job = server.start(os.getpid, what="a pid")
    child = job.result(120)
    pid = server.pid
    job.cancel()
    assert server.pid == pid is not None and child != os.getpid()
    assert server.call(os.getpid, timeout=120, what="another pid") not in (child, os.getpid())


def test_a_vector_env_whose_constructor_fails_raises_its_own_error() -> None:
    # vector._start re-raises the builder thread's error (stored under "error"), not a KeyError for the missing env.
    from rl4vlm_gym.testing import vector

    def failing(fns: list[Any]) -> Any:
        raise ValueError("no such worker")

    with pytest.raises(ValueError, match="^no such worker$"):
        vector._start(failing, [], "my vector env")


def test_determinism_plays_forty_steps_by_default(walk: str) -> None:
    # determinism.check_determinism's documented default: 40-step rollouts (the summary says how many).
    from rl4vlm_gym.testing import check_determinism

    assert check_determinism(walk).startswith("40-step rollouts identical in 2 processes with different str hashing")
