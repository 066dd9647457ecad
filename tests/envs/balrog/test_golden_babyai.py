"""balrog/BabyAI-* against BALROG's own wrapper, byte for byte (tests/envs/balrog/golden/babyai).

The recordings (record.py there, run in the private reference environment with BALROG af7d1f17
and its minigrid fork cf73dd14) hold, for BALROG's five tasks and 20 seeds each, whole episodes:
the mission, the instruction prompt, and at reset and after every step the observation text
(``long_term_context``, ``short_term_context``), the sha256 of the image array, the reward,
terminated, truncated and the progression. Our env replays the same seeds and the actions BALROG
played, and must show the same at every step.
"""

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

pytest.importorskip("minigrid")

from rl4vlm_gym.envs.balrog.babyai import ACTIONS, BabyAI  # noqa: E402
from rl4vlm_gym.wrappers import BalrogActions  # noqa: E402

DATA = Path(__file__).parent / "golden" / "babyai" / "babyai.json.gz"
IDS = {
    "BabyAI-MixedTrainLocal-v0/goto": "balrog/BabyAI-GoTo-v0",
    "BabyAI-MixedTrainLocal-v0/pickup": "balrog/BabyAI-Pickup-v0",
    "BabyAI-MixedTrainLocal-v0/open": "balrog/BabyAI-Open-v0",
    "BabyAI-MixedTrainLocal-v0/putnext": "balrog/BabyAI-PutNext-v0",
    "BabyAI-MixedTrainLocal-v0/pick_up_seq_go_to": "balrog/BabyAI-PickUpSeqGoTo-v0",
}


@cache
def recording() -> dict[str, Any]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        return json.load(f)


def _digest(image: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(image, dtype=np.uint8).tobytes()).hexdigest()


def _same_observation(obs: dict[str, Any], info: dict[str, Any], want: dict[str, Any], where: str) -> None:
    texts = {"long_term_context": want["long_term_context"], "short_term_context": want["short_term_context"]}
    assert info["balrog"] == texts, where
    assert obs["text"] == "\n".join(p for p in (texts["short_term_context"], texts["long_term_context"]) if p), where
    assert _digest(obs["image"]) == want["image_sha256"], where
    assert info["progress"] == want["progression"], where


def test_the_recording_covers_every_task_with_whole_episodes() -> None:
    data = recording()
    assert sorted(data["tasks"]) == sorted(IDS) and len(data["seeds"]) >= 5
    assert len(data["episodes"]) == len(data["tasks"]) * len(data["seeds"])
    for episode in data["episodes"]:
        last = episode["steps"][-1]
        assert last["terminated"] or last["truncated"]  # whole episodes
    assert data["language_action_space"] == list(ACTIONS) and data["default_action"] == BabyAI.DEFAULT_ACTION


@pytest.mark.parametrize("task", sorted(IDS))
def test_episodes_match_balrogs_byte_for_byte(task: str) -> None:
    env = gym.make(IDS[task])
    for episode in (e for e in recording()["episodes"] if e["task"] == task):
        seed = episode["seed"]
        obs, info = env.reset(seed=seed)
        assert obs["mission"] == episode["mission"], seed
        assert env.unwrapped.instruction_prompt() == episode["instruction_prompt"], seed
        assert env.unwrapped.game.max_steps == episode["max_steps"] == env.spec.max_episode_steps, seed
        assert list(obs["actions"]) == recording()["language_action_space"]
        _same_observation(obs, info, episode["reset"], f"{task} seed {seed} reset")
        for t, want in enumerate(episode["steps"]):
            obs, reward, terminated, truncated, info = env.step(want["action"])
            where = f"{task} seed {seed} step {t} ({want['action']})"
            assert (repr(float(reward)), terminated, truncated) == (want["reward"], want["terminated"], want["truncated"]), where
            _same_observation(obs, info, want, where)
        assert info["success"] == (episode["stats"]["progression"] == 1.0)
        assert episode["stats"]["mission"] == episode["mission"]


def test_balrogs_invalid_outputs_play_its_default_action() -> None:
    """BALROG's exact, case-sensitive match: with ``action_match="strict"`` the ``balrog-actions``
    wrapper plays what BALROG played for every recorded output, invalid ones included."""
    episodes = [e for e in recording()["episodes"] if any(s["output"] != s["action"] for s in e["steps"])][:4]
    assert episodes
    for episode in episodes:
        env = BalrogActions(gym.make(IDS[episode["task"]], action_match="strict", action_format="plain"))
        env.reset(seed=episode["seed"])
        for want in episode["steps"]:
            _, _, _, _, info = env.step(want["output"])
            assert info["action"].get("played", info["action"]["parsed"]) == want["action"], want["output"]
            # the protocol's feedback line on an invalid output is the wrapper's business: the env's text ends it
            seen = info["balrog"]["long_term_context"]
            assert (
                seen == want["long_term_context"]
                if want["output"] == want["action"]
                else seen.endswith(want["long_term_context"])
            )
