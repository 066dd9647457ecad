"""balrog/TextWorld-* against BALROG's own TextWorld wrapper, byte for byte
(golden/textworld/textworld.json.gz, made by golden/textworld/record.py from BALROG af7d1f17 on the 75
games of intelligent-go-explore bcb4052e, played by BALROG's textworld fork: Glulx for the treasure
hunter and coin collector): the instruction prompts, the step limit, every observation text, the
running score (BALROG's reward), the ends of episodes and ``get_stats()``, over 6 games per task
(walkthroughs mixed with goal / look / inventory / nonsense, a restart refused, a loss, 80 steps of
wandering, a cooking win)."""

from __future__ import annotations

import dataclasses
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("balrog")
pytest.importorskip("textworld")

DATA = Path(__file__).parent / "golden" / "textworld" / "textworld.json.gz"
IDS = {
    "treasure_hunter": "balrog/TextWorld-TreasureHunter-v0",
    "the_cooking_game": "balrog/TextWorld-CookingGame-v0",
    "coin_collector": "balrog/TextWorld-CoinCollector-v0",
}


@cache
def golden() -> dict[str, Any]:
    return json.loads(gzip.decompress(DATA.read_bytes()))


@cache
def env_for(task: str) -> gym.Env:
    """One env per task for every test (its started games are kept: a start costs 0.1-0.5 s)."""
    return gym.make(IDS[task], free_commands=True, obs_mode="text", action_format="plain")


def check(obs: dict, info: dict, expected: dict, where: str) -> None:
    long_term, short_term = expected["long_term_context"], expected["short_term_context"]
    assert info["balrog"] == {"long_term_context": long_term, "short_term_context": short_term, "image": None}, where
    assert obs["text"] == "\n".join(p for p in (short_term, long_term) if p), where


@pytest.mark.parametrize("task", IDS)
def test_prompt_and_step_limit_are_balrogs(task: str) -> None:
    recorded = golden()["tasks"][task]
    env = env_for(task)
    env.reset(seed=0)
    assert env.unwrapped.instruction_prompt() == recorded["instruction_prompt"]
    assert env.spec.max_episode_steps == recorded["max_steps"] == golden()["textworld_kwargs"]["max_episode_steps"] == 80


EPISODES = [pytest.param(task, i, id=f"{task}-{i}") for task in IDS for i in range(6)]


@pytest.mark.parametrize(("task", "index"), EPISODES)
def test_episode_matches_balrogs_byte_for_byte(task: str, index: int) -> None:
    """Each command BALROG's env was given, played through ours (``free_commands=True``, the plain
    format, which passes the command as written): the same texts, ends, score and progression."""
    episode = golden()["tasks"][task]["episodes"][index]
    env = env_for(task)
    where = f"{task} seed {episode['seed']}"
    obs, info = env.reset(seed=episode["seed"])
    assert env.unwrapped.game_name == episode["game"], where
    check(obs, info, episode["steps"][0]["text"], f"{where}, reset")
    base = env.unwrapped
    plain = base.parser
    # BALROG's agents can hand the env an empty string, which our contract reads as an output only
    # in BALROG's action formats (robust-naive passes the rest as written too, stripped)
    balrog = dataclasses.replace(plain, format="balrog-robust-naive")
    score = 0.0
    for t, (command, expected) in enumerate(zip(episode["commands"], episode["steps"][1:], strict=True), 1):
        at = f"{where}, step {t} ({command!r})"
        base.parser = balrog if not command.strip() else plain
        obs, reward, terminated, truncated, info = env.step(command)
        base.parser = plain
        assert info["action"]["valid"] and info["action"]["parsed"] == command, at
        check(obs, info, expected["text"], at)
        score += reward
        assert score == expected["reward"], at  # BALROG's reward is the running score; ours its change
        assert (terminated or truncated) == (expected["terminated"] or expected["truncated"]), at
        assert env.unwrapped.balrog_stats() == expected["stats"], at
        if terminated or truncated:
            assert info["progress"] == expected["stats"]["progression"], at
    assert t == len(episode["commands"])
