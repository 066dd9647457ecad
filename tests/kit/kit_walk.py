"""Walk, a tiny grid game that keeps the env contract, and one broken variant per defect the
conformance kit must catch (``tests/kit/test_kit.py``).

Each broken class overrides one hook of :class:`Walk` and breaks one law. They are registered
under ``kit/...`` ids with cards, the way a contributor registers a test-only env, so the kit's
subprocess checks (determinism, vector envs) can make them too.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.registry import EnvCard, register

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


@dataclasses.dataclass(frozen=True)
class WalkLevel:
    side: int


class Walk(VLMEnv):
    """Walk to the goal square of a small grid.

    ## Description
    A test env for the conformance kit: the agent (red) walks on a ``side x side`` grid to the
    goal (green). A move into the edge is refused by the rules.

    ## Observation
    - ``image``: the grid, the agent red and the goal green.
    - ``text``: ``"Agent: row r, column c\\nGoal: row r, column c"``.
    - ``mission``: the rules.
    - ``actions``: ``up``, ``down``, ``left``, ``right``.

    ## Actions
    A direction; a move into the edge is an invalid action.

    ## Rewards
    1 on reaching the goal; -1 (``default``) or 0 (``lenient``) for an invalid action.

    ## Levels
    0: a 2x2 grid; 1: a 3x3 grid.

    ## Arguments
    The arguments common to every env.

    ## Version History
    - v0: the test env.
    """

    LEVELS: ClassVar[tuple[WalkLevel, ...]] = (WalkLevel(2), WalkLevel(3))
    REWARDS: ClassVar = {
        "default": {"move": 0.0, "goal": 1.0, "invalid": -1.0},
        "lenient": {"move": 0.0, "goal": 1.0, "invalid": 0.0},
    }
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (32, 32)
    MIN_IMAGE_SIDE: ClassVar[int] = 16
    APPEARANCES: ClassVar[tuple[str, ...]] = ("default", "grey")
    BACKGROUND: ClassVar[dict[str, int]] = {"default": 255, "grey": 128}
    WORDINGS: ClassVar[tuple[str, ...]] = ("train", "held-out")
    PHRASES: ClassVar = {
        "held-out": {
            "mission": (
                "Your aim is the green square. Each reply is one of up, down, left or right.",
                "Steer the red square onto the green one, answering up, down, left or right.",
            ),
            "goal": ("The red square now sits on the green one.", "Arrived: you stand on the goal."),
        }
    }

    def _new_episode(self, config: WalkLevel) -> None:
        self.side = config.side
        cells = [(r, c) for r in range(self.side) for c in range(self.side)]
        first, second = self.np_random.choice(len(cells), size=2, replace=False)
        self.agent, self.goal = cells[int(first)], cells[int(second)]
        self.start = self.agent

    def _actions(self) -> tuple[str, ...]:
        return tuple(MOVES)

    def _apply(self, action: str) -> StepOutcome:
        (r, c), (dr, dc) = self.agent, MOVES[action]
        if not (0 <= r + dr < self.side and 0 <= c + dc < self.side):
            return StepOutcome("move", error=f"the edge blocks {action}")
        self.agent = (r + dr, c + dc)
        if self.agent == self.goal:
            return StepOutcome("goal", terminated=True, feedback=self._say("goal", "You reached the goal."))
        return StepOutcome("move")

    def _describe(self) -> str:
        return f"Agent: row {self.agent[0]}, column {self.agent[1]}\nGoal: row {self.goal[0]}, column {self.goal[1]}"

    def _mission(self) -> str:
        return self._say("mission", "Walk to the green goal square: answer up, down, left or right.")

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        image = np.full((height, width, 3), self.BACKGROUND[self.appearance], np.uint8)
        for (r, c), colour in ((self.goal, (0, 160, 0)), (self.agent, (200, 0, 0))):
            top, left = r * height // self.side, c * width // self.side
            image[top + 1 : (r + 1) * height // self.side - 1, left + 1 : (c + 1) * width // self.side - 1] = colour
        return image

    def _frame_key(self) -> Any:
        return self.agent, self.goal, self.side

    def _state_key(self) -> str:
        return f"agent={self.agent}|goal={self.goal}"

    def _distance(self, cell: tuple[int, int]) -> int:
        return abs(cell[0] - self.goal[0]) + abs(cell[1] - self.goal[1])

    def _success(self) -> bool:
        return self.agent == self.goal

    def _progress(self) -> float:
        return max(0.0, 1.0 - self._distance(self.agent) / self._distance(self.start))

    def _optimal_steps(self) -> int | None:
        return self._distance(self.start)

    def oracle_action(self) -> str:
        (r, c), (gr, gc) = self.agent, self.goal
        if r != gr:
            return "down" if gr > r else "up"
        return "right" if gc > c else "left"

    def _decision(self) -> Decision:
        # Every move one square nearer is optimal (none is refused: the goal lies inside the grid).
        here = self._distance(self.agent)
        nearer = tuple(a for a, (dr, dc) in MOVES.items() if self._distance((self.agent[0] + dr, self.agent[1] + dc)) < here)
        return Decision(nearer, here, features={"side": self.side})


# -- one defect each ----------------------------------------------------------------------------


class RefusedMoveChanges(Walk):
    """A move into the edge is refused, yet the agent wraps around to the other side."""

    def _apply(self, action: str) -> StepOutcome:
        (r, c), (dr, dc) = self.agent, MOVES[action]
        outcome = super()._apply(action)
        if outcome.error:
            self.agent = ((r + dr) % self.side, (c + dc) % self.side)
        return outcome


class StaleFrameCache(Walk):
    """The frame cache's key leaves out the goal, which the frame draws."""

    def _frame_key(self) -> Any:
        return self.agent


class OptimalNone(Walk):
    """``_optimal_steps()`` says there is no plan, though the oracle solves every episode."""

    def _optimal_steps(self) -> int | None:
        return None


class OptimalFloat(Walk):
    """``_optimal_steps()`` returns a float."""

    def _optimal_steps(self) -> Any:
        return float(self._distance(self.start))


class DetourOracle(Walk):
    """The oracle wastes two moves (there and back) and ``optimal_steps`` counts them."""

    def _optimal_steps(self) -> int | None:
        return self._distance(self.start) + 2

    def oracle_action(self) -> str:
        if self.elapsed_steps == 0:
            return self._first_move()
        if self.elapsed_steps == 1 and self._distance(self.agent) != 0:
            return OPPOSITE[self._first_move(self.start)]
        return super().oracle_action()

    def _first_move(self, cell: tuple[int, int] | None = None) -> str:
        r, c = cell or self.agent
        return "down" if r == 0 else "up"


class SlowOracle(DetourOracle):
    """The oracle takes a detour that ``optimal_steps`` does not count."""

    def _optimal_steps(self) -> int | None:
        return self._distance(self.start)


class ImageModeLeak(Walk):
    """In ``image`` mode the text after a step carries the state."""

    def _text(self, feedback: str) -> str:
        if self.obs_mode == "image" and self.elapsed_steps:
            return "\n".join([feedback or "You moved.", self._describe()])
        return super()._text(feedback)


class UnseededReplay(Walk):
    """``reset()`` without a seed reuses the last seed: the same episode again."""

    _last_seed: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        seed = self._last_seed if seed is None else seed
        self._last_seed = seed
        return super().reset(seed=seed, options=options)


class ImageLacksGoal(Walk):
    """The image draws the agent only; the text names the goal."""

    def _render(self) -> NDArray[np.uint8]:
        goal, self.goal = self.goal, self.agent
        try:
            return super()._render()
        finally:
            self.goal = goal


class TextLacksGoal(Walk):
    """The text names the agent only; the image draws the goal."""

    def _describe(self) -> str:
        return f"Agent: row {self.agent[0]}, column {self.agent[1]}"


class MissionGivesAway(Walk):
    """The mission spells out where the agent and the goal are."""

    def _mission(self) -> str:
        return self._say("mission", f"Walk from {self.start} to {self.goal}.")


class ReplayedGames(Walk):
    """Plays a fixed set of recorded games (``FIXED_EPISODES``), whose missions name the game: a
    mission then comes with its game's single start state, by design."""

    FIXED_EPISODES: ClassVar[bool] = True
    GAMES: ClassVar[tuple[tuple[tuple[int, int], tuple[int, int]], ...]] = (((0, 0), (1, 1)), ((1, 0), (0, 1)), ((0, 1), (1, 0)))

    def _new_episode(self, config: WalkLevel) -> None:
        self.side = config.side
        self.game = int(self.np_random.integers(len(self.GAMES)))
        self.agent, self.goal = self.GAMES[self.game]
        self.start = self.agent

    def _mission(self) -> str:
        return self._say("mission", f"Game {self.game}: walk to the green goal square.")


class MissionNamesGame(ReplayedGames):
    """The same recorded games, without saying it (``FIXED_EPISODES`` left False): to the kit its
    missions give the state away."""

    FIXED_EPISODES: ClassVar[bool] = False


class IgnoresImageSize(Walk):
    """The image is always drawn at the default size."""

    def _render(self) -> NDArray[np.uint8]:
        size, self.image_size = self.image_size, self.DEFAULT_IMAGE_SIZE
        try:
            return super()._render()
        finally:
            self.image_size = size


class AppearanceIgnored(Walk):
    """The grey appearance is declared but drawn as the default one."""

    BACKGROUND: ClassVar[dict[str, int]] = {"default": 255, "grey": 255}


class AppearanceChangesText(Walk):
    """The grey appearance also rewrites the state text."""

    def _describe(self) -> str:
        return super()._describe() + ("\nLights: dim" if self.appearance == "grey" else "")


class WordingIgnored(Walk):
    """The held-out wording is declared but the mission keeps the train words."""

    def _mission(self) -> str:
        return "Walk to the green goal square: answer up, down, left or right."


class WordingKeepsFeedback(Walk):
    """The held-out wording rewords the mission but not the feedback of an invalid action."""

    def _invalid_feedback(self, error: str | None) -> str:
        return f"Invalid action: {error}. Nothing happened."


class WordingChangesEpisode(Walk):
    """The held-out wording draws from the episode's RNG, so its seeds play other episodes."""

    def _new_episode(self, config: WalkLevel) -> None:
        if self.wording != "train":
            self.np_random.random()
        super()._new_episode(config)


class RefusedPaysMove(Walk):
    """A rule rewrites every invalid step into an ordinary move, which pays 0."""

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        return StepOutcome("move", feedback=outcome.feedback) if outcome.event == "invalid" else outcome


class DuplicateActions(Walk):
    """``actions`` lists ``up`` twice."""

    def _actions(self) -> tuple[str, ...]:
        return (*MOVES, "up")


class AcceptsAfterEnd(Walk):
    """``step`` forgets that the episode ended and plays on."""

    def step(self, action: str) -> Any:
        vars(self)["_ended"] = None  # past the base-state guard: this env is broken on purpose
        return super().step(action)


class RewardOutsideTable(Walk):
    """Reaching the goal pays twice the table's reward."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return StepOutcome("goal", terminated=True, scale=2.0) if outcome.event == "goal" else outcome


class VariantMissesEvent(Walk):
    """The ``lenient`` variant has no ``goal`` reward."""

    REWARDS: ClassVar = {
        "default": {"move": 0.0, "goal": 1.0, "invalid": -1.0},
        "lenient": {"move": 0.0, "invalid": 0.0},
    }


class ProgressOutOfRange(Walk):
    """Progress counts down from 1 and goes negative on a step away from the goal."""

    def _progress(self) -> float:
        return 1.0 - self._distance(self.agent) / max(1, self._distance(self.start) - 1)


class EarlySuccess(Walk):
    """Success is reported one step before the goal."""

    def _success(self) -> bool:
        return self._distance(self.agent) <= 1


class StateKeyCollision(Walk):
    """``state_key`` names the goal only, so every position of an episode shares one key."""

    def _state_key(self) -> str:
        return f"goal={self.goal}"


class LevelsIgnored(Walk):
    """Every level plays level 0."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(self.LEVELS[0])


class SaltedGoal(Walk):
    """The goal is picked with ``hash()`` of a string, which Python salts per process
    (``PYTHONHASHSEED``): the same seed plays another episode in another process."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        cells = [(r, c) for r in range(self.side) for c in range(self.side) if (r, c) != self.agent]
        self.goal = cells[hash(str(self.np_random.integers(1 << 30))) % len(cells)]


class SaltedFeedback(Walk):
    """Plays the same episodes everywhere, but its success message carries a salted ``hash()``: only
    the last observation of an episode differs across processes."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        if outcome.event == "goal":
            outcome = dataclasses.replace(outcome, feedback=self._say("goal", f"You reached the goal (badge {hash('walk') & 0xFFFFFFFF})."))
        return outcome


class PlannedWalk(Walk):
    """A correct Walk whose plan counts as a search (``EXPENSIVE_PLAN``): planned only when asked."""

    EXPENSIVE_PLAN = True


class PlannerGivesUp(PlannedWalk):
    """An EXPENSIVE_PLAN env whose planner gives up on every episode (optimal_steps -1), though the
    oracle solves them."""

    def _optimal_steps(self) -> int | None:
        return None


class PlannerGivesUpOnSome(PlannedWalk):
    """A correct EXPENSIVE_PLAN env whose planner gives up on one episode in five; without a plan
    its oracle would search at every step (here: it refuses to answer), so nothing may ask it."""

    episodes_drawn = 0

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.episodes_drawn += 1
        self.gave_up = self.episodes_drawn % 5 == 1

    def _optimal_steps(self) -> int | None:
        return None if self.gave_up else super()._optimal_steps()

    def oracle_action(self) -> str:
        if self.gave_up:
            raise AssertionError("the oracle of an episode whose planner gave up was asked to play it")
        return super().oracle_action()


_PARENT_PID = os.getpid()  # forked workers inherit it; spawned ones import this module anew


class HangsInForkedWorkers(Walk):
    """Made in a forked process, the env never finishes starting (like a GL context inherited
    from the parent)."""

    def __init__(self, **kwargs: Any) -> None:
        if os.getpid() != _PARENT_PID:
            time.sleep(3600)
        super().__init__(**kwargs)


_MADE_HERE = [0]  # FirstOfItsProcess envs made in this process


class FirstOfItsProcess(Walk):
    """The first env made in a process plays other episodes than the next ones (state kept at module
    level across envs): a rollout in a process that made an env before cannot see it."""

    def __init__(self, **kwargs: Any) -> None:
        self._first = _MADE_HERE[0] == 0
        _MADE_HERE[0] += 1
        super().__init__(**kwargs)

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        if self._first:
            cells = [(r, c) for r in range(self.side) for c in range(self.side) if (r, c) != self.agent]
            self.goal = cells[(cells.index(self.goal) + 1) % len(cells)]


class CrashesInFreshProcess(Walk):
    """Dies of SIGSEGV (as a native library can) when made in one of the kit's fresh processes (a child
    of its fork server), not in the test process (an xdist worker is a ``python -c`` process too)."""

    def __init__(self, **kwargs: Any) -> None:
        try:
            parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
        except OSError:
            parent = b""
        if b"rl4vlm_gym.testing.fresh import _serve" in parent:
            print("CrashesInFreshProcess: about to crash", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        super().__init__(**kwargs)


_OWNER_SETTING: list[str] = []  # set at run time by register_all() in the process that registers the envs


class NeedsItsOwnersMemory(Walk):
    """Plays other episodes where its owner's run-time setting is missing: in a worker that inherited
    nothing of the process that made the vector env (spawn's, forkserver's), which imports this module
    anew."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        if not _OWNER_SETTING:
            cells = [(r, c) for r in range(self.side) for c in range(self.side) if (r, c) != self.agent]
            self.goal = cells[(cells.index(self.goal) + 1) % len(cells)]


class RenderStaleAfterStep(Walk):
    """``render()`` in ``rgb_array`` mode keeps showing the frame drawn at reset."""

    def reset(self, **kwargs: Any) -> Any:
        self._first_frame = None
        return super().reset(**kwargs)

    def render(self) -> Any:
        frame = super().render()
        if self.render_mode != "rgb_array":
            return frame
        if self._first_frame is None:
            self._first_frame = frame
        return self._first_frame


class AnsiLacksState(Walk):
    """The ``ansi`` render shows the mission and the actions, not the state."""

    def render(self) -> Any:
        if self.render_mode == "ansi" and self.started:
            return f"Mission: {self._mission()}\nActions: {', '.join(self.admissible_actions)}\n"
        return super().render()


class AnsiLacksActions(Walk):
    """The ``ansi`` render shows the mission and the state, not the actions."""

    def render(self) -> Any:
        if self.render_mode == "ansi" and self.started:
            return f"Mission: {self._mission()}\n{self.describe()}\n"
        return super().render()


class DropsSeedWithOptions(Walk):
    """``reset(seed=s, options=...)`` ignores the seed when options are given."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return super().reset(seed=None if options is not None else seed, options=options)


class OracleFree(Walk):
    """Walk played as an oracle-free env (``HAS_ORACLE = False``): correct, so every check passes."""

    HAS_ORACLE = False
    oracle_action = VLMEnv.oracle_action  # Walk's oracle is taken away

    def _optimal_steps(self) -> int | None:
        return None


class OracleFreeReportsPlan(OracleFree):
    """An oracle-free env that still reports a plan length."""

    def _optimal_steps(self) -> int | None:
        return self._distance(self.start)


class OracleFreeHidesOracle(Walk):
    """An env with an oracle claims to be oracle-free (to skip the oracle check)."""

    HAS_ORACLE = False

    def _optimal_steps(self) -> int | None:
        return None


# -- one law each, found by tests/kit/kit_laws.py (test_every_law_has_a_broken_env) ----------------------------


class RefusedMoveChangesText(Walk):
    """An invalid or refused move is counted in the state text ("Bumps: n"), which the key leaves out (the image
    draws the count too, so that text and image carry the same information: the observations check passes it)."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.bumps = 0

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        self.bumps += outcome.event == "invalid"
        return outcome

    def _describe(self) -> str:
        return f"{super()._describe()}\nBumps: {self.bumps}"

    def _render(self) -> NDArray[np.uint8]:
        image = super()._render()
        if self.bumps:
            image[0, 0] = (0, 0, min(self.bumps, 255))
        return image

    def _frame_key(self) -> Any:
        return (*super()._frame_key(), self.bumps)


class RefusedMoveChangesActions(Walk):
    """After an invalid or refused move, ``actions`` lists the directions in the other order."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.turned = False

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        self.turned |= outcome.event == "invalid"
        return outcome

    def _actions(self) -> tuple[str, ...]:
        return tuple(reversed(MOVES)) if self.turned else tuple(MOVES)


class RefusedMoveChangesMission(Walk):
    """A refused move adds a warning to the mission."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.bumped = False

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        self.bumped |= outcome.event == "invalid"
        return outcome

    def _mission(self) -> str:
        return super()._mission() + (" Mind the edges." if self.bumped else "")


class RefusedMoveChangesImage(Walk):
    """A refused move flashes the image's corner until the next move (the frame key holds the flash)."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.flash = False

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        self.flash = outcome.event == "invalid"
        return outcome

    def _render(self) -> NDArray[np.uint8]:
        image = super()._render()
        if self.flash:
            image[0, 0] = (0, 0, 255)
        return image

    def _frame_key(self) -> Any:
        return (*super()._frame_key(), self.flash)


class GarbageMoves(Walk):
    """Output that does not parse still moves the agent (down, wrapping around)."""

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        if outcome.event == "invalid" and outcome.error is None:
            self.agent = ((self.agent[0] + 1) % self.side, self.agent[1])
        return outcome


class GoalDoesNotEnd(Walk):
    """Reaching the goal does not end the episode (success is reported while it goes on)."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return dataclasses.replace(outcome, terminated=False) if outcome.event == "goal" else outcome


class ScaleOutOfRange(Walk):
    """A move's outcome is scaled by 3 (its reward, 0, stays in range)."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return dataclasses.replace(outcome, scale=3.0) if outcome.event == "move" and not outcome.error else outcome


class StepCostOutsideTable(Walk):
    """``step`` charges 0.25 a move, a cost the REWARDS table does not hold."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward - 0.25 if info["action"]["valid"] else reward, terminated, truncated, info


class IntReward(Walk):
    """``step`` returns its rewards as ints."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, int(reward), terminated, truncated, info


class MovesAfterEnd(Walk):
    """A refused step after the episode's end still moves the agent back to the start."""

    def _after_the_end(self, result: Any) -> Any:
        self.agent = self.start
        return super()._after_the_end(result)


class ForgetsTheEnd(Walk):
    """A step after the episode's end is refused but reports the episode as running."""

    def _after_the_end(self, result: Any) -> Any:
        obs, reward, _, _, info = super()._after_the_end(result)
        return obs, reward, False, False, info


class PaysAfterEnd(Walk):
    """A step after the episode's end pays nothing instead of the invalid reward."""

    def _after_the_end(self, result: Any) -> Any:
        obs, _, terminated, truncated, info = super()._after_the_end(result)
        return obs, 0.0, terminated, truncated, info


class InfoOptimalDiffers(Walk):
    """``info['optimal_steps']`` at reset counts the reset as a step."""

    optimal_steps_at_reset = True

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        if result is None:
            info["optimal_steps"] += 1
        return info


class ChanceWithPlan(Walk):
    """Declares a game of chance (``CHANCE``) yet reports a plan length."""

    CHANCE = True


class OracleBumps(Walk):
    """The oracle's first move runs into the edge."""

    def oracle_action(self) -> str:
        if self.elapsed_steps == 0:
            return next(
                a
                for a, (dr, dc) in MOVES.items()
                if not (0 <= self.agent[0] + dr < self.side and 0 <= self.agent[1] + dc < self.side)
            )
        return super().oracle_action()


class OracleDithers(Walk):
    """The oracle steps back and forth and never reaches the goal."""

    def oracle_action(self) -> str:
        toward = super().oracle_action()
        return toward if self.elapsed_steps % 2 == 0 else OPPOSITE[toward]


class OracleFreeUndocumented(OracleFree):
    """An env without an oracle.

    Its docs do not say that it has none."""


class AnsiLacksMission(Walk):
    """The ``ansi`` render shows the state and the actions, not the mission."""

    def render(self) -> Any:
        if self.render_mode == "ansi" and self.started:
            return f"{self.describe()}\nActions: {', '.join(self.admissible_actions)}\n"
        return super().render()


class HumanRenderReturnsFrame(Walk):
    """``render()`` in ``human`` mode returns the frame as well as showing it."""

    def render(self) -> Any:
        shown = super().render()
        return self._render() if self.render_mode == "human" and self.started else shown


class FloatFrame(Walk):
    """``render()`` in ``rgb_array`` mode gives a float frame."""

    def render(self) -> Any:
        frame = super().render()
        return frame.astype(np.float32) if self.render_mode == "rgb_array" and frame is not None else frame


class FlickeringView(Walk):
    """An overridden ``_view`` (a map) that redraws a counter each call."""

    calls = 0

    def _view(self) -> NDArray[np.uint8]:
        self.calls += 1
        image = self._render()
        image[0, 0] = (self.calls % 256, 0, 0)
        return image


class RenderIgnoresImageSize(Walk):
    """``render()`` in ``rgb_array`` mode draws at the default size."""

    def render(self) -> Any:
        if self.render_mode != "rgb_array" or not self.started:
            return super().render()
        size, self.image_size = self.image_size, self.DEFAULT_IMAGE_SIZE
        try:
            return self._render()
        finally:
            self.image_size = size


class TextModeDrawsImage(Walk):
    """``obs_mode='text'`` still draws the image."""

    def _observation(self, feedback: str) -> Any:
        obs = super()._observation(feedback)
        return {**obs, "image": self._render()} if self.obs_mode == "text" else obs


class TextModeNoText(Walk):
    """``obs_mode='text'`` leaves the text empty at reset."""

    def _text(self, feedback: str) -> str:
        return "" if self.obs_mode == "text" and not self.elapsed_steps else super()._text(feedback)


class ImageModeBlack(Walk):
    """``obs_mode='image'`` gives a black image at reset."""

    def _observation(self, feedback: str) -> Any:
        obs = super()._observation(feedback)
        return {**obs, "image": np.zeros_like(obs["image"])} if self.obs_mode == "image" and not self.elapsed_steps else obs


class ImageModeLeakAtReset(Walk):
    """In ``image`` mode the text at reset carries the state."""

    def _text(self, feedback: str) -> str:
        return self._describe() if self.obs_mode == "image" and not self.elapsed_steps else super()._text(feedback)


class AppearanceMovesGoal(Walk):
    """The grey appearance also draws the episode with the goal elsewhere, in its state key."""

    def _state_key(self) -> str:
        return super()._state_key() + ("|grey" if self.appearance == "grey" else "")


class AppearancePays(Walk):
    """The grey appearance pays half the goal's reward."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return dataclasses.replace(outcome, scale=0.5) if outcome.event == "goal" and self.appearance == "grey" else outcome


class WordingRenamesActions(Walk):
    """The held-out wording lists the actions in another order."""

    def _actions(self) -> tuple[str, ...]:
        return tuple(reversed(MOVES)) if self.wording != "train" else tuple(MOVES)


class WordingChangesProgress(Walk):
    """The held-out wording reports progress in another scale."""

    def _progress(self) -> float:
        return super()._progress() / (2 if self.wording != "train" else 1)


class WordingPays(Walk):
    """The held-out wording pays half the goal's reward."""

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        return dataclasses.replace(outcome, scale=0.5) if outcome.event == "goal" and self.wording != "train" else outcome


class ReportsLevelZero(Walk):
    """``info['level']`` always says 0."""

    def _info(self, result: Any) -> dict[str, Any]:
        return {**super()._info(result), "level": 0}


class ForgivingAppearance(Walk):
    """An unknown appearance falls back to the default one instead of failing."""

    def __init__(self, *, appearance: str = "default", **kwargs: Any) -> None:
        super().__init__(appearance=appearance if appearance in self.APPEARANCES else "default", **kwargs)


class VagueArguments(Walk):
    """A bad argument fails with a message that does not name it."""

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValueError:
            raise ValueError("bad argument") from None


class IgnoresUnknownOptions(Walk):
    """``reset`` drops options it does not know."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return super().reset(seed=seed, options={k: v for k, v in (options or {}).items() if k == "level"} or None)


class VagueResetErrors(Walk):
    """``reset`` fails on bad options with a message that names none of them."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        try:
            return super().reset(seed=seed, options=options)
        except ValueError:
            raise ValueError("bad reset") from None


class SeedDoesNotRepeat(Walk):
    """Each reset moves the goal one cell on from the seed's: state kept across resets."""

    resets = 0

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.resets += 1
        cells = [(r, c) for r in range(self.side) for c in range(self.side) if (r, c) != self.agent]
        self.goal = cells[(cells.index(self.goal) + self.resets) % len(cells)]


class KeyCountsResets(Walk):
    """``state_key`` counts the env's resets."""

    resets = 0

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.resets += 1

    def _state_key(self) -> str:
        return f"{super()._state_key()}|reset={self.resets}"


class SeedsIgnored(Walk):
    """Every episode is drawn from one fixed RNG, whatever the seed."""

    def _new_episode(self, config: WalkLevel) -> None:
        self.np_random = np.random.default_rng(0)
        super()._new_episode(config)


class EchoesOutput(Walk):
    """The invalid-action feedback quotes the model's whole output."""

    def step(self, action: Any) -> Any:
        self._raw = action
        return super().step(action)

    def _invalid_feedback(self, error: str | None) -> str:
        return f"{super()._invalid_feedback(error)} You said: {getattr(self, '_raw', '')!s}"


class SilentInvalid(Walk):
    """Output that does not parse gets no feedback at all."""

    def _invalid_feedback(self, error: str | None) -> str:
        return ""


class FirstWordOnly(Walk):
    """``step`` plays the first word of the model's output, and fails on an output without one."""

    def step(self, action: Any) -> Any:
        return super().step(action.split()[0])


class GuessesGarbage(Walk):
    """Output that does not parse is played as ``up``."""

    def step(self, action: Any) -> Any:
        return super().step(action if action in MOVES else "up")


class UnconsumedInvalid(Walk):
    """Output that does not parse does not count as a step."""

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        if outcome.event == "invalid" and outcome.error is None:
            vars(self)["_elapsed"] -= 1  # past the base-state guard: this env is broken on purpose
        return outcome


class NoInvalidEvent(Walk):
    """The reward tables have no ``invalid`` event."""

    REWARDS: ClassVar = {"default": {"move": 0.0, "goal": 1.0}, "lenient": {"move": 0.0, "goal": 1.0}}


class PickleLosesGoal(Walk):
    """A pickled env puts the goal on the first free cell."""

    def __getstate__(self) -> dict[str, Any]:
        free = [(r, c) for r in range(self.side) for c in range(self.side) if (r, c) not in (self.agent, self.start, self.goal)]
        return {**super().__getstate__(), "goal": free[0]}


class PickleForgetsMoves(Walk):
    """The goal pays less the more moves it took; a pickled env forgets the moves made (its image and text agree)."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.moves = 0

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        self.moves += not outcome.error
        return dataclasses.replace(outcome, scale=1 / self.moves) if outcome.event == "goal" else outcome

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), "moves": 0}


class BadActionInfo(Walk):
    """``info['action']`` carries a key of its own."""

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        if "action" in info:
            info["action"] = {**info["action"], "length": len(str(info["action"]["raw"]))}
        return info


class InvalidWithoutError(Walk):
    """``info['action']`` gives no error for output that does not parse."""

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        if (
            "action" in info
            and info["action"]["parsed"] is None
            and info["action"]["error"]
            and "edge" not in info["action"]["error"]
        ):
            info["action"] = {**info["action"], "error": None}
        return info


class SaysFreeText(Walk):
    """Takes a sentence (words starting with a capital) as a valid ``say`` action, which ``actions`` does not list."""

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        if isinstance(action, str) and action[:1].isupper() and len(action.split()) >= 3 and not info["action"]["valid"]:
            info["action"] = {"raw": action, "parsed": "say", "valid": True, "error": None}
        return obs, reward, terminated, truncated, info


class PlainGymWalk(gym.Env):  # type: ignore[type-arg]
    """Walk's game as a plain Gymnasium env, not derived from VLMEnv (the kit cannot inspect it)."""

    REWARDS: ClassVar = Walk.REWARDS
    observation_space = Walk(obs_mode="text").observation_space
    action_space = Walk(obs_mode="text").action_space

    def __init__(self, **kwargs: Any) -> None:
        self.walk = Walk(**kwargs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return self.walk.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self.walk.step(action)


class UndocumentedWalk(VLMEnv):
    """Walk written anew as a VLMEnv, with a one-line docstring: its docs page has no sections."""

    vars().update({k: v for k, v in vars(Walk).items() if not k.startswith("__")})


class CardListsOneLevel(Walk):
    """Its card lists one level; the env has two."""

    CARD: ClassVar[dict[str, Any]] = {"levels": ("2x2 grid",)}


class CardDefaultsToLevelOne(Walk):
    """Its card says the default level is 1; the env's is 0."""

    CARD: ClassVar[dict[str, Any]] = {"default_level": 1}


class CardMissesVariant(Walk):
    """Its card lists the default reward variant only."""

    CARD: ClassVar[dict[str, Any]] = {"reward_variants": ("default",)}


_NUMBERED = [0]  # NumberedText and NumberedImage envs made in this process


class NumberedText(Walk):
    """Each env names itself by a process-wide count ("Walker 3") in its text: a vector env's envs and
    single envs made after them say other names."""

    def __init__(self, **kwargs: Any) -> None:
        _NUMBERED[0] += 1
        self.number = _NUMBERED[0]
        super().__init__(**kwargs)

    def _describe(self) -> str:
        return f"{super()._describe()}\nWalker {self.number}"


class NumberedImage(NumberedText):
    """Each env draws its process-wide count in its image's corner (its text stays Walk's)."""

    def _describe(self) -> str:
        return Walk._describe(self)

    def _render(self) -> NDArray[np.uint8]:
        image = super()._render()
        image[0, 0] = (self.number % 256, 0, 0)
        return image


def _forked() -> bool:
    """In a process forked from the one that imported this module (a forked vector worker)."""
    return os.getpid() != _PARENT_PID


class ForkedActions(Walk):
    """In a forked worker, ``actions`` lists the directions in the other order."""

    def _actions(self) -> tuple[str, ...]:
        return tuple(reversed(MOVES)) if _forked() else tuple(MOVES)


class ForkedImage(Walk):
    """In a forked worker, the background is a shade darker."""

    def _render(self) -> NDArray[np.uint8]:
        image = super()._render()
        return image - 1 if _forked() else image


class ForkedTruncates(Walk):
    """In a forked worker, a step budget of one step (the owner's setting, which the worker does not see)
    truncates every episode."""

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        return dataclasses.replace(outcome, truncated=True) if _forked() else outcome


class DetourOnLevelOne(Walk):
    """On level 1 only (the 3x3 grid), the oracle steps off and back before walking to the goal, and
    ``optimal_steps`` counts the detour (its oracle's length, every episode): the first episode of the
    default level has none."""

    def _optimal_steps(self) -> int | None:
        return self._distance(self.start) + (2 if self.side == 3 else 0)

    def oracle_action(self) -> str:
        if self.side == 3 and self.elapsed_steps < 2:
            off = self._off(self.start)
            return off if self.elapsed_steps == 0 else OPPOSITE[off]
        return super().oracle_action()

    def _off(self, cell: tuple[int, int]) -> str:
        """The first move from ``cell`` that stays on the grid and off the goal."""
        (r, c), side = cell, self.side
        return next(
            a for a, (dr, dc) in MOVES.items() if 0 <= r + dr < side and 0 <= c + dc < side and (r + dr, c + dc) != self.goal
        )


class KeyLeavesOutBattery(Walk):
    """Each move spends a charge of a battery (``2 * (side - 1)`` charges: the longest plan's moves) that the
    state shows nowhere and ``state_key`` leaves out: two squares with one key may accept and refuse the same move."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.charge = 2 * (self.side - 1)

    def _apply(self, action: str) -> StepOutcome:
        if not self.charge:
            return StepOutcome("move", error="the battery is flat")
        outcome = super()._apply(action)
        self.charge -= not outcome.error
        return outcome


class MissionCountsSteps(Walk):
    """The mission says how many moves the goal is away: it tells ``optimal_steps``."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.away = self._distance(self.start)

    def _mission(self) -> str:
        return f"{super()._mission()} The goal is {self.away} moves away."


class MissionPointsTheWay(Walk):
    """The mission says which way to set off: it tells the oracle's first move."""

    def _new_episode(self, config: WalkLevel) -> None:
        super()._new_episode(config)
        self.way = Walk.oracle_action(self)

    def _mission(self) -> str:
        return f"{super()._mission()} Set off {self.way}."


class FeedbackSaysWhere(Walk):
    """A move's feedback says where the agent now stands, in other words than the state text: in ``image``
    mode, the text tells the state."""

    PHRASES: ClassVar = {
        "held-out": {
            **Walk.PHRASES["held-out"],
            "moved": ("Now at row {row}, column {column}.", "Standing at row {row}, column {column}."),
        }
    }

    def _apply(self, action: str) -> StepOutcome:
        outcome = super()._apply(action)
        if outcome.event == "move" and not outcome.error:
            (row, column) = self.agent
            feedback = self._say("moved", f"You moved to row {row}, column {column}.", row=row, column=column)
            return dataclasses.replace(outcome, feedback=feedback)
        return outcome


class MissionNamesGoal(Walk):
    """The mission names the goal's square in the words of the state text: in ``image`` mode, the mission tells
    where the image's green square is."""

    def _mission(self) -> str:
        return self._say("mission", f"Walk to row {self.goal[0]}, column {self.goal[1]}: answer up, down, left or right.")


# -- decision facts that lie: each overrides _decision only ------------------------------------


class NoDecisions(Walk):
    """Has an oracle but keeps the base class's "no solver" decision facts."""

    _decision = VLMEnv._decision


class NearerMoves(Walk):
    """The moves one square nearer, for the broken decision facts below."""

    def _nearer(self) -> tuple[str, ...]:
        facts = Walk._decision(self)
        assert facts.optimal_actions is not None
        return facts.optimal_actions


class OptimalOutOfOrder(NearerMoves):
    """Lists the optimal moves in reverse order, not in the order of ``obs["actions"]``."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), optimal_actions=self._nearer()[::-1])


class FactsWithoutReason(NearerMoves):
    """Knows the facts on the last square only, and does not say why they are missing elsewhere."""

    def _decision(self) -> Decision:
        return Walk._decision(self) if self._distance(self.agent) == 1 else Decision(None, None)


class HalfFacts(NearerMoves):
    """Gives the optimal moves but not the steps to go."""

    def _decision(self) -> Decision:
        return Decision(self._nearer(), None, reason="steps not counted")


class StepsOffByOne(NearerMoves):
    """Counts one step too many to go."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), steps_to_go=self._distance(self.agent) + 1)


class UnsolvableAtReset(NearerMoves):
    """Says the episode is unsolvable at the start of level 1 (facts kept from another level's episode)."""

    def _decision(self) -> Decision:
        if self.side == 3 and self.elapsed_steps == 0:
            return Decision(None, None, reason="unsolvable from here: kept from level 0")
        return Walk._decision(self)


class OracleNotOptimal(NearerMoves):
    """Leaves the oracle's move out of the optimal moves wherever another one is nearer too."""

    def _decision(self) -> Decision:
        nearer = self._nearer()
        others = tuple(a for a in nearer if a != self.oracle_action())
        return dataclasses.replace(Walk._decision(self), optimal_actions=others or nearer)


class SuboptimalListed(NearerMoves):
    """Lists every move the edge allows as optimal, those that lead away included."""

    def _decision(self) -> Decision:
        allowed = tuple(a for a, (dr, dc) in MOVES.items() if 0 <= self.agent[0] + dr < self.side and 0 <= self.agent[1] + dc < self.side)
        return dataclasses.replace(Walk._decision(self), optimal_actions=allowed)


class OnlyOracleListed(NearerMoves):
    """Lists the oracle's move alone as optimal, though another move is as good."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), optimal_actions=(self.oracle_action(),))


class ValuesDisagree(NearerMoves):
    """Gives action values whose best move is the farthest, not the optimal one."""

    def _decision(self) -> Decision:
        values = {a: float(self._distance((self.agent[0] + dr, self.agent[1] + dc))) for a, (dr, dc) in MOVES.items()}
        return dataclasses.replace(Walk._decision(self), values=values)


class FeatureNotScalar(NearerMoves):
    """Declares a feature whose value is a list, not an int or a short string."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), features={"agent": list(self.agent)})  # type: ignore[dict-item]


class HugeFacts(NearerMoves):
    """Says a reason of 100,000 characters with its facts."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), reason="because " * 12_500)


class FeatureCountsSteps(NearerMoves):
    """Declares the steps taken as a feature of the state, so an invalid step changes the facts."""

    def _decision(self) -> Decision:
        return dataclasses.replace(Walk._decision(self), features={"taken": self.elapsed_steps})


DECISIONS_ONLY: tuple[type[VLMEnv], ...] = (
    NoDecisions, OptimalOutOfOrder, FactsWithoutReason, HalfFacts, StepsOffByOne, UnsolvableAtReset, OracleNotOptimal, SuboptimalListed,
    OnlyOracleListed, ValuesDisagree, FeatureNotScalar, HugeFacts, FeatureCountsSteps,
)  # fmt: skip
"""Broken envs that differ from Walk in ``_decision`` alone, which only the decisions check reads."""


BROKEN: tuple[type[VLMEnv], ...] = (
    RefusedMoveChanges, StaleFrameCache, OptimalNone, OptimalFloat, DetourOracle, SlowOracle,
    ImageModeLeak, UnseededReplay, ImageLacksGoal, TextLacksGoal, MissionGivesAway, MissionNamesGame,
    IgnoresImageSize, AppearanceIgnored, AppearanceChangesText, WordingIgnored, WordingKeepsFeedback,
    WordingChangesEpisode, RefusedPaysMove, DuplicateActions, AcceptsAfterEnd, RewardOutsideTable,
    VariantMissesEvent, ProgressOutOfRange, EarlySuccess, StateKeyCollision, LevelsIgnored,
    SaltedGoal, SaltedFeedback, HangsInForkedWorkers, PlannerGivesUp, OracleFreeReportsPlan, OracleFreeHidesOracle,
    FirstOfItsProcess, CrashesInFreshProcess, NeedsItsOwnersMemory, RenderStaleAfterStep, AnsiLacksState,
    AnsiLacksActions, DropsSeedWithOptions,
    RefusedMoveChangesText, RefusedMoveChangesActions, RefusedMoveChangesMission, RefusedMoveChangesImage, GarbageMoves,
    GoalDoesNotEnd, ScaleOutOfRange, StepCostOutsideTable, IntReward, MovesAfterEnd, ForgetsTheEnd, PaysAfterEnd,
    InfoOptimalDiffers, ChanceWithPlan, OracleBumps, OracleDithers, OracleFreeUndocumented,
    AnsiLacksMission, HumanRenderReturnsFrame, FloatFrame, FlickeringView, RenderIgnoresImageSize, TextModeDrawsImage,
    TextModeNoText, ImageModeBlack, ImageModeLeakAtReset, AppearanceMovesGoal, AppearancePays, WordingRenamesActions,
    WordingChangesProgress, WordingPays, ReportsLevelZero, ForgivingAppearance, VagueArguments, IgnoresUnknownOptions,
    VagueResetErrors, SeedDoesNotRepeat, KeyCountsResets, SeedsIgnored, EchoesOutput, SilentInvalid, FirstWordOnly,
    GuessesGarbage, UnconsumedInvalid, NoInvalidEvent, PickleLosesGoal, CardListsOneLevel,
    CardDefaultsToLevelOne, CardMissesVariant, PickleForgetsMoves, BadActionInfo, InvalidWithoutError, SaysFreeText,
    PlainGymWalk, UndocumentedWalk, NumberedText, NumberedImage, ForkedActions, ForkedImage, ForkedTruncates,
    DetourOnLevelOne, KeyLeavesOutBattery, MissionCountsSteps, MissionPointsTheWay,
    FeedbackSaysWhere, MissionNamesGoal, *DECISIONS_ONLY,
)  # fmt: skip


def env_id(cls: type[VLMEnv]) -> str:
    return "kit/Walk-v0" if cls is Walk else f"kit/Walk{cls.__name__}-v0"


class CountsClosed(Walk):
    """A correct Walk that counts its instances (made, or unpickled as copies) and those closed: every env
    a check makes or copies it must close, since an env may hold a browser window, a server or a process
    that outlives an unclosed copy (the kit once left WebShop-Browser's copies open)."""

    made: ClassVar[int] = 0
    closed: ClassVar[int] = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        type(self).made += 1

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__["counted_closed"] = False
        type(self).made += 1

    def close(self) -> None:
        if not self.__dict__.get("counted_closed"):
            self.__dict__["counted_closed"] = True
            type(self).closed += 1
        super().close()


def register_all() -> list[str]:
    """Register Walk and every broken variant with a card (a no-op the second time); return the ids.
    Tests unregister them when done (`rl4vlm_gym.registry.unregister`)."""
    _OWNER_SETTING[:] = ["set"]
    ids = []
    for cls in (Walk, PlannedWalk, PlannerGivesUpOnSome, ReplayedGames, OracleFree, CountsClosed, *BROKEN):
        ids.append(env_id(cls))
        card = {"levels": ("2x2 grid", "3x3 grid"), "default_level": 0, "reward_variants": tuple(cls.REWARDS)}
        register(
            EnvCard(
                id=env_id(cls),
                entry_point=f"{__name__}:{cls.__name__}",
                family="kit",
                summary="Walk to the goal square (a conformance-kit test env).",
                skills=("navigation",),
                action_grammar="up, down, left or right",
                action_examples=("up",),
                success="the agent stands on the goal",
                max_episode_steps=12,
                **{**card, **getattr(cls, "CARD", {})},
            )
        )
    return ids
