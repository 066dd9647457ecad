"""EnvRollout's episode specs and argument checks (no trainer, no torch: the inner loop's part of
tests/integrations/test_trl.py)."""

from __future__ import annotations

import importlib.util
import json

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.integrations.trl import EnvRollout, episode_dataset, episode_spec, parse_episode_spec

# datasets is imported by episode_dataset when a test calls it, not here (every test worker imports this
# module to collect it, and datasets takes half a second).
pytestmark = pytest.mark.skipif(importlib.util.find_spec("datasets") is None, reason="needs the trl extra: pip install 'rl4vlm-gym[trl]'")

ENV = "rl4vlm/NumberLine-v0"


def test_episode_specs_round_trip_and_bad_ones_are_named():
    assert parse_episode_spec(episode_spec(7, {"level": 2})) == (7, {"level": 2})
    assert json.loads(episode_dataset([1, 2])[1]["prompt"]) == {"seed": 2, "options": {}}
    for bad, says in [
        ("not json", "not JSON"),
        ('{"seed": -1}', "seed"),
        ('{"seed": 4294967296}', "seed"),
        ('{"seed": 4294967295}', None),  # the last valid seed
        ('{"seed": true}', "seed"),
        ('{"seed": 1, "extra": 2}', "must be an object"),
        ('{"seed": 1, "options": [1]}', "options"),
        ("[1]", "must be an object"),
        (" " * 4097, "over the limit"),
        ([{"role": "user", "content": "hi"}], "episode spec string"),
    ]:
        if says is None:
            parse_episode_spec(bad)
            continue
        with pytest.raises(ValueError, match=says):
            parse_episode_spec(bad)


def test_text_only_is_enforced():
    with pytest.raises(ValueError, match="trains on text only"):
        EnvRollout(ENV, obs_mode="image")
    rollout = EnvRollout(lambda: gym.make(ENV, obs_mode="image"))
    with pytest.raises(ValueError, match="obs_mode is 'image'"):
        rollout._new_env()
    with pytest.raises(ValueError, match="max_turns"):
        EnvRollout(ENV, max_turns=0)
