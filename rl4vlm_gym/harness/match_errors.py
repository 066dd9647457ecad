"""The match harness's error, :class:`MatchError`, and the loader of a game's named parts that raises it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rl4vlm_gym.games import GameError, load_target
from rl4vlm_gym.harness.runner import RunError

__all__ = ["MatchError", "load_part"]


class MatchError(RunError):
    """A match cannot start or continue; the message says why and what to do."""


def load_part(target: str, what: str) -> Callable[..., Any]:
    """The object a game names by ``"module:attr"`` (its ``folded`` rule, its ``spiel_observation``),
    ``what`` naming it in the error; a :class:`MatchError` when it cannot be loaded."""
    try:
        return load_target(target, what)
    except GameError as err:
        raise MatchError(str(err)) from None
