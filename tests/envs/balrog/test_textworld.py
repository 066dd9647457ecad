"""Rules of the balrog/TextWorld-* ids (tests/test_conformance.py runs the conformance kit on them;
test_golden_textworld.py compares them with BALROG's own wrapper).

Games are compiled from the shipped definitions into the user cache (by the set-up, or at first use,
about a second each); the test of the cache itself compiles one game in a temporary cache, in two
processes at once.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import multiprocessing
import os
import pickle
import tarfile
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("balrog")
pytest.importorskip("textworld")

from rl4vlm_gym.envs.balrog import textworld_games  # noqa: E402
from rl4vlm_gym.envs.balrog.textworld_env import (  # noqa: E402
    GAME_INFOS,
    PROMPTS,
    TextWorld,
    ZGame,
    as_glulx,
    draw_text,
    filter_objective,
    inadmissible_steps,
)
from rl4vlm_gym.wrappers import BalrogActions  # noqa: E402

IDS = {
    "treasure_hunter": "balrog/TextWorld-TreasureHunter-v0",
    "the_cooking_game": "balrog/TextWorld-CookingGame-v0",
    "coin_collector": "balrog/TextWorld-CoinCollector-v0",
}
STATUS = " " * 128 + "-= Kitchen =-0/3"  # the z-machine's status line after a reply


def make(task: str = "coin_collector", **kwargs: Any) -> gym.Env:
    return gym.make(IDS[task], **{"obs_mode": "text", **kwargs})


def test_cards_name_balrogs_tasks_and_its_step_limit() -> None:
    for task, env_id in IDS.items():
        card = rl4vlm_gym.env_card(env_id)
        assert card.benchmark == ("textworld", task) and card.max_episode_steps == 80 and card.extra == "balrog"
        assert "25 fixed games" in card.summary
    assert textworld_games.POOL == 25 and textworld_games.GLULX_TASKS == {"treasure_hunter", "coin_collector"}


def test_the_shipped_games_are_balrogs_75_with_their_source_and_licence() -> None:
    manifest = textworld_games.manifest()
    assert "conglu1997/intelligent-go-explore bcb4052e6de36a4389e666acd374832cfab1a042 textworld/tw_games" in manifest["source"]
    assert (textworld_games.DATA / "LICENSE").read_text().startswith("MIT License")
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(textworld_games.ARCHIVE.read_bytes()))) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert len(members) == 75
    for task in textworld_games.TASKS:
        names = textworld_games.names(task)
        assert list(names) == sorted(names) and len(names) == 25  # BALROG's order: sorted file names
        for entry in manifest["games"][task]:
            assert hashlib.sha256(members[f"{task}/{entry['name']}.json"]).hexdigest() == entry["json_sha256"]
    assert textworld_games.names("treasure_hunter")[0] == "seed_10033"
    assert textworld_games.names("coin_collector")[24] == "level_220_seed_8250"
    assert {len(textworld_games.walkthrough("treasure_hunter", i)) for i in range(0, 25, 6)} == {20}
    assert len(textworld_games.walkthrough("the_cooking_game", 10)) == 45


def test_reset_seed_plays_game_seed_mod_25_and_no_seed_draws_one() -> None:
    env = make()
    base = env.unwrapped
    for seed in (0, 3, 24, 25, 2**30 + 4, 3_000_000_000):
        obs, _ = env.reset(seed=seed)
        assert base.index == seed % 25 and base.game_name == textworld_games.names("coin_collector")[seed % 25]
        first = obs["text"]
        assert env.reset(seed=seed)[0]["text"] == first
    env.reset(seed=3)
    drawn = [env.reset()[1]["state_key"].split("|")[1] for _ in range(3)]
    rng = np.random.default_rng(3)
    expected = [int(rng.integers(25)) for _ in range(4)][1:]  # one draw per reset, the first the seeded reset's
    assert drawn == [f"game={index}" for index in expected]


def test_the_balrog_suites_play_distinct_games() -> None:
    from rl4vlm_gym.harness.suite import load_suite

    for name in ("balrog", "balrog-smoke"):
        tasks = [task for task in load_suite(name).tasks if task.env.startswith("balrog/TextWorld")]
        assert {task.env for task in tasks} == set(IDS.values())
        for task in tasks:
            assert len({seed % textworld_games.POOL for seed in task.seeds}) == len(task.seeds), (name, task.name)


def test_the_objective_is_cut_from_every_observation() -> None:
    for task in ("treasure_hunter", "coin_collector"):
        env = make(task, free_commands=True)
        obs, info = env.reset(seed=4)
        objective = obs["mission"]
        assert objective.endswith(".") and len(objective) < 200 and objective not in obs["text"]
        assert obs["text"].startswith("-= ")  # the first room: the banner and the objective went
        obs, *_ = env.step("goal")
        assert obs["text"] == "" and info["balrog"]["short_term_context"] == ""  # "goal" shows nothing, as in BALROG
    cooking = make("the_cooking_game", free_commands=True)
    obs, _ = cooking.reset(seed=0)
    obs, *_ = cooking.step("goal")
    assert obs["mission"] not in obs["text"] and obs["text"].startswith(">") and obs["text"].endswith("-= Livingroom =-0/2")


def test_filter_objective_is_balrogs() -> None:
    assert filter_objective("BANNER\nGo east.\n\n-= Kitchen =-\n", "Go east.") == "-= Kitchen =-"
    assert filter_objective("Go east. A. Go east. B ", "Go east.") == "B"  # after the last copy
    assert filter_objective("  no objective here\n", "Go east.") == "no objective here"
    assert filter_objective(" x ", "") == "x"


def test_as_glulx_turns_z_machine_replies_into_glulx_ones() -> None:
    assert as_glulx("\nYou can't go that way.\n\n>" + STATUS) == "\nYou can't go that way.\n"
    assert as_glulx("Are you sure you want to restart?" + STATUS) == "Are you sure you want to restart?"
    end = "Would you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command?\n>"
    assert as_glulx(f"\n{' ' * 55}*** The End ***\n\n{end}{STATUS}") == f"\n{' ' * 31}*** The End ***\n\n{end}"
    assert as_glulx(f"{' ' * 54}*** You lost! ***\n") == f"{' ' * 30}*** You lost! ***\n"
    assert as_glulx("Identification number: ////\nStandard interpreter 1.0 (1F) / Library serial number 080126\n>" + STATUS) == (
        "Identification number: ////\nInterpreter version 1.3.5 / VM 3.1.2 / Library serial number 080126"
    )
    assert as_glulx("a\n> b") == "a\n> b"  # no status line, no prompt at the end: unchanged


@pytest.mark.parametrize(("task", "index"), [("treasure_hunter", 2), ("the_cooking_game", 10), ("coin_collector", 9)])
def test_zgame_plays_as_textworlds_env(task: str, index: int) -> None:
    """ZGame (free commands) and textworld's env (admissible commands) give the same replies,
    scores and ends, restart and a loss included."""
    import textworld

    path = str(textworld_games.make_game(task, index))
    ours = ZGame(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = textworld.start(path, request_infos=textworld.EnvInfos(**GAME_INFOS, extras=["walkthrough"]))
    walk = textworld_games.walkthrough(task, index)
    extras = ["goal", "look", "inventory", "xyzzy", "", "version", "restart", "no", "score"]
    commands = [c for i, step in enumerate(walk) for c in ((extras[i], step) if i < len(extras) else (step,))]
    if task == "the_cooking_game":  # eat what was taken first: a loss
        taken = next(i for i, c in enumerate(commands) if c.startswith("take ") and "knife" not in c)
        commands = [*commands[: taken + 1], "eat " + commands[taken].split(" from ")[0][5:], *commands[taken + 1 :]]
    a, b = ours.reset(), theirs.reset()
    fields = ("feedback", "score", "max_score", "won", "lost", "objective", "extra.walkthrough")
    assert [a[f] for f in fields] == [b[f] for f in fields]
    for command in commands:
        (a, _, done_a), (b, _, done_b) = ours.step(command), theirs.step(command)
        assert [a[f] for f in fields] + [done_a] == [b[f] for f in fields] + [done_b], command
        if done_a:
            break
    assert a.lost if task == "the_cooking_game" else a.score in (0, 1)
    ours.close()
    theirs.close()


def test_games_started_twice_share_textworlds_game_and_play_as_textworlds_own_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """_start loads a game's .json once per process: a game started again after one of its starts
    was played to the end (a loss, with an eaten ingredient) plays as textworld.start's, which
    loads its own, admissible commands and quest plans included, step by step."""
    import textworld
    from textworld.generator.game import Game

    from rl4vlm_gym.envs.balrog.textworld_env import _start

    path = str(textworld_games.make_game("the_cooking_game", 10))
    infos = textworld.EnvInfos(**GAME_INFOS, admissible_commands=True, policy_commands=True)
    walk = list(textworld_games.walkthrough("the_cooking_game", 10))
    taken = next(i for i, c in enumerate(walk) if c.startswith("take ") and "knife" not in c)
    commands = [*walk[: taken + 1], "eat " + walk[taken].split(" from ")[0][5:]]
    first = _start(path, infos)
    first.reset()
    for command in commands:
        first.step(command)
    monkeypatch.setattr(Game, "load", classmethod(lambda cls, name: pytest.fail(f"{name} was loaded again")))
    again = _start(path, infos)
    assert again._game is first._game
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = textworld.start(path, request_infos=infos)
    assert theirs._game is not first._game
    fields = ("feedback", "score", "won", "lost", "admissible_commands", "policy_commands")
    a, b = again.reset(), theirs.reset()
    assert [a[f] for f in fields] == [b[f] for f in fields]
    for command in commands:
        (a, _, _), (b, _, _) = again.step(command), theirs.step(command)
        assert [a[f] for f in fields] == [b[f] for f in fields], command
    assert a["lost"]
    for game in (first, again, theirs):
        game.close()


def test_the_image_is_the_text_drawn() -> None:
    env = make(obs_mode="image+text", image_size=96)
    obs, _ = env.reset(seed=1)
    assert np.array_equal(obs["image"], draw_text(obs["text"], (96, 96)))
    assert not np.array_equal(draw_text("go east", (64, 80)), draw_text("go west", (64, 80)))
    page = draw_text("word " * 3000, (64, 64))  # far too long: cut at 6 px, still a frame
    assert page.shape == (64, 64, 3) and page.any()
    image_only, _ = make(obs_mode="image").reset(seed=1)
    assert image_only["text"] == "" and np.array_equal(image_only["image"], draw_text(obs["text"], (448, 448)))


def test_rewards_follow_the_score_and_progression_is_balrogs() -> None:
    env = make("the_cooking_game", free_commands=True)
    env.reset(seed=10)  # the shortest cooking walkthrough: 45 steps
    base = env.unwrapped
    max_score, total, done, progress = base.state.max_score, 0.0, False, []
    assert max_score > 1 and base.optimal_steps == 39 < len(base.walkthrough) == 45
    while not done:
        score = base.state.score
        _, reward, terminated, truncated, info = env.step(base.oracle_action())
        total, done = total + reward, terminated or truncated
        assert reward == base.state.score - score and info["success"] == bool(base.state.won)
        assert base.balrog_stats() == {"progression": info["progress"] if done else 0.0}  # BALROG sets it at the end
        progress.append(info["progress"])
    assert terminated and info["success"] and total == max_score and progress[-1] == 1.0
    assert progress == sorted(progress) and 0 < progress[len(progress) // 2] < 1


def test_a_lost_game_ends_with_score_over_max_score() -> None:
    env = make("the_cooking_game")
    env.reset(seed=10)
    base = env.unwrapped
    while not (base.state.score > 0 and (eats := [c for c in base.admissible_actions if c.startswith("eat ")])):
        env.step(base.oracle_action())
    _, reward, terminated, _, info = env.step(eats[0])  # eating an ingredient raw loses the cooking game
    assert terminated and base.state.lost and not info["success"] and reward == 0.0
    assert "*** You lost! ***" in info["balrog"]["long_term_context"]
    assert base.balrog_stats()["progression"] == info["progress"] == pytest.approx(base.state.score / base.state.max_score)


def test_commands_that_are_not_admissible_are_invalid_unless_free() -> None:
    env = make()
    obs, info = env.reset(seed=2)
    assert obs["actions"] and "look" in obs["actions"]
    key = info["state_key"]
    obs, _, _, _, info = env.step("dance wildly")
    assert not info["action"]["valid"] and info["state_key"] == key and env.unwrapped.commands == []
    free = make(free_commands=True, action_format="plain")
    obs, _ = free.reset(seed=2)
    assert obs["actions"] == ()  # BALROG accepts every string: no list
    for command, reply in (("dance wildly", "That's not a verb I recognise."), ("LOOK", "-= ")):
        obs, _, _, _, info = free.step(command)
        assert info["action"] == {"raw": command, "parsed": command, "valid": True, "error": None}
        assert obs["text"].startswith(reply)
    for refused in ("", "quit", "save", "restore game", "script", "undo", "again", "g", "dance\nwildly", "x" * 201, "\x00look"):
        _, _, _, _, info = free.step(refused)  # an empty output too, in our formats
        assert not info["action"]["valid"], refused
    assert free.unwrapped.commands == ["dance wildly", "LOOK"]
    naive = make(free_commands=True, action_format="balrog-naive")
    naive.reset(seed=2)
    obs, _, _, _, info = naive.step("")  # BALROG's agents can give "": the game answers it
    assert info["action"]["valid"] and obs["text"] == "I beg your pardon?"
    cooking = make("the_cooking_game", free_commands=True, action_format="plain")
    cooking.reset(seed=0)
    obs, _, _, _, info = cooking.step("undo")  # the z-machine answers undo and again in BALROG too
    assert info["action"]["valid"] and obs["text"].startswith('Your interpreter does not provide "undo"')
    _, _, _, _, info = cooking.step("again")
    assert info["action"]["valid"] and cooking.unwrapped.commands == ["undo", "again"]
    _, _, _, _, info = cooking.step("save")
    assert not info["action"]["valid"]
    with pytest.raises(ValueError, match="free_commands"):
        make(free_commands="yes")


def test_free_commands_survive_hostile_outputs() -> None:
    """The kit's hostile outputs with free commands (its fuzz check assumes a closed action set):
    none raises or crashes the z-machine (a NUL did), and a refused one changes nothing."""
    from rl4vlm_gym.testing import FUZZ_INPUTS

    env = make(free_commands=True)
    for name, output in FUZZ_INPUTS.items():
        _, info = env.reset(seed=0)
        key = info["state_key"]
        obs, reward, _, _, info = env.step(output)
        assert info["action"]["valid"] or (info["state_key"] == key and reward == 0.0 and "Invalid action" in obs["text"]), name
        if name in ("empty", "whitespace", "nul", "lone_surrogate", "bytes", "binary", "huge"):
            assert not info["action"]["valid"], name


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
    env = make(free_commands=True)
    env.reset(seed=3)
    for step in range(1, 81):
        _, _, terminated, truncated, _ = env.step("look")
        assert not terminated and truncated == (step == 80)
        assert env.unwrapped.balrog_stats() == {"progression": 0.0}


def test_instruction_prompts_are_balrogs_verbatim() -> None:
    for task in IDS:
        env = make(task)
        env.reset(seed=0)
        assert env.unwrapped.instruction_prompt() == PROMPTS[task]
    steps = {task: prompt.rsplit("You have ", 1)[1].split()[0] for task, prompt in PROMPTS.items()}
    assert steps == {
        "treasure_hunter": "40",
        "the_cooking_game": "80",
        "coin_collector": "25",
    }  # BALROG's, though the limit is 80
    assert (
        PROMPTS["coin_collector"].startswith("You are an agent playing TextWorld")
        and "\n    2in the game" in PROMPTS["coin_collector"]
    )


def test_state_key_follows_the_world_not_the_text() -> None:
    env = make("treasure_hunter", free_commands=True)
    _, info = env.reset(seed=0)
    start = info["state_key"]
    assert start.startswith("treasure_hunter|game=0|score=0|")
    moves = ("look", "inventory", "goal", "go east", "go west", "go east", "go west", "go east", "look", "inventory")
    keys = [env.step(command)[4]["state_key"] for command in moves]
    # the game marks a room on the first return to it, so the second and third visits agree
    assert (
        keys[:3] == [start] * 3
        and keys[3] != start
        and keys[4] != keys[3]
        and keys[9] == keys[8] == keys[7] == keys[5] != keys[6]
    )
    _, _, _, _, info = env.step("take keycard from table")
    assert info["state_key"] != keys[7]


def test_a_pickled_env_replays_its_episode() -> None:
    env = make("coin_collector", free_commands=True).unwrapped
    env.reset(seed=6)
    for command in textworld_games.walkthrough("coin_collector", 6)[:5]:
        env.step(command)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.reply == env.reply and copy._state_key() == env._state_key()
    command = textworld_games.walkthrough("coin_collector", 6)[5]
    assert copy.step(command)[0]["text"] == env.step(command)[0]["text"]


def test_the_oracle_replans_when_the_episode_leaves_the_walkthrough() -> None:
    env = make("coin_collector", free_commands=True)
    env.reset(seed=1)
    base = env.unwrapped
    first = base.oracle_action()
    env.step("go north" if first != "go north" else "go south")  # off the walkthrough (or a wall)
    done, steps = False, 1
    while not done:
        _, _, terminated, truncated, info = env.step(base.oracle_action())
        done, steps = terminated or truncated, steps + 1
    assert info["success"] and steps <= base.optimal_steps + 3


def _replayed_plan(env: TextWorld) -> list[str]:
    """textworld's plan after the episode's commands replayed from the start in a fresh game."""
    import textworld

    from rl4vlm_gym.envs.balrog.textworld_env import _start

    game = _start(str(textworld_games.make_game(env.task, env.index)), textworld.EnvInfos(**GAME_INFOS, policy_commands=True))
    try:
        state = game.reset()
        for command in env.commands:
            state, _, _ = game.step(command)
        return list(state.policy_commands or ())
    finally:
        game.close()


def test_a_replan_that_plays_only_the_new_commands_plans_as_a_replay_from_the_start() -> None:
    """The oracle keeps its planning game through an episode and plays it only the commands sent
    since the last replan: at every replan of an episode that leaves the walkthrough often, the plan
    is the one of a fresh game that replays the episode from the start."""
    env = TextWorld(task="coin_collector", obs_mode="text")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    replans = 0
    for _ in range(8):
        if rng.random() < 0.5:  # off the plan: the next oracle move replans
            env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
            if env.plan == [] and not (env.state.won or env.state.lost):
                kept = env._planner
                assert env._replan() == _replayed_plan(env), env.commands
                assert env._planner is kept or kept is None, "the planning game was not kept"
                replans += 1
        obs, _, terminated, truncated, _ = env.step(env.oracle_action())
        if terminated or truncated:
            break
    assert replans >= 2
    env.close()


def oracle_wins(task: str, index: int, free_commands: bool = True) -> tuple[bool, int, int]:
    env = TextWorld(
        task=task, free_commands=free_commands, obs_mode="text"
    )  # no 80-step limit: 4 cooking walkthroughs are longer
    env.reset(seed=index)
    steps, done = 0, False
    while not done:
        _, _, done, _, info = env.step(env.oracle_action())
        steps += 1
    env.close()
    return info["success"], steps, env.optimal_steps


@pytest.mark.parametrize(("task", "index"), [("treasure_hunter", 0), ("coin_collector", 24), ("the_cooking_game", 10)])
def test_the_oracle_wins_a_few_games(task: str, index: int) -> None:
    won, steps, optimal = oracle_wins(task, index)
    assert won and steps == optimal


@pytest.mark.parametrize("free_commands", [True, False])
def test_the_oracle_skips_walkthrough_steps_that_are_not_admissible(free_commands: bool) -> None:
    walkthrough = textworld_games.walkthrough("the_cooking_game", 24)
    assert walkthrough[4] == walkthrough[6] == "open fridge"  # the fridge is open the second time
    won, steps, optimal = oracle_wins("the_cooking_game", 24, free_commands=free_commands)
    assert won and steps == optimal == 46 < len(walkthrough) == 57
    if not free_commands:  # the rule that writes tw_plans.json, played by textworld (the slow test checks all 75 games)
        assert inadmissible_steps("the_cooking_game", 24) == tuple(sorted(textworld_games.skipped_steps("the_cooking_game", 24)))
        assert 6 in textworld_games.skipped_steps("the_cooking_game", 24)  # the second "open fridge"


def oracle_wins_by_the_admissible_walkthrough(task: str, index: int) -> tuple[bool, int, int]:
    """oracle_wins without free commands, checking at every step that the oracle's move is the
    walkthrough's next admissible command and that each step it leaves out was not admissible when
    it came: the shipped plan (tw_plans.json) is the rule's, found in the same playthrough."""
    env = TextWorld(task=task, obs_mode="text")
    obs, _ = env.reset(seed=index)
    walkthrough = textworld_games.walkthrough(task, index)
    assert env.walkthrough == walkthrough
    step, steps, done = 0, 0, False
    while not done:
        action = env.oracle_action()
        while walkthrough[step] not in obs["actions"]:  # a step the plan leaves out
            assert step in textworld_games.skipped_steps(task, index), (task, index, step)
            step += 1
        assert action == walkthrough[step] and step not in textworld_games.skipped_steps(task, index), (task, index, step)
        obs, _, done, _, info = env.step(action)
        step, steps = step + 1, steps + 1
    for rest in range(step, len(walkthrough)):  # a step after the end would be left out too
        assert rest in textworld_games.skipped_steps(task, index) and walkthrough[rest] not in obs["actions"], (task, index, rest)
    env.close()
    return info["success"], steps, env.optimal_steps


@pytest.mark.slow  # 75 games twice, about a minute
def test_the_oracle_wins_all_75_games() -> None:
    """Both ways of playing, every game; without free commands, the shipped plans are checked too."""
    results = {(task, index): oracle_wins(task, index) for task in IDS for index in range(25)}
    assert all(won and steps == optimal for won, steps, optimal in results.values())
    assert max(steps for _, steps, _ in results.values()) == 75  # within BALROG's 80 (4 walkthroughs are longer)
    for task in IDS:
        for index in range(25):
            won, steps, optimal = oracle_wins_by_the_admissible_walkthrough(task, index)
            assert won and steps == optimal, (task, index)


def _make_in(cache: str, task: str, index: int) -> str:
    os.environ["RL4VLM_GYM_CACHE"] = cache
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the compiled .z8 must be the one tw_games.json names
        return str(textworld_games.make_game(task, index))


@pytest.mark.slow  # two processes compile one game (a few seconds)
def test_two_processes_compile_one_game_at_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        paths = pool.starmap(_make_in, [(str(tmp_path), "coin_collector", 7)] * 2)
    assert paths[0] == paths[1]
    path = Path(paths[0])
    name = textworld_games.names("coin_collector")[7]
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{name}.json", f"{name}.z8"]  # no temporary left
    assert hashlib.sha256(path.read_bytes()).hexdigest() == textworld_games.manifest()["games"]["coin_collector"][7]["z8_sha256"]
    assert json.loads(path.with_suffix(".json").read_bytes()) == textworld_games.definition("coin_collector", 7)
    assert path.parent.parent.parent == tmp_path / "textworld"
    with pytest.raises(ValueError, match="outside the pool"):
        textworld_games.game_path("coin_collector", 25)
    with pytest.raises(ValueError, match="unknown"):
        textworld_games.game_path("zork", 0)
