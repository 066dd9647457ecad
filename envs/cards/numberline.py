"""NumberLine: move the current number to the target, one step at a time."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.cards.layout import LOOKS
from rl4vlm_gym.envs.cards.levels import NUMBERLINE_LEVELS, NumberLineLevel
from rl4vlm_gym.envs.cards.wording import PHRASES, WORDINGS
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray


class NumberLine(VLMEnv):
    """Move the current number to the target by adding or subtracting one.

    ## Description
    RL4VLM's NumberLine (Zhai et al., 2024). A target and a current number are drawn on a white
    canvas; each step adds or subtracts one. The episode ends when the numbers are equal, or
    after ``2 * max_position`` steps.

    Decisions (``decision()``): exact; ``steps_to_go`` is the distance to the target and the
    one optimal action moves towards it ("unsolvable from here" once fewer steps are left than
    the distance); feature ``distance``.

    ## Observation
    - ``image``: a white canvas with ``Target: g`` and ``Current: c`` in DejaVu Sans Bold, as in
      RL4VLM (300x300: at (30, 60) and (30, 180), 36 pt; scaled with ``image_size``).
    - ``text``: ``"Target: g\\nCurrent: c"`` (the same two numbers) in ``text`` and
      ``image+text`` modes; in ``image`` mode only the feedback on an invalid action.
    - ``mission``: the rules, with no numbers in them.
    - ``actions``: ``("-", "+")``.

    ## Actions
    ``-`` subtracts one (no effect at 0), ``+`` adds one (no effect at ``max_position``).
    RL4VLM's JSON answer ``{"thoughts": ..., "action": "+"}`` parses, as do ``<action>+</action>``
    and a plain ``+``.

    ## Rewards
    +1 when the current number reaches the target (the episode terminates), -1 when a step does
    not bring it closer (including a move into the edge), 0 otherwise. An unparseable action costs
    -1 under ``rl4vlm`` and 0 under ``verl-agent`` (verl-agent keeps NumberLine's other rewards).

    ## Levels
    The level sets ``max_position`` (5, 10, 20, 50, 100); level 0 is RL4VLM's game. The start
    and target are uniform in ``0..max_position``; if they coincide the target becomes
    ``(target + 1) % max_position``, as in RL4VLM.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 300x300), ``reward_variant`` (``rl4vlm``, ``verl-agent``),
    ``action_format``, ``action_match``, ``render_mode``, ``appearance`` (``default``; ``held-out``:
    a wine cloth, cream serif lettering and a dark page, a look no training frame shows; the cards'
    faces, the text and the rules stay the same), ``wording`` (``train``; ``held-out``: the mission
    and the feedback in sentences no training episode reads, three phrasings of each, the seed
    picking one; the episode, the images and the actions stay the same).

    ## Version History
    - v0: RL4VLM's rules and image; seeded through ``reset(seed)``; no random action on
      unparseable output.
    """

    LEVELS: ClassVar[tuple[NumberLineLevel, ...]] = NUMBERLINE_LEVELS
    REWARDS: ClassVar = {
        "rl4vlm": {"reach": 1.0, "closer": 0.0, "not_closer": -1.0, "invalid": -1.0},
        "verl-agent": {"reach": 1.0, "closer": 0.0, "not_closer": -1.0, "invalid": 0.0},
    }
    ACTIONS: ClassVar[tuple[str, ...]] = ("-", "+")
    APPEARANCES: ClassVar[tuple[str, ...]] = tuple(LOOKS)
    WORDINGS: ClassVar[tuple[str, ...]] = WORDINGS
    PHRASES: ClassVar = PHRASES["numberline"]
    SYNONYMS: ClassVar = {"minus": "-", "subtract": "-", "plus": "+", "add": "+"}

    def _new_episode(self, config: NumberLineLevel) -> None:
        self.config = config
        top = config.max_position
        self.position = int(self.np_random.integers(0, top + 1))
        self.target = int(self.np_random.integers(0, top + 1))
        if self.target == self.position:
            self.target = (self.target + 1) % top
        self._start = self.position

    def _actions(self) -> tuple[str, ...]:
        return self.ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        before = abs(self.target - self.position)
        move = 1 if action == "+" else -1
        self.position = min(max(self.position + move, 0), self.config.max_position)
        after = abs(self.target - self.position)
        if after == 0:
            return StepOutcome("reach", terminated=True, feedback=self._say("reach", "You reached the target."))
        return StepOutcome("closer" if after < before else "not_closer")

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        if not outcome.terminated and self.elapsed_steps >= self.config.max_steps:
            return StepOutcome(outcome.event, truncated=True, feedback=outcome.feedback or self._say("out_of_steps", "Out of steps."))
        return outcome

    def _describe(self) -> str:
        return f"Target: {self.target}\nCurrent: {self.position}"

    def _mission(self) -> str:
        return self._say(
            "mission", "Move the current number to the target number by adding or subtracting one: answer '+' or '-'."
        )

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        look = LOOKS[self.appearance]
        image = Image.new("RGB", (width, height), look.paper)
        draw = ImageDraw.Draw(image)
        face = font(max(8, round(36 * min(height, width) / 300)), bold=True, serif=look.serif)
        draw.text((30 * width / 300, 60 * height / 300), f"Target: {self.target}", fill=look.ink, font=face)
        draw.text((30 * width / 300, 180 * height / 300), f"Current: {self.position}", fill=look.ink, font=face)
        return to_array(image)

    def _frame_key(self) -> tuple[int, int]:
        return self.target, self.position

    def _state_key(self) -> str:
        return f"target={self.target}|current={self.position}"

    def _success(self) -> bool:
        return self.position == self.target

    def _progress(self) -> float:
        start = abs(self.target - self._start)
        return max(0.0, 1.0 - abs(self.target - self.position) / start)

    def _optimal_steps(self) -> int:
        return abs(self.target - self._start)

    def _decision(self) -> Decision:
        # Exact and free: the distance is the plan, and only the move towards the target shortens it. A step
        # costs ~25 us, so the facts of each (move, distance) are one shared Decision (_facts).
        offset = self.target - self.position
        distance = abs(offset)
        left = self.config.max_steps - self.elapsed_steps
        if distance > left:
            return Decision(None, None, reason=f"unsolvable from here: {distance} steps to go, {left} left", features={"distance": distance})
        return _facts(offset)

    def oracle_action(self) -> str:
        return "+" if self.position < self.target else "-"


@functools.cache
def _facts(offset: int) -> Decision:
    """The facts of a position ``offset`` short of the target (past it if negative) with the budget to reach
    it: the move towards it (``oracle_action``'s) is the one optimal action. Shared by every episode and env
    (frozen; the features are never changed); one int argument is its own cache key, a fast look-up."""
    return Decision(("+" if offset > 0 else "-",), abs(offset), features={"distance": abs(offset)})
