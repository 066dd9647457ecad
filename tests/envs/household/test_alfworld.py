"""rl4vlm/ALFWorld-v0 on real ALFWorld games: ALFWorld's text, the expert, the view, discovery, pickling.

The games come from ``$ALFWORLD_DATA`` or the six sample games in ``tests/data/alfworld_sample``
(one per task type, shipped with the tests); the module is skipped when neither holds a game file (and fails
when game files are there but discovery finds no game of some task type). Kitchen games
cost several seconds at their first reset (the planner), so most tests play the bedroom ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest

DATA_VARIABLE = os.environ.get("ALFWORLD_DATA")  # read first: importing alfworld sets it to its default
pytest.importorskip("alfworld", reason="the household extra (alfworld, textworld) is not installed")

from rl4vlm_gym.core import NOT_COMPUTED, MissingDataError  # noqa: E402
from rl4vlm_gym.envs.household.alfworld import GAME_FILE, ALFWorld, find_games, task_type  # noqa: E402
from rl4vlm_gym.envs.household.goals import TASK_TYPES  # noqa: E402
from rl4vlm_gym.envs.household.view import overview, receptacle_sentence  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "alfworld_sample"  # shipped (tests/data/README.md)
DATA = Path(DATA_VARIABLE) if DATA_VARIABLE else SAMPLE

pytestmark = pytest.mark.slow  # ALFWorld's engine: seconds a reset, a planner for the expert

def _first_game_of_each_task() -> dict[str, str]:
    """The first game of each task type in DATA. Skipped only when DATA holds no game file at all
    (absent, or an empty folder: importing alfworld creates ``$ALFWORLD_DATA``); when game files are
    there, games discovery does not find (a discovery bug, or broken data) fail the module loudly. It
    used to skip, which hid discovery errors; tests/envs/household/test_discovery.py checks discovery
    without data."""
    if not DATA.is_dir() or next(DATA.rglob(GAME_FILE), None) is None:
        pytest.skip(
            f"no ALFWorld game files ({GAME_FILE}) in {DATA.resolve()}: set ALFWORLD_DATA to ALFWorld's data "
            f"(the repository ships samples at {SAMPLE})",
            allow_module_level=True,
        )
    found = find_games(DATA)  # MissingDataError: a folder with no game discovery finds
    games = {task: next((g for g in found if task_type(g) == task), None) for task in TASK_TYPES}
    missing = [task for task, game in games.items() if game is None]
    if missing:
        raise MissingDataError(f"no ALFWorld games of {', '.join(missing)} among the {len(found)} found in {DATA.resolve()}")
    return games  # type: ignore[return-value]


GAMES = _first_game_of_each_task()
"""The first game of each task type."""
PICK = "pick_and_place_simple"  # a bedroom game with a 4-step plan: the cheap one to play
INVALID = ("take unicorn from moon", "", "\x00\ufffd garbage ]]}{", '{"action": "fly to the moon"}')


def make(**kwargs: object) -> ALFWorld:
    return ALFWorld(data_dir=DATA, **{"obs_mode": "text", **kwargs})  # type: ignore[arg-type]


def play(env: ALFWorld, task: str = PICK) -> dict:
    _, info = env.reset(options={"game": GAMES[task]})
    return info


def snapshot(env: ALFWorld) -> tuple:
    """Everything an invalid action must leave alone."""
    return env._state_key(), env._facts, env.admissible_actions, env._view_state(), list(env._log)


# -- ALFWorld's text and the expert ------------------------------------------------------------------


@pytest.mark.parametrize("task", TASK_TYPES)
def test_expert_wins_each_game_in_optimal_steps_and_invalid_commands_change_nothing(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.household import alfworld as module

    searches = []  # the default oracle (the exact planner) never starts Fast Downward in a game it models
    monkeypatch.setattr(module, "call_bounded", lambda fn, **bounds: searches.append(bounds))
    env = make()
    obs, info = env.reset(options={"game": GAMES[task]})
    assert obs["text"].startswith("-= Welcome to TextWorld, ALFRED! =-")
    assert obs["text"].endswith(f"Your task is to: {obs['mission']}") and obs["mission"]
    view = env._view_state()
    assert view.place is None and overview(view.receptacles) in obs["text"]  # ALFWorld's listing order
    assert view.room in ("kitchen", "livingroom", "bedroom", "bathroom")
    assert info["optimal_steps"] == NOT_COMPUTED  # the planner runs only when asked
    optimal, steps, rewards = env.optimal_steps, 0, []
    assert optimal > 0
    terminated = False
    while not terminated:
        action = env.oracle_action()
        obs, reward, terminated, truncated, info = env.step(action)
        steps, rewards = steps + 1, [*rewards, reward]
        assert info["action"]["valid"] and not truncated and steps <= optimal
        if steps == 1:  # once at a receptacle: an invalid command leaves every part of the state alone
            before = snapshot(env)
            invalid = env.step("take unicorn 1 from moon 1")
            assert invalid[0]["text"] == "Nothing happens." and not invalid[4]["action"]["valid"]
            assert snapshot(env) == before
        view = env._view_state()
        if action.startswith(("go to ", "open ")):  # the view says what ALFWorld's feedback says
            assert view.place == (action[6:] if action.startswith("go to ") else action[5:])
            names = tuple(item.name for item in view.contents)
            assert receptacle_sentence(view.place, view.openable, view.is_open, names) in obs["text"]
    assert steps == optimal and info["success"] and info["progress"] == 1.0
    assert rewards == [0.0] * (optimal - 1) + [1.0]
    assert env.elapsed_steps == optimal + 1, "the invalid command costs a step"
    assert not searches
    env.close()


@pytest.mark.parametrize("task", [PICK, "pick_two_obj_and_place"])
def test_text_actions_and_expert_plan_equal_alfworlds_own_env(task: str) -> None:
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredExpert, AlfredExpertType, AlfredInfos

    # ALFWorld's set-up (AlfredTWEnv.init_env), with the planner expert passed by keyword
    request = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile", "expert_plan"])
    wrappers = [AlfredDemangler(shuffle=False), AlfredInfos, AlfredExpert(expert_type=AlfredExpertType.PLANNER)]
    raw = textworld.gym.make(textworld.gym.register_game(GAMES[task], request, max_episode_steps=50, wrappers=wrappers))
    text, infos = raw.reset()
    env = make(planner="fast-downward")
    obs, info = env.reset(options={"game": GAMES[task]})
    assert obs["text"] == text
    assert env.optimal_steps == len(infos["extra.expert_plan"])
    done = False
    while not done:
        assert obs["actions"] == tuple(infos["admissible_commands"])
        action = env.oracle_action()
        assert action == infos["extra.expert_plan"][0]
        text, score, done, infos = raw.step(action)
        obs, reward, terminated, _, info = env.step(action)
        assert obs["text"] == text and reward == score and terminated == done == infos["won"]
    raw.close()
    env.close()


def test_planner_runs_once_and_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.household import alfworld as module

    calls = []
    real = module.call_bounded
    monkeypatch.setattr(module, "call_bounded", lambda fn, **bounds: calls.append(bounds) or real(fn, **bounds))
    monkeypatch.setattr(module, "_plans", {})
    eager = make(optimal_steps_at_reset=True, planner="fast-downward")
    _, info = eager.reset(options={"game": GAMES[PICK]})
    assert len(calls) == 1 and info["optimal_steps"] == eager.optimal_steps == 4
    eager.close()

    monkeypatch.setattr(module, "_plans", {})
    calls.clear()
    env = make(planner="fast-downward")
    obs, info = env.reset(options={"game": GAMES[PICK]})
    obs, _, _, _, info = env.step("look")
    assert info["optimal_steps"] == NOT_COMPUTED and not calls
    assert env.optimal_steps == 4 and len(calls) == 1  # asked after a step: still the start's plan
    assert env.optimal_steps == 4 and len(calls) == 1
    assert env.step("look")[4]["optimal_steps"] == 4  # once asked, every info carries it
    env.reset(options={"game": GAMES[PICK]})
    assert env.optimal_steps == 4 and len(calls) == 1  # a game's first plan is cached
    for _ in range(4):  # the oracle follows that same plan
        env.step(env.oracle_action())
    assert env.unwrapped._won and len(calls) == 1
    env.close()


def test_a_replan_from_a_state_planned_before_is_the_planners_own_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from collections import OrderedDict

    from rl4vlm_gym.envs.household import alfworld as module

    calls = []
    real = module.call_bounded
    monkeypatch.setattr(module, "call_bounded", lambda fn, **bounds: calls.append(bounds) or real(fn, **bounds))
    monkeypatch.setattr(module, "_replans", OrderedDict())
    env = make(planner="fast-downward")
    play(env)
    places = [a for a in env.admissible_actions if a.startswith("go to ")][:2]
    answers, states, keys = [], set(), set()
    for path in (["look"], ["look", "look"], ["inventory"], ["look"]):  # one state by three paths (and the first again)
        play(env)
        for command in path:
            env.step(command)
        states.add(module._planner_state(env._tw))
        keys.add(env._state_key())
        answers.append(env.oracle_action())
    # look and inventory mark different things checked, facts no search reads (not in the replanning task)
    assert len(keys) == 2 and len(states) == 1, "the paths lead to two game states, one state of the planner"
    assert answers[0] == answers[1] == answers[2] == answers[3] and len(calls) == 1, "the same state is planned once"
    cached = {}
    for place in (*places, *places):  # two other states: planned once each
        play(env)
        env.step(place)
        cached[place] = env.oracle_action()
    assert len(calls) == 3, "each new state is planned, each seen one is not"
    for path in ([places[0]], [places[1]], ["inventory"]):  # the planner's own answer, in a process that never planned from there
        monkeypatch.setattr(module, "_replans", OrderedDict())
        play(env)
        for command in path:
            env.step(command)
        assert env.oracle_action() == (cached[path[0]] if path[0] in cached else answers[0])
    assert len(calls) == 6
    env.close()


def test_back_on_the_plan_after_a_detour_the_oracle_takes_up_its_plan_without_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    from collections import OrderedDict

    from rl4vlm_gym.envs.household import alfworld as module

    calls = []
    real = module.call_bounded
    monkeypatch.setattr(module, "call_bounded", lambda fn, **bounds: calls.append(bounds) or real(fn, **bounds))
    monkeypatch.setattr(module, "_plans", {})
    monkeypatch.setattr(module, "_replans", OrderedDict())
    env = make(planner="fast-downward")
    play(env)
    plan = [env.oracle_action()]
    assert len(calls) == 1  # the start's plan
    env.step(plan[0])
    here = module._planner_state(env._tw)
    away = next(a for a in env.admissible_actions if a.startswith("go to ") and a != plan[0])
    for detour in (["look"], ["inventory", "look"], [away, plan[0]]):  # a state left unchanged, or left and found again
        for command in detour:
            assert env.step(command)[4]["action"]["valid"]
        assert module._planner_state(env._tw) == here, f"{detour} leads back to the plan's state"
        plan.append(env.oracle_action())
        assert plan[-1] == plan[1] and len(calls) == 1, "the rest of the plan, without a new search"
    while not env.unwrapped._won:  # and it still wins in the plan's length
        env.step(env.oracle_action())
    assert env.optimal_steps == 4 and len(calls) == 1
    steps_played = 1 + 1 + 2 + 2 + 3
    assert env.elapsed_steps == steps_played
    env.step(away)  # a state off every plan of the episode: planned (after the win, "look")
    play(env)
    env.step(plan[0])
    env.step("look")  # a new episode remembers no plan: this state is planned afresh
    env.oracle_action()
    assert len(calls) == 2
    env.close()


def test_planner_past_its_time_bound_hands_over_to_alfworlds_handcoded_expert(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the exact planner does not know the game's goal either (here: made to know none)."""
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredExpert, AlfredExpertType, AlfredInfos

    from rl4vlm_gym.envs.household import alfworld as module

    monkeypatch.setattr(module, "_plans", {})
    monkeypatch.setattr(module, "_gave_up", {})
    monkeypatch.setattr(module, "_goals", {})
    monkeypatch.setattr(module, "goal_of", lambda task, problem: None)
    request = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile", "expert_plan"])
    wrappers = [AlfredDemangler(shuffle=False), AlfredInfos, AlfredExpert(expert_type=AlfredExpertType.HANDCODED)]
    raw = textworld.gym.make(textworld.gym.register_game(GAMES[PICK], request, max_episode_steps=50, wrappers=wrappers))
    _, infos = raw.reset()
    env = make(planner_timeout=0.001)
    env.reset(options={"game": GAMES[PICK]})
    random.seed(zlib.crc32(f"{env.game}:1".encode()))
    _, _, _, infos = raw.step("look")
    env.step("look")  # the handcoded expert joins after a step: it is shown the episode so far
    assert env.optimal_steps == -1  # unknown: the planner gave up
    for step in range(2, 14):
        action = env.oracle_action()
        assert action == infos["extra.expert_plan"][0]
        random.seed(zlib.crc32(f"{env.game}:{step}".encode()))  # it draws from `random` when it loops: as ours seeds it
        _, _, done, infos = raw.step(action)
        _, _, terminated, _, info = env.step(action)
        assert terminated == done and info["optimal_steps"] == -1
        if done:
            break
    raw.close()
    env.close()


# Walk states per sample game whose lengths the planners compare. In the kitchens Fast Downward's
# breadth-first search takes 3-6 CPU seconds from 6-7 steps away, 0.1-0.8 s from 5: there, only the
# states at most KITCHEN_DEPTH steps from the goal (benchmarks/alfworld_planner_agreement.py: all).
WALK, KITCHEN_DEPTH = 10, 5


@pytest.mark.parametrize("task", TASK_TYPES)
def test_exact_plans_are_as_short_as_fast_downwards_shortest_and_win(task: str) -> None:
    """The exact planner (the default oracle) against Fast Downward, the independent cross-check: from
    the start and the states of a seeded walk (random commands and the oracle's, in runs), its plan is
    exactly as long as Fast Downward's shortest (the expert's breadth-first search with unit costs);
    where it finds none, neither does Fast Downward; and its plan from the walk's last state wins in
    exactly that many steps."""
    env = make()
    obs, _ = env.reset(options={"game": GAMES[task]})
    kitchen = env._view_state().room == "kitchen"
    rng, compared = np.random.default_rng(zlib.crc32(task.encode())), []
    for step in range(WALK + 1):
        exact, reason = env._exact_plan()
        assert exact is not None or reason == "unsolvable from here", reason
        if not kitchen or (exact is not None and len(exact) <= KITCHEN_DEPTH):
            fd = env._shortest_expert_plan(seconds=120)
            assert (fd is None, len(fd or ())) == (exact is None, len(exact or ())), f"step {step}: Fast Downward {fd}, exact {exact}"
            compared.append(len(exact or ()))
        if step == WALK or env._won:
            break
        runs = step // 2 % 2 == 0  # two random commands, then two of the oracle's
        action = obs["actions"][int(rng.integers(len(obs["actions"])))] if runs else env.oracle_action()
        obs = env.step(action)[0]
    assert len(compared) >= 3, f"only {compared} compared"
    rest = env._exact_plan()[0]
    if rest:
        for k, command in enumerate(rest):
            assert command in env.admissible_actions and env.step(command)[2] == (k == len(rest) - 1)
        assert env._won
    env.close()


def test_where_the_exact_planner_does_not_model_the_game_fast_downward_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default oracle's fallback: a game whose goal the exact planner does not read (here: made to
    read none) is planned by Fast Downward, once, and won in its plan's length; the decision facts say
    why they are unknown rather than guess."""
    from rl4vlm_gym.envs.household import alfworld as module

    calls = []
    real = module.call_bounded
    monkeypatch.setattr(module, "call_bounded", lambda fn, **bounds: calls.append(bounds) or real(fn, **bounds))
    for name in ("_plans", "_gave_up", "_goals"):
        monkeypatch.setattr(module, name, {})
    monkeypatch.setattr(module, "goal_of", lambda task, problem: None)
    env = make()
    play(env)
    assert env.optimal_steps == 4 and len(calls) == 1
    assert env.decision()["steps_to_go"] == -1 and "goal" in env.decision()["reason"]
    for _ in range(4):
        env.step(env.oracle_action())
    assert env._won and len(calls) == 1
    env.close()


def test_planner_past_its_memory_bound_hands_over_to_the_exact_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.household import alfworld as module

    monkeypatch.setattr(module, "_plans", {})
    monkeypatch.setattr(module, "_gave_up", {})
    env = make(planner="fast-downward", planner_memory_mb=1)  # a bedroom game's plan fits in what the child starts with: a kitchen
    env.reset(options={"game": GAMES["pick_heat_then_place_in_recep"]})
    assert env.optimal_steps == 7 and env._gave_up  # the exact planner's shortest plan (Fast Downward's is 7 too)
    for step in range(7):
        facts, action = env.decision(), env.oracle_action()
        assert facts["steps_to_go"] == 7 - step and action in facts["optimal_actions"]
        terminated = env.step(action)[2]
    assert terminated and env._won
    env.close()


def test_decision_facts_along_the_oracle_and_a_random_walk_match_the_game_and_fast_downward() -> None:
    """On the pick-two bedroom game (unit costs: Fast Downward's plans are the shortest): the exact
    planner's model of every command taken equals the game's next facts; steps_to_go equals Fast
    Downward's plan length from walk states; the facts' laws hold; and the exact plan, played from the
    walk's last state, wins in steps_to_go steps."""
    from rl4vlm_gym.envs.household.alfworld_oracle import Board

    env = make()
    play(env, "pick_two_obj_and_place")
    assert env.decision()["steps_to_go"] == env.optimal_steps == 8
    rng = np.random.default_rng(1)
    before = env.decision()
    for step in range(12):
        model = env._board()
        action = env.oracle_action() if step % 3 == 2 else env.admissible_actions[int(rng.integers(len(env.admissible_actions)))]
        if action.startswith("take ") and not action.startswith("take book"):
            action = env.oracle_action()  # an object no receptacle can hold would end every plan
        model.apply(action)
        env.step(action)
        assert env._board().key() == model.key(), f"the model of {action!r} is not the game's"
        after = env.decision()
        assert (action in before["optimal_actions"]) == (after["steps_to_go"] == before["steps_to_go"] - 1)
        if step == 7:
            assert after["steps_to_go"] == len(env._bounded_plan()), "Fast Downward's plan is as long"
        before = after
    rest = list(env._exact_plan()[0] or ())
    assert len(rest) == before["steps_to_go"] > 0
    for command in rest:
        assert command in env.admissible_actions
        terminated = env.step(command)[2]
    assert terminated and env._won
    assert isinstance(Board.operations(env.admissible_actions), dict)
    env.close()


def test_invalid_commands_say_nothing_happens_and_change_nothing() -> None:
    env = make(obs_mode="image+text")
    play(env)
    obs, *_ = env.step(env.oracle_action())  # at a receptacle, so the view has contents
    before, image = snapshot(env), obs["image"]
    for command in INVALID:
        obs, reward, terminated, truncated, info = env.step(command)
        assert obs["text"] == "Nothing happens."
        assert not info["action"]["valid"] and info["action"]["error"]
        assert reward == 0.0 and not terminated and not truncated
        assert snapshot(env) == before and info["state_key"] == before[0]
        assert np.array_equal(obs["image"], image)
    env.close()


def test_equal_states_give_equal_keys() -> None:
    env = make()
    _, info = env.reset(options={"game": GAMES[PICK]})
    places = [a[6:] for a in env.admissible_actions if a.startswith("go to ")][:2]
    keys = [env.step(f"go to {place}")[-1]["state_key"] for place in (*places, places[0])]
    assert keys[0] == keys[2] != keys[1] and info["state_key"] not in keys
    env.close()


# -- The image ---------------------------------------------------------------------------------------

_DIGEST = """
import hashlib, json, sys
from rl4vlm_gym.envs.household.alfworld import ALFWorld
env = ALFWorld(data_dir=sys.argv[1], task_types=[sys.argv[2]], obs_mode="image+text")
obs, info = env.reset(seed=3)
first = obs["image"]
obs, *_ = env.step(env.oracle_action())
print(json.dumps([hashlib.sha256(image.tobytes()).hexdigest() for image in (first, obs["image"])] + [obs["text"]]))
"""


def test_image_shows_the_view_and_is_identical_in_a_fresh_process() -> None:
    env = ALFWorld(data_dir=DATA, task_types=[PICK], obs_mode="image+text")
    obs, _ = env.reset(seed=3)
    first = obs["image"]
    assert first.shape == (300, 300, 3) and first.dtype == np.uint8 and first.any()
    obs, *_ = env.step(env.oracle_action())  # "go to ..."
    assert not np.array_equal(first, obs["image"])
    here = [hashlib.sha256(image.tobytes()).hexdigest() for image in (first, obs["image"])] + [obs["text"]]
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_DIGEST), str(DATA), PICK],
        capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "PYTHONHASHSEED": "7"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == here
    env.close()


def test_text_mode_image_is_black_and_image_mode_text_holds_only_feedback() -> None:
    env = make(obs_mode="image")
    obs, _ = env.reset(options={"game": GAMES[PICK]})
    assert obs["text"] == "" and obs["image"].any()
    obs, *_ = env.step(env.oracle_action())
    assert obs["text"].startswith("You arrive at ") and obs["text"].count(".") == 1
    env.close()
    env = make()
    obs, _ = env.reset(options={"game": GAMES[PICK]})
    assert not obs["image"].any()
    env.close()


# -- Episodes, pickling and resources ----------------------------------------------------------------


def test_seed_picks_the_game_and_options_pick_a_given_one() -> None:
    env = make(task_types=[1, "look_at_obj_in_light"])
    assert len(env.games) >= 2
    games = []
    for seed in range(6):
        env.reset(seed=seed)
        games.append(env.game)
    assert len(set(games)) > 1
    env.reset(seed=4)
    assert env.game == games[4]
    env.reset(options={"game": 1})
    assert env.game == env.games[1]
    live = env._tw
    env.reset(options={"game": str(Path(env.games[1]).parent)})  # the same game, given by its folder
    assert env._tw is live  # replaying a game reuses the loaded one
    for bad in (len(env.games), -1, True, 1.5, "/nonexistent/game.tw-pddl"):
        with pytest.raises(ValueError, match="game"):
            env.reset(options={"game": bad})
    with pytest.raises(ValueError, match="unknown_option"):
        env.reset(options={"unknown_option": 1})
    env.close()
    env.close()
    assert env._tw is None
    env.reset(options={"game": 0})  # a closed env starts its game again
    env.close()


def test_pickled_env_replays_its_game_and_continues_identically() -> None:
    env = make(obs_mode="image+text")
    play(env, "pick_two_obj_and_place")
    env.step(env.oracle_action())
    env.step("take unicorn from moon")
    env.step(env.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    assert clone._tw is None  # rebuilt on the next step
    while True:
        action = env.oracle_action()
        assert clone.oracle_action() == action
        (a, *rest_a), (b, *rest_b) = env.step(action), clone.step(action)
        assert a["text"] == b["text"] and a["actions"] == b["actions"] and np.array_equal(a["image"], b["image"])
        assert rest_a == rest_b
        if rest_a[1]:
            break
    assert clone._view_state() == env._view_state()
    env.close()
    clone.close()


# -- Discovering games -------------------------------------------------------------------------------


def _game_folders() -> dict[str, Path]:
    """``<task folder>`` of each sample game, the folder holding ``trial_*/game.tw-pddl``."""
    return {task: Path(game).parent.parent for task, game in GAMES.items()}


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """ALFWorld's layout with symlinks to the sample games, plus games discovery must skip."""
    split = tmp_path / "json_2.1.1" / "valid_unseen"
    split.mkdir(parents=True)
    for folder in _game_folders().values():
        (split / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    pick = _game_folders()[PICK].resolve()
    (split / "pick_and_place_simple-AppleSliced-None-Fridge-1").symlink_to(pick, target_is_directory=True)
    (split / "pick_and_place_simple-movable-None-Fridge-2").symlink_to(pick, target_is_directory=True)
    for name, content in (("301", {"solvable": False}), ("302", {"pddl_problem": "(define)"}), ("303", [1])):
        trial = split / f"pick_and_place_simple-Mug-None-Desk-{name}" / "trial_T1"
        trial.mkdir(parents=True)
        (trial / GAME_FILE).write_text(json.dumps(content))
    return tmp_path


def test_split_lookup_and_discovery_filters(layout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    games = ALFWorld(data_dir=layout, split="valid_unseen").games
    assert [task_type(g) for g in games] == sorted(task_type(g) for g in GAMES.values())
    assert games == tuple(sorted(games)) and all(g.startswith(str(layout / "json_2.1.1" / "valid_unseen")) for g in games)
    assert find_games(layout) == games  # split=None: every game under data_dir
    monkeypatch.setenv("ALFWORLD_DATA", str(layout))
    assert ALFWorld(split="valid_unseen").games == games
    (layout / "valid_seen").symlink_to(layout / "json_2.1.1" / "valid_unseen", target_is_directory=True)
    assert len(find_games(layout, "valid_seen")) == len(games)  # <data_dir>/<split> also works
    with pytest.raises(MissingDataError) as err:
        find_games(layout, "train")
    assert str(layout / "json_2.1.1" / "train") in str(err.value) and str(layout / "train") in str(err.value)


def test_task_types_filter(layout: Path) -> None:
    games = find_games(layout, "valid_unseen", [1, "look_at_obj_in_light"])
    assert sorted(task_type(g) for g in games) == ["look_at_obj_in_light", PICK]
    assert {task_type(g) for g in ALFWorld(data_dir=layout, task_types=[6]).games} == {"pick_two_obj_and_place"}
    for bad in ([7], ["cook"], [True], [], [None]):
        with pytest.raises(ValueError, match="task_types"):
            ALFWorld(data_dir=layout, task_types=bad)
    with pytest.raises(ValueError, match="split"):
        ALFWorld(data_dir=layout, split="test")


def test_missing_data_names_the_folders_the_variable_and_the_download(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        ALFWorld(data_dir=tmp_path / "nothing here")
    message = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    for part in (str(tmp_path / "nothing here"), "ALFWORLD_DATA", "data_dir", "alfworld-download", "json_2.1.1_json.zip"):
        assert part in message
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingDataError, match="valid_unseen"):
        ALFWorld(data_dir=tmp_path / "empty", split="valid_unseen")


def test_a_wrong_exact_model_is_caught_by_fast_downward_and_the_facts_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the exact planner's model of a game wrong (here: made to plan one step too many), Fast
    Downward's shorter plan shows it: optimal_steps is Fast Downward's, the oracle follows it, and the
    decision facts are None with the reason instead of a guess."""
    from rl4vlm_gym.envs.household import alfworld as module

    real = module.plan
    monkeypatch.setattr(module, "plan", lambda board: None if (found := real(board)) is None else [*found, "look"])
    monkeypatch.setattr(module, "_misplanned", set())
    env = make(planner="fast-downward")
    play(env)
    assert env.optimal_steps == 4
    facts = env.decision()
    assert facts["steps_to_go"] == -1 and "wrong" in facts["reason"]
    for _ in range(4):
        env.step(env.oracle_action())
    assert env._won
    env.close()
