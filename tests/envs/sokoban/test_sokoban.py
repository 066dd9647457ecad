"""Rules of rl4vlm/Sokoban-v0 (tests/test_conformance.py runs the conformance kit on it)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.sokoban.generator import Room, generate
from rl4vlm_gym.envs.sokoban.oracle import live_squares, solve

ENV_ID = "rl4vlm/Sokoban-v0"


def make(**kwargs: Any) -> gym.Env:
    """A tiny image keeps the rule tests cheap."""
    return gym.make(ENV_ID, image_size=48, **kwargs)


def room(*rows: str) -> Room:
    """A room from verl-agent's symbols."""
    cells = {(r, c): ch for r, row in enumerate(rows) for c, ch in enumerate(row)}
    pick = lambda *chars: frozenset(cell for cell, ch in cells.items() if ch in chars)  # noqa: E731
    player = next(iter(pick("P", "S")))
    return Room(len(rows), len(rows[0]), pick("#"), pick("O", "√", "S"), pick("X", "√"), player)


def set_room(env: gym.Env, r: Room) -> None:
    base = env.unwrapped
    base.room, base.boxes, base.player = r, r.boxes, r.player


CORRIDOR = room("######", "#P_XO#", "######")


def test_pushing_onto_the_target_solves_with_gym_sokobans_rewards() -> None:
    env = make(reward_variant="native")
    env.reset(seed=0)
    set_room(env, CORRIDOR)
    _, reward, terminated, _, info = env.step("right")  # walk
    assert reward == pytest.approx(-0.1) and not terminated and info["action"]["valid"]
    _, reward, terminated, _, info = env.step("right")  # push onto the target: -0.1 + 1 + 10
    assert reward == pytest.approx(10.9) and terminated and info["success"]


def test_the_aliases_name_the_native_rewards() -> None:
    for alias in ("verl-agent", "gym-sokoban"):
        assert make(reward_variant=alias).unwrapped.reward_variant == "native"


def test_box_off_a_target_and_sparse_rewards() -> None:
    two = room("#######", "#P√_XO#", "#######")
    env = make(reward_variant="native")
    env.reset(seed=0)
    set_room(env, two)
    _, reward, *_ = env.step("right")  # the box leaves its target
    assert reward == pytest.approx(-1.1)
    sparse = make()
    sparse.reset(seed=0)
    set_room(sparse, CORRIDOR)
    assert sparse.step("right")[1] == 0.0 and sparse.step("right")[1] == 1.0


@pytest.mark.parametrize(("rows", "action", "why"), [
    (("#####", "#P_O#", "#X__#", "#####"), "up", "wall"),
    (("######", "#PXXO#", "######"), "right", "blocked"),
    (("######", "#_PXO#", "######"), "up", "wall"),
])  # fmt: skip
def test_refused_moves_are_invalid_and_change_nothing(rows: tuple[str, ...], action: str, why: str) -> None:
    env = make(reward_variant="native")
    env.reset(seed=0)
    set_room(env, room(*rows))
    before = env.unwrapped._state_key()
    _, reward, _, _, info = env.step(action)
    assert not info["action"]["valid"] and why in info["action"]["error"]
    assert info["state_key"] == before and reward == pytest.approx(-0.1)


def test_text_uses_verl_agents_symbols_and_matches_the_image() -> None:
    env = make()
    env.reset(seed=0)
    set_room(env, CORRIDOR)
    obs, *_ = env.step("right")
    assert "#_PXO#" in obs["text"] and "Boxes on targets: 0 of 1" in obs["text"]
    image = obs["image"]  # 6 x 3 cells of 8 x 16 pixels at 48 x 48: the box is brown, the target ring red
    assert tuple(image[24, 3 * 8 + 4]) == (190, 130, 50)
    assert (image[16:32, 4 * 8 : 5 * 8] == (210, 40, 40)).all(axis=-1).any()


def test_the_solver_is_exact_on_a_hand_worked_room() -> None:
    # The box must go round: push right twice; 2 moves. With the player on the other side: walk round first.
    r = room("#######", "#P_X_O#", "#######")
    assert solve(r.walls, r.targets, r.boxes, r.player) == ["right", "right", "right"]
    stuck = room("#####", "#X_O#", "#_P_#", "#####")  # a box in a corner can never move
    assert solve(stuck.walls, stuck.targets, stuck.boxes, stuck.player) is None
    assert (1, 1) not in live_squares(frozenset({(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)}), [(1, 3)])


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_generated_rooms_are_solvable_with_every_box_off_its_target(level: int) -> None:
    env = make(level=level)
    config = env.unwrapped.LEVELS[level]
    for seed in range(15):
        _, info = env.reset(seed=seed)
        base = env.unwrapped
        assert len(base.boxes) == config.boxes and not base.boxes & base.room.targets
        assert base.room.height == config.size and info["optimal_steps"] >= max(config.min_moves, 1)


def test_generation_uses_only_the_given_generator() -> None:
    a = generate(7, 7, 2, 40, np.random.default_rng(5))
    b = generate(7, 7, 2, 40, np.random.default_rng(5))
    assert a == b


CENTRE_COLOURS = {
    "#": (110, 60, 40), "_": (225, 215, 190), "O": (225, 215, 190), "X": (190, 130, 50),
    "√": (60, 170, 70), "P": (40, 80, 210), "S": (40, 80, 210),
}  # fmt: skip


def _grid(text: str) -> list[str]:
    lines = text.splitlines()  # feedback, "The room (legend):", the grid, "Boxes on targets: ..."
    return lines[next(i for i, line in enumerate(lines) if line.startswith("The room")) + 1 : -1]


@pytest.mark.parametrize("level", [0, 3])
def test_every_cell_of_the_image_shows_what_the_text_grid_says(level: int) -> None:
    env = gym.make(ENV_ID, level=level, image_size=16 * (6 + 2 * (level == 3)))
    symbols: set[str] = set()
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        while True:  # the oracle's moves to the end, where every box is on its target
            grid = _grid(obs["text"])
            cell = obs["image"].shape[0] // len(grid)
            for r, row in enumerate(grid):
                for c, symbol in enumerate(row):
                    y = r * cell + (cell // 4 if symbol == "#" else cell // 2)  # a wall's middle is mortar
                    centre = tuple(int(v) for v in obs["image"][y, c * cell + cell // 2])
                    assert centre == CENTRE_COLOURS[symbol], (seed, r, c, symbol, centre)
                    symbols.add(symbol)
            if "√" in "".join(grid) and not any("X" in row for row in grid):
                break
            obs, _, _, truncated, _ = env.step(env.unwrapped.oracle_action())
            assert not truncated
    assert {"#", "_", "O", "X", "P", "√"} <= symbols
