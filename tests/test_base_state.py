"""VLMEnv protects its own state: a subclass that would overwrite it cannot even be defined (a scan
of its methods' bytecode, on every supported interpreter: 3.11 to 3.13, and 3.14's borrowed loads),
and no code but the base class's own assigns it when it runs (a data descriptor per name)."""

from __future__ import annotations

import copy
import dis
import pickle
from types import SimpleNamespace
from typing import Any

import pytest

from rl4vlm_gym.core import _BASE_STATE, StepOutcome, _self_stores, _stores_on
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


# -- The scan of the bytecode on every supported interpreter ------------------------------------------

SNIPPETS = {
    "plain": "self.{name} = value",
    "augmented": "self.{name} += 1",
    # the owner is found behind the added value, over an attribute load of its own and an even count
    "augmented by an attribute": "self.{name} += value.count",
    "augmented by two instructions": "self.{name} += -value",
    "unpacking": "first, self.{name} = value",
    "chained": "self.{name} = self.other = value",
    "for target": "for self.{name} in value: pass",
    "with target": "with value as self.{name}: pass",
    "annotated": "self.{name}: int = 0",
    "conditional value": "self.{name} = self.other if value else 0",
}


@pytest.mark.parametrize("form", SNIPPETS)
def test_the_scan_sees_every_form_of_assignment_on_this_interpreter(form: str) -> None:
    """A canary for the running Python: CI on a newer interpreter fails here, by form, where its
    compiler emits instructions the scan does not know (extend ``_LOCAL_LOADS`` then)."""
    for name in ("_optimal", "wording"):
        namespace: dict[str, Any] = {}
        exec(f"def method(self, value):\n    {SNIPPETS[form].format(name=name)}\n", namespace)  # noqa: S102
        assert _self_stores(namespace["method"]) == {name}, dis.Bytecode(namespace["method"]).dis()


@pytest.mark.parametrize(
    "source",
    ["other.{name} = value", "self.world.{name} = value", "self.world.{name} += 1", "other.{name} += 1", "self.{name}_copy = value"],
)
def test_the_scan_leaves_other_objects_and_other_names_alone(source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def method(self, other, value):\n    {source.format(name='_optimal')}\n", namespace)  # noqa: S102
    assert _self_stores(namespace["method"]) == set()


def ins(opname: str, argval: Any = None, arg: int | None = None) -> SimpleNamespace:
    """One instruction as ``dis`` reports it (only what the scan reads)."""
    return SimpleNamespace(opname=opname, argval=argval, arg=arg)


# The instructions CPython 3.13 and 3.14 emit for these methods (`python3.13 -m dis`): they cannot
# be compiled here (3.11), so the scan is checked on the streams themselves.
NEWER = {
    # 3.13: def m(self, value): self._optimal = value -- one superinstruction loads both, self on top
    "3.13 plain": ([ins("LOAD_FAST_LOAD_FAST", ("value", "self")), ins("STORE_ATTR", "_optimal")], {"_optimal"}),
    # 3.13: self._elapsed += 1
    "3.13 augmented": (
        [ins("LOAD_FAST", "self"), ins("COPY", 1, 1), ins("LOAD_ATTR", "_elapsed"), ins("LOAD_CONST", 1),
         ins("BINARY_OP", 13, 13), ins("SWAP", 2, 2), ins("STORE_ATTR", "_elapsed")],
        {"_elapsed"},
    ),
    # 3.13: first, self._window = value -- a store and a load in one instruction
    "3.13 unpacking": (
        [ins("LOAD_FAST", "value"), ins("UNPACK_SEQUENCE", 2, 2), ins("STORE_FAST_LOAD_FAST", ("first", "self")), ins("STORE_ATTR", "_window")],
        {"_window"},
    ),
    # 3.13: a name index past 255 puts EXTENDED_ARG between the load and the store
    "3.13 extended arg": (
        [ins("LOAD_FAST_LOAD_FAST", ("value", "self")), ins("EXTENDED_ARG", 1, 1), ins("STORE_ATTR", "_frames")],
        {"_frames"},
    ),
    # 3.14: borrowed loads
    "3.14 plain": ([ins("LOAD_FAST_BORROW_LOAD_FAST_BORROW", ("value", "self")), ins("STORE_ATTR", "_admissible")], {"_admissible"}),
    "3.14 augmented": (
        [ins("LOAD_FAST_BORROW", "self"), ins("COPY", 1, 1), ins("LOAD_ATTR", "_elapsed"), ins("LOAD_SMALL_INT", 1),
         ins("BINARY_OP", 13, 13), ins("SWAP", 2, 2), ins("STORE_ATTR", "_elapsed")],
        {"_elapsed"},
    ),
    # other owners: self loaded first, then the owner on top; an attribute of self; a computed owner
    "3.13 other owner": ([ins("LOAD_FAST_LOAD_FAST", ("self", "other")), ins("STORE_ATTR", "_optimal")], set()),
    "3.13 self.world": (
        [ins("LOAD_FAST_LOAD_FAST", ("value", "self")), ins("LOAD_ATTR", "world"), ins("STORE_ATTR", "_optimal")],
        set(),
    ),
    "3.13 self.world augmented": (
        [ins("LOAD_FAST", "self"), ins("LOAD_ATTR", "world"), ins("COPY", 1, 1), ins("LOAD_ATTR", "_elapsed"),
         ins("LOAD_CONST", 1), ins("BINARY_OP", 13, 13), ins("SWAP", 2, 2), ins("STORE_ATTR", "_elapsed")],
        set(),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", NEWER)
def test_the_scan_reads_the_superinstructions_of_newer_interpreters(case: str) -> None:
    instructions, expected = NEWER[case]
    assert _stores_on(instructions, "self") == expected


# -- The run-time guard --------------------------------------------------------------------------------


def test_an_assignment_the_scan_cannot_see_is_refused_when_it_runs() -> None:
    class Sneaky(ColourNaming):
        def _new_episode(self, config: Any) -> None:
            super()._new_episode(config)
            setattr(self, "_optimal", 3)  # noqa: B010  (what the scan cannot see)

    env = Sneaky()
    with pytest.raises(AttributeError, match=r"Sneaky._new_episode assigns Sneaky._optimal, which is VLMEnv's own state"):
        env.reset(seed=0)


@pytest.mark.parametrize("name", sorted(_BASE_STATE))
def test_no_code_outside_the_base_class_assigns_or_deletes_its_state(name: str) -> None:
    env = ColourNaming(image_size=64)
    env.reset(seed=0)
    before = getattr(env, name)
    with pytest.raises(AttributeError, match=f"assigns ColourNaming.{name}, which is VLMEnv's own state"):
        setattr(env, name, before)
    with pytest.raises(AttributeError, match=f"ColourNaming.{name}, which is VLMEnv's own state"):
        delattr(env, name)
    assert getattr(env, name) is before and env.__dict__[name] is before  # read as a plain attribute


def test_the_base_class_keeps_its_state_and_copies_carry_it() -> None:
    env = ColourNaming(image_size=64)
    env.reset(seed=0)
    env.step(env.oracle_action())
    for twin in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        assert (twin._elapsed, twin._admissible, twin._ended) == (env._elapsed, env._admissible, env._ended)
        twin.reset(seed=1)  # and the copy's own base class writes it
        assert twin._elapsed == 0


def test_a_mixin_or_a_property_setter_assigning_base_state_is_refused_when_the_class_is_defined() -> None:
    class Mixin:
        def _apply(self, action: str) -> StepOutcome:
            self._admissible = ()
            return StepOutcome("right")

    with pytest.raises(TypeError, match=r"Mixin._apply assigns self._admissible"):

        class Mixed(Mixin, ColourNaming):
            pass

    with pytest.raises(TypeError, match=r"Settable.steps assigns self._elapsed"):

        class Settable(ColourNaming):
            @property
            def steps(self) -> int:
                return 0

            @steps.setter
            def steps(self, value: int) -> None:
                self._elapsed = value
