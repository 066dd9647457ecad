"""BALROG's BabyAI: its five single-room tasks on ``minigrid``, with its text and egocentric image."""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT, STATE_TO_IDX
from minigrid.envs.babyai.core.roomgrid_level import RoomGridLevel
from minigrid.envs.babyai.core.verifier import (
    BeforeInstr,
    GoToInstr,
    ObjDesc,
    OpenInstr,
    PickupInstr,
    PutNextInstr,
)
from PIL import Image

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog import babyai_planner
from rl4vlm_gym.envs.balrog.instructions import babyai_instructions

if TYPE_CHECKING:
    from numpy.typing import NDArray

# BALROG's language action space, in minigrid's action order (0..5; minigrid's "done" is not offered).
ACTIONS = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
TASKS = ("goto", "pickup", "open", "putnext", "pick_up_seq_go_to")
TILE = 16  # BALROG renders get_pov_render(tile_size=16): 7 cells x 16 px = 112 px
VIEW = 7  # minigrid's agent view: 7x7 cells, the agent at the bottom centre facing up
_STATE_NAMES = {index: name for name, index in STATE_TO_IDX.items()}
_WALL, _DOOR = 2, 4
_SEEN_NOTHING = (0, 1, 2)  # unseen, empty, wall: not objects


class MixedLocalLevel(RoomGridLevel):
    """``BabyAI-MixedTrainLocal-v0`` with one task kind (BabyAI-Text's level, rebuilt here: minigrid
    3.x lacks it): one 8x8 room, two side by side for ``open``, joined by a closed door.

    BALROG makes the mixed level with ``num_dists=0`` and retries construction until the drawn
    kind is its task; the kind is drawn independently of the layout, so building the task's kind
    directly gives the same distribution of episodes. With no distractors the room holds only
    the objects the mission names: one for goto and pickup, two for putnext and
    pick_up_seq_go_to, none but the door for open."""

    def __init__(self, task: str, **kwargs: Any) -> None:
        self.task = task
        super().__init__(room_size=8, num_rows=1, num_cols=2 if task == "open" else 1, **kwargs)

    def gen_mission(self) -> None:
        if self.task == "open":
            self.place_agent(0, 0)
            door, _ = self.add_door(0, 0, 0, locked=False)
            self.instrs = OpenInstr(ObjDesc(door.type, door.color))
            return
        self.place_agent()
        count = 2 if self.task in ("putnext", "pick_up_seq_go_to") else 1
        objs = self.add_distractors(num_distractors=count, all_unique=True)
        self.check_objs_reachable()
        first = ObjDesc(objs[0].type, objs[0].color)
        if self.task == "goto":
            self.instrs = GoToInstr(first)
        elif self.task == "pickup":
            self.instrs = PickupInstr(first)
        elif self.task == "putnext":
            self.instrs = PutNextInstr(first, ObjDesc(objs[1].type, objs[1].color))
        else:
            self.instrs = BeforeInstr(PickupInstr(first), GoToInstr(ObjDesc(objs[1].type, objs[1].color)), strict=True)


def _steps(n: int, word: str) -> str:
    return f"{n} step{'s' if n != 1 else ''} {word}"


def describe_view(view: NDArray[np.uint8], carrying: Any) -> list[str]:
    """BALROG's lines for minigrid's encoded agent view (``view[x, y] = (object, colour, state)``,
    the agent at ``(3, 6)`` facing up), in the format of the minigrid fork it uses: "You carry a
    blue key", "a red ball 1 step left and 3 steps forward", "a wall 2 steps right". Walls are the
    nearest wall cell straight ahead, to the left and to the right, as the fork gives them."""
    lines = []
    if carrying is not None:
        lines.append(f"You carry a {carrying.color} {carrying.type}")
    ax, ay = VIEW // 2, VIEW - 1
    for name, (dx, dy) in (("forward", (0, -1)), ("left", (-1, 0)), ("right", (1, 0))):
        x, y, n = ax + dx, ay + dy, 1
        while 0 <= x < VIEW and 0 <= y < VIEW and view[x, y, 0] != 0:
            if view[x, y, 0] == _WALL:
                lines.append(f"a wall {_steps(n, name)}")
                break
            x, y, n = x + dx, y + dy, n + 1
    for y in range(VIEW):
        for x in range(VIEW):
            kind = int(view[x, y, 0])
            if kind in _SEEN_NOTHING or (x, y) == (ax, ay):
                continue
            obj = IDX_TO_OBJECT[kind]
            colour = IDX_TO_COLOR[int(view[x, y, 1])]
            if kind == _DOOR:
                obj = f"{_STATE_NAMES[int(view[x, y, 2])]} {colour} door"
            else:
                obj = f"{colour} {obj}"
            where = []
            if x != ax:
                where.append(_steps(abs(x - ax), "left" if x < ax else "right"))
            if y != ay:
                where.append(_steps(ay - y, "forward"))
            lines.append(f"a {obj} {' and '.join(where)}")
    return lines


@dataclass(frozen=True)
class BabyAILevel:
    """BALROG's only setting: ``BabyAI-MixedTrainLocal-v0`` with ``num_dists=0``."""

    def describe(self) -> str:
        return "BALROG's setting: one 8x8 room (two for open), no distractors"


class BabyAI(VLMEnv):
    """BALROG's BabyAI tasks (goto, pickup, open, putnext, pick_up_seq_go_to) on ``minigrid``.

    ## Description
    BALROG plays five tasks of BabyAI-Text's ``BabyAI-MixedTrainLocal-v0`` with ``num_dists=0``:
    one 8x8 room (walls included; 6x6 free cells) holding only the objects the mission names, or
    for ``open`` two rooms joined by a closed door. ``minigrid`` plays the rules, builds the
    mission and checks it (its ``RoomGridLevel`` and verifier); the level generator is rebuilt
    here because minigrid 3.x lacks BabyAI-Text's level (see :class:`MixedLocalLevel`).
    Missions read like "go to the red ball", "pick up the blue key", "open the yellow door",
    "put the green box next to the red key", "pick up the purple ball, then go to the grey key"
    (the last fails if you reach the second object first). The oracle plays a shortest plan, found
    by breadth-first search over an exact model of minigrid's rules for these rooms
    (:mod:`~rl4vlm_gym.envs.balrog.babyai_planner`), and ``optimal_steps`` is its length;
    minigrid's ``BabyAIBot`` explores what it has not seen and takes longer in about a quarter of
    the episodes.

    Against BALROG (``balrog-ai/BALROG`` af7d1f17, which uses a minigrid 2.3.1 fork): the rules,
    missions, rewards, step limits, action names and image are minigrid's own; the level generator
    and the text are written here from BALROG's description (one object per named kind, objects
    drawn by minigrid's ``add_distractors``; the fork's description format), not byte-compared
    with the fork, so a seed gives another room than BALROG's would. BALROG draws an unrecorded
    seed per episode; here ``reset(seed)`` decides the episode.

    ## Observation
    - ``image``: minigrid's egocentric view, ``get_pov_render(tile_size=16)`` as BALROG's VLM
      mode shows it (7x7 cells, 112x112 px, the agent at the bottom centre facing up, the object
      it carries drawn under it), resized to ``image_size``.
    - ``text`` (``image+text`` and ``text`` modes): BALROG's description of the same view, one line
      each: "You carry a blue key", the nearest wall ahead and to each side ("a wall 2 steps
      left"), and every visible object or door ("a red ball 1 step left and 3 steps forward",
      "a closed yellow door 3 steps forward"); in ``image`` mode only the step's feedback.
    - ``mission``: minigrid's mission string.
    - ``actions``: ``turn left``, ``turn right``, ``go forward``, ``pick up``, ``drop``, ``toggle``.

    ## Actions
    One of BALROG's six action names (minigrid's actions 0..5). As in minigrid, a move into a wall,
    picking up nothing, dropping onto an occupied cell or toggling nothing is a valid step that
    changes nothing.

    ## Rewards
    ``native``: minigrid's, ``1 - 0.9 * steps / max_steps`` on success, 0 otherwise. BALROG's
    progression is 1 if any step paid a reward above 0 (``info["progress"]``).

    ## Levels
    0: BALROG's setting, the only one. Step limits are minigrid's ``navs * 64 * rooms``: 64 for
    goto and pickup, 128 for open, putnext and pick_up_seq_go_to.

    ## Arguments
    - ``task``: one of ``goto``, ``pickup``, ``open``, ``putnext``, ``pick_up_seq_go_to`` (set by
      the registered id).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 112x112, BALROG's), ``reward_variant``, ``action_format``, ``action_match``,
      ``render_mode``.

    ## Version History
    - v0: initial release (minigrid 3.0.0).
    """

    LEVELS: ClassVar[tuple[BabyAILevel, ...]] = (BabyAILevel(),)
    REWARDS: ClassVar = {"native": {"move": 0.0, "goal": 1.0, "fail": 0.0, "invalid": 0.0}}
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
        # minigrid prints each rejected layout ("Sampling rejected: ..."); a library keeps stdout clean.
        with contextlib.redirect_stdout(io.StringIO()):
            self.game.reset(seed=int(self.np_random.integers(2**31)))
        self.won = self.failed = False
        self.plan = self._shortest_plan()
        self.shortest = None if self.plan is None else len(self.plan)
        self.hopeless: str | None = None  # the last state found to have no plan (a target box toggled away)

    def _shortest_plan(self) -> list[int] | None:
        return babyai_planner.shortest_plan(*babyai_planner.read(self.game))

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        index = ACTIONS.index(action)
        _, reward, terminated, _, _ = self.game.step(index)
        # The model is exact, so the rest of the plan stays shortest while it is followed.
        self.plan = self.plan[1:] if self.plan and self.plan[0] == index else None
        if terminated:
            self.won, self.failed = reward > 0, not reward > 0
            if self.won:
                return StepOutcome("goal", terminated=True, feedback="You accomplished the mission.", scale=float(reward))
            return StepOutcome("fail", terminated=True, feedback="You failed the mission.")
        return StepOutcome("move")

    def _view_grid(self) -> NDArray[np.uint8]:
        return self.game.gen_obs()["image"]

    def _describe(self) -> str:
        return "\n".join(describe_view(self._view_grid(), self.game.carrying))

    def _mission(self) -> str:
        return str(self.game.mission)

    def instruction_prompt(self) -> str:
        return babyai_instructions(self._mission())

    def _render(self) -> NDArray[np.uint8]:
        frame = self.game.get_pov_render(tile_size=TILE)
        height, width = self.image_size
        if frame.shape[:2] != (height, width):
            frame = np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.NEAREST))
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _state_key(self) -> str:
        game = self.game
        carrying = "-" if game.carrying is None else f"{game.carrying.color} {game.carrying.type}"
        grid = hashlib.sha256(game.grid.encode().tobytes()).hexdigest()[:16]
        return f"{self.task}|pos={game.agent_pos[0]},{game.agent_pos[1]}|dir={game.agent_dir}|carry={carrying}|grid={grid}"

    def _frame_key(self) -> Any:
        return (self._state_key(), self.image_size)

    def _success(self) -> bool:
        return self.won

    def _progress(self) -> float:
        return 1.0 if self.won else 0.0

    def _optimal_steps(self) -> int | None:
        return self.shortest

    def oracle_action(self) -> str:
        if not self.plan and not (self.won or self.failed) and self.hopeless != (key := self._state_key()):
            self.plan = self._shortest_plan()
            self.hopeless = key if self.plan is None else None
        # After the end, or where nothing can succeed any more (a target box toggled away), any move.
        return ACTIONS[self.plan[0]] if self.plan else ACTIONS[0]
