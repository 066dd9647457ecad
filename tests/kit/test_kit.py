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
kit_laws = importlib.import_module("kit_laws")
Walk, env_id = kit_walk.Walk, kit_walk.env_id


@pytest.fixture(autouse=True, scope="module")
def _kit_envs() -> Iterator[None]:
    """The test envs are registered only while this module runs: other tests list every id."""
    ids = kit_walk.register_all()
    yield
    for env in ids:
        unregister(env)

# (broken env, the check that must catch it, the law it breaks (a prefix of its id in kit_laws; None: the
# env's own error, no law of the kit), a pattern its message must match)
BROKEN_LAWS = [
    (kit_walk.RefusedMoveChanges, "rules", "rules: an invalid or refused move", r"refused move \(the edge blocks \w+\) changed the state_key"),
    (kit_walk.StaleFrameCache, "rules", "common: the observed image differs from a fresh _render()", r"differs from a fresh _render\(\).*frame cache key"),
    (kit_walk.StaleFrameCache, "observations", "common: the observed image differs from a fresh _render()", r"differs from a fresh _render\(\).*frame cache key"),
    (kit_walk.OptimalNone, "oracle", "oracle: optimal_steps is None (-1)", r"optimal_steps is None \(-1\) but the oracle solved the episode"),
    (kit_walk.PlannerGivesUp, "oracle", "oracle: level {}: optimal_steps is -1 in", r"level 0: optimal_steps is -1 in 5 of 5 episodes .* may give up on a few, not on most"),
    (kit_walk.OptimalFloat, "oracle", "oracle: optimal_steps={} is a {}, not an int", r"optimal_steps=\d\.0 is a float, not an int"),
    (kit_walk.DetourOracle, "oracle", "oracle: optimal_steps={}, but {} solves the episode", r"optimal_steps=\d+, but \[.*\] solves the episode in \d+ steps \(optimal_steps counts a detour\)"),
    (kit_walk.SlowOracle, "oracle", "oracle: the oracle took {} steps", r"the oracle took \d+ steps, but optimal_steps=\d+"),
    (kit_walk.ImageModeLeak, "observations", "observations: obs_mode='image' carries state text", r"step \d: obs_mode='image' carries state text in obs\['text'\]"),
    (kit_walk.UnseededReplay, "seeding", "seeding: reset() without a seed replays", r"reset\(\) without a seed replays the same episode"),
    (kit_walk.ImageLacksGoal, "observations", "observations: the image lacks information", r"the image lacks information the text has"),
    (kit_walk.TextLacksGoal, "observations", "observations: the text lacks information", r"the text lacks information the image has"),
    (kit_walk.MissionGivesAway, "observations", "observations: the mission gives the state away: each", r"the mission gives the state away"),
    (kit_walk.MissionNamesGame, "observations", "observations: the mission gives the state away: each", r"the mission gives the state away.*set FIXED_EPISODES = True"),
    (kit_walk.IgnoresImageSize, "arguments", "arguments: image_size={} ignored: the", r"image_size=\(\d+, \d+\) ignored"),
    (kit_walk.AppearanceIgnored, "arguments", "arguments: appearance {} shows the default's images", r"appearance 'grey' shows the default's images on 3 seeds: it changes nothing"),
    (kit_walk.AppearanceChangesText, "arguments", "arguments: obs[{}] differs from the default appearance's", r"appearance='grey', seed 0, reset: obs\['text'\] differs from the default appearance's"),
    (kit_walk.WordingIgnored, "arguments", "arguments: wording {} gives the train wording's mission", r"wording 'held-out' gives the train wording's mission at seed 0: .* is not in other words"),
    (kit_walk.WordingKeepsFeedback, "arguments", "arguments: the text is the train wording's", r"wording='held-out', seed \d, step \d: the text is the train wording's, feedback included: the feedback is not reworded"),
    (kit_walk.WordingChangesEpisode, "arguments", "arguments: the image differs from the train wording's", r"wording='held-out', seed \d, reset: the image differs from the train wording's: a wording changes only words"),
    (kit_walk.RefusedPaysMove, "rules", "rules: a refused or invalid move ({}) paid {}, not the invalid reward {} #2", r"refused or invalid move \(.*\) paid 0.0, not the invalid reward -1.0"),
    (kit_walk.DuplicateActions, "rules", "rules: actions has duplicates", r"actions has duplicates: \['up'\]"),
    (kit_walk.AcceptsAfterEnd, "rules", "rules: a move ({}) was accepted after the episode ended", r"a move \('\w+'\) was accepted after the episode ended"),
    (kit_walk.RewardOutsideTable, "rules", "rules: reward {} is outside the REWARDS table's range", r"reward 2.0 is outside the REWARDS table's range \[-1.0, 1.0\]"),
    (kit_walk.VariantMissesEvent, "docs", "docs: REWARDS[{}] misses events", r"REWARDS\['lenient'\] misses events \['goal'\]"),
    (kit_walk.VariantMissesEvent, "rules", None, r"the event 'goal' has no reward in REWARDS\['lenient'\]"),
    (kit_walk.ProgressOutOfRange, "rules", "rules: progress {} is outside", r"progress -?\d\.\d+ is outside \[0, 1\]"),
    (kit_walk.EarlySuccess, "rules", "rules: success reported at reset", r"success reported (at reset|on a step that does not terminate)"),
    (kit_walk.StateKeyCollision, "rules", "rules: state_key {} names two different states (actions", r"state_key 'goal=\(\d, \d\)' names two different states"),
    (kit_walk.LevelsIgnored, "arguments", "arguments: level {} plays level 0's episodes", r"level 1 plays level 0's episodes"),
    (kit_walk.SaltedGoal, "determinism", "determinism: rollouts differ across processes", r"rollouts differ across processes: .*first differ after reset\(seed=\d+\): the image, the text"),
    (kit_walk.SaltedFeedback, "determinism", "determinism: rollouts differ across processes", r"rollouts differ across processes: .*first differ after step [1-9]\d*: the text, mission, actions or info$"),
    (kit_walk.OracleFreeReportsPlan, "oracle", "oracle: level {} seed {}: an oracle-free env", r"an oracle-free env \(HAS_ORACLE = False\) reports optimal_steps=\d+; it must be -1"),
    (kit_walk.OracleFreeHidesOracle, "oracle", "oracle: {} sets HAS_ORACLE = False but defines oracle_action", r"sets HAS_ORACLE = False but defines oracle_action"),
    (kit_walk.RenderStaleAfterStep, "render", "render: render() {} differs from the observed image", r"render\(\) after step 1 differs from the observed image"),
    (kit_walk.AnsiLacksState, "render", "render: the ansi render {} lacks the state", r"the ansi render after reset lacks the state \(describe\(\)\)"),
    (kit_walk.AnsiLacksActions, "render", "render: the ansi render {} lacks admissible actions", r"the ansi render after reset lacks admissible actions"),
    (kit_walk.DropsSeedWithOptions, "seeding", "seeding: reset(seed={}, options={}) plays another episode", r"reset\(seed=0, options=\{\}\) plays another episode than reset\(seed=0\): the seed is dropped"),
    (kit_walk.RefusedMoveChangesText, "rules", "rules: an invalid or refused move", r"refused move \(the edge blocks \w+\) changed the state text"),
    (kit_walk.RefusedMoveChangesText, "fuzz", "fuzz: step({}) was invalid but changed the state (its", r"step\(empty\) was invalid but changed the state \(its text description\)"),
    (kit_walk.RefusedMoveChangesActions, "rules", "rules: an invalid or refused move", r"refused move \(the edge blocks \w+\) changed the actions"),
    (kit_walk.RefusedMoveChangesActions, "fuzz", "fuzz: step({}) was invalid but changed the actions", r"step\(empty\) was invalid but changed the actions"),
    (kit_walk.RefusedMoveChangesMission, "rules", "rules: an invalid or refused move", r"refused move \(the edge blocks \w+\) changed the mission"),
    (kit_walk.RefusedMoveChangesMission, "observations", "observations: the mission changed during the episode", r"step \d: the mission changed during the episode \(.* -> .*Mind the edges\.'\)"),
    (kit_walk.RefusedMoveChangesImage, "rules", "rules: an invalid or refused move", r"refused move \(the edge blocks \w+\) changed the image"),
    (kit_walk.GarbageMoves, "fuzz", "fuzz: step({}) was invalid but changed the state_key", r"step\(empty\) was invalid but changed the state_key"),
    (kit_walk.GoalDoesNotEnd, "rules", "rules: success reported on a step", r"step \d+: success reported on a step that does not terminate the episode"),
    (kit_walk.ScaleOutOfRange, "rules", "rules: StepOutcome.scale", r"StepOutcome.scale=3.0 is outside \[0, 1\]"),
    (kit_walk.StepCostOutsideTable, "rules", "rules: reward {} is not REWARDS", r"reward -0.25 is not REWARDS\[..\]\['move'\] \* scale = 0.0"),
    (kit_walk.IntReward, "rules", "rules: reward {} is not a finite float", r"reward -?[01] is not a finite float"),
    (kit_walk.IntReward, "fuzz", "fuzz: step({}) gave reward", r"step\(empty\) gave reward -1$"),
    (kit_walk.MovesAfterEnd, "rules", "rules: a move after the episode ended changed the state", r"a move after the episode ended changed the state"),
    (kit_walk.ForgetsTheEnd, "rules", "rules: a step after the episode ended did not report", r"a step after the episode ended did not report the end again"),
    (kit_walk.PaysAfterEnd, "rules", "rules: a step after the episode ended paid", r"a step after the episode ended paid 0.0, not the invalid reward"),
    (kit_walk.InfoOptimalDiffers, "oracle", "oracle: info['optimal_steps']", r"info\['optimal_steps'\]=(\d+) at reset, but optimal_steps=(?!\1)\d+"),
    (kit_walk.ChanceWithPlan, "oracle", "oracle: a game of chance", r"a game of chance \(CHANCE\) reports optimal_steps=\d+; it has no fixed plan"),
    (kit_walk.OracleBumps, "oracle", "oracle: oracle action invalid", r"oracle action invalid: .*'error': 'the edge blocks \w+'"),
    (kit_walk.OracleDithers, "oracle", "oracle: the oracle failed a solvable episode", r"level 1 seed \d+: the oracle failed a solvable episode"),
    (kit_walk.OracleFreeUndocumented, "oracle", "oracle: {} sets HAS_ORACLE = False but its docstring", r"OracleFreeUndocumented sets HAS_ORACLE = False but its docstring .* does not say 'oracle-free'"),
    (kit_walk.AnsiLacksMission, "render", "render: the ansi render {} lacks the mission", r"the ansi render after reset lacks the mission"),
    (kit_walk.HumanRenderReturnsFrame, "render", "render: human render must return None", r"human render must return None"),
    (kit_walk.FloatFrame, "render", "render: bad rgb_array frame", r"bad rgb_array frame after reset"),
    (kit_walk.FloatFrame, "api", "api: check_env warned", r"check_env warned in obs_mode='image\+text': .*RGB-array rendering should return a numpy array with dtype uint8"),
    (kit_walk.FlickeringView, "render", "render: render() of an overridden _view", r"render\(\) of an overridden _view after reset changes between calls"),
    (kit_walk.RenderIgnoresImageSize, "arguments", "arguments: image_size={} ignored by render()", r"image_size=\(\d+, \d+\) ignored by render\(\): \(32, 32, 3\)"),
    (kit_walk.TextModeDrawsImage, "arguments", "arguments: obs_mode='text' must give a black image", r"obs_mode='text' must give a black image"),
    (kit_walk.TextModeNoText, "arguments", "arguments: obs_mode='text' gave no text", r"obs_mode='text' gave no text"),
    (kit_walk.ImageModeBlack, "arguments", "arguments: obs_mode='image' gave a black image", r"obs_mode='image' gave a black image"),
    (kit_walk.ImageModeLeakAtReset, "arguments", "arguments: obs_mode='image' must carry no state", r"obs_mode='image' must carry no state in text at reset, got 'Agent: row"),
    (kit_walk.AppearanceMovesGoal, "arguments", "arguments: the state differs from the default appearance's", r"appearance='grey', seed 0, reset: the state differs from the default appearance's"),
    (kit_walk.AppearancePays, "arguments", "arguments: seed {}, step {}: the appearances paid", r"the appearances paid different rewards \[0.5, 1.0\]"),
    (kit_walk.WordingRenamesActions, "arguments", "arguments: obs['actions'] differs from the train wording's", r"wording='held-out', seed 0, reset: obs\['actions'\] differs from the train wording's"),
    (kit_walk.WordingChangesProgress, "arguments", "arguments: info[{}] differs from the train wording's", r"info\['progress'\] differs from the train wording's"),
    (kit_walk.WordingPays, "arguments", "arguments: seed {}, step {}: the wordings ended differently", r"the wordings ended differently \(reward, terminated, truncated\): \[\(0.5, True, False\), \(1.0, True, False\)\]"),
    (kit_walk.ReportsLevelZero, "arguments", "arguments: reset(options={'level'", r"reset\(options=\{'level': 1\}\) reported level 0"),
    (kit_walk.ForgivingAppearance, "arguments", "arguments: make({}={}) was accepted", r"make\(appearance='nope'\) was accepted"),
    (kit_walk.VagueArguments, "arguments", "arguments: make({}={}) raised a ValueError", r"make\(appearance='nope'\) raised a ValueError that does not name 'appearance': bad argument"),
    (kit_walk.IgnoresUnknownOptions, "arguments", "arguments: reset(options={}) was accepted", r"reset\(options=\{'unknown_option': 1\}\) was accepted"),
    (kit_walk.VagueResetErrors, "arguments", "arguments: reset(options={}) error does not name", r"reset\(options=\{'level': 10000\}\) error does not name the option: bad reset"),
    (kit_walk.SeedDoesNotRepeat, "seeding", "seeding: seed {} did not repeat", r"seed 0 did not repeat$"),
    (kit_walk.KeyCountsResets, "seeding", "seeding: seed {} did not repeat its state_key", r"seed 0 did not repeat its state_key"),
    (kit_walk.SeedsIgnored, "seeding", "seeding: {} different seeds all gave", r"20 different seeds all gave the same first observation"),
    (kit_walk.EchoesOutput, "fuzz", "fuzz: step({}) echoed", r"step\(huge\) echoed \d{7} characters into text"),
    (kit_walk.SilentInvalid, "fuzz", "fuzz: step({}): no feedback in text", r"step\(empty\): no feedback in text"),
    (kit_walk.FirstWordOnly, "fuzz", "fuzz: step({}) raised", r"step\(empty\) raised IndexError"),
    (kit_walk.GuessesGarbage, "fuzz", "fuzz: step({}) was accepted as", r"step\(empty\) was accepted as 'up'"),
    (kit_walk.UnconsumedInvalid, "fuzz", "fuzz: step({}) did not consume a step", r"step\(empty\) did not consume a step"),
    (kit_walk.RefusedPaysMove, "fuzz", "fuzz: step({}) was invalid but paid", r"step\(empty\) was invalid but paid 0.0, not the invalid reward -1.0"),
    (kit_walk.BadActionInfo, "fuzz", "fuzz: step({}): bad info['action']", r"step\(empty\): bad info\['action'\] .*'length'"),
    (kit_walk.InvalidWithoutError, "fuzz", "fuzz: step({}): invalid without an error", r"step\(empty\): invalid without an error"),
    (kit_walk.SaysFreeText, "fuzz", "fuzz: step({}) parsed", r"step\(prompt_injection\) parsed 'say', which is not admissible"),
    (kit_walk.NoInvalidEvent, "docs", "docs: REWARDS[{}] has no 'invalid' event", r"REWARDS\['default'\] has no 'invalid' event"),
    (kit_walk.UndocumentedWalk, "docs", "docs: {}'s docstring lacks the sections", r"UndocumentedWalk's docstring lacks the sections \['Description', .*'Rewards'"),
    (kit_walk.CardListsOneLevel, "docs", "docs: card lists", r"card lists 1 levels, the env has 2"),
    (kit_walk.CardDefaultsToLevelOne, "docs", "docs: card and env disagree on the default level", r"card and env disagree on the default level"),
    (kit_walk.CardMissesVariant, "docs", "docs: card reward variants", r"card reward variants \('default',\) != \('default', 'lenient'\)"),
    (kit_walk.PickleLosesGoal, "pickle", "api: pickled env diverged", r"pickled env diverged$"),
    (kit_walk.PickleForgetsMoves, "pickle", "api: pickled env diverged: {} != {}", r"pickled env diverged: \(0.5, True, False, "),
    (kit_walk.PlainGymWalk, "seeding", "common: {} does not derive from rl4vlm_gym.VLMEnv", r"PlainGymWalk does not derive from rl4vlm_gym.VLMEnv"),
    (kit_walk.MissionNamesGoal, "observations", "observations: the mission gives the state away in other words", r"seed \d+, reset: the mission gives the state away in other words: 'Walk to row \d, column \d: .*' holds the value of the state line 'Goal: row \d, column \d'"),
    (kit_walk.FeedbackSaysWhere, "observations", "observations: obs_mode='image' gives the state away", r"step \d: obs_mode='image' gives the state away in obs\['text'\] in other words: 'You moved to row \d, column \d\.' holds the value of the state line 'Agent: row \d, column \d'"),
    (kit_walk.MissionCountsSteps, "observations", "observations: the mission gives the plan away", r"the mission gives the plan away: each of the \d+ missions seen at several resets comes with a single optimal_steps"),
    (kit_walk.MissionPointsTheWay, "observations", "observations: the mission gives the plan away", r"the mission gives the plan away: each of the \d+ missions seen at several resets comes with a single first oracle move"),
    (kit_walk.DetourOnLevelOne, "oracle", "oracle: optimal_steps={}, but {} solves the episode", r"level 1 seed \d+: optimal_steps=\d+, but \[.*\] solves the episode in \d+ steps \(optimal_steps counts a detour\)"),
    (kit_walk.KeyLeavesOutBattery, "rules", "rules: state_key {} names two different states: after", r"state_key 'agent=\(\d, \d\)\|goal=\(\d, \d\)' names two different states: after \[.*\], .* differ .*: the key leaves out part of the state"),
    (kit_walk.NumberedText, "vector", "vector: SyncVectorEnv's first text", r"SyncVectorEnv's first text differs from a single env's"),
    (kit_walk.NumberedImage, "vector", "vector: SyncVectorEnv's first image", r"SyncVectorEnv's first image differs"),
    (kit_walk.ForkedActions, "vector", "vector: {} actions differ", r"AsyncVectorEnv\(context='fork', shared_memory=True\) actions differ from SyncVectorEnv's"),
    (kit_walk.ForkedImage, "vector", "vector: {} image differs", r"AsyncVectorEnv\(context='fork', shared_memory=True\) image differs from SyncVectorEnv's"),
    (kit_walk.ForkedTruncates, "vector", "vector: {} rewards or flags differ", r"AsyncVectorEnv\(context='fork', shared_memory=True\) rewards or flags differ"),
    (kit_walk.ChanceWithPlan, "decisions", "decisions: a game of chance", r"reset: a game of chance \(CHANCE\) gives steps_to_go=\d+; it has no fixed plan length"),
    (kit_walk.NoDecisions, "decisions", "decisions: {} has an oracle but no decision facts", r"NoDecisions has an oracle but no decision facts; override _decision or give the reason"),
    (kit_walk.OptimalOutOfOrder, "decisions", "decisions: optimal_actions {} must be distinct", r"optimal_actions \['(left|right)', '(up|down)'\] must be distinct admissible actions, at least one, in the order of obs\['actions'\]"),
    (kit_walk.FactsWithoutReason, "decisions", "decisions: steps_to_go={}, optimal_actions={} without a reason", r"steps_to_go=-1, optimal_actions=None without a reason \(None\)"),
    (kit_walk.HalfFacts, "decisions", "decisions: optimal_actions={} but steps_to_go={}", r"optimal_actions=\['\w+'.*\] but steps_to_go=-1: a deterministic env knows both or neither"),
    (kit_walk.StepsOffByOne, "decisions", "decisions: steps_to_go={} at reset", r"steps_to_go=(\d+) at reset, but optimal_steps=\d+"),
    (kit_walk.UnsolvableAtReset, "decisions", "decisions: steps_to_go={} at reset", r"level 1 seed \d+: steps_to_go=-1 at reset, but optimal_steps=\d+"),
    (kit_walk.OracleNotOptimal, "decisions", "decisions: the oracle's action", r"the oracle's action '(up|down)' is not among optimal_actions \['(left|right)'\]"),
    (kit_walk.SuboptimalListed, "decisions", "decisions: {} ({}) {} among optimal_actions", r"'\w+' \(valid\) is among optimal_actions \[.*\], and steps_to_go went (\d) -> (\d): exactly"),
    (kit_walk.OnlyOracleListed, "decisions", "decisions: {} ({}) {} among optimal_actions", r"'\w+' \(valid\) is not among optimal_actions \['\w+'\], and steps_to_go went (\d) -> (\d): exactly"),
    (kit_walk.ValuesDisagree, "decisions", "decisions: values {} are not finite returns", r"values \{'up': .*\} are not finite returns of admissible actions whose argmax set is optimal_actions"),
    (kit_walk.FeatureNotScalar, "decisions", "decisions: features {} must map", r"features \{'agent': \[\d, \d\]\} must map at most 16 names to ints or strings"),
    (kit_walk.HugeFacts, "decisions", "decisions: the decision facts are {} bytes", r"the decision facts are 100\d{3} bytes of JSON, over 65536"),
    (kit_walk.FeatureCountsSteps, "decisions", "decisions: an invalid step ({}) changed the decision facts", r"an invalid step \('\w+'\) changed the decision facts: .*'taken': (\d+).* -> .*'taken': (?!\1)\d+"),
]

# Fewer steps where they cost processes: every broken env is caught within them.
CHEAP = {"vector": {"steps": 2}}
# Broken envs caught only in the forked workers of the vector check's fresh process (a second each): CI's, not the inner loop's.
SLOW = [defect for defect in BROKEN_LAWS if defect[0] in (kit_walk.ForkedActions, kit_walk.ForkedImage, kit_walk.ForkedTruncates)]


@pytest.mark.parametrize(
    ("cls", "check", "law", "pattern"),
    [
        pytest.param(*defect, id=f"{defect[0].__name__}-{defect[1]}", marks=[pytest.mark.slow] if defect in SLOW else [])
        for defect in BROKEN_LAWS
    ],
)
def test_check_names_the_defect(cls: type, check: str, law: str | None, pattern: str) -> None:
    with pytest.raises((AssertionError, KeyError)) as caught:
        CHECKS[check](env_id(cls), **CHEAP.get(check, {}))
    assert re.search(pattern, str(caught.value)), f"{check} failed {cls.__name__} for another reason: {caught.value}"
    raised = kit_laws.law_of(caught.value)
    expected = None if law is None else _law(law)
    assert raised == expected, f"{cls.__name__} broke the law {raised and raised.id!r}, not {law!r}"


# Laws a broken env breaks besides those BROKEN_LAWS names for it, each inherent to its defect (the reason says why):
# {broken env: {check: (the law, a prefix of its id as in BROKEN_LAWS, or the type of an error no law of the kit raised
# (Gymnasium's check_env's, the env's own); the reason)}}.
# Every other check passes the env (test_a_broken_env_fails_only_its_own_laws).
_ENV_REFUSED = ("KeyError", "VLMEnv refuses the env when it is made: every variant needs every event, 'invalid' included")
_NOT_VLMENV = ("common: {} does not derive from rl4vlm_gym.VLMEnv", "every check but api and vector reads the env through VLMEnv's API")
ALSO_FAILS: dict[type, dict[str, tuple[str, str]]] = {
    kit_walk.EarlySuccess: {
        "oracle": ("oracle: optimal_steps={}, but {} solves the episode", "success one move early is a solution one move shorter"),
    },
    kit_walk.GoalDoesNotEnd: {
        "oracle": ("oracle: oracle action invalid", "the oracle plays on past the goal, where no move of its brings it closer"),
        "decisions": ("decisions: optimal_actions {} must be distinct", "on the goal the episode goes on, and no move is nearer"),
    },
    kit_walk.PickleLosesGoal: {
        "oracle": ("oracle: optimal_steps={}, but {} solves the episode", "the search for a shorter solution plays pickled copies"),
    },
    kit_walk.RefusedMoveChangesImage: {
        "observations": ("observations: the text lacks information", "the flash is drawn, never told: so the text lacks it"),
    },
    kit_walk.ImageModeBlack: {
        "observations": ("common: the observed image differs from a fresh _render()", "the black image is not the env's frame"),
    },
    kit_walk.ImageModeLeakAtReset: {
        "observations": ("observations: obs_mode='image' carries state text", "the law over every step, reset included"),
    },
    kit_walk.HumanRenderReturnsFrame: {"api": ("api: check_env warned", "Gymnasium's check_env warns of the same defect")},
    kit_walk.SeedDoesNotRepeat: {"api": ("AssertionError", "Gymnasium's check_env resets twice with one seed")},
    kit_walk.KeyCountsResets: {"api": ("AssertionError", "Gymnasium's check_env compares the step infos (state_key) of two runs of one seed")},
    kit_walk.SeedsIgnored: {"api": ("AssertionError", "Gymnasium's check_env resets with two seeds")},
    kit_walk.SaltedGoal: {"vector": ("vector: {} text differs", "a worker that inherits nothing hashes with another salt")},
    kit_walk.SaltedFeedback: {"vector": ("vector: {} text differs", "a worker that inherits nothing hashes with another salt")},
    kit_walk.NumberedText: {
        "arguments": ("arguments: obs[{}] differs from the default appearance's", "each env made says another number"),
        "determinism": ("determinism: rollouts differ across processes", "each env made says another number"),
    },
    kit_walk.NumberedImage: {
        "arguments": ("arguments: the image differs from the train wording's", "each env made draws another number"),
        "determinism": ("determinism: rollouts differ across processes", "each env made draws another number"),
    },
    # Walk's decision facts are those of a correct Walk: each defect below breaks them too.
    kit_walk.RefusedMoveChanges: {
        "decisions": ("decisions: optimal_actions {} must be distinct", "a refused move that wraps onto the goal leaves the episode on: no move is nearer"),
    },
    kit_walk.OptimalNone: {"decisions": ("decisions: steps_to_go={} at reset", "the facts know the steps optimal_steps says do not exist")},
    kit_walk.DetourOracle: {"decisions": ("decisions: steps_to_go={} at reset", "optimal_steps counts the detour, which no decision may take")},
    kit_walk.DetourOnLevelOne: {"decisions": ("decisions: steps_to_go={} at reset", "optimal_steps counts the detour, which no decision may take")},
    kit_walk.SlowOracle: {"decisions": ("decisions: the oracle's action", "the oracle's detour moves lead away from the goal")},
    kit_walk.OracleBumps: {"decisions": ("decisions: the oracle's action", "the oracle's move into the edge is no optimal move")},
    kit_walk.OracleDithers: {"decisions": ("decisions: the oracle's action", "the oracle's dithering moves lead away from the goal")},
    kit_walk.RefusedMoveChangesActions: {
        "decisions": ("decisions: optimal_actions {} must be distinct", "the refused move reorders obs['actions']; the facts keep their order"),
    },
    kit_walk.KeyLeavesOutBattery: {
        "decisions": ("decisions: {} ({}) {} among optimal_actions", "the flat battery refuses a move the facts call optimal"),
    },
    kit_walk.NoInvalidEvent: {check: _ENV_REFUSED for check in CHECKS if check not in ("docs", "pickle", "seeding", "vector")},
    kit_walk.PlainGymWalk: {
        **{check: _NOT_VLMENV for check in CHECKS if check not in ("api", "seeding", "vector")},  # vector compares Gymnasium's API only
        "api": ("AssertionError", "Gymnasium's check_env: its reset never seeds an RNG"),
    },
}
# The checks each broken env's own laws are, with the law (None: the env's own error).
OWN_LAWS: dict[type, dict[str, str | None]] = {}
for _cls, _check, _law_prefix, _ in BROKEN_LAWS:
    OWN_LAWS.setdefault(_cls, {})[_check] = _law_prefix
# The checks the inner loop runs over every broken env (the cheapest, ~15 ms an env): the others in the slow test.
CHEAP_VERDICT = ("seeding", "pickle", "render", "docs")


def _verdict(cls: type, checks: tuple[str, ...]) -> dict[str, str]:
    """The law each of ``checks`` fails ``cls`` with (its id; the error's type for an error no law raised)."""
    failed: dict[str, str] = {}
    for check in checks:
        try:
            CHECKS[check](env_id(cls), **CHEAP.get(check, {}))
        except Exception as err:  # noqa: BLE001 - every failure is told, whatever it is
            law = kit_laws.law_of(err)
            failed[check] = law.id if law is not None else type(err).__name__
    return failed


def _expected(cls: type, checks: tuple[str, ...]) -> dict[str, str]:
    """The laws (ids) or errors (types) of ``checks`` that ``cls`` must fail: BROKEN_LAWS's and ALSO_FAILS's."""
    own = {check: "KeyError" if law is None else law for check, law in OWN_LAWS[cls].items()}  # None: the env's KeyError
    laws = {**own, **{check: law for check, (law, _) in ALSO_FAILS.get(cls, {}).items()}}
    return {check: _law(law).id if ": " in law else law for check, law in laws.items() if check in checks}


def _assert_fails_only_its_own_laws(cls: type, checks: tuple[str, ...]) -> None:
    failed, expected = _verdict(cls, checks), _expected(cls, checks)
    assert failed == expected, (
        f"{cls.__name__} breaks other laws than its own (or not its own): "
        f"unexpected {({c: f for c, f in failed.items() if expected.get(c, '-') != f})}, "
        f"not broken {({c: e for c, e in expected.items() if failed.get(c, '-') != e})}"
    )


BROKEN_ENVS = [cls for cls in OWN_LAWS if cls not in kit_walk.DECISIONS_ONLY]


@pytest.mark.slow  # ~0.35 s an env: vector's and determinism's processes, fuzz's 1 MB outputs
@pytest.mark.parametrize("cls", BROKEN_ENVS, ids=[cls.__name__ for cls in BROKEN_ENVS])
def test_a_broken_env_fails_only_its_own_laws(cls: type) -> None:
    # A broken env must break the law it is for and no other (but those ALSO_FAILS names, with the reason):
    # one that fails a second law tests a law already covered, and a law broadened to fail a correct env
    # shows here first. The checks of CHEAP_VERDICT are the inner loop's test's (below): together, every check.
    _assert_fails_only_its_own_laws(cls, tuple(c for c in CHECKS if c not in CHEAP_VERDICT))


def test_every_broken_env_fails_only_its_own_laws_in_the_cheapest_checks() -> None:
    # The inner loop's version of the slow test above: every broken env through the checks of CHEAP_VERDICT.
    for cls in BROKEN_ENVS:
        _assert_fails_only_its_own_laws(cls, CHEAP_VERDICT)


def test_every_broken_decision_env_fails_only_its_own_law() -> None:
    # They differ from Walk in _decision alone, which no check but decisions reads (the test below): every other
    # check's verdict on them is Walk's (test_every_check_passes_the_reference_env). 12 envs, ~0.1 s.
    for cls in kit_walk.DECISIONS_ONLY:
        _assert_fails_only_its_own_laws(cls, ("decisions",))


def test_only_the_decisions_check_reads_decision_facts() -> None:
    # What lets the test above skip the other checks on DECISIONS_ONLY's envs.
    readers = sorted(p.name for p in kit_laws.KIT.glob("*.py") if re.search(r"\.decision\(|_decision\b", p.read_text()))
    assert readers == ["decisions.py"], readers


def test_also_fails_names_broken_envs_and_checks_that_exist() -> None:
    assert set(ALSO_FAILS) <= set(OWN_LAWS), set(ALSO_FAILS) - set(OWN_LAWS)
    assert len(ALSO_FAILS) == len(re.findall(r"^    kit_walk\.\w+: \{", Path(__file__).read_text().split("ALSO_FAILS: dict")[1].split("\n}\n")[0], re.M)), (
        "a broken env is named twice in ALSO_FAILS: the second entry hides the first"
    )
    for cls, laws in ALSO_FAILS.items():
        assert set(laws) <= set(CHECKS) and not set(laws) & set(OWN_LAWS[cls]), (cls.__name__, sorted(laws))
        assert all(reason for _, reason in laws.values()), f"{cls.__name__}: a co-failure without its reason"


# Laws a broken env triggers in a test of its own (which checks the law with kit_laws.law_of): the test.
CAUGHT_ELSEWHERE = {
    "vector: {} did not {} within": "test_a_vector_worker_that_hangs_fails_the_check_instead_of_hanging_it (HangsInForkedWorkers)",
    "vector: {} text differs": "test_an_env_that_needs_its_owners_memory_fails_in_workers_that_inherit_nothing (NeedsItsOwnersMemory)",
    "fresh: its fresh process {} before answering": "test_fresh.py: test_a_crashing_env_fails_the_process_checks_and_the_server_serves_on",
    "oracle: {} and its view twin {} part": "tests/envs/webshop/test_webshop.py: "
    "test_the_browser_ids_oracle_check_plays_webshop_v1s_episodes_and_holds_the_two_alike (text_format put in the state key)",
}

# Laws no env can break, each with the reason.
EXEMPT = {
    "fresh: assert proc.stdin is not None": "narrows the type of the kit's own pipe for mypy; no env reaches it",
    "fresh: assert proc is not None and proc.stdout": "narrows the type of the kit's own pipe for mypy; no env reaches it",
    "fresh: {} did not finish within": "the fork server's own timeout, for any job (test_fresh.py: a sleeping job); an env "
    "that hangs is vector's law (HangsInForkedWorkers)",
    "fresh: the kit's fork server died": "the fork server itself died (killed from outside), not an env's job",
    "fresh: {} failed in its fresh process": "a job's exception that cannot be unpickled in the owner: the kit's transport",
    "rules: the event {} is not in REWARDS": "unreachable through VLMEnv.step: the base class's _reward raises KeyError "
    "naming the event first (VariantMissesEvent-rules shows it); kept for an env that overrides _reward",
    "rules: a refused or invalid move ({}) paid {}, not the invalid reward {}": "#1 is the same law for a remote env (no "
    "outcome to trace); tests/server/test_kit_remote.py serves RefusedPaysMove (#2's env) to it",
}


def test_every_law_has_a_broken_env() -> None:
    # A law that no broken env triggers can be narrowed or disabled with every kit test passing.
    covered = {_law(law).id for _, _, law, _ in BROKEN_LAWS if law is not None}
    covered |= {_law(law).id for law in CAUGHT_ELSEWHERE}
    exempt = {_law(law).id for law in EXEMPT}
    missing = [law.id for law in kit_laws.kit_laws() if law.id not in covered | exempt]
    assert not missing, f"{len(missing)} laws of the kit have no broken env in tests/kit: {missing}"
    assert not covered & exempt, f"exempt laws that a broken env triggers: {sorted(covered & exempt)}"


def _law(prefix: str) -> kit_laws.Law:
    """The law whose id is ``prefix``, or else the one law whose id starts with it."""
    found = [law for law in kit_laws.kit_laws() if law.id == prefix] or [law for law in kit_laws.kit_laws() if law.id.startswith(prefix)]
    assert len(found) == 1, f"{len(found)} laws have ids starting with {prefix!r}: {[law.id for law in found]}"
    return found[0]


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_check_passes_the_reference_env(check: str) -> None:
    CHECKS[check](env_id(Walk))


def test_observations_lets_replayed_games_name_their_start() -> None:
    # An env replaying recorded games (FIXED_EPISODES, like ALFWorld's game files) has one start
    # state per mission by design; the same env unflagged fails (MissionNamesGame, in BROKEN_LAWS), and a
    # generated env whose mission leaks the state still fails (MissionGivesAway).
    assert "missions of replayed games" in CHECKS["observations"](env_id(kit_walk.ReplayedGames))


# fuzz and vector never ask an env for its oracle (hostile outputs; random admissible actions), and OracleFree differs
# from Walk only in its oracle: their verdicts on it are test_every_check_passes_the_reference_env's (0.3-0.7 s saved).
ORACLE_FREE_CHECKS = [check for check in CHECKS if check not in ("fuzz", "vector")]


@pytest.mark.parametrize("check", ORACLE_FREE_CHECKS)
def test_every_check_passes_an_oracle_free_env_moving_without_an_oracle(check: str) -> None:
    report = CHECKS[check](env_id(kit_walk.OracleFree))
    if check == "oracle":
        assert report.startswith("SKIPPED: oracle-free"), report


ORACLE_DEFECTS = [(cls, check, pattern) for cls, check, _, pattern in BROKEN_LAWS if check == "oracle"]


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
    broken = {cls for cls, _, _, _ in BROKEN_LAWS} | {kit_walk.HangsInForkedWorkers, kit_walk.FirstOfItsProcess, kit_walk.CrashesInFreshProcess}
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

    # The forkserver started (warm, as after any vector check): its worker, which does not hang, starts well within
    # the short timeout, so only the forked workers' hang is reported (the check waits the timeout for them).
    walk = env_id(Walk)
    vector._vector_rollout(vector._fresh_workers, vector._Maker(walk, vector._spec_json(walk), {}), [0], 0, "warm-up")
    monkeypatch.setattr(vector, "VECTOR_TIMEOUT_S", 1.0)
    with pytest.raises(AssertionError, match=r"AsyncVectorEnv\(context='fork', shared_memory=True\) did not start within 1 s: a worker hangs") as caught:
        vector.check_vector(env_id(kit_walk.HangsInForkedWorkers))
    assert kit_laws.law_of(caught.value) == _law("vector: {} did not {} within")  # CAUGHT_ELSEWHERE counts on it


def test_an_env_that_needs_its_owners_memory_fails_in_workers_that_inherit_nothing() -> None:
    # The run that stands for spawn: forkserver's workers import the env's module anew, as spawned ones do.
    with pytest.raises(AssertionError, match=r"AsyncVectorEnv\(context='forkserver', shared_memory=False\) text differs") as caught:
        CHECKS["vector"](env_id(kit_walk.NeedsItsOwnersMemory))
    assert kit_laws.law_of(caught.value) == _law("vector: {} text differs")  # CAUGHT_ELSEWHERE counts on it


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


@pytest.mark.parametrize("check", [c for c in CHECKS if c not in ("determinism", "vector")])  # those play in other processes
def test_a_check_closes_every_env_it_makes_or_copies(check: str) -> None:
    counted = kit_walk.CountsClosed
    counted.made = counted.closed = 0
    CHECKS[check](env_id(counted))
    assert counted.closed == counted.made, f"{check} made or copied {counted.made} envs and closed {counted.closed}"
