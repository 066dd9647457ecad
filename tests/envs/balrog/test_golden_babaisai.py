"""balrog/BabaIsAI-* against BALROG's own wrapper, byte for byte (tests/envs/balrog/golden/babaisai).

The recordings (record.py there, run in the private reference environment with BALROG af7d1f17
and nacloos/baba-is-ai ad466e02) hold, for BALROG's 40 tasks and 5 seeds each, 50 random outputs
per seed, winning episodes (our oracle's moves played through BALROG), episodes that break
"baba is you" (BALROG's wrapper then draws a new level mid-episode) and 100-step episodes: the
instruction prompt, and at reset and after every step the observation text
(``long_term_context``, ``short_term_context``), the image's size, the reward, done, the
progression and the target plan. Our env replays the same seeds and the actions BALROG played,
and must show the same at every step.

Two things are compared up to what cannot be reproduced: the memory addresses CPython prints in
the text BALROG shows after its mid-episode reset (the repr of a dict holding a lambda and a PIL
image) are masked, and ``done`` is compared as ``terminated or truncated``: BALROG reports the
100th step as terminated (gym 0.21's ``done``), ours as truncated (a step budget).
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai.env import BabaIsAI
from rl4vlm_gym.envs.balrog.babaisai.levels import TASKS
from rl4vlm_gym.envs.balrog.babaisai.renderer import tile
from rl4vlm_gym.wrappers import BalrogActions

GOLDEN = Path(__file__).parent / "golden" / "babaisai"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


@cache
def recording() -> dict[str, Any]:
    with gzip.open(GOLDEN / "babaisai.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def env_id(task: str) -> str:
    return f"balrog/BabaIsAI-{task.removeprefix('env/')}-v0"


def _masked(text: str) -> str:
    return _ADDRESS.sub(" at 0x...>", text)


def _same_observation(env: gym.Env, obs: dict[str, Any], info: dict[str, Any], want: dict[str, Any], where: str) -> None:
    base = env.unwrapped
    got = info["balrog"]
    assert set(got) == {"long_term_context", "short_term_context"}, where
    assert _masked(got["long_term_context"]) == _masked(want["long_term_context"]), where
    assert got["short_term_context"] == want["short_term_context"] == "", where
    assert obs["text"] == got["long_term_context"], where
    assert info["progress"] == want["progression"] == base.balrog_stats()["progression"], where
    assert base.target_plan == want["target_plan"], where
    assert list(base.game.image_size) == want["image_size"], where


def test_the_recording_covers_every_task_seeds_wins_and_resets() -> None:
    data = recording()
    assert data["tasks"] == [task.task for task in TASKS]
    assert data["language_action_space"] == list(E.ACTIONS) and data["default_action"] == BabaIsAI.DEFAULT_ACTION
    episodes = data["episodes"]
    for task in data["tasks"]:
        seeds = {e["seed"] for e in episodes if e["task"] == task and e["kind"] == "random"}
        assert len(seeds) >= 5, task
        assert any(e["steps"][-1]["progression"] == 1.0 for e in episodes if e["task"] == task), f"{task}: no win recorded"
    assert sum("IS YOU rule was broken" in s["long_term_context"] for e in episodes for s in e["steps"]) >= 10
    assert any(len(e["steps"]) == data["max_steps"] and e["steps"][-1]["terminated"] for e in episodes)  # the budget's end
    assert any(s["output"] != s["action"] for e in episodes for s in e["steps"])  # invalid outputs


def test_instruction_prompt_and_step_limit_are_balrogs() -> None:
    env = gym.make(env_id("env/goto_win"), obs_mode="text")
    env.reset(seed=0)
    assert env.unwrapped.instruction_prompt() == recording()["instruction_prompt"]
    assert env.spec.max_episode_steps == recording()["max_steps"] == 100


@pytest.mark.parametrize("task", recording()["tasks"])
def test_episodes_match_balrogs_byte_for_byte(task: str) -> None:
    env = gym.make(env_id(task), obs_mode="text")
    for episode in (e for e in recording()["episodes"] if e["task"] == task):
        seed = episode["seed"]
        obs, info = env.reset(seed=seed)
        assert list(obs["actions"]) == recording()["language_action_space"]
        _same_observation(env, obs, info, episode["reset"], f"{task} {episode['kind']} seed {seed} reset")
        for t, want in enumerate(episode["steps"]):
            obs, reward, terminated, truncated, info = env.step(want["action"])
            where = f"{task} {episode['kind']} seed {seed} step {t} ({want['action']})"
            assert repr(float(reward)) == want["reward"], where
            assert (terminated or truncated) == (want["terminated"] or want["truncated"]), where
            if want["terminated"] and float(want["reward"]) != 0:
                assert terminated, where  # a win (or a loss) ends the game; only the budget truncates
            _same_observation(env, obs, info, want, where)
        assert info["success"] == (episode["steps"][-1]["progression"] == 1.0)
    env.close()


def test_images_have_the_originals_size() -> None:
    for task in ("env/goto_win", "env/two_room-make_you"):
        env = gym.make(env_id(task))
        obs, _ = env.reset(seed=0)
        want = next(e for e in recording()["episodes"] if e["task"] == task)["reset"]["image_size"]
        assert obs["image"].shape == (want[1], want[0], 3)


def test_balrogs_invalid_outputs_play_its_default_action() -> None:
    """BALROG's exact, case-sensitive match: with ``action_match="strict"`` the ``balrog-actions``
    wrapper plays "idle" for every output BALROG refused, and prefixes BALROG's feedback line."""
    episodes = [e for e in recording()["episodes"] if any(s["output"] != s["action"] for s in e["steps"])][:8]
    assert episodes
    feedback = BalrogActions.FEEDBACK.format(action="idle")
    for episode in episodes:
        env = BalrogActions(gym.make(env_id(episode["task"]), obs_mode="text", action_match="strict", action_format="plain"))
        env.reset(seed=episode["seed"])
        for want in episode["steps"]:
            _, reward, _, _, info = env.step(want["output"])
            assert info["action"].get("played", info["action"]["parsed"]) == want["action"], want["output"]
            assert repr(float(reward)) == want["reward"]
            prefix = "" if want["output"] == want["action"] else feedback
            assert _masked(info["balrog"]["long_term_context"]) == prefix + _masked(want["long_term_context"])


def test_object_tiles_are_the_originals_pixel_for_pixel() -> None:
    """Every tile but the words' equals the original's; a word tile keeps the original's frame
    (its 9-pixel border at the original's 3x scale: the outer 3 pixels here)."""
    recorded = np.load(GOLDEN / "tiles.npz")
    kinds = {"wall": E.WALL, "ball": E.BALL, "key": E.KEY, "door": E.DOOR}
    for name in recorded.files:
        want = recorded[name]
        if name == "empty":
            got = tile(None)
        elif name == "border":
            got = tile(E.make(E.BORDER))
        elif name.startswith("baba:"):
            got = tile(E.make(E.BABA, direction=int(name.split(":")[1])))
        elif name.startswith("word:"):
            word = name.split(":")[1]
            if word == "is":
                kind = E.IS
            elif word in E.PROPERTY_BY_NAME:
                kind = E.property_word(E.PROPERTY_BY_NAME[word])
            else:
                kind = E.noun_word(E.NOUN_BY_NAME[word])
            got = tile(E.make(kind))
            frame = np.ones((32, 32), bool)
            frame[3:-3, 3:-3] = False
            assert np.array_equal(got[frame], want[frame]), name
            assert (got[~frame] > 100).any()  # a word is drawn
            continue
        else:
            noun, color = name.split(":")
            got = tile(E.make(kinds[noun], color))
        assert np.array_equal(got, want), name
