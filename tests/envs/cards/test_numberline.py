"""Behaviour of rl4vlm/NumberLine-v0: RL4VLM's rules and image, verl-agent's reward variant.

Exact states are set on ``env.unwrapped`` after a reset; the episode draw itself is scripted by
replacing the env's generator (``reset()`` without a seed keeps it) with one that returns chosen
integers, so RL4VLM's "equal start and target" rule is checked on hand-picked values.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

ENV_ID = "rl4vlm/NumberLine-v0"
MAX_POSITIONS = (5, 10, 20, 50, 100)
VARIANTS = ("rl4vlm", "verl-agent")
PLUS = '{"thoughts": "the target is larger", "action": "+"}'
MINUS = '{"thoughts": "the target is smaller", "action": "-"}'


class ScriptedRng:
    """Stands in for ``np_random``: ``integers`` returns the scripted values, checking bounds."""

    def __init__(self, ints: list[int]) -> None:
        self.ints = list(ints)

    def integers(self, low: int, high: int | None = None) -> int:
        if high is None:
            low, high = 0, low
        value = self.ints.pop(0)
        assert low <= value < high, f"scripted {value} outside [{low}, {high})"
        return value


def make(**kwargs):
    kwargs.setdefault("obs_mode", "text")
    env = gym.make(ENV_ID, **kwargs)
    env.reset(seed=0)
    return env, env.unwrapped


def place(env, position: int, target: int):
    u = env.unwrapped
    u.position, u.target = position, target
    u._start = position  # the episode's start, which progress is measured from
    return u


# -- rewards and dynamics -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_reaching_the_target_gives_plus_one_and_terminates(variant):
    env, _ = make(reward_variant=variant)
    u = place(env, 2, 3)
    obs, reward, terminated, truncated, info = env.step(PLUS)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert u.position == 3
    assert info["success"] is True and info["progress"] == 1.0
    assert info["action"] == {"raw": PLUS, "parsed": "+", "valid": True, "error": None}
    assert info["state_key"] == "target=3|current=3"
    assert obs["text"].endswith("Target: 3\nCurrent: 3")


@pytest.mark.parametrize("variant", VARIANTS)
def test_reaching_the_target_from_above(variant):
    env, _ = make(reward_variant=variant)
    u = place(env, 4, 3)
    _, reward, terminated, truncated, _ = env.step("-")
    assert (reward, terminated, truncated, u.position) == (1.0, True, False, 3)


@pytest.mark.parametrize("variant", VARIANTS)
def test_moving_closer_gives_zero(variant):
    env, _ = make(reward_variant=variant)
    u = place(env, 0, 4)
    _, reward, terminated, truncated, info = env.step(PLUS)
    assert (reward, terminated, truncated, u.position) == (0.0, False, False, 1)
    assert info["success"] is False
    _, reward, _, _, _ = env.step("+")
    assert (reward, u.position) == (0.0, 2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_moving_away_gives_minus_one_under_both_variants(variant):
    # verl-agent keeps NumberLine's -1 for not approaching the goal.
    env, _ = make(reward_variant=variant)
    u = place(env, 2, 4)
    _, reward, terminated, truncated, info = env.step(MINUS)
    assert (reward, terminated, truncated, u.position) == (-1.0, False, False, 1)
    assert info["action"]["valid"] is True
    _, reward, _, _, _ = env.step("-")
    assert (reward, u.position) == (-1.0, 0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_minus_at_zero_changes_nothing_and_costs_minus_one(variant):
    env, _ = make(reward_variant=variant)
    u = place(env, 0, 3)
    obs, reward, terminated, truncated, info = env.step("-")
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert (u.position, u.target) == (0, 3)
    assert info["state_key"] == "target=3|current=0"
    assert obs["text"].endswith("Target: 3\nCurrent: 0")


@pytest.mark.parametrize("level", range(len(MAX_POSITIONS)))
@pytest.mark.parametrize("variant", VARIANTS)
def test_plus_at_max_position_changes_nothing_and_costs_minus_one(level, variant):
    top = MAX_POSITIONS[level]
    env, _ = make(level=level, reward_variant=variant)
    u = place(env, top, 1)
    _, reward, terminated, truncated, _ = env.step("+")
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert u.position == top


def test_plus_below_max_position_still_moves():
    env, _ = make(level=0)
    u = place(env, 4, 0)
    _, reward, _, _, _ = env.step("+")
    assert (reward, u.position) == (-1.0, 5)  # away from the target, and now at the edge


def test_unparseable_action_costs_minus_one_under_rl4vlm_and_changes_nothing():
    env, _ = make(reward_variant="rl4vlm")
    u = place(env, 2, 4)
    obs, reward, terminated, truncated, info = env.step("I am not sure what to do")
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert (u.position, u.target) == (2, 4)
    assert info["action"]["valid"] is False and info["action"]["parsed"] is None
    assert info["action"]["error"]


@pytest.mark.parametrize("garbage", ["", "I am not sure", '{"thoughts": "hmm", "action": "jump"}', "+-", "*"])
def test_verl_agent_unparseable_action_gives_zero_and_no_state_change(garbage):
    env, _ = make(reward_variant="verl-agent")
    u = place(env, 2, 4)
    obs, reward, terminated, truncated, info = env.step(garbage)
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert (u.position, u.target) == (2, 4)
    assert info["action"]["valid"] is False
    assert info["action"]["parsed"] is None
    assert isinstance(info["action"]["error"], str) and info["action"]["error"]
    assert "Invalid action" in obs["text"]
    assert obs["text"].endswith("Target: 4\nCurrent: 2")
    # The step was consumed: the episode continues normally afterwards.
    _, reward, _, _, _ = env.step("+")
    assert (reward, u.position) == (0.0, 3)


@pytest.mark.parametrize(
    "answer", [PLUS, "<think>3 is below 4</think><action>+</action>", "+", '```json\n{"action": "+"}\n```', "plus"]
)
def test_action_formats_all_mean_plus(answer):
    env, _ = make()
    u = place(env, 2, 4)
    _, _, _, _, info = env.step(answer)
    assert info["action"]["parsed"] == "+"
    assert u.position == 3


# -- truncation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_truncated_after_exactly_ten_steps_at_level_0_with_invalid_steps_counting(variant):
    env, _ = make(level=0, reward_variant=variant)
    u = place(env, 0, 5)
    # Alternate no-op moves at 0 with unparseable answers: the position never changes.
    actions = ["-", "nonsense"] * 5
    invalid_reward = -1.0 if variant == "rl4vlm" else 0.0
    for i, action in enumerate(actions, start=1):
        _, reward, terminated, truncated, info = env.step(action)
        assert reward == (-1.0 if action == "-" else invalid_reward)
        assert terminated is False
        assert truncated is (i == 10), f"step {i}"
        assert u.position == 0
    assert u.elapsed_steps == 10
    assert info["success"] is False


@pytest.mark.parametrize("level", [1, 2])
def test_truncated_after_two_max_position_steps(level):
    top = MAX_POSITIONS[level]
    env, _ = make(level=level)
    u = place(env, 0, top)
    for i in range(1, 2 * top + 1):
        action = "-" if i % 2 else "+"  # 0 -> 0 -> 1 -> 0 -> 1 ...: never reaches the target
        _, _, terminated, truncated, _ = env.step(action)
        assert terminated is False
        assert truncated is (i == 2 * top), f"step {i}"
    assert u.position in (0, 1)


def test_reaching_the_target_on_an_early_step_is_not_truncated():
    env, _ = make(level=0)
    place(env, 0, 5)
    rewards = []
    for _ in range(5):
        _, reward, terminated, truncated, _ = env.step("+")
        rewards.append(reward)
    assert rewards == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert (terminated, truncated) == (True, False)


# -- episode generation -------------------------------------------------------------------------


@pytest.mark.parametrize("level", range(len(MAX_POSITIONS)))
def test_start_and_target_are_in_range_and_never_equal(level):
    top = MAX_POSITIONS[level]
    env = gym.make(ENV_ID, level=level, obs_mode="text")
    starts, targets = set(), set()
    for seed in range(300):
        _, info = env.reset(seed=seed)
        u = env.unwrapped
        assert 0 <= u.position <= top and 0 <= u.target <= top
        assert u.position != u.target, f"seed {seed}"
        assert info["optimal_steps"] == abs(u.target - u.position)
        assert info["level"] == level
        starts.add(u.position)
        targets.add(u.target)
    if top == 5:  # 300 uniform draws cover all six positions
        assert starts == set(range(6))
        assert targets == set(range(6))


@pytest.mark.parametrize(
    ("level", "drawn", "expected"),
    [
        (0, (5, 5), (5, 1)),  # RL4VLM: target = (target + 1) % max_position, so 6 % 5 = 1
        (0, (4, 4), (4, 0)),
        (0, (0, 0), (0, 1)),
        (0, (2, 2), (2, 3)),
        (0, (1, 3), (1, 3)),  # distinct draws are kept as they are
        (0, (3, 5), (3, 5)),
        (1, (10, 10), (10, 1)),
        (1, (9, 9), (9, 0)),
        (4, (100, 100), (100, 1)),
    ],
)
def test_rl4vlm_rule_for_equal_start_and_target(level, drawn, expected):
    env, u = make(level=level)
    u.np_random = ScriptedRng(list(drawn))  # reset() without a seed keeps this generator
    _, info = env.reset()
    assert (u.position, u.target) == expected
    assert info["optimal_steps"] == abs(expected[1] - expected[0])
    assert info["state_key"] == f"target={expected[1]}|current={expected[0]}"


@pytest.mark.parametrize("level", range(len(MAX_POSITIONS)))
def test_level_ladder(level):
    top = MAX_POSITIONS[level]
    env = gym.make(ENV_ID, obs_mode="text")
    _, info = env.reset(seed=1, options={"level": level})
    u = env.unwrapped
    assert info["level"] == level
    assert u.config.max_position == top
    # The edge is at max_position: one more "+" changes nothing.
    place(env, top - 1, 0)
    env.step("+")
    assert u.position == top
    env.step("+")
    assert u.position == top


def test_default_level_is_0():
    env = gym.make(ENV_ID, obs_mode="text")
    _, info = env.reset(seed=3)
    assert info["level"] == 0
    assert env.unwrapped.config.max_position == 5


def test_same_seed_same_episode():
    a = gym.make(ENV_ID, level=3)
    b = gym.make(ENV_ID, level=3)
    for seed in (0, 7, 2**30 + 5):
        obs_a, _ = a.reset(seed=seed)
        obs_b, _ = b.reset(seed=seed)
        assert obs_a["text"] == obs_b["text"]
        assert np.array_equal(obs_a["image"], obs_b["image"])


# -- observation --------------------------------------------------------------------------------


@pytest.mark.parametrize("obs_mode", ["text", "image+text"])
def test_text_is_target_then_current(obs_mode):
    env, _ = make(obs_mode=obs_mode)
    place(env, 2, 4)
    obs, _, _, _, _ = env.step("+")
    assert obs["text"] == "Target: 4\nCurrent: 3"
    assert obs["actions"] == ("-", "+")
    assert "4" not in obs["mission"] and "3" not in obs["mission"]


def test_image_mode_text_holds_no_state():
    env = gym.make(ENV_ID, obs_mode="image")
    obs, _ = env.reset(seed=0)
    assert obs["text"] == ""
    obs, _, _, _, _ = env.step("+")
    assert "Target" not in obs["text"] and "Current" not in obs["text"]


def test_text_mode_image_is_black():
    env = gym.make(ENV_ID, obs_mode="text")
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (300, 300, 3)
    assert not obs["image"].any()


def _frame(position: int, target: int, **kwargs) -> np.ndarray:
    env = gym.make(ENV_ID, render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    place(env, position, target)
    return env.render()


def test_image_is_300x300_white_with_black_text():
    obs, _ = gym.make(ENV_ID).reset(seed=0)
    image = obs["image"]
    assert image.shape == (300, 300, 3) and image.dtype == np.uint8
    # Black text anti-aliased on white: every pixel is a grey.
    assert np.array_equal(image[..., 0], image[..., 1]) and np.array_equal(image[..., 1], image[..., 2])
    grey = image[..., 0]
    assert np.mean(grey == 255) > 0.85  # a white canvas
    assert grey.min() == 0  # pure black ink
    # The corners and borders are white.
    assert (grey[:, :25] == 255).all() and (grey[:60] == 255).all() and (grey[-60:] == 255).all()


def test_image_lines_are_where_rl4vlm_draws_them():
    image = _frame(2, 4)
    ink = image[..., 0] < 128
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    # "Target: g" drawn at (30, 60) and "Current: c" at (30, 180), 36 pt.
    top_line = rows[rows < 150]
    bottom_line = rows[rows >= 150]
    assert 60 <= top_line.min() < 80 and top_line.max() < 115
    assert 180 <= bottom_line.min() < 200 and bottom_line.max() < 235
    assert 30 <= cols.min() < 40


def test_image_shows_the_state():
    base = _frame(2, 4)
    assert np.array_equal(base, _frame(2, 4))
    moved = _frame(3, 4)
    changed = np.flatnonzero((base != moved).any(axis=(1, 2)))
    assert changed.size and changed.min() >= 150  # only the "Current" line changed
    retargeted = _frame(2, 1)
    changed = np.flatnonzero((base != retargeted).any(axis=(1, 2)))
    assert changed.size and changed.max() < 150  # only the "Target" line changed


@pytest.mark.parametrize("size", [(224, 224), (448, 448)])
def test_image_size(size):
    env = gym.make(ENV_ID, image_size=size)
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (*size, 3)
    assert env.observation_space.contains(obs)
    grey = obs["image"][..., 0]
    assert grey.min() == 0 and np.mean(grey == 255) > 0.85
    obs, *_ = env.step("+")
    assert obs["image"].shape == (*size, 3)
