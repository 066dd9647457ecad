"""balrog/NetHack-v0 against BALROG's own wrappers, byte for byte (golden/nle/nle.json.gz, made by
golden/nle/record.py from BALROG af7d1f17 with balrog-nle 0.9.0): the instruction prompt, the action
list, every long- and short-term context of both text modes, the image's hash (VLM mode), the
rewards, the ends of episodes and ``get_stats()``."""

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

pytestmark = pytest.mark.extra("nethack")

DATA = Path(__file__).parent / "golden" / "nle" / "nle.json.gz"


@cache
def golden() -> dict[str, Any]:
    return json.loads(gzip.decompress(DATA.read_bytes()))


def image_digest(image: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest() + f":{image.shape[0]}x{image.shape[1]}"


def check_observation(obs: dict, info: dict, expected: dict, strings: list[str], env, where: str) -> None:
    long_term, short_term = strings[expected["long"]], strings[expected["short"]]
    assert info["balrog"] == {"long_term_context": long_term, "short_term_context": short_term}, where
    assert obs["text"] == "\n".join(p for p in (short_term, long_term) if p), where
    if expected["image"] is not None:
        assert image_digest(obs["image"]) == expected["image"], where
    assert env.unwrapped.balrog_stats() == expected["stats"], where


def replay(env: gym.Env, episode: dict, strings: list[str]) -> None:
    """Play ``episode``'s actions (what BALROG played for each output) through our env and compare.
    BALROG makes an env per episode; ours plays one episode after another (a reset must leave
    nothing of the last game)."""
    where = f"{episode['mode']} {episode['kind']} seed {episode['seed']}"
    obs, info = env.reset(seed=episode["seed"])
    base = env.unwrapped
    assert base.instruction_prompt() == strings[episode["instruction_prompt"]]
    assert list(obs["actions"]) == episode["actions"] and base.DEFAULT_ACTION == episode["default_action"]
    check_observation(obs, info, episode["reset"], strings, env, f"{where}, reset")
    for t, step in enumerate(episode["steps"]):
        obs, reward, terminated, truncated, info = env.step(step["action"])
        at = f"{where}, step {t + 1} ({step['output']!r} -> {step['action']!r})"
        assert (repr(float(reward)), terminated, truncated) == (step["reward"], step["terminated"], step["truncated"]), at
        check_observation(obs, info, step, strings, env, at)


def replay_all(env_id: str, episodes: list[dict], strings: list[str]) -> None:
    """Every episode of one mode through one env, in the recording's order: several games end (by
    death, by NLE's abort), and a game's end shows NetHack's top-ten list, where the scores of
    earlier games would appear if a reset kept them."""
    mode = episodes[0]["mode"]
    env = gym.make(env_id, text_format=mode, obs_mode="image+text" if mode == "vlm" else "text")
    for episode in episodes:
        replay(env, episode, strings)
    env.close()


def test_recording_header_names_balrogs_commit_and_nle() -> None:
    header = golden()["header"]
    assert header["balrog"]["commit"].startswith("af7d1f17e0deec3a7a0e334beae5f11b7a21371b")
    assert header["packages"]["balrog-nle"] == "0.9.0"
    assert header["kwargs"] == {
        "character": "@",
        "max_episode_steps": 100000,
        "no_progress_timeout": 150,
        "savedir": None,
        "save_ttyrec_every": 0,
        "skip_more": True,
    }


@pytest.mark.parametrize("mode", ["hybrid", "vlm"])
def test_nethack_matches_balrogs_transcripts(mode: str) -> None:
    """Random play on 6 seeds, two deaths and a no-progress timeout, in one of BALROG's modes."""
    data = golden()
    episodes = [e for e in data["episodes"] if e["mode"] == mode]
    assert len([e for e in episodes if e["kind"] == "random"]) >= 5 and {e["kind"] for e in episodes} == {"random", "death", "timeout"}
    replay_all("balrog/NetHack-v0", episodes, data["strings"])
