"""BALROG's MiniHack tasks: ``minihack`` 0.1.6 (BALROG's fork's code) on ``balrog-nle`` 0.9.0, as BALROG plays them.

Read from ``balrog-ai/BALROG`` af7d1f17 (``balrog/environments/minihack/``, the ``minihack_kwargs`` of
``balrog/config/config.yaml``) and ``balrog-ai/minihack`` 3ecb6da4 (``minihack/envs/boxohack.py``);
checked against recordings of BALROG's own wrappers (``tests/envs/balrog/golden/minihack``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import random
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from rl4vlm_gym.envs.balrog.nethack import NLEGame, NLELevel, action_name, described_actions

with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():  # see nethack.py
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import gym

    try:
        import minihack  # noqa: F401  (registers the MiniHack ids with gym)
        from minihack import LevelGenerator
        from minihack.envs.boxohack import MOVE_ACTIONS as BOXOBAN_MOVES
        from minihack.envs.boxohack import BoxoHack
        from minihack.navigation import MiniHackNavigation
    except ImportError as error:  # pip cannot express minihack 0.1.6 on balrog-nle: see setup.cfg's nethack extra
        raise ImportError(
            "balrog/MiniHack-* needs minihack 0.1.6 installed without its dependencies: "
            "pip install --no-deps minihack==0.1.6 (scripts/setup.sh nethack does it)"
        ) from error

TASKS = (
    "MiniHack-Boxoban-Hard-v0",
    "MiniHack-Boxoban-Medium-v0",
    "MiniHack-MazeWalk-9x9-v0",
    "MiniHack-MazeWalk-15x15-v0",
    "MiniHack-Corridor-R3-v0",
    "MiniHack-CorridorBattle-Dark-v0",
    "MiniHack-Quest-Easy-v0",
    "MiniHack-Quest-Medium-v0",
)  # BALROG's eight, in its config's order
MISSIONS = {
    "corridor": "Reach the stairs down.",
    "quest": "Reach the stairs down.",
    "boxoban": "Push the boulders onto the fountains.",
    "other": "Get as far as possible.",
}
# BALROG's minihack_kwargs (savedir None: no recording); its observation keys
MINIHACK_KWARGS: dict[str, Any] = {
    "character": "@",
    "max_episode_steps": 100,  # NLE steps, each "more" one of them
    "penalty_step": -0.01,
    "penalty_time": 0.0,
    "penalty_mode": "constant",
    "savedir": None,
    "save_ttyrec_every": 0,
    "autopickup": False,
}
OBSERVATION_KEYS = ("glyphs", "blstats", "tty_chars", "inv_letters", "inv_strs", "tty_cursor", "tty_colors")

# BALROG's MiniHack actions (E/minihack/__init__.py ACTIONS): a task offers those of its own
# actions whose language-wrapper name is here, in the task's order. Verbatim.
MINIHACK_ACTION_DESCRIPTIONS: dict[str, str] = {
    "north": "move north",
    "east": "move east",
    "south": "move south",
    "west": "move west",
    "northeast": "move northeast",
    "southeast": "move southeast",
    "southwest": "move southwest",
    "northwest": "move northwest",
    "far north": "move far north",
    "far east": "move far east",
    "far south": "move far south",
    "far west": "move far west",
    "far northeast": "move far northeast",
    "far southeast": "move far southeast",
    "far southwest": "move far southwest",
    "far northwest": "move far northwest",
    "up": "go up the stairs",
    "down": "go down the stairs",
    "wait": "rest one move while doing nothing",
    "more": "display more of the message",
    "apply": "apply (use) a tool",
    "close": "close an adjacent door",
    "open": "open an adjacent door",
    "eat": "eat something",
    "force": "force a lock",
    "kick": "kick an enemy or a locked door or chest",
    "loot": "loot a box on the floor",
    "pickup": "pick up things at the current location if there are any",
    "pray": "pray to the gods for help",
    "puton": "put on an accessory",
    "quaff": "quaff (drink) something",
    "search": "search for hidden doors and passages",
    "zap": "zap a wand",
}
GOALS = {
    "corridor": "Your goal is to explore the level and reach the stairs down",
    "quest": "Your goal is to explore the level, fight monsters, and navigate rooms and mazes to ultimately reach the stairs down.",
    "boxoban": "You are playing Boxoban, a box-pushing game inspired by Sokoban. Your goal is to push the boulders onto the "
    "fountains on the map. You can push the boulders by walking into them, as long as there are no obstacles behind them.",
    "other": "Your goal is to get as far as possible in the game.",
}  # BALROG's goal lines, verbatim (the corridor's has no full stop)


def kind(task: str) -> str:
    """Which of BALROG's goal lines a task gets, as BALROG tests its name (in this order)."""
    lowered = task.lower()
    return next((name for name in ("corridor", "quest", "boxoban") if name in lowered), "other")


def minihack_action_space(actions: tuple[Any, ...]) -> tuple[str, ...]:
    """BALROG's action list of a MiniHack task whose NLE actions are ``actions``."""
    return tuple(dict.fromkeys(name for name in map(action_name, actions) if name in MINIHACK_ACTION_DESCRIPTIONS))


def minihack_instruction_prompt(task: str, names: tuple[str, ...]) -> str:
    """BALROG's MiniHack instruction prompt (E/minihack/__init__.py ``get_instruction_prompt``)."""
    listed = described_actions(tuple((name, MINIHACK_ACTION_DESCRIPTIONS[name]) for name in names))
    return (
        "You are an agent playing MiniHack. The following are the possible actions you can take in the game, "
        "followed by a short description of each action:\n\n"
        f"{listed}.\n\n"
        "In a moment I will present a history of actions and observations from the game.\n\n"
        "Tip: there is no point in outputting the same action over and over if nothing changes.\n\n"
        f"{GOALS[kind(task)]}\n\n"
        "PLAY!"
    )


@cache
def boxoban_levels(level_set: str) -> tuple[str, ...]:
    """The shipped Boxoban levels of ``level_set`` ("hard", "medium"), in order (assets/boxoban/README.md):
    each level its rows with their newlines, as minihack's ``load_boxoban_levels`` reads a file."""
    path = resources.files("rl4vlm_gym.envs.balrog") / "assets" / "boxoban" / f"{level_set}.txt.gz"
    text = gzip.decompress(path.read_bytes()).decode("ascii")
    levels: list[str] = []
    block: list[str] = []
    for line in text.splitlines(keepends=True):
        if line == "\n":  # a blank line ends a level; its first line is "; N"
            levels.append("".join(block[1:]))
            block = []
        else:
            block.append(line)
    return tuple(levels)


class BoxobanGame(BoxoHack):
    """minihack's BoxoHack with MiniHackBoxobanHard/Medium's settings (reward shaping 0.1, a time
    penalty of -0.001 that replaces any ``penalty_time``, the four cardinal moves), playing
    :attr:`chosen_level` (set before each reset) from the levels it is given instead of ``random.choice``
    over minihack's data folder."""

    def __init__(self, *, levels: tuple[str, ...], **kwargs: Any) -> None:
        kwargs.pop("penalty_time", None)
        self._time_penalty = -0.001
        self._reward_shaping_coefficient = 0.1
        self._flags = ()
        self._levels = levels
        self.chosen_level = levels[0]
        kwargs["max_episode_steps"] = kwargs.pop("max_episode_steps", 400)
        kwargs["actions"] = kwargs.pop("actions", BOXOBAN_MOVES)
        MiniHackNavigation.__init__(self, des_file=self.get_lvl_gen().get_des(), **kwargs)

    def get_lvl_gen(self) -> Any:
        """The level generator of :attr:`chosen_level` (BoxoHack's: boulders, fountains, the start, lit, no
        teleport, premapped, solid rock outside)."""
        layout, found = self.get_env_map(self.chosen_level.split("\n"))
        generator = LevelGenerator(map=layout, lit=True, flags=[*self._flags, "noteleport", "premapped"], solidfill=" ")
        for boulder in found["boulders"]:
            generator.add_boulder(boulder)
        for fountain in found["fountains"]:
            generator.add_fountain(fountain)
        generator.set_start_pos(found["player"])
        return generator


@dataclass
class MiniHackProgress:
    """BALROG's MiniHack statistics (E/nle/progress.py ``BaseProgress``): nothing before the first
    step; then the return so far, the progression (1.0 if the step's reward was at least 1.0, else
    0.0: the last step decides) and NLE's end status (an int in BALROG's episode JSON: 0 running,
    1 death, 2 task successful, -1 aborted)."""

    stepped: bool = False
    episode_return: float = 0.0
    progression: float = 0.0
    end_reason: int = 0

    def update(self, reward: float, status: int) -> None:
        self.stepped = True
        self.episode_return += reward
        self.progression = 1.0 if reward >= 1.0 else 0.0
        self.end_reason = status

    def stats(self) -> dict[str, Any]:
        if not self.stepped:
            return {}
        return {"episode_return": self.episode_return, "progression": self.progression, "end_reason": self.end_reason}


class MiniHack(NLEGame):
    """BALROG's MiniHack: small NetHack tasks built by MiniHack on the same NLE, as BALROG's wrappers play them.

    ## Description
    MiniHack (Samvelyan et al. 2021) builds small NetHack levels: Boxoban puzzles (push four
    boulders onto four fountains; ``Boxoban-Hard``/``-Medium``, DeepMind's boxoban levels),
    mazes (``MazeWalk-9x9``/``-15x15``), corridors between rooms (``Corridor-R3``), a dark
    corridor full of monsters (``CorridorBattle-Dark``), and quests that need an item or a fight on
    the way (``Quest-Easy``/``-Medium``). NetHack plays the rules (``balrog-nle`` 0.9.0, NLE 0.9.0);
    the level, actions and reward are MiniHack's (``minihack`` 0.1.6, the code of BALROG's fork).
    An episode succeeds when its last step pays at least 1.0 (BALROG's progression: 1, else 0):
    the stairs down reached, or every boulder on a fountain. It is oracle-free
    (``HAS_ORACLE = False``).

    As BALROG (``balrog-ai/BALROG`` af7d1f17 with the ``minihack_kwargs`` of its config; checked
    byte for byte against recordings of BALROG's own wrappers,
    ``tests/envs/balrog/test_golden_minihack.py``): the eight tasks with BALROG's arguments (a
    random character ``"@"``, ``penalty_step`` -0.01, ``penalty_time`` 0, autopickup off, 100 NLE
    steps), each task's action list, the instruction prompt, the text of both of BALROG's modes,
    the image (VLM mode's), the rewards, BALROG's ``get_stats()`` (:meth:`balrog_stats`) and
    the ends of episodes. A step is BALROG's (see ``NetHack``): the action, then NLE's "more"
    while ``--More--`` shows (for tasks whose actions have it; BALROG's AutoMore raises on the
    others, whose NLE env dismisses ``--More--`` itself). The episode is cut (``truncated``)
    after 100 NLE steps ("more" steps included), BALROG's ``max_episode_steps``.

    Seeds: ``reset(seed=s)`` seeds NetHack with ``s`` as ``NetHack`` does (BALROG's core seed; the
    display RNG ``s`` too). Boxoban's level: ``random.Random(s).choice(levels)``, as BALROG's
    evaluator seeds ``random`` with ``s`` before MiniHack's ``random.choice``; the levels are
    shipped in ``assets/boxoban`` (Apache-2.0): Hard all 3,332 (BALROG's level for seed ``s``
    wherever ``os.listdir`` lists the files sorted), Medium 10,000 of BALROG's 450,000 (the first
    10 of its 450 files), each read in the order of its files' names.

    ## Observation
    As :class:`~rl4vlm_gym.envs.balrog.nethack.NetHack`: BALROG's image (the map in 16x16
    tiles, 336x1264; in ``image`` mode the whole screen with the message and inventory beside it,
    384x1760); ``text`` BALROG's short-term then long-term context (``info["balrog"]``):
    LLM mode (``text_format="hybrid"``, default) ``message:``, ``language observation:``,
    ``cursor:`` with (x=, y=), ``map:``, then ``inventory:`` first; VLM mode
    (``text_format="vlm"``) no map, ``statistics:`` and ``inventory:`` first; after an invalid step
    only its feedback. ``mission``:
    "Reach the stairs down." (corridors, quests), "Push the boulders onto the fountains."
    (Boxoban), "Get as far as possible." (MazeWalk); BALROG's goal lines are in
    ``instruction_prompt()``. ``actions``: BALROG's: the task's actions among the 33 names of
    BALROG's MiniHack module (Boxoban: the four cardinal moves; MazeWalk and CorridorBattle: the
    eight compass moves; Corridor-R3 adds ``open``, ``kick``, ``search``; the quests 32, from
    ``far`` moves to ``zap``).

    ## Actions
    One of the names, the keystroke the language wrapper plays.

    ## Rewards
    ``native``: MiniHack's over the step's NLE steps: 1 for reaching the stairs down, -0.01 for an
    NLE step in which the game's clock stands still (``penalty_step``), 0 otherwise (death ends
    the episode); Boxoban: 1 when every boulder is on a fountain, else 0.1 per boulder pushed onto
    a fountain (-0.1 off one) and -0.001 a step. As events ``gain`` and ``loss`` worth 1 each,
    scaled: the reward is MiniHack's.

    ## Levels
    0: BALROG's setting, the only one.

    ## Arguments
    - ``task``: the MiniHack id, one of :data:`TASKS`.
    - ``text_format``: ``"hybrid"`` (default, BALROG's LLM mode) or ``"vlm"`` (BALROG's VLM mode).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 336x1264; 384x1760 in ``image`` mode), ``reward_variant``, ``action_format``,
      ``action_match``, ``render_mode``.

    ## Version History
    - v0: BALROG's MiniHack (``minihack`` 0.1.6 on ``balrog-nle`` 0.9.0), checked against
      recordings of BALROG af7d1f17; Boxoban-Hard and -Medium added. Earlier v0 builds had
      autopickup on, offered every action of a task (85 in the quests), rewrote the prompt,
      lacked Boxoban and showed a tty-and-inventory image.
    """

    LEVELS: ClassVar[tuple[NLELevel, ...]] = (NLELevel("BALROG's setting: the task's own level, 100 NLE steps"),)
    DEFAULT_ACTION: ClassVar[str] = "north"  # BALROG's

    def __init__(self, *, task: str = "MiniHack-Corridor-R3-v0", **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"task={task!r} is not one of BALROG's MiniHack tasks; choose one of {list(TASKS)}")
        self.task = task
        self.progress = MiniHackProgress()
        super().__init__(**kwargs)

    def _make_game(self) -> Any:
        kwargs = {**MINIHACK_KWARGS, "observation_keys": OBSERVATION_KEYS}
        if kind(self.task) == "boxoban":
            return BoxobanGame(levels=boxoban_levels("hard" if "Hard" in self.task else "medium"), **kwargs)
        return gym.make(self.task, **kwargs).unwrapped

    def _action_space(self) -> tuple[str, ...]:
        return minihack_action_space(tuple(self.game.actions))

    def _prepare(self) -> None:
        if isinstance(self.game, BoxobanGame):  # BALROG: random.seed(s), then MiniHack's random.choice(levels)
            self.game.chosen_level = random.Random(self.seed_used).choice(self.game._levels)

    def _reset_stats(self) -> None:
        self.progress = MiniHackProgress()

    def _update_stats(self, obs: dict[str, Any], reward: float, done: bool, status: Any) -> None:
        self.progress.update(reward, int(status))

    def balrog_stats(self) -> dict[str, Any]:
        return self.progress.stats()

    def _mission(self) -> str:
        return MISSIONS[kind(self.task)]

    def instruction_prompt(self) -> str:
        return minihack_instruction_prompt(self.task, self.names)

    def _success(self) -> bool:
        return self.done and self.last_reward >= 1.0

    def _progress(self) -> float:
        return self.progress.progression
