"""The conformance kit's own tests: each check fails on an env broken in one way, with a message
naming the defect, and every check passes on the correct reference env (``kit_walk.Walk``)."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from rl4vlm_gym.registry import unregister
from rl4vlm_gym.testing import CHECKS, ORACLE_EPISODES, ORACLE_EPISODES_EXPENSIVE, check_docs, check_oracle, run_checks

# The test envs' module must import by name in the kit's subprocesses (determinism, spawned
# vector workers), which get this process's sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
kit_walk = importlib.import_module("kit_walk")
Walk, env_id = kit_walk.Walk, kit_walk.env_id


@pytest.fixture(autouse=True, scope="module")
def _kit_envs() -> Iterator[None]:
    """The test envs are registered only while this module runs: other tests list every id."""
    ids = kit_walk.register_all()
    yield
    for env in ids:
        unregister(env)

# (broken env, the check that must catch it, a pattern its message must match)
DEFECTS = [
    (kit_walk.RefusedMoveChanges, "rules", r"refused move \(the edge blocks \w+\) changed the state_key"),
    (kit_walk.StaleFrameCache, "rules", r"differs from a fresh _render\(\).*frame cache key"),
    (kit_walk.StaleFrameCache, "observations", r"differs from a fresh _render\(\).*frame cache key"),
    (kit_walk.OptimalNone, "oracle", r"optimal_steps is None \(-1\) but the oracle solved the episode"),
    (kit_walk.PlannerGivesUp, "oracle", r"level 0: optimal_steps is -1 in 5 of 5 episodes .* may give up on a few, not on most"),
    (kit_walk.OptimalFloat, "oracle", r"optimal_steps=\d\.0 is a float, not an int"),
    (kit_walk.DetourOracle, "oracle", r"optimal_steps=\d+, but \[.*\] solves the episode in \d+ steps \(optimal_steps counts a detour\)"),
    (kit_walk.SlowOracle, "oracle", r"the oracle took \d+ steps, but optimal_steps=\d+"),
    (kit_walk.ImageModeLeak, "observations", r"step \d: obs_mode='image' carries state text in obs\['text'\]"),
    (kit_walk.UnseededReplay, "seeding", r"reset\(\) without a seed replays the same episode"),
    (kit_walk.ImageLacksGoal, "observations", r"the image lacks information the text has"),
    (kit_walk.TextLacksGoal, "observations", r"the text lacks information the image has"),
    (kit_walk.MissionGivesAway, "observations", r"the mission gives the state away"),
    (kit_walk.MissionNamesGame, "observations", r"the mission gives the state away.*set FIXED_EPISODES = True"),
    (kit_walk.IgnoresImageSize, "arguments", r"image_size=\(\d+, \d+\) ignored"),
    (kit_walk.AppearanceIgnored, "arguments", r"appearance 'grey' shows the default's images on 3 seeds: it changes nothing"),
    (kit_walk.AppearanceChangesText, "arguments", r"appearance='grey', seed 0, reset: obs\['text'\] differs from the default appearance's"),
    (kit_walk.WordingIgnored, "arguments", r"wording 'held-out' gives the train wording's mission at seed 0: .* is not in other words"),
    (kit_walk.WordingKeepsFeedback, "arguments", r"wording='held-out', seed \d, step \d: the text is the train wording's, feedback included: the feedback is not reworded"),
    (kit_walk.WordingChangesEpisode, "arguments", r"wording='held-out', seed \d, reset: the image differs from the train wording's: a wording changes only words"),
    (kit_walk.RefusedPaysMove, "rules", r"refused or invalid move \(.*\) paid 0.0, not the invalid reward -1.0"),
    (kit_walk.DuplicateActions, "rules", r"actions has duplicates: \['up'\]"),
    (kit_walk.AcceptsAfterEnd, "rules", r"a move \('\w+'\) was accepted after the episode ended"),
    (kit_walk.RewardOutsideTable, "rules", r"reward 2.0 is outside the REWARDS table's range \[-1.0, 1.0\]"),
    (kit_walk.VariantMissesEvent, "docs", r"REWARDS\['lenient'\] misses events \['goal'\]"),
    (kit_walk.VariantMissesEvent, "rules", r"the event 'goal' has no reward in REWARDS\['lenient'\]"),
    (kit_walk.ProgressOutOfRange, "rules", r"progress -?\d\.\d+ is outside \[0, 1\]"),
    (kit_walk.EarlySuccess, "rules", r"success reported (at reset|on a step that does not terminate)"),
    (kit_walk.StateKeyCollision, "rules", r"state_key 'goal=\(\d, \d\)' names two different states"),
    (kit_walk.LevelsIgnored, "arguments", r"level 1 plays level 0's episodes"),
    (kit_walk.SaltedGoal, "determinism", r"rollouts differ across processes: .*first differ after reset\(seed=\d+\): the image, the text"),
    (kit_walk.SaltedFeedback, "determinism", r"rollouts differ across processes: .*first differ after step [1-9]\d*: the text, mission, actions or info$"),
    (kit_walk.OracleFreeReportsPlan, "oracle", r"an oracle-free env \(HAS_ORACLE = False\) reports optimal_steps=\d+; it must be -1"),
    (kit_walk.OracleFreeHidesOracle, "oracle", r"sets HAS_ORACLE = False but defines oracle_action"),
    (kit_walk.RenderStaleAfterStep, "render", r"render\(\) after step 1 differs from the observed image"),
    (kit_walk.AnsiLacksState, "render", r"the ansi render after reset lacks the state \(describe\(\)\)"),
    (kit_walk.AnsiLacksActions, "render", r"the ansi render after reset lacks admissible actions"),
    (kit_walk.DropsSeedWithOptions, "seeding", r"reset\(seed=0, options=\{\}\) plays another episode than reset\(seed=0\): the seed is dropped"),
]


@pytest.mark.parametrize(("cls", "check", "pattern"), DEFECTS, ids=[f"{c.__name__}-{k}" for c, k, _ in DEFECTS])
def test_check_names_the_defect(cls: type, check: str, pattern: str) -> None:
    with pytest.raises((AssertionError, KeyError)) as caught:
        CHECKS[check](env_id(cls))
    assert re.search(pattern, str(caught.value)), f"{check} failed {cls.__name__} for another reason: {caught.value}"


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_check_passes_the_reference_env(check: str) -> None:
    CHECKS[check](env_id(Walk))


def test_observations_lets_replayed_games_name_their_start() -> None:
    # An env replaying recorded games (FIXED_EPISODES, like ALFWorld's game files) has one start
    # state per mission by design; the same env unflagged fails (MissionNamesGame, in DEFECTS), and a
    # generated env whose mission leaks the state still fails (MissionGivesAway).
    assert "missions of replayed games" in CHECKS["observations"](env_id(kit_walk.ReplayedGames))


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_check_passes_an_oracle_free_env_moving_without_an_oracle(check: str) -> None:
    report = CHECKS[check](env_id(kit_walk.OracleFree))
    if check == "oracle":
        assert report.startswith("SKIPPED: oracle-free"), report


ORACLE_DEFECTS = [defect for defect in DEFECTS if defect[1] == "oracle"]


@pytest.mark.parametrize(("cls", "check", "pattern"), ORACLE_DEFECTS, ids=[c.__name__ for c, _, _ in ORACLE_DEFECTS])
def test_the_oracle_check_names_the_defect_in_the_fewest_episodes_it_plays(cls: type, check: str, pattern: str) -> None:
    # An EXPENSIVE_PLAN env gets the fewest episodes: every defect must still be caught in them.
    with pytest.raises(AssertionError) as caught:
        check_oracle(env_id(cls), episodes=ORACLE_EPISODES_EXPENSIVE)
    assert re.search(pattern, str(caught.value)), f"oracle failed {cls.__name__} for another reason: {caught.value}"


@pytest.mark.parametrize(
    ("cls", "options", "per_level"),
    [
        (Walk, {}, ORACLE_EPISODES),
        (kit_walk.PlannedWalk, {}, ORACLE_EPISODES_EXPENSIVE),
        (kit_walk.PlannedWalk, {"episodes": 7}, 7),
        (Walk, {"episodes": 3}, 3),
    ],
)
def test_the_oracle_check_plays_a_fixed_number_of_episodes_at_every_level(cls: type, options: dict[str, int], per_level: int) -> None:
    # A count, never a time budget: the same episodes are checked however loaded the machine is.
    report = check_oracle(env_id(cls), **options)
    assert f"L0 {per_level}/{per_level} solvable solved" in report and f"L1 {per_level}/{per_level} solvable solved" in report, report


def test_the_oracle_check_does_not_play_episodes_whose_planner_gave_up() -> None:
    # Without a plan, MiniWorld's oracle searches again at every step: minutes per episode, checking nothing.
    report = check_oracle(env_id(kit_walk.PlannerGivesUpOnSome))
    assert "L0 4/4 solvable solved (1 without a plan: the planner gave up)" in report
    assert "L1 4/4 solvable solved (1 without a plan: the planner gave up)" in report, report


def test_every_defect_is_caught_by_the_checks_it_names() -> None:
    # tested below, and in test_fresh.py
    broken = {cls for cls, _, _ in DEFECTS} | {kit_walk.HangsInForkedWorkers, kit_walk.FirstOfItsProcess, kit_walk.CrashesInFreshProcess}
    broken |= {kit_walk.NeedsItsOwnersMemory}
    assert broken == set(kit_walk.BROKEN), "every broken env in kit_walk.py has a test above, and only those"


def test_run_checks_separates_make_kwargs_from_check_options() -> None:
    results = run_checks(env_id(Walk), ["seeding", "oracle"], options={"oracle": {"episodes": 3}}, level=1)
    assert [r.passed for r in results] == [True, True], results
    assert "L0 3/3" in results[1].detail and "L1 3/3" in results[1].detail
    with pytest.raises(ValueError, match="check 'seeding' has no options \\['episodes'\\]"):
        run_checks(env_id(Walk), options={"seeding": {"episodes": 3}})
    with pytest.raises(ValueError, match="unknown checks \\['nope'\\]"):
        run_checks(env_id(Walk), options={"nope": {}})


def test_a_subclass_inherits_its_family_docstring() -> None:
    assert kit_walk.VariantMissesEvent.__doc__ and "## Description" not in kit_walk.VariantMissesEvent.__doc__
    with pytest.raises(AssertionError, match="misses events"):  # the sections pass, inherited from Walk
        check_docs(env_id(kit_walk.VariantMissesEvent))


def test_test_only_env_is_registered_with_gymnasium() -> None:
    assert gym.spec(env_id(Walk)).entry_point == "kit_walk:Walk"


def test_a_refusal_pays_the_invalid_reward_whatever_event_it_names() -> None:
    env = Walk(reward_variant="default")  # Walk refuses the edge with StepOutcome("move", error=...)
    env.reset(seed=0)
    edge = next(a for a, (dr, dc) in kit_walk.MOVES.items() if not (0 <= env.agent[0] + dr < 2 and 0 <= env.agent[1] + dc < 2))
    obs, reward, terminated, truncated, info = env.step(edge)
    assert info["action"] == {"raw": edge, "parsed": None, "valid": False, "error": f"the edge blocks {edge}"}
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert obs["text"].startswith(f"Invalid action: the edge blocks {edge}. Nothing happened.")


def test_a_vector_worker_that_hangs_fails_the_check_instead_of_hanging_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.testing import vector  # the module whose checks read the timeout

    monkeypatch.setattr(vector, "VECTOR_TIMEOUT_S", 3.0)
    with pytest.raises(AssertionError, match=r"AsyncVectorEnv\(context='fork', shared_memory=True\) did not start within 3 s: a worker hangs"):
        vector.check_vector(env_id(kit_walk.HangsInForkedWorkers))


def test_an_env_that_needs_its_owners_memory_fails_in_workers_that_inherit_nothing() -> None:
    # The run that stands for spawn: forkserver's workers import the env's module anew, as spawned ones do.
    with pytest.raises(AssertionError, match=r"AsyncVectorEnv\(context='forkserver', shared_memory=False\) text differs"):
        CHECKS["vector"](env_id(kit_walk.NeedsItsOwnersMemory))


def test_a_continuous_env_may_describe_its_state_more_coarsely_than_its_image(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kit_walk.TextLacksGoal, "CONTINUOUS", True)
    CHECKS["observations"](env_id(kit_walk.TextLacksGoal))  # equal texts, different images: allowed
    monkeypatch.setattr(kit_walk.ImageLacksGoal, "CONTINUOUS", True)
    with pytest.raises(AssertionError, match="the image lacks information the text has"):
        CHECKS["observations"](env_id(kit_walk.ImageLacksGoal))  # the image must still determine the text


def test_the_checks_mixed_policy_gives_an_expensive_plan_env_runs_of_one_kind() -> None:
    import numpy as np

    from rl4vlm_gym.testing.common import EXPENSIVE_PLAN_RUN, Moves, _policy_action

    cheap = gym.make(env_id(Walk)).unwrapped
    obs, _ = cheap.reset(seed=0)
    moves, rng = Moves(cheap, np.random.default_rng(5)), np.random.default_rng(5)
    assert [moves(obs) for _ in range(60)] == [_policy_action(cheap, obs, rng) for _ in range(60)]  # move by move, as before

    planned = gym.make(env_id(kit_walk.PlannedWalk)).unwrapped
    obs, _ = planned.reset(seed=0)
    asked: list[bool] = []
    oracle_action = planned.oracle_action
    planned.oracle_action = lambda: asked.append(True) or oracle_action()  # type: ignore[method-assign]
    moves, kinds = Moves(planned, np.random.default_rng(5)), []
    for _ in range(EXPENSIVE_PLAN_RUN * 100):
        before = len(asked)
        moves(obs)
        kinds.append(len(asked) > before)
    runs = [kinds[i : i + EXPENSIVE_PLAN_RUN] for i in range(0, len(kinds), EXPENSIVE_PLAN_RUN)]
    assert all(len(set(run)) == 1 for run in runs), "a run mixes oracle and random moves"
    assert 0.35 < sum(not run[0] for run in runs) / len(runs) < 0.65, "the share of random runs is not random_moves = 0.5"
