"""Rules of balrog/NetHack-v0 and balrog/MiniHack-*-v0 beyond the golden transcripts (test_golden_nle.py,
test_golden_minihack.py compare them with BALROG byte for byte; tests/test_conformance.py runs the kit)."""

from __future__ import annotations

import pickle
import random
import string

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytestmark = pytest.mark.extra("nethack")

NETHACK = "balrog/NetHack-v0"
CORRIDOR = "balrog/MiniHack-Corridor-R3-v0"


def test_nethack_lists_balrogs_248_names_and_plays_each_as_its_language_wrapper() -> None:
    from rl4vlm_gym.envs.balrog.nethack import nethack_action_space  # first: it imports NLE quietly

    from nle.nethack import actions  # isort: skip

    env = gym.make(NETHACK, obs_mode="text")
    obs, _ = env.reset(seed=0)
    names = nethack_action_space()
    assert obs["actions"] == names and len(names) == len(set(names)) == 248
    assert names[:4] == ("north", "east", "south", "west") and "esc" in names and "space" in names
    keys = list(string.ascii_lowercase + string.ascii_uppercase + string.digits) + [f"{i:02d}" for i in range(100)]
    assert list(names[-len(keys) :]) == keys
    base = env.unwrapped
    assert base.DEFAULT_ACTION == "esc" and not base.HAS_ORACLE
    # a name plays its action, a key the command bound to it: "far east" is L, "a" apply (a), "0" the digit
    assert base.game.actions[base.playable["far east"]] == actions.CompassDirectionLonger.E == ord("L")
    assert int(base.game.actions[base.playable["a"]]) == ord("a") and int(base.game.actions[base.playable["0"]]) == ord("0")
    env.close()


def test_a_two_digit_key_is_listed_but_refused_without_changing_the_game() -> None:
    env = gym.make(NETHACK, obs_mode="text")
    obs, info = env.reset(seed=3)
    obs2, reward, terminated, truncated, info2 = env.step("42")
    assert not info2["action"]["valid"] and "BALROG's wrapper raises on it" in info2["action"]["error"]
    assert info2["balrog"] == info["balrog"] and reward == 0.0 and not (terminated or truncated)
    assert obs2["text"] == "Invalid action: " + info2["action"]["error"] + ". Nothing happened." and env.unwrapped.history == []
    env.close()


def test_text_is_balrogs_current_observation_and_the_image_its_tiles() -> None:
    from rl4vlm_gym.envs.balrog.nethack import render_tiles

    env = gym.make(NETHACK)
    obs, info = env.reset(seed=5)
    long_term, short_term = info["balrog"]["long_term_context"], info["balrog"]["short_term_context"]
    assert obs["text"] == f"{short_term}\n{long_term}" and short_term.startswith("inventory:\na: ")
    heads = [line for line in long_term.splitlines() if line in {"message:", "language observation:", "cursor:", "map:"}]
    assert heads == ["message:", "language observation:", "cursor:", "map:"]
    screen = long_term.split("map:\n")[1].split("\n")
    assert len(screen) == 23 + 2 and all(len(row) == 80 for row in screen[:23]) and screen[22].startswith("Dlvl:1 ")
    base = env.unwrapped
    assert obs["image"].shape == (336, 1264, 3) and np.array_equal(obs["image"], render_tiles(base.glyphs))
    small = gym.make(NETHACK, image_size=(84, 316)).reset(seed=5)[0]["image"]
    assert small.shape == (84, 316, 3) and small.any()
    vlm_obs, vlm_info = gym.make(NETHACK, text_format="vlm").reset(seed=5)
    assert vlm_info["balrog"]["short_term_context"].startswith("statistics:\n") and "\nmap:\n" not in vlm_obs["text"]
    assert vlm_info["balrog"]["long_term_context"] == long_term.split("\n(x=")[0] + "\n"
    assert np.array_equal(vlm_obs["image"], obs["image"])
    env.close()


def test_progression_is_balrogs_running_max_over_its_table() -> None:
    from rl4vlm_gym.envs.balrog.nethack import NLEProgress, _progression_table  # first: it imports NLE quietly

    from nle import nethack as nle_consts  # isort: skip

    table = _progression_table()
    assert len(table) == 80 and table["Dlvl:1"] == table["Xp:1"] == 0.0 and table["Dlvl:2"] == 0.015392269075361172
    progress = NLEProgress()
    blstats = np.zeros(27, np.int64)
    screen = np.full((24, 80), ord(" "), np.uint8)

    def step(depth: int, xp: int, reward: float = 0.0) -> None:
        blstats[nle_consts.NLE_BL_DEPTH], blstats[nle_consts.NLE_BL_XP] = depth, xp
        progress.update(blstats, screen, reward, False, "RUNNING")

    step(1, 1)
    assert progress.stats()["dlvl_list"] == ["Dlvl:1"] and progress.highest_achievement is None and progress.progression == 0.0
    step(3, 2, 4.0)
    assert progress.progression == table["Xp:2"] and progress.highest_achievement == "Xp:2"  # Xp 2 beats Dlvl 3
    step(1, 9)
    assert (progress.progression, progress.highest_achievement) == (table["Xp:9"], "Xp:9") and progress.depth == 1
    step(60, 1)  # beyond the table: never listed, never counted
    assert progress.dlvl_list == ["Dlvl:1", "Dlvl:3"] and progress.progression == table["Xp:9"]
    assert progress.episode_return == 4.0


def test_end_reason_reads_the_tombstone_as_balrog() -> None:
    from rl4vlm_gym.envs.balrog.nethack import end_reason

    def screen(text: str) -> np.ndarray:
        return np.frombuffer(text.ljust(24 * 80).encode("latin-1"), np.uint8).reshape(24, 80)

    tomb = "a b c d e f g killed by a jackal in The Gnomish Mines. On level 3. x y"  # words 7.. but the last two
    assert end_reason(screen(tomb), "DEATH") == "DEATH: killed by a jackal. On level 3."  # the first sentence up to "in"
    agent = "a b c d e f g Agent died. Killed by the wrath of Anu. x y"
    assert end_reason(screen(agent), "DEATH") == "DEATH: died. Killed by the wrath of Anu."
    assert end_reason(screen("You made the top ten list! " + agent), "DEATH") == "DEATH: died. Killed by the wrath of Anu."
    assert end_reason(screen(""), "ABORTED") == "ABORTED: ."


def test_reset_seed_decides_the_game_and_a_pickled_env_replays_it() -> None:
    env = gym.make(NETHACK, obs_mode="text")
    a = env.reset(seed=7)[0]["text"]
    b = env.reset(seed=8)[0]["text"]
    assert a == env.reset(seed=7)[0]["text"] != b
    assert env.unwrapped.game.get_seeds() == (7, 7, False)  # BALROG's core seed; the display RNG's too
    for action in ("search", "west", "i", "esc", "far east"):
        env.step(action)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped._describe() == env.unwrapped._describe() and clone.unwrapped.balrog_stats() == env.unwrapped.balrog_stats()
    assert clone.step("north")[0]["text"] == env.step("north")[0]["text"]
    env.reset()  # unseeded: a seed below 2**32 from the env's RNG
    assert 0 <= env.unwrapped.seed_used < 2**32
    env.close()
    clone.close()


def test_minihack_tasks_offer_balrogs_actions_with_autopickup_off() -> None:
    env = gym.make(CORRIDOR, obs_mode="text")
    obs, info = env.reset(seed=0)
    assert obs["actions"] == ("north", "east", "south", "west", "northeast", "southeast", "southwest", "northwest", "open", "kick", "search")
    base = env.unwrapped
    assert obs["mission"] == "Reach the stairs down." and base.DEFAULT_ACTION == "north" and env.spec.max_episode_steps == 100
    assert base.instruction_prompt().endswith("Your goal is to explore the level and reach the stairs down\n\nPLAY!")
    assert base.balrog_stats() == {} and "!autopickup" in base.game.nethack._nethackoptions
    assert base.game._max_episode_steps == 100 and base.game.penalty_step == -0.01  # BALROG's minihack_kwargs
    quest = gym.make("balrog/MiniHack-Quest-Easy-v0", obs_mode="text").reset(seed=0)[0]["actions"]
    assert len(quest) == 32 and "far east" in quest and "pickup" in quest and "inventory" not in quest
    with pytest.raises(ValueError, match="not one of BALROG's MiniHack tasks"):
        gym.make(CORRIDOR, task="MiniHack-Boxoban-Unfiltered-v0")
    env.close()


def test_minihack_success_is_balrogs_last_reward_rule() -> None:
    env = gym.make(CORRIDOR, obs_mode="text")
    env.reset(seed=0)
    base = env.unwrapped
    base.done, base.last_reward = True, 0.99  # the goal reached on a step the clock stood still: not a success (BALROG's rule)
    assert not base._success()
    base.last_reward = 1.0
    assert base._success()
    base.progress.update(1.0, 2)
    assert base._progress() == 1.0 and base.balrog_stats() == {"episode_return": 1.0, "progression": 1.0, "end_reason": 2}
    base.progress.update(-0.01, 0)  # BALROG's progression is the last step's, not a running max
    assert base._progress() == 0.0
    env.close()


def test_boxoban_plays_the_level_balrogs_random_seed_picks() -> None:
    from rl4vlm_gym.envs.balrog.minihack import boxoban_levels

    env = gym.make("balrog/MiniHack-Boxoban-Hard-v0", obs_mode="text")
    obs, _ = env.reset(seed=11)
    base = env.unwrapped
    levels = boxoban_levels("hard")
    random.seed(11)  # BALROG's evaluator, then MiniHack's random.choice
    assert base.game.chosen_level == random.choice(levels) and len(levels) == 3332
    assert obs["actions"] == ("north", "east", "south", "west") and obs["mission"] == "Push the boulders onto the fountains."
    chars = base.game.last_observation[base.game._observation_keys.index("chars")]
    rows = [row for row in base.game.chosen_level.split("\n") if row]
    assert (chars == ord("`")).sum() == sum(row.count("$") for row in rows) == 4  # the level's four boulders
    state = random.getstate()
    env.reset(seed=12)
    assert random.getstate() == state  # the env's draw leaves Python's global RNG alone
    medium = gym.make("balrog/MiniHack-Boxoban-Medium-v0", obs_mode="text")
    medium.reset(seed=11)
    assert medium.unwrapped.game.chosen_level == random.Random(11).choice(boxoban_levels("medium"))
    env.close()
    medium.close()


def test_minihack_reaching_the_stairs_pays_one_and_succeeds() -> None:
    """Walk to the stairs with the map's own knowledge (the '>' on screen), as a player would."""
    from collections import deque

    moves = {(-1, 0): "north", (1, 0): "south", (0, -1): "west", (0, 1): "east"}
    env = gym.make("balrog/MiniHack-MazeWalk-9x9-v0", obs_mode="text")
    env.reset(seed=3)  # a maze whose stairs are in view at the start
    base = env.unwrapped
    for _ in range(100):
        screen = base.long_term.split("map:\n")[1].split("\n")[:21]
        chars = np.array([[ord(c) for c in row] for row in screen])
        start = tuple(int(v) for v in np.argwhere(chars == ord("@"))[0])
        goals = {tuple(int(v) for v in p) for p in np.argwhere(chars == ord(">"))}
        if not goals:
            pytest.fail("the stairs are not in view")
        frontier, came = deque([start]), {start: None}
        while frontier:
            cell = frontier.popleft()
            if cell in goals:
                break
            for dr, dc in moves:
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


def test_unknown_text_format_is_refused() -> None:
    with pytest.raises(ValueError, match="text_format='ascii' is unknown"):
        gym.make(NETHACK, text_format="ascii")


def test_image_mode_draws_the_whole_screen_beside_the_inventory() -> None:
    """BALROG has no image-only mode: there the image carries what the text would (the kit's law)."""
    env = gym.make(NETHACK, obs_mode="image")
    obs, info = env.reset(seed=5)
    assert obs["image"].shape == (384, 1760, 3) and obs["text"] == ""
    base = env.unwrapped
    row, col = (int(v) for v in base.screen["tty_cursor"])
    cell = obs["image"][row * 16 : row * 16 + 16, col * 16 : col * 16 + 16]
    assert len(np.unique(cell.reshape(-1, 3), axis=0)) > 4  # the player in tiles
    assert obs["image"][:16].any() and obs["image"][22 * 16 :, :1280].any()  # the message and status lines
    assert obs["image"][:, 1280:].any()  # the inventory column
    assert gym.make(NETHACK, obs_mode="image", image_size=(96, 440)).reset(seed=5)[0]["image"].shape == (96, 440, 3)
    env.close()


def test_the_screens_text_pasted_cell_by_cell_is_the_text_drawn_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """draw_screen pastes each tty character's cell from a cache; drawn by PIL one glyph after the
    other (its path when a glyph reaches out of its cell) the screens are the same arrays: a
    message, the status lines and the inventory menu drawn over the map."""
    from rl4vlm_gym.envs.balrog import nethack

    env = gym.make(NETHACK, obs_mode="image")
    env.reset(seed=5)
    base = env.unwrapped
    screens = [(dict(base.screen), base.message)]
    env.step("i")  # the inventory: a menu over the map
    screens.append((dict(base.screen), base.message))
    env.close()
    pasted = [nethack.draw_screen(screen, message) for screen, message in screens]
    assert nethack._text_cell.cache_info().currsize > 20
    monkeypatch.setattr(nethack, "_text_cell", lambda char, colour: None)  # as if every glyph reached out
    drawn = [nethack.draw_screen(screen, message) for screen, message in screens]
    assert all(np.array_equal(a, b) for a, b in zip(pasted, drawn, strict=True))
    assert not np.array_equal(pasted[0], pasted[1])
