"""BALROG's BabyAI: its five tasks on BabyAI-Text's levels, with BALROG's text, image and prompt."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.extras import require
from rl4vlm_gym.rendering import import_pygame_quietly

require("balrog", "BALROG's BabyAI envs")  # before importing it: an error naming the extra
import_pygame_quietly()  # minigrid imports pygame: without this, its pkg_resources warning reaches the user's stderr

from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT
from minigrid.core.world_object import Door
from PIL import Image

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog import babyai_oracle
from rl4vlm_gym.envs.balrog.babyai_generator import TASKS, MixedLocalLevel

if TYPE_CHECKING:
    from numpy.typing import NDArray

# BALROG's language action space, in minigrid's action order (0..5; minigrid's "done" is not offered),
# with the descriptions its instruction prompt gives them.
ACTION_HELP = (
    ("turn left", "turn to the left"),
    ("turn right", "turn to the right"),
    ("go forward", "take one step forward"),
    ("pick up", "pick up the object below you"),
    ("drop", "drop the object that you are holding"),
    ("toggle", "manipulate the object in front of you"),
)
ACTIONS = tuple(name for name, _ in ACTION_HELP)
TILE = 16  # BALROG renders get_pov_render(tile_size=16): 7 cells x 16 px = 112 px
VIEW = 7  # minigrid's agent view: 7x7 cells, the agent at the bottom centre facing up
_AGENT = (VIEW // 2, VIEW - 1)
_UNSEEN, _EMPTY, _WALL, _DOOR = 0, 1, 2, 4
_DOOR_STATES = ("open", "closed", "locked")  # minigrid's door state 0, 1, 2


def instruction_prompt(mission: str) -> str:
    """BALROG's BabyAI instruction prompt for ``mission`` (``get_instruction_prompt`` in
    ``balrog/environments/babyai_text/__init__.py``, af7d1f17), byte for byte."""
    actions = ",\n".join(f"{name}: {what}" for name, what in ACTION_HELP)
    return (
        f"You are an agent playing a simple navigation game. Your goal is to {mission}. The following are the "
        "possible actions you can take in the game, followed by a short description of each action:\n\n"
        f"{actions}.\n\n"
        "In a moment I will present you an observation.\n\n"
        "Tips:\n"
        "- Once the desired object you want to interact or pickup in front of you, you can use the 'toggle' action "
        "to interact with it.\n"
        "- It doesn't make sense to repeat the same action over and over if the observation doesn't change.\n\n"
        "PLAY!"
    )


def _steps(n: int, where: str) -> str:
    return f"{n} step{'s' if n > 1 else ''} {where}"


def describe_view(view: NDArray[np.uint8]) -> list[str]:
    """BALROG's lines for minigrid's encoded agent view (``view[x, y] = (object, colour, state)``,
    the agent at ``(3, 6)`` facing up, the object it carries in its cell).

    The minigrid fork's ``info["descriptions"]`` (BartekCupial/Minigrid cf73dd14,
    ``MiniGridEnv.gen_graph``) with BALROG's "You see " removed: "You carry a blue key"; then a
    wall straight ahead, to the left and to the right, each named only if it is the first thing
    seen that way (empty and unseen cells are looked past; an object hides the wall behind it); then
    every visible object or door column by column from the left, each column from far to near,
    with its offset sideways and ahead ("a red ball 1 step left and 3 steps forward", "a locked
    yellow door 2 steps right"). The fork writes every door state after "a", "a open" included."""
    lines = []
    ax, ay = _AGENT
    held = view[ax, ay]
    if held[0] > _EMPTY:
        lines.append(f"You carry a {IDX_TO_COLOR[int(held[1])]} {IDX_TO_OBJECT[int(held[0])]}")
    for where, (dx, dy) in (("forward", (0, -1)), ("left", (-1, 0)), ("right", (1, 0))):
        x, y, n = ax + dx, ay + dy, 1
        while 0 <= x < VIEW and 0 <= y < VIEW:
            kind = view[x, y, 0]
            if kind > _EMPTY:
                if kind == _WALL:
                    lines.append(f"a wall {_steps(n, where)}")
                break
            x, y, n = x + dx, y + dy, n + 1
    for x in range(VIEW):
        for y in range(VIEW):
            kind = int(view[x, y, 0])
            if kind <= _WALL or (x, y) == _AGENT:
                continue
            name = f"{IDX_TO_COLOR[int(view[x, y, 1])]} {IDX_TO_OBJECT[kind]}"
            if kind == _DOOR:
                name = f"{_DOOR_STATES[int(view[x, y, 2])]} {name}"
            offsets = []
            if x != ax:
                offsets.append(_steps(abs(x - ax), "left" if x < ax else "right"))
            if y != ay:
                offsets.append(_steps(ay - y, "forward"))
            lines.append(f"a {name} {' and '.join(offsets)}")
    return lines


@lru_cache(maxsize=4096)
def _text_of(view_bytes: bytes) -> str:
    return "\n".join(describe_view(np.frombuffer(view_bytes, np.uint8).reshape(VIEW, VIEW, 3)))


@dataclass(frozen=True)
class BabyAILevel:
    """BALROG's only setting: ``BabyAI-MixedTrainLocal-v0`` with ``num_dists=0``."""

    def describe(self) -> str:
        return "BALROG's setting: BabyAI-MixedTrainLocal-v0 with no distractors, one 8x8 room (two for open)"


class BabyAI(VLMEnv):
    """BALROG's BabyAI tasks (goto, pickup, open, putnext, pick_up_seq_go_to), its levels, text,
    image and prompt.

    ## Description
    BALROG plays five tasks of BabyAI-Text's ``BabyAI-MixedTrainLocal-v0`` (its minigrid fork,
    BartekCupial/Minigrid cf73dd14) with ``num_dists=0``: one 8x8 room (walls included) holding
    the one or two objects the mission draws from, or for ``open`` two rooms joined by a locked
    door whose key lies in the agent's room. The levels are the fork's, rewritten here
    (:mod:`~rl4vlm_gym.envs.balrog.babyai_generator`): ``reset(seed=s)`` builds the level, mission,
    agent, text and image that BALROG's wrapper builds for ``env.reset(seed=s)``, the seed BALROG's
    evaluator draws per episode (below 2**32); ``reset()`` without a seed draws the next level from
    the env's generator. minigrid plays the rules and checks the mission (its verifier). Missions
    read like "go to the red ball", "pick up the blue key", "open the door" or "open the yellow
    door", "put the green box next to the red ball", "pick up the purple ball, then go to the
    grey key" or "go to the grey key after you pick up the purple ball" (reaching the second object
    first fails nothing); the fork never names a yellow box, red key, red door, green ball or grey
    door. The oracle plays a shortest plan, found by A* search over an exact model of
    minigrid's rules for these rooms (:mod:`~rl4vlm_gym.envs.balrog.babyai_oracle`; for ``open``:
    fetch the key, unlock and open the door in one toggle), and ``optimal_steps`` is its length.

    Decisions (``decision()``): exact from any state: ``steps_to_go`` is the length of a shortest
    plan from it and the optimal actions all those after which it drops by one (turning either way,
    several orders of pick-ups), from one A* search run on until every shortest plan is found
    (``babyai_oracle.decisions``; kept per state, so along an optimal play the next facts are a
    look-up); "unsolvable from here" once nothing can accomplish the mission (a box named by it
    toggled away) or fewer steps are left than it needs. Features ``carrying`` (0 or 1) and
    ``phase`` ("fetch key"/"open door", "fetch"/"place", "pick up"/"go to").

    Against BALROG (balrog-ai/BALROG af7d1f17): tests/envs/balrog/test_golden_babyai.py replays
    BALROG's own wrapper's recordings (tests/envs/balrog/golden/babyai: 5 tasks x 20 seeds, whole
    episodes of bot-led and random actions) and finds the same mission, instruction prompt, text,
    image (sha256 of the array), reward, termination, truncation and progression at every step.
    ``info["balrog"]`` holds BALROG's ``obs["text"]`` (``long_term_context``: the description;
    ``short_term_context``: empty, as in BALROG).

    ## Observation
    - ``image``: minigrid's egocentric view, ``get_pov_render(tile_size=16)`` as BALROG's VLM
      mode shows it (7x7 cells, 112x112 px, the agent at the bottom centre facing up, the object
      it carries drawn under it), resized to ``image_size`` (nearest neighbour) if another size.
    - ``text`` (``image+text`` and ``text`` modes): BALROG's description of the same view, one line
      each: "You carry a blue key", the first wall ahead and to each side unless an object hides
      it ("a wall 2 steps left"), and every visible object or door ("a red ball 1 step left and 3
      steps forward", "a locked yellow door 3 steps forward"); an invalid output's feedback comes
      first. In ``image`` mode only that feedback.
    - ``mission``: the fork's mission string.
    - ``actions``: ``turn left``, ``turn right``, ``go forward``, ``pick up``, ``drop``, ``toggle``.

    ## Actions
    One of BALROG's six action names (minigrid's actions 0..5). As in minigrid, a move into a wall,
    picking up nothing, dropping onto an occupied cell or toggling nothing is a valid step that
    changes nothing. An invalid output changes nothing but spends a step of minigrid's clock too
    (BALROG plays its default action, "go forward", instead: the ``balrog-actions`` wrapper).

    ## Rewards
    ``native``: minigrid's, ``1 - 0.9 * steps / max_steps`` on success, 0 otherwise. BALROG's
    progression is 1 if any step paid a reward above 0 (``info["progress"]``).

    ## Levels
    0: BALROG's setting, the only one. Step limits are minigrid's ``navs * 64 * rooms``: 64 for
    goto and pickup, 128 for open, putnext and pick_up_seq_go_to; the step that reaches it is
    truncated, as in minigrid.

    ## Arguments
    - ``task``: one of ``goto``, ``pickup``, ``open``, ``putnext``, ``pick_up_seq_go_to`` (set by
      the registered id).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 112x112, BALROG's), ``reward_variant``, ``action_format``, ``action_match``,
      ``render_mode``.

    ## Version History
    - v0: BabyAI-Text's levels as BALROG's minigrid fork generates them, BALROG's text and prompt
      (golden-tested); earlier v0 builds drew their own levels (an unlocked door for open, every
      mission allowed, a strict sequence) and described the view in another order.
    """

    LEVELS: ClassVar[tuple[BabyAILevel, ...]] = (BabyAILevel(),)
    REWARDS: ClassVar = {"native": {"move": 0.0, "goal": 1.0, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "go forward"  # BALROG's
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (VIEW * TILE, VIEW * TILE)
    MIN_IMAGE_SIDE: ClassVar[int] = 32

    def __init__(self, *, task: str = "goto", **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")
        self.task = task
        super().__init__(**kwargs)
        self.game = MixedLocalLevel(task)

    def _new_episode(self, config: BabyAILevel) -> None:
        # The game draws from our generator, which reset(seed=s) seeded as minigrid's reset(seed=s)
        # seeds its own: the same level as BALROG's for the same seed.
        self.game.np_random = self.np_random
        self.game.reset()
        self.won = False
        self.plan = self._shortest_plan()
        self.shortest = None if self.plan is None else len(self.plan)
        self.hopeless: str | None = None  # the last state found to have no plan (a target box toggled away)
        self._facts: babyai_oracle.Decisions = {}  # exact decision facts of the states searched so far
        self._dead: set[babyai_oracle.State] = set()  # states from which the mission cannot be accomplished
        self._scene: babyai_oracle.Scene | None = None
        self._objects: list[Any] = []

    def _shortest_plan(self) -> list[int] | None:
        return babyai_oracle.shortest_plan(*babyai_oracle.read(self.game))

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        index = ACTIONS.index(action)
        _, reward, terminated, truncated, _ = self.game.step(index)
        # The model is exact, so the rest of the plan stays shortest while it is followed.
        self.plan = self.plan[1:] if self.plan and self.plan[0] == index else None
        if terminated and reward > 0:  # BALROG's missions cannot fail
            self.won = True
            return StepOutcome("goal", terminated=True, truncated=truncated, scale=float(reward))
        return StepOutcome("move", terminated=terminated, truncated=truncated)

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        if outcome.event != "invalid":
            return outcome
        game = self.game
        game.step_count += 1  # an invalid output spends a step of minigrid's clock too
        if game.step_count >= game.max_steps:
            return StepOutcome(outcome.event, truncated=True, feedback=outcome.feedback, error=outcome.error)
        return outcome

    def _pov(self) -> tuple[Any, NDArray[Any], NDArray[Any]]:
        """minigrid's egocentric view at the last observation: the grid, the visibility mask, the encoding."""
        if self.game.pov is None:
            raise RuntimeError("no observation yet: reset first")
        return self.game.pov

    def _describe(self) -> str:
        return _text_of(self._pov()[2].tobytes())

    def _text(self, feedback: str) -> str:
        # BALROG's observation body (its short-term context is empty), after an invalid output's feedback
        return "\n".join(part for part in (feedback, "" if self.obs_mode == "image" else self._describe()) if part)

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        info["balrog"] = {"long_term_context": self._describe(), "short_term_context": ""}
        return info

    def _mission(self) -> str:
        return str(self.game.mission)

    def instruction_prompt(self) -> str:
        return instruction_prompt(self._mission())

    def _render(self) -> NDArray[np.uint8]:
        grid, vis_mask, _ = self._pov()
        frame = grid.render(TILE, agent_pos=_AGENT, agent_dir=3, highlight_mask=vis_mask)  # minigrid's get_pov_render
        height, width = self.image_size
        if frame.shape[:2] != (height, width):
            frame = np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.NEAREST))
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _state_key(self) -> str:
        # walls are the task's; what changes is the agent, the objects and, for open, where the door is
        game = self.game
        things = []
        for obj in babyai_oracle.objects_of(game):
            x, y = obj.cur_pos
            where = "held" if obj is game.carrying else f"{x},{y}" if x >= 0 and game.grid.get(x, y) is obj else "gone"
            things.append(f"{obj.color} {obj.type}@{where}")
        door = next((d for row in game.room_grid for room in row for d in room.doors if isinstance(d, Door)), None)
        if door is not None and door.cur_pos is not None:
            things.append(
                f"{'locked' if door.is_locked else 'open' if door.is_open else 'closed'} door@{door.cur_pos[0]},{door.cur_pos[1]}"
            )
        return f"{self.task}|pos={game.agent_pos[0]},{game.agent_pos[1]}|dir={game.agent_dir}|{';'.join(things)}"

    def _frame_key(self) -> Any:
        # the egocentric image is a function of the encoded view alone (minigrid draws tiles from it)
        return (self._pov()[2].tobytes(), self.image_size)

    def _success(self) -> bool:
        return self.won

    def _progress(self) -> float:
        return 1.0 if self.won else 0.0

    def _optimal_steps(self) -> int | None:
        return self.shortest

    def _decision(self) -> Decision:
        # Exact: one search (babyai_oracle.decisions) gives the facts of every state on a shortest
        # plan from here, so along an optimal play the next ones are a look-up; a state off them
        # is searched again. A fact holds whatever the path to its state, so all are kept.
        game = self.game
        if self._scene is None:  # what never changes in the episode, read once
            self._scene, self._objects = babyai_oracle.read(game)[0], babyai_oracle.objects_of(game)
        scene, state = self._scene, babyai_oracle.read_state(game, self._objects)
        facts = self._facts.get(state)
        if facts is None and state not in self._dead:
            found = babyai_oracle.decisions(scene, state)
            if found is None:
                return Decision(None, None, reason="the search gave up (200,000 states) before proving the shortest plan")
            if found:
                self._facts.update(found)
                facts = found[state]
            else:
                self._dead.add(state)
        features = self._features(state)
        if facts is None:
            return Decision(
                None, None, reason="unsolvable from here: no action sequence accomplishes the mission", features=features
            )
        to_go, actions = facts
        if to_go > game.max_steps - game.step_count:
            return Decision(None, None, reason=f"unsolvable from here: {to_go} steps to go, fewer left", features=features)
        return Decision(tuple(ACTIONS[a] for a in actions), to_go, features=features)

    def _features(self, state: babyai_oracle.State) -> dict[str, int | str]:
        """The decision features: whether the agent carries something, and the mission's phase
        (``open``: fetch the key, then open the door; ``putnext``: fetch the object, then place it;
        ``pick_up_seq_go_to``: pick up, then go to)."""
        carry, picked = state[3], state[6]
        phase = {
            "goto": "go to",
            "pickup": "pick up",
            "open": "open door" if carry >= 0 else "fetch key",
            "putnext": "place" if carry >= 0 else "fetch",
            "pick_up_seq_go_to": "go to" if picked else "pick up",
        }[self.task]
        return {"carrying": int(carry >= 0), "phase": phase}

    def oracle_action(self) -> str:
        if not self.plan and not self.won and self.hopeless != (key := self._state_key()):
            self.plan = self._shortest_plan()
            self.hopeless = key if self.plan is None else None
        # After the end, or where nothing can succeed any more (a target box toggled away), any move.
        return ACTIONS[self.plan[0]] if self.plan else ACTIONS[0]
