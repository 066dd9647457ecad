"""balrog/Crafter-v0 against BALROG's own Crafter wrapper, byte for byte (golden/crafter/crafter.json.gz,
made by golden/crafter/record.py from BALROG af7d1f17 with crafter 1.8.3): the instruction prompt, the
action list, every long- and short-term context, the image's SHA-256, the rewards, the ends of
episodes and ``get_stats()``, over seven worlds (60 to 305 steps: sleep, a night, death, a dawn)."""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("balrog")

ENV = "balrog/Crafter-v0"
DATA = Path(__file__).parent / "golden" / "crafter" / "crafter.json.gz"


@cache
def golden() -> dict[str, Any]:
    return json.loads(gzip.decompress(DATA.read_bytes()))


def check(obs: dict, info: dict, expected: dict, env: gym.Env, where: str) -> None:
    long_term, short_term = expected["long_term_context"], expected["short_term_context"]
    assert info["balrog"] == {"long_term_context": long_term, "short_term_context": short_term}, where
    assert obs["text"] == "\n".join(p for p in (short_term, long_term) if p), where
    assert hashlib.sha256(np.ascontiguousarray(obs["image"]).tobytes()).hexdigest() == expected["image_sha256"], where
    stats = env.unwrapped.balrog_stats()
    assert stats == expected["stats"] and type(stats["score"]) is type(expected["stats"]["score"]), where
    assert info["progress"] == expected["stats"]["progression"], where


def test_prompt_actions_and_budget_are_balrogs() -> None:
    data = golden()
    env = gym.make(ENV)
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.instruction_prompt() == data["instruction_prompt"]
    assert list(obs["actions"]) == data["actions"] and env.unwrapped.DEFAULT_ACTION == data["default_action"]
    assert env.spec.max_episode_steps == data["max_steps"]


@pytest.mark.parametrize("index", range(len(golden()["episodes"])), ids=lambda i: f"seed-{golden()['episodes'][i]['seed']}")
def test_episode_matches_balrogs_byte_for_byte(index: int) -> None:
    """What BALROG played for each output (its check_action_validity: "Noop" for a string that is
    not one of its 17 names), played through our env."""
    episode = golden()["episodes"][index]
    env = gym.make(ENV)
    where = f"seed {episode['seed']}"
    obs, info = env.reset(seed=episode["seed"])
    check(obs, info, episode["steps"][0], env, f"{where}, reset")
    for t, (output, action, expected) in enumerate(zip(episode["outputs"], episode["played"], episode["steps"][1:], strict=True), 1):
        obs, reward, terminated, truncated, info = env.step(action)
        at = f"{where}, step {t} ({output!r} -> {action!r})"
        assert (reward, terminated, truncated) == (expected["reward"], expected["terminated"], expected["truncated"]), at
        check(obs, info, expected, env, at)
    env.close()


def test_balrog_actions_plays_noop_for_balrogs_invalid_outputs() -> None:
    """The outputs themselves through the balrog-actions wrapper, matched strictly as BALROG matches
    them ("move west", "noop", "Place table" are not actions): the same game, BALROG's text after
    the wrapper's feedback line."""
    from rl4vlm_gym.wrappers import BalrogActions

    episode = next(e for e in golden()["episodes"] if e["outputs"] != e["played"])
    env = BalrogActions(gym.make(ENV, action_match="strict", action_format="plain", obs_mode="text"))
    env.reset(seed=episode["seed"])
    for t, (output, action, expected) in enumerate(zip(episode["outputs"], episode["played"], episode["steps"][1:], strict=True), 1):
        _, reward, *_, info = env.step(output)
        at = f"seed {episode['seed']}, step {t} ({output!r} -> {action!r})"
        assert info["action"]["valid"] == (output == action) and reward == expected["reward"], at
        assert info["balrog"]["long_term_context"].endswith(expected["long_term_context"]), at
        assert info["balrog"]["short_term_context"] == expected["short_term_context"], at
