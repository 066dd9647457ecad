"""BALROG's Crafter: the ``crafter`` package's open world, with BALROG's text of the view and inventory."""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

# crafter builds on gym when it is installed (the nethack extra brings gym 0.23, as BALROG's setup
# does), and gym's import prints a notice that it is unmaintained: not ours to show.
with contextlib.redirect_stderr(io.StringIO()):
    import crafter
    from crafter import constants

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog.instructions import crafter_instructions

if TYPE_CHECKING:
    from numpy.typing import NDArray

# BALROG's action names, in crafter's action order (``constants.actions``: noop, move_left, ...).
ACTIONS = (
    "Noop", "Move West", "Move East", "Move North", "Move South", "Do", "Sleep",
    "Place Stone", "Place Table", "Place Furnace", "Place Plant",
    "Make Wood Pickaxe", "Make Stone Pickaxe", "Make Iron Pickaxe",
    "Make Wood Sword", "Make Stone Sword", "Make Iron Sword",
)
ACHIEVEMENTS: tuple[str, ...] = tuple(constants.achievements)  # the 22 of crafter's data.yaml
AREA, VIEW, SIZE = (64, 64), (9, 9), (256, 256)  # BALROG's crafter.Env(area, view, size)
LOCAL = (VIEW[0], VIEW[1] - 2)  # the 9x7 cells of world above the two rows of inventory
DAY = 300  # crafter's day length in steps (Env._update_time)
VITALS = ("health", "food", "drink", "energy")
TEXT_FORMATS = ("full", "balrog")
_FACING = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}
_HIDDEN = {"world", "random", "player"}  # object attributes that are references, not state


def _name(obj: Any) -> str:
    """BALROG's name for a semantic-map entry: the material, or the object's class in lower case."""
    return str(obj) if isinstance(obj, str) or obj is None else type(obj).__name__.lower()


def _where(dx: int, dy: int) -> str:
    """BALROG's ``describe_loc``: "3 steps to your north-west" (Manhattan distance; y grows south)."""
    parts = (["north"] if dy < 0 else ["south"] if dy > 0 else []) + (["west"] if dx < 0 else ["east"] if dx > 0 else [])
    distance = abs(dx) + abs(dy)
    return f"{distance} step{'s' if distance > 1 else ''} to your {'-'.join(parts)}"


def _offset(dx: int, dy: int) -> str:
    """An exact offset, "1 step west and 2 steps south" (BALROG's ``_where`` gives only the octant)."""
    parts = [f"{abs(d)} step{'s' if abs(d) > 1 else ''} {word}" for d, word in ((dx, "west" if dx < 0 else "east"), (dy, "north" if dy < 0 else "south")) if d]
    return " and ".join(parts)


def view_cells(world: Any, centre: NDArray[np.int64]) -> list[tuple[int, int, str | None, Any]]:
    """``(dx, dy, material, object)`` of the 9x7 cells the image shows, x outer and y inner (the
    order of BALROG's ``np.argmin`` over the semantic map); ``material`` is ``None`` outside the world."""
    cells = []
    for dx in range(-(LOCAL[0] // 2), LOCAL[0] // 2 + 1):
        for dy in range(-(LOCAL[1] // 2), LOCAL[1] // 2 + 1):
            material, obj = world[centre + np.array((dx, dy))]
            cells.append((dx, dy, material, obj))
    return cells


def describe_balrog(world: Any, player: Any) -> tuple[str, str]:
    """BALROG's long-term and short-term text (``describe_env`` and ``describe_inventory`` of its
    Crafter wrapper): the nearest cell of each kind in view, in the order of crafter's semantic ids
    (materials, then player, cow, zombie, skeleton, arrow, plant), what the player faces, its
    vitals out of 9 and its non-zero inventory."""
    order = {name: i for i, name in enumerate([None, *constants.materials])}
    order.update({name: len(order) + i for i, name in enumerate(("player", "cow", "zombie", "skeleton", "arrow", "plant"))})
    nearest: dict[str, tuple[int, int, int]] = {}
    for dx, dy, material, obj in view_cells(world, player.pos):
        if material is None:
            continue  # outside the world: BALROG's slice of the semantic map has no such cells
        name = _name(obj) if obj is not None else _name(material)
        if name == "player":
            continue
        distance = abs(dx) + abs(dy)
        if name not in nearest or distance < nearest[name][0]:
            nearest[name] = (distance, dx, dy)
    seen = sorted(nearest, key=lambda name: order.get(name, len(order)))
    lines = [f"- {name} {_where(dx, dy)}" for name in seen for _, dx, dy in [nearest[name]]]
    material, obj = world[player.pos + np.array(player.facing)]
    front = _name(obj) if obj is not None else _name(material)
    long_term = ("You see:\n" + "\n".join(lines) if lines else "You see nothing away from you.") + f"\n\nYou face {front} at your front."
    vitals = "\n".join(f"- {name}: {player.inventory[name]}/9" for name in VITALS)
    items = "\n".join(f"- {name}: {n}" for name, n in player.inventory.items() if name not in VITALS and n != 0)
    short_term = f"Your status:\n{vitals}\n\n" + (f"Your inventory:\n{items}" if items else "You have nothing in your inventory.")
    return long_term, short_term


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


class CrafterGame(crafter.Env):
    """``crafter.Env`` with each chunk's creatures in creation order. crafter keeps them in a set,
    whose order (by object id, a memory address) picks the creature that despawns, so one seed
    played out differently in another process.

    With ``draw_frames`` False, ``step`` and ``reset`` return no image: the env draws its own frames
    (:meth:`Crafter._render`), and crafter's would be two thirds of a step's time, thrown away. The
    game's random stream still advances as crafter's drawing advances it (the night's noise), so
    the game plays exactly as crafter's."""

    draw_frames: bool = True

    def _obs(self) -> Any:
        if self.draw_frames:
            return super()._obs()
        if self._world.daylight < 0.5:
            # engine.LocalView._noise: one uniform(32, 127) per pixel of the local view
            shape = tuple(int(n) for n in self._local_view._grid * (self._size // self._view))
            self._world.random.uniform(32, 127, shape)
        return None

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
    draws the image; this env adds BALROG's text and action names. There is no single goal: the
    score is how many of the 22 achievements (``collect_wood``, ``place_table``, ``eat_cow``,
    ``collect_diamond``...) an episode unlocks. The episode ends when the player dies, or at
    BALROG's limit of 2,000 steps. It is oracle-free (``HAS_ORACLE = False``): no solver plays Crafter.

    Against BALROG (``balrog-ai/BALROG`` af7d1f17, ``crafter`` 1.8.3 as here): the world, rules,
    rewards, action names, step limit and reset (``crafter.Env(area=64, view=9, size=256)``, then
    one ``Noop``) are BALROG's. BALROG's Crafter ignores the episode seed (its world seed is drawn
    when the env is built); here ``reset(seed)`` decides the world. crafter draws the night's
    noise from the world's random stream, so every render changed the game's future; here the
    noise comes from the view being drawn, so the same view gives the same image and rendering
    (or not, in ``text`` mode) never changes what happens.

    ## Observation
    - ``image``: crafter's render at ``image_size`` (default 256x256, BALROG's): the 9x7 cells
      around the player, darkened (with noise) at night and grey while asleep, above two rows of
      inventory with counts.
    - ``text`` (``image+text`` and ``text`` modes), ``text_format="full"`` (default): BALROG's
      text ("You see:" and the nearest cell of each kind, "- tree 3 steps to your north-west";
      "You face water at your front.") followed by what it leaves out and the image shows: the
      material of every cell in view row by row, each creature, arrow and plant with its offset
      and the material under it, the facing (or "You are asleep"), the step of the 300-step day;
      then BALROG's "Your status:" (health, food, drink, energy out of 9) and inventory.
      ``text_format="balrog"`` gives BALROG's text alone, for numbers comparable with its
      leaderboard (the image then shows more than the text: the nearest cell of each kind only).
      In ``image`` mode only the step's feedback.
    - ``mission``: "Survive and unlock as many of Crafter's 22 achievements as you can."
    - ``actions``: BALROG's 17 names: ``Noop``, ``Move West``, ``Move East``, ``Move North``,
      ``Move South``, ``Do``, ``Sleep``, ``Place Stone``/``Table``/``Furnace``/``Plant``,
      ``Make Wood``/``Stone``/``Iron`` ``Pickaxe``/``Sword``.

    ## Actions
    One of the 17 names. As in crafter, every action is a valid step: one that cannot be done
    (placing a table without wood, moving into water) changes nothing but the time.

    ## Rewards
    ``native``: crafter's, ``+1`` for each achievement unlocked for the first time in the episode
    plus the change in health divided by 10. BALROG's progression is the share of the 22
    achievements unlocked (``info["progress"]``); ``info["success"]`` only when all 22 are, which
    ends the episode.

    ## Levels
    0: BALROG's setting, the only one (a 64x64 world, a 9x9 view, 2,000 steps).

    ## Arguments
    - ``text_format``: ``"full"`` (default) or ``"balrog"`` (see Observation).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 256x256, BALROG's), ``reward_variant``, ``action_format``, ``action_match``,
      ``render_mode``.

    ## Version History
    - v0: initial release (crafter 1.8.3).
    """

    LEVELS: ClassVar[tuple[CrafterLevel, ...]] = (CrafterLevel(),)
    REWARDS: ClassVar = {"native": {"step": 1.0, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "Noop"  # BALROG's
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = SIZE
    HAS_ORACLE: ClassVar[bool] = False

    def __init__(self, *, text_format: str = "full", **kwargs: Any) -> None:
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"text_format={text_format!r} is unknown; choose one of {TEXT_FORMATS}")
        self.text_format = text_format
        super().__init__(**kwargs)
        # seed and length given: crafter would draw the seed from NumPy's global RNG and end
        # episodes itself at 10,000 steps (the registered TimeLimit of 2,000 is BALROG's)
        self.game = CrafterGame(area=AREA, view=VIEW, size=SIZE, length=None, seed=0)
        self.game.draw_frames = False

    def _new_episode(self, config: CrafterLevel) -> None:
        # crafter seeds each world with hash((seed, episode)); setting both makes reset(seed) decide it
        self.game._seed, self.game._episode = int(self.np_random.integers(2**31 - 1)), 0
        self.game.reset()
        self.game.step(0)  # BALROG's reset takes one Noop
        self.dead = False

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        _, reward, done, _ = self.game.step(ACTIONS.index(action))
        self.dead = done
        return StepOutcome("step", terminated=done or self._success(), scale=float(reward))

    @property
    def achievements(self) -> tuple[str, ...]:
        """The achievements unlocked in this episode, in crafter's order."""
        return tuple(name for name in ACHIEVEMENTS if self.game._player.achievements[name] > 0)

    def _texts(self) -> tuple[str, str]:
        world, player = self.game._world, self.game._player
        if self.text_format == "balrog":
            return describe_balrog(world, player)
        return describe_full(world, player, self.game._step)

    def _describe(self) -> str:
        return "\n\n".join(self._texts())

    def _mission(self) -> str:
        return "Survive and unlock as many of Crafter's 22 achievements as you can."

    def instruction_prompt(self) -> str:
        return crafter_instructions(ACHIEVEMENTS)

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        world = self.game._world
        game_random = world.random
        # The night's noise from the view itself (not the game's random stream): see Description.
        view = self._full_view()
        world.random = np.random.RandomState(int.from_bytes(hashlib.sha256(view.encode()).digest()[:4], "little"))
        try:
            frame = self.game.render(size=(width, height))
        finally:
            world.random = game_random
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _full_view(self) -> str:
        """The full text, whatever ``text_format``: it determines the image (frame key, noise seed)."""
        return "\n\n".join(describe_full(self.game._world, self.game._player, self.game._step))

    def _frame_key(self) -> Any:
        return (self._full_view(), self.image_size)

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
