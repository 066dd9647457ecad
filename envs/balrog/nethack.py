"""BALROG's NetHack and MiniHack: NLE 0.9.0 (``balrog-nle``) played as BALROG's wrapper stack plays it.

One base class, :class:`NLEGame`, plays any NLE env (NetHackChallenge-v0, or a MiniHack task built
by ``minihack`` 0.1.6 on the same NLE) the way BALROG's stack does (``balrog-ai/BALROG`` af7d1f17:
``balrog/environments/nle/`` and ``wrappers/nle_timelimit.py``): each action name becomes the NLE
action the ``balrog-nle`` language wrapper maps it to; ``--More--`` is dismissed with NLE's "more"
action while the message shows one (BALROG's ``AutoMore``: each dismissal is a step of the NLE env,
its reward added, its message appended); the text is BALROG's (LLM "hybrid" mode or VLM mode,
``text_format``); the episode is truncated when the NLE env aborts (its step budget, and
NetHackChallenge's no-progress timeout: BALROG's ``NLETimeLimit``). :class:`NetHack` adds BALROG's
NLE progression; :mod:`rl4vlm_gym.envs.balrog.minihack` the MiniHack tasks.

Everything here was written from reading BALROG's sources and checked against recordings of them
(``tests/envs/balrog/golden/nle``, ``.../minihack``): no code of BALROG's is in this module; its
prompt texts and its progression table (``assets/nle_progression.json``) are, as data.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import warnings
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.extras import require

require("nethack", "BALROG's NetHack and MiniHack envs")  # before importing it: an error naming the extra

# NLE 0.9 is built on gym 0.23, whose import prints a notice that gym is unmaintained: it concerns
# gym itself, which only NLE's own classes use here (our envs are Gymnasium's). NLE imports
# pkg_resources, which warns that it is deprecated (setup.cfg pins a setuptools that has it).
with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import gym  # noqa: F401
    from nle import nethack as nle_consts
    from nle import nle_language_obsv
    from nle.env import tasks
    from nle.language_wrapper.wrappers.nle_language_wrapper import NLELanguageWrapper
    from nle.nethack import actions as nethack_actions

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog.nethack_clock import pinned_clock
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

TILE = 16  # BALROG's VLM image: NetHack's 16x16 tiles, one per map cell (E/nle/render_rgb.py)
MAP_ROWS, MAP_COLS = 21, 79  # the glyph map
ROWS, COLS = 24, 80  # the tty
SIDE_WIDTH = 480  # image mode: the message and inventory column right of the screen
SIDE_LINE = 12  # px per line of that column: 32 lines fit beside the 24 tty rows
SCREEN_SIZE = (ROWS * TILE, COLS * TILE + SIDE_WIDTH)  # image mode's default size
TEXT_FORMATS = ("hybrid", "vlm")  # BALROG's LLM mode's text, its VLM mode's
SEED_MODULUS = 2**64  # NetHack's seeds are unsigned 64-bit: a reset seed is taken modulo this
_NEWLINES = np.full((ROWS - 1, 1), ord("\n"), np.uint8)  # the end of each row of the map: BALROG's text of the tty
SCORE_FILES = ("perm", "record", "logfile", "xlogfile")  # NLE's, in the game's own folder (no savedir)
_ABORTED = -1  # NLE's StepStatus.ABORTED: its step budget or NetHackChallenge's no-progress timeout


@cache
def _glyph_tiles() -> NDArray[np.uint8]:
    """The 16x16 tile of every glyph: NetHack's tile set as minihack ships it (``glyph2tile``); the
    same tiles and mapping as BALROG's ``render_rgb`` (its tiles.pkl and table, compared in the
    golden recordings by the images' hashes)."""
    from minihack.tiles import glyph2tile

    # minihack's GlyphMapper reads the same file but leaves it open (a ResourceWarning)
    with (resources.files("minihack") / "tiles" / "tiles.pkl").open("rb") as file:
        tiles = pickle.load(file)  # {tile id: uint8[16, 16, 3]}; a file of an installed package
    atlas = np.stack([np.asarray(tiles[i], dtype=np.uint8) for i in range(len(tiles))])
    return np.ascontiguousarray(atlas[np.asarray(glyph2tile)])


def render_tiles(glyphs: NDArray[np.int16]) -> NDArray[np.uint8]:
    """BALROG's image of a glyph map: each glyph's tile, rows of tiles, ``uint8[21*16, 79*16, 3]``."""
    rows, cols = glyphs.shape
    tiles = _glyph_tiles()[glyphs]  # (rows, cols, 16, 16, 3)
    return tiles.transpose(0, 2, 1, 3, 4).reshape(rows * TILE, cols * TILE, 3)


# NetHack's 16 tty colours (the curses palette NLE's tty_colors index); 0 (no colour) is drawn grey.
_PALETTE = np.array(
    [
        (170, 170, 170), (170, 0, 0), (0, 170, 0), (170, 85, 0), (0, 0, 170), (170, 0, 170), (0, 170, 170), (170, 170, 170),
        (85, 85, 85), (255, 85, 85), (85, 255, 85), (255, 255, 85), (85, 85, 255), (255, 85, 255), (85, 255, 255), (255, 255, 255),
    ],
    dtype=np.uint8,
)  # fmt: skip


def _colour(index: int) -> tuple[int, ...]:
    return tuple(int(c) for c in _PALETTE[index])


@cache
def _text_cell(char: int, colour: int) -> NDArray[np.uint8] | None:
    """The 16x16 cell of a tty character as :func:`draw_screen` draws it on black (13 px, 2 px from the
    cell's left), or None when the glyph reaches out of its cell (drawn on a larger black page to see)."""
    page = Image.new("RGB", (3 * TILE, 3 * TILE))
    ImageDraw.Draw(page).text((TILE + 2, TILE), chr(char), fill=_colour(colour), font=font(13))
    pixels = np.asarray(page)
    cell = pixels[TILE : 2 * TILE, TILE : 2 * TILE]
    if int(pixels.astype(np.int64).sum()) != int(cell.astype(np.int64).sum()):
        return None
    cell = cell.copy()
    cell.flags.writeable = False
    return cell


def draw_screen(screen: dict[str, Any], message: str) -> NDArray[np.uint8]:
    """Image mode's picture (BALROG has no image-only mode): the tty screen with the map in 16x16
    tiles, and the step's message and the inventory in a column beside it, ``uint8[384, 1760, 3]``.

    Row 0 (the message line), rows 22-23 (the status lines) and the box of map cells where the
    screen does not show the map (a menu drawn over it) are the tty's characters in its colours;
    the cursor is outlined. The image thus shows what BALROG's text says."""
    height, width = SCREEN_SIZE
    canvas = np.zeros((height, width, 3), np.uint8)
    tty, colours = screen["tty_chars"], screen["tty_colors"]
    tiles = _glyph_tiles()[screen["glyphs"]]  # (21, 79, 16, 16, 3)
    on_map = tty[1 : 1 + MAP_ROWS, :MAP_COLS] == screen["chars"]
    if not on_map.all():  # a window over the map (a menu, a text page): all of its box is text, even
        rows, cols = np.nonzero(~on_map)  # where a character happens to equal the map's ("-" of "a - ...")
        on_map[rows.min() : rows.max() + 1, cols.min() :] = False
    tiles[~on_map] = 0
    canvas[TILE : TILE * (1 + MAP_ROWS), : TILE * MAP_COLS] = tiles.transpose(0, 2, 1, 3, 4).reshape(MAP_ROWS * TILE, MAP_COLS * TILE, 3)
    text_cells = [
        (row, col, int(tty[row, col]), int(colours[row, col]) & 15)
        for row, col in zip(*np.nonzero(tty != 32))
        if not (1 <= row <= MAP_ROWS and col < MAP_COLS and on_map[row - 1, col])
    ]  # row by row, as drawn
    cells = [_text_cell(char, colour) for _, _, char, colour in text_cells]
    inside = [cell for cell in cells if cell is not None]
    if len(inside) == len(cells):
        # every glyph inside its own cell, each cell black below it: drawn cell by cell, the same pixels
        for (row, col, _, _), cell in zip(text_cells, inside):
            canvas[row * TILE : (row + 1) * TILE, col * TILE : (col + 1) * TILE] = cell
    image = Image.fromarray(canvas)
    draw = ImageDraw.Draw(image)
    if len(inside) < len(cells):  # a glyph that reaches into another cell: drawn in order
        typeface = font(13)
        for row, col, char, colour in text_cells:
            draw.text((col * TILE + 2, row * TILE), chr(char), fill=_colour(colour), font=typeface)
    cursor_row, cursor_col = (int(v) for v in screen["tty_cursor"])
    box = (cursor_col * TILE, cursor_row * TILE, cursor_col * TILE + TILE - 1, cursor_row * TILE + TILE - 1)
    draw.rectangle(box, outline=(255, 255, 0))
    items = [
        (chr(int(letter)), bytes(line).split(b"\x00")[0].decode("latin-1").strip())
        for letter, line in zip(screen["inv_letters"], screen["inv_strs"])
        if letter
    ]
    lines = [line for line in message.split("\n") if line.strip()] + ["inventory:"] + [f"{letter}: {what}" for letter, what in items]
    small = font(10)
    for i, line in enumerate(lines[: height // SIDE_LINE]):
        draw.text((COLS * TILE + 8, i * SIDE_LINE), line[:80], fill=(220, 220, 220), font=small)
    return to_array(image)


# The language wrapper's names of NLE actions ("north", "far east", "esc"): its map from NLE's
# action enums to names and keys. Enums of equal value (Command.OVERVIEW and
# WizardCommand.WIZWHERE are both ^o) are one key of that dict, as in the wrapper.
ACTION_MAP: dict[Any, list[str]] = NLELanguageWrapper.all_nle_action_map


def action_name(action: Any) -> str:
    """The language wrapper's name of an NLE action ("north", "far east", "esc")."""
    return ACTION_MAP[action][0]


def language_action_indices(actions: tuple[Any, ...]) -> dict[str, int]:
    """Every string the language wrapper plays on an NLE env with ``actions``, and the index into
    ``actions`` it plays: each name and key of every action the env has ("north", "k", "apply",
    "a"...), a later action's string replacing an earlier one's, as the wrapper builds its map."""
    table: dict[str, int] = {}
    for enum, strings in ACTION_MAP.items():
        if enum in actions:
            for string in strings:
                table[string] = actions.index(enum)
    return table


@cache
def nethack_action_space() -> tuple[str, ...]:
    """BALROG's NetHack action list (``NLELanguageWrapper.create_action_space``): the names of the
    language wrapper's actions that are among NLE's ``USEFUL_ACTIONS`` (by value), then the keys
    a-z, A-Z, 0-9 and 00-99 (which BALROG's check accepts and its language wrapper cannot play)."""
    useful = [strings[0] for enum, strings in ACTION_MAP.items() if enum in nethack_actions.USEFUL_ACTIONS]
    keys = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    return tuple(useful + keys + [str(i) for i in range(10)] + [f"{i:02d}" for i in range(100)])


# BALROG's NetHack prompt (E/nle/__init__.py: ACTIONS and get_instruction_prompt), verbatim.
NLE_ACTION_DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    ("north", "move north"),
    ("east", "move east"),
    ("south", "move south"),
    ("west", "move west"),
    ("northeast", "move northeast"),
    ("southeast", "move southeast"),
    ("southwest", "move southwest"),
    ("northwest", "move northwest"),
    ("far north", "move far north"),
    ("far east", "move far east"),
    ("far south", "move far south"),
    ("far west", "move far west"),
    ("far northeast", "move far northeast"),
    ("far southeast", "move far southeast"),
    ("far southwest", "move far southwest"),
    ("far northwest", "move far northwest"),
    ("up", "go up a staircase"),
    ("down", "go down a staircase (tip: you can only go down if you are standing on the stairs)"),
    ("wait", "rest one move while doing nothing"),
    ("more", "display more of the message (tip: ONLY ever use when current message ends with --More--)"),
    ("annotate", "leave a note about the level"),
    ("apply", "apply (use) a tool"),
    ("call", "name a monster or object, or add an annotation"),
    ("cast", "cast a spell"),
    ("close", "close an adjacent door"),
    ("open", "open an adjacent door"),
    ("dip", "dip an object into something"),
    ("drop", "drop an item"),
    ("droptype", "drop specific item types (specify in the next prompt)"),
    ("eat", "eat something (tip: replenish food when hungry)"),
    ("esc", "exit menu or message"),
    ("engrave", "engrave writing on the floor (tip: Elbereth)"),
    ("enhance", "advance or check weapons skills"),
    ("fire", "fire ammunition from quiver"),
    ("fight", "fight a monster (even if you only guess one is there)"),
    ("force", "force a lock"),
    ("inventory", "show your inventory"),
    ("invoke", "invoke "),
    ("jump", "jump to a location"),
    ("kick", "kick an enemy or a locked door or chest"),
    ("look", "look at what is under you"),
    ("loot", "loot a box on the floor"),
    ("monster", "use a monster's special ability (when polymorphed)"),
    ("offer", "offer a sacrifice to the gods (tip: on an aligned altar)"),
    ("overview", "display an overview of the dungeon"),
    ("pay", "pay your shopping bill"),
    ("pickup", "pick up things at the current location"),
    ("pray", "pray to the gods for help"),
    ("puton", "put on an accessory"),
    ("quaff", "quaff (drink) something"),
    ("quiver", "select ammunition for quiver"),
    ("read", "read a scroll or spellbook"),
    ("remove", "remove an accessory"),
    ("rub", "rub a lamp or a stone"),
    ("search", "search for hidden doors and passages"),
    ("swap", "swap wielded and secondary weapons"),
    ("takeoff", "take off one piece of armor"),
    ("takeoffall", "take off all armor"),
    ("teleport", "teleport to another level (if you have the ability)"),
    ("throw", "throw something (e.g. a dagger or dart)"),
    (
        "travel",
        "travel to a specific location on the map (tip: in the next action, specify > or < for stairs, "
        "{ for fountain, and _ for altar)",
    ),
    ("twoweapon", "toggle two-weapon combat"),
    ("untrap", "untrap something"),
    ("wear", "wear a piece of armor"),
    ("wield", "wield a weapon"),
    ("wipe", "wipe off your face"),
    ("zap", "zap a wand"),
    ("minus", "-"),
    ("space", " "),
    ("apos", "'"),
    *((str(i), str(i)) for i in range(10)),
)
NLE_TIPS = (
    '- When the message asks for a completion, such as: "What do you want to eat? [d or ?*]", you should respond '
    "with a single character corresponding to the item you want to eat/use.\n"
    '    - For example, "What do you want to eat? [dgh or ?*]" -> Possible answers are "d", "g", or "h" to eat the '
    "associated food.\n"
    '- When the message asks for a direction, such as: "In what direction?" you should respond with a direction.\n'
    '- When the message has --More-- at the end, your next action should be "more" to see the rest of the message.\n'
    "- Explore the environment to find the stairs down to the next level.\n"
    "- Always carefully read the last message to understand the current state of the game and decide your next "
    "action accordingly.\n"
    "- If you keep moving in the same direction, you will eventually hit a wall and stop moving. Your message might "
    'be: "It\'s solid stone", or "It\'s a wall". Change your action to move in another direction to continue '
    "exploring the environment.\n"
    "- Read the language observation carefully and look at ascii map or image observation provided to decide the "
    "next action to take and where to move next.\n"
    "- You can attack monsters by moving into them."
)


def described_actions(actions: tuple[tuple[str, str], ...]) -> str:
    """BALROG's list of actions in its prompts: "name: description" lines joined by ",\\n"."""
    return ",\n".join(f"{name}: {description}" for name, description in actions)


def nle_instruction_prompt() -> str:
    """BALROG's NetHack instruction prompt (``get_instruction_prompt``), byte for byte."""
    return (
        "You are an agent playing NetHack. The following are the possible actions you can take in the game, "
        "followed by a short description of each action:\n\n"
        f"{described_actions(NLE_ACTION_DESCRIPTIONS)}.\n\n"
        f"Tips:\n{NLE_TIPS}\n\n"
        "In a moment I will present a history of actions and observations from the game.\n"
        "Your goal is to get as far as possible in the game.\n\n"
        "PLAY!"
    )


@cache
def _progression_table() -> dict[str, float]:
    """BALROG's NLE achievements: "Dlvl:N" (N <= 50) and "Xp:N" (N <= 30) -> the share of human
    games won after reaching it (assets/nle_progression.json, from BALROG's achievements.json)."""
    data = json.loads((resources.files("rl4vlm_gym.envs.balrog") / "assets" / "nle_progression.json").read_text("utf-8"))
    return {f"{kind}:{level}": value for kind in ("Dlvl", "Xp") for level, value in data[kind].items()}


def end_reason(tty_chars: NDArray[np.uint8], status_name: str) -> str:
    """BALROG's ``end_reason`` of an ended NetHack game, read from the screen as BALROG reads it
    (E/nle/progress.py ``Progress._get_end_reason``): the screen's bytes as UTF-8 (invalid bytes
    dropped), "You made the top ten list!" removed, split into words; the words from the 8th
    (the 9th when the 8th starts with "Agent") to the last two; of their first sentence the words
    before "in"; the status name first: "DEATH: killed by a jackal." (ABORTED: the words of
    whatever screen was shown)."""
    words = bytes(tty_chars.reshape(-1)).decode(errors="ignore").replace("You made the top ten list!", "").split()
    start = 8 if len(words) > 7 and words[7].startswith("Agent") else 7
    sentences = " ".join(words[start:-2]).split(".")
    first = sentences[0].split()
    head = " ".join(first[: first.index("in")] if "in" in first else first)
    rest = ".".join(sentences[1:]).strip()
    return f"{status_name}: {head}. {rest}".strip()


@dataclass
class NLEProgress:
    """BALROG's NetHack statistics (``get_stats()``: E/nle/progress.py ``Progress``), updated after
    every step, not at reset: the running return, the bottom line's score, depth, gold,
    experience level and turn, the Dlvl and Xp keys seen (those in the table, in order of first
    sight), the key whose table value last raised the progression, and, once the game ends,
    ``end_reason``."""

    episode_return: float = 0.0
    score: int = 0
    depth: int = 1
    gold: int = 0
    experience_level: int = 1
    time: int = 0
    dlvl_list: list[str] = field(default_factory=list)
    xplvl_list: list[str] = field(default_factory=list)
    highest_achievement: str | None = None
    progression: float = 0.0
    end_reason: str | None = None

    def update(self, blstats: NDArray[Any], tty_chars: NDArray[np.uint8], reward: float, done: bool, status_name: str) -> None:
        self.episode_return += reward
        self.score = int(blstats[nle_consts.NLE_BL_SCORE])
        self.depth = int(blstats[nle_consts.NLE_BL_DEPTH])
        self.gold = int(blstats[nle_consts.NLE_BL_GOLD])
        self.experience_level = int(blstats[nle_consts.NLE_BL_XP])
        self.time = int(blstats[nle_consts.NLE_BL_TIME])
        if done:
            self.end_reason = end_reason(tty_chars, status_name)
        table = _progression_table()
        for key, seen in ((f"Xp:{self.experience_level}", self.xplvl_list), (f"Dlvl:{self.depth}", self.dlvl_list)):
            if key not in seen and key in table:
                seen.append(key)
                if table[key] > self.progression:
                    self.progression, self.highest_achievement = table[key], key

    def stats(self) -> dict[str, Any]:
        return {name: list(value) if isinstance(value, list) else value for name, value in vars(self).items()}


@dataclass(frozen=True)
class NLELevel:
    """The one setting of a BALROG NLE task."""

    name: str

    def describe(self) -> str:
        return self.name


class NLEGame(VLMEnv):
    """Shared rules of BALROG's NLE envs; see :class:`NetHack` and ``MiniHack`` for the docs.

    Subclasses set ``_make_game()`` (the NLE env, made once), ``_action_space()`` (BALROG's names),
    ``_mission()``, ``instruction_prompt()``, ``_success()``, ``_progress()``, and the statistics
    (``_reset_stats``, ``_update_stats``, :meth:`balrog_stats`).
    """

    # NLE's reward as it is, as an event and a scale: "gain" and "loss" are worth REWARD_BOUND, and
    # a step pays its reward's size over the bound (subclasses set the bound: a power of two, so
    # the reward comes back exact).
    REWARD_BOUND: ClassVar[float] = 1.0
    REWARDS: ClassVar = {"native": {"step": 0.0, "gain": 1.0, "loss": -1.0, "invalid": 0.0}}
    HAS_ORACLE: ClassVar[bool] = False
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (MAP_ROWS * TILE, MAP_COLS * TILE)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    MAX_TEXT_LENGTH: ClassVar[int] = 65536  # a full screen, a long message and a long inventory

    def __init__(self, *, text_format: str = "hybrid", **kwargs: Any) -> None:
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"text_format={text_format!r} is unknown; choose one of {TEXT_FORMATS}")
        self.text_format = text_format
        if kwargs.get("obs_mode") == "image" and kwargs.get("image_size") is None:
            kwargs["image_size"] = SCREEN_SIZE  # the picture of the whole screen (draw_screen)
        super().__init__(**kwargs)
        self.language = nle_language_obsv.NLELanguageObsv()
        self.game = self._new_game()
        self.names = self._action_space()
        self.playable = language_action_indices(tuple(self.game.actions))
        self.more_index = self._more_index()
        self.reset_seed: int | None = None
        self.seed_used = 0
        self.history: list[int] = []  # NLE action indices since reset: a pickled env replays them
        self.long_term = self.short_term = self.message = ""
        self.glyphs = np.zeros((MAP_ROWS, MAP_COLS), np.int16)
        self.screen: dict[str, Any] = {}  # image mode: what draw_screen shows
        self.last_reward = 0.0
        self.done = False
        self.aborted = False

    # NLE ----------------------------------------------------------------------------------------

    def _new_game(self) -> Any:
        # NetHack reads the wall clock for its calendar (moon, Friday 13th, night): the game loads a
        # copy of NLE's library with the clock pinned, so the seed alone decides it (nethack_clock)
        with pinned_clock():
            return self._make_game()

    def _make_game(self) -> Any:
        raise NotImplementedError

    def _action_space(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _more_index(self) -> int | None:
        more = nethack_actions.MiscAction.MORE
        return self.game.actions.index(more) if more in self.game.actions else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start a game; ``seed`` is NetHack's seed, as in BALROG (see the class docstring)."""
        self.reset_seed = seed
        return super().reset(seed=seed, options=options)

    def _new_episode(self, config: NLELevel) -> None:
        # BALROG's reset(seed=s) seeds NetHack's core RNG with s (NLE.seed(core=s)); its display RNG
        # from the system's entropy, here from s too (as MiniHack seeds its fixed levels). Unseeded
        # resets draw the seed from the env's RNG, below 2**32 as BALROG's seeds are.
        seed = self.reset_seed if self.reset_seed is not None else int(self.np_random.integers(2**32))
        self.reset_seed = None
        self.seed_used = seed % SEED_MODULUS
        self._start()

    def _prepare(self) -> None:
        """Set up the next game before NLE's reset (MiniHack's Boxoban picks its level here)."""

    def _start(self) -> None:
        self._prepare()
        # BALROG makes a fresh env per episode; ours lives on, so NetHack's score files (the top-ten
        # list shown when a game ends) are emptied as a fresh env's are
        for name in SCORE_FILES:
            with open(os.path.join(self.game.nethack._vardir, name), "wb"):
                pass
        self.game.seed(self.seed_used, self.seed_used, reseed=False)
        obs = self.game.reset()
        self.history, self.last_reward, self.done, self.aborted = [], 0.0, False, False
        self._reset_stats()
        self._observe(obs, self._message(obs))

    def _message(self, obs: dict[str, Any]) -> str:
        return self.language.text_message(obs["tty_chars"]).decode("latin-1")

    def _actions(self) -> tuple[str, ...]:
        return self.names

    def _play(self, index: int) -> tuple[float, bool]:
        """One BALROG step: the action, then "more" while the message shows --More-- (AutoMore)."""
        self.history.append(index)
        obs, reward, done, info = self.game.step(index)
        message = self._message(obs)
        while "--More--" in message and not done and self.more_index is not None:
            message = message.replace("--More--", "\n")
            obs, more_reward, done, info = self.game.step(self.more_index)
            message += self._message(obs)
            reward += more_reward
        status = info["end_status"]
        self.aborted = done and int(status) == _ABORTED
        self.done = self.done or done
        self._update_stats(obs, reward, self.done, status)
        self._observe(obs, message)
        return reward, done

    def _apply(self, action: str) -> StepOutcome:
        index = self.playable.get(action)
        if index is None:  # "00".."99": listed by BALROG, refused by its language wrapper (BALROG's episode errors)
            return StepOutcome("invalid", error=f"{action!r} is not an action NetHack can play here (BALROG's wrapper raises on it)")
        reward, done = self._play(index)
        self.last_reward = reward
        if abs(reward) > self.REWARD_BOUND:
            raise RuntimeError(f"{type(self).__name__}: NLE paid {reward}, beyond REWARD_BOUND={self.REWARD_BOUND}")
        event = "step" if reward == 0 else "gain" if reward > 0 else "loss"
        return StepOutcome(
            event, terminated=done and not self.aborted, truncated=done and self.aborted, scale=abs(reward) / self.REWARD_BOUND
        )

    # Statistics (BALROG's get_stats) -----------------------------------------------------------

    def _reset_stats(self) -> None:
        raise NotImplementedError

    def _update_stats(self, obs: dict[str, Any], reward: float, done: bool, status: Any) -> None:
        """After a step: ``status`` is NLE's ``StepStatus`` of its last NLE step."""
        raise NotImplementedError

    def balrog_stats(self) -> dict[str, Any]:
        """BALROG's ``get_stats()`` for this episode so far, as its episode JSON writes it."""
        raise NotImplementedError

    # Observation --------------------------------------------------------------------------------

    def _observe(self, obs: dict[str, Any], message: str) -> None:
        """BALROG's text of ``obs`` (E/nle/base.py ``render_hybrid`` / ``render_text``): each part is
        "name:\\n" + text + "\\n", joined by "\\n". LLM mode: long-term message, language
        observation, cursor (with the tty cursor's (x=, y=)), map (the tty minus its first line);
        short-term inventory. VLM mode: long-term message, language observation, cursor;
        short-term statistics, inventory."""
        glyphs, blstats = obs["glyphs"], obs["blstats"]
        language = self.language
        glance = language.text_glyphs(glyphs, blstats).decode("latin-1")
        cursor = language.text_cursor(glyphs, blstats, obs["tty_cursor"]).decode("latin-1")
        inventory = language.text_inventory(obs["inv_strs"], obs["inv_letters"]).decode("latin-1")
        long_term = f"message:\n{message}\n\nlanguage observation:\n{glance}\n\ncursor:\n{cursor}"
        if self.text_format == "hybrid":
            row, col = (int(v) for v in obs["tty_cursor"])
            screen = np.concatenate((obs["tty_chars"][1:], _NEWLINES), axis=1).tobytes().decode("latin-1")
            self.long_term = f"{long_term}\n(x={col}, y={row})\n\nmap:\n{screen}\n"
            self.short_term = f"inventory:\n{inventory}\n"
        else:
            self.long_term = f"{long_term}\n"
            statistics = language.text_blstats(blstats).decode("latin-1")
            self.short_term = f"statistics:\n{statistics}\n\ninventory:\n{inventory}\n"
        np.copyto(self.glyphs, glyphs)  # NLE reuses its buffers: BALROG draws the image at this moment
        self.message = message
        if self.obs_mode == "image":
            raw = self.game.last_observation
            self.screen = {
                "glyphs": self.glyphs.copy(),
                "chars": raw[self.game._observation_keys.index("chars")].copy(),
                **{key: obs[key].copy() for key in ("tty_chars", "tty_colors", "tty_cursor", "inv_letters", "inv_strs")},
            }

    def _text(self, feedback: str) -> str:
        """BALROG's "Current Observation" body: short-term, then long-term context; after an invalid
        step (the only steps with feedback), the feedback alone: nothing happened, and BALROG's
        text (a screen of 80-character rows) would repeat the last observation."""
        if feedback or self.obs_mode == "image":
            return feedback
        return self._describe()

    def _describe(self) -> str:
        return "\n".join(part for part in (self.short_term, self.long_term) if part)

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        info["balrog"] = {"long_term_context": self.long_term, "short_term_context": self.short_term}
        return info

    def _render(self) -> NDArray[np.uint8]:
        image = draw_screen(self.screen, self.message) if self.obs_mode == "image" else render_tiles(self.glyphs)
        if image.shape[:2] != self.image_size:
            return to_array(Image.fromarray(image).resize((self.image_size[1], self.image_size[0]), Image.Resampling.BILINEAR))
        return image

    def _frame_key(self) -> Any:
        digest = hashlib.sha256(self.glyphs.tobytes())
        if self.obs_mode == "image":
            for key in ("chars", "tty_chars", "tty_colors", "tty_cursor", "inv_letters", "inv_strs"):
                digest.update(self.screen[key].tobytes())
            digest.update(self.message.encode())
        return (digest.hexdigest(), self.obs_mode == "image", self.image_size)

    def _state_key(self) -> str:
        """The texts BALROG shows (the map, screen, stats, inventory) and how the last step ended;
        NetHack's hidden state (its RNGs, monsters out of sight) is not in it."""
        digest = hashlib.sha256(f"{self.long_term}\0{self.short_term}\0".encode())
        digest.update(self.glyphs.tobytes())
        digest.update(repr((self.last_reward, self.done, self._progress())).encode())
        return f"nle|{digest.hexdigest()[:32]}"

    def _optimal_steps(self) -> int | None:
        return None

    # Lifetime -----------------------------------------------------------------------------------

    def close(self) -> None:
        """Close NetHack (its copy of libnethack and temporary files) and the window."""
        with warnings.catch_warnings():  # NLE warns when NetHack quits from a menu or a prompt; it still quits
            warnings.filterwarnings("ignore", message="Warning: smooth quitting of game failed", category=UserWarning)
            self.game.close()
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        # NetHack's state lives in C: a pickled env keeps the episode's seed and actions, and the
        # copy replays them (NetHack is deterministic once seeded without reseeding)
        state = super().__getstate__()
        for name in ("game", "language"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.language = nle_language_obsv.NLELanguageObsv()
        self.game = self._new_game()
        if self.long_term:
            history, long_term, short_term, reward, done = self.history, self.long_term, self.short_term, self.last_reward, self.done
            stats = self.balrog_stats()
            self._start()
            for index in history:
                self._play(index)
            assert (self.long_term, self.short_term, self.balrog_stats()) == (long_term, short_term, stats), "replay diverged"
            self.last_reward, self.done = reward, done


NO_PROGRESS_TIMEOUT = 150  # BALROG's nle_kwargs: NLE aborts after 150 steps in which the game's clock stands still
NETHACK_MAX_STEPS = 100_000  # BALROG's nle_kwargs max_episode_steps (NLE steps, each "more" one of them)


class NetHack(NLEGame):
    """BALROG's NetHack: the full game (NLE's NetHackChallenge-v0) as BALROG's wrappers play it.

    ## Description
    NetHack 3.6.6 as the NetHack Learning Environment (NLE 0.9.0, ``balrog-nle``, BALROG's build with
    seeding enabled in NetHackChallenge) plays it: descend the Dungeons of Doom, fight monsters,
    find items. The character is NetHack's random pick (``character="@"``, BALROG's). Nobody
    finishes NetHack here: progress is BALROG's NLE progression, the share of human games won
    after reaching the deepest dungeon level or the highest experience level of the episode
    (``info["progress"]``, a running maximum, updated after each step). It is oracle-free
    (``HAS_ORACLE = False``): no solver plays NetHack.

    As BALROG (``balrog-ai/BALROG`` af7d1f17 with ``nle_kwargs`` of its config; checked byte for
    byte against recordings of BALROG's own wrappers, ``tests/envs/balrog/test_golden_nle.py``):
    the game and its arguments, the action list, the instruction prompt, the text of both of
    BALROG's modes, the image (VLM mode's), the rewards, BALROG's ``get_stats()``
    (:meth:`balrog_stats`) and when an episode ends. A step is BALROG's: the action's keystroke,
    then NLE's "more" while the message shows ``--More--`` (each a step of NLE: its reward is
    added, its message appended after the earlier one with ``--More--`` replaced by a newline).
    The episode is cut (``truncated``) when NLE aborts it: after 100,000 NLE steps (the
    "more" steps included) or after 150 NLE steps in a row in which the game's turn counter
    stands still (BALROG's ``no_progress_timeout``, NLETimeLimit's semantics); it ends
    (``terminated``) when the character dies.

    Seeds: ``reset(seed=s)`` plays the game BALROG plays for seed ``s``: NetHack's core RNG
    seeded with ``s`` (BALROG: ``NLE.seed(core=s)``; ``s`` taken modulo 2**64), never reseeded.
    BALROG draws NetHack's display RNG from the system's entropy (it draws only what the screen
    shows at random, such as hallucinations); here it is seeded with ``s`` too. ``reset()`` without a seed draws one
    below 2**32 from the env's RNG. NetHack reads the wall clock for its calendar (the moon's
    phase, Friday the 13th, night, the game's birth time): here its clock is pinned to 2000-01-01
    12:00 UTC, a Saturday noon with neither a full nor a new moon, on any day and in any time zone
    (``rl4vlm_gym.envs.balrog.nethack_clock``); in BALROG it is the player's local time (the
    recordings were made with the same pinned clock).

    ## Observation
    - ``image``: BALROG's image, the map in NetHack's 16x16 tiles (21x79 cells: 336x1264 pixels,
      E/nle/render_rgb.py), resized to ``image_size`` if another is asked. The message line, the
      status lines and menus are not in it (they are in the text), as in BALROG. In ``image`` mode,
      which BALROG does not have, the image must carry the state alone: it is then the whole tty
      screen (the map in tiles, the message, status lines and menus in the tty's characters and
      colours, the cursor outlined) with the step's message and the inventory in a column beside
      it, default 384x1760.
    - ``text`` (``image+text`` and ``text`` modes): BALROG's "Current Observation" body: the
      short-term context, then the long-term context (``info["balrog"]`` has both). LLM mode
      (``text_format="hybrid"``, BALROG's default): long-term ``message:`` (this step's messages),
      ``language observation:`` (what is in view, "tree very far east"), ``cursor:`` ("Yourself a
      priest" and "(x=22, y=6)") and ``map:`` (the tty screen below the message line, status lines
      included); short-term ``inventory:``. VLM mode (``text_format="vlm"``, BALROG's when its agent
      is shown images): no ``map:`` and no (x=, y=); short-term ``statistics:`` (the bottom line in
      words, "Depth: 1", "HP: 13/13") before the inventory. After an invalid step (nothing
      happened) only its feedback; ``info["balrog"]`` keeps the unchanged state's contexts. In
      ``image`` mode only the step's feedback.
    - ``mission``: "Win NetHack: descend as deep as you can and gain experience." (BALROG has none;
      its instruction prompt is ``instruction_prompt()``).
    - ``actions``: BALROG's 248 names: NLE's useful actions by the language wrapper's names
      (``north``, ``far east``, ``up``, ``down``, ``more``, ``esc``, ``search``, ``space``...), then
      the keys ``a``-``z``, ``A``-``Z``, ``0``-``9`` and ``00``-``99``.

    ## Actions
    One of the names: its keystroke, as the language wrapper plays it (a key is the command bound
    to it: ``a`` is apply). ``00``-``99`` are listed (BALROG's check accepts them) but its
    language wrapper raises on them, erroring BALROG's episode: here they are invalid actions
    (nothing happens). NetHack's own refusals (an unknown command) change only the message.

    ## Rewards
    ``native``: NLE's NetHackChallenge reward, the change in the in-game score over the step's NLE
    steps (as events ``gain`` and ``loss`` worth 2**20 each, scaled: the reward is the change, to the
    last bit).

    ## Levels
    0: BALROG's setting, the only one.

    ## Arguments
    - ``text_format``: ``"hybrid"`` (default, BALROG's LLM mode) or ``"vlm"`` (BALROG's VLM mode;
      see Observation).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 336x1264; 384x1760 in ``image`` mode), ``reward_variant``, ``action_format``,
      ``action_match``, ``render_mode``.

    ## Version History
    - v0: BALROG's NetHack (``balrog-nle`` 0.9.0), checked against recordings of BALROG af7d1f17.
      Earlier v0 builds showed a tty-and-inventory image, rewrote the prompt, placed the
      short-term memory after the map, left out ``00``-``99``, dismissed ``--More--`` outside
      NLE's step count and ran 2,000-step suites.
    """

    LEVELS: ClassVar[tuple[NLELevel, ...]] = (NLELevel("BALROG's setting: NetHackChallenge-v0, a random character"),)
    # NetHack's score changes by less in one step (ascending: 50,000 points); a power of two, so that
    # bound * (reward / bound) is the reward to the last bit
    REWARD_BOUND: ClassVar[float] = 2.0**20
    REWARDS: ClassVar = {"native": {"step": 0.0, "gain": REWARD_BOUND, "loss": -REWARD_BOUND, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "esc"  # BALROG's

    def __init__(self, **kwargs: Any) -> None:
        self.progress = NLEProgress()
        super().__init__(**kwargs)

    def _make_game(self) -> Any:
        # BALROG's nle_kwargs (savedir None: no recording)
        return tasks.NetHackChallenge(
            character="@",
            max_episode_steps=NETHACK_MAX_STEPS,
            no_progress_timeout=NO_PROGRESS_TIMEOUT,
            savedir=None,
            save_ttyrec_every=0,
        )

    def _action_space(self) -> tuple[str, ...]:
        return nethack_action_space()

    def _reset_stats(self) -> None:
        self.progress = NLEProgress()

    def _update_stats(self, obs: dict[str, Any], reward: float, done: bool, status: Any) -> None:
        self.progress.update(obs["blstats"], obs["tty_chars"], reward, done, status.name)

    def balrog_stats(self) -> dict[str, Any]:
        return self.progress.stats()

    def _mission(self) -> str:
        return "Win NetHack: descend as deep as you can and gain experience."

    def instruction_prompt(self) -> str:
        return nle_instruction_prompt()

    def _success(self) -> bool:
        return False  # no ascension is reachable (BALROG's table: "You ascend" can never be reached)

    def _progress(self) -> float:
        return self.progress.progression
