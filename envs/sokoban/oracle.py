"""An exact Sokoban solver: breadth-first search over (player, boxes) in moves, with dead squares pruned.

Every move costs one step, so BFS over full states gives the fewest *moves* (what ``optimal_steps``
counts), not the fewest pushes. A box pushed onto a dead square (one from which no push sequence
can bring a box to any target: not reachable by pulling a box away from a target) can never be
solved, so those states are never expanded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import combinations

from rl4vlm_gym.envs.sokoban.generator import DIRECTIONS

ACTIONS = ("up", "down", "left", "right")
Cell = tuple[int, int]


class SolverLimit(RuntimeError):
    """The search met its state budget before a solution (never for the registered levels)."""


def live_squares(floor: frozenset[Cell], targets: Iterable[Cell]) -> frozenset[Cell]:
    """Floor cells from which a box can still reach some target (by pulls from the targets)."""
    live = set(targets)
    frontier = deque(live)
    while frontier:
        r, c = frontier.popleft()
        for dr, dc in DIRECTIONS:
            box, player = (r + dr, c + dc), (r + 2 * dr, c + 2 * dc)
            if box in floor and player in floor and box not in live:
                live.add(box)
                frontier.append(box)
    return frozenset(live)


def solve(
    walls: frozenset[Cell], targets: frozenset[Cell], boxes: frozenset[Cell], player: Cell, max_states: int = 2_000_000
) -> list[str] | None:
    """The shortest move sequence that puts every box on a target; ``None`` if there is none."""
    if boxes <= targets:
        return []
    cells = {cell for cell in walls}
    height = max(r for r, _ in cells) + 1
    width = max(c for _, c in cells) + 1
    floor = frozenset((r, c) for r in range(height) for c in range(width) if (r, c) not in walls)
    live = live_squares(floor, targets)
    start = (player, frozenset(boxes))
    parents: dict[tuple[Cell, frozenset[Cell]], tuple[tuple[Cell, frozenset[Cell]], int] | None] = {start: None}
    frontier = deque([start])
    while frontier:
        state = frontier.popleft()
        (pr, pc), state_boxes = state
        for index, (dr, dc) in enumerate(DIRECTIONS):
            step = (pr + dr, pc + dc)
            if step not in floor:
                continue
            new_boxes = state_boxes
            if step in state_boxes:
                beyond = (step[0] + dr, step[1] + dc)
                if beyond not in live or beyond in state_boxes:
                    continue
                new_boxes = (state_boxes - {step}) | {beyond}
            nxt = (step, new_boxes)
            if nxt in parents:
                continue
            parents[nxt] = (state, index)
            if new_boxes <= targets:
                moves = []
                node: tuple[Cell, frozenset[Cell]] | None = nxt
                while parents[node] is not None:  # type: ignore[index]
                    node, action = parents[node]  # type: ignore[index,misc]
                    moves.append(ACTIONS[action])
                return moves[::-1]
            if len(parents) > max_states:
                raise SolverLimit(f"more than {max_states} states explored")
            frontier.append(nxt)
    return None


State = tuple[Cell, frozenset[Cell]]


def distances_to_go(walls: frozenset[Cell], targets: frozenset[Cell], boxes: int, max_states: int = 2_000_000) -> dict[State, int]:
    """The fewest moves that solve the room from every state that can still be solved.

    A breadth-first search backwards from the solved states (``boxes`` boxes on targets, the player
    on any free floor cell) by reverse moves, a walk or a pull, so a state missing from the table can
    never be solved (a box in a corner, say). One search serves every state of a room: the decision
    facts of any state, on the oracle's path or off it, are then look-ups.

    Raises:
        SolverLimit: the table would hold more than ``max_states`` states (never for the registered
            levels: at most a few thousand).
    """
    height = max(r for r, _ in walls) + 1
    width = max(c for _, c in walls) + 1
    floor = frozenset((r, c) for r in range(height) for c in range(width) if (r, c) not in walls)
    dist: dict[State, int] = {}
    frontier: deque[State] = deque()
    for placed in combinations(sorted(targets), boxes):
        on = frozenset(placed)
        for player in floor - on:
            dist[(player, on)] = 0
            frontier.append((player, on))
    while frontier:
        state = frontier.popleft()
        (pr, pc), state_boxes = state
        further = dist[state] + 1
        for dr, dc in DIRECTIONS:
            came = (pr - dr, pc - dc)  # the player came from here by moving (dr, dc)
            if came not in floor or came in state_boxes:
                continue
            before: list[State] = [(came, state_boxes)]  # a walk
            pushed = (pr + dr, pc + dc)
            if pushed in state_boxes:  # or a push of the box now at `pushed`, which stood where the player is
                before.append((came, (state_boxes - {pushed}) | {(pr, pc)}))
            for previous in before:
                if previous not in dist:
                    dist[previous] = further
                    frontier.append(previous)
        if len(dist) > max_states:
            raise SolverLimit(f"more than {max_states} states can still be solved")
    return dist
