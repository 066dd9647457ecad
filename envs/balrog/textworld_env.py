"""BALROG's TextWorld: treasure hunter, the cooking game and coin collector, as BALROG plays them.

What BALROG does (balrog-ai/BALROG af7d1f17, ``balrog/environments/textworld/base.py`` and
``__init__.py``, config ``textworld_kwargs``), read there and reproduced here in our own code:

- 25 fixed games per task (:mod:`.textworld_games`), game ``seed mod 25`` in sorted file order;
- textworld's gym env with infos objective, description, score, max_score, won and a 80-step limit
  (textworld's ``Limit``: the step that reaches 80 ends the episode);
- the observation: the game's reply with everything up to and including the objective removed
  (``text.split(objective)[-1]``, stripped) at every step, so "goal" shows nothing of it; no image,
  no action list (every string is valid), ``short_term_context`` empty;
- the reward: textworld's running score; ``get_stats()``: ``progression``, set when the episode
  ends to ``max(score / max_score, won)``;
- the instruction prompt per task, which says 40, 80 and 25 steps (treasure hunter, cooking game,
  coin collector) though the limit is 80 in all three.

Played here by :class:`ZGame` (jericho's z-machine as textworld's Inform 7 wrappers drive it, without
them: BALROG's setting, ``free_commands=True``) or by textworld's env (``free_commands=False``, for
its admissible commands); both give the same replies. BALROG's textworld (its fork,
balrog-ai/TextWorld 1d56f476, textworld 1.6.2rc1) plays the treasure
hunter's and coin collector's ``.ulx`` builds on its Glulx interpreter; textworld 1.7.0 plays only
z-machine games, so every game here is the ``.z8`` compiled from the same ``.json``. The
z-machine's replies differ from Glulx's in four ways, undone by :func:`as_glulx` for those two
tasks (measured on every step of the 50 games' walkthroughs, with losses and 20 odd commands, with
BALROG's fork side by side): the status line at the end of each reply (">", spaces, "-= Room =-",
score/moves) is absent in Glulx, whose prompt ">" textworld strips (except after the game's end
question, which it prints as "> "); centred lines ("*** The End ***") sit 24 columns further left
on Glulx's 80-column window; "version" names another interpreter. The cooking game is a ``.z8`` in
BALROG too, so its replies (status line included) are shown as they are.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rl4vlm_gym.extras import require

require("balrog", "BALROG's TextWorld envs")  # before importing it: an error naming the extra

import jericho
import numpy as np
import textworld
from PIL import Image, ImageDraw
from textworld.core import GameState

from rl4vlm_gym import patches
from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog.textworld_games import GLULX_TASKS, POOL, TASKS, make_game, skipped_steps, walkthrough
from rl4vlm_gym.parsing import ActionParser
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

STEP_LIMIT = 80  # BALROG's textworld_kwargs.max_episode_steps, for every task
# With free_commands (BALROG's setting) the game is played by ZGame, without textworld's env. With
# free_commands=False textworld's env gives the admissible commands (its state tracking, several
# times a step's cost), with these infos: BALROG's objective, score, max_score and won, "lost",
# and not BALROG's description: textworld gets it by having the game describe the room after every
# command, in tags it cuts from the reply, which costs 1.4-6x a step (cooking 9.0 -> 1.6 ms) and
# changes no reply.
GAME_INFOS = dict(objective=True, score=True, max_score=True, won=True, lost=True)  # fmt: skip
MAX_COMMAND = 200  # characters of a free command
# Interpreter commands, refused as invalid steps. Under BALROG they reach the interpreter: on Glulx,
# save, restore, script, transcript and a confirmed quit end the interpreter (BALROG's episode then
# fails with an error and drops out of its averages), on the z-machine save and restore write and
# read files in the working folder; nothing either could match.
INTERPRETER_VERBS = frozenset({"save", "restore", "script", "unscript", "noscript", "transcript", "quit", "q"})
# Glulx rewinds "undo" and repeats the last command on "again" / "g"; the z-machine (jericho) has no
# undo and does not know "again": refused for the two Glulx tasks, passed on in the cooking game.
GLULX_ONLY_VERBS = frozenset({"undo", "again", "g"})

_STATUS_LINE = re.compile(r" +-= [^\n]* =-\d+/\d+\Z")  # the z-machine's status line, at the reply's end
_GAME_OVER_PROMPT = "QUIT or UNDO the last command?\n>"  # Glulx prints this prompt as "> ": kept
_CENTRED = re.compile(r"^ {24}( *\*\*\* .* \*\*\*)$", re.MULTILINE)
_Z_VERSION = "Standard interpreter 1.0 (1F) / Library serial number"
_GLULX_VERSION = "Interpreter version 1.3.5 / VM 3.1.2 / Library serial number"
_BG, _FG = (16, 16, 16), (230, 230, 230)
_MIN_FONT = 6

# BALROG's instruction prompts (balrog/environments/textworld/__init__.py, ``intruction_prompts``,
# returned stripped by ``get_instruction_prompt``), verbatim: the step counts (40, 80, 25) are
# BALROG's, though every task allows 80 steps.
PROMPTS = {
    "treasure_hunter": (
        "You are an agent playing TextWorld, a text-based adventure game where you are in a randomly generated\n"
        "    maze and must find a specific object. You need to explore different rooms to find the target object.\n"
        "    Here are the available commands: look: describe the current room. goal: print the goal of this game\n"
        "    inventory: print the player’s inventory go <dir>: move the player north, east, south, or west. You can\n"
        "    only go in the direction indicated with an exit or a door. open ...: open a door or a container. You need to\n"
        "    open a closed door before you want to go through it. drop ...: drop an object on the floor take ...: take an\n"
        "    object that is visible. Make sure the object is visible to take. put ... on ...: place an object on a supporter\n"
        "    take ... from ...: take an object from a container or a supporter insert ... into ...: place an object into a\n"
        "    container unlock ... with ...: unlock a door or a container with a key. You need to unlock a locked door\n"
        "    with a matched key in your inventory before you want to open it.\n"
        "    - The target object might be located in a closed or locked container. - The adjective is useful for\n"
        "    determining whether the key is matched with the lock (e.g. non-euclidean keycard is matched with\n"
        "    non-euclidean safe). Make sure it is matched to unlock! - The key required to unlock the door may be in\n"
        "    another room or locked inside a container. - Take the key whenever you can. - After unlocking a locked\n"
        "    door or container, it will remain closed. You will then need to open it.\n"
        "    You have 40 steps to complete the task. Restarting is forbidden."
    ),
    "the_cooking_game": (
        "You are an agent playing TextWorld, a text-based adventure game where you navigate through different\n"
        "    rooms, interact with objects, and solve puzzles. Your goal is to first find the recipe, find and prepare food\n"
        "    according to the recipe, and finally prepare and eat the meal.\n"
        "    Here are the available commands: look: describe the current room goal: print the goal of this game\n"
        "    inventory: print player’s inventory go <dir>: move the player north, east, south or west. You can only go\n"
        "    to directions indicated with an exit or a door. examine ...: examine something more closely eat ...: eat\n"
        "    edible food open ...: open a door or a container. You need to open a closed door before you can go through\n"
        "    it. drop ...: drop an object onto the floor take ...: take an object that is visible put ... on ...: place an object\n"
        "    on a supporter take ... from ...: take an object from a container or a supporter insert ... into ...: place an\n"
        "    object into a container lock ... with ...: lock a door or a container with a key unlock ... with ...: unlock a\n"
        "    door or a container with a key cook ... with ...: cook cookable food with something providing heat slice ...\n"
        "    with ...: slice cuttable food with something sharp chop ... with ...: chop cuttable food with something\n"
        "    sharp dice ... with ...: dice cuttable food with something sharp prepare meal: combine ingredients from\n"
        "    inventory into a meal. You can only prepare meals in the Kitchen.\n"
        "    - You can examine the cookbook to see the recipe when it is visible. - The BBQ is for grilling things,\n"
        "    the stove is for frying things, the oven is for roasting things. Cooking ingredients in the wrong way will\n"
        "    lead to a failure of the game. - Once you have got processed ingredients and the appropriate cooking tool\n"
        "    ready, cook all of them according to the recipe. - There are two conditions to correctly cook something\n"
        "    (grill/fry/roast): a) the ingredient you want to cook is in your inventory and b) there is a suitable cooking\n"
        "    tool in the room, and then use ‘cook . . . with . . . ’ command. - When you need to chop/slice/dice\n"
        "    ingredients, you need to take the knife and the ingredient in your inventory and then ‘slice/chop/dice ...\n"
        "    with knife’ - Make sure to first process the food (chop/slice/dice) before you try to cook them. - When\n"
        "    you have all the ingredients (that got processed or cooked according to the menu), you can ‘prepare meal’\n"
        "    in the kitchen and then ‘eat meal’ to win the game. - The ingredients should EXACTLY match the color\n"
        "    in the recipe, but if the recipe doesn’t specify color, any color would be fine. When you ‘take ... with ...’,\n"
        "    use the EXACT name you see. - You don’t need to examine the container/supporter (e.g. toolbox) when\n"
        '    it says something like "there isn’t a thing on it"/"has nothing on it"\n'
        "    You have 80 steps to complete the task. Restarting is forbidden."
    ),
    "coin_collector": (
        "You are an agent playing TextWorld, a text-based adventure game where you are in a randomly generated\n"
        "    maze and must find the coin. You need to explore different rooms to find the target object.\n"
        "    Here are the available commands: goal: print the goal of this game go <dir>: move the player north, east,\n"
        "    south, or west. You can only go in the direction indicated with something like an exit or a door. take coin:\n"
        "    2in the game by ‘take coin’ if you see the coin in the room\n"
        "    The only action you can do is go <dir> to explore the maze and ‘take coin’ when you see the coin in the\n"
        "    room.\n"
        "    You have 25 steps to complete the task. Restarting is forbidden."
    ),
}


def as_glulx(reply: str) -> str:
    """A z-machine reply as BALROG's Glulx build of the same game gives it (module docstring)."""
    status = _STATUS_LINE.search(reply)
    if status:
        reply = reply[: status.start()]
    if reply.endswith("\n>") and not reply.endswith(_GAME_OVER_PROMPT):
        reply = reply[:-2]
    return _CENTRED.sub(r"\1", reply).replace(_Z_VERSION, _GLULX_VERSION)


def filter_objective(reply: str, objective: str) -> str:
    """BALROG's observation text: what follows the reply's last copy of the objective (all of the
    reply if it has none), stripped."""
    return (reply.split(objective)[-1] if objective else reply).strip()


def _wrap(text: str, face: Any, width: float) -> list[str]:
    # Own wrapping (textwrap counts characters, not pixels of a proportional font).
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and face.getlength(candidate) > width:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return lines


def draw_text(text: str, size: tuple[int, int]) -> NDArray[np.uint8]:
    """``text`` drawn as a page, light on dark, wrapped, in the largest font (down to 6 px) that fits;
    at 6 px what does not fit is cut at a line's end and marked "[...]"."""
    height, width = size
    margin = max(2, width // 64)
    px = max(_MIN_FONT, min(width, height) // 28)
    while True:
        face = font(px)
        step = px + max(1, px // 4)
        lines = _wrap(text, face, width - 2 * margin)
        if len(lines) * step <= height - 2 * margin or px == _MIN_FONT:
            break
        px = max(_MIN_FONT, px * 9 // 10)
    rows = max(1, (height - 2 * margin) // step)
    if len(lines) > rows:
        lines = [*lines[: rows - 1], "[...]"]
    image = Image.new("RGB", (width, height), _BG)
    pen = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        pen.text((margin, margin + i * step), line, fill=_FG, font=face)
    return to_array(image)


_TRACKED = ("moves", "score")  # the extra infos textworld's Inform 7 wrapper always tracks, in its order
_TAGGED = {tag: re.compile(rf"<{tag}>\n(.*)</{tag}>", re.DOTALL) for tag in _TRACKED}
_DEBUG_TAG = re.compile(r"\[[^]]+\]\n?")


class ZGame:
    """One compiled game played on jericho's z-machine as textworld 1.7's Inform 7 wrappers play it
    for BALROG's infos, without them (textworld.envs.wrappers.tw_inform7 and zmachine/jericho.py,
    read for what they do): at reset the game is told to print its moves and score after every
    command ("tw-extra-infos moves", then "score"); a command goes to the game stripped; the reply
    loses those tags (textworld's pattern: the first "<tag>" line to the last "</tag>"), the score
    is read from them (kept when absent), and the game is won or lost when the reply says "*** The
    End ***" or "*** You lost! ***". Objective, maximum score and walkthrough come from the game's
    ``.json`` as textworld reads them. textworld would parse the whole definition first (10-90 ms
    per game start); this reads three fields. ``reset`` and ``step`` return textworld's
    ``GameState`` (feedback, score, max_score, won, lost, objective, extra.walkthrough)."""

    def __init__(self, path: str) -> None:
        data = json.loads(Path(path).with_suffix(".json").read_bytes())
        quests = data.get("quests") or []
        self.objective = data.get("objective") or "\nAND\n".join(q["desc"] for q in quests if q.get("desc"))
        if any(q.get("repeatable") and q["reward"] > 0 for q in quests):
            self.max_score: float = math.inf
        else:
            self.max_score = sum(q["reward"] for q in quests if not q.get("optional") or q["reward"] > 0)
        self.walkthrough = list((data.get("metadata") or {}).get("walkthrough") or [])
        # jericho warns that it does not know textworld's games (its list is of published ones):
        # only its own score and move detection are off, which are not used.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*is not fully supported")
            self.machine = jericho.FrotzEnv(path, -1)

    def _state(self, feedback: str, score: Any) -> GameState:
        return GameState(
            feedback=feedback,
            score=score,
            max_score=self.max_score,
            objective=self.objective,
            won="*** The End ***" in feedback,
            lost="*** You lost! ***" in feedback,
            **{"extra.walkthrough": self.walkthrough},
        )

    def reset(self) -> GameState:
        feedback, _ = self.machine.reset()
        score = None
        for tag in _TRACKED:
            reply, *_ = self.machine.step(f"tw-extra-infos {tag}")
            found = _TAGGED["score"].search(reply)
            if found:
                score = _DEBUG_TAG.sub("", found.group(1)).strip() or score
        self.state = self._state(feedback, int(score) if score else score)
        return self.state

    def step(self, command: str) -> tuple[GameState, Any, bool]:
        with warnings.catch_warnings():  # jericho cuts a command past 198 bytes, as in BALROG
            warnings.simplefilter("ignore", jericho.TruncatedInputActionWarning)
            feedback, *_ = self.machine.step(command.strip())
        score = None
        for tag in _TRACKED:
            found = _TAGGED[tag].search(feedback)
            if found:
                value = _DEBUG_TAG.sub("", found.group(1)).strip()
                feedback = _TAGGED[tag].sub("", feedback)
                if tag == "score":
                    score = value
        self.state = self._state(feedback, int(score) if score else self.state.score)
        return self.state, self.state.score, bool(self.state.won or self.state.lost)

    def close(self) -> None:
        self.machine.close()


_GAMES: dict[tuple[str, int, int], Any] = {}  # textworld's Game of a .json, by path, size and mtime
GAMES_KEPT = 25  # the last used; a cooking game's Game holds about 1.6 MB


def _game_data(path: str) -> Any:
    """textworld's ``Game`` of the ``.json`` beside ``path``, loaded once per process while among
    the last ``GAMES_KEPT`` used (a load costs 0.02-0.13 s; a kit check starts one game up to 18
    times). textworld never changes a ``Game`` while playing it (its ``copy()`` of an env shares
    it: "Reference"), so every env of the game shares one."""
    from textworld.generator.game import Game

    json_path = str(Path(path).with_suffix(".json"))
    stat = Path(json_path).stat()
    key = (json_path, stat.st_size, stat.st_mtime_ns)
    game = _GAMES.pop(key, None)
    if game is None:
        game = Game.load(json_path)
    _GAMES[key] = game  # the last used last
    while len(_GAMES) > GAMES_KEPT:
        del _GAMES[next(iter(_GAMES))]
    return game


def _start(path: str, infos: Any) -> Any:
    """textworld's env of the game at ``path``, started, as ``textworld.start`` starts it (backend,
    then its Inform 7 wrappers, then ``load``), with the game's ``Game`` from :func:`_game_data`:
    textworld's wrappers take the wrapped env's ``_game`` when it has one, else load the ``.json``
    (the patch ``textworld-shared-game``: ``textworld.start`` itself where it is refused).
    jericho warns that it does not know textworld's games (its list is of published ones): only its
    own score and move detection are off, which textworld does not use."""
    shared = patches.guard("textworld-shared-game")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not fully supported")
        if not shared:
            return textworld.start(path, request_infos=infos)
        from textworld.envs import TWInform7, _guess_backend

        env = _guess_backend(path)(infos)
        env._game = _game_data(path)
        env = TWInform7(env)
        env.load(path)
    return env


@dataclass
class _Planner:
    """A game that tracks the quest (textworld's ``policy_commands``), its last state, and the
    episode's commands it has played."""

    game: Any
    state: Any
    commands: list[str]


@dataclass(frozen=True)
class CommandParser(ActionParser):
    """Our parser, then any other one-line command of at most ``MAX_COMMAND`` characters exactly as
    written (BALROG passes every string to the game; an empty one, which BALROG's agents can give,
    passes in BALROG's action formats, where our contract reads an empty output), without control
    characters (a NUL crashes jericho's z-machine); interpreter commands
    stay refused (``refused``: the verbs of ``INTERPRETER_VERBS``, and of ``GLULX_ONLY_VERBS`` for
    the two Glulx tasks)."""

    refused: frozenset[str] = INTERPRETER_VERBS

    def _match(self, value: Any, actions: Any) -> tuple[str | None, str | None]:
        action, error = super()._match(value, actions)
        if action is None and isinstance(value, str):
            if not value.strip() and not self.format.startswith("balrog-"):
                return None, f"{error}; the command is empty"
            if "\n" in value.strip():
                return None, f"{error}; a free command is one line"
            if len(value) > MAX_COMMAND:
                return None, f"{error}; a free command has at most {MAX_COMMAND} characters"
            if any(ord(char) < 32 and char not in "\t\n\r" for char in value):  # a NUL crashes jericho's z-machine
                return None, f"{error}; a free command has no control characters"
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:  # lone surrogates
                    return None, f"{error}; a free command is text that UTF-8 can encode"
            words = value.split()
            if words and words[0].lower() in self.refused:
                return None, f"{words[0]!r} is an interpreter command (save, restore, quit, ...), not a game move"
            return value, None
        return action, error


def inadmissible_steps(task: str, index: int) -> tuple[int, ...]:
    """The steps of game ``index`` of ``task``'s walkthrough (0-based) that are not among textworld's
    admissible commands when they come, found by playing the walkthrough with each admissible step
    played (a second or two for a cooking game): the steps the oracle leaves out.
    ``tw_plans.json`` holds them for the 75 games (``python -m
    rl4vlm_gym.envs.balrog.textworld_games --plans`` writes it), so that no episode pays for this
    game; tests/envs/balrog/test_textworld.py holds the file to it on every game."""
    player = _start(str(make_game(task, index)), textworld.EnvInfos(**GAME_INFOS, admissible_commands=True))
    try:
        state, left_out = player.reset(), []
        for step, command in enumerate(walkthrough(task, index)):
            if command in state.admissible_commands:
                state, _, _ = player.step(command)
            else:
                left_out.append(step)
    finally:
        player.close()
    return tuple(left_out)


@dataclass(frozen=True)
class TextWorldLevel:
    """BALROG's only setting per task."""

    def describe(self) -> str:
        return "BALROG's setting: one of its 25 games of the task (game seed mod 25)"


NO_DECISIONS = "no exact solver: the oracle plays the game's walkthrough or textworld's re-plan, short but not proven shortest"
"""Why :meth:`TextWorld.decision` gives no optimal commands or steps to go."""


class TextWorld(VLMEnv):
    """BALROG's TextWorld tasks (treasure hunter, the cooking game, coin collector): its 75 games.

    ## Description
    Text adventures made by TextWorld (Côté et al. 2018) and played by its z-machine interpreter:
    the 25 games per task that BALROG plays (conglu1997/intelligent-go-explore ``textworld/tw_games``,
    MIT; :mod:`~rl4vlm_gym.envs.balrog.textworld_games`). ``treasure_hunter``: find and take one
    object in a 20-room house of locked doors and containers (the keys are in it), without taking
    the forbidden one (every walkthrough is 20 steps); ``the_cooking_game``: read the cookbook, gather
    5 ingredients from 12 rooms, cut and cook them as it says, prepare the meal and eat it (45 to 90
    steps in the games' walkthroughs, 39-75 without their redundant steps; burning or eating an
    ingredient loses); ``coin_collector``: take the coin at the end of a chain of rooms in a
    60-room maze of dead ends (20 steps). The objective (``mission``) names only the last step
    ("pick up the key from the safe"), and, as in BALROG, it is cut from every observation: "goal"
    shows nothing. An episode ends when the game is won or lost, or at BALROG's limit of 80 steps.
    The oracle plays the game's walkthrough (its ``.json``) without the steps that are not
    admissible when they come (the cooking walkthroughs take inventory and open a fridge or a door
    twice), re-planned by textworld from the current state if the episode left it;
    ``optimal_steps`` is that plan's length, short but not proven shortest (the kit's search for a
    shorter solution is skipped: ``EXPENSIVE_PLAN``).

    Decisions (``decision()``): none: the walkthrough and textworld's re-plans are short, not
    proven shortest, so no optimal command or steps to go is claimed (``optimal_actions`` None,
    ``steps_to_go`` -1, with that reason). Features ``score`` and ``points_left`` (to ``max_score``).

    ``reset(seed)`` plays game ``seed mod 25`` in sorted file order, BALROG's rule for a fixed seed;
    ``reset()`` without a seed draws the game from the env's RNG (BALROG counts episodes per process
    there). ``env.unwrapped.index`` and ``game_name`` name the game; ``state_key`` starts with them.

    Against BALROG (tests/envs/balrog/test_golden_textworld.py compares every recorded step of its
    own wrapper byte for byte): the texts, the prompt, the ends and the progression are BALROG's.
    The two Glulx tasks are played from ``.z8`` builds of the same games, their replies turned into
    Glulx's (:func:`as_glulx`, module docstring); the cooking games are compiled here again from
    their ``.json`` (the same Inform 7 source; played the same on every recorded step).
    Interpreter commands are refused (``INTERPRETER_VERBS``; Glulx's undo and again for the two
    Glulx tasks), where BALROG passes them on (see Actions). The reward is the score's change, where
    BALROG's step reward is the running score (its sum, BALROG's episode return, means nothing);
    ``info["progress"]`` is the progression at every step, where BALROG sets it at the end; an 80th
    step is reported as truncated where BALROG's textworld reports it as terminated.

    ## Observation
    - ``image``: the text below drawn as a page (BALROG has no image; light on dark, wrapped; the
      font shrinks to 6 px to fit, and only a text that does not fit even then is cut, "[...]").
    - ``text`` (``image+text`` and ``text`` modes): BALROG's observation, the game's reply to the
      last command with everything up to the objective cut (``info["balrog"]["long_term_context"]``;
      its ``short_term_context`` is empty and ``image`` None); after an invalid step our feedback,
      then the reply that stands. In ``image`` mode only our feedback on an invalid action.
    - ``mission``: the game's objective (BALROG's agent never sees it: its prompt is
      :meth:`instruction_prompt`).
    - ``actions``: with ``free_commands=False``, TextWorld's admissible commands ("go east", "take
      coin", "open fridge", "look", ...); with ``free_commands=True``, none (BALROG accepts every
      string, and textworld's state tracking, which lists them, would double a step's cost).

    ## Actions
    ``free_commands=False`` (default): one of the admissible commands; anything else is our
    contract's invalid step (the game does not see it, the state stays, the step counts).
    ``free_commands=True`` (the ``balrog`` suites): any one-line command of at most 200 characters
    goes to the game exactly as written, the empty one included, as in BALROG, except interpreter
    commands (save, restore, script, transcript, quit; and undo, again, g in the two Glulx tasks),
    which are invalid steps: BALROG's Glulx interpreter ends on the first ones (its episode then
    errors out) and rewinds or repeats on the others, which the z-machine does not do. BALROG's
    ``default_action`` ("help") is never played there (every string is valid), so the env has none.

    ## Rewards
    ``native``: the change in the game's score (treasure hunter and coin collector: 1 for the
    object; the cooking game: 1 per recipe step done, up to its ``max_score``). ``info["success"]``:
    the game is won; ``info["progress"]``: ``max(score / max_score, won)``, BALROG's progression;
    :meth:`balrog_stats` is BALROG's ``get_stats()`` (the progression from the episode's end on,
    0 before).

    ## Levels
    0: BALROG's setting, the only one.

    ## Arguments
    - ``task``: ``treasure_hunter``, ``the_cooking_game`` or ``coin_collector`` (set by the id).
    - ``free_commands``: pass commands that are not admissible to the game (see Actions).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 448x448), ``reward_variant``, ``action_format``, ``action_match``, ``render_mode``.

    ## Version History
    - v0: initial release (textworld 1.7.0). Since issue 33 it plays BALROG's 75 games with its
      texts, prompts and objective filter (games generated from seeds before).
    """

    LEVELS: ClassVar[tuple[TextWorldLevel, ...]] = (TextWorldLevel(),)
    REWARDS: ClassVar = {"native": {"step": 1.0, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str | None] = None  # BALROG's "help" is never played: every string is valid there
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (448, 448)
    FIXED_EPISODES: ClassVar[bool] = True  # 25 games per task, each with its own objective
    EXPENSIVE_PLAN: ClassVar[bool] = True  # the walkthrough is short, not proven shortest (see Description)

    def __init__(self, *, task: str = "coin_collector", free_commands: bool = False, **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"task={task!r} is unknown; choose one of {TASKS}")
        if not isinstance(free_commands, bool):
            raise ValueError(f"free_commands={free_commands!r} must be True or False")
        self.task = task
        self.free_commands = free_commands
        self.glulx = task in GLULX_TASKS
        super().__init__(**kwargs)
        if free_commands:
            refused = INTERPRETER_VERBS | (GLULX_ONLY_VERBS if self.glulx else frozenset())
            fields = {f.name: getattr(self.parser, f.name) for f in dataclasses.fields(self.parser)}
            self.parser = CommandParser(**fields, refused=refused)
        # the walkthrough (the oracle's plan) from the game's .json, which textworld reads anyway
        self.infos = textworld.EnvInfos(**GAME_INFOS, admissible_commands=not free_commands, extras=["walkthrough"])
        self.games: dict[int, Any] = {}  # started games by index: a start costs 0.1-0.3 s
        self.regions: dict[int, tuple[int, int, NDArray[np.uint8]]] = {}  # per game: what state_key hashes
        self.index = -1
        self._seeded_game: int | None = None  # the game reset(seed) names (seed mod 25)
        self._planner: _Planner | None = None  # the game _replan keeps for the episode's next replan

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Start an episode; with a ``seed``, of game ``seed mod 25`` (see Description)."""
        self._seeded_game = None if seed is None else int(seed) % POOL
        return super().reset(seed=seed, options=options)

    def _new_episode(self, config: TextWorldLevel) -> None:
        drawn = int(self.np_random.integers(POOL))  # drawn even when the seed names the game
        self.index = drawn if self._seeded_game is None else self._seeded_game
        self.commands: list[str] = []  # sent since reset: a pickled env replays them
        self.state = self._restart()
        self.objective = self.state.objective or ""
        self.reply = self._balrog_text(self.state.feedback)
        self.walkthrough = tuple(self.state["extra.walkthrough"])
        self.plan: list[str] | None = None  # the oracle's next commands, planned when first asked
        self._close_planner()  # its commands are another episode's
        self.ended_progression = 0.0  # BALROG's get_stats(): set when the episode ends

    def _restart(self) -> Any:
        """Start (or restart) the episode's game and return its first state."""
        if self.index not in self.games:
            path = str(make_game(self.task, self.index))
            self.games[self.index] = ZGame(path) if self.free_commands else _start(path, self.infos)
            state = self.games[self.index].reset()
            self.regions[self.index] = self._world_region(path)
            return state
        return self.games[self.index].reset()

    def _world_region(self, path: str) -> tuple[int, int, NDArray[np.uint8]]:
        """Where the game keeps its world in the z-machine's memory, for ``state_key``: the object
        table (header word 0x0A: 63 property defaults, then 14-byte entries of 6 attribute bytes
        and parent, sibling, child and property-table addresses) up to the globals (word 0x0C),
        the property tables included; with a mask that clears Inform's bookkeeping, the attributes
        and bytes that a "look" or an "inventory" changes (which things were last mentioned), found
        by trying both on the started game and restoring it."""
        with open(path, "rb") as file:
            header = file.read(16)
        start, end = int.from_bytes(header[10:12], "big"), int.from_bytes(header[12:14], "big")
        machine = self._machine()
        saved = machine.get_state()
        memories = [saved[0][start:end].copy()]
        for command in ("look", "inventory"):
            machine.step(command)
            memories.append(machine.get_state()[0][start:end].copy())
        machine.set_state(saved)
        changed = np.zeros(end - start, np.uint8)
        for before, after in zip(memories, memories[1:]):
            changed |= before ^ after
        entries = 63 * 2  # the object entries follow the property defaults
        first_properties = int.from_bytes(bytes(memories[0][entries + 12 : entries + 14]), "big") - start
        count = max(0, (first_properties - entries) // 14)
        attributes = np.zeros(6, np.uint8)  # attribute bits changed on any object: cleared on all
        for offset in np.nonzero(changed[entries : entries + 14 * count])[0]:
            if offset % 14 < 6:
                attributes[offset % 14] |= changed[entries + offset]
        mask = np.full(end - start, 255, np.uint8) & ~changed
        for index in range(count):
            at = entries + 14 * index
            mask[at : at + 6] = 255 & ~attributes
        return start, end, mask

    @property
    def game(self) -> Any:
        """The game being played: a :class:`ZGame` with ``free_commands``, else textworld's env."""
        return self.games[self.index]

    def _machine(self) -> Any:
        """jericho's z-machine of the game being played."""
        game = self.game
        return game.machine if isinstance(game, ZGame) else game.unwrapped._jericho

    @property
    def game_name(self) -> str:
        """The game's file name in BALROG's ``tw_games`` (without extension)."""
        from rl4vlm_gym.envs.balrog.textworld_games import names

        return names(self.task)[self.index]

    def _balrog_text(self, feedback: str) -> str:
        return filter_objective(as_glulx(feedback) if self.glulx else feedback, self.objective)

    def _actions(self) -> tuple[str, ...]:
        if self.free_commands:
            return ()
        return tuple(dict.fromkeys(self.state.admissible_commands or ()))

    def _apply(self, action: str) -> StepOutcome:
        before = self.state.score
        self.state, _, done = self.game.step(action)
        self.commands.append(action)
        self.reply = self._balrog_text(self.state.feedback)
        if self.plan is not None:
            self.plan = self.plan[1:] if self.plan and self.plan[0] == action else []
        return StepOutcome("step", terminated=bool(done), scale=float(self.state.score - before))

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        # BALROG's progression is set when the episode ends, by the game or by its 80 steps
        if outcome.terminated or outcome.truncated or self.elapsed_steps >= STEP_LIMIT:
            self.ended_progression = self._progress()
        return outcome

    def balrog_stats(self) -> dict[str, Any]:
        """BALROG's ``get_stats()``: ``{"progression": max(score / max_score, won)}`` once the
        episode has ended (by the game or at step 80), 0.0 before."""
        return {"progression": self.ended_progression}

    def _describe(self) -> str:
        return self.reply

    def _text(self, feedback: str) -> str:
        return "\n".join(part for part in (feedback, "" if self.obs_mode == "image" else self.reply) if part)

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        info["balrog"] = {"long_term_context": self.reply, "short_term_context": "", "image": None}
        return info

    def _mission(self) -> str:
        return self.objective

    def instruction_prompt(self) -> str:
        """BALROG's prompt for the task, verbatim (its 40 / 80 / 25 steps included: the limit is 80)."""
        return PROMPTS[self.task]

    def _render(self) -> NDArray[np.uint8]:
        return draw_text(self.reply, self.image_size)

    def _frame_key(self) -> Any:
        return (self.reply, self.image_size)

    def _state_key(self) -> str:
        # The game's object tree, attributes and properties as the z-machine holds them (less
        # Inform's bookkeeping of what was last mentioned: _world_region), with the score and the
        # end: what is where, open, locked, cut or cooked. A state that differs only in a global
        # variable shares the key; the first return to a room marks it (a new key once).
        start, end, mask = self.regions[self.index]
        memory = self._machine().get_state()[0][start:end] & mask
        state = self.state
        digest = hashlib.sha256(memory.tobytes() + repr((state.score, state.won, state.lost)).encode())
        return f"{self.task}|game={self.index}|score={state.score}|{digest.hexdigest()[:32]}"

    def _success(self) -> bool:
        return bool(self.state.won)

    def _progress(self) -> float:
        if self.state.won:
            return 1.0
        return max(0.0, min(1.0, self.state.score / self.state.max_score)) if self.state.max_score else 0.0

    def _optimal_steps(self) -> int | None:
        return len(self._plan_from_start())

    def _plan_from_start(self) -> tuple[str, ...]:
        """The oracle's commands from the reset: the walkthrough without its steps that are not
        admissible when they come (the cooking walkthroughs take inventory and open a fridge or a
        door twice: 45-90 steps, 39-75 without), as :func:`inadmissible_steps` finds them by playing;
        read from ``tw_plans.json`` (:func:`~rl4vlm_gym.envs.balrog.textworld_games.skipped_steps`),
        which the tests hold to that rule on all 75 games."""
        skipped = skipped_steps(self.task, self.index)
        return tuple(command for step, command in enumerate(self.walkthrough) if step not in skipped)

    def _decision(self) -> Decision:
        # No shortest-path solver: the walkthrough and textworld's re-plans are short, not proven
        # shortest (optimal_steps says as much), so no steps to go or optimal command is claimed.
        score, most = self.state.score or 0, self.state.max_score
        features: dict[str, int | str] = {"score": int(score)}
        if most is not None and math.isfinite(most):
            features["points_left"] = int(most) - int(score)
        return Decision(None, None, reason=NO_DECISIONS, features=features)

    def oracle_action(self) -> str:
        if self.plan is None:  # first asked: the plan from the reset if the episode followed it so far
            full = list(self._plan_from_start())
            done = len(self.commands)
            self.plan = full[done:] if full[:done] == self.commands else []
        if not self.plan and not (self.state.won or self.state.lost):
            self.plan = self._replan()
        return self.plan[0] if self.plan else "look"

    def _replan(self) -> list[str]:
        """textworld's plan from the current state: the episode's commands replayed in a game that
        tracks the quest (seconds; only when the episode left the walkthrough). The game is kept for
        the episode's next replan, which then plays only the commands sent since: the same
        commands in the same order on the same game as a replay from the start, so the same plan,
        without replaying the whole episode at each replan (a policy mixing random and oracle
        moves replans after every random move)."""
        planner = self._planner
        if planner is None or planner.commands != self.commands[: len(planner.commands)]:
            self._close_planner()
            infos = textworld.EnvInfos(**GAME_INFOS, policy_commands=True)
            game = _start(str(make_game(self.task, self.index)), infos)
            planner = self._planner = _Planner(game, game.reset(), [])
        for command in self.commands[len(planner.commands) :]:
            planner.state, _, _ = planner.game.step(command)
            planner.commands.append(command)
        return list(planner.state.policy_commands or ())

    def _close_planner(self) -> None:
        if self._planner is not None:
            self._planner.game.close()
            self._planner = None

    def close(self) -> None:
        for game in self.games.values():
            game.close()
        self.games.clear()
        self._close_planner()
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["games"], state["state"] = {}, None  # an interpreter cannot be pickled: rebuilt by replay
        state["_planner"] = None  # nor the planner's: the copy starts its own when it replans
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.index >= 0:  # the game is deterministic: replaying the episode's commands restores it
            self.state = self._restart()
            for command in self.commands:
                self.state, _, _ = self.game.step(command)
