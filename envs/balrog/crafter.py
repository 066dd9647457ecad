"""BALROG's Crafter: the ``crafter`` package's open world, with BALROG's text, prompt and images.

What BALROG shows was read in balrog-ai/BALROG af7d1f17e0deec3a7a0e334beae5f11b7a21371b:
``balrog/environments/crafter/env.py`` (``describe_frame``, ``describe_env``, ``describe_inventory``,
``describe_status``, ``CrafterLanguageWrapper``), ``balrog/environments/crafter/__init__.py``
(``ACTION_DICT``, ``get_instruction_prompt``), ``balrog/environments/crafter/crafter_env.py`` and
``balrog/config/config.yaml`` (``crafter_kwargs``); and in crafter 1.8.3's ``env.py``, ``engine.py``
(``SemanticView``, ``LocalView._noise``) and ``objects.py``. The code here is ours; the golden
transcripts in ``tests/envs/balrog/golden/crafter/`` (recorded by running BALROG's wrapper) check
it byte for byte.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.extras import require

require("balrog", "BALROG's Crafter env")  # before importing it: an error naming the extra

# crafter builds on gym when it is installed (the nethack extra brings gym 0.23, as BALROG's setup
# does), and gym's import prints a notice that it is unmaintained: not ours to show.
with contextlib.redirect_stderr(io.StringIO()):
    import crafter
    from crafter import constants, objects

from rl4vlm_gym.core import StepOutcome, VLMEnv

if TYPE_CHECKING:
    from numpy.typing import NDArray

# BALROG's action names, in crafter's action order (``constants.actions``: noop, move_left, ...),
# with the descriptions its prompt gives them (``ACTION_DICT``).
ACTION_DESCRIPTIONS = (
    ("Noop", "do nothing"),
    ("Move West", "move west on flat ground"),
    ("Move East", "move east on flat ground"),
    ("Move North", "move north on flat ground"),
    ("Move South", "move south on flat ground"),
    ("Do", "Multiuse action to collect material, drink from lake and hit creature in front"),
    ("Sleep", "sleep when energy level is below maximum"),
    ("Place Stone", "place a stone in front"),
    ("Place Table", "place a table"),
    ("Place Furnace", "place a furnace"),
    ("Place Plant", "place a plant"),
    ("Make Wood Pickaxe", "craft a wood pickaxe with a nearby table and wood in inventory"),
    ("Make Stone Pickaxe", "craft a stone pickaxe with a nearby table, wood, and stone in inventory"),
    ("Make Iron Pickaxe", "craft an iron pickaxe with a nearby table and furnace, wood, coal, and iron in inventory"),
    ("Make Wood Sword", "craft a wood sword with a nearby table and wood in inventory"),
    ("Make Stone Sword", "craft a stone sword with a nearby table, wood, and stone in inventory"),
    ("Make Iron Sword", "craft an iron sword with a nearby table and furnace, wood, coal, and iron in inventory"),
)
ACTIONS = tuple(name for name, _ in ACTION_DESCRIPTIONS)
ACHIEVEMENTS: tuple[str, ...] = tuple(constants.achievements)  # the 22 of crafter's data.yaml
PROMPT_ACHIEVEMENTS = (
    "Collect Wood", "Place Table", "Eat Cow", "Collect Sapling", "Collect Drink", "Make Wood Pickaxe",
    "Make Wood Sword", "Place Plant", "Defeat Zombie", "Collect Stone", "Place Stone", "Eat Plant",
    "Defeat Skeleton", "Make Stone Pickaxe", "Make Stone Sword", "Wake Up", "Place Furnace", "Collect Coal",
    "Collect Iron", "Make Iron Pickaxe", "Make Iron Sword", "Collect Diamond",
)  # the 22 in the order BALROG's prompt lists them (not crafter's)
AREA, VIEW, SIZE = (64, 64), (9, 9), (256, 256)  # BALROG's crafter_kwargs: crafter.Env(area, view, size)
LOCAL = (VIEW[0], VIEW[1] - 2)  # the 9x7 cells of world above the two rows of inventory
DAY = 300  # crafter's day length in steps (Env._update_time)
VITALS = ("health", "food", "drink", "energy")
TEXT_FORMATS = ("balrog", "full")
_FACING = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}
_HIDDEN = {"world", "random", "player"}  # object attributes that are references, not state
_OBJECT_TYPES = (objects.Player, objects.Cow, objects.Zombie, objects.Skeleton, objects.Arrow, objects.Plant)
# BALROG's names of crafter's semantic ids: str() of the materials (None included), then the
# object classes in lower case, in the order of crafter's SemanticView (player, cow, ..., plant).
SEMANTIC_NAMES = (str(None), *constants.materials, *(cls.__name__.lower() for cls in _OBJECT_TYPES))
_SEMANTIC_IDS = {cls: 1 + len(constants.materials) + i for i, cls in enumerate(_OBJECT_TYPES)}
_PLAYER_ID = _SEMANTIC_IDS[objects.Player]
SLEEPING = "You are sleeping, and will not be able take actions until energy is full."
DIED = "You died."
OUT_OF_THE_MAP = "Error, you are out of the map."


def instruction_prompt() -> str:
    """BALROG's Crafter instruction prompt (``get_instruction_prompt``), byte for byte."""
    actions = ",\n".join(f"{name}: {what}" for name, what in ACTION_DESCRIPTIONS)
    achievements = "\n".join(f"{i}. {name}" for i, name in enumerate(PROMPT_ACHIEVEMENTS, 1))
    return (
        "You are an agent playing Crafter. The following are the only valid actions you can take in the game, "
        "followed by a short description of each action:\n\n"
        f"{actions}.\n\n"
        f"These are the game achievements you can get:\n{achievements}\n\n"
        "In a moment I will present a history of actions and observations from the game.\n"
        "Your goal is to get as far as possible by completing all the achievements.\n\n"
        "PLAY!"
    )


def _name(obj: Any) -> str:
    """The name of a world cell's content: the material, or the object's class in lower case."""
    return str(obj) if isinstance(obj, str) or obj is None else type(obj).__name__.lower()


def _where(dx: int, dy: int) -> str:
    """BALROG's ``describe_loc_old``: "3 steps to your north-west" (Manhattan distance; y grows south)."""
    parts = (["north"] if dy < 0 else ["south"] if dy > 0 else []) + (["west"] if dx < 0 else ["east"] if dx > 0 else [])
    distance = abs(dx) + abs(dy)
    return f"{distance} step{'s' if distance > 1 else ''} to your {'-'.join(parts)}"


def _offset(dx: int, dy: int) -> str:
    """An exact offset, "1 step west and 2 steps south" (BALROG's ``_where`` gives only the octant)."""
    parts = [f"{abs(d)} step{'s' if abs(d) > 1 else ''} {word}" for d, word in ((dx, "west" if dx < 0 else "east"), (dy, "north" if dy < 0 else "south")) if d]
    return " and ".join(parts)


def view_cells(world: Any, centre: NDArray[np.int64]) -> list[tuple[int, int, str | None, Any]]:
    """``(dx, dy, material, object)`` of the 9x7 cells the image shows, x outer and y inner;
    ``material`` is ``None`` outside the world."""
    cells = []
    for dx in range(-(LOCAL[0] // 2), LOCAL[0] // 2 + 1):
        for dy in range(-(LOCAL[1] // 2), LOCAL[1] // 2 + 1):
            material, obj = world[centre + np.array((dx, dy))]
            cells.append((dx, dy, material, obj))
    return cells


def semantic_window(world: Any, pos: Any) -> NDArray[np.int64]:
    """The slice of crafter's semantic map that BALROG describes: ``semantic[x-4:x+5, y-3:y+4]``
    around the player, materials overlaid with the creatures' ids. Sliced as BALROG slices, so
    near the world's edge it is cut short (the far side) or empty (a negative start)."""
    x, y = int(pos[0]), int(pos[1])
    hx, hy = VIEW[0] // 2, VIEW[1] // 2
    cols, rows = slice(x - hx, x + hx + 1), slice(y - hy + 1, y + hy)
    window = world._mat_map[cols, rows].astype(np.int64)
    ids = world._obj_map[cols, rows]
    for i, j in zip(*np.nonzero(ids), strict=True):
        window[i, j] = _SEMANTIC_IDS[type(world._objects[ids[i, j]])]
    return window


def describe_view(world: Any, player: Any) -> str:
    """BALROG's ``describe_env`` (unique items, no precise location, nothing skipped): the nearest
    cell of each kind in the 9x7 window (first found, x outer and y inner, wins a tie), kinds in the
    order the scan first meets them, then what the player faces."""
    window = semantic_window(world, player.pos)
    cx, cy = VIEW[0] // 2, VIEW[1] // 2 - 1  # the player's cell while the window is not cut short
    if window.shape[0] > cx and window.shape[1] > cy and window[cx, cy] != _PLAYER_ID:
        raise LookupError("the player is not at the window's centre")  # BALROG asserts it
    fx, fy = cx + int(player.facing[0]), cy + int(player.facing[1])
    if 0 <= fx < window.shape[0] and 0 <= fy < window.shape[1]:
        front = SEMANTIC_NAMES[window[fx, fy]]
    else:
        front = "nothing"
    nearest: dict[str, tuple[int, int, int]] = {}
    for i in range(window.shape[0]):
        for j in range(window.shape[1]):
            index = window[i, j]
            if index == _PLAYER_ID:
                continue
            name, dx, dy = SEMANTIC_NAMES[index], i - cx, j - cy
            distance = abs(dx) + abs(dy)
            if name not in nearest or distance < nearest[name][0]:
                nearest[name] = (distance, dx, dy)
    seen = "\n".join(f"- {name} {_where(dx, dy)}" for name, (_, dx, dy) in nearest.items())
    return (f"You see:\n{seen}" if seen else "You see nothing away from you.") + f"\n\nYou face {front} at your front."


def describe_inventory(player: Any) -> str:
    """BALROG's ``describe_inventory``: the vitals out of 9, then the non-zero inventory."""
    vitals = "\n".join(f"- {name}: {player.inventory[name]}/9" for name in VITALS)
    items = "\n".join(f"- {name}: {n}" for name, n in player.inventory.items() if name not in VITALS and n != 0)
    return f"Your status:\n{vitals}\n\n" + (f"Your inventory:\n{items}" if items else "You have nothing in your inventory.")


def describe_balrog(world: Any, player: Any) -> tuple[str, str]:
    """BALROG's ``(long_term_context, short_term_context)`` (``describe_frame``): the sleeping or
    dead line (followed by three blank lines, as BALROG joins them), the view, the inventory."""
    status = SLEEPING if player.sleeping else DIED if player.health <= 0 else ""
    try:
        view = describe_view(world, player)
    except LookupError:
        return OUT_OF_THE_MAP, describe_inventory(player)
    return (f"{status}\n\n\n\n{view}" if status else view), describe_inventory(player)


def describe_full(world: Any, player: Any, step: int) -> tuple[str, str]:
    """BALROG's text with what it leaves out of the image added, so the text shows what the image
    shows: every cell's material (row by row), every creature, arrow and plant where it is and what
    it stands on, the player's facing (hidden in the image while asleep), and the time of day."""
    long_term, short_term = describe_balrog(world, player)
    if player.sleeping:  # the image draws a sleeping player without a facing
        long_term = long_term.rsplit("\n\nYou face", 1)[0]
    rows = []
    for dy in range(-(LOCAL[1] // 2), LOCAL[1] // 2 + 1):
        row = [world[player.pos + np.array((dx, dy))][0] for dx in range(-(LOCAL[0] // 2), LOCAL[0] // 2 + 1)]
        rows.append(" ".join("void" if material is None else material for material in row))
    things = []
    for dx, dy, material, obj in view_cells(world, player.pos):
        if obj is None or obj is player:
            continue
        name = _name(obj)
        if name == "arrow":
            name = f"arrow flying {_FACING[tuple(obj.facing)]}"
        elif name == "plant":
            name = "ripe plant" if obj.ripe else "sapling"
        things.append(f"- {name} {_offset(dx, dy)}, on {material}")
    you = "You are asleep" if player.sleeping else f"You face {_FACING[tuple(player.facing)]}"
    full = (
        f"{long_term}\n\nThe view, row by row from north to south (9 cells by 7; you are the middle cell of row 4):\n"
        + "\n".join(rows)
        + ("\nCreatures, arrows and plants:\n" + "\n".join(things) if things else "\nNo creatures, arrows or plants in view.")
        + f"\n{you}, standing on {world[player.pos][0]}. Day step {step % DAY} of {DAY}."
    )
    return full, short_term


_RESET_FIELDS = ("_episode", "_step", "_player", "_last_health", "_unlocked")  # what crafter.Env.reset sets, besides its world
_WORLD = object()  # stands for the game's world in a kept copy
_WORLDS: OrderedDict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = OrderedDict()  # (seed, episode, area) -> kept game
_WORLDS_KEPT = 32  # worlds kept per process, the least recently reset dropped first (~0.2 MB each)


def _copy_game(world_state: dict[str, Any], fields: dict[str, Any], world: Any, into: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A deep copy of a world's state and a game's reset fields, in one pass so that what they share
    stays shared (the creatures' ``random`` is the world's); ``world`` becomes ``into`` in the copy
    (the creatures' ``world``)."""
    return copy.deepcopy((world_state, fields), {id(world): into})


class CrafterGame(crafter.Env):
    """``crafter.Env`` with each chunk's creatures in creation order, and BALROG's renders replayed
    without drawing.

    crafter keeps a chunk's creatures in a set, whose order (by object id, a memory address) picks
    the creature that despawns, so one seed played out differently in another process (BALROG's
    too); here they are taken in creation order.

    With ``draw_frames`` False, ``step`` and ``reset`` return no image: the env draws its own frames
    (:meth:`Crafter._render`), and crafter's would be two thirds of a step's time, thrown away. The
    game's random stream still advances as crafter's drawing advances it: at night
    (``LocalView._light``) every render draws one ``uniform(32, 127)`` per pixel of the local view
    for its noise. BALROG renders twice a step (crafter's ``step`` returns an image, then
    ``CrafterLanguageWrapper.process_obs`` renders the one it shows): :meth:`balrog_render` stands
    for the second, keeping the stream's state before it in ``frame_noise`` so that the env's frame
    draws the very noise BALROG's image shows."""

    draw_frames: bool = True
    frame_noise: tuple[Any, ...] | None = None  # the random state BALROG's shown render starts from, at night

    def reset(self) -> Any:
        """crafter's reset; without frames, a world this process generated before is restored
        rather than generated again (crafter's generation is pure Python noise, a third of a second
        a world, and tests and the kit reset one seed many times). The game is kept as crafter's
        reset leaves it, in a deep copy: the world (its random stream, materials, creatures in their
        order) and the reset's fields; a restore copies it back into this game's world, which
        crafter's views hold. At step 0 it is day, so crafter's reset draws nothing after the
        generation (``_obs``). Returns crafter's observation after a generation and None after a
        restore: our env reads the game, never this return value."""
        key = (self._seed, self._episode + 1, tuple(self._area))
        kept = _WORLDS.get(key) if not self.draw_frames else None
        if kept is None:
            obs = super().reset()
            if not self.draw_frames and self._world.daylight >= 0.5:
                fields = {name: getattr(self, name) for name in _RESET_FIELDS}
                _WORLDS[key] = _copy_game(self._world.__dict__, fields, self._world, _WORLD)
                while len(_WORLDS) > _WORLDS_KEPT:
                    _WORLDS.popitem(last=False)
            return obs
        _WORLDS.move_to_end(key)
        world_state, fields = _copy_game(*kept, _WORLD, self._world)
        self._world.__dict__.clear()
        self._world.__dict__.update(world_state)
        self.__dict__.update(fields)
        return None

    def _noise_shape(self) -> tuple[int, int]:
        # engine.LocalView: canvas of grid * unit pixels, unit = size // view (BALROG renders at self._size)
        return tuple(int(n) for n in self._local_view._grid * (self._size // self._view))  # type: ignore[return-value]

    def _obs(self) -> Any:
        if self.draw_frames:
            return super()._obs()
        if self._world.daylight < 0.5:
            self._world.random.uniform(32, 127, self._noise_shape())
        return None

    def balrog_render(self) -> None:
        """Advance the game as BALROG's second render of the step does, drawing nothing."""
        if self._world.daylight < 0.5:
            self.frame_noise = self._world.random.get_state()
            self._world.random.uniform(32, 127, self._noise_shape())
        else:
            self.frame_noise = None

    def _balance_chunk(self, chunk: Any, objs: Any) -> None:
        created = self._world._obj_map  # an object's index in the world's list: its creation order
        super()._balance_chunk(chunk, sorted(objs, key=lambda obj: created[tuple(obj.pos)]))


@dataclass(frozen=True)
class CrafterLevel:
    """BALROG's only setting: a 64x64 world, a 9x9 view, 256x256 images."""

    def describe(self) -> str:
        return "BALROG's setting: a 64x64 world seen 9x7 cells around you, inventory below"


class Crafter(VLMEnv):
    """BALROG's Crafter: survive in a procedurally generated open world and unlock achievements.

    ## Description
    Crafter (Hafner 2022) is a 2-D Minecraft: collect wood, stone, coal, iron and diamonds, place
    tables and furnaces, make pickaxes and swords, eat, drink and sleep to stay alive, and fight
    zombies and skeletons. The ``crafter`` package plays the rules, generates the 64x64 world and
    draws the image; this env adds BALROG's text, prompt and action names. There is no single goal:
    the score is how many of the 22 achievements (``collect_wood``, ``place_table``, ``eat_cow``,
    ``collect_diamond``...) an episode unlocks. The episode ends when the player dies, when all 22
    are unlocked, or at BALROG's limit of 2,000 steps. It is oracle-free (``HAS_ORACLE = False``):
    no solver plays Crafter.

    As BALROG plays it (balrog-ai/BALROG af7d1f17 with crafter 1.8.3, its ``crafter_kwargs``:
    ``crafter.Env(area=(64, 64), view=(9, 9), size=(256, 256))``, unique items, no precise
    location, nothing skipped; its reset takes one ``Noop``). The golden transcripts
    (``tests/envs/balrog/golden/crafter/``: seven worlds, 60 to 305 steps, with sleep, a night,
    deaths and a dawn) match byte for byte: the instruction prompt, every text, the rewards, the
    ends, BALROG's stats and every image. Where it differs from BALROG:

    - The world. BALROG's ``crafter.Env`` draws its world seed from NumPy's global RNG when it is
      built and ignores the episode seed. Here ``reset(seed=s)`` plays the world of
      ``crafter.Env(seed=s)`` (crafter seeds the first world with ``hash((s, 1))``), BALROG's world
      when its env is built with seed ``s``; a reset without a seed draws the next world seed from
      the env's RNG.
    - Despawning. crafter picks the creature that despawns by the order of a set of objects (their
      memory addresses), so BALROG's own runs of one world can part when a chunk holds too many of
      a kind (at dawn, mostly); here creatures are taken in creation order.
    - The end. The episode also ends when all 22 achievements are unlocked (BALROG plays on; its
      progression cannot grow further).

    ## Observation
    - ``image``: crafter's render at ``image_size`` (default 256x256, BALROG's): the 9x7 cells
      around the player, darkened with noise at night and grey while asleep, above two rows of
      inventory with counts. At 256x256 the bytes of BALROG's image: the night's noise is drawn
      from the game's random stream where BALROG's image draws it, and drawing it (or not, in
      ``text`` mode) never changes what happens.
    - ``text`` (``image+text`` and ``text`` modes), ``text_format="balrog"`` (default): BALROG's
      "Current Observation" body, its ``short_term_context`` ("Your status:" with health, food,
      drink and energy out of 9, then "Your inventory:" or "You have nothing in your inventory.")
      and then its ``long_term_context`` (``"You are sleeping, and will not be able take actions
      until energy is full."`` or ``"You died."`` when so, "You see:" and the nearest cell of each
      kind in view, "- tree 3 steps to your north-west", then "You face water at your front."),
      joined by a newline. The image shows more than this text (every cell, not the nearest of a
      kind; the time of day). ``text_format="full"``, an option of ours: the same with what BALROG
      leaves out and the image shows added to the long-term part: the material of every cell in
      view row by row, each creature, arrow and plant with its offset and the material under it,
      the facing (or "You are asleep", and no "You face" line), the step of the 300-step day. In
      ``image`` mode ``text`` holds only the step's feedback.
    - ``mission``: "Survive and unlock as many of Crafter's 22 achievements as you can."
    - ``actions``: BALROG's 17 names: ``Noop``, ``Move West``, ``Move East``, ``Move North``,
      ``Move South``, ``Do``, ``Sleep``, ``Place Stone``/``Table``/``Furnace``/``Plant``,
      ``Make Wood``/``Stone``/``Iron`` ``Pickaxe``/``Sword``.
    - ``info["balrog"]``: BALROG's ``{"long_term_context", "short_term_context"}`` of the state,
      whatever ``text_format``; :meth:`instruction_prompt` is BALROG's prompt and
      :meth:`balrog_stats` its ``get_stats()`` (score, progression, achievements).

    ## Actions
    One of the 17 names. As in crafter, every action is a valid step: one that cannot be done
    (placing a table without wood, moving into water) changes nothing but the time.

    ## Rewards
    ``native``: crafter's (BALROG's), ``+1`` for each step that unlocks an achievement for the
    first time in the episode plus the change in health divided by 10. BALROG's progression is the
    share of the 22 achievements unlocked (``info["progress"]``); ``info["success"]`` only when all
    22 are.

    ## Levels
    0: BALROG's setting, the only one (a 64x64 world, a 9x9 view, 2,000 steps).

    ## Arguments
    - ``text_format``: ``"balrog"`` (default, BALROG's text) or ``"full"`` (see Observation).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 256x256, BALROG's), ``reward_variant``, ``action_format``, ``action_match``,
      ``render_mode``.

    ## Version History
    - v0: initial release (crafter 1.8.3). BALROG's text became the default ``text_format`` (its
      line order, the sleeping and death lines, the window cut at the world's edge), the prompt
      BALROG's, the night's noise BALROG's; the ``full`` text starts with BALROG's.
    """

    LEVELS: ClassVar[tuple[CrafterLevel, ...]] = (CrafterLevel(),)
    # crafter's reward lies in [-0.9, 1.1]: each step reports the event whose table value, scaled
    # by a factor in [0, 1], gives it exactly (scaling by 1/2 and 2 is exact in binary).
    REWARDS: ClassVar = {"native": {"step": 1.0, "hurt": -1.0, "unlock": 2.0, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "Noop"  # BALROG's
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = SIZE
    HAS_ORACLE: ClassVar[bool] = False

    def __init__(self, *, text_format: str = "balrog", **kwargs: Any) -> None:
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"text_format={text_format!r} is unknown; choose one of {TEXT_FORMATS}")
        self.text_format = text_format
        super().__init__(**kwargs)
        # seed and length given: crafter would draw the seed from NumPy's global RNG and end
        # episodes itself at 10,000 steps (the registered TimeLimit of 2,000 is BALROG's)
        self.game = CrafterGame(area=AREA, view=VIEW, size=SIZE, length=None, seed=0)
        self.game.draw_frames = False
        self._world_seed: int | None = None
        self._stats_started = False
        self._moves = 0  # game steps played by this env, all episodes: names the state the frame shows

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self._world_seed = None if seed is None else int(seed)
        return super().reset(seed=seed, options=options)

    def _new_episode(self, config: CrafterLevel) -> None:
        seed = self._world_seed if self._world_seed is not None else int(self.np_random.integers(2**31 - 1))
        self._world_seed = None
        # crafter seeds its k-th world with hash((seed, k)): crafter.Env(seed=seed)'s first world
        self.game._seed, self.game._episode = seed, 0
        self.game.reset()
        self._play(0)  # BALROG's reset takes one Noop
        self._stats_started = False  # BALROG's stats are cleared after that step

    def _play(self, action: int) -> tuple[float, bool]:
        _, reward, done, _ = self.game.step(action)
        self.game.balrog_render()
        self._moves += 1
        self.dead = done
        return float(reward), done

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        reward, done = self._play(ACTIONS.index(action))
        self._stats_started = True
        event = "unlock" if reward > 1.0 else "hurt" if reward < 0.0 else "step"
        scale = abs(reward) / abs(self.REWARDS[self.reward_variant][event])
        return StepOutcome(event, terminated=done or self._success(), scale=scale)

    @property
    def achievements(self) -> tuple[str, ...]:
        """The achievements unlocked in this episode, in crafter's order."""
        return tuple(name for name in ACHIEVEMENTS if self.game._player.achievements[name] > 0)

    def balrog_stats(self) -> dict[str, Any]:
        """BALROG's ``get_stats()`` of the episode so far: ``score`` (the achievements unlocked, an
        int 0 until one is, then a float, as BALROG counts), ``progression`` (score / 22) and
        ``achievements`` (crafter's counts; ``None`` right after reset, as BALROG clears them)."""
        if not self._stats_started:
            return {"score": 0, "progression": 0.0, "achievements": None}
        score = 0 + sum(1.0 for count in self.game._player.achievements.values() if count > 0)
        return {"score": score, "progression": float(score) / 22.0, "achievements": dict(self.game._player.achievements)}

    def balrog_texts(self) -> tuple[str, str]:
        """BALROG's ``(long_term_context, short_term_context)`` of the current state."""
        return describe_balrog(self.game._world, self.game._player)

    def _text(self, feedback: str) -> str:
        parts = [feedback] if feedback else []
        if self.obs_mode != "image":
            if self.text_format == "balrog":
                long_term, short_term = self.balrog_texts()
            else:
                long_term, short_term = describe_full(self.game._world, self.game._player, self.game._step)
            parts += [part for part in (short_term, long_term) if part]
        return "\n".join(parts)

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        long_term, short_term = self.balrog_texts()
        info["balrog"] = {"long_term_context": long_term, "short_term_context": short_term}
        return info

    def _describe(self) -> str:
        """What the image shows, in words (the ``full`` text): the kit checks images against it."""
        long_term, short_term = describe_full(self.game._world, self.game._player, self.game._step)
        return f"{short_term}\n{long_term}"

    def _mission(self) -> str:
        return "Survive and unlock as many of Crafter's 22 achievements as you can."

    def instruction_prompt(self) -> str:
        return instruction_prompt()

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        game, world = self.game, self.game._world
        if game.frame_noise is None:  # daylight: crafter's render draws no noise
            frame = game.render(size=(width, height))
        else:  # the night's noise BALROG's image drew, from a copy of the stream's state at that render
            game_random, noise = world.random, np.random.RandomState()
            noise.set_state(game.frame_noise)
            world.random = noise
            try:
                frame = game.render(size=(width, height))
            finally:
                world.random = game_random
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _frame_key(self) -> Any:
        # The game changes only by its steps (_play), and this count of them never repeats in the
        # env's life: it names the state drawn, so a frame is drawn once however often it is asked
        # for (an invalid step, render()). Rendering is most of a step's time.
        return (self._moves, self.image_size)

    def _state_key(self) -> str:
        game, world = self.game, self.game._world
        digest = hashlib.sha256(world._mat_map.tobytes())
        for obj in world.objects:  # in update order, which the future depends on
            fields = sorted((k, v) for k, v in vars(obj).items() if k not in _HIDDEN)
            digest.update(repr((type(obj).__name__, [(k, np.asarray(v).tolist() if isinstance(v, np.ndarray) else v) for k, v in fields])).encode())
        _, keys, position, *rest = world.random.get_state()
        digest.update(keys.tobytes() + repr((position, *rest, game._step, sorted(game._unlocked), game._last_health)).encode())
        return f"crafter|step={game._step}|{digest.hexdigest()[:32]}"

    def _success(self) -> bool:
        return len(self.achievements) == len(ACHIEVEMENTS)

    def _progress(self) -> float:
        return len(self.achievements) / len(ACHIEVEMENTS)

    def _optimal_steps(self) -> int | None:
        return None
