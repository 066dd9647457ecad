"""BabyAI-Text's ``BabyAI-MixedTrainLocal-v0`` levels as BALROG's minigrid fork generates them.

BALROG (balrog-ai/BALROG af7d1f17, ``balrog/environments/babyai_text/babyai_env.py``) builds the
fork's level (BartekCupial/Minigrid cf73dd14, ``minigrid/envs/babyai/mixed_seq_levels.py``, from
flowersteam/Grounding_LLMs_with_online_RL) with ``num_dists=0``, rebuilding it until the goal kind it
drew at construction (from an unseeded generator) is the task's, and then calls
``env.reset(seed=seed)`` with the seed its evaluator drew. The kind is fixed before the reset seeds
the generator, so the level is a function of the task and that seed alone. :class:`MixedLocalLevel`
is that generator rewritten from what the fork does (the facts below), on minigrid's own room grid,
objects and verifier (minigrid 3.0.0's, whose ``RoomGrid``, ``RoomGridLevel``, verifier and
``MiniGridEnv`` are the fork's base 2.3.1 line for line); it makes the same random draws in the same
order from the generator the reset seeded, so a seed gives BALROG's level, mission and agent.

What the fork's level does, per task (each try clears the rooms first, redrawing the door position
between two rooms, and puts the agent back in the middle of the grid facing right; a try is kept
when every object is reachable and the mission names none of "yellow box", "red key", "red door",
"green ball", "grey door"):

- ``goto``, ``pickup``: one 8x8 room; the agent is placed, then 1 object (``add_distractors``, not
  unique); the mission names a random one of them ("go to the red ball", "pick up the blue key").
- ``putnext``, ``pick_up_seq_go_to``: the same with 2 objects; the first is drawn, then the second,
  redrawn while it has the first's type and colour unless two objects look like that. ``putnext``:
  "put A next to B" (minigrid then rejects the whole layout if A and B are next to each other or
  share a description). ``pick_up_seq_go_to``: "pick up A, then go to B" or "go to B after you pick
  up A", one of the two drawn, both non-strict (reaching B first fails nothing).
- ``open``: two rooms side by side; a door colour among yellow, green, blue, purple; a random room
  and wall side (redrawn until the side has a neighbour) get that colour's locked door, the other
  room the matching key; then the agent is placed outside the locked room, so with the key; the
  mission names the door's colour or not, drawn 50/50 ("open the yellow door", "open the door").

Placement, rejection of spots next to the agent's start and the agent's own placement (not facing
an object) are minigrid's ``RoomGrid`` methods; the whole layout is redrawn (minigrid's
``RoomGridLevel``) when minigrid rejects it. Not reproduced: the fork's rows appended to
``room_grid`` on every try (nothing reads them) and its prints of rejected layouts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.extras import require

require("balrog", "BALROG's BabyAI envs")  # before importing it: an error naming the extra

from minigrid.core.roomgrid import RoomGrid
from minigrid.core.world_object import WorldObj
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel
from minigrid.envs.babyai.core.verifier import (
    AfterInstr,
    BeforeInstr,
    GoToInstr,
    Instr,
    ObjDesc,
    OpenInstr,
    PickupInstr,
    PutNextInstr,
)

TASKS = ("goto", "pickup", "open", "putnext", "pick_up_seq_go_to")
ROOM = 8
OBJECTS = {"goto": 1, "pickup": 1, "putnext": 2, "pick_up_seq_go_to": 2}  # num_dists=0 plus the named ones
LOCKED_DOOR_COLOURS = ("yellow", "green", "blue", "purple")  # the fork leaves out red and grey
EXCLUDED = ("yellow box", "red key", "red door", "green ball", "grey door")  # kept for its test set


class MixedLocalLevel(RoomGridLevel):
    """One task of ``BabyAI-MixedTrainLocal-v0`` with ``num_dists=0`` (see the module docstring).

    ``gen_obs`` also keeps the agent's view (``pov``: the sliced grid, its visibility mask and its
    encoding), which the text and the image are made from, so a step computes it once."""

    def __init__(self, task: str, **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")
        self.task = task
        self.locked_room: Any = None
        self.pov: tuple[Any, np.ndarray, np.ndarray] | None = None
        super().__init__(room_size=ROOM, num_rows=1, num_cols=2 if task == "open" else 1, **kwargs)

    def _gen_grid(self, width: int, height: int) -> None:
        # RoomGridLevel's loop (a fresh room grid, the mission, minigrid's checks), without its prints
        while True:
            try:
                RoomGrid._gen_grid(self, width, height)
                self.gen_mission()
                self.validate_instrs(self.instrs)
            except (RecursionError, RejectSampling):
                continue
            break
        self.surface = self.mission = self.instrs.surface(self)

    def gen_mission(self) -> None:
        while True:
            self._clear_rooms()
            if self.task == "open":
                self.instrs, reachable = self._open_mission()
            else:
                self.place_agent()
                objs = self.add_distractors(num_distractors=OBJECTS[self.task], all_unique=False)
                reachable = self._objects_reachable()
                self.instrs = self._object_mission(objs)
            surface = self.instrs.surface(self)
            if reachable and not any(words in surface for words in EXCLUDED):
                return

    def _clear_rooms(self) -> None:
        """Empty every room, wall it, redraw the door spots between rooms and reset the agent (the
        fork's ``_regen_grid``): the draws of ``RoomGrid._gen_grid`` on the rooms it already has."""
        self.grid.grid = [None] * (self.width * self.height)
        rows, cols = self.num_rows, self.num_cols
        for j in range(rows):
            for i in range(cols):
                room = self.get_room(i, j)
                room.doors, room.door_pos, room.neighbors = [None] * 4, [None] * 4, [None] * 4
                room.locked, room.objs = False, []
                self.grid.wall_rect(*room.top, *room.size)
        for j in range(rows):
            for i in range(cols):
                room = self.get_room(i, j)
                (left, top), (width, height) = room.top, room.size
                if i < cols - 1:  # sides: 0 right, 1 down, 2 left, 3 up
                    room.neighbors[0] = self.get_room(i + 1, j)
                    room.door_pos[0] = (left + width - 1, self._rand_int(top + 1, top + height - 1))
                if j < rows - 1:
                    room.neighbors[1] = self.get_room(i, j + 1)
                    room.door_pos[1] = (self._rand_int(left + 1, left + width - 1), top + height - 1)
                if i > 0:
                    left_room = room.neighbors[2] = self.get_room(i - 1, j)
                    room.door_pos[2] = left_room.door_pos[0]
                if j > 0:
                    upper_room = room.neighbors[3] = self.get_room(i, j - 1)
                    room.door_pos[3] = upper_room.door_pos[1]
        self.agent_pos = (
            (cols // 2) * (self.room_size - 1) + self.room_size // 2,
            (rows // 2) * (self.room_size - 1) + self.room_size // 2,
        )
        self.agent_dir = 0

    def _open_mission(self) -> tuple[Instr, bool]:
        colour = self._rand_elem(LOCKED_DOOR_COLOURS)
        while True:  # a room and a side of it that has a neighbour: the locked door
            i, j, side = self._rand_int(0, self.num_cols), self._rand_int(0, self.num_rows), self._rand_int(0, 4)
            if self.get_room(i, j).neighbors[side] is not None:
                break
        self.locked_room = self.get_room(i, j)
        self.add_door(i, j, side, color=colour, locked=True)
        while True:  # the key, in another room
            i, j = self._rand_int(0, self.num_cols), self._rand_int(0, self.num_rows)
            if self.get_room(i, j) is not self.locked_room:
                break
        self.add_object(i, j, "key", colour)
        self.connect_all()  # the locked door joins the two rooms already: nothing is drawn
        while True:
            self.place_agent()
            if self.room_from_pos(*self.agent_pos) is not self.locked_room:
                break
        reachable = self._objects_reachable()
        return OpenInstr(ObjDesc("door", self._rand_elem([None, colour]))), reachable

    def _object_mission(self, objs: list[WorldObj]) -> Instr:
        first = self._rand_elem(objs)
        if self.task == "goto":
            return GoToInstr(ObjDesc(first.type, first.color))
        if self.task == "pickup":
            return PickupInstr(ObjDesc(first.type, first.color))
        second = self._rand_elem(objs)
        look = (first.type, first.color)
        if sum((o.type, o.color) == look for o in objs) < 2:  # the only one that looks so: another
            while (second.type, second.color) == look:
                second = self._rand_elem(objs)
        if self.task == "putnext":
            return PutNextInstr(ObjDesc(first.type, first.color), ObjDesc(second.type, second.color))
        pick, go = PickupInstr(ObjDesc(first.type, first.color)), GoToInstr(ObjDesc(second.type, second.color))
        return BeforeInstr(pick, go) if self._rand_elem(["Before", "After"]) == "Before" else AfterInstr(go, pick)

    def _objects_reachable(self) -> bool:
        """minigrid's ``check_objs_reachable(raise_exc=False)``, the same answer faster: every
        object (not a wall) is next to a cell the agent can walk to from where it stands, doors
        (locked ones too) walked through."""
        width, height, cells = self.width, self.height, self.grid.grid
        seen = bytearray(width * height)
        stack = [(int(self.agent_pos[0]), int(self.agent_pos[1]))]
        while stack:
            i, j = stack.pop()
            if not (0 <= i < width and 0 <= j < height) or seen[j * width + i]:
                continue
            seen[j * width + i] = 1
            cell = cells[j * width + i]
            if cell is None or cell.type == "door":
                stack += ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1))
        return all(seen[k] for k, cell in enumerate(cells) if cell is not None and cell.type != "wall")

    def gen_obs(self) -> dict[str, Any]:
        grid, vis_mask = self.gen_obs_grid()
        view = grid.encode(vis_mask)
        self.pov = (grid, vis_mask, view)
        return {"image": view, "direction": self.agent_dir, "mission": self.mission}
