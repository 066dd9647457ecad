"""Rules of balrog/NetHack-v0 and balrog/MiniHack-*-v0 (tests/test_conformance.py runs the kit on them)."""

from __future__ import annotations

import string

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("nethack")

NETHACK = "balrog/NetHack-v0"
CORRIDOR = "balrog/MiniHack-Corridor-R3-v0"


def test_nethack_offers_balrogs_action_names_and_keys() -> None:
    from nle.nethack import actions

    from rl4vlm_gym.envs.balrog.nethack import NETHACK_ACTIONS  # first: it imports NLE quietly

    env = gym.make(NETHACK, obs_mode="text")
    obs, _ = env.reset(seed=0)
    assert obs["actions"] == NETHACK_ACTIONS and len(set(NETHACK_ACTIONS)) == len(NETHACK_ACTIONS) == 86 + 62
    assert (
        NETHACK_ACTIONS[:4] == ("north", "east", "south", "west")
        and "esc" in NETHACK_ACTIONS
        and "far southwest" in NETHACK_ACTIONS
    )
    assert list(NETHACK_ACTIONS[86:]) == list(string.ascii_lowercase + string.ascii_uppercase + string.digits)
    base = env.unwrapped
    assert base.DEFAULT_ACTION == "esc" and not base.HAS_ORACLE
    # each name plays its keystroke: "far east" is L, "a" the key a (also apply's key)
    assert base.game.actions[base.table["far east"]] == actions.CompassDirectionLonger.E == ord("L")
    assert int(base.game.actions[base.table["a"]]) == ord("a") and int(base.game.actions[base.table["0"]]) == ord("0")
    env.close()


def test_text_is_balrogs_hybrid_observation_and_the_image_shows_it() -> None:
    env = gym.make(NETHACK)
    obs, _ = env.reset(seed=5)
    text = obs["text"]
    sections = [
        line
        for line in text.splitlines()
        if line.endswith(":") and line[:-1] in {"message", "language observation", "cursor", "map", "inventory"}
    ]
    assert sections == ["message:", "language observation:", "cursor:", "map:", "inventory:"]
    base = env.unwrapped
    screen = text.split("map:\n")[1].split("\n\ninventory:")[0].splitlines()
    assert len(screen) == 23 and "@" in "".join(screen) and screen[-1].startswith("Dlvl:1 ")  # the tty minus line 1
    assert "Yourself a " in text and "a: " in text.split("inventory:")[1]
    assert obs["image"].shape == (384, 1760, 3)  # 24x80 cells of 16x16, the inventory beside
    small = gym.make(NETHACK, image_size=(96, 440)).reset(seed=5)[0]["image"]
    assert small.shape == (96, 440, 3) and small.any()
    # the map in tiles: the cell under the cursor (the player) is a tile, not a character on black
    row, col = (int(v) for v in base.obs["tty_cursor"])
    cell = obs["image"][row * 16 : row * 16 + 16, col * 16 : col * 16 + 16]
    assert len(np.unique(cell.reshape(-1, 3), axis=0)) > 4
    env.close()


def test_progression_is_balrogs_running_max_of_dlvl_and_xp_tables() -> None:
    from rl4vlm_gym.envs.balrog.nethack import DLVL_PROGRESS, XP_PROGRESS, table_progress

    assert table_progress(DLVL_PROGRESS, 1) == 0.0 and table_progress(DLVL_PROGRESS, 2) == 0.0154
    assert (
        table_progress(DLVL_PROGRESS, 19) == 0.3088 and table_progress(DLVL_PROGRESS, 20) == 0.3790
    )  # between listed: the lower
    assert table_progress(XP_PROGRESS, 15) == 0.5779 and table_progress(XP_PROGRESS, 29) == 0.7174
    env = gym.make(NETHACK, obs_mode="text")
    env.reset(seed=1)
    base = env.unwrapped
    base.depth, base.xp = 3, 2  # reached Dlvl 3 and Xp 2 earlier in the episode
    _, _, _, _, info = env.step("search")  # back on Dlvl 1, Xp 1: the running max stays
    assert info["progress"] == pytest.approx(max(0.0175, 0.0185)) and not info["success"]
    base.xp = 9
    assert base._progress() == pytest.approx(0.1170)
    env.close()


def test_reset_seed_decides_the_game_and_a_pickled_env_replays_it() -> None:
    import pickle

    env = gym.make(NETHACK, obs_mode="text")
    a = env.reset(seed=7)[0]["text"]
    b = env.reset(seed=8)[0]["text"]
    assert a == env.reset(seed=7)[0]["text"] != b
    for action in ("search", "west", "i", "esc"):
        env.step(action)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped._describe() == env.unwrapped._describe()
    assert clone.step("north")[0]["text"] == env.step("north")[0]["text"]
    env.close()
    clone.close()


def test_minihack_task_actions_goal_and_success_on_the_last_reward() -> None:
    env = gym.make(CORRIDOR, obs_mode="text")
    obs, info = env.reset(seed=0)
    assert obs["actions"] == (
        "north",
        "east",
        "south",
        "west",
        "northeast",
        "southeast",
        "southwest",
        "northwest",
        "open",
        "kick",
        "search",
    )
    assert (
        obs["mission"] == "Reach the stairs down."
        and "Your goal is to reach the stairs down." in env.unwrapped.instruction_prompt()
    )
    assert env.unwrapped.DEFAULT_ACTION == "north" and env.spec.max_episode_steps == 100
    base = env.unwrapped
    base.done, base.last_reward = True, 0.99  # the goal reached on a step the clock stood still: not a success (BALROG's rule)
    assert not base._success() and base._progress() == 0.0
    base.last_reward = 1.0
    assert base._success() and base._progress() == 1.0
    base.done = False
    assert not base._success()
    assert gym.make("balrog/MiniHack-MazeWalk-9x9-v0", obs_mode="text").reset(seed=0)[0]["mission"] == "Get as far as possible."
    with pytest.raises(ValueError, match="not one of BALROG's MiniHack tasks"):
        gym.make(CORRIDOR, task="MiniHack-Boxoban-Hard-v0")
    env.close()


def test_minihack_reaching_the_stairs_pays_one_and_succeeds() -> None:
    """Walk to the stairs with the map's own knowledge (the '>' on screen), as a player would."""
    from collections import deque

    moves = {
        (-1, 0): "north",
        (1, 0): "south",
        (0, -1): "west",
        (0, 1): "east",
        (-1, 1): "northeast",
        (1, 1): "southeast",
        (1, -1): "southwest",
        (-1, -1): "northwest",
    }
    env = gym.make("balrog/MiniHack-MazeWalk-9x9-v0", obs_mode="text")
    env.reset(seed=2)  # a maze whose stairs are in view at the start
    base = env.unwrapped
    for _ in range(100):
        chars = base.obs["chars"]
        start = tuple(int(v) for v in np.argwhere(chars == ord("@"))[0])
        goals = {tuple(int(v) for v in p) for p in np.argwhere(chars == ord(">"))}
        if not goals:
            pytest.fail("the stairs are not in view")
        # breadth-first over floor cells, straight moves only (no squeezing past corners)
        frontier, came = deque([start]), {start: None}
        while frontier:
            cell = frontier.popleft()
            if cell in goals:
                break
            for dr, dc in list(moves)[:4]:
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt not in came and chr(chars[nxt]) in ".>#":
                    came[nxt] = cell
                    frontier.append(nxt)
        while came[cell] != start:
            cell = came[cell]
        _, reward, terminated, truncated, info = env.step(moves[(cell[0] - start[0], cell[1] - start[1])])
        if terminated:
            assert reward == pytest.approx(1.0) and info["success"] and info["progress"] == 1.0
            break
    else:
        pytest.fail("the stairs were not reached in 100 steps")
    env.close()


def test_a_window_over_the_map_is_drawn_as_text_even_where_a_character_equals_the_maps() -> None:
    from rl4vlm_gym.envs.balrog.nethack import _draw

    env = gym.make(NETHACK, obs_mode="text")
    env.reset(seed=5)
    obs = {key: value.copy() for key, value in env.unwrapped.obs.items()}
    row, col = (int(v) for v in np.argwhere(obs["chars"] == ord("-"))[0])  # a wall: '-' on the map
    tile = _draw(obs, [], (384, 1760))[(row + 1) * 16 : (row + 2) * 16, col * 16 : col * 16 + 16]
    line = b"b - a menu line"  # its '-' lands on the wall's cell, its other letters differ from the map
    obs["tty_chars"][row + 1, col - 2 : col - 2 + len(line)] = np.frombuffer(line, np.uint8)
    image = _draw(obs, [], (384, 1760))
    cell = image[(row + 1) * 16 : (row + 2) * 16, col * 16 : col * 16 + 16]
    assert not np.array_equal(cell, tile) and len(np.unique(cell.reshape(-1, 3), axis=0)) < len(
        np.unique(tile.reshape(-1, 3), axis=0)
    )
    env.close()


def test_vlm_text_format_is_balrogs_vlm_mode_text() -> None:
    hybrid = gym.make(CORRIDOR, obs_mode="text").reset(seed=4)[0]["text"]
    vlm = gym.make(CORRIDOR, obs_mode="text", text_format="vlm").reset(seed=4)[0]["text"]
    assert "\nmap:\n" in hybrid and "\nmap:\n" not in vlm and "statistics:" not in hybrid
    assert vlm.split("\n\nstatistics:\n")[0] == hybrid.split("\n\nmap:\n")[0]  # message, language observation, cursor
    assert "\nDepth: 1\n" in vlm and vlm.endswith(hybrid.split("\n\ninventory:\n")[1])
    with pytest.raises(ValueError, match="text_format='ascii' is unknown"):
        gym.make(NETHACK, text_format="ascii")
