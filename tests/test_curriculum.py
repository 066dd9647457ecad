from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.curriculum import (
    CurriculumWrapper,
    FixedSchedule,
    MixtureEntry,
    MixtureEnv,
    SuccessRateCurriculum,
)


def test_success_rate_promotes_and_demotes_after_full_windows() -> None:
    c = SuccessRateCurriculum(max_level=2, window=4, promote_at=0.75, demote_at=0.25)
    for success in (True, True, True):
        c.update(0, success)
    assert c.next_level() == 0  # window not full yet
    c.update(0, False)  # 3/4 = 0.75 >= promote_at
    assert c.next_level() == 1 and c.success_rate is None
    for _ in range(4):
        c.update(1, False)
    assert c.next_level() == 0


def test_success_rate_stays_between_thresholds_and_at_the_top() -> None:
    c = SuccessRateCurriculum(max_level=1, start_level=1, window=2, promote_at=0.9, demote_at=0.1)
    for _ in range(10):
        c.update(1, True)
    assert c.next_level() == 1
    middle = SuccessRateCurriculum(max_level=3, window=2, promote_at=0.9, demote_at=0.1)
    for success in (True, False, True, False):
        middle.update(0, success)
    assert middle.next_level() == 0


def test_success_rate_ignores_outcomes_from_other_levels() -> None:
    c = SuccessRateCurriculum(max_level=3, window=1)
    c.update(2, True)
    assert c.next_level() == 0


def test_success_rate_state_round_trips() -> None:
    c = SuccessRateCurriculum(max_level=3, window=3)
    c.update(0, True)
    restored = SuccessRateCurriculum(max_level=3, window=3)
    restored.load_state_dict(c.state_dict())
    restored.update(0, True)
    restored.update(0, True)
    assert restored.next_level() == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_level": 2, "start_level": 3}, "start_level"),
        ({"max_level": 2, "window": 0}, "window"),
        ({"max_level": 2, "promote_at": 0.2, "demote_at": 0.5}, "demote_at"),
    ],
)
def test_success_rate_rejects_bad_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SuccessRateCurriculum(**kwargs)


def test_fixed_schedule_follows_milestones() -> None:
    s = FixedSchedule([(0, 1), (2, 0), (3, 4)])
    seen = []
    for _ in range(5):
        seen.append(s.next_level())
        s.update(seen[-1], True)
    assert seen == [1, 1, 0, 4, 4]
    with pytest.raises(ValueError, match="milestones"):
        FixedSchedule([(5, 1)])


def _play_oracle_episode(env: gym.Env, seed: int) -> dict:
    _, info = env.reset(seed=seed)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        done = terminated or truncated
    return info


def test_wrapper_promotes_an_oracle_through_every_level_and_reports_it() -> None:
    curriculum = SuccessRateCurriculum(max_level=4, window=3)
    env = CurriculumWrapper(gym.make("rl4vlm/NumberLine-v0", obs_mode="text"), curriculum)
    levels = [_play_oracle_episode(env, seed)["level"] for seed in range(15)]
    assert levels == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    assert curriculum.next_level() == 4


def test_wrapper_demotes_a_failing_agent() -> None:
    curriculum = SuccessRateCurriculum(max_level=3, start_level=2, window=2)
    env = CurriculumWrapper(gym.make("rl4vlm/EZPoints-v0", obs_mode="text"), curriculum)
    for seed in range(2):
        env.reset(seed=seed)
        env.step("=")  # submitting an empty formula always fails
    _, info = env.reset(seed=9)
    assert info["level"] == 1


def test_mixture_is_seeded_passes_check_env_and_reports_ids() -> None:
    entries = [
        MixtureEntry("rl4vlm/NumberLine-v0", levels=[0, 3]),
        MixtureEntry("rl4vlm/EZPoints-v0", weight=3.0),
    ]
    env = MixtureEnv(entries, obs_mode="text")
    check_env(env, skip_render_check=True)
    first = [env.reset(seed=s)[1] for s in range(40)]
    again = [env.reset(seed=s)[1] for s in range(40)]
    assert first == again
    ids = [info["env_id"] for info in first]
    assert set(ids) == {"rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0"}
    assert ids.count("rl4vlm/EZPoints-v0") > ids.count("rl4vlm/NumberLine-v0")
    assert {i["level"] for i in first if i["env_id"] == "rl4vlm/NumberLine-v0"} == {0, 3}
    assert {i["level"] for i in first if i["env_id"] == "rl4vlm/EZPoints-v0"} == {0}


def test_mixture_entry_curriculum_advances() -> None:
    curriculum = SuccessRateCurriculum(max_level=4, window=2)
    env = MixtureEnv([MixtureEntry("rl4vlm/NumberLine-v0", curriculum=curriculum)], obs_mode="text")
    infos = [_play_oracle_episode(env, seed) for seed in range(6)]
    assert [i["level"] for i in infos] == [0, 0, 1, 1, 2, 2]


def test_mixture_rejects_mismatched_image_sizes_and_bad_weights() -> None:
    with pytest.raises(ValueError, match="image_size"):
        MixtureEnv([
            MixtureEntry("rl4vlm/NumberLine-v0", kwargs={"image_size": 128}),
            MixtureEntry("rl4vlm/EZPoints-v0"),
        ])
    with pytest.raises(ValueError, match="weights"):
        MixtureEnv([MixtureEntry("rl4vlm/NumberLine-v0", weight=0.0)])
    with pytest.raises(ValueError, match="at least one"):
        MixtureEnv([])
