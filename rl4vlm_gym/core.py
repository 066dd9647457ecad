"""The base class of every RL4VLM Gym environment: image + text in, free text out.

:class:`VLMEnv` owns the contract (docs/architecture.md), so an env family only writes its rules:

- the observation ``{"image", "text", "mission", "actions"}`` and what each ``obs_mode`` carries;
- parsing the model's raw text into an admissible action (:mod:`rl4vlm_gym.parsing`);
- invalid actions: the step is consumed, the state is left unchanged, the reason goes into
  ``info["action"]`` and into ``text``, and the reward is the selected variant's ``"invalid"``
  entry. An action is invalid when it does not parse, or when the rules refuse it: ``actions``
  is the vocabulary a model may write, and may hold words the rules refuse in some states (the
  cards games list every token RL4VLM's prompt lists, and refuse a number no unused card is
  worth); ``_apply`` reports a refusal with ``StepOutcome(error=...)``, and the base class pays
  the invalid reward whatever event it names;
- the end of an episode: once a step has returned ``terminated`` or ``truncated``, every further
  ``step`` until ``reset`` is an invalid action ("the episode is over") that changes nothing,
  costs no step, pays the invalid reward and repeats the final ``terminated``/``truncated``
  (Gymnasium leaves this case undefined; invalid actions are reported, never raised);
- ``reward_variant`` tables, the level ladder, ``state_key``, the oracle hook, the ``info``
  fields and the render modes ``rgb_array``, ``ansi`` and ``human``.

The laws an env must keep, which the conformance kit (:mod:`rl4vlm_gym.testing`) checks: every
variant of ``REWARDS`` has the same events; ``info["progress"]`` is in ``[0, 1]``;
``info["success"]`` is false at reset and turns true only on the step that terminates the
episode; equal ``state_key`` values of one seed are the same state (same actions, same success);
``optimal_steps`` is an int (the oracle's exact length) or ``None`` (-1) when no plan exists or
the game is one of chance (``CHANCE``); ``image`` mode puts no state in ``text``; image and text
carry the same information (for ``CONTINUOUS`` envs: the image determines the text) and the
mission does not give the state away.

A subclass sets ``LEVELS`` and ``REWARDS`` and implements the hooks in the "Set these in every
subclass" block of the class body.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rl4vlm_gym import wording as _wording
from rl4vlm_gym.parsing import ActionParser, ParseResult
from rl4vlm_gym.registry import OBS_MODES
from rl4vlm_gym.spaces import Unicode, UnicodeTuple

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rl4vlm_gym.rendering import HumanWindow

__all__ = [
    "FACT_ATTRIBUTES", "NOT_COMPUTED", "REWARD_VOCABULARY", "Decision", "MissingDataError", "ObsDict", "StepOutcome", "VLMEnv",
]  # fmt: skip

ObsDict = dict[str, Any]
"""``{"image": uint8[H, W, 3], "text": str, "mission": str, "actions": tuple[str, ...]}``"""

REWARD_VOCABULARY: Mapping[str, str] = {
    "native": "the reward of the game or benchmark the env reproduces, as its own code pays it "
    "(gym-cards' = RL4VLM's, MiniWorld's, ALFWorld's, WebShop's, Gymnasium's, gym-sokoban's)",
    "sparse": "1 on success, 0 otherwise (for games whose native reward is shaped)",
    "rl4vlm": "RL4VLM's numbers (Zhai et al. 2024)",
    "verl-agent": "verl-agent's numbers (GiGPO, Feng et al. 2025)",
    "vl-dac": "VL-DAC's numbers (Bredis et al. 2025)",
}
"""The names reward variants take across families. A family whose native reward *is* a paper's
keeps the paper's name as the key (gym-cards: ``rl4vlm``) or the benchmark's (``miniworld``,
``alfworld``, ``webshop``); ``native`` and ``default`` then resolve to it (the first variant)."""

_FRAME_CACHE_BYTES = 16 * 2**20  # per env: ~190 frames at 300x300, ~36 at 672x672

NOT_COMPUTED = -2
"""``info["optimal_steps"]`` of an env whose plan is expensive and was not asked for yet (see
:attr:`VLMEnv.optimal_steps`); -1 means undefined, -2 means nobody asked: both ints, so vector envs
batch them."""

FACT_ATTRIBUTES = (
    "DEFAULT_LEVEL", "CHANCE", "HAS_ORACLE", "CONTINUOUS", "FIXED_EPISODES", "EXPENSIVE_PLAN", "NEEDS_DATA",
    "APPEARANCES", "WORDINGS", "MIN_IMAGE_SIDE", "MAX_IMAGE_SIDE", "DEFAULT_IMAGE_SIZE", "NUMBERED_ACTIONS",
    "DEFAULT_ACTION", "INVALID_FEEDBACK", "REWARDS",
)  # fmt: skip
"""The class attributes :meth:`VLMEnv.facts` reports, each under its own name, as the env holds them."""


def _plain_data(value: Any, where: str) -> Any:
    """``value`` as JSON data (tuples as lists, NumPy scalars as numbers), or a ``TypeError`` naming
    ``where``: a fact is sent as it is, never as its ``repr``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{where} has keys that are not str: {sorted(map(repr, value))[:5]}")
        return {k: _plain_data(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_data(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where} is a {type(value).__name__}, not JSON data (str, int, float, bool, None, list, dict)")


# The base class's own state: a subclass that assigns one of these breaks the contract silently
# (e.g. ``self._optimal`` is what ``info["optimal_steps"]`` reports). Two guards keep it: defining a
# class whose methods assign one fails (a scan of their bytecode, below), and so does any
# assignment at run time that is not made by VLMEnv's own methods (a data descriptor per name,
# :class:`_OwnState`), whatever the Python version or the way the name is set (``setattr``, ``exec``).
_BASE_STATE = frozenset(
    {"_started", "_elapsed", "_ended", "_admissible", "_optimal", "_frames", "_window", "appearance", "wording", "_wording_salt"}
)

# Instructions that leave a local variable (a closure's cell included) on top of the stack, by
# CPython version: 3.11-3.12 load one at a time; 3.13's superinstructions load two (or store one
# and load another), the last on top; 3.14 adds borrowed loads. Extend it for a new interpreter:
# tests/test_base_state.py fails on one whose stores it cannot see.
_LOCAL_LOADS = frozenset(
    {
        "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF",  # 3.11-3.12
        "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",  # 3.13
        "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",  # 3.14
    }
)  # fmt: skip
_NO_STACK = frozenset({"EXTENDED_ARG", "CACHE", "NOP", "NOT_TAKEN"})  # prefixes and padding: they move nothing


def _codes(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _local_on_top(instruction: Any) -> str | None:
    """The local variable ``instruction`` leaves on top of the stack, if it loads one."""
    if instruction.opname not in _LOCAL_LOADS:
        return None
    value = instruction.argval  # a (first, second) pair for 3.13's two-variable instructions
    return value[-1] if isinstance(value, tuple) else value


def _store_owner(instructions: Sequence[Any], index: int) -> str | None:
    """The local variable whose attribute the ``STORE_ATTR`` at ``index`` sets, where it can be told
    from the instructions: the one loaded just before (``x.a = v``, ``x.a, y = v``, ``for x.a in``),
    or, in an augmented assignment (``x.a += v``: load x, ``COPY 1``, ``LOAD_ATTR a``, ... ``SWAP 2``,
    ``STORE_ATTR a``), the one loaded before the ``COPY``; ``None`` for any other owner."""
    if index == 0:
        return None
    previous = instructions[index - 1]
    if previous.opname != "SWAP":
        return _local_on_top(previous)
    name = instructions[index].argval
    for j in range(index - 2, 1, -1):
        load, copy = instructions[j], instructions[j - 1]
        if load.opname == "LOAD_ATTR" and load.argval == name and copy.opname == "COPY" and copy.arg == 1:
            return _local_on_top(instructions[j - 2])
    return None


def _stores_on(instructions: Iterable[Any], owner: str, names: Collection[str] = _BASE_STATE) -> set[str]:
    """The ``names`` that ``instructions`` (``dis.Instruction``-like: ``opname``, ``arg``, ``argval``)
    assign as attributes of the local variable ``owner``."""
    steps = [i for i in instructions if i.opname not in _NO_STACK]
    return {
        step.argval
        for k, step in enumerate(steps)
        if step.opname == "STORE_ATTR" and step.argval in names and _store_owner(steps, k) == owner
    }


def _self_stores(function: Any) -> set[str]:
    """The base-state names that ``function`` (or a function nested in it) assigns on its first argument."""
    code = getattr(function, "__code__", None)
    if code is None or not code.co_argcount:
        return set()
    found: set[str] = set()
    for inner in _codes(code):
        if _BASE_STATE.isdisjoint(inner.co_names):  # STORE_ATTR names its attribute in co_names: none here
            continue
        found |= _stores_on(dis.get_instructions(inner), code.co_varnames[0])
    return found


def _functions(value: Any) -> Iterator[Any]:
    """The functions a class attribute holds: a method's, a static or class method's, a property's."""
    if isinstance(value, property):
        yield from (f for f in (value.fget, value.fset, value.fdel) if f is not None)
    else:
        yield getattr(value, "__func__", value)


class _OwnState:
    """One name of VLMEnv's own state, as a data descriptor on the class: anyone reads it (from the
    instance's ``__dict__``: pickling and copying see a plain attribute), and only VLMEnv's own
    methods assign or delete it. The run-time half of the guard: it holds on any Python version,
    whatever compiles the assignment."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        try:
            return env.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(env).__name__!r} object has no attribute {self.name!r}") from None

    def _refuse_foreign(self, env: Any, caller: CodeType) -> None:
        if caller not in _OWN_CODE:
            raise AttributeError(
                f"{caller.co_qualname} assigns {type(env).__name__}.{self.name}, which is VLMEnv's own state "
                f"(the base class keeps {sorted(_BASE_STATE)}); use another name"
            )

    def __set__(self, env: Any, value: Any) -> None:
        self._refuse_foreign(env, sys._getframe(1).f_code)
        env.__dict__[self.name] = value

    def __delete__(self, env: Any) -> None:
        self._refuse_foreign(env, sys._getframe(1).f_code)
        del env.__dict__[self.name]


_OWN_CODE: frozenset[CodeType] = frozenset()  # VLMEnv's methods' code: set once the class is defined


class MissingDataError(FileNotFoundError):
    """An env needs data files that users download themselves (ALFWorld's games, say) and they are
    not where the env looked; the message names the places tried and how to point at the data."""


@dataclass(frozen=True, init=False)
class Decision:
    """What a solver knows of the decision the agent faces now: the unit of decision-level
    evaluation (:meth:`VLMEnv.decision`) and of decision-level credit.

    A field is ``None`` when the env cannot say it exactly, and ``reason`` then says why; a
    decision fact is never a guess.

    Attributes:
        optimal_actions: the admissible actions an optimal policy may take in this state, in the
            order of ``obs["actions"]``. In a deterministic env, exactly the actions after which
            ``steps_to_go`` drops by one; in a game of chance (``CHANCE``), the actions of maximal
            expected return. ``None``: unknown (no solver, or a state no action solves).
        steps_to_go: the fewest steps that solve the episode from this state (0 once solved), so
            at reset it equals :attr:`VLMEnv.optimal_steps`. ``None`` in games of chance and in
            states from which the task cannot be solved any more.
        values: the expected return of each admissible action, playing optimally afterwards, in
            games of chance whose solver computes them (regret in expected value); else ``None``.
        reason: why a field is ``None`` (``"no solver"``, ``"unsolvable from here"``...), else
            ``None``.
        features: features of the state the family declares, for breaking errors down (e.g.
            ``{"objects": 3, "phase": "heat"}``): names to ints or short strings. The harness
            adds its own (steps to go, after an invalid action, the step's place in the episode).
    """

    optimal_actions: tuple[str, ...] | None
    steps_to_go: int | None
    values: Mapping[str, float] | None = None
    reason: str | None = None
    features: Mapping[str, int | str] | None = None

    def __init__(
        self,
        optimal_actions: tuple[str, ...] | None,
        steps_to_go: int | None,
        values: Mapping[str, float] | None = None,
        reason: str | None = None,
        features: Mapping[str, int | str] | None = None,
    ) -> None:
        # the dataclass's own __init__, without its five object.__setattr__ calls (envs make one every step)
        fields = self.__dict__
        fields["optimal_actions"] = optimal_actions
        fields["steps_to_go"] = steps_to_go
        fields["values"] = values
        fields["reason"] = reason
        fields["features"] = features

    def as_dict(self) -> dict[str, Any]:
        """JSON data: ``steps_to_go`` ``None`` becomes -1 (ints batch), tuples become lists."""
        return {
            "optimal_actions": None if self.optimal_actions is None else list(self.optimal_actions),
            "steps_to_go": -1 if self.steps_to_go is None else int(self.steps_to_go),
            "values": None if self.values is None else {a: float(v) for a, v in self.values.items()},
            "reason": self.reason,
            "features": None if self.features is None else dict(self.features),
        }


@dataclass(frozen=True)
class StepOutcome:
    """What applying one parsed action did, as reported by an env's ``_apply``.

    The base class turns it into the step's result: ``reward = REWARDS[variant][event] * scale``,
    ``terminated``/``truncated`` as given, ``feedback`` at the top of ``obs["text"]``, and
    ``error`` into ``info["action"]`` (``valid`` False). ``_end_of_step`` may replace it (a step
    budget running out, say) before any of that happens.

    Events are the env's own names (``"move"``, ``"goal"``, ``"box_on"``...): every event ``_apply``
    or ``_end_of_step`` can return must be a key of every reward table. Two are shared by all envs:
    ``"invalid"``, which the base class itself reports for output that does not parse to an
    admissible action (and which an env returns, with ``error``, for a move its rules refuse), and
    ``"timeout"``, paid by :class:`rl4vlm_gym.wrappers.TimeoutReward` when the card asks for it.

    Attributes:
        event: the key of the reward table (``REWARDS[variant][event]``).
        terminated: the episode reached a terminal state of the game.
        truncated: a rule of the game cut the episode short (not the registered time limit).
        feedback: a sentence for the agent, shown in ``text`` in every obs mode.
        error: set when the game's rules refuse the action; the env must then leave its
            state unchanged, and the step counts as an invalid action: the base class replaces
            ``event`` by ``"invalid"`` (so the variant's invalid reward is paid), ``scale`` by 1
            and clears ``terminated``/``truncated`` (rules that end an episode after any step go
            in ``_end_of_step``); an empty ``feedback`` becomes "Invalid action: <error>.".
        scale: multiplies the reward table's value, for games whose reward shrinks with time
            (MiniWorld pays ``1 - 0.2 * t / T`` on success).
    """

    event: str
    terminated: bool = False
    truncated: bool = False
    feedback: str = ""
    error: str | None = None
    scale: float = 1.0


class VLMEnv(gym.Env[ObsDict, str]):
    """Base class: see the module docstring. Arguments common to every env:

    Args:
        level: the rung of the level ladder (``0..len(LEVELS)-1``); ``None`` for the default.
        obs_mode: ``"image+text"`` (both carry the state), ``"image"`` (the state is only in the
            image; ``text`` holds action feedback) or ``"text"`` (the state is only in ``text``;
            the image is black).
        image_size: ``(height, width)`` of the image in pixels, or one int for a square.
        reward_variant: which reward table to use; see the env's ``REWARDS``.
        action_format: ``"auto"``, ``"json"``, ``"tags"`` or ``"plain"``.
        action_match: ``"strict"`` or ``"lenient"``.
        render_mode: ``"rgb_array"``, ``"ansi"``, ``"human"`` or ``None``.
        appearance: one of the env's ``APPEARANCES`` (default: the first): how the image looks.
        wording: one of the env's ``WORDINGS`` (default: the first, ``"train"``): the words of the
            mission and the feedback (:mod:`rl4vlm_gym.wording`).
        optimal_steps_at_reset: whether ``reset`` computes :attr:`optimal_steps` and reports it in
            ``info["optimal_steps"]``; ``None`` (default) does so unless the env sets
            ``EXPENSIVE_PLAN``.

    Optimal steps:
        :attr:`optimal_steps` is the fewest steps that solve the episode from its start (-1:
        undefined, i.e. unsolvable, a game of chance, or a planner that gave up). It is computed at
        most once per episode, when first asked, and shared with the oracle's plan. Envs whose
        plan is cheap compute it at every reset, as ``info["optimal_steps"]`` has always reported.
        Envs whose plan costs a search (MiniWorld's planner, ALFWorld's Fast Downward) set
        ``EXPENSIVE_PLAN = True``: their ``reset`` then plans only when made with
        ``optimal_steps_at_reset=True``, and otherwise reports :data:`NOT_COMPUTED` (-2) in
        ``info["optimal_steps"]`` until someone reads ``env.unwrapped.optimal_steps`` (the
        harness and the conformance kit do); from then on every ``info`` of the episode carries it.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "ansi", "human"], "render_fps": 4}
    observation_space: spaces.Dict
    action_space: Unicode

    # Set these in every subclass
    LEVELS: ClassVar[tuple[Any, ...]]
    REWARDS: ClassVar[Mapping[str, Mapping[str, float]]]
    """``{variant: {event: reward}}``; every variant has an ``"invalid"`` event. The first variant is
    the default. Name variants from :data:`REWARD_VOCABULARY`."""

    # Set these in some subclasses
    DEFAULT_LEVEL: ClassVar[int] = 0
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (300, 300)
    MIN_IMAGE_SIDE: ClassVar[int] = 64
    MAX_IMAGE_SIDE: ClassVar[int] = 4096
    SYNONYMS: ClassVar[Mapping[str, str]] = {}
    NUMBERED_ACTIONS: ClassVar[bool] = False
    MAX_TEXT_LENGTH: ClassVar[int] = 16384
    MAX_ACTIONS: ClassVar[int] = 256
    MAX_ACTION_LENGTH: ClassVar[int] = 256
    MAX_OUTPUT_LENGTH: ClassVar[int] = 65536
    """Size of the action space; longer outputs are still parsed (and reported, never raised)."""
    CHANCE: ClassVar[bool] = False
    """Outcomes depend on chance during the episode (cards drawn after reset), so no plan is
    fixed at reset: ``_optimal_steps()`` returns ``None`` and the oracle maximises the expected
    return. Otherwise an oracle that solves an episode must report its length as ``optimal_steps``."""
    HAS_ORACLE: ClassVar[bool] = True
    """The env has an oracle (``oracle_action``). Set ``False`` for games no solver plays (Crafter,
    NetHack): ``_optimal_steps()`` then returns ``None`` (-1), ``oracle_action`` is not defined,
    and the kit skips the oracle check (saying so) and moves with admissible actions instead. An
    env that defines ``oracle_action`` may not claim to be oracle-free (the kit refuses it), and
    its docstring says "oracle-free"."""
    CONTINUOUS: ClassVar[bool] = False
    """The state is continuous (a 3-D pose, say): the text describes it at a coarser grain than the
    image (distances in 0.5 m, headings in compass points), so two situations with equal text may
    show different images. The image must still determine the text; the kit checks only that."""
    NEEDS_DATA: ClassVar[bool] = False
    """The env plays files users download themselves; without them ``make`` raises
    :class:`MissingDataError`, and the docs show no example episode."""
    FIXED_EPISODES: ClassVar[bool] = False
    """Episodes replay a fixed set of recorded games (ALFWorld's game files) instead of being
    generated: each game has one start state and its own mission, so the mission may name the start
    state. The kit then skips its check that the mission does not give the state away (which a
    generated env must pass). Needing data (``NEEDS_DATA``) alone does not make episodes fixed."""
    REWARD_ALIASES: ClassVar[Mapping[str, str]] = {}
    """Other accepted ``reward_variant`` names -> a key of ``REWARDS`` (e.g. a paper's name for the
    ``native`` table). ``"default"`` always names the first variant, and ``"native"`` does too
    unless ``REWARDS`` or these aliases define it."""
    EXPENSIVE_PLAN: ClassVar[bool] = False
    """Computing ``optimal_steps`` costs a search worth avoiding at every reset: the env then plans
    only when asked (see "Optimal steps" above)."""
    INVALID_FEEDBACK: ClassVar[str | None] = None
    """The feedback of an invalid action, for envs that reproduce a suite's exact text (ALFWorld's
    "Nothing happens."); by default the feedback names the parser's error."""
    APPEARANCES: ClassVar[tuple[str, ...]] = ("default",)
    """Looks the image can be drawn in (the ``appearance`` argument), the first the default. Another
    appearance changes only pixels (textures, colours, lighting, fonts), never the text, the rules
    or what a seed draws: the ``visual`` transfer axis. ``"held-out"`` names a look that no level
    and no randomization of the env shows, for evaluating what training never saw."""
    WORDINGS: ClassVar[tuple[str, ...]] = (_wording.TRAIN,)
    """Wordings the mission and the feedback can be said in (the ``wording`` argument), the first,
    ``"train"``, the env's own text. Another wording (``"held-out"``: templates no training text
    uses) changes only the words of the mission and of the feedback sentences, never the images,
    the rules, the actions, the state or what a seed draws: the ``wording`` transfer axis. An env
    says each such sentence through :meth:`_say`, and its family's templates are in ``PHRASES``."""
    PHRASES: ClassVar[Mapping[str, _wording.Phrasebook]] = {}
    """``{wording: {key: phrasings}}`` for every wording but the first (:mod:`rl4vlm_gym.wording`);
    the base class's ``"invalid"`` feedback falls back on :data:`rl4vlm_gym.wording.INVALID`."""
    DEFAULT_ACTION: ClassVar[str | None] = None
    """The action BALROG's protocol plays in place of an output that is not a valid action
    (:class:`~rl4vlm_gym.wrappers.BalrogActions`; BabyAI's "go forward", Crafter's "Noop"). ``None``:
    an invalid output stays an invalid step, as everywhere else in this contract."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a subclass that would overwrite the base class's own state (:data:`_BASE_STATE`):
        as a class attribute, or by assigning ``self.<name>`` in any of its methods or its mixins'.
        Checked once, when the class is defined; an assignment the scan cannot see (``setattr``,
        code compiled later) is refused when it runs (:class:`_OwnState`)."""
        super().__init_subclass__(**kwargs)
        # the class and the mixins it brings in before VLMEnv (a VLMEnv subclass was checked when defined)
        mine = [cls, *(k for k in cls.__mro__[1:] if not issubclass(k, VLMEnv) and k not in VLMEnv.__mro__)]
        for klass in mine:
            for name, value in vars(klass).items():
                if name in _BASE_STATE:
                    raise TypeError(f"{klass.__qualname__} defines {name!r}, which is VLMEnv's own state; rename it")
                clobbered = set().union(*(_self_stores(f) for f in _functions(value)))
                if clobbered:
                    raise TypeError(
                        f"{klass.__qualname__}.{name} assigns self.{sorted(clobbered)[0]}, which is VLMEnv's own state "
                        f"(the base class keeps {sorted(_BASE_STATE)}); use another name"
                    )

    def __init__(
        self,
        *,
        level: int | None = None,
        obs_mode: str = "image+text",
        image_size: int | tuple[int, int] | None = None,
        reward_variant: str | None = None,
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        optimal_steps_at_reset: bool | None = None,
        appearance: str | None = None,
        wording: str | None = None,
    ) -> None:
        self.level = self._check_level(self.DEFAULT_LEVEL if level is None else level, "level")
        if appearance is not None and appearance not in self.APPEARANCES:
            raise ValueError(f"appearance={appearance!r} is unknown for {type(self).__name__}; choose one of {self.APPEARANCES}")
        self.appearance = self.APPEARANCES[0] if appearance is None else appearance
        if wording is not None and wording not in self.WORDINGS:
            raise ValueError(f"wording={wording!r} is unknown for {type(self).__name__}; choose one of {self.WORDINGS}")
        self.wording = self.WORDINGS[0] if wording is None else wording
        self._wording_salt = 0
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode={obs_mode!r} is unknown; choose one of {OBS_MODES}")
        self.obs_mode = obs_mode
        self.image_size = self._check_image_size(self.DEFAULT_IMAGE_SIZE if image_size is None else image_size)
        self.reward_variant = self._resolve_reward_variant(reward_variant)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is unknown; choose one of {self.metadata['render_modes']} or None"
            )
        self.render_mode = render_mode
        if optimal_steps_at_reset is not None and not isinstance(optimal_steps_at_reset, bool):
            raise ValueError(f"optimal_steps_at_reset={optimal_steps_at_reset!r} must be True, False or None")
        self.optimal_steps_at_reset = not self.EXPENSIVE_PLAN if optimal_steps_at_reset is None else optimal_steps_at_reset
        self.parser = ActionParser(
            format=action_format,  # type: ignore[arg-type]  # validated by ActionParser
            match=action_match,  # type: ignore[arg-type]
            numbered=self.NUMBERED_ACTIONS,
            synonyms=dict(self.SYNONYMS),
        )
        height, width = self.image_size
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (height, width, 3), np.uint8),
                "text": Unicode(self.MAX_TEXT_LENGTH),
                "mission": Unicode(self.MAX_TEXT_LENGTH),
                "actions": UnicodeTuple(self.MAX_ACTIONS, self.MAX_ACTION_LENGTH),
            }
        )
        self.action_space = Unicode(self.MAX_OUTPUT_LENGTH)
        self._started = False
        self._ended: tuple[bool, bool] | None = None  # (terminated, truncated) once the episode ended
        self._elapsed = 0
        self._admissible: tuple[str, ...] = ()
        self._optimal = NOT_COMPUTED
        self._frames: dict[Any, NDArray[np.uint8]] = {}
        self._window: HumanWindow | None = None

    # Set these in every subclass ------------------------------------------------------------------

    def _new_episode(self, config: Any) -> None:
        """Draw a new episode for the level ``config`` (``LEVELS[self.level]``) using only
        ``self.np_random``, so the seed decides it in any process. Set every attribute the other
        hooks read; never the base class's own (``__init_subclass__`` refuses it)."""
        raise NotImplementedError

    def _actions(self) -> tuple[str, ...]:
        """The actions the model may write now, without repeats. It may be a fixed vocabulary
        that holds words the rules refuse in this state (``_apply`` then sets ``error``)."""
        raise NotImplementedError

    def _apply(self, action: str) -> StepOutcome:
        """Apply an admissible action; if the rules refuse it, change nothing and set ``error``.
        Never called after the episode ended (the base class refuses those steps)."""
        raise NotImplementedError

    def _describe(self) -> str:
        """The state in words: the same information the image shows."""
        raise NotImplementedError

    def _mission(self) -> str:
        """The episode's instruction (no state information the image alone should carry)."""
        raise NotImplementedError

    def _render(self) -> NDArray[np.uint8]:
        """Draw the state as ``uint8[H, W, 3]`` at ``self.image_size``."""
        raise NotImplementedError

    def _state_key(self) -> str:
        """A canonical key of the state as the acting player may know it: equal states give equal
        keys, different states different keys (GiGPO groups steps by it; the kit checks invalid
        actions leave it as it was). With hidden information (cards, dice, a partner's view) it is
        the player's information state, never what the player cannot see."""
        raise NotImplementedError

    def _success(self) -> bool:
        """Whether the task has been accomplished: false at reset, true from the step that
        accomplishes it, which must terminate the episode."""
        raise NotImplementedError

    def _progress(self) -> float:
        """How far the task is accomplished, in ``[0, 1]``."""
        raise NotImplementedError

    def _optimal_steps(self) -> int | None:
        """Fewest steps that solve the episode from its start, as an ``int`` (the oracle takes
        exactly that many); ``None`` if undefined (unsolvable, or a game of chance: see
        ``CHANCE``). ``info["optimal_steps"]`` reports ``None`` as -1 so that vector envs can
        batch it as ints. Called at most once per episode: right after ``_new_episode``
        unless the env sets ``EXPENSIVE_PLAN``, in which case it may come after steps and must
        still answer for the episode's start."""
        raise NotImplementedError

    def _decision(self) -> Decision:
        """The decision facts of the current state (see :class:`Decision`), for an env whose
        solver can say them: called only between ``reset`` and the end of an episode, at every
        step of an evaluated episode, so keep it cheap (reuse the oracle's plan; the cost per
        family is in ``benchmarks/decision_cost.py``). The default says there is no solver."""
        return Decision(None, None, reason="no solver: this env does not compute decision facts")

    def oracle_action(self) -> str:
        """The oracle's next action from the true state, as a plain admissible action. Played from
        the reset, it solves every solvable episode in exactly ``optimal_steps`` (the kit checks).
        Oracle-free envs (``HAS_ORACLE = False``) leave it undefined."""
        if not self.HAS_ORACLE:
            raise NotImplementedError(f"{type(self).__name__} is oracle-free (HAS_ORACLE = False): it has no oracle_action")
        raise NotImplementedError

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        """Apply rules that end an episode after any step, valid or not (e.g. a step budget).

        Called after ``_apply`` (or after the base class built the ``"invalid"`` outcome of
        unparseable output), with ``self.elapsed_steps`` already counting this step; return the
        outcome to report, changed or not."""
        return outcome

    def _frame_key(self) -> Any:
        """A hashable key that fully determines the image, so frames of equal keys are reused.

        It must include everything ``_render`` draws or reads: every piece of state shown
        (positions, contents, the agent's facing or last move if drawn), the episode's fixed layout
        (walls, map, colours), any render option, and ``self.image_size``. Equal keys must give
        byte-identical images, across episodes too (the cache lives as long as the env): never key
        on ``id()`` of objects, whose ids are reused. ``None`` (the default) disables caching."""
        return None

    def _text(self, feedback: str) -> str:
        """The observation's ``text``: the step's feedback, then the state in words unless
        ``obs_mode`` is ``"image"``. Envs that reproduce another suite's exact text override it."""
        text = [feedback] if feedback else []
        if self.obs_mode != "image":
            text.append(self._describe())
        return "\n".join(text)

    def _view(self) -> NDArray[np.uint8]:
        """What ``render()`` shows in ``rgb_array`` and ``human`` modes: the observed frame. An env
        that offers other views (a top-down map, say) overrides it; ``render()`` then returns
        that view, of any size, and need not equal ``obs["image"]`` (the kit compares the two
        only when ``_view`` is not overridden)."""
        return self._frame()

    # Gymnasium API --------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[ObsDict, dict[str, Any]]:
        """Start an episode; ``options={"level": k}`` sets the level from this episode on."""
        super().reset(seed=seed)
        unknown = sorted(set(options or {}) - {"level"})
        if unknown:
            raise ValueError(f"reset got unknown options {unknown}; the supported option is 'level'")
        if options and "level" in options:
            self.level = self._check_level(options["level"], 'options["level"]')
        if self.wording != self.WORDINGS[0]:  # read before the episode draws, drawing nothing
            self._wording_salt = _wording.salt(self.np_random)
        self._new_episode(self.LEVELS[self.level])
        self._started = True
        self._ended = None
        self._elapsed = 0
        self._admissible = self._actions()
        self.action_space.vocabulary = self._admissible
        self._optimal = NOT_COMPUTED
        if self.optimal_steps_at_reset:
            self._optimal = self.optimal_steps
        self._render_human()
        return self._observation(""), self._info(None)

    def step(self, action: str) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        """Parse ``action`` (any text), apply it if admissible, and report what happened.

        After the episode ended (a step returned ``terminated`` or ``truncated``), every step until
        ``reset`` is an invalid action that changes nothing: see the module docstring."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        result = self.parser.parse(action, self._admissible)
        if self._ended is not None:
            return self._after_the_end(result)
        if result.parsed is None:
            outcome = StepOutcome("invalid", feedback=self._invalid_feedback(result.error))
        else:
            outcome = self._apply(result.parsed)
            if outcome.error is not None:  # refused by the rules: an invalid action, whatever the event
                result = result.rejected(outcome.error)
                feedback = outcome.feedback or self._invalid_feedback(outcome.error)
                outcome = StepOutcome("invalid", feedback=feedback, error=outcome.error)
        self._elapsed += 1
        outcome = self._end_of_step(outcome)
        self._admissible = self._actions()
        self.action_space.vocabulary = self._admissible
        reward = self._reward(outcome.event) * outcome.scale
        if outcome.terminated or outcome.truncated:
            self._ended = (outcome.terminated, outcome.truncated)
        self._render_human()
        return self._observation(outcome.feedback), reward, outcome.terminated, outcome.truncated, self._info(result)

    def _after_the_end(self, result: ParseResult) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        error = "the episode is over; call reset()"
        feedback = self._invalid_feedback(error)
        terminated, truncated = self._ended or (False, False)
        return self._observation(feedback), self._reward("invalid"), terminated, truncated, self._info(result.rejected(error))

    def _invalid_feedback(self, error: str | None) -> str:
        return self._say("invalid", self.INVALID_FEEDBACK or f"Invalid action: {error}. Nothing happened.", error=error)

    def _say(self, key: str, train: str, **fields: Any) -> str:
        """A sentence of the mission or the feedback in the env's wording: ``train`` (the env's own
        text) in the first wording, else the episode's phrasing of template ``key`` of
        ``PHRASES[wording]`` filled with ``fields`` (see :mod:`rl4vlm_gym.wording`)."""
        if self.wording == self.WORDINGS[0]:
            return train
        book = self.PHRASES.get(self.wording, {})
        if key == "invalid" and key not in book:
            book = {**book, key: _wording.INVALID}
        return _wording.say(book, key, self._wording_salt, **fields)

    def _reward(self, event: str) -> float:
        table = self.REWARDS[self.reward_variant]
        if event not in table:
            raise KeyError(
                f"{type(self).__name__}: the event {event!r} has no reward in REWARDS[{self.reward_variant!r}] "
                f"(it has {sorted(table)}); every reward variant needs every event"
            )
        return float(table[event])

    def render(self) -> NDArray[np.uint8] | str | None:
        """``rgb_array``: the frame; ``ansi``: mission, state and actions as text; ``human``: a window."""
        if not self._started or self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            actions = ", ".join(self._admissible)
            return f"Mission: {self._mission()}\n{self._describe()}\nActions: {actions}\n"
        if self.render_mode == "human":
            self._render_human()
            return None
        return self._view()

    def close(self) -> None:
        """Close the human window if one is open; safe to call twice."""
        if self._window is not None:
            self._window.close()
            self._window = None

    # Helpers --------------------------------------------------------------------------------------

    def instruction_prompt(self) -> str | None:
        """The episode's opening instructions in BALROG's protocol (its env's
        ``get_instruction_prompt``: the game, the actions and what they do, tips), read after
        ``reset``; ``None`` (the default): the ``balrog`` prompt template writes generic ones from
        the mission and the actions."""
        return None

    @property
    def admissible_actions(self) -> tuple[str, ...]:
        """The admissible actions of the current state."""
        return self._admissible

    @property
    def optimal_steps(self) -> int:
        """Fewest steps that solve this episode from its start, -1 if undefined; computed when
        first asked, once per episode (see "Optimal steps" in the class docstring)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before reading optimal_steps")
        if self._optimal == NOT_COMPUTED:
            optimal = self._optimal_steps()
            self._optimal = -1 if optimal is None else optimal  # not int(): the kit must see a float
        return self._optimal

    def decision(self) -> dict[str, Any]:
        """The decision facts of the current state as JSON data (:meth:`Decision.as_dict`): the
        optimal actions, the steps to go, the actions' values, and why any is missing. The harness
        records them before every step, the kit checks them against the oracle's play, and the
        server sends them as they are.

        After the episode ended there is no decision left: ``steps_to_go`` is 0 if it succeeded,
        -1 otherwise, and ``optimal_actions`` is ``None``."""
        own = self.__dict__  # what the _started and _ended descriptors read, read once (the harness asks every step)
        if not own.get("_started"):
            raise gym.error.ResetNeeded("call reset() before decision()")
        if own["_ended"] is not None:
            over = Decision(None, 0 if self._success() else None, reason="the episode is over")
            return over.as_dict()
        found = self._decision()
        if not isinstance(found, Decision):
            raise TypeError(f"{type(self).__name__}._decision() returned {type(found).__name__}, not a Decision")
        return found.as_dict()

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in this episode, invalid ones included."""
        return self._elapsed

    # Inspection: what the conformance kit, the server and rl4vlm/Remote-v0 read ---------------------

    def facts(self) -> dict[str, Any]:
        """The env's rules as JSON data, as they hold for this env now (a flag may depend on the
        level: FrozenLake's ``CHANCE`` is true on slippery levels only).

        Keys: ``name`` (the class), ``levels`` (how many), ``level``, ``obs_mode``,
        ``reward_variant``, each attribute of :data:`FACT_ATTRIBUTES` under its own name
        (``CHANCE``, ``HAS_ORACLE``, ``REWARDS``...; tuples as lists), and three facts of the
        class's code: ``defines_oracle_action``, ``says_oracle_free`` (its docstring says
        "oracle-free") and ``view_overridden`` (``render()`` shows another view than the
        observation). The server sends them as they are (``state["facts"]``) and
        ``rl4vlm/Remote-v0`` returns the served env's, so the kit reads one API either way.

        Raises:
            TypeError: a fact is not JSON data (say, a class attribute holding an object).
        """
        cls = type(self)
        facts: dict[str, Any] = {
            "name": cls.__name__,
            "levels": len(self.LEVELS),
            "level": self.level,
            "obs_mode": self.obs_mode,
            "reward_variant": self.reward_variant,
            **{name: getattr(self, name) for name in FACT_ATTRIBUTES},
            "defines_oracle_action": cls.oracle_action is not VLMEnv.oracle_action,
            "says_oracle_free": "oracle-free" in (cls.__doc__ or ""),
            "view_overridden": cls._view is not VLMEnv._view,
        }
        return _plain_data(facts, f"{cls.__name__}.facts()")

    @property
    def started(self) -> bool:
        """Whether an episode has started (``reset`` was called): :meth:`describe` needs one."""
        return self._started

    def describe(self) -> str:
        """The current state in words: the same information the image shows (``obs["text"]``
        without the step's feedback, in every obs mode)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before describe()")
        return self._describe()

    def fresh_render(self) -> NDArray[np.uint8]:
        """The current state drawn anew, past the frame cache (the kit checks that the observed,
        possibly cached, frame equals it)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before fresh_render()")
        return self._render()

    @property
    def computed_optimal_steps(self) -> int | None:
        """:attr:`optimal_steps` if this episode has computed it, else ``None``: reading it never plans
        (the server reports a plan without starting an ``EXPENSIVE_PLAN`` search)."""
        return None if not self._started or self._optimal == NOT_COMPUTED else self._optimal

    def _observation(self, feedback: str) -> ObsDict:
        if self.obs_mode == "text":
            image = np.zeros((*self.image_size, 3), np.uint8)  # the "image" space's shape
        else:
            image = self._frame()
        return {"image": image, "text": self._text(feedback), "mission": self._mission(), "actions": self._admissible}

    def _info(self, result: ParseResult | None) -> dict[str, Any]:
        info: dict[str, Any] = {} if result is None else {"action": result.as_info()}
        info.update(
            success=bool(self._success()),
            progress=float(self._progress()),
            level=self.level,
            state_key=self._state_key(),
            optimal_steps=self._optimal,
        )
        return info

    def _frame(self) -> NDArray[np.uint8]:
        key = self._frame_key()
        if key is None:
            return self._render()
        frame = self._frames.pop(key, None)  # re-inserted below: the dict is kept in LRU order
        if frame is None:
            frame = self._render()
            while self._frames and (len(self._frames) + 1) * frame.nbytes > _FRAME_CACHE_BYTES:
                del self._frames[next(iter(self._frames))]
        self._frames[key] = frame
        return frame.copy()

    def _render_human(self) -> None:
        if self.render_mode != "human":
            return
        if self._window is None:
            from rl4vlm_gym.rendering import HumanWindow

            self._window = HumanWindow(type(self).__name__, self.metadata["render_fps"])
        self._window.show(self._view())

    def _resolve_reward_variant(self, name: str | None) -> str:
        """The key of ``REWARDS`` that ``name`` (a variant, an alias or ``None``) selects."""
        variants = tuple(self.REWARDS)
        if name is None:
            return variants[0]
        aliases = {"default": variants[0], "native": variants[0], **self.REWARD_ALIASES}
        resolved = name if isinstance(name, str) and name in self.REWARDS else aliases.get(name) if isinstance(name, str) else None
        if resolved is None or resolved not in self.REWARDS:
            raise ValueError(
                f"reward_variant={name!r} is unknown; choose one of {variants} (or the aliases {sorted(aliases)})"
            )
        return resolved

    def _check_level(self, level: Any, name: str) -> int:
        top = len(self.LEVELS) - 1
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= top:
            raise ValueError(f"{name}={level!r} is not a level of {type(self).__name__}; choose an int in 0..{top}")
        return int(level)

    def _check_image_size(self, size: Any) -> tuple[int, int]:
        if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
            size = (int(size), int(size))
        lo, hi = self.MIN_IMAGE_SIDE, self.MAX_IMAGE_SIDE
        if (
            not isinstance(size, (tuple, list))
            or len(size) != 2
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and lo <= s <= hi for s in size)
        ):
            raise ValueError(
                f"image_size={size!r} is not valid for {type(self).__name__}: give (height, width) "
                f"with each side an int in {lo}..{hi}"
            )
        return int(size[0]), int(size[1])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_frames"] = {}  # a cache, rebuilt on demand
        state["_window"] = None  # a live window cannot cross processes
        return state


_OWN_CODE = frozenset(code for value in vars(VLMEnv).values() for f in _functions(value) if hasattr(f, "__code__") for code in _codes(f.__code__))
for _name in _BASE_STATE:
    setattr(VLMEnv, _name, _OwnState(_name))
del _name
