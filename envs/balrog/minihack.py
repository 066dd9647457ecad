"""BALROG's MiniHack tasks: ``minihack`` 0.1.6 (BALROG's fork's code) on ``balrog-nle`` 0.9.0."""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any, ClassVar

from rl4vlm_gym.envs.balrog.instructions import minihack_instructions
from rl4vlm_gym.envs.balrog.nethack import NLEGame, NLELevel, action_name

with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():  # see nethack.py
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import gym

    try:
        import minihack  # noqa: F401  (registers the MiniHack ids with gym)
    except ImportError as error:  # pip cannot express minihack 0.1.6 on balrog-nle: see setup.cfg's nethack extra
        raise ImportError(
            "balrog/MiniHack-* needs minihack 0.1.6 installed without its dependencies: "
            "pip install --no-deps minihack==0.1.6 (scripts/setup.sh nethack does it)"
        ) from error

# BALROG's goal line per task (reference/balrog.md §3); MazeWalk gets the generic one.
GOALS = {
    "MiniHack-Corridor-R3-v0": "reach the stairs down",
    "MiniHack-CorridorBattle-Dark-v0": "reach the stairs down",
    "MiniHack-Quest-Easy-v0": "reach the stairs down",
    "MiniHack-Quest-Medium-v0": "reach the stairs down",
    "MiniHack-MazeWalk-9x9-v0": "get as far as possible",
    "MiniHack-MazeWalk-15x15-v0": "get as far as possible",
}
MAX_STEPS = 100  # BALROG's, for every MiniHack task (it overrides MiniHack's own limits)
PENALTY_STEP = -0.01  # BALROG's gym.make(..., penalty_step=-0.01)
# What the language wrapper and the image read (MiniHack's default gives only glyphs, chars, colors...)
OBSERVATION_KEYS = (
    "glyphs",
    "chars",
    "colors",
    "specials",
    "blstats",
    "message",
    "inv_glyphs",
    "inv_strs",
    "inv_letters",
    "inv_oclasses",
    "tty_chars",
    "tty_colors",
    "tty_cursor",
)


class MiniHack(NLEGame):
    """BALROG's MiniHack: small NetHack tasks built by MiniHack on the same NLE, through BALROG's language wrapper.

    ## Description
    MiniHack (Samvelyan et al. 2021) builds small NetHack levels from des-files: corridors between
    rooms (``Corridor-R3``), a dark corridor full of monsters (``CorridorBattle-Dark``), mazes
    (``MazeWalk-9x9``/``-15x15``), and quests that need an item or a fight on the way
    (``Quest-Easy``/``-Medium``). The task is to reach the stairs down (``>``). NetHack plays the
    rules (``balrog-nle`` 0.9.0, NLE 0.9.0); the task's level, actions and reward are MiniHack's
    (``minihack`` 0.1.6, the release BALROG's fork builds on). An episode succeeds when it ends with
    a reward of at least 1.0 (BALROG's progression: 1, else 0), ends when the task does, or at
    BALROG's limit of 100 steps. It is oracle-free (``HAS_ORACLE = False``).

    Against BALROG (``balrog-ai/BALROG`` af7d1f17): the tasks, the character ``"@"``, the
    ``penalty_step`` of -0.01, the 100-step limit, the text (the ``balrog-nle`` language wrapper's,
    LLM "hybrid" mode), --More-- dismissed automatically and the progression are BALROG's. BALROG's
    fork of MiniHack changes only its dependency (``balrog-nle`` for ``nle``), so ``minihack``
    0.1.6 is installed without its dependencies. BALROG offers each task's actions that are among
    33 names of its MiniHack module; that list is not in our reference, so here every action of
    the task is offered, by the language wrapper's name. The Boxoban tasks are left out: their
    levels are downloaded from a file host (``balrog-post-install``), which this project does not
    do. ``reset(seed)`` decides the episode (NetHack's RNGs from the env's, never reseeded;
    NetHack's calendar pinned to 2000-01-01 12:00 UTC, a quiet date, as in ``NetHack``).

    ## Observation
    As :class:`~rl4vlm_gym.envs.balrog.nethack.NetHack`: the tty screen with the map in 16x16
    tiles and the inventory beside it; BALROG's hybrid text (``message:``, ``language
    observation:``, ``cursor:``, ``map:``, ``inventory:``), or with ``text_format="vlm"`` BALROG's
    VLM-mode text (no map, ``statistics:`` added). ``mission``: the task's goal line,
    "Reach the stairs down." (MazeWalk: "Get as far as possible."). ``actions``: the task's own
    actions by the language wrapper's names (MazeWalk and CorridorBattle: the eight compass
    directions; Corridor-R3 adds ``open``, ``kick``, ``search``; the quests offer 85).

    ## Actions
    One of the names, a keystroke NetHack takes.

    ## Rewards
    ``native``: MiniHack's, 1 on reaching the stairs down, -0.01 for a step in which the game's
    clock stands still (``penalty_step``), 0 otherwise (death ends the episode); as events
    ``gain`` and ``loss`` worth at most 1 each, scaled: the reward is MiniHack's.

    ## Levels
    0: BALROG's setting, the only one.

    ## Arguments
    - ``task``: the MiniHack id, one of the keys of ``GOALS``.
    - ``text_format``: ``"hybrid"`` (default, BALROG's LLM mode) or ``"vlm"`` (BALROG's VLM mode).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 384x1760), ``reward_variant``, ``action_format``, ``action_match``, ``render_mode``.

    ## Version History
    - v0: initial release (``minihack`` 0.1.6 on ``balrog-nle`` 0.9.0).
    """

    LEVELS: ClassVar[tuple[NLELevel, ...]] = (NLELevel("BALROG's setting: the task's own level, 100 steps"),)
    DEFAULT_ACTION: ClassVar[str] = "north"  # BALROG's

    def __init__(self, *, task: str = "MiniHack-Corridor-R3-v0", **kwargs: Any) -> None:
        if task not in GOALS:
            raise ValueError(f"task={task!r} is not one of BALROG's MiniHack tasks here; choose one of {sorted(GOALS)}")
        self.task = task
        super().__init__(**kwargs)

    def _make_game(self) -> Any:
        # MiniHack's own step limit is lifted: BALROG's 100 is the registered TimeLimit
        return gym.make(
            self.task,
            character="@",
            penalty_step=PENALTY_STEP,
            save_ttyrec_every=0,
            max_episode_steps=10**6,
            observation_keys=OBSERVATION_KEYS,
        ).unwrapped

    def _action_table(self) -> dict[str, int]:
        return {action_name(action): i for i, action in enumerate(self.game.actions)}

    def _mission(self) -> str:
        return GOALS[self.task][0].upper() + GOALS[self.task][1:] + "."

    def instruction_prompt(self) -> str:
        return minihack_instructions(GOALS[self.task], self._actions())

    def _success(self) -> bool:
        return self.done and self.last_reward >= 1.0

    def _progress(self) -> float:
        return float(self._success())
