"""Rules of the cooperative referential game (rl4vlm/ReferentialGame-*-v0 and the AEC env): the
draw, the speaker's and the listener's views, the built-in partners, both paid together
(tests/test_conformance.py runs the kit on the views)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

from pettingzoo.test import api_test, render_test, seed_test

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.referential import LEVELS, ReferentialAEC, Round, fits, name, referential_env, shortest_description


@pytest.mark.parametrize("level", range(len(LEVELS)))
def test_distractors_differ_from_the_target_in_one_attribute_and_a_description_always_exists(level: int) -> None:
    config = LEVELS[level]
    for seed in range(50):
        r = Round.draw(np.random.default_rng(seed), level)
        target = r.candidates[r.target]
        assert len(set(r.candidates)) == config.candidates
        assert all(sum(a != b for a, b in zip(c, target, strict=True)) == 1 for c in r.candidates if c != target)
        phrase = shortest_description(config, target, list(r.candidates))
        assert [c for c in r.candidates if fits(c, phrase)] == [target]
        shorter = [p for p in config.phrases() if len(p.split()) < len(phrase.split())]
        assert all(sum(fits(c, p) for c in r.candidates) != 1 or not fits(target, p) for p in shorter)


def test_the_phrases_are_one_word_or_none_per_attribute_in_order() -> None:
    assert len(LEVELS[0].phrases()) == 5 * 5 - 1 and len(LEVELS[1].phrases()) == 3 * 5 * 5 - 1
    assert "red circle" in LEVELS[0].phrases() and "circle red" not in LEVELS[0].phrases()
    assert "small red circle" in LEVELS[1].phrases() and "small" not in LEVELS[0].phrases()


def test_the_listener_does_not_see_the_target_and_the_speaker_does() -> None:
    env = gym.make("rl4vlm/ReferentialGame-Listener-v0", image_size=64, level=1)
    env.reset(seed=4)
    base = env.unwrapped
    other = (base.round.target + 1) % len(base.round.candidates)
    before = base._observation("")
    base.round = dataclasses.replace(base.round, target=other)  # another target, the same message
    after = base._observation("")
    assert before["text"] == after["text"] and np.array_equal(before["image"], after["image"])
    speaker = gym.make("rl4vlm/ReferentialGame-Speaker-v0", image_size=64, level=1)
    obs, _ = speaker.reset(seed=4)
    r = speaker.unwrapped.round
    assert f"The target (framed): the {name(r.candidates[r.target])}." in obs["text"]
    speaker.unwrapped.round = dataclasses.replace(r, target=(r.target + 1) % len(r.candidates))
    assert not np.array_equal(speaker.unwrapped._observation("")["image"], obs["image"])  # the frame moved


@pytest.mark.parametrize("env_id", ["rl4vlm/ReferentialGame-Listener-v0", "rl4vlm/ReferentialGame-Speaker-v0"])
def test_the_oracle_always_wins_in_one_step(env_id: str) -> None:
    env = gym.make(env_id, image_size=64, obs_mode="text")
    for level in range(len(LEVELS)):
        for seed in range(20):
            env.reset(seed=seed, options={"level": level})
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            # the speaker's game is one of chance (an ambiguous message's pick is drawn): no fixed plan length
            optimal = 1 if env_id.endswith("Listener-v0") else -1
            assert reward == 1.0 and terminated and info["success"] and info["optimal_steps"] == optimal


def test_the_built_in_listener_picks_uniformly_among_the_candidates_that_fit() -> None:
    env = gym.make("rl4vlm/ReferentialGame-Speaker-v0", image_size=64, level=2)
    picks: Counter[bool] = Counter()
    for seed in range(300):
        env.reset(seed=seed)
        r = env.unwrapped.round
        target = dict(r.candidates[r.target])
        word = target["shape"]
        fitting = sum(fits(c, word) for c in r.candidates)
        _, reward, _, _, info = env.step(word)
        assert info["action"]["valid"] and fits(r.candidates[r.listener_order[env.unwrapped.picked - 1]], word)
        picks[fitting] += 1
        picks[(fitting, reward)] += 1
    for fitting in (k for k in list(picks) if isinstance(k, int)):
        rate = picks[(fitting, 1.0)] / picks[fitting]
        if picks[fitting] >= 40:
            assert abs(rate - 1 / fitting) < 0.15, (fitting, rate)


def test_words_outside_the_vocabulary_or_order_are_invalid() -> None:
    # strict matching: the phrase itself (lenient matching would read "purple circle" as the one phrase in it, "circle")
    env = gym.make("rl4vlm/ReferentialGame-Speaker-v0", image_size=64, reward_variant="penalty", action_match="strict")
    env.reset(seed=0)
    for bad in ("purple circle", "circle red", "small red circle"):  # level 0 has no sizes
        obs, reward, terminated, _, info = env.step(bad)
        assert not info["action"]["valid"] and reward == -0.1 and not terminated and env.unwrapped.message is None
    listener = gym.make("rl4vlm/ReferentialGame-Listener-v0", image_size=64)
    listener.reset(seed=0)
    assert not listener.step("4")[4]["action"]["valid"]  # three candidates


# The multi-agent env


def small_aec(**kwargs: object) -> ReferentialAEC:
    return referential_env(image_size=64, render_fps=1000, **kwargs)


@pytest.mark.parametrize("level", range(len(LEVELS)))
def test_pettingzoos_own_api_seed_and_render_tests_pass(level: int) -> None:
    with pytest.warns(UserWarning):  # PettingZoo advises Box/Discrete spaces; ours are text
        api_test(small_aec(level=level), num_cycles=100)
    seed_test(lambda: small_aec(level=level), num_cycles=50)
    render_test(lambda render_mode=None: small_aec(level=level, render_mode=render_mode))


def test_the_speaker_talks_the_listener_picks_and_both_are_paid_together() -> None:
    env = small_aec(level=1, reward_variant="penalty")
    env.reset(seed=2)
    assert env.agent_selection == "speaker" and env.observe("listener")["actions"] == ()
    assert "The speaker has not spoken yet." in env.observe("listener")["text"]
    env.step("purple")  # not a word of the vocabulary: the speaker tries again
    assert env.agent_selection == "speaker" and env.rewards == {"speaker": -0.1, "listener": 0.0}
    message = env.oracle_action()
    env.step(message)
    assert env.agent_selection == "listener" and f'The speaker said "{message}".' in env.observe("listener")["text"]
    env.step(env.oracle_action())
    assert env.rewards == {"speaker": 1.0, "listener": 1.0} and all(env.terminations.values())
    # a wrong pick costs both
    env.reset(seed=2)
    env.step(env.oracle_action())
    wrong = next(str(k + 1) for k, i in enumerate(env.round.listener_order) if i != env.round.target)
    env.step(wrong)
    assert env.rewards == {"speaker": 0.0, "listener": 0.0}
    assert "not the target" in env.observe("listener")["text"]


def test_max_cycles_truncates_a_speaker_who_never_says_a_valid_phrase() -> None:
    env = small_aec(max_cycles=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step("blah")
    assert all(env.truncations.values()) and not any(env.terminations.values())
