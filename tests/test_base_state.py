"""VLMEnv protects its own state: a subclass that would overwrite it cannot even be defined."""

from __future__ import annotations

from typing import Any

import pytest

from rl4vlm_gym.core import _BASE_STATE, StepOutcome
from rl4vlm_gym.envs.probe.colour import ColourNaming


def test_a_method_assigning_base_state_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match=r"Clobber._new_episode assigns self._optimal, which is VLMEnv's own state"):

        class Clobber(ColourNaming):
            def _new_episode(self, config: Any) -> None:
                super()._new_episode(config)
                self._optimal = 3


@pytest.mark.parametrize("name", sorted(_BASE_STATE))
def test_every_base_name_is_guarded_even_in_nested_functions_and_under_another_self_name(name: str) -> None:
    source = (
        "class Sub(ColourNaming):\n"
        "    def _apply(me, action):\n"
        "        def later():\n"
        f"            me.{name} = None\n"
        "        later()\n"
        "        return StepOutcome('right')\n"
    )
    with pytest.raises(TypeError, match=f"assigns self.{name}"):
        exec(source, {"ColourNaming": ColourNaming, "StepOutcome": StepOutcome})  # noqa: S102


def test_a_class_attribute_of_a_base_name_is_refused() -> None:
    with pytest.raises(TypeError, match="defines '_frames'"):

        class Shadow(ColourNaming):
            _frames: dict = {}  # noqa: RUF012


def test_subclasses_keep_their_own_names_and_other_objects_attributes() -> None:
    class World:
        _admissible: tuple[str, ...] = ()

    class Fine(ColourNaming):
        def _new_episode(self, config: Any) -> None:
            super()._new_episode(config)
            self.optimal_hint = 1  # its own name
            self.world = World()
            self.world._admissible = ("a",)  # another object's attribute of the same name

    env = Fine()
    env.reset(seed=0)
    assert env.world._admissible == ("a",) and env.optimal_hint == 1
