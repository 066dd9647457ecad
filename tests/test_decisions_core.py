"""The core API of decision facts (rl4vlm_gym.core: Decision, VLMEnv._decision, VLMEnv.decision()), on a
one-square test double of VLMEnv: reset first, the facts after the end, JSON conversions, a hook's wrong type."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv


class Steps(VLMEnv):
    """Walk ``goal`` steps forward ("go"), or give up ("quit": the episode ends unsolved); a test double of
    the base class whose ``_decision`` the tests set."""

    LEVELS: ClassVar[tuple[int, ...]] = (2,)
    REWARDS: ClassVar = {"default": {"move": 0.0, "goal": 1.0, "quit": 0.0, "invalid": -1.0}}
    decision_hook: Any = None

    def _new_episode(self, config: int) -> None:
        self.left = config

    def _actions(self) -> tuple[str, ...]:
        return ("go", "quit")

    def _apply(self, action: str) -> StepOutcome:
        if action == "quit":
            return StepOutcome("quit", terminated=True)
        self.left -= 1
        return StepOutcome("goal", terminated=True) if self.left == 0 else StepOutcome("move")

    def _describe(self) -> str:
        return f"{self.left} steps to go"

    def _mission(self) -> str:
        return "Go forward."

    def _render(self) -> np.ndarray:
        return np.zeros((*self.image_size, 3), np.uint8)

    def _frame_key(self) -> Any:
        return self.left

    def _state_key(self) -> str:
        return str(self.left)

    def _success(self) -> bool:
        return self.left == 0

    def _progress(self) -> float:
        return 1.0 - self.left / 2

    def _optimal_steps(self) -> int:
        return 2

    def oracle_action(self) -> str:
        return "go"

    def _decision(self) -> Decision:
        if self.decision_hook is not None:
            return self.decision_hook(self)
        return Decision(("go",), self.left, features={"left": self.left})


def test_decision_needs_a_reset() -> None:
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        Steps().decision()


def test_decision_gives_the_hooks_facts_as_json_data_during_the_episode() -> None:
    env = Steps()
    env.reset(seed=0)
    assert env.decision() == {"optimal_actions": ["go"], "steps_to_go": 2, "values": None, "reason": None, "features": {"left": 2}}
    env.step("go")
    assert env.decision()["steps_to_go"] == 1
    json.dumps(env.decision())  # JSON data as it is


@pytest.mark.parametrize(("last", "success", "steps_to_go"), [("go", True, 0), ("quit", False, -1)])
def test_after_the_end_no_decision_is_left(last: str, success: bool, steps_to_go: int) -> None:
    env = Steps()
    env.reset(seed=0)
    env.step("go")
    env.decision_hook = lambda self: pytest.fail("_decision is not asked once the episode is over")
    _, _, terminated, _, info = env.step(last)
    assert terminated and info["success"] is success
    assert env.decision() == {
        "optimal_actions": None,
        "steps_to_go": steps_to_go,
        "values": None,
        "reason": "the episode is over",
        "features": None,
    }


def test_the_default_hook_says_there_is_no_solver() -> None:
    env = Steps()
    env.decision_hook = lambda self: VLMEnv._decision(self)
    env.reset(seed=0)
    facts = env.decision()
    assert facts["optimal_actions"] is None and facts["steps_to_go"] == -1 and facts["reason"].startswith("no solver")


def test_a_hook_returning_no_decision_is_a_type_error() -> None:
    env = Steps()
    env.decision_hook = lambda self: {"optimal_actions": ["go"], "steps_to_go": 2}
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"Steps\._decision\(\) returned dict, not a Decision"):
        env.decision()


def test_as_dict_turns_tuples_into_lists_none_steps_into_minus_one_and_numbers_into_plain_ones() -> None:
    values = {"go": np.float32(0.5), "quit": 0}
    facts = Decision(("go", "quit"), None, values=values, reason="chance", features={"k": 3, "phase": "x"}).as_dict()
    assert facts == {
        "optimal_actions": ["go", "quit"],
        "steps_to_go": -1,
        "values": {"go": 0.5, "quit": 0.0},
        "reason": "chance",
        "features": {"k": 3, "phase": "x"},
    }
    assert type(facts["values"]["go"]) is float and type(facts["values"]["quit"]) is float
    assert type(Decision(None, np.int64(4)).as_dict()["steps_to_go"]) is int
    assert Decision((), 0).as_dict()["optimal_actions"] == []  # an empty tuple stays a list, not None
    json.dumps(facts)


def test_decisions_own_init_takes_its_fields_in_order_with_their_defaults() -> None:
    # Decision writes its fields in an __init__ of its own (cheaper than the dataclass's): it must
    # stay the dataclass's, field for field.
    import dataclasses
    import inspect

    parameters = list(inspect.signature(Decision).parameters.values())
    fields = dataclasses.fields(Decision)
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert [p.default for p in parameters] == [inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields]
    made = Decision(("a",), 1, {"a": 0.5}, "why", {"objects": 2})
    assert [getattr(made, f.name) for f in fields] == [("a",), 1, {"a": 0.5}, "why", {"objects": 2}]
    assert made == Decision(optimal_actions=("a",), steps_to_go=1, values={"a": 0.5}, reason="why", features={"objects": 2})


def test_a_decision_is_frozen() -> None:
    facts = Decision(("go",), 1)
    with pytest.raises(AttributeError):
        facts.steps_to_go = 2  # type: ignore[misc]
