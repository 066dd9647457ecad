"""The navigation envs: MiniWorld's tasks behind the RL4VLM Gym contract.

:class:`NavigationEnv` holds one MiniWorld world (``worlds.py``) and drives it with MiniWorld's own
``step``: its physics, its rewards and its OpenGL renderer. It adds the text actions (and
VL-DAC's numbered ones), the instruction, a text observation with the camera's information
(``perception.py``), levels, the oracle planner (``oracle.py``) and a discretized ``state_key``.
One subclass per task says what the goal is.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import math
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.core import NOT_COMPUTED, Decision, ObsDict, StepOutcome, VLMEnv
from rl4vlm_gym.envs.navigation import wording
from rl4vlm_gym.envs.navigation.gl_process import Pending
from rl4vlm_gym.envs.navigation.levels import LADDERS, NavLevel
from rl4vlm_gym.envs.navigation.oracle import BACK, FORWARD, TURN_LEFT, TURN_RIGHT, Model, Phase, Planner, Unsolvable, shortest

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "FourRooms",
    "Hallway",
    "Maze",
    "NavigationEnv",
    "OneRoom",
    "PickupObjects",
    "PutNext",
    "Sidewalk",
    "Sign",
    "TMaze",
    "WallGap",
    "YMaze",
]

RENDER_PROCESS_VARIABLE = "RL4VLM_GYM_RENDER_PROCESS"
"""``0`` makes ``render_process=False`` the default: frames drawn in the env's own process."""
PICK_UP, DROP = "pick up", "drop"
MOVES = (TURN_LEFT, TURN_RIGHT, FORWARD, BACK)  # MiniWorld's action indices 0..3, VL-DAC's list
logger = logging.getLogger(__name__)

_TRIES = 200  # episodes drawn before a level is declared unsatisfiable
_RETRY_EXPANSIONS, _RETRY_WEIGHT = 20_000, 4.0  # a second, greedier search when the first gives up: solves most
_CELL = 0.25  # metres per state_key cell: a few steps, so GiGPO finds repeated anchor states
_searches: OrderedDict[tuple[Any, ...], tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = OrderedDict()
"""A search's plan (None: none found) and its first search's partial plan, by state: see NavigationEnv._search."""
_SEARCHES = 2048  # how many searches' results a process keeps (a plan is a few hundred words)


class NavigationEnv(VLMEnv):
    """Base of the navigation envs (see the module docstring); subclasses set ``TASK`` and the goal."""

    CONTINUOUS = True  # poses are continuous; the text gives distances and headings coarsely
    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "ansi", "human"], "render_fps": 10}
    TASK: ClassVar[str]
    ACTIONS: ClassVar[tuple[str, ...]] = MOVES
    """Admissible actions in MiniWorld's action order, so VL-DAC's ``"action": 2`` is ``move forward``."""
    NUMBERED_ACTIONS: ClassVar[bool] = True
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (240, 320)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    EXPENSIVE_PLAN: ClassVar[bool] = True  # the planner's search takes 0.01 to 10 s
    HORIZON: ClassVar[int] = 6
    """Decision facts are exact within this many steps of accomplishing the task (``oracle.shortest``, a
    search that grows about threefold a step); the planner's plans, short but not shortest, say nothing
    exact farther out."""
    APPEARANCES: ClassVar[tuple[str, ...]] = ("default", "held-out")
    WORDINGS: ClassVar[tuple[str, ...]] = wording.WORDINGS
    PHRASES: ClassVar = wording.PHRASES
    SYNONYMS: ClassVar = {
        "left": TURN_LEFT, "right": TURN_RIGHT, "forward": FORWARD, "back": BACK, "backward": BACK,
        "move backward": BACK, "go forward": FORWARD, "pickup": PICK_UP, "pick": PICK_UP,
    }  # fmt: skip
    REWARDS: ClassVar = {
        "miniworld": {"move": 0.0, "goal": 1.0, "timeout": 0.0, "invalid": 0.0},
        "vl-dac": {"move": 0.0, "goal": 1.0, "timeout": -1.0, "invalid": 0.0},
    }

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.LEVELS = LADDERS[cls.TASK]

    def __init__(self, *, render_view: str = "agent", render_process: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if render_view not in ("agent", "top"):
            raise ValueError(f"render_view={render_view!r} is unknown; choose 'agent' or 'top'")
        self.render_view = render_view
        if render_process is None:  # the default: a render process, unless the environment variable says 0
            render_process = os.environ.get(RENDER_PROCESS_VARIABLE, "1") != "0"
        self.render_process = bool(render_process)
        self._world: Any = None
        self._log: list[int] = []
        self._episode: tuple[NavLevel, dict[str, Any]] | None = None
        self._partial: list[str] | None = None  # the last search's partial plan (see _searched)

    # World --------------------------------------------------------------------------------------------

    @property
    def world(self) -> Any:
        """The MiniWorld world, built on first use (``reset``): making the env makes no GL context,
        so ``AsyncVectorEnv``'s parent, which makes one env to read its spaces, can still fork."""
        if self._world is None:
            self._world = self._make_world()
        return self._world

    def _make_world(self) -> Any:
        from rl4vlm_gym.envs.navigation import gl, nogl
        from rl4vlm_gym.envs.navigation.gl_process import Scene
        from rl4vlm_gym.envs.navigation.worlds import WORLDS

        height, width = self.image_size
        scene = None
        if self.render_process and nogl.available():
            scene = Scene(self.TASK, width, height, self.appearance)
        else:
            gl.ensure_context()
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):  # MiniWorld prints its MSAA fall-back on stdout
                world = WORLDS[self.TASK](
                    obs_width=width, obs_height=height, window_width=width, window_height=height, appearance=self.appearance, scene=scene
                )
        except Exception as err:  # noqa: BLE001 - pyglet raises many types when GL is missing
            if type(err).__module__.startswith("pyglet"):
                raise gl.explain(err) from err
            raise
        if printed.getvalue():
            logger.debug("MiniWorld: %s", printed.getvalue().strip())
        world.render_enabled = self.obs_mode != "text" or self.render_mode is not None
        return world

    def _draw(self, level: NavLevel) -> None:
        """Draw episodes from the env's RNG until one meets the level's start constraints; the
        world's RNG is the env's, so a level-0 episode is raw MiniWorld's. The planner runs only
        when the oracle or ``optimal_steps`` is asked for (it costs far more than the world)."""
        world = self.world
        world.configure(level)
        world._np_random = self.np_random
        self.planner = Planner(world, forward_step=level.forward_step, turn_step=level.turn_step, can_back=BACK in self.ACTIONS)
        for draw in range(_TRIES):
            self._obs = _camera(world.reset()[0])
            goal = world.goal_entity()
            if goal is not None and _distance(world.agent.pos, goal.pos) < level.min_start_distance:
                continue
            self._draws = draw + 1
            self._plan: list[str] = []
            self._plan_state: tuple[Any, ...] | None = None  # the state the plan starts from
            self._start = self.planner.snapshot(), self._exact_state()
            self._start_plan: int | None = NOT_COMPUTED  # the oracle's length from the start (None: no plan)
            self._facts: dict[tuple[Any, ...], tuple[int, tuple[str, ...]] | None] = {}  # exact facts by state (_exact)
            return
        raise RuntimeError(f"{type(self).__name__}: no episode meets the start constraints in {_TRIES} draws at level {self.level}")

    # VLMEnv hooks -------------------------------------------------------------------------------------

    def _new_episode(self, config: NavLevel) -> None:
        self._episode = (config, dict(self.np_random.bit_generator.state))
        self._log = []
        self._draw(config)
        self._done = False
        self._start_distance = self._goal_distance()

    def _actions(self) -> tuple[str, ...]:
        return self.ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        world = self.world
        on_plan = bool(self._plan) and action == self._plan[0] and self._exact_state() == self._plan_state
        index = self.ACTIONS.index(action)
        world.step_count = self.elapsed_steps  # invalid steps count as time, as they do for our TimeLimit
        obs, reward, terminated, _, _ = world.step(index)  # MiniWorld's truncation is ignored: ours is on the spec
        self._obs = _camera(obs)
        self._log.append(index)
        if on_plan:
            self._plan.pop(0)
            self._plan_state = self._exact_state()
        event, scale = self._event(float(reward), bool(terminated))
        self._done = bool(terminated)
        return StepOutcome(event, terminated=bool(terminated), scale=scale, feedback=self._feedback(action, event))

    def _event(self, reward: float, terminated: bool) -> tuple[str, float]:
        """The reward table's event for MiniWorld's step result, and the scale of its reward."""
        if terminated:
            self._succeeded = reward > 0
            return "goal", reward  # MiniWorld's 1 - 0.2 t/T
        return "move", 1.0

    def _feedback(self, action: str, event: str) -> str:
        return ""

    def _describe(self) -> str:
        from rl4vlm_gym.envs.navigation.perception import describe

        height, width = self.image_size
        return describe(self.world, width / height)

    def _render(self) -> NDArray[np.uint8]:
        if not self.world.render_enabled:  # text mode with render() asked for: draw on demand
            return self.world.render_obs(self.world.obs_fb)
        if isinstance(self._obs, Pending):
            self._obs = self._obs.result()
        return self._obs.copy()  # an invalid action keeps the frame: never hand out the same array twice

    def step(self, action: str) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        """:meth:`VLMEnv.step`; with a render process, the step's frame is drawn there while this
        process finishes the step (its text, reward and info), and received when the observation
        takes it: never later than the end of the step."""
        world = self._world
        if world is None or world.scene is None:
            return super().step(action)
        world.defer = True
        try:
            return super().step(action)
        finally:
            world.defer = False
            world.scene.settle()  # a frame no one took (an error mid-step, text mode): the renderer is free again
            if isinstance(self._obs, Pending):
                self._obs = self._obs.result()  # received by settle(): between steps the frame is an array

    def _observation(self, feedback: str) -> ObsDict:
        if not isinstance(self._obs, Pending) or self.obs_mode == "text":
            return super()._observation(feedback)
        # The base's observation, with the text first: described while the render process draws.
        text, mission = self._text(feedback), self._mission()
        return {"image": self._frame(), "text": text, "mission": mission, "actions": self._admissible}

    def _view(self) -> NDArray[np.uint8]:
        return self.render_top_view() if self.render_view == "top" else self._frame()

    def render_top_view(self) -> NDArray[np.uint8]:
        """MiniWorld's top-down map of the whole world (the agent drawn in it), at ``image_size``."""
        return self.world.render_top_view(self.world.vis_fb)

    def _state_key(self) -> str:
        world, level = self.world, self.world.level
        heading = round(world.agent.dir / math.radians(level.turn_step)) % round(360 / level.turn_step)
        x, z = round(world.agent.pos[0] / _CELL), round(world.agent.pos[2] / _CELL)
        return f"{x},{z},{heading}|{self._task_state()}"

    def _task_state(self) -> str:
        return "done" if self._done else ""

    def _success(self) -> bool:
        return self._done and self._succeeded

    def _progress(self) -> float:
        if self._success():
            return 1.0
        if not self._start_distance:
            return 0.0
        return float(min(1.0, max(0.0, 1.0 - self._goal_distance() / self._start_distance)))

    def _goal_distance(self) -> float:
        goal = self.world.goal_entity()
        return 0.0 if goal is None else _distance(self.world.agent.pos, goal.pos)

    def _optimal_steps(self) -> int | None:
        if self._start_plan == NOT_COMPUTED:
            if self._exact_state() == self._start[1]:
                self._replan()  # the oracle then follows this very plan
            else:  # asked after steps: plan from the start, then put the world back
                now = self.planner.snapshot()
                self.planner.restore(self._start[0])
                try:
                    self._start_plan = self._oracle_length(self._search())
                finally:
                    self.planner.restore(now)
        return self._start_plan

    def _mission(self) -> str:
        return self._say("goto", f"Go to the {self.world.goal_label}.", goal=self.world.goal_label)

    # Oracle -------------------------------------------------------------------------------------------

    def _phases(self) -> list[Phase]:
        """The task as planner phases; go-to tasks by default."""
        world = self.world
        goal = world.goal_entity()
        return [Phase(reached=lambda: bool(world.near(goal)), targets=lambda: [goal.pos], reach=_near(world, goal), heading_free=True)]

    def _replan(self) -> None:
        """Plan from the current state. Without a plan (the search gave up, even on the second,
        greedier try), the oracle still answers from any state: it heads for the pose the search
        found nearest the goal, or turns if that is where it stands (a new heading, a new start)."""
        plan = self._search()
        if self._exact_state() == self._start[1]:
            self._start_plan = self._oracle_length(plan)
        if plan is None:  # the first search's partial plan is the one plan(partial=True) makes again from here
            partial = self._partial if self._partial is not None else self.planner.plan(self._phases(), rooms=self._rooms(), partial=True)
            plan = list(partial) or [TURN_LEFT]
        self._plan, self._plan_state = plan, self._exact_state()

    def _search(self) -> list[str] | None:
        """The planner's plan from the current state; None if it finds none, even on a second,
        greedier search (drawn episodes are not filtered by the planner: it would run at every reset).

        The search is a pure function of the episode's world and its state now, and the kit and the
        tests ask for plans from the same states again (the same seed's start, an episode replayed):
        each result is kept for the process, keyed by :meth:`_search_key`, and a search from that
        exact state again takes it."""
        key = self._search_key()
        self._partial = None
        if key is not None and key in _searches:
            _searches.move_to_end(key)
            found, partial = _searches[key]
            self._partial = None if partial is None else list(partial)
            return None if found is None else list(found)
        plan = self._searched()
        if key is not None:
            _searches[key] = (None if plan is None else tuple(plan), None if self._partial is None else tuple(self._partial))
            while len(_searches) > _SEARCHES:
                _searches.popitem(last=False)
        return plan

    def _search_key(self) -> tuple[Any, ...] | None:
        """What the planner's search reads, exactly: the episode's world (the task, the appearance,
        the level and the RNG state its episode was drawn from; a level's domain randomization left
        out where it changed nothing the search reads), the planner's budget and weight,
        and the state the planner snapshots
        (the agent's pose, what it carries, which objects remain and their poses, the count picked
        up), with objects named by their place in the episode's first list; floats by their bytes.
        None before an episode, or if an object is not one of the episode's own."""
        if self._episode is None:
            return None
        level, rng_state = self._episode
        pos, direction, carrying, entities, poses, picked = self.planner.snapshot()
        index = {id(entity): i for i, entity in enumerate(self._start[0][3])}
        if carrying is not None and id(carrying) not in index or any(id(entity) not in index for entity in entities):
            return None
        agent = self.world.agent
        if level.domain_rand and self._draws == 1:
            # MiniWorld's domain randomization draws after its _gen_world (lights, colours, textures, the
            # camera): a first draw is the world drawn without it, in all the search reads but the camera's
            # height, which places a carried object (in the key where the task carries). A later draw is
            # another world: the draws before it took other numbers from the RNG.
            level = dataclasses.replace(level, domain_rand=False)
        return (
            type(self).__module__,
            type(self).__qualname__,
            self.appearance,
            repr(level),
            repr(rng_state),
            float(agent.radius).hex(),
            float(agent.cam_height).hex() if DROP in self.ACTIONS or carrying is not None else None,
            self.planner.max_expansions,
            float(self.planner.weight).hex(),
            pos.dtype.str + pos.tobytes().hex(),
            float(direction).hex(),
            -1 if carrying is None else index[id(carrying)],
            tuple(index[id(entity)] for entity in entities),
            tuple((p.dtype.str + p.tobytes().hex(), float(d).hex()) for p, d in poses),
            picked,
        )

    def _searched(self) -> list[str] | None:
        self._partial = None
        if self._goal_holds():
            return [TURN_LEFT]  # any step ends the episode: the task's check runs after every step
        try:
            return self.planner.plan(self._phases(), rooms=self._rooms())
        except Unsolvable as err:
            self._partial = err.partial  # the oracle's way from here if no search finds a plan
        try:
            return self.planner.plan(self._phases(), rooms=self._rooms(), max_expansions=_RETRY_EXPANSIONS, weight=_RETRY_WEIGHT)
        except Unsolvable as err:
            logger.info("%s level %d: the planner found no plan (%s)", type(self).__name__, self.level, err)
            return None

    def _goal_holds(self) -> bool:
        goal = self.world.goal_entity()
        return goal is not None and bool(self.world.near(goal))

    def _rooms(self) -> list[Any] | None:
        """The rooms the planner's heuristic maps (None: all)."""
        return None

    def _exact_state(self) -> tuple[Any, ...]:
        world = self.world
        carrying = world.agent.carrying
        carried = -1 if carrying is None else world.entities.index(carrying)
        return (*world.agent.pos.tolist(), world.agent.dir, carried, len(world.entities))

    def oracle_action(self) -> str:
        """The next action of the planner's plan from the current state, planned anew when the
        agent has left the plan or finished a partial one; within :attr:`HORIZON` steps of the end, the
        plan's action if it is one of the decision facts' optimal ones, else the first of those."""
        found = self._exact()
        on_plan = bool(self._plan) and self._exact_state() == self._plan_state
        if found is not None:
            return self._plan[0] if on_plan and self._plan[0] in found[1] else found[1][0]
        if not on_plan:
            self._replan()
        return self._plan[0]

    # Decision facts -----------------------------------------------------------------------------------

    def _decision(self) -> Decision:
        features = self._features()
        if self._goal_holds():
            return Decision(None, None, reason="the goal holds already: any step ends the episode", features=features)
        found = self._exact()
        if found is None:
            reason = f"more than {self.HORIZON} steps to go: the facts are exact within {self.HORIZON} of the end; the planner's plans are short, not shortest"
            return Decision(None, None, reason=reason, features=features)
        steps, optimal = found
        return Decision(optimal, steps, features=features)

    def _exact(self) -> tuple[int, tuple[str, ...]] | None:
        """:func:`oracle.shortest` from the current state within :attr:`HORIZON` steps, kept per exact state
        (the oracle and ``decision()`` ask for the same state)."""
        if self._goal_holds():
            return None
        return self._shortest(self._phases)

    def _shortest(self, phases: Callable[[], Sequence[Phase]]) -> tuple[int, tuple[str, ...]] | None:
        """:func:`oracle.shortest` from the current state, kept per exact state: the pose and what is carried,
        and which objects remain where (picked up, or put down elsewhere). ``phases`` makes the task's phases
        from here; :meth:`_oracle_length` passes the rest of the start's, which differ from :meth:`_phases`'
        only in a looser ``reach`` (PickupObjects': over the objects there were), and a looser lower bound
        cuts fewer hopeless states, nothing else: the search's answer is the same."""
        world = self.world
        state = (self._exact_state(), tuple((id(e), np.asarray(e.pos, float).tobytes()) for e in world.entities if not e.is_static))
        if state not in self._facts:
            self._facts[state] = shortest(self.planner, phases(), self.ACTIONS, self.HORIZON)
        return self._facts[state]

    def _features(self) -> dict[str, int | str]:
        """The state features decision metrics break errors down by: metres to the goal (rounded; PickupObjects:
        to the nearest object)."""
        return {"metres_to_goal": round(self._goal_distance())}

    def _oracle_length(self, plan: list[str] | None) -> int | None:
        """How many steps the oracle takes from the current state with ``plan``: it follows the plan until
        the first state within :attr:`HORIZON` steps of the end, then the decision facts (as
        :meth:`oracle_action` does), so ``optimal_steps`` is what it plays."""
        if plan is None or self._goal_holds():
            return _length(plan)
        planner = self.planner
        snap, phases = planner.snapshot(), self._phases()
        model, k = Model(planner, phases), 0
        try:
            for i, action in enumerate(plan):
                # Kept per state: the oracle then walks this plan and asks the same states (oracle_action).
                found = self._shortest(lambda: phases[k:])  # noqa: B023 - called at once, in this iteration
                if found is not None:
                    return i + found[0]
                went = model.step(action, k)
                if not isinstance(went, int):  # the plan ends here (its last step), or leaves the model
                    break
                k = went
            return len(plan)
        finally:
            planner.restore(snap)

    # Pickling: the GL world cannot cross processes; rebuild it and replay the episode -----------------

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        for name in ("planner", "_obs", "_start"):  # the start's snapshot holds the world's entities
            state.pop(name, None)
        state["_world"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        log, episode = self._log, self._episode
        now = self.np_random.bit_generator.state
        if episode is not None:
            level, rng_state = episode
            planned = state.get("_plan_state") is not None
            self.np_random.bit_generator.state = rng_state
            self._new_episode(level)
            if planned:  # the oracle had planned: follow the same plan, as the original would
                self._replan()
            for index in log:
                self._apply(self.ACTIONS[index])
            self._log = log
            self.np_random.bit_generator.state = now

    def close(self) -> None:
        world = getattr(self, "_world", None)
        if world is not None:
            world.close()
            self._world = None
        super().close()


def _camera(obs: Any) -> NDArray[np.uint8]:
    """The camera image of a MiniWorld observation (Sign's is ``{"obs": image, "goal": shape}``)."""
    return obs["obs"] if isinstance(obs, dict) else obs


def _near(world: Any, entity: Any) -> float:
    """How far from ``entity`` (on the floor) the agent may stand while ``world.near(entity)``."""
    return float(entity.radius + world.agent.radius + 1.1 * world.max_forward_step) + 1e-6


def _in_reach(world: Any, entities: list[Any]) -> float:
    """How far from the nearest of ``entities`` the agent may stand while one is ``in_reach()``: the
    test circle (1.2 radii) 1.5 radii ahead must touch it."""
    return float(2.7 * world.agent.radius + max((e.radius for e in entities), default=0.0)) + 1e-6


def _length(plan: list[str] | None) -> int | None:
    return None if plan is None else len(plan)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(math.hypot(a[0] - b[0], a[2] - b[2]))


# The tasks ---------------------------------------------------------------------------------------------

_ARGUMENTS = """## Arguments
The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
(default 240x320, height x width; VL-DAC's setting is MiniWorld's 60x80: ``image_size=(60, 80)``),
``reward_variant`` (``miniworld``, ``vl-dac``), ``action_format``, ``action_match``,
``render_mode``, ``appearance``, ``wording``; ``render_view``: ``"agent"`` (default) or ``"top"``,
MiniWorld's top-down map, for what ``render()`` shows (the observation stays the agent's camera); and
``render_process``: True (default; ``RL4VLM_GYM_RENDER_PROCESS=0`` makes False the default) draws the
frames in a render process of the env's own, started at the first frame, so the env's process holds no
OpenGL context (a ``fork`` after rendering works, envs in threads render in parallel); False draws them
in the env's process (no second process; a step takes about as long: the render process draws while
the env finishes its step). The frames are the same bytes either way.

``appearance="held-out"`` (the ``visual`` transfer axis) draws every room with textures no
MiniWorld world uses (wood-plank walls, a marble floor, a plain tiled ceiling) under a warm light
outside domain randomization's ranges; the episode, the text and the rules are the default's.

``wording="held-out"`` (the ``wording`` transfer axis) says the mission and the feedback in
sentences no training episode reads, three phrasings of each, the seed picking one; the episode,
the images and the actions are train's.

The oracle's planner runs only when asked for (a search of 0.01 to 10 s, many times a reset's cost):
``info["optimal_steps"]`` is -2 (not computed) until ``env.unwrapped.optimal_steps`` is read,
or at every reset with ``optimal_steps_at_reset=True``; the oracle follows the same plan, and takes the
shortest way once it is within the decision facts' horizon of the end. ``optimal_steps`` is the length of
what it plays from the start; -1 on the few episodes where the planner, after a second greedier search,
finds no plan (the oracle then heads for the nearest pose its search reached)."""

_DECISIONS = """Decisions (``decision()``): exact within {horizon} steps of the end, ``None`` farther out (the reason
says so): ``steps_to_go`` and the optimal actions come from a breadth-first search of MiniWorld's exact
states (``oracle.shortest``: poses by their bytes, never merged, each move MiniWorld's own), which the
planner's plans, short but not shortest, cannot give. Features ``metres_to_goal``{features}."""

_OBSERVATION = """## Observation
- ``image``: MiniWorld's first-person camera, rendered by its OpenGL renderer at ``image_size``.
- ``text``: in ``text`` and ``image+text`` modes, what the camera sees in words: each visible object
  with its direction and distance, the distance to the wall straight ahead, what the agent carries
  (``perception.py``); in ``image`` mode only feedback.
- ``mission``: the goal in words.
- ``actions``: the admissible actions, in MiniWorld's action order (VL-DAC's numbered list)."""

_VERSIONS = """## Version History
- v0: MiniWorld 2.1.0's task, with text actions, levels and the oracle; time limit on the spec.
- v1: reset no longer runs the planner (it runs when the oracle or ``optimal_steps`` is asked for),
  so draws are no longer filtered by it: a few seeds give another episode than in v0, and a few
  episodes have no plan the planner finds (``optimal_steps`` -1). Since issue 38 the oracle takes
  the shortest way within the decision facts' horizon of the end: ``optimal_steps`` is one or two
  steps shorter on some episodes (14 of 33 checked), where the planner's plan ended longer."""


def _doc(task: str, summary: str, description: str, actions: str, rewards: str, horizon: int = NavigationEnv.HORIZON, features: str = "") -> str:
    default = LADDERS[task][0]
    levels = (
        "Rungs change the task's size, add distractors (the goal then named by colour and shape), move the start "
        "away from the goal, turn it to a random heading, change the step sizes, and switch on MiniWorld's visual "
        f"domain randomization (dynamics stay fixed); the table lists each. Level 0: {default.describe()}."
    )
    return "\n\n".join(
        [
            summary,
            f"## Description\n{description}\n\n{_DECISIONS.format(horizon=horizon, features=features)}",
            _OBSERVATION,
            f"## Actions\n{actions}",
            f"## Rewards\n{rewards}",
            f"## Levels\n{levels}",
            _ARGUMENTS,
            _VERSIONS,
        ]
    )


_MOVE_ACTIONS = (
    "``turn left`` / ``turn right`` (by the level's turn step), ``move forward`` / ``move back`` (by its "
    "forward step; blocked by walls and objects). VL-DAC's numbers parse too: 0 turn left, 1 turn right, "
    "2 move forward, 3 move back."
)
_GOTO_REWARDS = (
    "``miniworld``: MiniWorld's own, ``1 - 0.2 * t / T`` on reaching the goal (``t`` steps taken, invalid "
    "ones included; ``T`` the task's own limit: {T}), 0 otherwise. ``vl-dac``: the same, and -1 on the step "
    "where the registered time limit truncates the episode (VL-DAC's ``process_reward``). Invalid actions: 0."
)


class Hallway(NavigationEnv):
    TASK = "Hallway"


class OneRoom(NavigationEnv):
    TASK = "OneRoom"
    DEFAULT_LEVEL = 1


class FourRooms(NavigationEnv):
    TASK = "FourRooms"


class WallGap(NavigationEnv):
    TASK = "WallGap"


class TMaze(NavigationEnv):
    TASK = "TMaze"


class YMaze(NavigationEnv):
    TASK = "YMaze"


class Maze(NavigationEnv):
    TASK = "Maze"
    DEFAULT_LEVEL = 2


class Sidewalk(NavigationEnv):
    TASK = "Sidewalk"
    REWARDS: ClassVar = {
        "miniworld": {"move": 0.0, "goal": 1.0, "street": 0.0, "timeout": 0.0, "invalid": 0.0},
        "vl-dac": {"move": 0.0, "goal": 1.0, "street": -1.0, "timeout": -1.0, "invalid": 0.0},
    }

    def _event(self, reward: float, terminated: bool) -> tuple[str, float]:
        if terminated and reward <= 0:
            self._succeeded = False
            return "street", 1.0
        return super()._event(reward, terminated)

    def _feedback(self, action: str, event: str) -> str:
        return self._say("street", "You walked into the street.") if event == "street" else ""

    def _mission(self) -> str:
        goal = self.world.goal_label
        return self._say("sidewalk", f"Go to the {goal} without stepping into the street.", goal=goal)

    def _phases(self) -> list[Phase]:
        (phase,) = super()._phases()
        return [Phase(reached=phase.reached, targets=phase.targets, forbidden=self.world.in_street, reach=phase.reach, heading_free=True)]

    def _rooms(self) -> list[Any]:
        return [self.world.rooms[0]]


class Sign(NavigationEnv):
    TASK = "Sign"
    ACTIONS = (TURN_LEFT, TURN_RIGHT, FORWARD, "stop")
    REWARDS: ClassVar = {
        "miniworld": {"move": 0.0, "goal": 1.0, "wrong": -1.0, "stop": 0.0, "timeout": 0.0, "invalid": 0.0},
        "vl-dac": {"move": 0.0, "goal": 1.0, "wrong": -1.0, "stop": -1.0, "timeout": -1.0, "invalid": 0.0},
    }
    SHAPES = ("box", "key")

    def _event(self, reward: float, terminated: bool) -> tuple[str, float]:
        if not terminated:
            return "move", 1.0
        self._succeeded = reward > 0
        return ("goal" if reward > 0 else "wrong" if reward < 0 else "stop"), 1.0

    def _feedback(self, action: str, event: str) -> str:
        train = {"wrong": "That is not the object the sign asks for.", "stop": "You stopped."}.get(event, "")
        return self._say(event, train) if train else ""

    def _mission(self) -> str:
        shape = self.SHAPES[self.world._goal]
        return self._say("sign", f"Go to the {shape} whose colour the sign names. Touching any other object fails.", shape=shape)

    def _phases(self) -> list[Phase]:
        world = self.world
        goal = world.goal_entity()
        others = [obj for obj in world.objects() if obj is not goal]
        return [
            Phase(
                reached=lambda: bool(world.near(goal)),
                targets=lambda: [goal.pos],
                forbidden=lambda: any(world.near(obj) for obj in others),
                reach=_near(world, goal),
                heading_free=True,
            )
        ]


class PickupObjects(NavigationEnv):
    TASK = "PickupObjects"
    DEFAULT_LEVEL = 2
    HORIZON = 5  # five actions a step: a sixth step costs a search of 6 ms at the 95th percentile
    ACTIONS = (*MOVES, PICK_UP)
    REWARDS: ClassVar = {
        "miniworld": {"move": 0.0, "pickup": 1.0, "timeout": 0.0, "invalid": 0.0},
        "vl-dac": {"move": 0.0, "pickup": 1.0, "timeout": -1.0, "invalid": 0.0},
    }

    def _event(self, reward: float, terminated: bool) -> tuple[str, float]:
        self._succeeded = terminated
        return ("pickup" if reward > 0 else "move"), 1.0

    def _feedback(self, action: str, event: str) -> str:
        if action != PICK_UP:
            return ""
        if event == "pickup":
            return self._say("picked", "You picked it up.")
        return self._say("nothing", "There is nothing to pick up in front of you.")

    def _mission(self) -> str:
        n = self.world.num_objs
        return self._say("pickup", f"Pick up all {n} objects.", n=n)

    def _task_state(self) -> str:
        return f"picked {self.world.num_picked_up}"

    def _progress(self) -> float:
        return self.world.num_picked_up / self.world.num_objs

    def _goal_holds(self) -> bool:
        return False

    def _phases(self) -> list[Phase]:
        world = self.world

        def pick() -> None:
            world.entities.remove(world.in_reach())
            world.num_picked_up += 1

        objects = lambda: [e.pos for e in world.entities if e is not world.agent and not e.is_static]  # noqa: E731
        left = world.num_objs - world.num_picked_up
        reach = _in_reach(world, [e for e in world.entities if e is not world.agent and not e.is_static])
        return [Phase(reached=lambda: world.in_reach() is not None, targets=objects, then=PICK_UP, effect=pick, reach=reach)] * left

    def _features(self) -> dict[str, int | str]:
        world = self.world
        objects = [e for e in world.entities if e is not world.agent and not e.is_static]
        nearest = min((_distance(world.agent.pos, e.pos) for e in objects), default=0.0)
        return {"metres_to_goal": round(nearest), "objects_left": world.num_objs - world.num_picked_up}


class PutNext(NavigationEnv):
    TASK = "PutNext"
    DEFAULT_LEVEL = 1
    HORIZON = 4  # six actions a step: six steps cost a search of 33 ms at the 95th percentile
    ACTIONS = (*MOVES, PICK_UP, DROP)

    def _feedback(self, action: str, event: str) -> str:
        carrying = self.world.agent.carrying
        if action == PICK_UP:
            if carrying is not None:
                return self._say("holding", "You are holding it.")
            return self._say("nothing", "There is nothing to pick up in front of you.")
        return ""

    def _mission(self) -> str:
        return self._say("putnext", "Put the red box next to the yellow box.")

    def _task_state(self) -> str:
        carrying = self.world.agent.carrying
        return "done" if self._done else "" if carrying is None else f"holding {carrying.color}"

    def _progress(self) -> float:
        if self._success():
            return 1.0
        return 0.5 if self.world.agent.carrying is self.world.red_box else 0.0

    def _goal_holds(self) -> bool:
        world = self.world
        return world.agent.carrying is None and bool(world.near(world.red_box, world.yellow_box))

    def _phases(self) -> list[Phase]:
        world = self.world
        red, yellow = world.red_box, world.yellow_box

        def pick() -> None:
            world.agent.carrying = red
            red.pos = world._get_carry_pos(world.agent.pos, red)
            red.dir = world.agent.dir

        def drop_would_touch() -> bool:
            dropped = red.pos.copy()
            dropped[1] = 0
            return bool(np.linalg.norm(dropped - yellow.pos) < red.radius + yellow.radius + 1.1 * world.max_forward_step)

        phases = []
        carrying = world.agent.carrying
        if carrying is not None and carrying is not red:  # holding another box (a random move picked it): put it down first

            def put_down() -> None:
                carrying.pos[1] = 0  # as MiniWorld's drop
                world.agent.carrying = None

            phases.append(Phase(reached=lambda: True, targets=lambda: [red.pos], then=DROP, effect=put_down))
        if world.agent.carrying is not red:
            phases.append(
                Phase(reached=lambda: world.in_reach() is red, targets=lambda: [red.pos], then=PICK_UP, effect=pick, reach=_in_reach(world, [red]))
            )
        # Dropped where it is carried: 1.05 (agent + box radii + a step) ahead (MiniWorld's _get_carry_pos).
        carried = 1.05 * (world.agent.radius + red.radius + world.max_forward_step)
        drop_reach = carried + red.radius + yellow.radius + 1.1 * world.max_forward_step + 1e-6
        phases.append(Phase(reached=drop_would_touch, targets=lambda: [yellow.pos], then=DROP, reach=drop_reach))
        return phases

    def _features(self) -> dict[str, int | str]:
        carrying = self.world.agent.carrying
        phase = "carry" if carrying is self.world.red_box else "fetch" if carrying is None else "put down"
        return {**super()._features(), "phase": phase}


_T = {"Hallway": 250, "OneRoom": 180, "FourRooms": 250, "WallGap": 300, "TMaze": 280, "YMaze": 280, "Maze": "24 x rows x columns", "Sidewalk": 150}
_GOTO_DESCRIPTIONS = {
    "Hallway": "MiniWorld's Hallway: a red box at the end of a straight hallway; the agent starts facing roughly down it (within 45 degrees).",
    "OneRoom": "MiniWorld's OneRoom: a red box placed at random in one big room.",
    "FourRooms": "MiniWorld's FourRooms: four rooms joined by openings; the box is in any of them.",
    "WallGap": "MiniWorld's WallGap: outdoors, two areas separated by a wall with a gap; the box is on the other side.",
    "TMaze": "MiniWorld's TMaze: a corridor ending in a T junction; the box is at the end of one of its arms.",
    "YMaze": "MiniWorld's YMaze: a corridor into a Y junction; the box is in one of the two arms.",
    "Maze": "MiniWorld's Maze: square rooms joined into a maze by recursive backtracking; the box is anywhere.",
    "Sidewalk": "MiniWorld's Sidewalk: walk along a sidewalk to the box at its end; stepping into the street ends the episode with nothing.",
}
_DISTRACTOR_NOTE = (
    " The agent is told which object to go to; on levels with distractors the goal's colour and shape are"
    " drawn too (from MiniWorld's six colours and box, ball, key), among objects of other colours and shapes."
)
for _cls in (Hallway, OneRoom, FourRooms, WallGap, TMaze, YMaze, Maze, Sidewalk):
    _extra = " Walking into the street ends the episode: 0 (``miniworld``) or -1 (``vl-dac``)." if _cls is Sidewalk else ""
    _cls.__doc__ = _doc(
        _cls.TASK,
        f"Go to the named object: {_GOTO_DESCRIPTIONS[_cls.TASK].split(': ', 1)[1]}",
        _GOTO_DESCRIPTIONS[_cls.TASK] + _DISTRACTOR_NOTE,
        _MOVE_ACTIONS,
        _GOTO_REWARDS.format(T=_T[_cls.TASK]) + _extra,
    )
Sign.__doc__ = _doc(
    "Sign",
    "Read the sign and go to the box or key of the colour it names.",
    "MiniWorld's Sign: three boxes and three keys (blue, red, green) in a U of rooms, and a sign on the wall "
    "naming a colour. The mission names the shape; touching any object ends the episode. MiniWorld fixes the "
    "sign's colour and the shape per env; here both are drawn per episode.",
    "``turn left``, ``turn right``, ``move forward``, ``stop`` (MiniWorld's action 3: it steps back and ends the "
    "episode). Numbers 0..3 parse as in MiniWorld.",
    "``miniworld``: +1 for the right object, -1 for a wrong one, 0 for ``stop`` or a time-out. ``vl-dac``: the same, "
    "and -1 for ``stop`` or a time-out. Invalid actions: 0.",
)
PickupObjects.__doc__ = _doc(
    "PickupObjects",
    "Pick up every object in the room.",
    "MiniWorld's PickupObjects: boxes, balls and keys of random colours in a walled yard; each ``pick up`` facing "
    "an object collects it. The episode ends when all are collected.",
    _MOVE_ACTIONS + " ``pick up`` (4) collects the object right in front.",
    "``miniworld``: +1 per object collected. ``vl-dac``: the same, and -1 on the step where the time limit "
    "truncates the episode. Invalid actions: 0.",
    horizon=PickupObjects.HORIZON,
    features=" (to the nearest object), ``objects_left``",
)
PutNext.__doc__ = _doc(
    "PutNext",
    "Put the red box next to the yellow box.",
    "MiniWorld's PutNext: six boxes of different colours and sizes in a room; carry the red one next to the "
    "yellow one and drop it there.",
    _MOVE_ACTIONS + " ``pick up`` (4) lifts the object in front; ``drop`` (5) puts it down.",
    "``miniworld``: ``1 - 0.2 * t / T`` (T = 250) once the red box is down next to the yellow box. "
    "``vl-dac``: the same, and -1 on the step where the time limit truncates the episode. Invalid actions: 0.",
    horizon=PutNext.HORIZON,
    features=", ``phase`` (``fetch``, ``carry``, ``put down``)",
)
