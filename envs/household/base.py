"""The observation contract both household envs share: ALFWorld's text, our rendered view.

:class:`HouseholdBase` turns a :class:`~rl4vlm_gym.envs.household.view.View` of the true state
into the image and the state in words, and reproduces ALFWorld's text exactly: the welcome text
at reset, each command's feedback, and "Nothing happens." for a command that is not admissible.
A subclass supplies the state (``_view_state``, ``_intro``) and the game rules (the other
:class:`~rl4vlm_gym.core.VLMEnv` hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rl4vlm_gym.core import VLMEnv
from rl4vlm_gym.envs.household.renderer import LOOKS, render
from rl4vlm_gym.envs.household.view import View, describe, without_view
from rl4vlm_gym.envs.household.wording import reword

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["REWARDS", "HouseholdBase"]

REWARDS = {
    # TextWorld's score: 1 when the game is won (ALFWorld, BALROG, ReAct-style harnesses).
    "alfworld": {"step": 0.0, "invalid": 0.0, "success": 1.0, "timeout": 0.0},
    # verl-agent / GiGPO: 10 * won; invalid formats are penalised by its trainer, not the env.
    "verl-agent": {"step": 0.0, "invalid": 0.0, "success": 10.0, "timeout": 0.0},
}


class HouseholdBase(VLMEnv):
    """Image and text of a household from a :class:`View`; see the module docstring."""

    REWARDS = REWARDS
    INVALID_FEEDBACK: ClassVar[str | None] = "Nothing happens."
    MAX_ACTIONS: ClassVar[int] = 512  # a large ALFWorld kitchen lists ~100 admissible commands
    APPEARANCES: ClassVar[tuple[str, ...]] = LOOKS  # held-out: line-art icons, another palette (renderer.py)

    def _view_state(self) -> View:
        """What the agent sees now."""
        raise NotImplementedError

    def _intro(self) -> str:
        """ALFWorld's text at reset: the welcome banner, the room overview and the task."""
        raise NotImplementedError

    def _text(self, feedback: str) -> str:
        # ALFWorld's observation is its feedback alone (the intro at reset). Without text the
        # image shows the view, so only the part of the feedback that the image cannot show stays.
        if self.obs_mode == "image":
            return self._worded(without_view(feedback))
        return self._worded(feedback) if feedback else self._intro()

    def _worded(self, feedback: str) -> str:
        """A feedback of ALFWorld's grammar in the env's wording (``wording.py``)."""
        if self.wording == self.WORDINGS[0]:
            return feedback
        return reword(feedback, lambda key, **fields: self._say(key, "", **fields))

    def _describe(self) -> str:
        return describe(self._view_state())

    def _render(self) -> NDArray[np.uint8]:
        return render(self._view_state(), self.image_size, self.appearance)

    def _frame_key(self) -> View:
        return self._view_state()
