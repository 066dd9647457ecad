"""rl4vlm/KuhnPoker-vs-*-v0 play the same episodes, byte for byte, as the recorded ones.

``data/kuhn_episodes.json`` holds a digest of every episode of 200 seeds of each id and level (and
of the duplicate format, the default image size and unseeded resets), recorded from the env as it
was before it moved onto :class:`~rl4vlm_gym.envs.games.spiel.SpielView` (issue 35). Each episode
mixes the oracle's moves, the other move, synonyms and an unparseable output, asks the oracle at
every step and steps once after the end, so a changed deal, opponent draw, text, picture, reward,
``info`` field or oracle move changes its digest. Run this file as a script to record again (only
when an episode is meant to change, and say why in the commit).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

RECORD = Path(__file__).with_name("data") / "kuhn_episodes.json"
SEEDS = 200
# (name, env id, make kwargs, seeds): every id and level over SEEDS seeds, and fewer of the rest
CONFIGS: tuple[tuple[str, str, dict[str, Any], int], ...] = (
    ("random-0", "rl4vlm/KuhnPoker-vs-Random-v0", {"level": 0}, SEEDS),
    ("random-1", "rl4vlm/KuhnPoker-vs-Random-v0", {"level": 1}, SEEDS),
    ("cfr-0", "rl4vlm/KuhnPoker-vs-CFR-v0", {"level": 0}, SEEDS),
    ("cfr-1", "rl4vlm/KuhnPoker-vs-CFR-v0", {"level": 1}, SEEDS),
    ("cfr-0-duplicate", "rl4vlm/KuhnPoker-vs-CFR-v0", {"level": 0, "duplicate": True}, 40),
    ("random-1-duplicate", "rl4vlm/KuhnPoker-vs-Random-v0", {"level": 1, "duplicate": True}, 40),
    ("cfr-0-256px-text", "rl4vlm/KuhnPoker-vs-CFR-v0", {"level": 0, "image_size": 256, "obs_mode": "text"}, 10),
    ("random-1-256px", "rl4vlm/KuhnPoker-vs-Random-v0", {"level": 1, "image_size": 256}, 10),
)
OTHER_WORDS = ("pass", "bet", "check", "fold", "call")


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _transition(obs: dict[str, Any], *rest: Any) -> str:
    seen = (
        hashlib.sha256(obs["image"].tobytes()).hexdigest(),
        obs["image"].shape,
        obs["text"],
        obs["mission"],
        list(obs["actions"]),
    )
    return _digest(seen, *rest)


def episode(env: gym.Env, seed: int | None, chooser: random.Random) -> list[str]:
    """The digests of one episode's reset, every step and one step after the end; the agent plays
    the oracle, another word or an unparseable output, drawn by ``chooser``."""
    obs, info = env.reset(seed=seed)
    out = [_transition(obs, info)]
    for _ in range(12):
        oracle = env.unwrapped.oracle_action()
        draw = chooser.random()
        action = oracle if draw < 0.5 else "raise" if draw < 0.6 else chooser.choice(OTHER_WORDS)
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(_transition(obs, oracle, action, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    obs, reward, terminated, truncated, info = env.step("bet")  # after the end: refused, nothing changes
    out.append(_transition(obs, reward, terminated, truncated, info))
    return out


def play(env_id: str, kwargs: dict[str, Any], seeds: int) -> list[str]:
    """One digest per seed (its episode, then an unseeded episode that continues its RNG)."""
    env = gym.make(env_id, **{"image_size": 64, **kwargs})
    digests = []
    for seed in range(seeds):
        chooser = random.Random(seed)
        digests.append(_digest(episode(env, seed, chooser), episode(env, None, chooser)))
    env.close()
    return digests


def record() -> dict[str, list[str]]:
    return {name: play(env_id, kwargs, seeds) for name, env_id, kwargs, seeds in CONFIGS}


@pytest.mark.parametrize(("name", "env_id", "kwargs", "seeds"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_the_episodes_are_the_recorded_ones_byte_for_byte(name: str, env_id: str, kwargs: dict[str, Any], seeds: int) -> None:
    expected = json.loads(RECORD.read_text())[name]
    got = play(env_id, kwargs, seeds)
    changed = [seed for seed, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b]
    assert not changed, f"{name}: seeds {changed[:10]} play other episodes than the recorded ones ({len(changed)} of {seeds})"


if __name__ == "__main__":  # record again: python tests/envs/games/test_kuhn_episodes.py --record
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/envs/games/test_kuhn_episodes.py --record")
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record(), indent=0) + "\n")
    print(f"wrote {RECORD}")
