"""Tests that kill the mutants of ``rl4vlm_gym.core`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)


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
