"""Rules of the balrog/TextWorld-* ids (tests/test_conformance.py runs the conformance kit on them).

Games come from the user cache (made at first use, seconds each for coin collector and cooking); the
test of the cache itself makes one game in a temporary cache, in two processes at once.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("balrog")
pytest.importorskip("textworld")

from rl4vlm_gym.envs.balrog import textworld_games  # noqa: E402
from rl4vlm_gym.envs.balrog.instructions import TEXTWORLD_STEPS_IN_BALROG, textworld_instructions  # noqa: E402
from rl4vlm_gym.envs.balrog.textworld_env import after_objective, draw_text, tidy  # noqa: E402
from rl4vlm_gym.wrappers import BalrogActions  # noqa: E402

IDS = {
    "treasure_hunter": "balrog/TextWorld-TreasureHunter-v0",
    "the_cooking_game": "balrog/TextWorld-CookingGame-v0",
    "coin_collector": "balrog/TextWorld-CoinCollector-v0",
}


def make(task: str = "coin_collector", **kwargs: Any) -> gym.Env:
    return gym.make(IDS[task], **{"obs_mode": "text", **kwargs})


def test_cards_name_balrogs_tasks_and_its_step_limit() -> None:
    for task, env_id in IDS.items():
        card = rl4vlm_gym.env_card(env_id)
        assert card.benchmark == ("textworld", task) and card.max_episode_steps == 80 and card.extra == "balrog"
    assert textworld_games.SETTINGS["treasure_hunter"][1] == {"level": 30}
    assert textworld_games.SETTINGS["coin_collector"][1] == {"level": 220}
    assert textworld_games.SETTINGS["the_cooking_game"][1]["recipe"] == 5 and textworld_games.POOL == 25


def test_the_first_observation_drops_everything_up_to_the_objective() -> None:
    assert after_objective("BANNER\nGo east. Take the coin.\n\n-= Kitchen =-", "Go east. Take the coin.") == "\n\n-= Kitchen =-"
    assert after_objective("no objective here", "Go east.") == "no objective here"
    assert tidy("\n\n> \t     -= Kitchen =-0/1   \n\n\n\nYou see") == "> -= Kitchen =-0/1\n\nYou see"
    env = make()
    obs, _ = env.reset(seed=0)
    raw = env.unwrapped.state.feedback
    assert obs["mission"] and obs["mission"] in tidy(raw) and obs["mission"] not in obs["text"]
    assert tidy(raw).endswith(obs["text"]) and obs["text"].startswith("-= ")  # the first room, nothing before it
    assert "TextWorld" not in obs["text"]  # the banner went with the objective


def test_reset_seed_plays_game_seed_mod_25_and_no_seed_draws_one() -> None:
    env = make()
    for seed in (0, 3, 24, 25, 2**30 + 4):
        env.reset(seed=seed)
        index, first = env.unwrapped.index, env.unwrapped.state.feedback
        env.reset(seed=seed)
        assert index == env.unwrapped.index == seed % 25 and env.unwrapped.state.feedback == first
    env.reset(seed=3)
    drawn = []
    for _ in range(3):  # without a seed the env's RNG picks: the same after the same seeded reset
        env.reset()
        drawn.append(env.unwrapped.index)
    rng, expected = np.random.default_rng(3), []
    for _ in range(4):  # each reset draws the game, then the interpreter's seed; the first is the seeded reset's
        expected.append(int(rng.integers(25)))
        rng.integers(2**31 - 1)
    assert drawn == expected[1:] and len(set(drawn)) > 1


def test_the_balrog_suites_play_distinct_games() -> None:
    from rl4vlm_gym.harness.suite import load_suite

    for name in ("balrog", "balrog-smoke"):
        tasks = [task for task in load_suite(name).tasks if task.env.startswith("balrog/TextWorld")]
        assert {task.env for task in tasks} == set(IDS.values())
        for task in tasks:
            assert len({seed % textworld_games.POOL for seed in task.seeds}) == len(task.seeds), (name, task.name)


def test_the_treasure_hunters_seeds_are_the_first_quick_ones() -> None:
    import json

    found = json.loads(textworld_games.SEEDS_FILE.read_text())
    seeds = textworld_games.seeds("treasure_hunter")
    assert seeds == tuple(found["seeds"]) and len(set(seeds)) == textworld_games.POOL
    assert found["settings"] == textworld_games.SETTINGS["treasure_hunter"][1] == {"level": 30}
    # the first 25 that finished: every seed below the last kept was kept or rejected, in order
    assert sorted([*seeds, *found["rejected"]]) == list(range(seeds[-1] + 1))
    assert max(found["cpu_seconds"]) <= found["cpu_limit_s"] == 20
    assert textworld_games.seeds("coin_collector") == tuple(range(25))
    assert textworld_games.game_path("treasure_hunter", 1).name == f"game-{seeds[1]:02d}.z8"


def test_the_image_is_the_text_drawn() -> None:
    env = make(obs_mode="image+text", image_size=96)
    obs, _ = env.reset(seed=1)
    assert np.array_equal(obs["image"], draw_text(obs["text"], (96, 96)))
    assert np.array_equal(draw_text("go east", (64, 80)), draw_text("go east", (64, 80)))
    assert not np.array_equal(draw_text("go east", (64, 80)), draw_text("go west", (64, 80)))
    assert draw_text("x", (64, 80)).shape == (64, 80, 3)
    page = draw_text("word " * 3000, (64, 64))  # far too long: cut at 6 px, still a frame
    assert page.shape == (64, 64, 3) and page.any()
    image_only, _ = make(obs_mode="image").reset(seed=1)
    assert image_only["text"] == "" and np.array_equal(image_only["image"], draw_text(obs["text"], (448, 448)))


def test_rewards_follow_the_score_and_progress_is_balrogs_progression() -> None:
    env = make("the_cooking_game")
    env.reset(seed=0)
    base = env.unwrapped
    max_score, total, done, progress = base.state.max_score, 0.0, False, [0.0]
    assert max_score > 1 and base.optimal_steps == len(base.plan) > 0
    while not done:
        score = base.state.score
        _, reward, terminated, truncated, info = env.step(base.oracle_action())
        total += reward
        done = terminated or truncated
        assert reward == base.state.score - score and info["success"] == bool(base.state.won)
        if not done:
            assert info["progress"] == pytest.approx(base.state.score / max_score)  # the running value
        progress.append(info["progress"])
    assert terminated and info["success"] and total == max_score and progress[-1] == 1.0
    assert progress == sorted(progress) and 0 < progress[len(progress) // 2] < 1


def test_a_lost_game_ends_with_score_over_max_score() -> None:
    env = make("the_cooking_game")
    env.reset(seed=0)
    base = env.unwrapped
    while not (base.state.score > 0 and (eats := [c for c in base.admissible_actions if c.startswith("eat ")])):
        env.step(base.oracle_action())
    _, reward, terminated, truncated, info = env.step(eats[0])  # eating an ingredient raw loses the cooking game
    assert terminated and base.state.lost and not info["success"] and reward == 0.0
    assert info["progress"] == pytest.approx(base.state.score / base.state.max_score) and 0 < info["progress"] < 1


def test_commands_that_are_not_admissible_are_invalid_unless_free() -> None:
    env = make()
    obs, info = env.reset(seed=2)
    key = info["state_key"]
    obs, reward, terminated, truncated, info = env.step("dance wildly")
    assert not info["action"]["valid"] and info["state_key"] == key and env.unwrapped.commands == []
    free = make(free_commands=True)
    free.reset(seed=2)
    obs, reward, terminated, truncated, info = free.step("dance wildly")
    assert info["action"]["valid"] and "not a verb I recognise" in obs["text"] and free.unwrapped.commands == ["dance wildly"]
    for refused in ("quit", "restart", "undo", "dance\nwildly", "x" * 201):  # (game 2 admits "go east")
        _, _, _, _, info = free.step(refused)
        assert not info["action"]["valid"], refused
    assert len(free.unwrapped.commands) == 1
    _, _, _, _, info = free.step("go  " + obs["actions"][0].split()[-1])  # admissible commands still match first
    assert info["action"]["valid"]
    with pytest.raises(ValueError, match="free_commands"):
        make(free_commands="yes")


def test_balrogs_protocol_passes_every_string_to_the_game_with_free_commands() -> None:
    env = BalrogActions(make(free_commands=True, action_format="balrog-naive", action_match="strict"))
    env.reset(seed=2)
    obs, _, _, _, info = env.step("Examine the map")
    assert info["action"]["valid"] and "did not contain a valid action" not in obs["text"]
    strict = BalrogActions(make(action_format="balrog-naive", action_match="strict"))
    strict.reset(seed=2)
    obs, _, _, _, info = strict.step("Examine the map")  # no default action: nothing happens, as in the game
    assert not info["action"]["valid"] and obs["text"].startswith(BalrogActions.FEEDBACK_NO_DEFAULT)


def test_episodes_end_at_balrogs_80_steps() -> None:
    env = make()
    env.reset(seed=3)
    for step in range(1, 81):
        _, _, terminated, truncated, _ = env.step("look")
        assert not terminated and truncated == (step == 80)


def test_instruction_prompt_states_the_real_step_limit() -> None:
    env = make()
    env.reset(seed=0)
    prompt = env.unwrapped.instruction_prompt()
    assert prompt == textworld_instructions("coin_collector") and "You have 80 steps" in prompt and prompt.endswith("PLAY!")
    assert "Coin Collector" in prompt and "unlock ... with ...: unlock a door or a container with a key" in prompt
    assert TEXTWORLD_STEPS_IN_BALROG == {"treasure_hunter": 40, "the_cooking_game": 80, "coin_collector": 25}
    assert all("You have 80 steps" in textworld_instructions(task) for task in IDS)


def _make_in(cache: str, task: str, index: int) -> str:
    os.environ["RL4VLM_GYM_CACHE"] = cache
    return str(textworld_games.make_game(task, index))


@pytest.mark.slow  # two processes make one coin collector game (about 5-10 s)
def test_two_processes_make_one_game_at_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        paths = pool.starmap(_make_in, [(str(tmp_path), "coin_collector", 7)] * 2)
    assert paths[0] == paths[1]
    folder = Path(paths[0]).parent
    assert sorted(p.name for p in folder.iterdir()) == ["game-07.json", "game-07.z8"]  # no temporary left
    assert folder.parent.parent == tmp_path / "textworld"
    with pytest.raises(ValueError, match="outside the pool"):
        textworld_games.game_path("coin_collector", 25)
    with pytest.raises(ValueError, match="unknown"):
        textworld_games.game_path("zork", 0)


@pytest.mark.slow
def test_treasure_hunter_oracle_wins() -> None:  # a cold cache first makes game 0 (up to 20 s of CPU)
    env = make("treasure_hunter")
    env.reset(seed=0)
    base = env.unwrapped
    steps, done = 0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(base.oracle_action())
        steps, done = steps + 1, terminated or truncated
    assert info["success"] and reward == 1.0 and steps == base.optimal_steps and info["progress"] == 1.0
