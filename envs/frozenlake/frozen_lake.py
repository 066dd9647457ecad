"""FrozenLake: cross a frozen lake to the gift without falling into a hole, on Gymnasium's FrozenLake-v1."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv, generate_random_map
from PIL import Image

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.frozenlake.wording import PHRASES, WORDINGS
from rl4vlm_gym.rendering import offscreen_sdl

if TYPE_CHECKING:
    from numpy.typing import NDArray

ACTIONS = ("left", "down", "right", "up")  # Gymnasium's action ids 0..3
LEGEND = "P you, S start, F frozen ice, H hole, G goal"


@dataclass(frozen=True)
class FrozenLakeLevel:
    """A ``size`` x ``size`` map from Gymnasium's ``generate_random_map`` (``frozen``: the chance
    of a tile being ice); ``slippery``: the ice makes moves slide sideways 2 times in 3."""

    size: int
    frozen: float = 0.8
    slippery: bool = False

    def describe(self) -> str:
        return f"{self.size}x{self.size} map, {'slippery' if self.slippery else 'not slippery'}"


FROZENLAKE_LEVELS = (
    FrozenLakeLevel(4),
    FrozenLakeLevel(6),
    FrozenLakeLevel(8),
    FrozenLakeLevel(4, slippery=True),
    FrozenLakeLevel(8, slippery=True),
)


class FrozenLake(VLMEnv):
    """Cross the frozen lake to the goal without falling into a hole: Gymnasium's FrozenLake-v1.

    ## Description
    Gymnasium's ``FrozenLake-v1`` plays the rules (its ``FrozenLakeEnv``, seeded from the
    episode's seed) on a map from its own seeded ``generate_random_map``, which always has a path
    from the start to the goal. Falling into a hole or reaching the goal ends the episode. On
    slippery levels a move goes the intended way with probability 1/3 and to either side
    otherwise, a game of chance: ``optimal_steps`` is -1 there. The oracle walks a shortest path
    (breadth-first search) on ice that does not slip, and plays the policy that maximises the
    chance of reaching the goal (value iteration on Gymnasium's transition table) when it does.

    Decisions (``decision()``): on ice that does not slip, exact from the BFS (``steps_to_go``
    the moves left, the optimal actions those that shorten them); on slippery ice a game of
    chance: ``values`` are each action's chance of reaching the goal (value iteration) and the
    optimal actions the best of them. Feature ``distance``: the moves to the goal without slips.

    ## Observation
    - ``image``: Gymnasium's own pygame ``rgb_array`` frame (ice, holes, the goal's gift and the
      elf, facing its last move), resized to ``image_size``.
    - ``text`` (``image+text`` and ``text`` modes): the map as a grid (``P`` you, ``S`` start,
      ``F`` ice, ``H`` hole, ``G`` goal) and your row and column; in ``image`` mode only the step's
      feedback. The elf's facing is drawn but is not part of the state.
    - ``mission``: ``"Walk to the goal without falling into a hole."``
    - ``actions``: ``left``, ``down``, ``right``, ``up``.

    ## Actions
    One of ``left``, ``down``, ``right``, ``up`` (Gymnasium's order). A move off the map leaves
    you where you are, as in Gymnasium (a valid move).

    ## Rewards
    ``native``: Gymnasium's, +1 on reaching the goal and 0 otherwise (also the ``sparse`` reward;
    verl-agent has no FrozenLake).

    ## Levels
    0: 4x4 map; 1: 6x6; 2: 8x8, none slippery; 3: 4x4 slippery; 4: 8x8 slippery (Gymnasium's
    default rules). Maps have 80% ice tiles.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``, ``wording`` (``train``; ``held-out``: the mission and the feedback in
    sentences no training episode reads, three phrasings of each, the seed picking one; the
    episode, the images and the actions stay the same).

    ## Version History
    - v0: initial release.
    """

    LEVELS: ClassVar[tuple[FrozenLakeLevel, ...]] = FROZENLAKE_LEVELS
    REWARDS: ClassVar = {"native": {"move": 0.0, "hole": 0.0, "goal": 1.0, "invalid": 0.0}}
    REWARD_ALIASES: ClassVar = {"sparse": "native", "gymnasium": "native"}
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    WORDINGS: ClassVar[tuple[str, ...]] = WORDINGS
    PHRASES: ClassVar = PHRASES
    SYNONYMS: ClassVar = {"west": "left", "south": "down", "east": "right", "north": "up"}

    _decided: tuple[tuple[tuple[str, ...], bool], dict[int, Decision]] | None = None
    """The map (and its ice) whose decision facts are kept, per cell (see ``_decision``)."""

    def _new_episode(self, config: FrozenLakeLevel) -> None:
        seeds = self.np_random.integers(2**31, size=2)
        self.desc = tuple(generate_random_map(size=config.size, p=config.frozen, seed=int(seeds[0])))
        self.slippery = config.slippery
        self.lake = FrozenLakeEnv(desc=list(self.desc), is_slippery=config.slippery)
        self.lake.reset(seed=int(seeds[1]))
        self.position = int(self.lake.s)
        self.last_action: int | None = None
        self._policy: tuple[int, ...] | None = None

    @property
    def _cell(self) -> tuple[int, int]:
        return divmod(self.position, len(self.desc))

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        index = ACTIONS.index(action)
        state, reward, terminated, _, _ = self.lake.step(index)
        self.position, self.last_action = int(state), index
        row, col = self._cell
        tile = self.desc[row][col]
        if tile == "G":
            return StepOutcome("goal", terminated=True, feedback=self._say("goal", "You reached the goal."))
        if tile == "H":
            return StepOutcome("hole", terminated=True, feedback=self._say("hole", "You fell into a hole."))
        slid = " (the ice made you slide)" if self.slippery else ""
        return StepOutcome("move", feedback=self._say("slide" if slid else "move", f"You moved {action}{slid}.", action=action))

    def _grid(self) -> list[str]:
        row, col = self._cell
        return ["".join("P" if (r, c) == (row, col) else ch for c, ch in enumerate(line)) for r, line in enumerate(self.desc)]

    def _describe(self) -> str:
        row, col = self._cell
        size = len(self.desc)
        return (
            f"The lake ({size}x{size}; {LEGEND}; row 1 is the top):\n" + "\n".join(self._grid())
            + f"\nYou are at row {row + 1}, column {col + 1}; the ice is {'slippery' if self.slippery else 'not slippery'}."
        )

    def _mission(self) -> str:
        return self._say("mission", "Walk to the goal without falling into a hole.")

    def _render(self) -> NDArray[np.uint8]:
        # Gymnasium's renderer, kept apart (its pygame surfaces do not pickle) and reused while the
        # map size stays: loading its tiles costs more than drawing. It draws at the cell size that
        # fits image_size (its art scaled once), so no large frame is drawn only to be shrunk.
        height, width = self.image_size
        size = len(self.desc)
        painter = getattr(self, "_painter", None)
        if painter is None or painter.nrow != size or painter.window_size != (width // size * size, height // size * size):
            painter = self._painter = FrozenLakeEnv(desc=list(self.desc), is_slippery=False, render_mode="rgb_array")
            painter.cell_size = (max(1, width // size), max(1, height // size))
            painter.window_size = (painter.cell_size[0] * size, painter.cell_size[1] * size)
        painter.desc = np.asarray(self.desc, dtype="c")
        painter.s, painter.lastaction = self.position, self.last_action
        with offscreen_sdl():  # its pygame renderer, with or without a screen
            frame = painter.render()
        if frame.shape[:2] == (height, width):
            return np.ascontiguousarray(frame, dtype=np.uint8)
        return np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.BILINEAR), dtype=np.uint8).copy()

    def _frame_key(self) -> Any:
        # Everything drawn: the map, the elf's cell and its facing (the last move), and the size.
        return (self.desc, self.position, self.last_action, self.image_size)

    def _state_key(self) -> str:
        return "/".join(self._grid())

    def _success(self) -> bool:
        row, col = self._cell
        return self.desc[row][col] == "G"

    def _progress(self) -> float:
        return float(self._success())

    def _distances(self) -> dict[int, int]:
        """Moves to the goal from each state on ice that does not slip (BFS back from the goal);
        computed once per map (the episode's, or one a test sets)."""
        cached = getattr(self, "_distance_cache", None)
        if cached is not None and cached[0] == self.desc:
            return cached[1]
        size = len(self.desc)
        goal = next(r * size + c for r, line in enumerate(self.desc) for c, ch in enumerate(line) if ch == "G")
        dist, frontier = {goal: 0}, deque([goal])
        while frontier:
            state = frontier.popleft()
            r, c = divmod(state, size)
            for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                nxt = nr * size + nc
                if 0 <= nr < size and 0 <= nc < size and self.desc[nr][nc] != "H" and nxt not in dist:
                    dist[nxt] = dist[state] + 1
                    frontier.append(nxt)
        self._distance_cache = (self.desc, dist)
        return dist

    def _next_cells(self) -> list[int]:
        """The cell each action (in ``ACTIONS`` order) leads to on ice that does not slip; a move
        off the map stays put, as in Gymnasium."""
        size = len(self.desc)
        r, c = self._cell
        cells = []
        for nr, nc in ((r, c - 1), (r + 1, c), (r, c + 1), (r - 1, c)):
            cells.append(nr * size + nc if 0 <= nr < size and 0 <= nc < size else self.position)
        return cells

    @property
    def CHANCE(self) -> bool:  # type: ignore[override]  # noqa: N802 - the base class's flag, per level here
        """Slippery levels are games of chance: the ice decides where each move goes."""
        return self.LEVELS[self.level].slippery

    def _optimal_steps(self) -> int | None:
        if self.slippery:
            return None  # a game of chance
        return self._distances().get(self.position)

    def _action_values(self) -> NDArray[np.float64]:
        """``q[state, action]``: the chance of reaching the goal after the action, playing best
        afterwards (value iteration on Gymnasium's transition table, no discount, until a sweep
        changes no value by 1e-12); computed once per map."""
        cached = getattr(self, "_value_cache", None)
        if cached is not None and cached[0] == (self.desc, self.slippery):
            return cached[1]
        table = self.lake.P
        states = len(table)
        moves, reward = np.zeros((states, 4, states)), np.zeros((states, 4))
        for s, by_action in table.items():
            for a, outcomes in by_action.items():
                for p, s2, r, done in outcomes:
                    reward[s, a] += p * r
                    if not done:
                        moves[s, a, s2] += p
        value = np.zeros(states)
        for _ in range(100_000):
            q = reward + moves @ value
            new = q.max(axis=1)
            if np.max(np.abs(new - value)) < 1e-12:
                break
            value = new
        self._value_cache = ((self.desc, self.slippery), q)
        return q

    def _value_policy(self) -> tuple[int, ...]:
        """The policy maximising the chance of reaching the goal (the first best action of each state)."""
        return tuple(int(a) for a in self._action_values().argmax(axis=1))

    def _decision(self) -> Decision:
        # Exact on both kinds of ice, from tables computed once per map (a BFS, a value iteration),
        # so each call is a look-up; the facts of each cell are kept for the map.
        key = (self.desc, self.slippery)
        kept = self._decided
        if kept is None or kept[0] != key:
            kept = self._decided = (key, {})
        found = kept[1].get(self.position)
        if found is None:
            found = kept[1][self.position] = self._facts_here()
        return found

    def _facts_here(self) -> Decision:
        """The decision facts of the current cell. Feature: the moves to the goal on ice that does not slip."""
        dist = self._distances()
        to_go = dist.get(self.position)
        features = {"distance": -1 if to_go is None else to_go}
        if self.slippery:
            # A game of chance: each action's value is its chance of reaching the goal (the expected
            # return), from value iteration; the optimal actions are the best ones (ties within 1e-9).
            q = self._action_values()[self.position]
            values = {action: float(q[i]) for i, action in enumerate(ACTIONS)}
            best = max(values.values())
            optimal = tuple(a for a in ACTIONS if values[a] >= best - 1e-9)
            return Decision(optimal, None, values=values, reason="a game of chance: the ice decides where a move goes", features=features)
        if to_go is None:
            return Decision(None, None, reason="unsolvable from here: no path to the goal", features=features)
        cells = self._next_cells()
        optimal = tuple(a for a, cell in zip(ACTIONS, cells, strict=True) if dist.get(cell) == to_go - 1)
        return Decision(optimal, to_go, features=features)

    def oracle_action(self) -> str:
        if self.slippery:
            if self._policy is None:
                self._policy = self._value_policy()
            return ACTIONS[self._policy[self.position]]
        dist = self._distances()
        best = None
        for index, nxt in enumerate(self._next_cells()):
            if nxt != self.position and nxt in dist and (best is None or dist[nxt] < dist[best[1]]):
                best = (index, nxt)
        return ACTIONS[best[0]] if best is not None else ACTIONS[0]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_painter"] = None  # pygame surfaces cannot cross processes; redrawn on demand
        return state
