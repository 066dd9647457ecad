"""BALROG's NetHack and MiniHack: NLE 0.9.0 (``balrog-nle``) with its language wrapper, behind our contract.

One base class, :class:`NLEGame`, plays any NLE env (NetHackChallenge-v0, or a MiniHack task built
by ``minihack`` 0.1.6 on the same NLE) with BALROG's wrapper stack: ``--More--`` dismissed
automatically, the ``balrog-nle`` language wrapper's text ("hybrid" LLM mode) and its action names.
:class:`NetHack` adds BALROG's NLE progression; :mod:`rl4vlm_gym.envs.balrog.minihack` the tasks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
import string
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

# NLE 0.9 is built on gym 0.23, whose import prints a notice that gym is unmaintained: it concerns
# gym itself, which only NLE's own classes use here (our envs are Gymnasium's). NLE imports
# pkg_resources, which warns that it is deprecated (setup.cfg pins a setuptools that has it).
with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import gym  # noqa: F401
    from nle.env import tasks
    from nle.language_wrapper.wrappers.nle_language_wrapper import NLELanguageWrapper
    from nle.nethack import actions as nethack_actions

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog.instructions import nle_instructions
from rl4vlm_gym.envs.balrog.nethack_clock import pinned_clock
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

TILE = 16  # BALROG's VLM image: 16x16 tiles (E/nle/render_rgb.py); minihack ships NetHack's tile set
ROWS, COLS = 24, 80  # the tty
MAP_ROWS, MAP_COLS = 21, 79  # the glyph map (tty rows 1..21)
INVENTORY_WIDTH = 480  # the inventory column right of the screen
INVENTORY_LINE = 12  # px per inventory line: 32 lines fit beside the 24 tty rows
TEXT_FORMATS = ("hybrid", "vlm")  # BALROG's LLM mode's text, its VLM mode's
MAX_MORE = 64  # --More-- prompts dismissed in a row at most (a bound; NetHack shows a few at a time)
_RETURN = 13  # the key that dismisses --More--


@cache
def _tiles() -> NDArray[np.uint8]:
    """NetHack's 16x16 tile set as minihack ships it, one tile per glyph (``glyph2tile``)."""
    from minihack.tiles import glyph2tile

    # minihack's GlyphMapper reads the same file but leaves it open (a ResourceWarning)
    with (resources.files("minihack") / "tiles" / "tiles.pkl").open("rb") as file:
        tiles = pickle.load(file)  # {tile id: uint8[16, 16, 3]}; a file of an installed package
    return np.stack([np.asarray(tiles[int(tile)], dtype=np.uint8) for tile in glyph2tile])


# NetHack's 16 tty colours (the curses palette NLE's tty_colors index); 0 (no colour) is drawn grey.
_PALETTE = np.array(
    [
        (170, 170, 170), (170, 0, 0), (0, 170, 0), (170, 85, 0), (0, 0, 170), (170, 0, 170), (0, 170, 170), (170, 170, 170),
        (85, 85, 85), (255, 85, 85), (85, 255, 85), (255, 255, 85), (85, 85, 255), (255, 85, 255), (85, 255, 255), (255, 255, 255),
    ],
    dtype=np.uint8,
)  # fmt: skip


def action_name(action: Any) -> str:
    """The language wrapper's name of an NLE action ("north", "far east", "esc")."""
    return NLELanguageWrapper.all_nle_action_map[action][0]


def tty_lines(tty_chars: NDArray[np.uint8], first: int = 0) -> list[str]:
    """The tty's rows from ``first`` on, as text without trailing blanks."""
    return [bytes(row).decode("latin-1").rstrip() for row in tty_chars[first:]]


@dataclass(frozen=True)
class NLELevel:
    """The one setting of a BALROG NLE task."""

    name: str

    def describe(self) -> str:
        return self.name


class NLEGame(VLMEnv):
    """Shared rules of BALROG's NLE envs; see :class:`NetHack` and ``MiniHack`` for the docs.

    Subclasses set ``_make_game()`` (the NLE env), ``_action_table()`` (name -> index into the
    NLE env's ``actions``), ``_mission()``, ``instruction_prompt()``, ``_success()`` and ``_progress()``.
    """

    # NLE's reward as it is, as an event and a scale in [0, 1]: "gain" and "loss" are worth at most
    # REWARD_BOUND, and a step pays its reward's size over the bound (subclasses set the bound).
    REWARD_BOUND: ClassVar[float] = 1.0
    REWARDS: ClassVar = {"native": {"step": 0.0, "gain": 1.0, "loss": -1.0, "invalid": 0.0}}
    HAS_ORACLE: ClassVar[bool] = False
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (ROWS * TILE, COLS * TILE + INVENTORY_WIDTH)
    MIN_IMAGE_SIDE: ClassVar[int] = 32

    def __init__(self, *, text_format: str = "hybrid", **kwargs: Any) -> None:
        if text_format not in TEXT_FORMATS:
            raise ValueError(f"text_format={text_format!r} is unknown; choose one of {TEXT_FORMATS}")
        self.text_format = text_format
        super().__init__(**kwargs)
        self.game = self._new_game()
        self.language = NLELanguageWrapper(self.game)  # BALROG's text of an NLE observation
        self.table = self._action_table()
        self.seeds: tuple[int, int] = (0, 0)
        self.history: list[int] = []  # NLE action indices since reset: a pickled env replays them
        self.obs: dict[str, Any] = {}
        self.messages: list[str] = []
        self.last_reward = 0.0
        self.done = False

    # NLE ----------------------------------------------------------------------------------------

    def _new_game(self) -> Any:
        # NetHack reads the wall clock for its calendar (moon, Friday 13th, night): the game loads a
        # copy of NLE's library with the clock pinned, so the seed alone decides it (nethack_clock)
        with pinned_clock():
            return self._make_game()

    def _make_game(self) -> Any:
        raise NotImplementedError

    def _action_table(self) -> dict[str, int]:
        raise NotImplementedError

    def _keep(self, obs: dict[str, Any]) -> None:
        self.obs = {key: np.array(value, copy=True) for key, value in obs.items()}  # NLE reuses its buffers

    def _more(self) -> bool:
        """BALROG's AutoMore: dismiss every --More-- now on screen, keeping each screen's message.
        Through NetHack itself, as the MiniHack tasks have no "more" action. True if the game ended."""
        for _ in range(MAX_MORE):
            if "--More--" not in bytes(self.obs["tty_chars"]).decode("latin-1"):
                return False
            self.messages.append(self._message())
            observation, done = self.game.nethack.step(_RETURN)
            self.game.last_observation = observation
            self._keep(self.game._get_observation(observation))
            if done:
                return True
        return False

    def _message(self) -> str:
        return self.language.nle_language.text_message(self.obs["tty_chars"]).decode("latin-1").strip()

    def _new_episode(self, config: NLELevel) -> None:
        # NetHack's two RNGs from the env's; reseed=False: NetHack 3.6 would reseed from the clock
        self.seeds = tuple(int(s) for s in self.np_random.integers(2**63 - 1, size=2))
        self._start()

    def _start(self) -> None:
        self.game.seed(*self.seeds, reseed=False)
        self._keep(self.game.reset())
        self.history, self.messages, self.last_reward, self.done = [], [], 0.0, False
        self.done = self._more()

    def _actions(self) -> tuple[str, ...]:
        return tuple(self.table)

    def _play(self, index: int) -> tuple[float, bool, bool]:
        self.history.append(index)
        self.messages = []
        obs, reward, done, info = self.game.step(index)
        self._keep(obs)
        aborted = info.get("end_status") == self.game.StepStatus.ABORTED
        done = done or self._more()  # a game that ended takes no more keys
        return float(reward), done, aborted

    def _apply(self, action: str) -> StepOutcome:
        reward, done, aborted = self._play(self.table[action])
        self.last_reward, self.done = reward, done
        if abs(reward) > self.REWARD_BOUND:
            raise RuntimeError(f"{type(self).__name__}: NLE paid {reward}, beyond REWARD_BOUND={self.REWARD_BOUND}")
        event = "step" if reward == 0 else "gain" if reward > 0 else "loss"
        return StepOutcome(event, terminated=done and not aborted, truncated=aborted, scale=abs(reward) / self.REWARD_BOUND)

    # Observation --------------------------------------------------------------------------------

    def _language(self) -> dict[str, str]:
        return self.language.nle_obsv_to_language(self.obs)

    def _describe(self) -> str:
        """BALROG's text: long-term (message, language observation, cursor; the map in "hybrid",
        its LLM mode), then short-term (BALROG's VLM mode adds the statistics; the inventory)."""
        text = self._language()
        message = " ".join([*self.messages, text["text_message"].strip()]).strip()
        long_term = f"message:\n{message}\n\nlanguage observation:\n{text['text_glyphs']}\n\ncursor:\n{text['text_cursor']}"
        if self.text_format == "vlm":
            return f"{long_term}\n\nstatistics:\n{text['text_blstats']}\n\ninventory:\n{text['text_inventory']}"
        screen = "\n".join(tty_lines(self.obs["tty_chars"], 1))
        return f"{long_term}\n\nmap:\n{screen}\n\ninventory:\n{text['text_inventory']}"

    def _render(self) -> NDArray[np.uint8]:
        return _draw(self.obs, self.messages, self.image_size)

    def _frame_key(self) -> Any:
        digest = hashlib.sha256()
        for key in ("glyphs", "tty_chars", "tty_colors", "tty_cursor", "inv_strs"):
            digest.update(self.obs[key].tobytes())
        digest.update(repr(self.messages).encode())
        return (digest.hexdigest(), self.image_size)

    def _state_key(self) -> str:
        """The observable state (map, screen, stats, inventory) and how the last step ended;
        NetHack's hidden state (its RNGs, monsters out of sight) is not in it."""
        digest = hashlib.sha256(self._frame_key()[0].encode())
        digest.update(self.obs["blstats"].tobytes() + repr((self.last_reward, self.done, self._progress())).encode())
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
        # NetHack's state lives in C: a pickled env keeps the episode's seeds and actions, and the
        # copy replays them (NetHack is deterministic once seeded without reseeding)
        state = super().__getstate__()
        for name in ("game", "language"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.game = self._new_game()
        self.language = NLELanguageWrapper(self.game)
        if self.obs:
            history, messages = self.history, self.messages
            self._start()
            for index in history:
                self._play(index)
            self.messages = messages


def _draw(obs: dict[str, Any], messages: list[str], size: tuple[int, int]) -> NDArray[np.uint8]:
    """The tty screen with the map in 16x16 tiles (BALROG's VLM image), and the inventory beside it.

    Row 0 (the message), rows 22-23 (the status lines) and the box of map cells where the screen
    does not show the map (a menu drawn over it) are the tty's characters in its colours; the
    cursor is outlined. The image thus shows everything the text says."""
    height, width = ROWS * TILE, COLS * TILE + INVENTORY_WIDTH
    canvas = np.zeros((height, width, 3), np.uint8)
    glyphs, chars = obs["glyphs"], obs["chars"]
    tty, colours = obs["tty_chars"], obs["tty_colors"]
    tiles = _tiles()[glyphs]  # (21, 79, 16, 16, 3)
    on_map = tty[1 : 1 + MAP_ROWS, :MAP_COLS] == chars
    if not on_map.all():  # a window over the map (a menu, a text page): all of its box is text, even
        rows, cols = np.nonzero(~on_map)  # where a character happens to equal the map's ("-" of "a - ...")
        on_map[rows.min() : rows.max() + 1, cols.min() :] = False
    tiles[~on_map] = 0
    canvas[TILE : TILE * (1 + MAP_ROWS), : TILE * MAP_COLS] = tiles.transpose(0, 2, 1, 3, 4).reshape(
        MAP_ROWS * TILE, MAP_COLS * TILE, 3
    )
    image = Image.fromarray(canvas)
    draw = ImageDraw.Draw(image)
    typeface = font(13)
    for row in range(ROWS):
        for col in range(COLS):
            char = int(tty[row, col])
            if char == 32 or (1 <= row <= MAP_ROWS and col < MAP_COLS and on_map[row - 1, col]):
                continue
            draw.text(
                (col * TILE + 2, row * TILE),
                chr(char),
                fill=tuple(int(c) for c in _PALETTE[int(colours[row, col]) & 15]),
                font=typeface,
            )
    cursor_x, cursor_y = (int(v) for v in obs["tty_cursor"][::-1])
    draw.rectangle(
        (cursor_x * TILE, cursor_y * TILE, cursor_x * TILE + TILE - 1, cursor_y * TILE + TILE - 1), outline=(255, 255, 0)
    )
    left = COLS * TILE + 8
    small = font(10)
    lines = [" ".join(messages)] if messages else []
    items = [
        (chr(int(letter)), bytes(line).split(b"\x00")[0].decode("latin-1").strip())
        for letter, line in zip(obs["inv_letters"], obs["inv_strs"])
        if letter
    ]
    lines += ["inventory:"] + [f"{letter}: {what}" for letter, what in items]
    for i, line in enumerate(lines[: height // INVENTORY_LINE]):
        draw.text((left, i * INVENTORY_LINE), line[:80], fill=(220, 220, 220), font=small)
    if image.size != (size[1], size[0]):
        image = image.resize((size[1], size[0]), Image.Resampling.BILINEAR)
    return to_array(image)


# BALROG's NLE progression (E/nle/progress.py, achievements.json; reference/balrog.md §3): the
# share of human games won after reaching a dungeon level / an experience level (rounded). BALROG's
# table has every level; the reference lists these, so a level between two listed ones counts as
# the lower (a lower bound: reaching Dlvl 16 never happens in BALROG's published runs).
DLVL_PROGRESS = {
    1: 0.0, 2: 0.0154, 3: 0.0175, 4: 0.0212, 5: 0.0265, 6: 0.0354, 7: 0.0485, 8: 0.0696, 9: 0.0977,
    10: 0.1256, 11: 0.1613, 12: 0.2061, 13: 0.2566, 14: 0.2925, 15: 0.3088, 20: 0.3790, 25: 0.4664,
    30: 0.6913, 40: 0.7610, 50: 0.8068,
}  # fmt: skip
XP_PROGRESS = {
    1: 0.0, 2: 0.0185, 3: 0.0208, 4: 0.0242, 5: 0.0291, 6: 0.0369, 7: 0.0508, 8: 0.0745, 9: 0.1170,
    10: 0.1791, 11: 0.2548, 12: 0.3326, 13: 0.4144, 14: 0.4940, 15: 0.5779, 20: 0.7174, 30: 0.7805,
}  # fmt: skip


def table_progress(table: dict[int, float], level: int) -> float:
    """``table``'s value at the highest listed level not above ``level`` (0 below level 1)."""
    listed = [value for key, value in table.items() if key <= level]
    return max(listed, default=0.0)


# BALROG's NLE action names: NLE's USEFUL_ACTIONS by the language wrapper's names, then the keys
# a-z, A-Z and 0-9 (for menus and prompts). BALROG also lists "00".."99", which its language wrapper
# cannot play (the episode errors); they are left out.
NETHACK_ACTIONS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [action_name(a) for a in nethack_actions.USEFUL_ACTIONS]
        + list(string.ascii_lowercase + string.ascii_uppercase + string.digits)
    )
)
NO_PROGRESS_TIMEOUT = 150  # BALROG's: the episode is cut after 150 steps in which the game's clock stands still
NETHACK_MAX_STEPS = 100_000  # BALROG's


class NetHack(NLEGame):
    """BALROG's NetHack: the full game (NLE's NetHackChallenge-v0) through BALROG's language wrapper.

    ## Description
    NetHack 3.6.6 as the NetHack Learning Environment (NLE 0.9.0, ``balrog-nle``, BALROG's build with
    seeding enabled in NetHackChallenge) plays it: descend the Dungeons of Doom, fight monsters,
    find items. The character is NetHack's random pick (``character="@"``, BALROG's). Nobody
    finishes NetHack here: progress is BALROG's NLE progression, the share of human games won
    after reaching the deepest dungeon level or the highest experience level of the episode
    (``info["progress"]``, a running maximum). The episode ends when the character dies, when the
    game's clock stands still for 150 steps (BALROG's ``no_progress_timeout``: truncated), or at
    BALROG's limit of 100,000 steps. It is oracle-free (``HAS_ORACLE = False``): no solver plays
    NetHack.

    Against BALROG (``balrog-ai/BALROG`` af7d1f17, ``balrog-nle`` 0.9.0 as here): the game, the
    character, the action names, the text (the ``balrog-nle`` language wrapper's), the --More--
    handling, the step limits and the progression table are BALROG's. Written from the facts
    (BALROG's source is not installed): the layout of the text's sections, AutoMore (each
    dismissed screen's message is kept and shown before the last one), and the progression
    table, whose levels between the listed ones (Dlvl 16-19, 21-24...) count as the lower listed
    level. ``reset(seed)`` decides the game (NetHack's two RNGs from the env's, never reseeded);
    BALROG draws a fresh seed per episode. NetHack reads the wall clock for its calendar (the
    moon's phase, Friday the 13th, night, the game's birth time): here its clock is pinned to
    2000-01-01 12:00 UTC, a Saturday noon with neither a full nor a new moon (no Luck from the
    calendar), on any day and in any time zone (``rl4vlm_gym.envs.balrog.nethack_clock``); in
    BALROG it is the player's local time. BALROG's text depends on its agent's mode (LLM or VLM);
    here on ``text_format``.

    ## Observation
    - ``image``: the tty screen, 24x80 cells of 16x16 pixels: the map in NetHack's tiles
      (BALROG's VLM image), the message line, the two status lines and any menu in the tty's
      characters and colours, the cursor outlined; to the right, the messages dismissed this step
      and the inventory. Default size 384x1760, resized to ``image_size``.
    - ``text`` (``image+text`` and ``text`` modes): BALROG's hybrid text, the sections
      ``message:`` (this step's messages), ``language observation:`` (the language wrapper's
      description of what is in view, "tree very far east"), ``cursor:`` ("Yourself a ..." with
      (x=, y=)), ``map:`` (the tty screen below the message line, status lines included) and
      ``inventory:`` (BALROG's short-term context). ``text_format="vlm"``: BALROG's VLM-mode
      text, for numbers comparable with its VLM runs: no ``map:``, and ``statistics:`` (the
      language wrapper's bottom-line stats, "Depth: 1", "HP: 15/15") before the inventory; the
      image then shows more than the text (the map), as in BALROG. In ``image`` mode only the
      step's feedback.
    - ``mission``: "Win NetHack: descend as deep as you can and gain experience."
    - ``actions``: BALROG's names: NLE's useful actions by the language wrapper's names
      (``north``, ``far east``, ``up``, ``down``, ``wait``, ``more``, ``apply``, ``eat``, ``esc``,
      ``search``, ``pray``...), then the keys ``a``-``z``, ``A``-``Z``, ``0``-``9`` for menus and prompts.

    ## Actions
    One of the names. Every one is a keystroke NetHack takes; those it refuses (an unknown
    command, a key in the wrong place) change nothing but the screen's message, as in NetHack.

    ## Rewards
    ``native``: NLE's NetHackChallenge reward, the change in the in-game score (as events ``gain``
    and ``loss`` worth at most 100,000 each, scaled by the change: the reward is the change).

    ## Levels
    0: BALROG's setting, the only one.

    ## Arguments
    - ``text_format``: ``"hybrid"`` (default, BALROG's LLM mode) or ``"vlm"`` (BALROG's VLM mode;
      see Observation).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 384x1760), ``reward_variant``, ``action_format``, ``action_match``, ``render_mode``.

    ## Version History
    - v0: initial release (``balrog-nle`` 0.9.0).
    """

    LEVELS: ClassVar[tuple[NLELevel, ...]] = (NLELevel("BALROG's setting: NetHackChallenge-v0, a random character"),)
    REWARD_BOUND: ClassVar[float] = 1e5  # NetHack's score changes by less in one step (ascending: 50,000 points)
    REWARDS: ClassVar = {"native": {"step": 0.0, "gain": REWARD_BOUND, "loss": -REWARD_BOUND, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "esc"  # BALROG's

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.depth = self.xp = 1

    def _make_game(self) -> Any:
        return tasks.NetHackChallenge(
            character="@", save_ttyrec_every=0, max_episode_steps=NETHACK_MAX_STEPS, no_progress_timeout=NO_PROGRESS_TIMEOUT
        )

    def _action_table(self) -> dict[str, int]:
        keys = {int(action): i for i, action in enumerate(self.game.actions)}
        names = {name: int(enum) for enum, (name, *_) in NLELanguageWrapper.all_nle_action_map.items()}
        return {name: keys[names[name] if name in names and len(name) > 1 else ord(name)] for name in NETHACK_ACTIONS}

    def _start(self) -> None:
        super()._start()
        self.depth, self.xp = self._levels()

    def _levels(self) -> tuple[int, int]:
        from nle.nethack import NLE_BL_DEPTH, NLE_BL_XP

        return int(self.obs["blstats"][NLE_BL_DEPTH]), int(self.obs["blstats"][NLE_BL_XP])

    def _play(self, index: int) -> tuple[float, bool, bool]:
        result = super()._play(index)
        depth, xp = self._levels()
        self.depth, self.xp = max(self.depth, depth), max(self.xp, xp)
        return result

    def _mission(self) -> str:
        return "Win NetHack: descend as deep as you can and gain experience."

    def instruction_prompt(self) -> str:
        return nle_instructions()

    def _success(self) -> bool:
        return False  # no ascension is reachable (BALROG's table: "You ascend" can never be reached)

    def _progress(self) -> float:
        return max(table_progress(DLVL_PROGRESS, self.depth), table_progress(XP_PROGRESS, self.xp))
