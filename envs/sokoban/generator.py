"""Sokoban rooms by reverse play, as gym-sokoban generates them, so every room is solvable.

1. Topology: a random walk carves floor out of a walled room (gym-sokoban's
   ``room_topology_generation``, with its cross-shaped masks).
2. Targets and the player go on random floor cells; every box starts on a target (solved).
3. Reverse play: the player walks and *pulls* boxes for ``depth`` moves. Each pull is the reverse
   of a push, so replaying the moves backwards solves the room. Of several tries the one that moves
   the boxes farthest off their targets is kept (gym-sokoban scores box displacement the same way).

Our own code rather than gym-sokoban itself: gym-sokoban draws from the global ``random`` module
(never reproducible per env) and is unmaintained; the rules are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))  # up, down, left, right
_MASKS = (
    ((0, 0, 0), (1, 1, 1), (0, 0, 0)),
    ((0, 1, 0), (0, 1, 0), (0, 1, 0)),
    ((0, 0, 0), (1, 1, 0), (0, 1, 0)),
    ((0, 0, 0), (1, 1, 0), (1, 1, 0)),
    ((0, 0, 0), (0, 1, 1), (0, 1, 0)),
)


class GenerationError(RuntimeError):
    """No room with every box off its target was found in the allowed tries (a level too tight)."""


@dataclass(frozen=True)
class Room:
    """A generated puzzle: ``walls`` and ``targets`` fixed, ``boxes`` and ``player`` the start."""

    height: int
    width: int
    walls: frozenset[tuple[int, int]]
    targets: frozenset[tuple[int, int]]
    boxes: frozenset[tuple[int, int]]
    player: tuple[int, int]


def _topology(height: int, width: int, rng: np.random.Generator) -> np.ndarray:
    floor = np.zeros((height, width), bool)
    steps = int(1.5 * (height + width))
    r, c = int(rng.integers(1, height - 1)), int(rng.integers(1, width - 1))
    direction = DIRECTIONS[int(rng.integers(4))]
    for _ in range(steps):
        if rng.random() < 0.35:
            direction = DIRECTIONS[int(rng.integers(4))]
        r = min(max(r + direction[0], 1), height - 2)
        c = min(max(c + direction[1], 1), width - 2)
        mask = np.array(_MASKS[int(rng.integers(len(_MASKS)))], bool)
        for dr in range(3):
            for dc in range(3):
                rr, cc = r + dr - 1, c + dc - 1
                if mask[dr, dc] and 0 < rr < height - 1 and 0 < cc < width - 1:
                    floor[rr, cc] = True
    return floor


def _reverse_play(
    floor: np.ndarray, targets: list[tuple[int, int]], player: tuple[int, int], depth: int, rng: np.random.Generator
) -> tuple[frozenset[tuple[int, int]], tuple[int, int]]:
    boxes = set(targets)
    moved = 0
    for _ in range(4 * depth):  # `depth` moves that happen; blocked draws do not count
        if moved == depth:
            break
        dr, dc = DIRECTIONS[int(rng.integers(4))]
        back = (player[0] - dr, player[1] - dc)
        if not floor[back] or back in boxes:
            continue
        moved += 1
        front = (player[0] + dr, player[1] + dc)
        if front in boxes and rng.random() < 0.8:  # pull the box behind the player
            boxes.remove(front)
            boxes.add(player)
        player = back
    return frozenset(boxes), player


def generate(height: int, width: int, boxes: int, depth: int, rng: np.random.Generator, tries: int = 200) -> Room:
    """A solvable room with ``boxes`` boxes, none on a target, drawn from ``rng`` only."""
    for _ in range(tries):
        floor = _topology(height, width, rng)
        cells = [(int(r), int(c)) for r, c in np.argwhere(floor)]
        if len(cells) < boxes + 3:
            continue
        picks = rng.permutation(len(cells))[: boxes + 1]
        targets = [cells[int(i)] for i in picks[:boxes]]
        best: tuple[int, frozenset[tuple[int, int]], tuple[int, int]] | None = None
        for _attempt in range(4):
            placed, player = _reverse_play(floor, targets, cells[int(picks[boxes])], depth, rng)
            if placed & set(targets):
                continue
            score = sum(min(abs(b[0] - t[0]) + abs(b[1] - t[1]) for t in targets) for b in placed)
            if best is None or score > best[0]:
                best = (score, placed, player)
        if best is not None:
            walls = frozenset((r, c) for r in range(height) for c in range(width) if not floor[r, c])
            return Room(height, width, walls, frozenset(targets), best[1], best[2])
    raise GenerationError(f"no {height}x{width} room with {boxes} boxes off their targets after {tries} tries")
