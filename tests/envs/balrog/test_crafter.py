"""Rules of balrog/Crafter-v0 (tests/test_conformance.py runs the conformance kit on it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import OrderedDict
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = [pytest.mark.extra("balrog"), pytest.mark.slow]  # each reset generates a 64x64 world

ENV = "balrog/Crafter-v0"


def make(**kwargs: Any) -> gym.Env:
    return gym.make(ENV, **kwargs)


def clear_view(env: gym.Env, material: str = "grass") -> tuple[Any, Any]:
    """Fill the 9x7 view with one material and remove its creatures: a scene to write on."""
    world, player = env.unwrapped.game._world, env.unwrapped.game._player
    for dx in range(-4, 5):
        for dy in range(-3, 4):
            pos = player.pos + np.array((dx, dy))
            _, obj = world[pos]
            if obj is not None and obj is not player:
                world.remove(obj)
            world[pos] = material
    return world, player


def test_actions_are_balrogs_names_in_crafters_order() -> None:
    from crafter import constants

    from rl4vlm_gym.envs.balrog.crafter import ACTIONS

    renamed = {"move_left": "move_west", "move_right": "move_east", "move_up": "move_north", "move_down": "move_south"}
    assert [a.lower().replace(" ", "_") for a in ACTIONS] == [renamed.get(a, a) for a in constants.actions]
    assert len(ACTIONS) == 17 and make().unwrapped.game._world.area == (64, 64)


def test_balrog_text_names_the_nearest_cell_of_each_kind_in_the_order_the_scan_meets_them() -> None:
    """BALROG's describe_env scans the 9x7 window column by column from the west (north to south in
    each) and keeps the nearest cell of each kind, the first found on a tie; kinds come in the order
    the scan first meets them. ``obs["text"]`` is its short-term text, then its long-term text."""
    env = make(obs_mode="text")
    env.reset(seed=0)
    world, player = clear_view(env)
    x, y = player.pos
    world[x - 2, y - 1] = "tree"  # 3 steps, north-west
    world[x + 1, y + 3] = "tree"  # 4 steps: not the nearest
    world[x, y - 2] = "water"  # 2 steps north
    world[x + 4, y] = "stone"  # 4 steps east
    world[x, y + 1] = "sand"  # the player faces south at reset: what it faces
    player.inventory.update(wood=3, sapling=1, food=4)
    long_term, short_term = env.unwrapped.balrog_texts()
    assert long_term == (
        "You see:\n- grass 1 step to your west\n- tree 3 steps to your north-west\n- water 2 steps to your north\n"
        "- sand 1 step to your south\n- stone 4 steps to your east\n\nYou face sand at your front."
    )
    assert short_term == (
        "Your status:\n- health: 9/9\n- food: 4/9\n- drink: 9/9\n- energy: 9/9\n\nYour inventory:\n- sapling: 1\n- wood: 3"
    )
    obs, _, _, _, info = env.step("Noop")
    assert info["balrog"] == dict(zip(("long_term_context", "short_term_context"), env.unwrapped.balrog_texts(), strict=True))
    assert obs["text"] == f"{info['balrog']['short_term_context']}\n{info['balrog']['long_term_context']}"
    player.inventory.update(wood=0, sapling=0)
    assert env.unwrapped.balrog_texts()[1].endswith("You have nothing in your inventory.")


def test_balrog_text_says_sleeping_or_dead_first() -> None:
    from rl4vlm_gym.envs.balrog.crafter import DIED, SLEEPING

    env = make(obs_mode="text")
    env.reset(seed=0)
    view, _ = env.unwrapped.balrog_texts()
    player = env.unwrapped.game._player
    player.sleeping = True
    assert env.unwrapped.balrog_texts()[0] == f"{SLEEPING}\n\n\n\n{view}"  # BALROG joins them with 4 newlines
    player.health = 0
    assert env.unwrapped.balrog_texts()[0].startswith(SLEEPING)  # sleeping is said first
    player.sleeping = False
    assert env.unwrapped.balrog_texts()[0] == f"{DIED}\n\n\n\n{view}"


def test_balrog_window_is_cut_as_its_slice_cuts_it_at_the_worlds_edge() -> None:
    """BALROG slices semantic[x-4:x+5, y-3:y+4]: at the far edge the window is cut short, and
    what the player faces beyond the world is "nothing"; near x=0 or y=0 the start is negative, and
    the slice is empty."""
    env = make(obs_mode="text")
    env.reset(seed=0)
    game = env.unwrapped.game
    world, player = game._world, game._player
    for obj in world.objects:
        if obj is not player:
            world.remove(obj)

    def at(x: int, y: int, facing: tuple[int, int]) -> str:
        world.move(player, (x, y))
        player.facing = facing
        return env.unwrapped.balrog_texts()[0]

    world._mat_map[:, :] = world._mat_ids["grass"]
    world[(63, 30)] = "tree"
    assert at(62, 30, (1, 0)) == "You see:\n- grass 1 step to your west\n- tree 1 step to your east\n\nYou face tree at your front."
    assert at(63, 31, (1, 0)) == "You see:\n- grass 1 step to your west\n- tree 1 step to your north\n\nYou face nothing at your front."
    assert at(3, 30, (-1, 0)) == "You see nothing away from you.\n\nYou face nothing at your front."  # 3 - 4 < 0
    assert at(30, 2, (0, 1)) == "You see nothing away from you.\n\nYou face nothing at your front."  # 2 - 3 < 0
    assert at(30, 3, (0, -1)).startswith("You see:\n- grass 1 step to your west")  # 3 - 3 = 0: whole


def test_reset_seed_plays_the_world_crafter_env_builds_with_that_seed() -> None:
    """BALROG's crafter.Env draws its world seed when built; built with seed=s, its first world is
    ours at reset(seed=s). A reset without a seed draws the next world from the env's RNG."""
    import crafter

    from rl4vlm_gym.envs.balrog.crafter import AREA, SIZE, VIEW

    env = make(obs_mode="text")
    for seed in (5, 2**31 + 7):
        env.reset(seed=seed)
        theirs = crafter.Env(area=AREA, view=VIEW, size=SIZE, seed=seed)
        theirs.reset()
        assert np.array_equal(theirs._world._mat_map, env.unwrapped.game._world._mat_map)
    first = [env.reset(seed=3)[1]["state_key"], env.reset()[1]["state_key"], env.reset()[1]["state_key"]]
    again = [env.reset(seed=3)[1]["state_key"], env.reset()[1]["state_key"], env.reset()[1]["state_key"]]
    assert first == again and len(set(first)) == 3


def test_balrog_stats_are_get_stats() -> None:
    env = make(obs_mode="text")
    env.reset(seed=0)
    assert env.unwrapped.balrog_stats() == {"score": 0, "progression": 0.0, "achievements": None}  # cleared at reset
    world, player = clear_view(env)
    world[player.pos + np.array(player.facing)] = "tree"
    env.step("Do")
    stats = env.unwrapped.balrog_stats()
    assert stats["score"] == 1.0 and stats["progression"] == 1 / 22 and stats["achievements"]["collect_wood"] == 1


def test_full_text_adds_every_cell_creature_facing_and_time_of_day() -> None:
    from crafter import objects

    env = make(obs_mode="text", text_format="full")
    env.reset(seed=0)
    world, player = clear_view(env, "sand")
    x, y = player.pos
    world[x - 4, y - 3] = "tree"  # the first cell of the first row
    world[x + 2, y] = "grass"
    world.add(objects.Cow(world, (x + 2, y)))
    world.add(objects.Plant(world, (x - 1, y + 2)))
    text = env.unwrapped._describe()
    assert text.startswith("Your status:\n") and "\nYou see:\n" in text  # BALROG's text comes first
    rows = text.split("(9 cells by 7; you are the middle cell of row 4):\n")[1].splitlines()[:7]
    assert rows[0] == "tree " + " ".join(["sand"] * 8) and rows[3] == " ".join(["sand"] * 6 + ["grass"] + ["sand"] * 2)
    assert "- sapling 1 step west and 2 steps south, on sand\n- cow 2 steps east, on grass" in text
    assert f"You face south, standing on sand. Day step {env.unwrapped.game._step} of 300." in text
    player.sleeping = True
    asleep = env.unwrapped._describe()
    assert "You are asleep, standing on sand." in asleep and "You face" not in asleep  # the image hides the facing
    env.step("Noop")
    assert env.unwrapped._text("") == env.unwrapped._describe()  # the full text is what _describe gives


def test_reward_and_progress_are_crafters_and_balrogs() -> None:
    env = make(obs_mode="text")
    env.reset(seed=0)
    world, player = clear_view(env)
    world[player.pos + np.array(player.facing)] = "tree"
    _, reward, _, _, info = env.step("Do")  # collect_wood: the first achievement
    assert reward == 1.0 and info["progress"] == pytest.approx(1 / 22) and not info["success"]
    assert env.unwrapped.achievements == ("collect_wood",)
    world[player.pos + np.array(player.facing)] = "tree"  # collecting wood left grass
    _, reward, _, _, info = env.step("Do")  # wood again: no new achievement
    assert reward == 0.0 and info["progress"] == pytest.approx(1 / 22)
    player.health = 5  # lost 4 since the last step
    _, reward, *_ = env.step("Noop")
    assert reward == pytest.approx(-0.4)


def test_death_terminates_and_all_achievements_succeed() -> None:
    env = make(obs_mode="text")
    env.reset(seed=1)
    env.unwrapped.game._player.health = 0
    _, _, terminated, _, info = env.step("Noop")
    assert terminated and not info["success"]
    env.reset(seed=1)
    player = env.unwrapped.game._player
    for name in list(player.achievements)[:21]:
        player.achievements[name] = 1
    _, _, terminated, _, info = env.step("Noop")
    assert not terminated and info["progress"] == pytest.approx(21 / 22)
    player.achievements[list(player.achievements)[21]] = 1
    _, _, terminated, _, info = env.step("Noop")
    assert terminated and info["success"] and info["progress"] == 1.0


def test_rendering_never_changes_the_game_at_night() -> None:
    """crafter draws the night's noise from the world's random stream; here drawing frames (or not,
    in text mode) leaves the episode as it was. Steps 150-270 of each day are night (daylight below 0.5)."""
    keys = {}
    for mode in ("text", "image+text"):
        env = make(obs_mode=mode)
        env.reset(seed=5)  # this seed's player lives until step 241
        keys[mode] = [env.step(("Noop", "Move West", "Move East")[t % 3])[4]["state_key"] for t in range(230)]
        assert env.unwrapped.game._world.daylight < 0.5 and not env.unwrapped.game._player.health <= 0  # alive at night
    assert keys["text"] == keys["image+text"]


def test_the_night_is_drawn_from_the_state_balrogs_image_draws_it_from() -> None:
    """At night BALROG's image draws its noise from the game's random stream; the frame here draws
    it from a copy of the stream's state at that render: the same frame however often it is drawn,
    and the game's stream as it was."""
    env = make()
    env.reset(seed=5)
    for t in range(200):  # into the night (this seed's player lives until step 241)
        env.step(("Noop", "Move West", "Move East")[t % 3])
    base = env.unwrapped
    assert base.game._world.daylight < 0.5 and base.game.frame_noise is not None
    stream = base.game._world.random.get_state()[2]
    first = base._render()
    assert np.array_equal(first, base._render()) and base.game._world.random.get_state()[2] == stream


def test_reset_seed_decides_the_world_in_any_process() -> None:
    """Played 300 steps (creatures spawn and despawn every 10), the digest is the same in another
    process: crafter picks which creature despawns by the order of a set of objects (memory
    addresses); CrafterGame takes them in creation order."""
    from rl4vlm_gym.testing import rollout_digest

    here = rollout_digest(ENV, 7, 300, {"obs_mode": "text"})
    code = f"import rl4vlm_gym.testing as t; print(t.rollout_digest({ENV!r}, 7, 300, {json.dumps({'obs_mode': 'text'})}))"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout.strip()
    assert here == there
    first = make(obs_mode="text")
    assert first.reset(seed=7)[1]["state_key"] == first.reset(seed=7)[1]["state_key"] != first.reset(seed=8)[1]["state_key"]


def test_a_world_kept_by_the_process_plays_as_the_generated_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed's second reset restores the world its first generated (CrafterGame.reset): the same
    rollout, nights included (their noise comes from the world's random stream); a third shows that
    playing a restored world leaves the kept copy as it was."""
    from rl4vlm_gym.envs.balrog import crafter
    from rl4vlm_gym.testing import rollout_digest

    monkeypatch.setattr(crafter, "_WORLDS", OrderedDict())
    text = {"obs_mode": "text"}  # info["state_key"] digests the whole game, its random stream included; frames are drawn from it
    generated = rollout_digest(ENV, 7, 300, text)
    assert (7, 1, (64, 64)) in crafter._WORLDS  # (the player may die: the next episode has seed 8)
    assert rollout_digest(ENV, 7, 300, text) == generated
    assert rollout_digest(ENV, 7, 300, text) == generated


def test_compiled_noise_builds_the_worlds_pure_python_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba (in the balrog extra) compiles opensimplex's noise: worlds must not change with it."""
    from opensimplex import api, internals

    from rl4vlm_gym.envs.balrog import crafter

    if not hasattr(internals._noise3, "py_func"):
        pytest.skip("numba is not installed: the noise is pure Python already")
    monkeypatch.setattr(crafter, "_WORLDS_KEPT", 0)  # every reset generates its world
    env = make(obs_mode="text")
    compiled = [env.reset(seed=seed)[1]["state_key"] for seed in (11, 12)]
    monkeypatch.setattr(api, "_noise3", internals._noise3.py_func)
    monkeypatch.setattr(internals, "_extrapolate3", internals._extrapolate3.py_func)
    assert [env.reset(seed=seed)[1]["state_key"] for seed in (11, 12)] == compiled


def test_unknown_text_format_is_named() -> None:
    with pytest.raises(ValueError, match="text_format='json' is unknown"):
        make(text_format="json")


def test_a_game_without_frames_plays_as_crafters_own() -> None:
    # The env skips crafter's per-step image (it draws its own); the game's random stream must
    # still advance as crafter's drawing of the night advances it, or the worlds drift apart.
    from rl4vlm_gym.envs.balrog.crafter import AREA, SIZE, VIEW, CrafterGame

    def play(draw_frames: bool) -> tuple[Any, ...]:
        game = CrafterGame(area=AREA, view=VIEW, size=SIZE, length=None, seed=0)
        game.draw_frames = draw_frames
        game._seed, game._episode = 1234, 0
        game.reset()
        rng, nights = np.random.default_rng(0), 0
        for _ in range(400):
            nights += game._world.daylight < 0.5
            obs, _, done, _ = game.step(int(rng.integers(17)))
            assert (obs is None) != draw_frames
            if done:
                break
        objects = sorted((type(o).__name__, tuple(o.pos), getattr(o, "health", None)) for o in game._world.objects)
        return game._world.random.get_state()[1].tobytes(), objects, nights

    drawn, skipped = play(True), play(False)
    assert drawn[2] > 0, "the episode saw no night: nothing is tested"
    assert skipped == drawn
