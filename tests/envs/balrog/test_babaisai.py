"""BabaIsAI's rules on hand-made boards: rules read from word blocks (horizontal, vertical, in the
original's order), pushes and chains, STOP, WIN, DEFEAT, NOUN IS NOUN, breaking "baba is you",
BALROG's text, and the solver. The 40 generated tasks are checked against BALROG's own wrapper in
test_golden_babaisai.py."""

from __future__ import annotations

from collections import deque

import gymnasium as gym
import numpy as np

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai import levels, oracle, wording
from rl4vlm_gym.envs.balrog.babaisai.game import Game

# One character a cell: '#' the outer wall, '.' empty; objects B baba, W wall, O ball, K key, D door;
# words b w o k d (nouns), '=' IS, Y you, V win, S stop, P push, L lose (defeat).
_OBJECTS = {"#": E.BORDER, "B": E.BABA, "W": E.WALL, "O": E.BALL, "K": E.KEY, "D": E.DOOR}
_NOUN_WORDS = {"b": E.BABA, "w": E.WALL, "o": E.BALL, "k": E.KEY, "d": E.DOOR}
_PROP_WORDS = {"Y": E.YOU, "V": E.WIN, "S": E.STOP, "P": E.PUSH, "L": E.LOSE}


def board(picture: str) -> E.World:
    rows = [row.strip() for row in picture.strip().splitlines()]
    world = E.World(len(rows[0]), len(rows))
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            if char in _OBJECTS:
                world.put(x, y, E.make(_OBJECTS[char]))
            elif char in _NOUN_WORDS:
                world.put(x, y, E.make(E.noun_word(_NOUN_WORDS[char])))
            elif char == "=":
                world.put(x, y, E.make(E.IS))
            elif char in _PROP_WORDS:
                world.put(x, y, E.make(E.property_word(_PROP_WORDS[char])))
            else:
                assert char == ".", char
    world.update_rules()
    return world


def picture(world: E.World) -> str:
    """The top objects, in the characters of :func:`board`."""
    chars = {code: char for char, code in _OBJECTS.items()}
    chars.update({E.noun_word(n): c for c, n in _NOUN_WORDS.items()})
    chars.update({E.property_word(p): c for c, p in _PROP_WORDS.items()})
    chars[E.IS] = "="
    rows = []
    for y in range(world.height):
        rows.append(
            "".join(
                chars[world.kinds[y * world.width + x]] if world.kinds[y * world.width + x] else "." for x in range(world.width)
            )
        )
    return "\n".join(rows)


def rules(world: E.World) -> list[str]:
    return wording.rules_text(world).splitlines()


def test_rules_read_horizontally_and_vertically_in_the_originals_order() -> None:
    world = board(
        """
        #######
        #.k...#
        #b=Y..#
        #.V...#
        #..B..#
        #######
        """
    )
    # one IS block: its horizontal rule first, then its vertical one (k IS V reads top to bottom)
    assert rules(world) == ["baba is you", "key is win"]
    assert world.props[E.YOU] == {E.BABA} and world.props[E.WIN] == {E.KEY}
    # words in the wrong order make no rule
    assert rules(board("#####\n#Y=b#\n#.B.#\n#####")) == []


def test_a_push_moves_a_chain_of_words_and_a_blocked_chain_moves_nothing() -> None:
    world = board(
        """
        #######
        #B=k..#
        #b=Y..#
        #######
        """
    )
    world.step("right")
    assert picture(world).splitlines()[1] == "#.B=k.#"
    world.step("right")
    world.step("right")  # the chain is against the wall now: nothing moves
    assert picture(world).splitlines()[1] == "#..B=k#"


def test_stop_blocks_and_without_it_objects_are_walked_over() -> None:
    rows = """
        #######
        #BW...#
        #b=Y..#
        #w=S..#
        #######
        """
    world = board(rows)
    world.step("right")
    assert picture(world).splitlines()[1] == "#BW...#"  # wall is stop
    world = board(rows.replace("#w=S..#", "#w.S..#"))
    world.step("right")
    assert picture(world).splitlines()[1] == "#.B...#" and world.cells[1 * 7 + 2] == (E.make(E.WALL), E.make(E.BABA))
    world.step("right")
    assert picture(world).splitlines()[1] == "#.WB..#"  # the wall was under baba, and stays


def test_win_and_defeat_are_read_from_the_cell_entered_with_the_rules_of_the_steps_start() -> None:
    world = board(
        """
        #######
        #BKD..#
        #b=Y..#
        #k=V..#
        #d=L..#
        #######
        """
    )
    assert world.step("right") == (True, False)  # onto the key: win
    world = board("#######\n#BD...#\n#b=Y..#\n#d=L..#\n#######")
    assert world.step("right") == (False, True)  # onto the door: defeat
    # a YOU that is also WIN wins by bumping into anything (the original reads the mover's own cell)
    world = board("######\n#B...#\n#b=Y.#\n#b=V.#\n######")
    assert world.step("right") == (False, False)  # it moved: the cell it entered was empty
    assert world.step("up") == (True, False)  # blocked by the outer wall
    # "idle" is not a move: nothing is read, nothing wins
    assert world.step("idle") == (False, False)


def test_a_rule_made_by_a_push_counts_from_the_next_step() -> None:
    world = board(
        """
        ########
        #Bk.=V.#
        #..K...#
        #b=Y...#
        ########
        """
    )
    assert rules(world) == ["baba is you"]
    assert world.step("right") == (False, False)  # pushes "key" into place
    assert rules(world) == ["key is win", "baba is you"]
    assert world.step("down") == (False, False)
    assert world.step("right") == (True, False)


def test_noun_is_noun_turns_objects_after_each_move() -> None:
    world = board(
        """
        #######
        #B.O..#
        #o=k..#
        #b=Y..#
        #######
        """
    )
    assert world.replace == [(E.BALL, E.KEY)]
    world.step("idle")
    assert picture(world).splitlines()[1] == "#B.O..#"  # idle re-reads nothing
    world.step("down")  # blocked by the word below: still a move
    assert picture(world).splitlines()[1] == "#B.K..#"
    assert world.cells[1 * 7 + 3] == (E.make(E.BALL), E.make(E.KEY))  # the key is stacked on the ball


def test_breaking_baba_is_you_leaves_no_you_and_the_last_you_rule_decides() -> None:
    world = board(
        """
        ######
        #.B..#
        #.b..#
        #.=..#
        #.Y..#
        #....#
        ######
        """
    )
    assert world.you_position() == (2, 1)
    world.step("down")  # pushes the whole rule down: it still reads baba is you
    assert world.you_position() == (2, 2)
    world = board("######\n#.B..#\n#b=Y.#\n#....#\n######")
    world.step("left")
    world.step("down")  # pushes "baba" out of the rule
    assert rules(world) == [] and world.you_position() is None
    # two YOU rules: BALROG's wrapper takes the last one's noun, and its first object
    world = board("#######\n#B..K.#\n#b=Y..#\n#k=Y.K#\n#######")
    assert world.you_noun() == E.KEY and world.you_position() == (4, 1)


def test_only_the_last_you_object_moved_decides_the_win() -> None:
    world = board(
        """
        #######
        #BD...#
        #.K.K.#
        #b=Y..#
        #k=Y..#
        #d=V..#
        #######
        """
    )
    # baba (row 1) enters the door and wins, but the keys of row 2 move after it and do not
    assert world.step("right") == (False, False)
    world = board("#######\n#KD...#\n#...B.#\n#b=Y..#\n#k=Y..#\n#d=V..#\n#######")
    assert world.step("right") == (False, False)  # the key wins, then baba (later in the grid) moves
    world = board("#######\n#.....#\n#KD.B.#\n#b=Y..#\n#k=Y..#\n#d=V..#\n#######")
    assert world.step("right") == (False, False)
    world = board("#######\n#..B..#\n#KD...#\n#b=Y..#\n#k=Y..#\n#d=V..#\n#######")
    assert world.step("right") == (True, False)  # baba first, the key last: the key's win counts


def test_balrogs_text_and_its_wording() -> None:
    world = board(
        """
        #######
        #k=V..#
        #.....#
        #..K.B#
        #b=Y.O#
        #######
        """
    )
    assert wording.observation_text(world, world.you_position()) == (
        "Active rules:\nkey is win\nbaba is you\n\nObjects on the map:\n"
        "rule `key` 4 step to the left and 2 step up\nrule `is` 3 step to the left and 2 step up\n"
        "rule `win` 2 step to the left and 2 step up\nkey 2 step to the left\n"
        "rule `baba` 4 step to the left and 1 step down\nrule `is` 3 step to the left and 1 step down\n"
        "rule `you` 2 step to the left and 1 step down\nball 1 step down"
    )
    # a YOU that is listed (a key) gives an empty line for its own cell; "steps" only right and down
    world = board("#######\n#K...K#\n#k=Y..#\n#.....#\n#K....#\n#######")
    assert wording.objects_text(world, world.you_position()).splitlines()[:2] == ["", "key 4 steps to the right"]
    assert "key 3 steps down" in wording.objects_text(world, world.you_position())


def test_the_solver_plans_are_shortest_and_win() -> None:
    world = board(
        """
        ########
        #......#
        #.k..=V#
        #..B...#
        #.K....#
        #b=Y...#
        ########
        """
    )
    moves, shortest = oracle.plan(world, 100)
    assert shortest and moves is not None
    # breadth-first search over the same moves finds nothing shorter
    start, frontier, seen, depth = world.copy(), deque([(world.copy(), 0)]), {world.key()}, None
    while frontier and depth is None:
        state, d = frontier.popleft()
        for move in oracle.MOVES:
            nxt = state.copy()
            win, lose = nxt.step(move)
            if win and nxt.you_position() is not None:
                depth = d + 1
                break
            if not lose and nxt.you_position() is not None and nxt.key() not in seen:
                seen.add(nxt.key())
                frontier.append((nxt, d + 1))
    assert len(moves) == depth
    for move in moves[:-1]:
        assert start.step(move) == (False, False)
    assert start.step(moves[-1]) == (True, False)


def test_a_seed_gives_balrogs_level_and_unseeded_resets_go_on() -> None:
    env = gym.make("balrog/BabaIsAI-two_room-make_you-v0", obs_mode="text")
    game = Game(levels.TASKS_BY_ID["env/two_room-make_you"])
    game.reset(np.random.RandomState(2**32 - 1))
    obs, _ = env.reset(seed=2**32 - 1)
    assert obs["text"] == game.text
    texts = {env.reset()[0]["text"] for _ in range(3)}
    assert len(texts) == 3 and game.text not in texts


def test_an_invalid_output_counts_toward_the_level_budget_and_changes_nothing() -> None:
    env = gym.make("balrog/BabaIsAI-goto_win-v0", obs_mode="text")
    obs, info = env.reset(seed=0)
    after, reward, terminated, truncated, info2 = env.step("jump")
    assert not info2["action"]["valid"] and reward == 0.0 and not (terminated or truncated)
    assert info2["state_key"] == info["state_key"] and info2["balrog"] == info["balrog"]
    assert env.unwrapped.game.steps == 1


def test_breaking_you_in_the_env_draws_a_new_level_and_says_so() -> None:
    env = gym.make("balrog/BabaIsAI-two_room-make_you-v0", obs_mode="text")
    env.reset(seed=0)
    plan = env.unwrapped.target_plan
    _, reward, terminated, truncated, info = env.step("down")  # seed 0: baba stands on "is" of "baba is you"
    text = info["balrog"]["long_term_context"]
    assert text.startswith("[...] IS YOU rule was broken, environment resetActive rules:\nwall is stop\ndoor is win\n\n")
    assert "defaultdict(<function BabaIsAIWrapper.textworld_process_obsv.<locals>.<lambda> at 0x7f0000000000>" in text
    assert not (terminated or truncated) and reward == 0.0 and env.unwrapped.game.steps == 0
    assert env.unwrapped.game.resets == 1
    world = env.unwrapped.game.world
    new_level = wording.observation_text(world, world.you_position())
    assert f"{{'text': {{'long_term_context': {new_level!r}, 'short_term_context': ''}}" in text
    del plan
    # the next step shows the new level as usual
    _, _, _, _, info = env.step("idle")
    assert (
        info["balrog"]["long_term_context"].startswith("Active rules:\n") and "baba is you" in info["balrog"]["long_term_context"]
    )
