"""Tests that kill the mutants of ``rl4vlm_gym.core`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.core import VLMEnv, _plain_data
from rl4vlm_gym.envs.cards.numberline import NumberLine


@pytest.mark.parametrize("render_mode", ["rgb_array", "ansi", "human"])
def test_render_before_reset_is_none(render_mode, monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):  # human mode: headless, frames dropped
        monkeypatch.delenv(name, raising=False)
    env = gym.make("rl4vlm/NumberLine-v0", render_mode=render_mode)
    try:
        assert env.unwrapped.render() is None  # the env's own check (gymnasium's wrapper refuses first)
    finally:
        env.close()


def test_render_without_a_render_mode_is_none_after_reset():
    env = gym.make("rl4vlm/NumberLine-v0")
    try:
        env.reset(seed=0)
        assert env.render() is None
    finally:
        env.close()


def test_render_in_human_mode_returns_nothing_and_rgb_array_the_frame(monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):  # headless: the window drops the frames
        monkeypatch.delenv(name, raising=False)
    human, frames = (
        gym.make("rl4vlm/NumberLine-v0", render_mode="human"),
        gym.make("rl4vlm/NumberLine-v0", render_mode="rgb_array"),
    )
    try:
        obs, _ = human.reset(seed=0)
        frames.reset(seed=0)
        assert human.render() is None
        assert np.array_equal(frames.render(), obs["image"])
    finally:
        human.close()
        frames.close()


def test_facts_of_an_env_as_json_data():
    env = gym.make("rl4vlm/NumberLine-v0", level=1).unwrapped
    facts = env.facts()
    assert {k: facts[k] for k in ("name", "levels", "level", "obs_mode", "reward_variant")} == {
        "name": "NumberLine", "levels": 5, "level": 1, "obs_mode": "image+text", "reward_variant": "rl4vlm",
    }  # fmt: skip
    assert facts["DEFAULT_IMAGE_SIZE"] == [300, 300] and facts["REWARDS"]["rl4vlm"]["reach"] == 1.0
    assert (facts["defines_oracle_action"], facts["says_oracle_free"], facts["view_overridden"]) == (True, False, False)
    assert json.loads(json.dumps(facts)) == facts


class _OracleFree(NumberLine):
    """A NumberLine that says it is oracle-free and shows another view."""

    def oracle_action(self):  # noqa: ANN201
        return VLMEnv.oracle_action(self)

    def _view(self):  # noqa: ANN202
        return super()._view()


def test_facts_of_the_class_code():
    facts = _OracleFree().facts()
    assert (facts["defines_oracle_action"], facts["says_oracle_free"], facts["view_overridden"]) == (True, True, True)
    _OracleFree.__doc__ = None
    try:
        assert _OracleFree().facts()["says_oracle_free"] is False
    finally:
        _OracleFree.__doc__ = "A NumberLine that says it is oracle-free and shows another view."


@pytest.mark.parametrize(
    "value, plain",
    [
        (None, None), (True, True), ("x", "x"), (np.int64(3), 3), (np.float32(0.5), 0.5), (np.bool_(False), False), (np.bool_(True), True),
        ((1, [2, (3,)]), [1, [2, [3]]]), ({"a": (np.int8(1),)}, {"a": [1]}),
    ],
)  # fmt: skip
def test_plain_data_converts_to_json_types(value, plain):
    out = _plain_data(value, "X.facts()")
    assert out == plain and type(out) is type(plain)


@pytest.mark.parametrize(
    "value, message",
    [
        ({"a": [1, object()]}, "X.facts()['a'][1] is a object, not JSON data (str, int, float, bool, None, list, dict)"),
        ({"a": {1: 2, 0: 3}}, "X.facts()['a'] has keys that are not str: ['0', '1']"),
        ({str(i): i for i in range(3)} | {7: 1, 6: 1, 5: 1, 4: 1, 3: 1, 2: 1}, "X.facts() has keys that are not str: ["),
    ],
)
def test_plain_data_names_what_is_not_json(value, message):
    with pytest.raises(TypeError) as err:
        _plain_data(value, "X.facts()")
    assert str(err.value).startswith(message)


def test_plain_data_shows_at_most_five_keys():
    with pytest.raises(TypeError) as err:
        _plain_data({i: i for i in range(7)}, "X")
    assert str(err.value) == "X has keys that are not str: ['0', '1', '2', '3', '4']"


def test_a_pickled_env_drops_its_frame_cache_and_window():
    env = gym.make("rl4vlm/NumberLine-v0", render_mode="rgb_array").unwrapped
    env.reset(seed=0)
    env.render()
    copy = pickle.loads(pickle.dumps(env))
    assert copy._frames == {} and copy._window is None
    assert np.array_equal(copy.render(), env.render())


def test_a_fact_that_is_not_json_is_named_by_the_class_and_attribute():
    class Odd(NumberLine):
        CHANCE = object()  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"^Odd\.facts\(\)\['CHANCE'\] is a object, not JSON data"):
        Odd().facts()


def test_a_pickled_env_drops_its_human_window(monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):  # headless: the window drops the frames
        monkeypatch.delenv(name, raising=False)
    env = gym.make("rl4vlm/NumberLine-v0", render_mode="human").unwrapped
    env.reset(seed=0)
    env.render()
    assert env._window is not None
    assert pickle.loads(pickle.dumps(env))._window is None


@pytest.mark.parametrize("kind", ["staticmethod", "nested"])
def test_the_class_scan_sees_static_methods_and_code_before_a_nested_function(kind):
    # A static method's code is under __func__; a method's own body is scanned with its nested functions.
    with pytest.raises(TypeError, match="_optimal, which is VLMEnv's own state"):
        if kind == "staticmethod":

            class Static(NumberLine):
                @staticmethod
                def helper(env) -> None:  # noqa: ANN001
                    env._optimal = 1

        else:

            class Nested(NumberLine):
                def helper(self):  # noqa: ANN202
                    self._optimal = 1
                    return lambda: 0


def test_fresh_render_before_reset_says_what_to_call():
    env = gym.make("rl4vlm/NumberLine-v0")
    try:
        with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before fresh_render\(\)"):
            env.unwrapped.fresh_render()
    finally:
        env.close()


class _OracleFreeNumberLine(NumberLine):
    HAS_ORACLE = False


def test_the_base_oracle_action_says_why_there_is_none():
    # VLMEnv.oracle_action (every env with an oracle overrides it): an oracle-free env's names the class and
    # the flag; an env that claims an oracle but does not define one gets a bare NotImplementedError.
    with pytest.raises(
        NotImplementedError, match=r"^_OracleFreeNumberLine is oracle-free \(HAS_ORACLE = False\): it has no oracle_action$"
    ):
        VLMEnv.oracle_action(_OracleFreeNumberLine())
    with pytest.raises(NotImplementedError, match=r"^$"):
        VLMEnv.oracle_action(NumberLine())


def test_an_appearance_is_checked_against_the_declared_ones():
    # A declared appearance is taken (not refused), an unknown one is refused naming the choices.
    appearance = NumberLine.APPEARANCES[-1]
    assert NumberLine(appearance=appearance).appearance == appearance
    with pytest.raises(ValueError, match=r"^appearance='no-such-look' is unknown for NumberLine; choose one of "):
        NumberLine(appearance="no-such-look")


def test_describe_needs_a_reset_and_then_gives_the_state_text():
    env = NumberLine(obs_mode="text")
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before describe\(\)"):
        env.describe()
    obs, _ = env.reset(seed=0)
    assert env.describe() and env.describe() in obs["text"]


def test_step_before_reset_says_what_to_call():
    # The raw env's own refusal (gym.make's OrderEnforcing wrapper refuses first with its own words).
    with pytest.raises(gym.error.ResetNeeded, match=r"^call reset\(\) before step\(\)$"):
        NumberLine().step("+")


def test_the_human_window_is_titled_with_the_env_class(monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):  # headless: the window drops the frames
        monkeypatch.delenv(name, raising=False)
    env = NumberLine(render_mode="human")
    try:
        env.reset(seed=0)
        env.render()
        assert env._window is not None and env._window.title == "NumberLine"
    finally:
        env.close()


class _UncachedNumberLine(NumberLine):
    def _frame_key(self):
        return None  # no frame cache: every observation is drawn anew


def test_an_env_without_a_frame_key_draws_every_observation_anew():
    env = _UncachedNumberLine()
    start, _ = env.reset(seed=0)
    moved, *_ = env.step(env.oracle_action())
    assert not np.array_equal(start["image"], moved["image"])  # not the reset's frame kept under the key None
    assert np.array_equal(moved["image"], env.fresh_render())


def test_the_image_space_is_uint8():
    # A Box without its dtype is float32, which every uint8 frame still "fits": the dtype is the contract.
    env = NumberLine(image_size=64)
    obs, _ = env.reset(seed=0)
    assert env.observation_space["image"].dtype == np.uint8 and obs["image"].dtype == np.uint8
    assert env.observation_space["image"].shape == (64, 64, 3)


class _HalvedNumberLine(NumberLine):
    def _apply(self, action):
        return dataclasses.replace(super()._apply(action), scale=0.5)


def test_a_step_pays_the_table_reward_times_the_outcome_scale():
    env = _HalvedNumberLine()
    env.reset(seed=0)
    away = "+" if env.oracle_action() == "-" else "-"
    _, reward, *_ = env.step(away)  # not closer: -1 in the default table, halved (not doubled)
    assert reward == -0.5


def test_a_level_out_of_range_is_refused_naming_the_env():
    with pytest.raises(ValueError, match=r"^level=99 is not a level of NumberLine; choose an int in 0\.\."):
        NumberLine(level=99)


def test_the_action_space_samples_the_admissible_actions_after_every_step():
    env = NumberLine()
    obs, _ = env.reset(seed=0)
    assert env.action_space.vocabulary == tuple(obs["actions"])
    obs, *_ = env.step(env.oracle_action())
    assert env.action_space.vocabulary == tuple(obs["actions"]) and env.action_space.sample() in obs["actions"]
