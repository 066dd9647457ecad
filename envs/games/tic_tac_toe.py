"""TicTacToe: walk to the goal on a small grid (the example env `rl4vlm-gym new-env` writes).

Replace the rules with your game's; keep the hooks. The base class :class:`rl4vlm_gym.VLMEnv`
owns the observation, parsing, invalid actions, rewards, levels, ``info`` and rendering modes
(see docs/architecture.md and CONTRIBUTING.md of RL4VLM Gym).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.rendering import to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

MOVES: dict[str, tuple[int, int]] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
FLOOR, LINE, AGENT, GOAL = (235, 235, 225), (90, 90, 90), (40, 90, 220), (230, 170, 20)


@dataclass(frozen=True)
class TicTacToeLevel:
    """One rung of the ladder: the grid is ``size`` x ``size`` cells."""

    size: int

    def describe(self) -> str:
        return f"{self.size}x{self.size} grid"


LEVELS = (TicTacToeLevel(3), TicTacToeLevel(4), TicTacToeLevel(5))


class TicTacToe(VLMEnv):
    """Walk to the goal on a small grid: the example env of ``rl4vlm-gym new-env``.

    ## Description
    The agent stands on a square grid and must reach the goal cell. Each step moves it one cell
    up, down, left or right; a move off the grid is refused by the rules (an invalid action: the
    step is used, nothing changes).

    ## Observation
    - ``image``: the grid, the agent (a blue disc) and the goal (a gold square).
    - ``text``: the grid in symbols (``A`` agent, ``G`` goal, ``.`` floor) and the two positions
      in words (``image+text`` and ``text`` modes); in ``image`` mode only the step's feedback.
    - ``mission``: ``"Walk to the goal."``
    - ``actions``: ``up``, ``down``, ``left``, ``right``.

    ## Actions
    One of ``up``, ``down``, ``left``, ``right``, e.g. ``{"thoughts": "the goal is above",
    "action": "up"}``, ``<action>up</action>`` or ``up``.

    ## Rewards
    ``native``: -0.1 per step (invalid ones too), +1 on reaching the goal. ``sparse``: +1 on
    reaching the goal, 0 otherwise.

    ## Levels
    0: a 3x3 grid; 1: 4x4; 2: 5x5. Agent and goal start on distinct random cells.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 96x96), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    LEVELS: ClassVar[tuple[TicTacToeLevel, ...]] = LEVELS
    REWARDS: ClassVar = {
        "native": {"step": -0.1, "goal": 1.0, "invalid": -0.1},
        "sparse": {"step": 0.0, "goal": 1.0, "invalid": 0.0},
    }
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (96, 96)
    MIN_IMAGE_SIDE: ClassVar[int] = 32

    # The rules -------------------------------------------------------------------------------------

    def _new_episode(self, config: TicTacToeLevel) -> None:
        # All randomness from self.np_random: the same seed gives the same episode in any process.
        self.size = config.size
        cells = self.np_random.permutation(self.size * self.size)[:2]
        self.agent = divmod(int(cells[0]), self.size)
        self.goal = divmod(int(cells[1]), self.size)
        self._start = self.agent

    def _actions(self) -> tuple[str, ...]:
        return tuple(MOVES)

    def _apply(self, action: str) -> StepOutcome:
        dr, dc = MOVES[action]
        row, col = self.agent[0] + dr, self.agent[1] + dc
        if not (0 <= row < self.size and 0 <= col < self.size):
            return StepOutcome("invalid", feedback="You bumped into the edge of the grid.", error="the edge blocks that move")
        self.agent = (row, col)
        if self.agent == self.goal:
            return StepOutcome("goal", terminated=True, feedback="You reached the goal.")
        return StepOutcome("step", feedback=f"You moved {action}.")

    def _describe(self) -> str:
        rows = []
        for r in range(self.size):
            rows.append(" ".join("A" if (r, c) == self.agent else "G" if (r, c) == self.goal else "." for c in range(self.size)))
        grid = "\n".join(rows)
        return (
            f"Grid ({self.size}x{self.size}; A agent, G goal, . floor; row 1 is the top):\n{grid}\n"
            f"You are at row {self.agent[0] + 1}, column {self.agent[1] + 1}; "
            f"the goal is at row {self.goal[0] + 1}, column {self.goal[1] + 1}."
        )

    def _mission(self) -> str:
        return "Walk to the goal."

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        image = Image.new("RGB", (width, height), FLOOR)
        draw = ImageDraw.Draw(image)
        ch, cw = height / self.size, width / self.size
        for i in range(self.size + 1):
            draw.line([(0, round(i * ch)), (width, round(i * ch))], fill=LINE)
            draw.line([(round(i * cw), 0), (round(i * cw), height)], fill=LINE)
        gr, gc = self.goal
        draw.rectangle([gc * cw + cw * 0.2, gr * ch + ch * 0.2, gc * cw + cw * 0.8, gr * ch + ch * 0.8], fill=GOAL)
        ar, ac = self.agent
        draw.ellipse([ac * cw + cw * 0.25, ar * ch + ch * 0.25, ac * cw + cw * 0.75, ar * ch + ch * 0.75], fill=AGENT)
        return to_array(image)

    def _frame_key(self) -> Any:
        # Everything _render draws, and the size it draws at: equal keys must give equal images.
        return (self.size, self.agent, self.goal, self.image_size)

    def _state_key(self) -> str:
        return f"size={self.size}|agent={self.agent[0]},{self.agent[1]}|goal={self.goal[0]},{self.goal[1]}"

    # Scoring and the oracle ------------------------------------------------------------------------

    def _success(self) -> bool:
        return self.agent == self.goal

    def _progress(self) -> float:
        start = abs(self._start[0] - self.goal[0]) + abs(self._start[1] - self.goal[1])
        now = abs(self.agent[0] - self.goal[0]) + abs(self.agent[1] - self.goal[1])
        return max(0.0, 1.0 - now / start)

    def _optimal_steps(self) -> int:
        return abs(self.agent[0] - self.goal[0]) + abs(self.agent[1] - self.goal[1])

    def oracle_action(self) -> str:
        (ar, ac), (gr, gc) = self.agent, self.goal
        if ar != gr:
            return "down" if gr > ar else "up"
        return "right" if gc > ac else "left"
