"""The navigation family on the real MiniWorld renderer (headless EGL)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap
from collections import OrderedDict

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym
from rl4vlm_gym.core import NOT_COMPUTED
from rl4vlm_gym.testing import check_oracle

if importlib.util.find_spec("miniworld") is None:  # importing it here would open an X display
    pytest.skip("the nav extra is not installed", allow_module_level=True)

from rl4vlm_gym.envs.navigation import envs  # noqa: E402 - after the skip, as the nav extra's module

NAV_IDS = [card.id for card in rl4vlm_gym.list_envs(family="navigation")]
LEVELS = [(card.id, level) for card in rl4vlm_gym.list_envs(family="navigation") for level in range(len(card.levels))]


def test_family_registers_the_vl_dac_tasks() -> None:
    wanted = {f"rl4vlm/MiniWorld-{task}-v1" for task in ("Hallway", "OneRoom", "FourRooms", "WallGap")}
    assert wanted <= set(NAV_IDS)
    assert len(NAV_IDS) >= 10


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "level"), LEVELS)
def test_oracle_solves_seeds_50_to_54_in_optimal_steps(env_id: str, level: int) -> None:
    # The kit's oracle check plays EVAL seeds 0..4 of every level (each episode costs a planner run);
    # these seeds are ones it never plays. The planner no longer filters the drawn episodes (it runs
    # only when asked): an episode may have no plan it can find (optimal_steps -1), mostly on
    # Sidewalk's distractor levels; the oracle solves every other in optimal_steps.
    report = check_oracle(env_id, episodes=5, first_seed=50, levels=[level], max_episode_steps=100_000)
    match = re.search(r"(\d+)/(\d+) solvable solved", report)
    assert match and match[1] == match[2] and int(match[2]) >= 3, report


# info["optimal_steps"] of seeds 0, 1, 2 at each id's default level when every reset planned (commit bd24db7),
# less the steps the oracle saves since it takes the shortest way in its last HORIZON steps (issue 38: one or
# two on 14 of these 33 episodes, where the planner's plan ends longer than the exact search's way)
EAGER = {
    "FourRooms": [62, 41, 107], "Hallway": [29, 38, 50], "Maze": [75, 1, 11], "OneRoom": [13, 28, 20],
    "PickupObjects": [134, 150, 108], "PutNext": [92, 66, 67], "Sidewalk": [63, 66, 63], "Sign": [7, 6, 8],
    "TMaze": [59, 71, 89], "WallGap": [96, 112, 43], "YMaze": [92, 67, 76],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("env_id", NAV_IDS)
def test_planner_runs_only_when_asked_and_gives_the_eager_values(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.navigation import oracle

    calls = []
    real = oracle.Planner.plan
    monkeypatch.setattr(oracle.Planner, "plan", lambda self, *args, **kwargs: calls.append(1) or real(self, *args, **kwargs))
    monkeypatch.setattr(envs, "_searches", OrderedDict())  # searched here, not taken from another test's
    eager = EAGER[env_id.removeprefix("rl4vlm/MiniWorld-").removesuffix("-v1")]
    env = gym.make(env_id, image_size=(60, 80), obs_mode="text")
    base = env.unwrapped
    for seed, optimal in enumerate(eager):
        calls.clear()
        _, info = env.reset(seed=seed)
        assert info["optimal_steps"] == NOT_COMPUTED and not calls, "reset planned"
        assert base.optimal_steps == optimal
        planned = len(calls)  # 1, or 0 where the goal holds at the start
        assert base.optimal_steps == optimal and base.oracle_action() and len(calls) == planned, "planned twice"
    env.reset(seed=0)
    for action in ("turn left", "move forward", "turn right"):
        env.step(action)
    assert base.optimal_steps == eager[0], "asked after steps, it is still the start's"
    env.close()

    env = gym.make(env_id, image_size=(60, 80), obs_mode="text", optimal_steps_at_reset=True)
    _, info = env.reset(seed=1)
    assert info["optimal_steps"] == eager[1]
    steps, done = 0, False
    while not done:  # the oracle meets it
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        steps, done = steps + 1, terminated or truncated
    assert info["success"] and steps == eager[1]
    env.close()


def test_a_search_from_a_state_searched_before_is_the_planners_own_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = envs.NavigationEnv._searched
    monkeypatch.setattr(envs.NavigationEnv, "_searched", lambda self: calls.append(1) or real(self))
    monkeypatch.setattr(envs, "_searches", OrderedDict())
    first, second = (gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text", image_size=size) for size in ((60, 80), (48, 64)))
    plans = []
    for env in (first, second):  # the same episode in two envs: searched once
        env.reset(seed=0)
        optimal = env.unwrapped.optimal_steps
        plans.append((optimal, list(env.unwrapped._plan)))
    assert plans[0] == plans[1] and len(calls) == 1
    for env in (first, second):  # another state: searched once more
        env.step("move forward")
        env.unwrapped._plan = []  # as if the agent had left the plan
        env.unwrapped.oracle_action()
        plans.append(list(env.unwrapped._plan))
    assert plans[2] == plans[3] and len(calls) == 2
    monkeypatch.setattr(envs, "_searches", OrderedDict())  # the planner's own answer there, searched cold
    first.reset(seed=0)
    first.step("move forward")
    first.unwrapped.oracle_action()
    assert list(first.unwrapped._plan) == plans[2] and len(calls) == 3
    base = second.unwrapped
    key = base._search_key()
    base.planner.max_expansions = 3  # the budget is part of what a search reads
    assert base._search_key() != key
    for env in (first, second):
        env.close()


def test_a_domain_randomized_levels_first_draw_takes_the_plan_of_the_level_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # PickupObjects' level 3 is level 2 with MiniWorld's domain randomization, which draws after the world
    # is made: the same seed's world, the same search (made once), the plan a cold search makes there.
    calls = []
    real = envs.NavigationEnv._searched
    monkeypatch.setattr(envs.NavigationEnv, "_searched", lambda self: calls.append(1) or real(self))
    monkeypatch.setattr(envs, "_searches", OrderedDict())
    env = gym.make("rl4vlm/MiniWorld-PickupObjects-v1", obs_mode="text", image_size=(60, 80))
    base = env.unwrapped
    plans = []
    for level in (2, 3):
        env.reset(seed=0, options={"level": level})
        plans.append((base.optimal_steps, list(base._plan)))
    assert plans[0] == plans[1] and len(calls) == 1
    monkeypatch.setattr(envs, "_searches", OrderedDict())
    env.reset(seed=0, options={"level": 3})
    assert (base.optimal_steps, list(base._plan)) == plans[1] and len(calls) == 2
    env.close()
    # A later draw (the first too near the goal) is another world: domain randomization took numbers from
    # the RNG before it, so the level keeps it in the key.
    env = gym.make("rl4vlm/MiniWorld-Hallway-v1", obs_mode="text", image_size=(60, 80))
    base, seen = env.unwrapped, set()
    for seed in range(6):  # seed 5: the third draw
        env.reset(seed=seed, options={"level": 3})
        seen.add(base._draws)
        assert ("domain_rand=True" in repr(base._search_key())) == (base._draws > 1)
    assert seen > {1}
    env.close()


@pytest.mark.parametrize(("env_id", "level", "seed"), [("rl4vlm/MiniWorld-Sidewalk-v1", 0, 0), ("rl4vlm/MiniWorld-Sign-v1", 1, 2), ("rl4vlm/MiniWorld-OneRoom-v1", 0, 1)])
def test_a_heading_free_phase_plans_as_one_asked_after_every_turn(env_id: str, level: int, seed: int) -> None:
    # The go-to phases read the agent's position only (heading_free): the planner skips them after a turn,
    # and plans what it plans asking them after every move, from the start and from a pose off the plan.
    import dataclasses

    from rl4vlm_gym.envs.navigation.oracle import Unsolvable

    env = gym.make(env_id, obs_mode="text", image_size=(60, 80), level=level)
    env.reset(seed=seed)
    base = env.unwrapped
    phases = base._phases()
    assert all(phase.heading_free for phase in phases)
    asked = [dataclasses.replace(phase, heading_free=False) for phase in phases]
    for action in (None, "turn left"):
        if action is not None:
            env.step(action)
        assert base.planner.plan(phases, rooms=base._rooms()) == base.planner.plan(asked, rooms=base._rooms())
    if env_id.endswith("Sidewalk-v1"):  # from a pose the phase forbids (in the street), not even a turn leads on
        world = base.world
        world.agent.pos = np.array([(world.street.min_x + world.street.max_x) / 2, 0.0, (world.street.min_z + world.street.max_z) / 2])
        assert world.in_street()
        with pytest.raises(Unsolvable) as caught:
            base.planner.plan(phases, rooms=base._rooms())
        assert caught.value.nearest == [] and "(1 poses expanded)" in str(caught.value)  # the start's, and no turned one
    env.close()


def test_the_planners_heuristic_is_made_once_per_floor_and_targets_and_is_a_fresh_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # A replan and the greedier retry take the heuristic made for the same rooms, walls and targets;
    # other targets (an object picked up) get their own. Its values are those of a field made anew.
    from rl4vlm_gym.envs.navigation import oracle

    made = []
    real = oracle.Planner._distance_field
    monkeypatch.setattr(oracle.Planner, "_distance_field", lambda self, *args: made.append(1) or real(self, *args))
    env = gym.make("rl4vlm/MiniWorld-PickupObjects-v1", obs_mode="text", image_size=(60, 80), level=1)
    env.reset(seed=4)
    base = env.unwrapped
    world, planner = base.world, base.planner
    objects = [e for e in world.entities if e is not world.agent and not e.is_static]
    rng = np.random.default_rng(0)
    poses = [(np.array([x, 0.0, z]), d) for x, z, d in rng.uniform([world.min_x, world.min_z, -4], [world.max_x, world.max_z, 4], (200, 3))]
    fields = [planner._field([obj.pos.copy() for obj in objects[i:]], None) for i in (0, 0, 1)]
    assert fields[0] is fields[1] and fields[0] is not fields[2] and len(made) == 2
    for i, field in ((0, fields[0]), (1, fields[2])):
        fresh = real(planner, [obj.pos for obj in objects[i:]], world.rooms)
        assert [field(pose) for pose in poses] == [fresh(pose) for pose in poses]
    env.close()


def test_without_a_plan_the_oracle_takes_the_first_searchs_partial_plan_searching_no_third_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Budgets too small for any plan: the search and its greedier retry give up; the oracle's way is the
    # partial plan the first search found, exactly what plan(partial=True) makes again from that state.
    from rl4vlm_gym.envs.navigation import oracle

    calls = []
    real = oracle.Planner.plan
    monkeypatch.setattr(oracle.Planner, "plan", lambda self, *args, **kwargs: calls.append(kwargs) or real(self, *args, **kwargs))
    monkeypatch.setattr(envs, "_searches", OrderedDict())
    monkeypatch.setattr(envs, "_RETRY_EXPANSIONS", 4)
    plans = []
    for _ in range(2):  # the second env's search is the first's, taken with its partial plan
        env = gym.make("rl4vlm/MiniWorld-Hallway-v1", obs_mode="text", image_size=(60, 80))
        env.reset(seed=3)
        base = env.unwrapped
        base.planner.max_expansions = 6
        assert base.optimal_steps == -1
        plans.append(list(base._plan))
    assert len(calls) == 2 and not any(kwargs.get("partial") for kwargs in calls)
    assert plans[0] == plans[1] and plans[0] == real(base.planner, base._phases(), rooms=base._rooms(), partial=True) != []
    env.close()


def test_close_frees_the_worlds_gl_objects() -> None:
    from pyglet import gl

    from rl4vlm_gym.envs.navigation.gl import current
    from rl4vlm_gym.envs.navigation.worlds import attachments

    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", render_process=False)  # the in-process world's GL objects
    env.reset(seed=0)
    world = env.unwrapped.world
    with current(world.shadow_window):  # FBO names are the world's context's own
        attached = [found for fb in (world.obs_fb, world.vis_fb) for fbo in (fb.multi_fbo, fb.final_fbo) for found in attachments(fbo)]
    env.close()
    env.close()
    is_alive = {gl.GL_TEXTURE: gl.glIsTexture, gl.GL_RENDERBUFFER: gl.glIsRenderbuffer}
    assert len(attached) == 8 and {kind for kind, _ in attached} == set(is_alive)
    with current(gl._shadow_window):  # textures and renderbuffers are shared by every context
        assert not any(is_alive[kind](name) for kind, name in attached)


def test_level_zero_is_raw_miniworld_for_the_same_seed() -> None:
    from rl4vlm_gym.envs.navigation.gl import current, ensure_context, import_miniworld
    from rl4vlm_gym.envs.navigation.worlds import _free_gl

    import_miniworld()
    # The process's GL context made first, our way; raw MiniWorld's GL calls inside gl.current and its window
    # freed as our worlds' are. Raw MiniWorld's window as the first context, or left current in this thread
    # and closed by pyglet's __del__, made later in-process worlds of this process draw other frames
    # (test_gl_threads, run after this test in one process, failed).
    ensure_context()
    with current():
        raw = gym.make("MiniWorld-FourRooms-v0", obs_width=80, obs_height=60).unwrapped
    ours = gym.make("rl4vlm/MiniWorld-FourRooms-v1", image_size=(60, 80), obs_mode="image")
    try:
        for seed in (0, 5):
            with current(raw.shadow_window):
                raw_obs, _ = raw.reset(seed=seed)
            obs, _ = ours.reset(seed=seed)
            assert np.array_equal(raw_obs, obs["image"])
            for action, text in ((2, "move forward"), (0, "turn left"), (2, "2")):  # VL-DAC's number too
                with current(raw.shadow_window):
                    raw_obs, raw_reward, *_ = raw.step(action)
                obs, reward, *_ = ours.step(text)
                assert np.array_equal(raw_obs, obs["image"]) and reward == raw_reward
        np.testing.assert_array_equal(raw.agent.pos, ours.unwrapped.world.agent.pos)
    finally:
        raw.close()
        _free_gl(raw.shadow_window, (raw.obs_fb, raw.vis_fb))
        ours.close()


def test_vl_dac_json_action_parses() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text")
    env.reset(seed=0)
    _, _, _, _, info = env.step('{"thoughts": "I should walk to the box", "action": 2}')
    assert info["action"]["parsed"] == "move forward" and info["action"]["valid"]
    _, _, _, _, info = env.step('{"thoughts": "?", "action": 7}')
    assert not info["action"]["valid"] and info["action"]["error"]
    env.close()


def test_two_worlds_in_one_process_render_their_own_rooms() -> None:
    # MiniWorld compiles every world into display list 1; our worlds recompile when they switch.
    alone = gym.make("rl4vlm/MiniWorld-FourRooms-v1", obs_mode="image")
    expected, _ = alone.reset(seed=0)
    alone.close()
    a = gym.make("rl4vlm/MiniWorld-FourRooms-v1", obs_mode="image")
    b = gym.make("rl4vlm/MiniWorld-WallGap-v1", obs_mode="image")
    a.reset(seed=0)
    b.reset(seed=0)
    obs, *_ = a.step("turn left")
    obs_back, *_ = a.step("turn right")
    assert np.array_equal(obs_back["image"], expected["image"])
    assert not np.array_equal(obs["image"], expected["image"])
    a.close()
    b.close()


@pytest.mark.parametrize(("variant", "expected"), [("miniworld", 0.0), ("vl-dac", -1.0)])
def test_timeout_reward_is_paid_when_the_spec_time_limit_truncates(variant: str, expected: float) -> None:
    env = gym.make("rl4vlm/MiniWorld-Hallway-v1", obs_mode="text", reward_variant=variant, max_episode_steps=3)
    env.reset(seed=0)
    rewards = [env.step("turn left")[1:4] for _ in range(3)]
    assert rewards[:2] == [(0.0, False, False)] * 2
    assert rewards[2] == (expected, False, True)
    env.close()


def test_time_limit_lives_on_the_spec() -> None:
    env = gym.make("rl4vlm/MiniWorld-Hallway-v1")
    assert env.spec.max_episode_steps == 250
    vl_dac = gym.make("rl4vlm/MiniWorld-Hallway-v1", max_episode_steps=128)
    assert vl_dac.spec.max_episode_steps == 128
    env.close()
    vl_dac.close()


def test_success_reward_is_miniworlds_time_discounted_one() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text")
    _, info = env.reset(seed=1)
    env.step("not an action")  # invalid steps count as time
    total, steps, done = 0.0, 1, False
    while not done:
        _, reward, done, _, info = env.step(env.unwrapped.oracle_action())
        total, steps = total + reward, steps + 1
    assert info["success"]
    assert total == pytest.approx(1 - 0.2 * steps / 180)
    env.close()


@pytest.mark.slow
def test_distractor_levels_name_the_goal_by_colour_and_shape() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text", level=2)
    missions = {env.reset(seed=seed)[0]["mission"] for seed in range(30)}
    assert len(missions) > 5
    assert any("ball" in m for m in missions) and any("key" in m for m in missions)
    env.close()


def test_text_mode_draws_nothing_and_keeps_the_description() -> None:
    env = gym.make("rl4vlm/MiniWorld-Hallway-v1", obs_mode="text")
    obs, _ = env.reset(seed=0)
    assert not obs["image"].any()
    assert "red box" in obs["text"] and "wall ahead" in obs["text"]
    env.close()


def test_top_view_is_a_render_option() -> None:
    env = gym.make("rl4vlm/MiniWorld-FourRooms-v1", render_mode="rgb_array", render_view="top", image_size=(120, 160))
    obs, _ = env.reset(seed=0)
    top = env.render()
    assert top.shape == obs["image"].shape == (120, 160, 3)
    assert not np.array_equal(top, obs["image"])
    env.close()
    with pytest.raises(ValueError, match="render_view"):
        gym.make("rl4vlm/MiniWorld-FourRooms-v1", render_view="side")


def test_state_key_is_the_discretized_pose() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text")
    _, info = env.reset(seed=0)
    start = info["state_key"]
    assert env.step("turn left")[4]["state_key"] != start
    assert env.step("turn right")[4]["state_key"] == start
    env.close()


def test_pickup_and_put_next_accept_their_extra_actions() -> None:
    env = gym.make("rl4vlm/MiniWorld-PutNext-v1", obs_mode="text")
    obs, _ = env.reset(seed=0)
    assert obs["actions"] == ("turn left", "turn right", "move forward", "move back", "pick up", "drop")
    assert env.step('{"action": 5}')[4]["action"]["parsed"] == "drop"
    env.close()


def test_missing_gl_stack_gives_one_clear_error() -> None:
    script = textwrap.dedent(
        """
        import pyglet.lib
        def missing(*names, **kwargs):
            raise ImportError('Library "EGL" not found.')
        pyglet.lib.load_library = missing
        import gymnasium as gym, rl4vlm_gym
        from rl4vlm_gym.envs.navigation.gl import GLUnavailableError
        env = gym.make("rl4vlm/MiniWorld-OneRoom-v1")  # the GL context comes with the first reset
        try:
            env.reset(seed=0)
        except GLUnavailableError as err:
            print(err)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "libegl1" in done.stdout and "EGL" in done.stdout and "Traceback" not in done.stdout


@pytest.mark.slow
def test_pickled_env_rebuilds_its_world_and_continues() -> None:
    import pickle

    env = gym.make("rl4vlm/MiniWorld-PutNext-v1", image_size=(60, 80))
    env.reset(seed=4)
    for _ in range(15):
        env.step(env.unwrapped.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(15):
        action = env.unwrapped.oracle_action()
        a, b = env.step(action), clone.step(action)
        assert np.array_equal(a[0]["image"], b[0]["image"]) and a[0]["text"] == b[0]["text"] and a[1:] == b[1:]
    env.close()
    clone.close()


@pytest.mark.parametrize("late", [0, 178, 179, 180], ids=["at-optimal", "T-2", "T-1", "T"])
def test_goal_reward_is_one_minus_a_fifth_of_the_time_used_up_to_the_limit(late: int) -> None:
    """MiniWorld's ``1 - 0.2 t / T`` with T = 180 (OneRoom), the goal reached on step t = the
    optimal count, T - 2, T - 1 and T (invalid steps count as time: they pad the episode)."""
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text")
    env.reset(seed=1)
    optimal = env.unwrapped.optimal_steps  # planned when asked (MiniWorld's reset does not plan)
    t = max(late, optimal)
    for _ in range(t - optimal):
        assert env.step("not an action")[1:3] == (0.0, False)
    for step in range(1, optimal + 1):
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        assert terminated is (step == optimal), f"the goal was reached on step {step} of a {optimal}-step plan"
    assert info["success"] and truncated is (t == 180)
    assert reward == pytest.approx(1 - 0.2 * t / 180), f"reaching the goal on step {t} of 180 paid {reward}"
    env.close()


def test_vl_dac_pays_the_goal_not_the_timeout_when_both_fall_on_the_last_step() -> None:
    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", obs_mode="text", reward_variant="vl-dac")
    env.reset(seed=1)
    optimal = env.unwrapped.optimal_steps
    for _ in range(180 - optimal):
        env.step("not an action")
    rewards = [env.step(env.unwrapped.oracle_action())[1:4] for _ in range(optimal)]
    assert rewards[-1] == (pytest.approx(0.8), True, True), "the goal on step T = 180 pays 1 - 0.2, not the -1 of a time-out"
    assert all(r == (0.0, False, False) for r in rewards[:-1])
    env.close()


# Random moves of the kit's rules check (seed 0): the agent picks up the purple box, not the red one.
HOLDING_ANOTHER_BOX = ("move back", "turn right", "turn right", "move back", "pick up", "turn right", "move back", "turn right", "drop", "turn right", "pick up")  # fmt: skip


def test_put_next_oracle_puts_down_another_box_then_solves() -> None:
    env = gym.make("rl4vlm/MiniWorld-PutNext-v1", obs_mode="text", max_episode_steps=300)
    env.reset(seed=0)
    for action in HOLDING_ANOTHER_BOX:
        env.step(action)
    world = env.unwrapped.world
    assert world.agent.carrying is not None and world.agent.carrying is not world.red_box
    assert env.unwrapped.oracle_action() == "drop"
    for _ in range(200):
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        if terminated or truncated:
            break
    env.close()
    assert info["success"]


@pytest.mark.parametrize("env_id", ["rl4vlm/MiniWorld-PutNext-v1", "rl4vlm/MiniWorld-Sidewalk-v1"])
def test_oracle_past_its_search_budget_still_answers_a_move_toward_the_goal(env_id: str) -> None:
    # From any state the oracle answers (the kit mixes random moves in); past the planner's budget it
    # heads for the pose nearest the goal that the search found, without raising Unsolvable.
    env = gym.make(env_id, obs_mode="text")
    env.reset(seed=1)
    base = env.unwrapped
    base.planner.max_expansions = 3
    env.step("turn left")  # off the reset's plan: the oracle must search again
    distance, actions = base._goal_distance(), []
    for _ in range(6):
        actions.append(base.oracle_action())
        _, _, terminated, _, info = env.step(actions[-1])
        if terminated:
            break
    assert set(actions) <= set(base.ACTIONS)
    assert info["success"] or base._goal_distance() < distance or env_id.endswith("PutNext-v1"), actions
    env.close()
