"""OpenSpiel's imperfect-information games behind our contract, hidden information hidden.

A game module (``kuhn.py``, ``leduc.py``, ``liars_dice.py``) describes its game as a
:class:`SpielGame`: the OpenSpiel game string of each level, the names of the moves, what one
player may know (``view``: built from that player's information only, so nothing hidden can leak
into its image or text) and how that is drawn and said. Two envs are built on it here:

- :class:`SpielView`: one seat against built-in opponents behind ``VLMEnv`` (the single-agent
  ids). The seed draws the seat, every chance outcome (OpenSpiel's chance nodes, sampled with the
  env's RNG) and every opponent move. Its return is the hand's chips (:class:`ChipsScored`).
- :class:`SpielAEC`: every seat behind PettingZoo's AEC API (two or more players, as the game
  has them), chance sampled the same way.

OpenSpiel plays the rules and pays the returns; the opponents read only their own information
state string (``policy(info_state, legal_actions)``), never the true state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium.utils import seeding

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.games.aec import VLMAgentsAEC, cached_frame
from rl4vlm_gym.envs.games.decisions import CHANCE_REASON, ChipsReward, SpielResponse, best_actions

if TYPE_CHECKING:
    from numpy.typing import NDArray

# A policy: (information state string, legal actions) -> probability of each legal action
Policy = Callable[[str, Sequence[int]], Sequence[float]]


@functools.cache
def load(spec: str) -> Any:
    """OpenSpiel's game (cached: loading parses the parameters and builds tables)."""
    import pyspiel

    return pyspiel.load_game(spec)


def sample(rng: np.random.Generator, actions: Sequence[int], probs: Sequence[float]) -> int:
    """One of ``actions`` drawn with ``probs`` from ``rng`` (in the given order: the same draw in
    every process)."""
    if len(actions) == 1:
        return int(actions[0])
    p = np.asarray(probs, dtype=float)
    return int(actions[int(rng.choice(len(actions), p=p / p.sum()))])


def uniform(info_state: str, legal: Sequence[int]) -> list[float]:
    """The random opponent: every legal move alike."""
    return [1.0 / len(legal)] * len(legal)


def most_likely(policy: Policy, info_state: str, legal: Sequence[int]) -> int:
    """The policy's most likely move (the first of equals, in OpenSpiel's action order)."""
    probs = list(policy(info_state, legal))
    return int(legal[probs.index(max(probs))])


@dataclass(frozen=True)
class SpielLevel:
    """A level: the OpenSpiel game string and the built-in opponent's name."""

    spec: str
    opponent: str
    label: str


class SpielGame:
    """What differs between the OpenSpiel games (override every method)."""

    title: ClassVar[str]
    synonyms: ClassVar[dict[str, str]] = {}
    max_payoff: ClassVar[float] = 1.0

    def action_name(self, action: int, spec: str) -> str:
        raise NotImplementedError

    def view(self, state: Any, seat: int) -> Any:
        """A hashable record of what ``seat`` may know in ``state``: its information state and,
        once the game is over, whatever the rules reveal (a showdown's cards, the dice)."""
        raise NotImplementedError

    def text(self, view: Any) -> str:
        raise NotImplementedError

    def image(self, view: Any, size: tuple[int, int]) -> NDArray[np.uint8]:
        raise NotImplementedError

    def mission(self, spec: str) -> str:
        raise NotImplementedError

    def deal(self, rng: np.random.Generator, spec: str) -> tuple[int, ...] | None:
        """The deal's chance outcomes drawn at once from ``rng``, in the game's own way, for the
        first chance nodes; ``None`` (the default): every chance node is sampled as it comes, with
        OpenSpiel's probabilities."""
        return None

    def outcome_words(self, chips: float) -> str:
        """What the view says of the hand's result (``chips`` won by its seat) after the last move."""
        return ""

    def chance_feedback(self, state: Any, action: int, seat: int) -> str:
        """What ``seat`` is told of a chance outcome (a public card), before it is applied."""
        return ""

    def policy(self, name: str, spec: str) -> Policy:
        """The opponent ``name``'s policy at the level whose game is ``spec``."""
        raise NotImplementedError

    def best_response(self, name: str, spec: str, seat: int) -> Callable[[Any], int] | None:
        """The exact best response of ``seat`` to opponent ``name`` (state -> action), or
        ``None`` where none is computed (the oracle then plays ``fallback``)."""
        return None

    def action_values(self, name: str, spec: str, seat: int, state: Any, payoff: Callable[[float], float]) -> dict[int, float] | None:
        """The expected return of each legal action of ``seat`` at ``state`` (its turn) against
        opponent ``name``, playing best afterwards, ``payoff`` mapping OpenSpiel's return of the
        seat to the env's reward; ``None`` where no exact solver exists. The default is
        :class:`~rl4vlm_gym.envs.games.decisions.SpielResponse`, the exact expectimax over the
        worlds the seat cannot tell apart."""
        return SpielResponse.of(self, spec, name, seat, payoff).action_values(state)

    def features(self, view: Any) -> dict[str, int | str]:
        """A few features of what a seat knows (``view``), for breaking decision errors down."""
        return {}

    def decision_key(self, name: str, spec: str, state: Any, seat: int) -> tuple[Hashable, dict[str, int | str] | None]:
        """What the decision facts of ``seat`` at ``state`` (its turn) against opponent ``name`` depend on,
        besides the game, the level and the reward variant, and the state's features where that key does
        not fix them (else None): its information state, which does (a game may name less, so that one
        entry serves several states, and give the features it leaves out)."""
        return state.information_state_string(seat), None

    def state_features(self, state: Any, seat: int) -> dict[str, int | str]:
        """:meth:`features` of ``seat``'s view of ``state`` (a game may read them off the state without
        building the view)."""
        return self.features(self.view(state, seat))

    def fallback(self, spec: str) -> Policy:
        """The oracle's policy where no exact best response exists."""
        raise NotImplementedError(f"{self.title} has no oracle player at {spec}")

    def name_moves(self, state: Any, spec: str) -> list[str]:
        return [self.action_name(a, spec) for a in state.legal_actions()]

    def stake(self, state: Any, seat: int) -> float:
        """What ``seat`` loses by leaving the hand now, as a fold: the chips it has put in the pot
        (a game that pays a fixed result, such as Liar's dice, loses ``max_payoff``)."""
        return self.max_payoff

    def forfeit_words(self, stake: float) -> str:
        """What a seat is told when its stalled hand is scored (see :class:`ChipsScored`)."""
        return f"it is scored as a fold: you lose the {stake:g} chip{'s' if stake != 1 else ''} you put in"

    def who(self, player: int, seat: int, players: int) -> str:
        """How ``seat`` is told about ``player``: "You", "Your opponent" (two players) or "Player k"."""
        return "You" if player == seat else "Your opponent" if players == 2 else f"Player {player}"


def tabular_best_response(spec: str, seat: int, table: dict[str, list[tuple[int, float]]]) -> dict[str, int]:
    """OpenSpiel's exact best response of ``seat`` to the opponent's tabular policy ``table``
    (``pyspiel.TabularBestResponse``): the best action at each of its information states."""
    import pyspiel

    return dict(pyspiel.TabularBestResponse(load(spec), seat, table).get_best_response_actions())


def replay(spec: str, history: Sequence[int]) -> Any:
    state = load(spec).new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


class ChipsScored:
    """The score of a single-agent card or dice view: the chips its seat won in the hand.

    ``info["score"]`` is OpenSpiel's return for the seat once the hand is over, 0 before; the
    ``native`` reward pays the same at the end (the views' reward tables scale each event by the
    chips), so the episode return is the hand's chips. A hand the agent stalls (the view's
    ``STEP_LIMIT`` steps, the card's ``max_episode_steps``, spent without finishing it: only
    invalid moves make a hand that long) is scored as a fold: the step that reaches the limit is
    truncated and pays the ``"forfeit"`` event scaled by the seat's stake (``SpielGame.stake``:
    the chips it put in the pot; a lost game in Liar's dice), and ``info["score"]`` is minus that
    stake. The truncation is the view's own rule, so a ``TimeLimit`` of the same length (the
    registered one) changes nothing; a shorter ``max_episode_steps`` given to ``gym.make`` cuts
    the hand before it and pays nothing. ``success`` is a positive score (chips > 0), a monotone
    function of it.

    ``duplicate=True`` plays each deal from every seat (the duplicate format, whose card luck
    cancels in a pair's sum): ``reset(seed=s)`` seats you in seat ``s % N`` of the deal ``s // N``
    (N players), so seeds 2k and 2k+1 of a two-player game play the same cards or dice from both
    seats; without a seed, resets go through the seats of one deal before drawing the next. The
    deal's chance outcomes come from a generator of the deal alone, the opponents' moves from the
    env's (they differ between the seats). Off (the default), the seed draws the seat and the deal.

    Mixed into ``VLMEnv`` subclasses that keep ``state`` (OpenSpiel's), ``seat`` and
    ``forfeited`` (False at each reset), and draw the seat and every chance outcome with
    :meth:`_seat_and_chance` and :attr:`chance_rng`.
    """

    GAME: ClassVar[SpielGame]
    STEP_LIMIT: ClassVar[int]  # the card's max_episode_steps
    state: Any
    seat: int
    forfeited: bool
    np_random: np.random.Generator

    def __init__(self, *, duplicate: bool = False, **kwargs: Any) -> None:
        if not isinstance(duplicate, bool):
            raise ValueError(f"duplicate={duplicate!r} is not valid: give True or False")
        self.duplicate = duplicate
        self._reset_seed: int | None = None
        self._deal: tuple[int, int] | None = None  # (deal key, seat) of the last duplicate episode
        self._deal_rng: np.random.Generator | None = None
        super().__init__(**kwargs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._reset_seed = seed  # read by _seat_and_chance: the duplicate format pairs seeds
        return super().reset(seed=seed, options=options)  # type: ignore[misc]

    def _seat_and_chance(self, players: int) -> int:
        """The episode's seat, drawn by the seed (see the class docstring); sets the generator of
        its chance outcomes, :attr:`chance_rng`."""
        if not self.duplicate:
            return int(self.np_random.integers(players))
        if self._reset_seed is not None:
            key, seat = divmod(int(self._reset_seed), players)
        elif self._deal is not None and self._deal[1] + 1 < players:
            key, seat = self._deal[0], self._deal[1] + 1
        else:
            key, seat = int(self.np_random.integers(2**62)), 0
        self._deal = (key, seat)
        self._deal_rng = np.random.default_rng([key, 0xD0D])  # the deal's own stream, apart from the seed's
        return seat

    @property
    def chance_rng(self) -> np.random.Generator:
        """The generator of this episode's chance outcomes: the deal's in the duplicate format,
        else the env's."""
        return self._deal_rng if self.duplicate and self._deal_rng is not None else self.np_random

    @property
    def chips(self) -> float:
        """The chips our seat won in the hand so far: OpenSpiel's return at the end, minus the
        stake of a stalled hand, 0 before."""
        if self.state.is_terminal():
            return float(self.state.returns()[self.seat])
        return -float(self.GAME.stake(self.state, self.seat)) if self.forfeited else 0.0

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        elapsed = self.elapsed_steps  # type: ignore[attr-defined]
        if outcome.terminated or outcome.truncated or self.state.is_terminal() or elapsed < self.STEP_LIMIT:
            return outcome
        self.forfeited = True
        stake = float(self.GAME.stake(self.state, self.seat))
        said = f"The hand took {elapsed} steps without ending: {self.GAME.forfeit_words(stake)}."
        return StepOutcome("forfeit", truncated=True, scale=stake / self.chips_unit, feedback=f"{outcome.feedback} {said}".strip())

    @property
    def chips_unit(self) -> float:
        """The chips that the ``native`` reward table's ``forfeit`` (and ``won``) pays at scale 1:
        an event paying ``c`` chips is scaled by ``c / chips_unit``."""
        return -float(self.REWARDS["native"]["forfeit"])  # type: ignore[attr-defined]

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)  # type: ignore[misc]
        info["score"] = self.chips
        return info


class SpielView(ChipsScored, VLMEnv):
    """Base of the single-agent OpenSpiel game views (see the subclasses' docstrings).

    The seed draws our seat among the game's players (OpenSpiel's player 0 acts first); every
    other seat is played by the level's opponent policy."""

    GAME: ClassVar[SpielGame]
    LEVELS: ClassVar[tuple[SpielLevel, ...]]
    CHANCE: ClassVar[bool] = True  # chance nodes and the opponent's moves are drawn as the game goes
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 64

    @property
    def config(self) -> SpielLevel:
        return self.LEVELS[self.level]

    @property
    def players(self) -> int:
        return int(load(self.config.spec).num_players())

    def _new_episode(self, config: SpielLevel) -> None:
        self.seat = self._seat_and_chance(self.players)  # OpenSpiel's player id: 0 acts first
        self.forfeited = False
        while True:
            self.history: tuple[int, ...] = ()  # every action, chance included: the true state
            self.state = load(config.spec).new_initial_state()
            self._dealt = list(self.GAME.deal(self.chance_rng, config.spec) or ())  # played by the first chance nodes
            self._advance()  # the deal, and the opponents' moves before ours: the view shows them
            # With three or more players the others can end the game before our first move (two
            # players call in Liar's dice): an episode must give us a move, so it is dealt again.
            if not self.state.is_terminal():
                break

    def _play(self, action: int) -> None:
        self.state.apply_action(action)
        self.history += (action,)

    def _advance(self) -> str:
        """Play chance and the opponent until it is our turn or the game is over."""
        policy, said = self.GAME.policy(self.config.opponent, self.config.spec), []
        while not self.state.is_terminal() and self.state.current_player() != self.seat:
            if self.state.is_chance_node():
                if self._dealt:
                    action = self._dealt.pop(0)
                else:
                    actions, probs = zip(*self.state.chance_outcomes(), strict=True)
                    action = sample(self.chance_rng, actions, probs)
                said.append(self.GAME.chance_feedback(self.state, action, self.seat))
            else:
                legal = self.state.legal_actions()
                action = sample(self.np_random, legal, policy(self.state.information_state_string(), legal))
                who = self.GAME.who(self.state.current_player(), self.seat, self.players)
                said.append(f"{who} chose {self.GAME.action_name(action, self.config.spec)}.")
            self._play(action)
        return " ".join(s for s in said if s)

    def _actions(self) -> tuple[str, ...]:
        if self.state.is_terminal():
            return ()
        return tuple(self.GAME.name_moves(self.state, self.config.spec))

    def _apply(self, action: str) -> StepOutcome:
        move = self.state.legal_actions()[self.GAME.name_moves(self.state, self.config.spec).index(action)]
        self._play(move)
        feedback = f"You chose {action}. " + self._advance()
        if self.state.is_terminal():
            chips = self.chips
            event = "won" if chips > 0 else "lost" if chips < 0 else "tie"
            scale = abs(chips) / self.chips_unit if chips else 1.0  # the reward is the chips (native)
            feedback = f"{feedback.strip()} {self.GAME.outcome_words(chips)}"
            return StepOutcome(event, terminated=True, scale=scale, feedback=feedback.strip())
        return StepOutcome("move", feedback=feedback.strip())

    def _seen(self) -> Any:
        return self.GAME.view(self.state, self.seat)

    def _describe(self) -> str:
        return self.GAME.text(self._seen())

    def _mission(self) -> str:
        return self.GAME.mission(self.config.spec)

    def _render(self) -> NDArray[np.uint8]:
        return self.GAME.image(self._seen(), self.image_size)

    def _frame_key(self) -> Any:
        return (self._seen(), self.image_size)  # the picture shows only what our seat knows

    def _state_key(self) -> str:
        # our information state (and what the end reveals), never the true state: GiGPO groups
        # steps by the key, and a key naming the opponent's cards would leak them into training
        return f"{self.level}:{self._seen()}"

    def _success(self) -> bool:
        return self.state.is_terminal() and self.chips > 0  # the card's success: chips won

    def _progress(self) -> float:
        return float(self._success())

    def _optimal_steps(self) -> int | None:
        return None  # chance and the opponent's moves are drawn as the game goes (CHANCE)

    def _decision(self) -> Decision:
        """The best responses to the opponents' known policy at our information state and their
        expected returns (``SpielGame.action_values``); no steps to go: the deal and the
        opponents' moves are chance. A function of the level, the reward variant, the seat and
        our information state, so it is kept (:data:`_DECISIONS`)."""
        longest = _max_game_length(self.config.spec)
        if self.elapsed_steps + longest > self.STEP_LIMIT:  # else the moves left (at most the longest hand) fit
            left = longest - sum(1 for h in self.state.full_history() if h.player >= 0)
            if self.elapsed_steps + left > self.STEP_LIMIT:
                # the hand may reach the step limit before it ends, and is then scored as a fold,
                # which the solvers do not model (only invalid moves make a hand this long)
                return Decision(None, None, reason=f"near the step limit: {self.STEP_LIMIT - self.elapsed_steps} steps are left before the "
                                f"hand is forfeited, fewer than it may take ({left}), and the solver does not model the forfeit",
                                features=self.GAME.state_features(self.state, self.seat))
        state_key, features = self.GAME.decision_key(self.config.opponent, self.config.spec, self.state, self.seat)
        key = (type(self), self.level, self.reward_variant, self.seat, state_key)
        found = _DECISIONS.get(key)
        if found is None:
            if len(_DECISIONS) >= _DECISIONS_KEPT:
                _DECISIONS.clear()
            found = _DECISIONS[key] = self._solve()
        if features is not None and found.features != features:
            found = replace(found, features=features)  # kept for another state with the same facts but these
        return found

    def _solve(self) -> Decision:
        spec, features = self.config.spec, self.GAME.state_features(self.state, self.seat)
        table = self.REWARDS[self.reward_variant]
        payoff = ChipsReward(float(table["won"]), float(table["lost"]), float(table.get("tie", 0.0)), self.chips_unit)
        values = self.GAME.action_values(self.config.opponent, spec, self.seat, self.state, payoff)
        if values is None:
            return Decision(None, None, reason=f"no exact best response to the {self.config.opponent} opponent here", features=features)
        legal = tuple(self.state.legal_actions())
        names = _move_names(self.GAME, spec, legal)
        by_name = {names[i]: float(values[a]) for i, a in enumerate(legal)}
        return Decision(best_actions(by_name, names), None, values=by_name, reason=CHANCE_REASON, features=features)

    def oracle_action(self) -> str:
        """The exact best response to the opponents' known policy (at the move's information
        state: it maximises the expected chips), where the game has one; else the game's
        fallback player."""
        if self.state.is_terminal():
            return "pass"  # the game is over: any move is refused
        spec, legal = self.config.spec, self.state.legal_actions()
        respond = self.GAME.best_response(self.config.opponent, spec, self.seat)
        if respond is not None:
            move = respond(self.state)
        else:
            move = most_likely(self.GAME.fallback(spec), self.state.information_state_string(), legal)
        return self.GAME.action_name(move, spec)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["state"] = None  # OpenSpiel states are rebuilt from the moves
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "history" in state:
            self.state = replay(self.config.spec, self.history)


_DECISIONS: dict[tuple[Any, ...], Decision] = {}
"""The single-agent views' decision facts by (class, level, reward variant, seat, ``SpielGame.decision_key``)."""
_DECISIONS_KEPT = 65_536


@functools.cache
def _max_game_length(spec: str) -> int:
    """The most moves (of the players) a hand of ``spec`` can take."""
    return int(load(spec).max_game_length())


@functools.lru_cache(maxsize=4096)
def _move_names(game: SpielGame, spec: str, legal: tuple[int, ...]) -> tuple[str, ...]:
    """``game.name_moves`` of a state whose legal actions are ``legal`` (the names depend on nothing
    else): a decision names every legal move, and a game has few sets of them (one per standing bid
    in Liar's dice)."""
    return tuple(game.action_name(a, spec) for a in legal)


class SpielAEC(VLMAgentsAEC):
    """Base of the OpenSpiel games behind PettingZoo's AEC API (see the subclasses).

    The agents are ``player_0`` .. ``player_{N-1}``, OpenSpiel's players in its order (player 0
    acts first); ``players`` picks N where the game has a ladder of them (``PLAYERS``). Chance
    is sampled from the env's RNG (``reset(seed=...)``); the rewards are OpenSpiel's returns at
    the end. ``state`` is OpenSpiel's state and ``legal_moves(agent)`` names
    ``state.legal_actions()`` in its order (the numeric interface reads both).

    ``oracle_action(agent)`` plays the level's equilibrium (``EQUILIBRIUM``) as the mixed
    strategy it is: a move sampled with the policy's probabilities at the agent's information
    state, from a generator spawned from the env's at each reset (so asking the oracle never
    changes the deal, and one seed gives the same oracle moves). Sampled, the equilibrium cannot
    be exploited; its most likely move alone could be.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["rgb_array", "ansi", "human"],
        "name": "rl4vlm_spiel_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    GAME: ClassVar[SpielGame]
    SPECS: ClassVar[tuple[str, ...]]  # the OpenSpiel game string of each level (two players)
    EQUILIBRIUM: ClassVar[tuple[str, ...]]  # the name of the policy the oracle plays, by level
    PLAYERS: ClassVar[tuple[int, ...]] = (2,)  # the numbers of players the game offers
    MAX_ACTIONS: ClassVar[int] = 16

    def __init__(
        self,
        *,
        level: int = 0,
        players: int = 2,
        obs_mode: str = "image+text",
        image_size: int = 256,
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 100,
        render_fps: int = 2,
    ) -> None:
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(self.SPECS):
            raise ValueError(f"level={level!r} is not valid: give an int in 0..{len(self.SPECS) - 1}")
        if isinstance(players, bool) or not isinstance(players, int) or players not in self.PLAYERS:
            raise ValueError(f"players={players!r} is not valid for {self.GAME.title}: give an int in {self.PLAYERS}")
        self.level, self.players, self.spec = level, players, self.game_spec(level, players)
        super().__init__(
            [f"player_{i}" for i in range(load(self.spec).num_players())],  # OpenSpiel's players, in order
            obs_mode=obs_mode, image_size=image_size, render_mode=render_mode, max_cycles=max_cycles, render_fps=render_fps,
            action_format=action_format, action_match=action_match, synonyms=self.GAME.synonyms, max_actions=self.MAX_ACTIONS,
        )
        self._frames: dict[Any, NDArray[np.uint8]] = {}
        self.reset()

    @classmethod
    def game_spec(cls, level: int, players: int) -> str:
        """The OpenSpiel game string of ``level`` with ``players`` players (``SPECS`` at two)."""
        if players != 2:
            raise NotImplementedError(f"{cls.__name__} has no game of {players} players")
        return cls.SPECS[level]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game from the env's RNG (``options`` are accepted and unused, as PettingZoo asks)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        # the oracle's own draws: spawned (the env's stream is not advanced, the deal is unchanged)
        self._oracle_rng = self.np_random.spawn(1)[0]
        self.history: tuple[int, ...] = ()
        self.state = load(self.spec).new_initial_state()
        self._new_game()
        self._chance()
        self.agent_selection = self.possible_agents[self.state.current_player()]
        self._update_vocabulary()
        self._render_human()

    def _chance(self) -> None:
        """Sample chance nodes (deals, public cards) with the env's RNG until a player moves."""
        while self.state.is_chance_node():
            actions, probs = zip(*self.state.chance_outcomes(), strict=True)
            action = sample(self.np_random, actions, probs)
            for agent in self.possible_agents:
                said = self.GAME.chance_feedback(self.state, action, self._seat(agent))
                if said:
                    self.feedback[agent] = f"{self.feedback[agent]} {said}".strip()
            self.state.apply_action(action)
            self.history += (action,)

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        if not self._may_move(agent):
            return ()
        return tuple(self.GAME.name_moves(self.state, self.spec))

    @property
    def title(self) -> str:
        return self.GAME.title

    def _text(self, agent: str) -> str:
        return self.GAME.text(self.GAME.view(self.state, self._seat(agent)))

    def _image(self, agent: str) -> NDArray[np.uint8]:
        view = self.GAME.view(self.state, self._seat(agent))  # the picture shows only what the seat knows
        return cached_frame(self._frames, view, lambda: self.GAME.image(view, (self.image_size, self.image_size)))

    def _mission(self, agent: str) -> str:
        return self.GAME.mission(self.spec)

    def _play(self, agent: str, move: str) -> None:
        action = self.state.legal_actions()[self.GAME.name_moves(self.state, self.spec).index(move)]
        player, n = self._seat(agent), len(self.possible_agents)
        self.state.apply_action(action)
        self.history += (action,)
        for other in self.agents:
            self.feedback[other] = f"{self.GAME.who(player, self._seat(other), n)} chose {move}."
        self._chance()
        if self.state.is_terminal():
            returns = self.state.returns()
            self.rewards = {a: float(returns[self._seat(a)]) for a in self.agents}
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[self.state.current_player()]

    def _oracle_move(self, agent: str) -> str:
        """A move of the level's equilibrium, sampled with its probabilities (see the class docstring)."""
        legal = self.state.legal_actions()
        policy = self.GAME.policy(self.EQUILIBRIUM[self.level], self.spec)
        move = sample(self._oracle_rng, legal, policy(self.state.information_state_string(), legal))
        return self.GAME.action_name(move, self.spec)

    def __str__(self) -> str:
        return type(self).__name__
