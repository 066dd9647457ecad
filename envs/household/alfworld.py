"""ALFWorld's real games behind the RL4VLM Gym contract, with a rendered view of the true state.

:class:`ALFWorld` plays the ``game.tw-pddl`` files users download from ALFWorld (TextWorld's PDDL
env with ALFWorld's demangled names, as ``alfworld.agents.environment.AlfredTWEnv`` plays them), so
the text, the admissible commands and the win condition are ALFWorld's own. The image is drawn from
a :class:`~rl4vlm_gym.envs.household.view.View` built from the game's PDDL facts after each step.
:func:`find_games` discovers the games of a split the way ALFWorld does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import random
import re
import zlib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rl4vlm_gym.core import Decision, MissingDataError, ObsDict, StepOutcome
from rl4vlm_gym.envs.household.alfworld_oracle import Board, Statics, goal_of, statics_of
from rl4vlm_gym.envs.household.base import HouseholdBase
from rl4vlm_gym.envs.household.bounded import BoundExceeded, call_bounded
from rl4vlm_gym.envs.household.goals import TASK_TYPES, Goal
from rl4vlm_gym.envs.household.oracle import features, optimal_commands, plan
from rl4vlm_gym.envs.household.view import Item, View
from rl4vlm_gym.extras import require

__all__ = ["ALFWorld", "GAME_FILE", "SPLITS", "default_data_dir", "find_games", "task_type"]

logger = logging.getLogger(__name__)

GAME_FILE = "game.tw-pddl"
SPLITS = ("train", "valid_seen", "valid_unseen")
"""ALFWorld's splits: 3,553 training games, 140 seen and 134 unseen evaluation games."""
ENV_VAR = "ALFWORLD_DATA"
_RELEASES = "https://github.com/alfworld/alfworld/releases/download"
_DOWNLOAD = (
    "Download the games with `alfworld-download` (installed by the `household` extra; it writes to $ALFWORLD_DATA or "
    f"~/.cache/alfworld), or unzip ALFWorld's GitHub release assets into that folder: {_RELEASES}/0.2.2/json_2.1.1_json.zip "
    f"and {_RELEASES}/0.2.2/json_2.1.1_pddl.zip (games with the `put X in/on Y` command), or the game files with the "
    f"current `move X to Y` command, {_RELEASES}/0.4.2/json_2.1.3_tw-pddl.zip ({_RELEASES}/0.4.0/json_2.1.2_tw-pddl.zip "
    "is what alfworld 0.4.2's alfworld-download fetches)."
)

# Predicates that no action changes: types, object properties, where receptacles stand.
_STATIC = frozenset(
    {
        "receptacleatlocation", "receptacletype", "objecttype", "cancontain", "openable", "pickupable",
        "cleanable", "heatable", "coolable", "toggleable", "sliceable", "isreceptacleobject", "moveable",
    }
)  # fmt: skip
_ROOMS = {0: "kitchen", 2: "livingroom", 3: "bedroom", 4: "bathroom"}  # ALFRED's FloorPlan hundreds
_SOLVABLE = re.compile(rb'"solvable"\s*:\s*(true|false)\s*}\s*$')
_TASK_MARKER = "Your task is to: "

_scans: dict[str, tuple[str, ...]] = {}  # solvable games per scanned folder (real path), for this process
_plans: dict[tuple[str, int, int], tuple[str, ...]] = {}  # the expert's plan from the start per game file
_gave_up: dict[tuple[str, int, int], tuple[float, int]] = {}  # games whose first plan hit these bounds
_replans: OrderedDict[tuple[tuple[str, int, int], str], tuple[str, ...]] = OrderedDict()  # see ALFWorld._bounded_plan
_REPLANS = 4096  # how many mid-episode plans a process keeps (a few hundred bytes each)
_misplanned: set[str] = set()  # games where Fast Downward found a plan shorter than the exact planner's (see _check_exact)
_goals: dict[tuple[str, int, int], tuple[Goal | None, str]] = {}  # per game file: its goal and put-grammar (see _game_goal)
PLANNERS = ("exact", "fast-downward")
"""The oracle's planners: the exact household planner (``alfworld_oracle.py``, the default), or ALFWorld's expert (Fast Downward)."""
_UNSOLVABLE = "unsolvable from here"


# -- Discovering games -----------------------------------------------------------------------------


def default_data_dir() -> Path:
    """Where ALFWorld keeps its data: ``$ALFWORLD_DATA``, else ``~/.cache/alfworld``."""
    return Path(os.environ.get(ENV_VAR) or Path.home() / ".cache" / "alfworld").expanduser()


def task_type(game: str | os.PathLike[str]) -> str:
    """A game's task type, from ALFWorld's folder name ``<task_type>-<Obj>-<MRecep>-<Recep>-<scene>/trial_*/``."""
    return Path(game).parent.parent.name.split("-", 1)[0]


def _room(game: str) -> str:
    """The room kind of the game's ALFRED scene (the folder name's last field), or ``""``."""
    scene = Path(game).parent.parent.name.rsplit("-", 1)[-1]
    if not scene.isdigit() or not 1 <= int(scene) % 100 <= 30:
        return ""
    return _ROOMS.get(int(scene) // 100, "")


def _task_names(task_types: Sequence[int | str] | int | str | None) -> frozenset[str] | None:
    if task_types is None:
        return None
    if isinstance(task_types, (str, int)):
        task_types = [task_types]
    names = set()
    for task in task_types:
        if isinstance(task, (int, np.integer)) and not isinstance(task, bool) and 1 <= task <= len(TASK_TYPES):
            names.add(TASK_TYPES[int(task) - 1])
        elif isinstance(task, str) and task in TASK_TYPES:
            names.add(task)
        else:
            raise ValueError(
                f"task_types: {task!r} is not an ALFWorld task type; give ids 1..{len(TASK_TYPES)} or names {TASK_TYPES}"
            )
    if not names:
        raise ValueError("task_types is empty; give None for every task type")
    return frozenset(names)


def _solvable(game: str) -> bool:
    """ALFWorld's filter: the file's JSON has ``"solvable": true``. ALFWorld writes that key last,
    so the file's tail answers; other layouts are parsed in full."""
    try:
        with open(game, "rb") as file:
            file.seek(max(0, os.fstat(file.fileno()).st_size - 256))
            match = _SOLVABLE.search(file.read())
            if match:
                return match.group(1) == b"true"
            file.seek(0)
            return json.load(file).get("solvable") is True
    except (OSError, ValueError, AttributeError) as err:  # unreadable, not JSON, or not a JSON object
        logger.warning("skipping the ALFWorld game %s: %s", game, err)
        return False


def _scan(root: Path) -> tuple[str, ...]:
    """The solvable games under ``root``, sorted; cached per folder (a full train split is 3,553 games)."""
    key = os.path.realpath(root)
    if key in _scans:
        return _scans[key]
    games, seen = [], set()
    for folder, subfolders, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        relative = os.path.relpath(folder, root)
        if real in seen or "movable" in relative or "Sliced" in relative:  # ALFWorld skips these tasks
            subfolders.clear()
            continue
        seen.add(real)  # symlinks may loop
        if GAME_FILE in files and _solvable(os.path.join(folder, GAME_FILE)):
            games.append(os.path.join(folder, GAME_FILE))
    found = tuple(sorted(games))
    if found:  # an empty folder may be filled later in the session
        _scans[key] = found
    return found


def find_games(
    data_dir: str | os.PathLike[str] | None = None,
    split: str | None = None,
    task_types: Sequence[int | str] | int | str | None = None,
) -> tuple[str, ...]:
    """The paths of ALFWorld's solvable games, sorted, as :class:`ALFWorld` plays them.

    Args:
        data_dir: ALFWorld's data folder; ``None`` for :func:`default_data_dir`.
        split: ``None`` for every game under ``data_dir``, or one of :data:`SPLITS`, looked up in
            ``<data_dir>/json_2.1.1/<split>`` and then ``<data_dir>/<split>``.
        task_types: ALFWorld's task type ids (1..6) or names; ``None`` for all.

    Raises:
        ValueError: ``split`` or ``task_types`` is not ALFWorld's.
        MissingDataError: no game was found.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split={split!r} is unknown; choose one of {SPLITS}, or None for every game under data_dir")
    names = _task_names(task_types)
    base = default_data_dir() if data_dir is None else Path(data_dir).expanduser()
    roots = [base] if split is None else [base / "json_2.1.1" / split, base / split]
    for root in roots:
        games = _scan(root) if root.is_dir() else ()
        if games and names is not None:
            kept = tuple(game for game in games if task_type(game) in names)
            if not kept:
                raise MissingDataError(
                    f"none of the {len(games)} ALFWorld games in {root} has a task type in task_types={sorted(names)}. "
                    + _DOWNLOAD
                )
            games = kept
        if games:
            return games
    tried = ", ".join(str(root) for root in roots)
    raise MissingDataError(
        f'no ALFWorld games (**/{GAME_FILE} with "solvable": true) in {tried}. Pass the data folder as '
        f"data_dir=..., or set the {ENV_VAR} environment variable (the default data_dir, else ~/.cache/alfworld). " + _DOWNLOAD
    )


# -- Reading a game's state ------------------------------------------------------------------------

Fact = tuple[str, ...]
"""A PDDL fact with ALFWorld's names: ``("inreceptacle", "apple 3", "countertop 1")``."""


def _fact(proposition: Any) -> Fact:
    return (proposition.name, *(variable.name for variable in proposition.arguments))


def _kind(name: str) -> str:
    return name.rpartition(" ")[0] or name


def _listing_key(name: str) -> tuple[str, int]:
    # ALFWorld lists things in the order of their PDDL ids, and its demangler numbers the ids of a
    # kind in that order from the highest number down: "a drawer 3, a drawer 2, a drawer 1".
    kind, _, number = name.rpartition(" ")
    return (kind, -int(number)) if number.isdigit() else (name, 0)


@dataclass(frozen=True)
class _Layout:
    """What never changes in a game: the receptacles, where they stand, which open or switch on."""

    receptacles: tuple[str, ...]
    at: Mapping[str, tuple[str, ...]]
    """Location -> the receptacles there (several share a location in some games)."""
    openable: frozenset[str]
    toggleable: frozenset[str]
    room: str


def _layout(facts: Iterable[Fact], room: str) -> _Layout:
    at: dict[str, list[str]] = defaultdict(list)
    openable, toggleable = set(), set()
    for pred, *args in facts:
        if pred == "receptacleatlocation":
            at[args[1]].append(args[0])
        elif pred == "openable":
            openable.add(args[0])
        elif pred == "toggleable":
            toggleable.add(args[0])
    receptacles = tuple(sorted((name for names in at.values() for name in names), key=_listing_key))
    places = {loc: tuple(sorted(names, key=_listing_key)) for loc, names in at.items()}
    return _Layout(receptacles, places, frozenset(openable), frozenset(toggleable), room)


def _start(game: str, data_dir: Path) -> Any:
    """TextWorld's PDDL env playing ``game`` with ALFWorld's names (``AlfredTWEnv``'s set-up, minus its
    expert: see :meth:`ALFWorld.oracle_action`)."""
    os.environ.setdefault(ENV_VAR, str(data_dir))  # importing alfworld creates this folder (else ~/.cache/alfworld)
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

    from .pddl_cache import CachedPddlEnv  # TextWorld's PddlEnv translating each game once per process

    with open(game, encoding="utf-8") as file:  # textworld.start(path) leaves the game file open
        data = json.load(file)
    env = AlfredDemangler(shuffle=False)(CachedPddlEnv(textworld.EnvInfos(won=True, admissible_commands=True, facts=True)))
    env.load(data)
    return env


def _file_key(game: str | None) -> tuple[str, int, int]:
    """A game file as the plan caches know it: its real path, modification time and size."""
    assert game is not None, "call reset() first"
    stat = os.stat(game)
    return os.path.realpath(game), stat.st_mtime_ns, stat.st_size


def _planner_state(env: Any) -> str:
    """A digest of the state Fast Downward's ``replan`` starts from: the atoms true in the live game
    (read from the library as ``PddlState`` reads its first facts) that the replanning task's
    variables range over (:func:`_replan_atoms`). That task is translated with unimportant variables
    filtered out (``pddl2sas(optimize=True)``), so facts no goal or precondition reads, such as the
    ``checked`` marks of ``look``, ``inventory`` and ``examine``, are not in it: two states that
    differ only there start one search. With the game's task (fixed per game file) this is all the
    search reads: its options fix the seed and never randomize."""
    from textworld.envs.pddl.logic import Atom

    state = env.unwrapped._pddl_state
    relevant = _replan_atoms(state.sas_replan)
    lib = state.downward_lib
    values = (Atom * lib.get_state_size())()
    lib.get_state(values)
    hasher = hashlib.sha256()
    for name in sorted(value._name for value in values):  # the raw C strings: names are ASCII PDDL atoms
        if name in relevant:
            hasher.update(name)
            hasher.update(b"\0")
    return hasher.hexdigest()


@functools.lru_cache(maxsize=32)
def _replan_atoms(sas: str) -> frozenset[bytes]:
    """The atoms (``b"Atom pred(args)"``, as the library names a state's values) that the variables of
    a SAS task range over: the value of each variable is a function of whether these hold."""
    atoms, lines = set(), iter(sas.splitlines())
    for line in lines:
        if line == "begin_variable":
            next(lines), next(lines)  # its name and axiom layer
            for _ in range(int(next(lines))):
                value = next(lines)
                if value.startswith(("Atom ", "NegatedAtom ")):
                    atoms.add(b"Atom " + value.partition(" ")[2].encode("ascii"))
    return frozenset(atoms)


def _game_goal(game: str) -> tuple[Goal | None, str]:
    """The goal of a game's PDDL problem as the exact planner reads it (None: not one it knows), and its
    grammar's put command (``"put"``: json_2.1.1's ``put O in/on R``, else ``"move"``); read once per file."""
    key = _file_key(game)
    if key not in _goals:
        with open(game, encoding="utf-8") as file:
            data = json.load(file)
        style = "put" if "put {o} in/on {r}" in data.get("grammar", "") else "move"
        _goals[key] = (goal_of(task_type(game), data["pddl_problem"]), style)
    return _goals[key]


def _expert_plan(env: Any, from_start: bool = False) -> list[str]:
    """The plan of ALFWorld's planner expert (``AlfredExpert(expert_type=PLANNER)``) from the current state
    (or from the game's start: this resets ``env``): TextWorld's PDDL env replans with Fast Downward, as
    it does for the expert's ``policy_commands``."""
    if from_start:
        env.reset()
    game = env.unwrapped
    return list(game._pddl_state.replan(game._entity_infos))


def _shortest_expert_plan(env: Any) -> list[str] | None:
    """Fast Downward's shortest plan in steps from the current state, or None where it proves there is
    none. The expert's replan is a lazy best-first search ordered by ``g`` alone that never reopens a
    closed state: with unit costs a breadth-first search, so its first plan is a shortest one. The
    games' replanning tasks have unit costs (their problems declare no metric); a task with a metric
    is given unit costs here, so this is the shortest plan whatever the game. The independent
    cross-check of the exact planner (tests, ``benchmarks/alfworld_planner_agreement.py``)."""
    from textworld.envs.pddl.logic import PddlState

    game = env.unwrapped
    state, won = game._pddl_state, game.state["won"] if game.state is not None else False
    if hasattr(state, "load_replan"):
        state.load_replan()
    task = state.sas_replan
    lib = state.downward_lib
    lib.load_sas_replan(task.replace("begin_metric\n1\nend_metric", "begin_metric\n0\nend_metric", 1).encode("utf-8"))
    try:
        plan = list(PddlState.replan(state, game._entity_infos))
    finally:
        lib.load_sas_replan(task.encode("utf-8"))
    return plan if plan or won else None  # replan's [] is both "at the goal" and "no plan"


class _HandCodedExpert:
    """ALFWorld's handcoded expert (``AlfredExpert(expert_type=HANDCODED)``) following an episode: it
    observes the welcome text, then acts on every step's state; ``"look"`` when it has nothing
    admissible to say, as in ALFWorld. It draws from Python's global ``random`` when it loops, so
    each step seeds it from the game and the step number (and puts the global state back)."""

    def __init__(self, game: str, intro: str) -> None:
        from alfworld.agents.expert import HandCodedTWAgent

        self.game = game
        self.agent = HandCodedTWAgent(max_steps=200)  # AlfredExpert's setting
        self.agent.reset(game)
        self.agent.observe(intro)
        self.steps = 0
        self.next = "look"

    def observe(self, state: Any, command: str) -> None:
        self.steps += 1
        saved = random.getstate()
        random.seed(zlib.crc32(f"{self.game}:{self.steps}".encode()))
        try:
            action = self.agent.act(state, 0, state["won"], command)
        except Exception:  # noqa: BLE001 - its timeouts and failures: ALFWorld's expert then says "look"
            action = "look"
        finally:
            random.setstate(saved)
        self.next = action if action in state["admissible_commands"] else "look"


# -- The env -----------------------------------------------------------------------------------------


class ALFWorld(HouseholdBase):
    """ALFWorld's real household games, their text and rules, with a rendered view of the true state.

    ## Description
    Each episode plays one of ALFWorld's games (Shridhar et al., ICLR 2021): a household from an ALFRED
    scene, described in TextWorld, with a task of one of six types (put an object somewhere, look at it
    under a lamp, clean/heat/cool it first, put two of a kind). The games are the ``game.tw-pddl`` files
    that users download from ALFWorld (see Arguments); ``reset(seed)`` picks one with the env's RNG, and
    ``reset(options={"game": g})`` plays game ``g`` (an index into ``env.games`` or a path). Dynamics,
    text, admissible commands and the win condition are TextWorld's PDDL env running the game, exactly
    as in ALFWorld, BALROG or verl-agent. The oracle plays the exact planner's shortest plans
    (``alfworld_oracle.py``: the household oracle over the game's PDDL facts, a median 0.3 ms a
    plan), made only when the oracle or ``optimal_steps`` is asked for. Where it does not model the
    game or the state, ALFWorld's planner expert (Fast Downward) plans, in a child process bounded in
    time and memory (``planner_timeout``, ``planner_memory_mb``), and past that bound ALFWorld's
    handcoded expert plays (``optimal_steps`` is then -1, unknown). ``planner="fast-downward"``
    plays ALFWorld's expert itself. The two planners' lengths agree from every state compared:
    ``benchmarks/alfworld_planner_agreement.py``, and a test on the sample games.

    Decisions: exact, from the exact planner, in every state it models: ``steps_to_go`` is its
    shortest plan's length, ``optimal_actions`` the admissible commands after which that is one
    shorter; features ``task``, ``phase`` (``find``, ``free`` the hands, ``clean`` / ``heat`` /
    ``cool``, ``put``, ``light``) and ``left``. None, with the reason, in a state it does not model
    (an object of the goal's kind listed in two receptacles at once) and "unsolvable from here"
    once the hands hold what no receptacle can hold. On random walks in the sample games and 19
    pick-two kitchen games, a decision costs a median 1.6 ms and 24 ms at the 95th percentile
    (a step: 40-70 ms), a plan from any state 0.24 ms and 11 ms.

    ## Observation
    - ``image``: the View of the true state (``view.py``, drawn by ``renderer.py``): in the middle of the
      room every receptacle; at a receptacle its kind, whether it is open, what is in or on it (with
      clean, hot, cool, sliced and switched-on badges), a lit lamp; always what the agent holds and the
      room kind. It is redrawn from the game's PDDL facts after every step.
    - ``text``: in ``text`` and ``image+text`` modes, ALFWorld's observation exactly: the welcome text
      with the receptacles and the task at reset, then each command's feedback ("Nothing happens." for
      anything not admissible). In ``image`` mode, only the feedback the image cannot show ("You arrive
      at loc 8." without its list of contents; empty at reset). ``text`` mode thus carries ALFWorld's
      partial text, and the image modes show the current place at every step.
    - ``mission``: the task sentence of the game ("put some alarmclock on desk.").
    - ``actions``: the admissible commands of the current state, in TextWorld's (sorted) order.

    ## Actions
    The game's own commands: ``go to R``, ``open R``, ``close R``, ``take O from R``, ``put O in/on R``
    (games of json_2.1.1) or ``move O to R`` (json_2.1.3), ``heat/cool/clean O with R``, ``use L``,
    ``slice O with K``, ``examine X``, ``look``, ``inventory``. Only admissible commands reach the
    game: anything else is an invalid action that costs a step, changes nothing and reads "Nothing
    happens.", as in ALFWorld.

    ## Rewards
    ``alfworld``: TextWorld's score, 1 on the step that wins the game, else 0. ``verl-agent``: 10 on
    the win (verl-agent/GiGPO), else 0; its trainer, not the env, penalises invalid formats. Invalid
    actions get 0 in both. The time limit is ALFWorld's 50 steps (``max_nb_steps_per_episode``),
    registered on the spec; invalid actions count.

    ## Levels
    One level: the real ALFWorld games of the chosen split and task types, as they are. ALFWorld has
    no difficulty ladder; the procedural ``rl4vlm/Household-*`` envs have one.
    ``env.unwrapped.optimal_steps`` is the length of the shortest plan from the start (the exact
    planner's, which Fast Downward's shortest equals on every game and state compared; Fast
    Downward's where the exact planner does not model the game, -1 if it also hit its bound), the
    same whichever ``planner`` plays, computed when first asked:
    ``info["optimal_steps"]`` is -2 (not computed) unless the env is made with
    ``optimal_steps_at_reset=True``, as ALFWorld's own env plans only when the expert is asked
    for. ``info["progress"]`` is 1 once the game is won, else 0, and ``info["state_key"]`` hashes
    the game's changing PDDL facts.

    ## Arguments
    - ``data_dir``: ALFWorld's data folder; default ``$ALFWORLD_DATA``, else ``~/.cache/alfworld``
      (where ``alfworld-download`` puts it). A missing or empty folder raises ``MissingDataError``
      with download instructions.
    - ``split``: ``None`` (every game under ``data_dir``), ``"train"`` (3,553 games), ``"valid_seen"``
      (140) or ``"valid_unseen"`` (134, the usual test set), looked up in ``<data_dir>/json_2.1.1/<split>``
      and then ``<data_dir>/<split>``. Like ALFWorld, discovery keeps the ``**/game.tw-pddl`` files
      marked ``"solvable": true`` and skips movable-receptacle and sliced tasks; the games are sorted.
    - ``task_types``: ALFWorld's task type ids 1..6 or names (``"pick_and_place_simple"``, ...);
      ``None`` for all.
    - ``planner_timeout`` (seconds, default 300) and ``planner_memory_mb`` (default 2048): the bounds of
      one planner call. A few games make Fast Downward search for minutes and grow to gigabytes
      (one valid_seen game: 510 s and 3.3 GB for an 8-step plan; Fast Downward found no plan within
      120 s from the start of 13 of 19 pick-two-into-drawer kitchens, which the exact planner solves);
      past the bound the oracle falls back to the exact planner (the handcoded expert where that does
      not model the game).
    - ``planner``: ``"exact"`` (default: the exact planner, Fast Downward only where it does not
      model the game or the state, as above) or ``"fast-downward"`` (ALFWorld's planner expert
      itself, command for command as ``AlfredExpert(expert_type=PLANNER)``: a median 0.7 s a plan,
      minutes on a few games). The two play plans of the same length; where several are shortest,
      their commands may differ.
    - The arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default 300x300, ALFRED's frame size), ``reward_variant`` (``alfworld``, ``verl-agent``),
      ``action_format``, ``action_match``, ``render_mode``, ``appearance`` (``default``; ``held-out``:
      the household renderer's line-art icons and turned palette, as ``Household-v0``'s).

    ## Version History
    - v0: ALFWorld 0.4.2's games, text and planner expert, with the rendered view; time limit 50 steps.
      Decision facts and the exact planner (the fallback, ``planner="exact"``) added within v0; the
      exact planner then became the default oracle (``optimal_steps`` unchanged; where several plans
      are shortest, the oracle's commands may differ from Fast Downward's).
    """

    LEVELS: ClassVar[tuple[str, ...]] = ("the real ALFWorld games of the chosen split and task types",)
    NEEDS_DATA: ClassVar[bool] = True
    FIXED_EPISODES: ClassVar[bool] = True  # a seed picks one of the split's game files, each one start state
    # A plan may be a Fast Downward search (planner="fast-downward", or a game the exact planner does not model:
    # a median 0.7 s, minutes on a few), so reset stays lazy whichever planner plays: the same info either way.
    EXPENSIVE_PLAN: ClassVar[bool] = True

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        split: str | None = None,
        task_types: Sequence[int | str] | None = None,
        planner_timeout: float = 300.0,
        planner_memory_mb: int = 2048,
        planner: str = "exact",
        **kwargs: Any,
    ) -> None:
        self._tw: Any = None  # the live TextWorld game; first, so that close() works after any error
        super().__init__(**kwargs)
        if planner not in PLANNERS:
            raise ValueError(f"planner={planner!r} is unknown; choose one of {PLANNERS}")
        self.planner = planner
        if isinstance(planner_timeout, bool) or not isinstance(planner_timeout, (int, float)) or not planner_timeout > 0:
            raise ValueError(f"planner_timeout={planner_timeout!r} must be a positive number of seconds")
        if isinstance(planner_memory_mb, bool) or not isinstance(planner_memory_mb, int) or planner_memory_mb <= 0:
            raise ValueError(f"planner_memory_mb={planner_memory_mb!r} must be a positive int (MiB)")
        self.planner_timeout = float(planner_timeout)
        self.planner_memory_mb = planner_memory_mb
        require("household", f"{type(self).__name__} (real ALFWorld games)")
        self.data_dir = default_data_dir() if data_dir is None else Path(data_dir).expanduser()
        self.split = split
        self.games: tuple[str, ...] = find_games(self.data_dir, split, task_types)
        """The game files this env plays, sorted; ``reset(options={"game": i})`` plays ``games[i]``."""
        self.game: str | None = None
        """The game of the current episode."""
        self._requested: str | None = None  # reset(options={"game": ...}), for _new_episode
        self._log: list[str] = []  # the episode's commands, replayed to rebuild the game after pickling
        self._plan: list[str] | None = None  # the planner's remaining plan; None until planned, or once the agent left it
        self._on_plan: dict[str, tuple[str, ...]] = {}  # planner state -> the rest of this episode's plan there (_apply)
        self._gave_up = False  # the planner hit its bound in this episode: the exact planner plays (else the handcoded expert)
        self._handcoded: _HandCodedExpert | None = None  # follows the episode once both planners gave up
        self._goal: Goal | None = None  # the game's goal, as the exact planner reads it (None: not one it knows)
        self._statics: Statics | None = None  # what never changes in the game, for the exact planner
        self._start_facts: tuple[Fact, ...] = ()
        self._exact_plans: dict[tuple[Fact, ...], tuple[tuple[str, ...] | None, str | None]] = {}  # see _exact_plan
        self._decided: tuple[tuple[Fact, ...], Decision] | None = None  # the last state's decision facts
        # The episode's state as plain data (it pickles), set by _new_episode and _sync
        self._intro_text = self._task = ""
        self._layout = _layout((), "")
        self._focus: str | None = None  # the receptacle the agent last named where it stands
        self._commands: tuple[str, ...] = ()
        self._won = False
        self._facts: tuple[Fact, ...] = ()
        self._seen: View | None = None  # the View of this step, drawn on demand

    # Episodes -------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[ObsDict, dict[str, Any]]:
        """Start an episode on a game drawn with the env's RNG; ``options={"game": g}`` plays game ``g``
        instead (an index into :attr:`games` or the path of a game file or of its folder), and
        ``options={"level": k}`` works as in every env."""
        options = dict(options or {})
        self._requested = self._game_option(options.pop("game")) if "game" in options else None
        try:
            return super().reset(seed=seed, options=options)
        finally:
            self._requested = None

    def _game_option(self, game: Any) -> str:
        if isinstance(game, (int, np.integer)) and not isinstance(game, bool):
            if not 0 <= game < len(self.games):
                raise ValueError(f'options["game"]={game!r} is not a game index; this env has games 0..{len(self.games) - 1}')
            return self.games[int(game)]
        if isinstance(game, (str, os.PathLike)):
            path = Path(game).expanduser()
            path = path / GAME_FILE if path.is_dir() else path
            if not path.is_file():
                raise ValueError(f'options["game"]={str(game)!r} is neither a {GAME_FILE} file nor a folder holding one')
            return str(path)
        raise ValueError(f'options["game"] must be an index into env.games or a path, not {type(game).__name__}')

    def _new_episode(self, config: str) -> None:
        game = self._requested or self.games[int(self.np_random.integers(len(self.games)))]
        if game != self.game:
            self._close_game()
        self.game = game
        if self._tw is None:
            self._tw = _start(game, self.data_dir)
        state = self._tw.reset()  # a replayed game reuses the loaded one: loading costs as much again
        self._intro_text = state.feedback
        self._task = self._intro_text.partition(_TASK_MARKER)[2].strip()
        facts = [_fact(p) for p in state["facts"]]
        self._layout = _layout(facts, _room(game))
        self._goal, style = _game_goal(game)
        self._statics = statics_of(facts, self._layout.receptacles, style)
        self._log = []
        self._focus = None
        self._sync(state)
        self._start_facts = self._facts
        self._plan = None  # planned when the oracle or optimal_steps is asked for
        self._on_plan = {}
        self._gave_up = False
        self._handcoded = None
        self._exact_plans = {}
        self._decided = None

    def _initial_plan(self) -> tuple[str, ...] | None:
        """The planner's plan from the game's start (None: it hit its bound). Planning costs seconds
        to minutes, and a game's first plan never changes: cached per game file for the process."""
        assert self.game is not None
        key = _file_key(self.game)
        bounds = (self.planner_timeout, self.planner_memory_mb)
        if key not in _plans:
            if key in _gave_up and all(old >= new for old, new in zip(_gave_up[key], bounds, strict=True)):
                self._gave_up = True
                return None
            plan = self._bounded_plan(from_start=bool(self._log))
            if plan is None:
                _gave_up[key] = bounds
                return None
            _plans[key] = tuple(plan)
        return _plans[key]

    def _bounded_plan(self, from_start: bool = False) -> list[str] | None:
        """The planner's plan in a bounded child process (see ``bounded.py``); None past the bound.

        Fast Downward's replan is a pure function of the game's SAS task and the state it starts
        from, and the oracle replans whenever the agent leaves the plan (often by a command that
        changes nothing, such as ``look``): a plan found mid-episode is kept for the process, keyed
        by the game file and the planner's own state (:func:`_planner_state`), and a later call from
        that exact state takes it instead of planning again. Plans that hit the bound are not kept."""
        game = self._game_env()
        key = (_file_key(self.game), _planner_state(game)) if self._log and not from_start else None  # the start's: _plans
        if key is not None and key in _replans:
            _replans.move_to_end(key)
            return list(_replans[key])
        if hasattr(game.unwrapped._pddl_state, "load_replan"):  # CachedPddlState: translate here, where the cache lives
            game.unwrapped._pddl_state.load_replan()
        try:
            plan = call_bounded(lambda: _expert_plan(game, from_start), seconds=self.planner_timeout, memory_mb=self.planner_memory_mb)
        except BoundExceeded as err:
            logger.warning("ALFWorld's planner on %s: %s; the exact planner (else the handcoded expert) plays instead", self.game, err)
            self._gave_up = True
            return None
        if key is not None:
            _replans[key] = tuple(plan)
            while len(_replans) > _REPLANS:
                _replans.popitem(last=False)
        return plan

    def _shortest_expert_plan(self, seconds: float | None = None) -> list[str] | None:
        """Fast Downward's shortest plan from the current state (:func:`_shortest_expert_plan`), None where it
        proves there is none, in a child process bounded as the expert's plans are (``seconds`` overrides
        ``planner_timeout``). The cross-check of the exact planner; raises ``BoundExceeded`` past the bound."""
        game = self._game_env()
        if hasattr(game.unwrapped._pddl_state, "load_replan"):  # translated here, where the cache lives
            game.unwrapped._pddl_state.load_replan()
        bound = self.planner_timeout if seconds is None else seconds
        return call_bounded(lambda: _shortest_expert_plan(game), seconds=bound, memory_mb=self.planner_memory_mb)

    def _game_env(self) -> Any:
        """The live TextWorld game; after unpickling, rebuilt by replaying the episode's commands."""
        if self._tw is None:
            assert self.game is not None, "call reset() first"
            self._tw = _start(self.game, self.data_dir)
            self._tw.reset()
            for command in self._log:
                self._tw.step(command)
        return self._tw

    def _sync(self, state: Any) -> None:
        """Keep what the hooks need from TextWorld's state, as plain data (it pickles)."""
        self._commands = tuple(state["admissible_commands"])
        self._won = bool(state["won"])
        # not_* facts are negations, implied by the facts that hold
        facts = (_fact(p) for p in state["facts"])
        self._facts = tuple(sorted(f for f in facts if f[0] not in _STATIC and not f[0].startswith("not_")))
        self._seen = None

    # VLMEnv hooks ---------------------------------------------------------------------------------

    def _actions(self) -> tuple[str, ...]:
        return self._commands

    def _apply(self, action: str) -> StepOutcome:
        if self._plan and action != self._plan[0] and self.planner == "fast-downward":
            # leaving Fast Downward's plan: remember where it stood, should the agent come back (the exact planner
            # replans in milliseconds, cached per state)
            self._on_plan[_planner_state(self._game_env())] = tuple(self._plan)
        state, _, _ = self._game_env().step(action)
        self._log.append(action)
        self._sync(state)
        # The place the agent looks at: the receptacle its last command here named ("go to R", "open R",
        # "take O from R", ... all end with R), as several receptacles can share a location.
        here = self._layout.at.get(self._location() or "", ())
        self._focus = next((r for r in here if action.endswith(f" {r}")), self._focus)
        if self._plan and action == self._plan[0]:
            self._plan.pop(0)
        else:
            self._plan = None
        if self._handcoded is not None:
            self._handcoded.observe(state, action)
        if self._won:
            return StepOutcome("success", terminated=True, feedback=state.feedback)
        return StepOutcome("step", feedback=state.feedback)

    def _location(self) -> str | None:
        return next((args[1] for pred, *args in self._facts if pred == "atlocation"), None)

    def _view_state(self) -> View:
        if self._seen is None:
            self._seen = self._make_view()
        return self._seen

    def _make_view(self) -> View:
        layout = self._layout
        true_of: dict[str, set[str]] = defaultdict(set)  # predicate -> the things it holds for
        inside: dict[str, list[str]] = defaultdict(list)
        for pred, *args in self._facts:
            if pred == "inreceptacle":
                inside[args[1]].append(args[0])
            elif args:
                true_of[pred].add(args[-1] if pred == "holds" else args[0])  # holds(agent, object)

        def item(name: str) -> Item:
            # TextWorld's facts never show isOn: it applies both conditional effects of the toggle, the
            # last one clearing it (Fast Downward's own state has it). The look task checks isToggled.
            on = name in true_of["ison"] or name in true_of["istoggled"]
            return Item(name, _kind(name), clean=name in true_of["isclean"], hot=name in true_of["ishot"],
                        cool=name in true_of["iscool"], sliced=name in true_of["issliced"], on=on)  # fmt: skip

        holding = item(min(true_of["holds"])) if true_of["holds"] else None
        here = layout.at.get(self._location() or "", ())
        if not here:
            return View(layout.receptacles, holding=holding, room=layout.room)
        place = self._focus if self._focus in here else here[0]
        openable, is_open = place in layout.openable, place in true_of["opened"]
        contents = () if openable and not is_open else tuple(item(o) for o in sorted(inside[place], key=_listing_key))
        lit = any(o in layout.toggleable and item(o).on for r in here for o in inside[r])
        return View(layout.receptacles, place, _kind(place), openable, is_open, contents, holding, lit, layout.room)

    def _intro(self) -> str:
        return self._intro_text

    def _mission(self) -> str:
        return self._task

    def _state_key(self) -> str:
        text = "\n".join(f"{pred}({', '.join(args)})" for pred, *args in self._facts)
        return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]

    def _success(self) -> bool:
        return self._won

    def _progress(self) -> float:
        # Binary, like ALFWorld's score: a plan-based fraction would replan after every step.
        return 1.0 if self._won else 0.0

    def _optimal_steps(self) -> int | None:
        exact, reason = self._exact_plan(self._start_facts)
        plan = None
        if self.planner == "fast-downward" or exact is None:  # a solvable game's start: no exact plan means no model
            plan = self._initial_plan()
            self._check_exact(exact, plan)
        if exact is not None and (plan is None or len(exact) < len(plan)):
            plan = exact  # Fast Downward gave up, or its cheapest plan is not the shortest (a game whose problem has a metric)
        if plan is not None and not self._log and self._plan is None:
            self._plan = list(plan)  # the oracle follows this very plan
        return len(plan) if plan else None

    # Decision facts ---------------------------------------------------------------------------------

    def _exact_plan(self, facts: tuple[Fact, ...] | None = None) -> tuple[tuple[str, ...] | None, str | None]:
        """The exact planner's shortest plan from the current state (or from ``facts``) and, when it has
        none, why: cached per state for the episode (a plan costs milliseconds)."""
        facts = self._facts if facts is None else facts
        if facts not in self._exact_plans:
            board = self._board(facts)
            if board is None:
                found: tuple[tuple[str, ...] | None, str | None] = (None, "the exact planner does not know this game's goal")
            elif board.unmodelled:
                found = (None, f"the exact planner does not model this state: {board.unmodelled}")
            else:
                rest = plan(board)
                found = (None, _UNSOLVABLE) if rest is None else (tuple(rest), None)
            self._exact_plans[facts] = found
        return self._exact_plans[facts]

    def _check_exact(self, exact: Sequence[str] | None, found: Sequence[str] | None) -> None:
        """A plan of Fast Downward's shorter than the exact planner's shortest means the exact planner's
        model of this game is wrong (never seen): from then on the decision facts say so rather than guess."""
        if self.game is not None and exact is not None and found is not None and len(found) < len(exact) and self.game not in _misplanned:
            logger.warning("ALFWorld's game %s: Fast Downward's plan (%d) is shorter than the exact planner's (%d)", self.game, len(found), len(exact))
            _misplanned.add(self.game)

    def _board(self, facts: tuple[Fact, ...] | None = None) -> Board | None:
        if self._goal is None or self._statics is None:
            return None
        return Board(self._statics, self._goal, self._facts if facts is None else facts)

    def _decision(self) -> Decision:
        """Exact, from the exact planner (``alfworld_oracle.py``): ``steps_to_go`` is its shortest plan's
        length from the current state, ``optimal_actions`` the admissible commands after which it is one
        shorter (one-step lookahead over its model of the game, every ``go to`` from one enumeration).
        Fast Downward is not asked (a search per state would cost seconds). None, with the reason,
        where the planner does not model the game or the state."""
        if self._decided is not None and self._decided[0] == self._facts:
            return self._decided[1]
        rest, reason = self._exact_plan()
        if self.game in _misplanned:
            rest, reason = None, "the exact planner's model of this game is wrong: Fast Downward found a shorter plan"
        board = self._board()
        facts = None if board is None else features(board)
        if rest is None:
            decision = Decision(None, None, reason=reason, features=facts)
        else:
            assert board is not None
            decision = Decision(optimal_commands(board, len(rest), Board.operations(self._commands)), len(rest), features=facts)
        self._decided = (self._facts, decision)
        return decision

    def oracle_action(self) -> str:
        """The next command of a shortest plan from the current state.

        With ``planner="exact"`` (the default), the exact planner's (``alfworld_oracle.py``), planned
        again, in milliseconds, once the agent has left the plan; where it does not model the game
        or the state, Fast Downward's, as below. With ``planner="fast-downward"``, ALFWorld's planner
        expert: ``AlfredExpert(expert_type=PLANNER)`` replans after every command, which costs 0.1
        to 5 s in a kitchen; the plan is the same Fast Downward call, made only when the agent has
        left the previous plan, in a child process bounded by ``planner_timeout`` and
        ``planner_memory_mb``. An agent that comes back to a state where it left such a plan (after
        ``look``, ``examine``, or a walk away and back) finds the rest of it, as if it had not left.
        A plan of Fast Downward's longer than the exact planner's (its cheapest in action costs, in
        a game whose problem declares a metric) gives way to the exact planner's, as does a call that
        hits the bound. Where the exact planner does not model the game and Fast Downward gave up,
        ALFWorld's handcoded expert plays. ``"look"`` (always admissible) once the game is won or
        has no plan."""
        if self._plan is None and not self._gave_up:
            exact, reason = self._exact_plan()
            plan: Sequence[str] | None
            if self.planner == "exact" and (exact is not None or (reason == _UNSOLVABLE and self._log)):
                plan = exact  # None: nothing wins from here (hands holding what no receptacle takes)
            else:  # Fast Downward: ALFWorld's expert, or where the exact planner does not model the game
                back = self._on_plan.get(_planner_state(self._game_env())) if self._on_plan else None
                plan = back or (self._initial_plan() if not self._log else self._bounded_plan())
                self._check_exact(exact, plan)
                if exact is not None and (plan is None or len(exact) < len(plan)):
                    plan = exact
            self._plan = None if plan is None else list(plan)
        if self._plan is None:
            exact, _ = self._exact_plan()
            if exact is not None:
                self._plan = list(exact)
            elif self._gave_up:
                return self._handcoded_action()
        return self._plan[0] if self._plan else "look"

    def _handcoded_action(self) -> str:
        assert self.game is not None
        if self._handcoded is None and not self._log:
            self._handcoded = _HandCodedExpert(self.game, self._intro_text)
        if self._handcoded is None:  # it joins mid-episode: show it the episode so far on a copy of the game
            copy = _start(self.game, self.data_dir)
            try:
                state = copy.reset()
                self._handcoded = _HandCodedExpert(self.game, state.feedback)
                for command in self._log:
                    state, _, _ = copy.step(command)
                    self._handcoded.observe(state, command)
            finally:
                copy.close()
        return self._handcoded.next

    # Resources ------------------------------------------------------------------------------------

    def _close_game(self) -> None:
        if self._tw is not None:
            self._tw.close()
            self._tw = None

    def close(self) -> None:
        """Close the TextWorld game and any window; safe to call twice."""
        self._close_game()
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_tw"] = None  # Fast Downward's state lives in C; _game_env() replays _log on demand
        state["_handcoded"] = None  # rebuilt from _log on demand
        return state
