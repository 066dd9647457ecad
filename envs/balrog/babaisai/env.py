"""BALROG's BabaIsAI (its 40 tasks) behind our contract, on our own rules engine."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai import levels, oracle, wording
from rl4vlm_gym.envs.balrog.babaisai.game import MAX_STEPS, TILE, Game
from rl4vlm_gym.envs.balrog.babaisai.renderer import render

if TYPE_CHECKING:
    from numpy.typing import NDArray

REPLAN_BUDGET = 3000  # expansions per part of the target plan when the oracle plans again off its plan
MISSION = "Make what is YOU reach what is WIN; the rules are the word blocks on the map, and pushing them changes the rules."
_SIZES = {"make_win": (8, 8)}  # (width, height) in cells; the two-room levels are 13 x 9


def grid_size(task: levels.Task) -> tuple[int, int]:
    """``(width, height)`` of ``task``'s grid in cells."""
    return _SIZES.get(task.kind, (13, 9))


LEVELS_KEPT = 8
"""Levels whose decision facts an env keeps."""


def _keep_last(kept: dict[Any, Any], n: int) -> None:
    """Drop the oldest entries of ``kept`` (insertion order) beyond ``n``."""
    while len(kept) > n:
        del kept[next(iter(kept))]


@dataclass
class _LevelFacts:
    """The decision facts of one level."""

    after: oracle.NextLevels  # the levels the wrapper would draw next
    keeps_dir: bool  # a MOVE word is on the map (the decision key keeps facing and colour)
    facts: oracle.ToGo = field(default_factory=dict)  # by decision key
    failed: dict[tuple, str] = field(default_factory=dict)  # states without facts, and why
    gate: str | None = None  # why the level has no facts at all (None: it has them)
    gated: bool = False  # the first level's gate is known
    start_to_go: int | None = None  # the first level's: the fewest moves from its start, once searched
    start_searched: bool = False


@dataclass(frozen=True)
class BabaIsAILevel:
    """BALROG's only setting of a task: the original's generator with its registered arguments."""

    def describe(self) -> str:
        return "BALROG's setting: the original generator's level for the task"


class BabaIsAI(VLMEnv):
    """BALROG's BabaIsAI: rules you can push around, 40 puzzle tasks of nacloos/baba-is-ai.

    ## Description
    A grid (8x8 for the single-room tasks, 13x9 for the two-room ones) holds objects (baba, balls,
    keys, doors, walls) and word blocks. Three word blocks in a row or a column, NOUN IS PROPERTY,
    make a rule: "baba is you" (you move baba), "key is win" (touching a key wins), "wall is stop"
    (walls cannot be crossed). Word blocks are pushed by walking into them, so rules can be made
    and broken: make "door is win" from a stray "door" block, break "wall is stop" to walk through
    the wall, make another object "you". The 40 tasks are those BALROG evaluates
    (``balrog/config/config.yaml``, ``babaisai_tasks``): go to the win object, with distractor
    objects and rule blocks (``goto_win*``); make the win rule first (``make_win*``); the same in
    two rooms split by a wall (``two_room-*``), where "wall is stop" may have to be broken
    (``break_stop``, ``maybe_break_stop``); make another object YOU (``make_you``); make
    "wall is win" (``make_wall_win``).

    Rebuilt here, not imported: the rules engine (:mod:`~rl4vlm_gym.envs.balrog.babaisai.engine`)
    follows nacloos/baba-is-ai ad466e02 (MIT) rule by rule, its level generators
    (:mod:`~rl4vlm_gym.envs.balrog.babaisai.levels`) make the original's draws in its order, and
    the text is BALROG's (balrog-ai/BALROG af7d1f17, ``balrog/environments/babaisai``). BALROG
    seeds numpy's global generator with the episode's seed before ``reset``; here ``reset(seed)``
    (for ``0 <= seed < 2**32``) draws the level from ``numpy.random.RandomState(seed)``, the
    env's own generator, which gives BALROG's level for that seed (checked against the original
    on 40 tasks x 100 seeds). Golden transcripts of BALROG's own wrapper
    (``tests/envs/balrog/golden/babaisai``) are replayed byte for byte: text, reward, done,
    progression, instruction prompt.

    As in BALROG: when no object of the last "X is you" rule's noun is left after a step (you
    broke "baba is you"), BALROG's wrapper draws a new level in the middle of the episode (from the
    same generator, its step count restarting) and shows the text it shows then (see
    :mod:`~rl4vlm_gym.envs.balrog.babaisai.wording`); the episode goes on in the new level.

    The oracle plays a plan of A* over exact states of the engine
    (:mod:`~rl4vlm_gym.envs.balrog.babaisai.oracle`): a shortest plan where the search finishes
    within 4,000 expansions, else the level's target plan followed part by part, which is short
    but not provably shortest; ``optimal_steps`` is the plan's length and ``shortest_proven`` says
    which. Measured on 20 evaluation seeds of every task: every level solved; shortest proven in 555
    of 800 (every go-to and make-you level, 88 of 100 one-room make-win levels, 5 of 20 make-wall-win
    levels, 2 of 220 two-room make-win levels); of the others, the 14 that an exact search of 80,000
    expansions could settle had a plan as short as the target plan's; a plan takes 28 ms (median),
    0.8 s at most. That search keeps to the level; a way through a level BALROG's wrapper draws
    anew (break "baba is you" next to it, win the next one) can be shorter, so where one could be
    (its lower bound, ``oracle.new_level_bound``, is below the plan's length) a search that counts
    them decides: where one is shorter, ``optimal_steps`` is its length and the oracle follows the
    decision facts through the new level. It is, in 3 of the first 5 evaluation seeds' 200 levels
    (two_room-make_you: 13 moves against 19 within the level, 9 against 10;
    two_room-make_you-make_win: 20 against 21).

    Decisions (``decision()``): exact where a search proves them: ``steps_to_go`` is the fewest
    moves that win from the state, a way through a level that BALROG's wrapper draws anew (after
    "X is you" is broken) counted too, and the optimal actions all moves after which it drops by
    one ("idle" never), from one A* search run on until every shortest way is found
    (``oracle.decisions``, at most 16,000 expansions, and as many for each new level it needs; kept
    per level for the last 8 levels, so along an optimal play the next facts are a look-up, and the
    process keeps the last searches' results for every env: they depend on the state alone). Only
    in a first level whose oracle plan is
    proven shortest within the level (none in most two-room make-win levels), then in the levels
    drawn after it; else None with the reason. A search costs milliseconds on go-to levels, about
    0.1-1 s on make-win ones, once per level along an optimal play and again at each state off
    it. The oracle, off its plan, plays a move the facts call optimal where they are known.
    Features ``rules`` (active) and ``win_rule`` (1 when something is WIN).

    ## Observation
    - ``image``: the whole grid as the original renders it, 32-pixel tiles (256x256 for 8x8,
      416x288 for 13x9), resized to ``image_size``. It shows more than the text: the objects'
      colours and the direction baba faces, which BALROG's text does not give. The tiles of objects and walls equal the
      original's pixel for pixel; word blocks have the original's frame, but their word is drawn in
      DejaVu Sans Bold where the original uses OpenCV's Hershey font; baba faces the direction it
      last moved (the original shows a baba that is not YOU in whatever direction its tile cache
      first held).
    - ``text`` (``image+text`` and ``text`` modes): BALROG's observation, "Active rules:" then
      "Objects on the map:" with each object's offset from YOU ("rule `key` 5 step to the left and
      4 step up", BALROG's wording kept); ``info["balrog"]`` holds it as BALROG's
      ``long_term_context`` (``short_term_context`` is empty).
    - ``mission``: the same sentence for every task (BALROG gives none; its instruction prompt,
      :meth:`instruction_prompt`, explains the game).
    - ``actions``: ``idle``, ``up``, ``right``, ``down``, ``left``.

    ## Actions
    One of BALROG's five action names. "idle" waits (and counts as a step). BALROG plays "idle" for
    an output that is not one of them (the ``balrog-actions`` wrapper); here such an output is an
    invalid step that changes nothing but also counts toward the level's 100 steps.

    ## Rewards
    ``native``: the original's, ``1 - 0.9 * t / 100`` on a win at the level's step ``t``, -1 on a
    loss (no level has a DEFEAT rule), 0 otherwise. BALROG's progression (``info["progress"]``) is
    1 when a step wins, 0 otherwise (0 also when the winning step broke "baba is you": BALROG's
    wrapper then resets its progression with the new level).

    ## Levels
    0: BALROG's setting of the task, the only one. 100 steps: the original env's ``max_steps``,
    which BALROG takes as the episode's budget. The 100th step ends the episode as truncated (BALROG
    reports it as done, gym 0.21's flag, which its compatibility wrapper turns into terminated).
    Seeds: ``reset(seed)`` with ``0 <= seed < 2**32`` (every seed range of the registry) plays
    BALROG's level for that seed; ``reset()`` without a seed draws one from the env's generator.

    ## Arguments
    - ``task``: BALROG's task id, ``"env/goto_win"``... (set by the registered id).
    - the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
      (default: the original's render size), ``reward_variant``, ``action_format``,
      ``action_match``, ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    LEVELS: ClassVar[tuple[BabaIsAILevel, ...]] = (BabaIsAILevel(),)
    REWARDS: ClassVar = {"native": {"step": 0.0, "win": 1.0, "lose": -1.0, "invalid": 0.0}}
    DEFAULT_ACTION: ClassVar[str] = "idle"  # BALROG's
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (288, 416)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    EXPENSIVE_PLAN: ClassVar[bool] = True  # a plan is an A* search: up to about a second on two-room levels
    # BALROG's text is coarser than its image: it names no colour and not baba's facing. The image
    # determines the text, not the reverse, which is what the kit allows CONTINUOUS envs.
    CONTINUOUS: ClassVar[bool] = True

    def __init__(self, *, task: str = "env/goto_win", **kwargs: Any) -> None:
        if task not in levels.TASKS_BY_ID:
            raise ValueError(f"task={task!r} is not one of BALROG's BabaIsAI tasks: {sorted(levels.TASKS_BY_ID)}")
        self.task = task
        width, height = grid_size(levels.TASKS_BY_ID[task])
        if kwargs.get("image_size") is None:
            kwargs["image_size"] = (height * TILE, width * TILE)
        super().__init__(**kwargs)
        self.game = Game(levels.TASKS_BY_ID[task])
        self._seed_asked: int | None = None
        self._plan: list[tuple[tuple, str]] = []  # (stripped state key before the move, move)
        self._plan_for: tuple | None = None  # the state the plan was computed from
        self.shortest_proven = False
        self._start_world: E.World | None = None
        self._start_rs_state: Any = None
        self._seed_used = -1  # the seed of the episode's level
        # By (seed, level drawn), the last few levels' decision facts: they hold whatever the path to
        # a state, so they serve every episode of that seed.
        self._levels_kept: dict[tuple[int, int], _LevelFacts] = {}

    # ---- episode ----------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode; a ``seed`` in ``0..2**32-1`` gives BALROG's level for that seed."""
        self._seed_asked = seed
        return super().reset(seed=seed, options=options)

    def _new_episode(self, config: BabaIsAILevel) -> None:
        seed = self._seed_asked
        if seed is None or not 0 <= seed < 2**32:
            seed = int(self.np_random.integers(2**32))  # unseeded resets continue the env's RNG
        self._seed_asked = None
        self.game.reset(np.random.RandomState(seed))
        self._plan, self._plan_for = [], None
        self._start_world = self.game.world.copy()
        assert self.game.rs is not None
        self._start_rs_state = self.game.rs.get_state()  # as just after the first level was drawn
        self.shortest_proven = False
        self._seed_used = seed

    def _actions(self) -> tuple[str, ...]:
        return E.ACTIONS

    def _apply(self, action: str) -> StepOutcome:
        reward, done = self.game.step(action)
        return self._outcome(reward, done)

    @staticmethod
    def _outcome(reward: float, done: bool) -> StepOutcome:
        if not done:
            return StepOutcome("step")
        if reward > 0:
            return StepOutcome("win", terminated=True, scale=float(reward))
        if reward < 0:
            return StepOutcome("lose", terminated=True)
        return StepOutcome("step", truncated=True)  # the level's 100 steps are spent

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        if outcome.event != "invalid":
            return outcome
        # BALROG would have played "idle": the step counts toward the level's budget
        self.game.steps += 1
        if self.game.steps >= MAX_STEPS:
            return StepOutcome("invalid", truncated=True, feedback=outcome.feedback, error=outcome.error)
        return outcome

    # ---- what the agent sees ------------------------------------------------------------------------
    def _describe(self) -> str:
        return self.game.text

    def _mission(self) -> str:
        return MISSION

    def instruction_prompt(self) -> str:
        return wording.INSTRUCTION_PROMPT

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        info["balrog"] = {"long_term_context": self.game.text, "short_term_context": ""}
        return info

    def balrog_stats(self) -> dict[str, Any]:
        """What BALROG's wrapper reports at the end of an episode (``get_stats()``)."""
        return {"target_plan": self.game.target_plan, "progression": self.game.progression}

    @property
    def target_plan(self) -> str:
        """The original's plan of the current level, e.g. ``"make[key is win], goto[key]"``."""
        return self.game.target_plan

    def _render(self) -> NDArray[np.uint8]:
        frame = render(self.game.world)
        height, width = self.image_size
        if frame.shape[:2] != (height, width):
            frame = np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.NEAREST))
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _frame_key(self) -> Any:
        return (tuple(self.game.world.cells), self.image_size)

    def _state_key(self) -> str:
        cells = repr(self.game.world.cells).encode()
        return f"{self.task}|{hashlib.blake2b(cells, digest_size=12).hexdigest()}"

    # ---- scoring and the oracle ----------------------------------------------------------------------
    def _success(self) -> bool:
        return self.game.progression == 1.0

    def _progress(self) -> float:
        return self.game.progression

    def _solve(
        self, world: E.World, steps_left: int, replan: bool = False, shortest: list[str] | None = None
    ) -> list[str] | None:
        """Plan from ``world`` and keep the plan for the oracle, each move with the state it is for.
        The episode's first plan tries for a shortest one (``shortest``: the one that search already
        found, if it did); a plan from a state off that plan (after other moves) follows the level's
        target plan with small budgets, as fast as possible."""
        moves: list[str] | None
        if shortest is not None:
            moves, proven = shortest, True
        elif replan:
            moves, proven = oracle.plan(world, steps_left, self.game.target_plan, budget=0, part_budget=REPLAN_BUDGET)
        else:
            moves, proven = oracle.plan(world, steps_left, self.game.target_plan, budget=0)
        self._plan, self._plan_for = [], oracle.stripped_key(world)
        if moves is not None:
            probe = world.copy()
            for move in moves:
                self._plan.append((oracle.stripped_key(probe), move))
                probe.step(move)
        self.shortest_proven = proven and moves is not None
        return moves

    def _start_search(self) -> list[str] | None:
        """The shortest search from the episode's start (``oracle.SHORTEST_BUDGET`` expansions):
        its plan, or None where it gave up; searched once, for the oracle and the decision facts."""
        assert self._start_world is not None, "reset first"
        return oracle.shortest_plan(self._start_world, MAX_STEPS)  # kept by the process

    def _optimal_steps(self) -> int | None:
        # for the episode's start, even when asked after some steps (EXPENSIVE_PLAN)
        assert self._start_world is not None, "reset first"
        found = self._start_search()
        level = self._level_record(0, self._start_world, self._start_rs_state)
        if found is not None and oracle.new_level_bound(self._start_world, level.after) < len(found):
            # a way through a new level may be shorter: a search that counts them says
            if not level.start_searched:
                try:
                    level.start_to_go = oracle.fewest_moves(self._start_world, level.after)
                except oracle.GaveUp:
                    pass
                level.start_searched = True
            if level.start_to_go is not None and level.start_to_go < len(found) and self._first_level().gate is None:
                self._plan, self._plan_for = [], None  # the oracle follows the decision facts
                self.shortest_proven = True
                return level.start_to_go
        moves = self._solve(self._start_world, MAX_STEPS, shortest=found)
        return None if moves is None else len(moves)

    def _level_facts(self) -> _LevelFacts:
        """The decision facts of the current level (a new level drawn in the middle of the episode
        has others), searched so far in this episode or in the last ones of its seed."""
        game = self.game
        if game.resets == 0:
            return self._first_level()
        assert game.rs is not None
        # the generator's state changes only when it draws: now as just after this level was drawn
        return self._level_record(game.resets, game.world, game.rs.get_state())

    def _first_level(self) -> _LevelFacts:
        """The decision facts of the episode's first level (whichever level is played now)."""
        assert self._start_world is not None, "reset first"
        level = self._level_record(0, self._start_world, self._start_rs_state)
        if not level.gated:  # only where the oracle's own search proved its plan shortest
            level.gate, level.gated = self._first_level_gate(level), True
        return level

    def _level_record(self, index: int, world: E.World, rs_state: Any) -> _LevelFacts:
        """The decision facts of level ``index`` of this seed (``world``: a state of it; ``rs_state``:
        the generator's state after it was drawn), kept for the last ``LEVELS_KEPT`` levels."""
        key = (self._seed_used, index)
        level = self._levels_kept.pop(key, None)
        if level is None:
            level = _LevelFacts(oracle.NextLevels(self.game.task, rs_state), oracle.keeps_direction(world))
        self._levels_kept[key] = level  # the last used last
        _keep_last(self._levels_kept, LEVELS_KEPT)
        return level

    def _first_level_gate(self, level: _LevelFacts) -> str | None:
        """Why the first level has no decision facts (None: it has them): the oracle's search must
        prove its plan shortest within the level, and the facts' search from the start finish (it
        counts ways through new levels too: where one is shorter, ``optimal_steps`` is its length
        and the oracle follows the facts)."""
        assert self._start_world is not None
        found = self._start_search()  # the oracle's shortest search (not the target plan's, which proves nothing)
        if found is None:
            return (
                f"no exact solver: the search for a shortest plan from this level's start gave up ({oracle.SHORTEST_BUDGET} "
                "expansions); the oracle follows the level's target plan, short but not proven shortest"
            )
        try:
            facts = oracle.decisions(self._start_world, level.after)
        except oracle.GaveUp as error:
            return f"no exact solver: {error}"
        level.facts.update(facts)
        level.start_to_go, level.start_searched = facts[oracle.decision_key(self._start_world)][0], True
        return None

    def _known(self) -> tuple[tuple[int, tuple[str, ...]] | None, str]:
        """The current state's moves to go and optimal moves (searched if not known yet), or None
        and why."""
        level = self._level_facts()
        if level.gate is not None:
            return None, level.gate
        key = oracle.decision_key(self.game.world, level.keeps_dir)
        if key not in level.facts and key not in level.failed:
            try:
                found = oracle.decisions(self.game.world, level.after)
            except oracle.GaveUp as error:
                level.failed[key] = f"no exact solver here: {error}"
            else:
                level.facts.update(found)
                if key not in found:
                    level.failed[key] = f"unsolvable from here: no win within {MAX_STEPS} moves"
        return level.facts.get(key), level.failed.get(key, "")

    def _decision(self) -> Decision:
        # One search (oracle.decisions) gives the facts of every state on a shortest way from here,
        # so along an optimal play the next ones are a look-up.
        known, why = self._known()
        world = self.game.world
        features = {"rules": len(world.rules), "win_rule": int(bool(world.props[E.WIN]))}
        if known is None:
            return Decision(None, None, reason=why, features=features)
        to_go, moves = known
        steps_left = MAX_STEPS - max(self.game.steps, self.elapsed_steps)
        if to_go > steps_left:
            return Decision(
                None, None, reason=f"unsolvable from here: {to_go} moves to go, {steps_left} steps left", features=features
            )
        return Decision(moves, to_go, features=features)

    def oracle_action(self) -> str:
        if self.game.progression == 1.0:
            return "idle"
        key = oracle.stripped_key(self.game.world)
        if not self._plan or self._plan[0][0] != key:
            # off its plan (a plan it follows is shortest: optimal_steps checked ways through new
            # levels), a move the decision facts call optimal where they are known
            known, _ = self._known()
            if known is not None:
                self._plan, self._plan_for = [], None
                return known[1][0]
        if not self._plan or self._plan[0][0] != key:
            if self._plan_for != key:
                self._solve(self.game.world, MAX_STEPS - max(self.game.steps, self.elapsed_steps), replan=True)
            if not self._plan or self._plan[0][0] != key:
                return "idle"  # no plan from here
        _, move = self._plan.pop(0)
        self._plan_for = None
        return move
