"""Decision facts (``decision()``, issue 38) of the balrog family: BabyAI's and BabaIsAI's exact
facts on hand-worked states and against independent searches from the states of the oracle's play
and of a seeded random walk. The kit's check "decisions" (tests/test_conformance.py) holds every
id to the laws as well, TextWorld's and the oracle-free envs' reasons included."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

pytest.importorskip("minigrid")

from rl4vlm_gym.envs.balrog import babyai_oracle  # noqa: E402
from rl4vlm_gym.envs.balrog.babaisai import engine as E  # noqa: E402
from rl4vlm_gym.envs.balrog.babaisai import levels, oracle  # noqa: E402
from rl4vlm_gym.envs.balrog.babyai import ACTIONS  # noqa: E402

LEFT, RIGHT, FORWARD, PICKUP = (babyai_oracle.LEFT, babyai_oracle.RIGHT, babyai_oracle.FORWARD, babyai_oracle.PICKUP)
WALLS = frozenset({(x, y) for x in range(8) for y in range(8) if x in (0, 7) or y in (0, 7)})


def test_babyai_hand_worked_ties_and_one_step() -> None:
    ball = (3, 3)
    scene = babyai_oracle.Scene("goto", WALLS, None, (False,), ((0,),))
    # below the ball facing away (down): either turn, then the other way round faces it (2 steps)
    facts = babyai_oracle.decisions(scene, (3, 4, 1, -1, (ball,), ((ball,),), False))
    assert facts is not None and facts[(3, 4, 1, -1, (ball,), ((ball,),), False)] == (2, (LEFT, RIGHT))
    # two cells above it facing up: either turn, the other way round, forward (the turns meet)
    far = (3, 6)
    facts = babyai_oracle.decisions(scene, (3, 4, 3, -1, (far,), ((far,),), False))
    assert facts is not None and facts[(3, 4, 3, -1, (far,), ((far,),), False)] == (3, (LEFT, RIGHT))
    # two cells below it facing up: one step forward faces it
    facts = babyai_oracle.decisions(scene, (3, 5, 3, -1, (ball,), ((ball,),), False))
    assert facts == {(3, 5, 3, -1, (ball,), ((ball,),), False): (1, (FORWARD,))}
    # pick up: facing it, pick it up; facing right of it, turn left first (3 cells: no shortcut)
    scene = babyai_oracle.Scene("pickup", WALLS, None, (False,), ((0,),))
    assert babyai_oracle.decisions(scene, (3, 4, 3, -1, (ball,), ((ball,),), False)) == {
        (3, 4, 3, -1, (ball,), ((ball,),), False): (1, (PICKUP,))
    }
    facts = babyai_oracle.decisions(scene, (3, 4, 0, -1, (ball,), ((ball,),), False))
    assert facts is not None and facts[(3, 4, 0, -1, (ball,), ((ball,),), False)] == (2, (LEFT,))
    # a box named by the mission, toggled away: nothing accomplishes it any more
    scene = babyai_oracle.Scene("pickup", WALLS, None, (True,), ((0,),))
    assert babyai_oracle.decisions(scene, (3, 4, 3, -1, (None,), ((ball,),), False)) == {}


def test_babyai_and_babaisai_facts_need_the_steps_left() -> None:
    """A plan of d steps fits d steps left, not d - 1: the facts say "unsolvable from here" then."""
    env = gym.make("balrog/BabyAI-GoTo-v0", obs_mode="text")
    env.reset(seed=5)
    game, d = env.unwrapped.game, env.unwrapped.optimal_steps
    for used, to_go in ((game.max_steps - d - 1, d), (game.max_steps - d, d), (game.max_steps - d + 1, -1)):
        game.step_count = used
        facts = env.unwrapped.decision()
        assert facts["steps_to_go"] == to_go and (to_go > 0 or "unsolvable from here" in facts["reason"]), used
    env = gym.make("balrog/BabaIsAI-goto_win-v0", obs_mode="text")
    env.reset(seed=0)
    game, d = env.unwrapped.game, env.unwrapped.optimal_steps
    for used, to_go in ((100 - d - 1, d), (100 - d, d), (100 - d + 1, -1)):
        game.steps = used
        facts = env.unwrapped.decision()
        assert facts["steps_to_go"] == to_go and (to_go > 0 or "unsolvable from here" in facts["reason"]), used


def _babyai_reference(env: gym.Env) -> tuple[list[str] | None, int]:
    """The facts by an independent computation: a shortest plan (A*, itself tested equal to
    breadth-first search) from the state and from each action's successor."""
    game = env.unwrapped.game
    scene, state = babyai_oracle.read(game)
    plan = babyai_oracle.shortest_plan(scene, state)
    if plan is None or len(plan) > game.max_steps - game.step_count:
        return None, -1
    optimal = []
    for action in range(6):
        new, status = babyai_oracle.step(scene, state, action)
        after = 0 if status == "success" else len(p) if (p := babyai_oracle.shortest_plan(scene, new)) is not None else 999
        if after == len(plan) - 1:
            optimal.append(ACTIONS[action])
    return optimal, len(plan)


@pytest.mark.parametrize("name", ["GoTo", "Pickup", "Open", "PutNext", "PickUpSeqGoTo"])
def test_babyai_facts_equal_searches_from_every_state_of_a_mixed_play(name: str) -> None:
    """Half the oracle's moves, half random ones (seeded): every state's facts equal the reference
    (20 steps at most); at reset steps_to_go is optimal_steps."""
    env = gym.make(f"balrog/BabyAI-{name}-v0", obs_mode="text")
    rng = np.random.default_rng(5)
    env.reset(seed=5)
    assert env.unwrapped.decision()["steps_to_go"] == env.unwrapped.optimal_steps
    done = False
    for _ in range(20):
        if done:
            break
        facts = env.unwrapped.decision()
        assert (facts["optimal_actions"], facts["steps_to_go"]) == _babyai_reference(env), name
        action = env.unwrapped.oracle_action() if rng.random() < 0.5 else ACTIONS[int(rng.integers(6))]
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated


def board(picture: str) -> E.World:
    """A BabaIsAI world from one character a cell (tests/envs/balrog/test_babaisai.py's)."""
    chars = {"#": E.BORDER, "B": E.BABA, "K": E.KEY, "b": E.noun_word(E.BABA), "k": E.noun_word(E.KEY), "=": E.IS}
    chars |= {"Y": E.property_word(E.YOU), "V": E.property_word(E.WIN)}
    rows = [row.strip() for row in picture.strip().splitlines()]
    world = E.World(len(rows[0]), len(rows))
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            if char != ".":
                world.put(x, y, E.make(chars[char]))
    world.update_rules()
    return world


def test_babaisai_hand_worked_ties_and_a_way_through_a_new_level() -> None:
    world = board(
        """
        ########
        #b=Y...#
        #k=V...#
        #......#
        #.B....#
        #...K..#
        ########
        """
    )
    facts = oracle.decisions(world, None)
    assert facts[oracle.decision_key(world)] == (3, ("right", "down"))  # two right and one down, in any order
    # Breaking "baba is you" (up pushes IS away) draws the next goto_win level from the generator,
    # whose seed-0 level is won in 2 moves: 1 + 2 beats the 9 moves to the key in this level.
    world = board(
        """
        ##########
        #........#
        #b=Y.....#
        #.B......#
        #........#
        #........#
        #k=V....K#
        ##########
        """
    )
    key = oracle.decision_key(world)
    task = levels.TASKS_BY_ID["env/goto_win"]
    assert oracle.decisions(world, None)[key] == (9, ("right", "down"))
    after = oracle.NextLevels(task, np.random.RandomState(0).get_state())
    assert oracle.decisions(world, after)[key] == (3, ("up",))
    assert after.to_go_within(3) == 2 and after.to_go_within(1) == float("inf")
    # at least 1 move (IS is next to baba) and the next level's bound (2) take a way through a new level
    assert oracle.new_level_bound(world, after) == 3 and oracle.fewest_moves(world, after) == 3
    # seed 8's level takes 3 moves (its bound says 2: searched to 2, then 3), seed 1's 9 (1 + 9 loses to 9)
    eight = oracle.NextLevels(task, np.random.RandomState(8).get_state())
    assert eight.lower_bound() == 2 and eight.to_go_within(2) == float("inf") and eight.to_go_within(3) == 3
    assert oracle.decisions(world, oracle.NextLevels(task, np.random.RandomState(8).get_state()))[key] == (4, ("up",))
    assert oracle.decisions(world, oracle.NextLevels(task, np.random.RandomState(1).get_state()))[key] == (9, ("right", "down"))


def test_babaisai_facts_along_the_oracle_and_off_it() -> None:
    """A one-room go-to level, half the oracle's moves and half random ones (seeded): every state's
    facts equal breadth-first search over the level's moves (no way through a new level is quicker
    on this seed); at reset steps_to_go is optimal_steps."""
    env = gym.make("balrog/BabaIsAI-goto_win-distr_obj_rule-v0", obs_mode="text")
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    base = env.unwrapped
    assert base.decision()["steps_to_go"] == base.optimal_steps
    done = False
    while not done:
        facts = base.decision()
        depth = _bfs_to_win(base.game.world)
        assert facts["steps_to_go"] == depth
        optimal = [m for m in oracle.MOVES if _after(base.game.world, m) == depth - 1]
        assert facts["optimal_actions"] == [a for a in E.ACTIONS if a in optimal]
        action = base.oracle_action() if rng.random() < 0.5 else E.ACTIONS[int(rng.integers(5))]
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated


def _after(world: E.World, move: str) -> int:
    nxt = world.copy()
    win, lose = nxt.step(move)
    if lose or nxt.you_position() is None:
        return 999
    return 0 if win else _bfs_to_win(nxt)


def _bfs_to_win(start: E.World) -> int:
    frontier, seen, depth = [start.copy()], {start.key()}, 0
    while frontier:
        depth += 1
        nxt_frontier = []
        for state in frontier:
            for move in oracle.MOVES:
                nxt = state.copy()
                win, lose = nxt.step(move)
                if lose or nxt.you_position() is None:
                    continue
                if win:
                    return depth
                if nxt.key() not in seen:
                    seen.add(nxt.key())
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return 999


def test_babaisai_a_next_levels_answers_do_not_depend_on_what_was_asked_before() -> None:
    """A next level's search pauses at the bound asked and resumes for a larger one: each answer is
    the one a search asked only that bound gives (envs share these searches, and the kit's
    determinism check compares a used process with a fresh one)."""
    task = levels.TASKS_BY_ID["env/two_room-make_you"]
    fresh: dict[int, float] = {}
    for bound in (4, 8, 9, 24):
        oracle._LEVELS.clear()  # a fresh process's
        fresh[bound] = oracle.NextLevels(task, np.random.RandomState(3).get_state()).to_go_within(bound)
    oracle._LEVELS.clear()
    used = oracle.NextLevels(task, np.random.RandomState(3).get_state())
    assert {bound: used.to_go_within(bound) for bound in (4, 8, 9, 24)} == fresh
    assert fresh == {4: float("inf"), 8: float("inf"), 9: 9, 24: 9}  # paused twice, then resumed to the win
