"""The procedural household envs: ALFWorld's tasks in seeded houses, with a rendered view.

:class:`Household` draws a house and a task from the env's RNG (``generator.py``), plays it by
ALFWorld's rules and text (``world.py``), checks the goal (``goals.py``) and solves it with the
oracle planner (``oracle.py``). ``rl4vlm/Household-v0`` draws its task type from the level; one
subclass per task type fixes it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rl4vlm_gym.core import Decision, StepOutcome
from rl4vlm_gym.envs.household.base import HouseholdBase
from rl4vlm_gym.envs.household.generator import generate
from rl4vlm_gym.envs.household.levels import LEVELS, HouseLevel
from rl4vlm_gym.envs.household.oracle import Lookahead, plan
from rl4vlm_gym.envs.household.view import View, overview
from rl4vlm_gym.envs.household.wording import PHRASES, WORDINGS
from rl4vlm_gym.envs.household.world import COMMAND_STYLES, House

__all__ = ["Clean", "Cool", "Heat", "Household", "Look", "PickPlace", "PickTwo"]

_TRIES = 100  # houses drawn before a level is declared unsatisfiable (none has needed a second)


class Household(HouseholdBase):
    TASK: ClassVar[str | None] = None
    LEVELS = LEVELS
    DEFAULT_LEVEL = 2
    WORDINGS = WORDINGS
    PHRASES = PHRASES

    def __init__(self, *, commands: str = "move", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if commands not in COMMAND_STYLES:
            raise ValueError(f"commands={commands!r} is unknown; choose one of {COMMAND_STYLES}")
        self.commands = commands
        self.house: House | None = None
        self._plan: list[str] | None = None
        self._shortest = -1
        self._decided: dict[str, Decision] = {}  # the facts of the episode's states, by key (a few dozen)
        self._lookahead: Lookahead | None = None  # the episode's memoized distances (oracle.Lookahead)

    # VLMEnv hooks ---------------------------------------------------------------------------------

    def _new_episode(self, config: HouseLevel) -> None:
        for _ in range(_TRIES):
            self.house = generate(config, self.TASK, self.np_random, self.commands)
            self._lookahead = Lookahead(self.house)
            self._plan = self._lookahead.plan(self.house)  # and the first decision's distances, in one pass
            if self._plan:
                self._shortest = len(self._plan)
                self._decided = {}
                return
        raise RuntimeError(f"{type(self).__name__}: no solvable house in {_TRIES} draws at level {self.level}")

    def _actions(self) -> tuple[str, ...]:
        return tuple(self._house.admissible())

    def _apply(self, action: str) -> StepOutcome:
        house = self._house
        if self._plan and action == self._plan[0]:
            self._plan.pop(0)
        else:
            self._plan = None
        feedback = house.apply(action)
        if house.goal.satisfied(house):
            return StepOutcome("success", terminated=True, feedback=feedback)
        return StepOutcome("step", feedback=feedback)

    def _view_state(self) -> View:
        return self._house.view()

    def _intro(self) -> str:
        house, mission = self._house, self._mission()
        train = f"-= Welcome to TextWorld, ALFRED! =-\n\n{overview(house.listing)}\n\nYour task is to: {mission}"
        return self._say("intro", train, overview=self._worded(overview(house.listing)), mission=mission)

    def _mission(self) -> str:
        goal = self._house.goal
        return self._say(f"goal_{goal.task}", goal.sentence(), obj=goal.obj, recep=goal.recep, lamp=goal.lamp)

    def _state_key(self) -> str:
        return self._house.key()

    def _success(self) -> bool:
        return self._house.goal.satisfied(self._house)

    def _progress(self) -> float:
        return self._house.goal.progress(self._house)

    def _optimal_steps(self) -> int | None:
        return self._shortest

    def _decision(self) -> Decision:
        """Exact: ``steps_to_go`` is the oracle's shortest plan's length, and the optimal commands are
        those after which it is one shorter (``oracle.optimal_commands``), the oracle's next command
        among them without a search while the agent follows its plan. The distances come from the
        episode's :class:`~rl4vlm_gym.envs.household.oracle.Lookahead` (each state's enumeration made
        once: the lookahead of one decision makes the next state's), and the facts of each state of
        the episode are kept (an invalid command, ``look`` or ``examine`` changes nothing, and agents
        come back to where they were)."""
        house, lookahead = self.house, self._lookahead
        if house is None or lookahead is None:
            raise RuntimeError("call reset() first")
        key = house.key()
        decision = self._decided.get(key)
        if decision is None:
            optimal, steps, features = lookahead.decide(house, self._plan)
            if steps < 0:
                decision = Decision(None, None, None, "unsolvable from here", features)
            else:
                decision = Decision(optimal, steps, None, None, features)  # positional: a little cheaper, every step
            self._decided[key] = decision
        return decision

    def oracle_action(self) -> str:
        if not self._plan:
            self._plan = plan(self._house) or ["look"]  # "look" once won: any admissible command
        return self._plan[0]

    @property
    def _house(self) -> House:
        if self.house is None:
            raise RuntimeError("call reset() first")
        return self.house


class PickPlace(Household):
    TASK = "pick_and_place_simple"


class Look(Household):
    TASK = "look_at_obj_in_light"


class Clean(Household):
    TASK = "pick_clean_then_place_in_recep"


class Heat(Household):
    TASK = "pick_heat_then_place_in_recep"


class Cool(Household):
    TASK = "pick_cool_then_place_in_recep"


class PickTwo(Household):
    TASK = "pick_two_obj_and_place"


_TASK_TEXT = {
    None: "a task of one of ALFWorld's six types, drawn from those the level allows",
    "pick_and_place_simple": "put an object of a named kind in a receptacle of a named kind",
    "look_at_obj_in_light": "hold an object of a named kind under a lamp that is switched on",
    "pick_clean_then_place_in_recep": "clean an object at a sink basin, then put it in a receptacle",
    "pick_heat_then_place_in_recep": "heat an object in a microwave, then put it in a receptacle",
    "pick_cool_then_place_in_recep": "cool an object in a fridge, then put it in a receptacle",
    "pick_two_obj_and_place": "put two objects of a named kind in the same receptacle",
}


def _doc(task: str | None) -> str:
    return f"""A procedural household: {_TASK_TEXT[task]}, by ALFWorld's rules and in its words.

    ## Description
    Each seed draws a house (ALFRED's kitchens, living rooms, bedrooms and bathrooms, with their
    receptacles and objects) and a task built from ALFWorld's goal templates, then plays it by the
    preconditions of ALFWorld's PDDL domain with the feedback of its TextWorld grammar: a policy
    trained here meets the same commands and sentences in real ALFWorld games
    (``rl4vlm/ALFWorld-v0``). Every house is solvable by construction, and the oracle's plan,
    shortest from the start, gives ``optimal_steps``.

    Decisions: exact in every state. ``steps_to_go`` is the length of the oracle's shortest plan
    from the current state, ``optimal_actions`` the commands after which it is one command shorter
    (several when orders tie); features ``task``, ``phase`` (``find``, ``free`` the hands, ``clean``
    / ``heat`` / ``cool``, ``put``, ``light``) and ``left`` (objects still to place).

    ## Observation
    - ``image``: a drawing of what the agent sees: the room's receptacles before the first
      ``go to``; then the receptacle it stands at, open or closed, what is on or in it, what the
      agent holds, the states clean / hot / cold / sliced / on, and a lamp's light.
    - ``text``: ALFWorld's own text, verbatim: the welcome text, the room and the task at reset,
      then each command's feedback ("You arrive at countertop 1. On the countertop 1, you see a
      mug 1.", "Nothing happens."). In ``image`` mode, what the image shows is cut from it
      ("You arrive at countertop 1."). ALFWorld's text tells the contents of a place on arrival
      and what is held on ``inventory``; the image shows both at every step.
    - ``mission``: the task ("put a clean mug in coffeetable.").
    - ``actions``: ALFWorld's admissible commands, sorted as TextWorld sorts them.

    ## Actions
    ALFWorld's commands: ``go to R``, ``open R``, ``close R``, ``take O from R``, ``move O to R``
    (``put O in/on R`` with ``commands="put"``), ``heat/cool/clean O with R``, ``use L``,
    ``slice O with K``, ``examine X``, ``look``, ``inventory`` and ``help``. A command that is not
    admissible gets ALFWorld's "Nothing happens.", changes nothing, and is reported in
    ``info["action"]``.

    ## Rewards
    ``alfworld``: 1 when the task is accomplished (TextWorld's score), else 0. ``verl-agent``:
    10 on success (verl-agent / GiGPO's ``10 * won``). Invalid commands: 0 in both (verl-agent
    penalises invalid formats in its trainer).

    ## Levels
    Rungs grow the house (rooms, receptacles, objects), add look-alike distractors, close the
    containers and hide the targets in them, and widen the task types ``Household-v0`` draws.
    Level 2 is the size of an ALFWorld room.

    ## Arguments
    The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
    (default 300x300, ALFWorld's THOR frame size), ``reward_variant`` (``alfworld``,
    ``verl-agent``), ``action_format``, ``action_match``, ``render_mode``, ``appearance``
    (``default``; ``held-out``: receptacles and objects drawn as line art and every colour turned
    150 degrees round the hue circle at equal luma, never used in training: the ``visual`` transfer
    axis), ``wording`` (``train``:
    ALFWorld's sentences; ``held-out``: the task, the welcome text and every feedback said in
    sentence structures ALFWorld never uses, three phrasings of each, the seed picking one; the
    house, the commands and the image stay the same); and ``commands``: ``"move"`` (ALFWorld 0.4
    and later: ``move O to R``) or ``"put"`` (the json_2.1.1 games many papers used:
    ``put O in/on R``).

    ## Version History
    - v0: ALFWorld 0.4's rules, goal templates and text; 5 levels; the oracle planner.
    """


for _cls in (Household, PickPlace, Look, Clean, Heat, Cool, PickTwo):
    _cls.__doc__ = _doc(_cls.TASK)
del _cls
