"""Any OpenSpiel game with a text observation, behind our contract and PettingZoo's APIs.

OpenSpiel (Lanctot et al. 2019, github.com/google-deepmind/open_spiel) has some hundred games; each
prints what a player knows as text (``observation_string`` or ``information_state_string``) and
names its moves (``action_to_string``). That is enough for a VLM agent: this module plays any such
game with our four observation keys (``image``, ``text``, ``mission``, ``actions``) and free-text
moves read by :class:`rl4vlm_gym.parsing.ActionParser`, the image drawn from the text
(:func:`~rl4vlm_gym.envs.games.openspiel_renderer.text_image`) where the game has no renderer.

- :class:`OpenSpielAEC`: a turn-based game (``SEQUENTIAL`` dynamics) behind PettingZoo's AEC API,
  any number of players, chance nodes sampled from the env's RNG.
- :class:`OpenSpielParallel`: a simultaneous-move game (``SIMULTANEOUS`` dynamics, Goofspiel)
  behind PettingZoo's Parallel API: every live agent acts at every step, each from its own legal
  moves (``state.legal_actions(player)``); :class:`SimultaneousAEC` is its AEC form
  (PettingZoo's ``parallel_to_aec``), which the match harness plays.
- :func:`openspiel_env` / :func:`openspiel_parallel_env`: either, from an OpenSpiel game string
  (``"breakthrough(rows=6,columns=6)"``) or one of :data:`TEXT_GAMES`.
- :class:`OpenSpielView`: one seat against uniformly random opponents behind ``VLMEnv`` (the
  single-agent ids ``rl4vlm/OpenSpiel-<Game>-v0``, registered for :data:`TEXT_GAMES`).

The AEC and Parallel envs expose ``state`` (the ``pyspiel.State``), ``possible_agents`` in
OpenSpiel's player order (``player_0`` is player 0) and ``legal_moves(agent)``, whose i-th name is
the i-th action of ``state.legal_actions(player)``: the numeric interface reads them.

Nothing here copies OpenSpiel's code: it calls ``pyspiel`` only (``load_game``, ``State``'s
``legal_actions``, ``apply_action(s)``, ``chance_outcomes``, ``observation_string``,
``returns``), as its Python API documents (openspiel.readthedocs.io, "API reference").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium.utils import seeding

from rl4vlm_gym.extras import require

require("games", "OpenSpiel's games")  # before importing it: an error naming the extra

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.games.aec import VLMAgentsAEC, VLMObservations, agent_spaces, cached_frame, check_arguments
from rl4vlm_gym.envs.games.decisions import CHANCE_REASON, TIE, best_actions, exact_expectimax
from rl4vlm_gym.envs.games.openspiel_renderer import text_image
from rl4vlm_gym.envs.games.spiel import load, sample
from rl4vlm_gym.parsing import ActionParser

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rl4vlm_gym.rendering import HumanWindow

__all__ = [
    "TEXT_GAMES",
    "DotsAndBoxes",
    "Goofspiel",
    "OpenSpielAEC",
    "OpenSpielParallel",
    "OpenSpielView",
    "Pig",
    "SimultaneousAEC",
    "TextGame",
    "TextLevel",
    "dots_and_boxes_env",
    "goofspiel_env",
    "openspiel_env",
    "openspiel_parallel_env",
    "oracle_move",
    "pig_env",
]

_CHANCE = -1  # pyspiel.PlayerId.CHANCE
_SIMULTANEOUS = -2  # pyspiel.PlayerId.SIMULTANEOUS
_PLAYER_TAG = re.compile(r"^\s*(?:\[P\d+\]\s*|P\d+(?=\())")  # "[P0]Bid: 3", "P1(h,0,0)": the mover's tag
MAX_MOVE_LENGTH = 128  # characters of a move's name in the observation space (OpenSpiel's are short)
ORACLE_NODES = 2000
"""States the oracle's search may visit per move by default (a count: the same move on every machine)."""


# What differs between games --------------------------------------------------------------------------


@dataclass(frozen=True)
class TextLevel:
    """A level: the OpenSpiel game string and what it changes, in words."""

    spec: str
    label: str


@dataclass(frozen=True)
class TextGame:
    """An OpenSpiel game as our envs show it; :func:`text_game` makes one for any game string.

    Attributes:
        title: the game's name for people.
        levels: its rungs, smallest first.
        goal: the mission's sentence on how to win.
        grammar: how a move is written, for the mission.
        view: ``"observation"`` (``observation_string``: what the player sees now) or
            ``"information_state"`` (``information_state_string``: everything it has seen).
        seat_names: what the game's own text calls each player (``"P0"``, ``"player 1"``), for
            the line telling an agent which one it is; by default ``player <i>``.
        rename: a move name as OpenSpiel writes it (less the mover's tag) -> as we show it.
        synonyms: lower-case aliases the lenient parser accepts.
        evaluate: ``(state, player) -> value in [-1, 1]`` of a position the oracle's search stops
            at before the end; ``None``: 0, no opinion.
        oracle_nodes: the states the oracle's search may visit per move.
        transpositions: ``str(state)`` and the player to move determine the rest of the game, so
            the oracle's search values each such position once.
        exact_moves: the decision facts (``OpenSpielView.decision``) search the whole rest of
            the game, exactly, from positions where the seat has at most this many legal moves
            (a bound on the search's size that is the same on every machine); 0: never. Only for
            games of perfect information with ``transpositions``.
    """

    title: str
    levels: tuple[TextLevel, ...]
    goal: str
    grammar: str
    view: str = "observation"
    seat_names: tuple[str, ...] = ()
    rename: Callable[[str], str] | None = None
    synonyms: tuple[tuple[str, str], ...] = ()
    evaluate: Callable[[Any, int], float] | None = field(default=None, compare=False)
    oracle_nodes: int = ORACLE_NODES
    transpositions: bool = False
    exact_moves: int = 0

    def seat_name(self, player: int) -> str:
        return self.seat_names[player] if player < len(self.seat_names) else f"player {player}"


def text_game(spec: str) -> TextGame:
    """A :class:`TextGame` for any OpenSpiel game string, in OpenSpiel's own words: one level; the
    text is the game's ``information_state_string`` in a game of imperfect information that
    prints one (all the player has seen: what OpenSpiel's policies read), else its
    ``observation_string``."""
    game = load(spec)
    kind = game.get_type()
    if not (kind.provides_observation_string or kind.provides_information_state_string):
        raise ValueError(f"the OpenSpiel game {spec!r} prints no observation or information state string; it has no text to show")
    return TextGame(
        title=kind.long_name,
        levels=(TextLevel(spec, str(game)),),
        goal="Get the highest return the rules pay",
        grammar="one of the legal moves listed, as written",
        view="information_state"
        if kind.provides_information_state_string
        and (kind.information.name != "PERFECT_INFORMATION" or not kind.provides_observation_string)
        else "observation",
    )


def _parameters(state: Any) -> dict[str, Any]:
    """The game's parameters, read once per game: the evaluations below run at every leaf of the
    oracle's searches. pyspiel gives a state's game back as the one Python object (unhashable, so
    kept by id, with the game held so that its id is not reused)."""
    game = state.get_game()
    kept = _PARAMETERS.get(id(game))
    if kept is None or kept[0] is not game:
        if len(_PARAMETERS) >= 64:
            _PARAMETERS.clear()
        kept = _PARAMETERS[id(game)] = (game, game.get_parameters())
    return kept[1]


_PARAMETERS: dict[int, tuple[Any, dict[str, Any]]] = {}
_POINTS = re.compile(r"Points: ([\d ]+)")


def _goofspiel_points(state: Any, player: int) -> float:
    """Points won so far, the player's minus the others' best, over the points still to win and won."""
    match = _POINTS.search(str(state))
    points = [int(p) for p in match.group(1).split()] if match else [0]
    total = sum(range(1, _parameters(state)["num_cards"] + 1))
    return (points[player] - max(p for i, p in enumerate(points) if i != player)) / total


def _pig_lead(state: Any, player: int) -> float:
    """Banked points (and the turn total of the player to move), the player's lead over the target."""
    scores = [int(s) for s in re.search(r"Scores: ([\d ]+),", str(state)).group(1).split()]  # type: ignore[union-attr]
    turn = int(re.search(r"Turn total: (\d+)", str(state)).group(1))  # type: ignore[union-attr]
    mover = state.current_player()
    if 0 <= mover < len(scores):
        scores[mover] += turn
    target = _parameters(state)["winscore"]
    return float(np.clip((scores[player] - max(s for i, s in enumerate(scores) if i != player)) / target, -1.0, 1.0))


def _boxes_lead(state: Any, player: int) -> float:
    """Boxes owned (drawn as the owner's number, 1 or 2), the player's lead over all boxes."""
    text = state.observation_string(0)
    params = _parameters(state)
    owned = [text.count(str(p + 1)) for p in range(2)]
    return (owned[player] - owned[1 - player]) / (params["num_rows"] * params["num_cols"])


GOOFSPIEL = TextGame(
    title="Goofspiel",
    levels=tuple(
        TextLevel(
            f"goofspiel(num_cards={n},points_order=random,returns_type=win_loss)",
            f"{n} cards each; {n} point cards, in random order",
        )
        for n in (4, 5, 6)
    ),
    goal=(
        "Each round a point card is turned up and every player bids one card of its hand at once; the highest bid wins the "
        "point card's value (a tie wins nothing) and bids are discarded. Win more points than your opponent"
    ),
    grammar="a card of your hand to bid, e.g. '3'",
    seat_names=("P0", "P1"),
    rename=lambda name: name.removeprefix("Bid: "),
    synonyms=(),
    evaluate=_goofspiel_points,
    oracle_nodes=6000,  # the whole game with 4 cards (5,304 states from the first bid, shallower searches included): exact at level 0
    transpositions=True,
    exact_moves=4,  # 4 cards in hand: at most 42 ms cold (5: 2.2 s)
)
DOTS_AND_BOXES = TextGame(
    title="Dots and Boxes",
    levels=tuple(TextLevel(f"dots_and_boxes(num_rows={r},num_cols={c})", f"{r}x{c} boxes") for r, c in ((2, 2), (2, 3), (3, 3))),
    goal=(
        "Players take turns drawing one line between two neighbouring dots; whoever closes a box owns it (its player's "
        "number, 1 or 2, is written in it) and draws again. Own more boxes than your opponent when every line is drawn"
    ),
    grammar="a line: (h,r,c) the horizontal line from dot row r, column c to the right; (v,r,c) the vertical line from it down",
    seat_names=("player 1", "player 2"),  # the numbers the board writes in owned boxes
    evaluate=_boxes_lead,
    oracle_nodes=1500,
    transpositions=True,  # the lines, the boxes' owners and the mover
    exact_moves=9,  # 9 lines left: 24 ms cold on 2x2 boxes, 180 ms on 2x3 (12 lines: 0.3 s, 1.1 s)
)
PIG = TextGame(
    title="Pig",
    levels=tuple(
        TextLevel(f"pig(winscore={w},diceoutcomes=6,players=2,horizon=400)", f"first to {w} points") for w in (10, 20, 30)
    ),
    goal=(
        "On your turn roll a die as often as you like: each roll adds to your turn total, but a 1 loses it and ends your "
        "turn; stop to bank the turn total. Be the first to reach the target score"
    ),
    grammar="'roll' or 'stop'",
    seat_names=("player 0", "player 1"),
    synonyms=(("hold", "stop"), ("bank", "stop")),
    evaluate=_pig_lead,
    oracle_nodes=300,  # a few rolls ahead: tens of decisions a game
    transpositions=True,  # the scores, the turn total and the mover (not the turn count of the horizon)
)
TEXT_GAMES: dict[str, TextGame] = {"goofspiel": GOOFSPIEL, "dots_and_boxes": DOTS_AND_BOXES, "pig": PIG}
"""The games registered as single-agent ids and in the match harness, by OpenSpiel name."""


def _resolve(game: str | TextGame) -> TextGame:
    if isinstance(game, TextGame):
        return game
    if not isinstance(game, str):
        raise ValueError(f"game={game!r} is not valid: give an OpenSpiel game string or a TextGame")
    return TEXT_GAMES.get(game) or text_game(game)


def move_names(game: TextGame, state: Any, player: int) -> list[str]:
    """The names of ``player``'s legal moves, in ``state.legal_actions(player)``'s order: OpenSpiel's
    (less the mover's tag, then ``game.rename``), or OpenSpiel's as they are where that would make
    two moves alike."""
    legal = state.legal_actions(player)
    raw = [state.action_to_string(player, a) for a in legal]
    names = [_PLAYER_TAG.sub("", name).strip() for name in raw]
    if game.rename is not None:
        names = [game.rename(name) for name in names]
    if len(set(names)) != len(names) or not all(names):
        return raw
    return names


def seat_text(game: TextGame, state: Any, player: int) -> str:
    """What ``player`` knows, in words: which player it is, the game's own string for it, and the
    result once the game is over."""
    kind = state.get_game().get_type()
    use_info = game.view == "information_state" or not kind.provides_observation_string
    body = state.information_state_string(player) if use_info else state.observation_string(player)
    lines = [f"You are {game.seat_name(player)}.", body.rstrip("\n")]
    if state.is_terminal():
        lines.append(f"Game over: {_result(state, player)}.")
    return "\n".join(lines)


def perfect_information(state: Any) -> bool:
    """Whether every player sees every move (then moves and chance outcomes are said to all)."""
    return state.get_game().get_type().information.name == "PERFECT_INFORMATION"


def chance_sentence(state: Any, action: int) -> str:
    """What every player is told of a chance outcome (before it is applied): OpenSpiel's name of
    it in games of perfect information (a die roll, a turned point card), else nothing."""
    return f"Chance: {state.action_to_string(_CHANCE, action)}." if perfect_information(state) else ""


def _result(state: Any, player: int) -> str:
    returns = state.returns()
    mine, others = returns[player], max(r for i, r in enumerate(returns) if i != player) if len(returns) > 1 else 0.0
    word = "you won" if mine > others else "you lost" if mine < others else "a draw"
    return f"{word} (your return {mine:g})"


def mission(game: TextGame, spec: str) -> str:
    """The rules in brief, the same for every seat and every episode of the level."""
    players = load(spec).num_players()
    who = "one player" if players == 1 else f"{players} players; {game.seat_name(0)} moves first"
    return f"Play {game.title} ({who}). {game.goal}. Write {game.grammar}."


# The oracle --------------------------------------------------------------------------------------------


class _OutOfNodes(Exception):
    pass


def oracle_move(
    state: Any,
    player: int,
    evaluate: Callable[[Any, int], float] | None = None,
    nodes: int = ORACLE_NODES,
    transpositions: bool = False,
) -> int:
    """``player``'s move maximising its expected return against uniformly random opponents (the
    single-agent views' opponents), chance by its probabilities: an expectimax searched deeper
    and deeper while the searches together visit at most ``nodes`` states. Exact when the rest of the game
    fits (Goofspiel with 4 cards, every game's end); else the deepest complete search, valuing
    the positions where it stopped with ``evaluate`` (0 without one). With ``transpositions``,
    positions of equal ``str(state)`` and mover are valued once. The first of equal moves in
    OpenSpiel's order.

    The move is a function of the game, the history and the settings, so it is remembered: the kit
    and the single-agent views meet the same positions again (every episode's first ones)."""
    legal = state.legal_actions(player)
    if len(legal) == 1:
        return int(legal[0])
    # A state is its game and its history (OpenSpiel replays one from the other); `evaluate` is a
    # module-level function, so its identity is stable.
    key = (str(state.get_game()), tuple(state.history()), player, evaluate, nodes, transpositions)
    move = _ORACLE_MOVES.get(key)
    if move is None:
        if len(_ORACLE_MOVES) >= _ORACLE_MOVES_KEPT:
            _ORACLE_MOVES.clear()
        move = _ORACLE_MOVES[key] = _search_move(state, player, legal, evaluate, nodes, transpositions)
    return move


_ORACLE_MOVES: dict[tuple[Any, ...], int] = {}
_ORACLE_MOVES_KEPT = 4096


def _search_move(
    state: Any, player: int, legal: list[int], evaluate: Callable[[Any, int], float] | None, nodes: int, transpositions: bool
) -> int:
    """:func:`oracle_move`'s search, uncached."""
    best, left = int(legal[0]), nodes
    for depth in range(1, 64):
        search = _Expectimax(player, evaluate, left, transpositions)  # the searches share the budget
        try:
            values = [search.move_value(state, action, depth) for action in legal]
        except _OutOfNodes:
            break
        best, left = int(legal[int(np.argmax(values))]), search.left
        if not search.cut:
            break  # the whole rest of the game was searched: deeper changes nothing
    return best


class _Expectimax:
    """One depth-limited search (see :func:`oracle_move`); ``depth`` counts decision nodes."""

    def __init__(self, player: int, evaluate: Callable[[Any, int], float] | None, nodes: int, transpositions: bool) -> None:
        self.player, self.evaluate, self.left, self.cut = player, evaluate, nodes, False
        self.seen: dict[tuple[str, int, int], float] | None = {} if transpositions else None

    def _visit(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _OutOfNodes

    def move_value(self, state: Any, action: int, depth: int) -> float:
        """The value of ``player`` playing ``action`` now (at a simultaneous node: against every
        joint move of the others, equally likely)."""
        if state.current_player() == _SIMULTANEOUS:
            return self._joint_mean(state, depth, fixed=action)
        child = state.child(action)
        self._visit()
        return self.value(child, depth - 1)

    def value(self, state: Any, depth: int) -> float:
        if self.seen is None or state.is_terminal():
            return self._value(state, depth)
        key = (str(state), state.current_player(), depth)
        if key not in self.seen:
            self.seen[key] = self._value(state, depth)
        return self.seen[key]

    def _value(self, state: Any, depth: int) -> float:
        if state.is_terminal():
            return float(state.returns()[self.player])
        if state.is_chance_node():
            total = 0.0
            for action, p in state.chance_outcomes():
                self._visit()
                total += p * self.value(state.child(action), depth)
            return total
        if depth <= 0:
            self.cut = True
            return float(self.evaluate(state, self.player)) if self.evaluate is not None else 0.0
        mover = state.current_player()
        if mover == _SIMULTANEOUS:
            return max(self._joint_mean(state, depth, fixed=a) for a in state.legal_actions(self.player))
        values = [self.move_value(state, a, depth) for a in state.legal_actions(mover)]
        return max(values) if mover == self.player else _mean(values)

    def _joint_mean(self, state: Any, depth: int, fixed: int) -> float:
        players = range(state.num_players())
        choices = [[fixed] if p == self.player else state.legal_actions(p) for p in players]
        values = []
        for joint in _product(choices):
            child = state.clone()
            child.apply_actions(list(joint))
            self._visit()
            values.append(self.value(child, depth - 1))
        return _mean(values)


def _mean(values: list[float]) -> float:
    """``np.mean(values)``, the same arithmetic (numpy's pairwise sum, one division) without the
    overhead of its wrapper, a third of the search's time on small lists."""
    return float(np.add.reduce(np.asarray(values)) / len(values))


def _product(choices: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    joints: list[tuple[int, ...]] = [()]
    for options in choices:
        joints = [j + (int(a),) for j in joints for a in (options or [0])]
    return joints


# The turn-based AEC env --------------------------------------------------------------------------------


def _check_level(level: Any, game: TextGame) -> int:
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level < len(game.levels):
        raise ValueError(f"level={level!r} is not valid for {game.title}: give an int in 0..{len(game.levels) - 1}")
    return int(level)


class _SpielAgents:
    """What the AEC and the Parallel env share: the game, its players' names, spaces, text and frames."""

    text_game: TextGame
    spec: str
    state: Any
    obs_mode: str
    image_size: int
    possible_agents: list[str]
    _frames: dict[Any, NDArray[np.uint8]]

    def _pick(self, game: str | TextGame, level: int) -> list[str]:
        """Resolve ``game`` at ``level`` (``ValueError`` if unknown); the players' names, OpenSpiel's order."""
        self.text_game = _resolve(game)
        self.level = _check_level(level, self.text_game)
        self.spec = self.text_game.levels[self.level].spec
        self._frames = {}
        return [f"player_{p}" for p in range(load(self.spec).num_players())]

    @property
    def _max_actions(self) -> int:
        """The most legal moves an agent may have (its action space's bound; names have MAX_MOVE_LENGTH)."""
        return max(load(self.spec).num_distinct_actions(), 1)

    @property
    def title(self) -> str:
        return self.text_game.title

    def _player(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _text(self, agent: str) -> str:
        return seat_text(self.text_game, self.state, self._player(agent))

    def _image(self, agent: str) -> NDArray[np.uint8]:
        text = self._text(agent)  # the picture shows the same words
        return cached_frame(self._frames, (text, self.image_size), lambda: text_image(text, (self.image_size, self.image_size)))

    def _mission(self, agent: str) -> str:
        return mission(self.text_game, self.spec)

    def _names(self, player: int) -> list[str]:
        return move_names(self.text_game, self.state, player)

    def _action_name(self, player: int, action: int) -> str:
        """What the others are told ``player`` played (before it is applied)."""
        return self._names(player)[list(self.state.legal_actions(player)).index(action)]


class OpenSpielAEC(_SpielAgents, VLMAgentsAEC):
    """A turn-based OpenSpiel game with VLM observations behind PettingZoo's AEC API.

    ## Description
    ``pyspiel`` plays the rules and pays the returns of any OpenSpiel game with ``SEQUENTIAL``
    dynamics and a text observation (``game``: an OpenSpiel game string such as
    ``"breakthrough(rows=6,columns=6)"``, or a name of :data:`TEXT_GAMES` with its ``level``).
    Chance nodes (dice, deals) are sampled from the env's RNG, seeded by ``reset(seed)``. Agents
    are ``player_0`` .. ``player_<n-1>``, OpenSpiel's players in order.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: ``text`` the agent's
    last feedback, which player it is and OpenSpiel's ``observation_string`` for it (the
    game's ``information_state_string`` where it has no observation string, or where the
    ``TextGame`` asks for it), and the result once the game is over; ``image`` the same
    words drawn in a grid of cells (:func:`~rl4vlm_gym.envs.games.openspiel_renderer.text_image`);
    ``mission`` the rules in brief; ``actions`` its legal moves (empty unless it is its turn).
    Other players' moves are named in the feedback only in games of perfect information.

    ## Action Space
    Free text (``Unicode``), parsed against the legal moves, OpenSpiel's ``action_to_string``
    less the mover's tag (``[P0]``): ``legal_moves(agent)[i]`` is ``state.legal_actions()[i]``.
    An invalid move changes nothing, keeps the turn and puts the parser's reason in
    ``infos[agent]["action"]`` and in the agent's text.

    ## Rewards
    OpenSpiel's returns, paid when the game ends.

    ## Arguments
    ``game``, ``level``; ``obs_mode``, ``image_size``, ``action_format``, ``action_match`` as in
    ``VLMEnv``; ``render_mode`` (``rgb_array``, ``ansi``, ``human``); ``max_cycles``:
    PettingZoo's cycles (one step of every agent, invalid ones included, as
    :class:`~rl4vlm_gym.envs.games.aec.VLMAgentsAEC` counts them) after which every agent is
    truncated; ``render_fps``.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["rgb_array", "ansi", "human"],
        "name": "rl4vlm_openspiel_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        game: str | TextGame = "dots_and_boxes",
        *,
        level: int = 0,
        obs_mode: str = "image+text",
        image_size: int = 256,
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 100,
        render_fps: int = 2,
    ) -> None:
        agents = self._pick(game, level)
        dynamics = load(self.spec).get_type().dynamics.name
        if dynamics != "SEQUENTIAL":
            raise ValueError(f"{self.spec!r} has {dynamics} dynamics: play it with OpenSpielParallel (openspiel_parallel_env)")
        super().__init__(
            agents, obs_mode=obs_mode, image_size=image_size, render_mode=render_mode, max_cycles=max_cycles, render_fps=render_fps,
            action_format=action_format, action_match=action_match, synonyms=self.text_game.synonyms,
            max_actions=self._max_actions, max_length=MAX_MOVE_LENGTH,
        )
        self._perfect = load(self.spec).get_type().information.name == "PERFECT_INFORMATION"
        self.reset()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; its chance outcomes come from the env's RNG (``options`` are accepted and
        unused, as PettingZoo asks)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.state = load(self.spec).new_initial_state()
        self._new_game()
        self._chance()
        self._pass_turn()
        self._update_vocabulary()
        self._render_human()

    def _chance(self) -> None:
        while self.state.is_chance_node():
            actions, probs = zip(*self.state.chance_outcomes(), strict=True)
            action = sample(self.np_random, actions, probs)
            said = chance_sentence(self.state, action)
            for agent in self.agents if said else ():
                self.feedback[agent] = f"{self.feedback[agent]} {said}".strip()
            self.state.apply_action(action)

    def _pass_turn(self) -> None:
        if self.state.is_terminal():
            returns = self.state.returns()
            self.rewards = {a: float(returns[self._player(a)]) for a in self.agents}
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[self.state.current_player()]

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        if not self._may_move(agent):
            return ()
        return tuple(self._names(self._player(agent)))

    def _play(self, agent: str, move: str) -> None:
        player = self._player(agent)
        action = self.state.legal_actions(player)[self._names(player).index(move)]
        self.state.apply_action(action)
        for other in self.agents:
            told = move if self._perfect else "a move"
            self.feedback[other] = f"You chose {move}." if other == agent else f"{agent} chose {told}."
        self._chance()
        self._pass_turn()

    def _oracle_move(self, agent: str) -> str:
        """The expectimax move against uniformly random opponents (:func:`oracle_move`)."""
        player = self._player(agent)
        action = oracle_move(
            self.state, player, self.text_game.evaluate, self.text_game.oracle_nodes, self.text_game.transpositions
        )
        return self._names(player)[list(self.state.legal_actions(player)).index(action)]

    def __str__(self) -> str:
        return f"OpenSpielAEC({self.spec})"


# The simultaneous-move Parallel env ----------------------------------------------------------------------


class OpenSpielParallel(_SpielAgents, VLMObservations, ParallelEnv):
    """A simultaneous-move OpenSpiel game (Goofspiel) with VLM observations behind PettingZoo's Parallel API.

    ## Description
    ``pyspiel`` plays the rules of a game with ``SIMULTANEOUS`` dynamics: at each step every live
    agent writes a move at once, from its own legal moves (``state.legal_actions(player)``), and
    the joint move is applied (``apply_actions``); at a node where one player moves alone, only
    its move is read. Chance nodes (Goofspiel's point cards) are sampled from the env's RNG.
    :func:`openspiel_env` returns its AEC form (:class:`SimultaneousAEC`).

    ## Observation
    Per agent, ``{"image", "text", "mission", "actions"}`` as in :class:`OpenSpielAEC`; after a
    joint move each agent is told what every player played.

    ## Action Space
    Free text per agent, parsed against that agent's legal moves. The joint move is applied only
    when every agent that must move wrote a legal one: otherwise nothing happens, each agent
    that wrote none gets the parser's reason in ``infos[agent]["action"]`` and in its text, and
    every agent moves again (an agent left out of ``actions`` wrote nothing).

    ## Rewards
    OpenSpiel's returns, paid when the game ends.

    ## Arguments
    As :class:`OpenSpielAEC`; ``max_cycles`` counts steps of the Parallel API (each a cycle).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["rgb_array", "ansi", "human"],
        "name": "rl4vlm_openspiel_parallel_v0",
        "is_parallelizable": True,
        "render_fps": 2,
    }
    _window: HumanWindow | None = None

    def __init__(
        self,
        game: str | TextGame = "goofspiel",
        *,
        level: int = 0,
        obs_mode: str = "image+text",
        image_size: int = 256,
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 100,
        render_fps: int = 2,
    ) -> None:
        check_arguments(
            self.metadata, obs_mode=obs_mode, image_size=image_size, min_side=64, render_mode=render_mode, max_cycles=max_cycles
        )
        self.possible_agents = self._pick(game, level)
        self.observation_spaces, self.action_spaces = agent_spaces(self.possible_agents, image_size, self._max_actions, MAX_MOVE_LENGTH)
        self.metadata = {**self.metadata, "render_fps": render_fps}
        self.obs_mode, self.image_size, self.render_mode, self.max_cycles = obs_mode, image_size, render_mode, max_cycles
        self.parser = ActionParser(format=action_format, match=action_match, synonyms=dict(self.text_game.synonyms))  # type: ignore[arg-type]
        self.np_random, _ = seeding.np_random(None)
        self.reset()

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]  # the same object every call (PettingZoo's tests)

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new game from the env's RNG; returns every agent's observation and info."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.state = load(self.spec).new_initial_state()
        self.agents = list(self.possible_agents)
        self.feedback = dict.fromkeys(self.agents, "")
        self.num_cycles = 0
        self._chance()
        self._update_vocabulary()
        self._render_human()
        return {a: self.observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def _chance(self) -> None:
        while self.state.is_chance_node():
            actions, probs = zip(*self.state.chance_outcomes(), strict=True)
            action = sample(self.np_random, actions, probs)
            said = chance_sentence(self.state, action)
            for agent in self.agents if said else ():
                self.feedback[agent] = f"{self.feedback[agent]} {said}".strip()
            self.state.apply_action(action)

    def _movers(self) -> list[int]:
        if self.state.is_terminal():
            return []
        mover = self.state.current_player()
        return list(range(len(self.possible_agents))) if mover == _SIMULTANEOUS else [mover]

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        player = self._player(agent)
        if agent not in self.agents or player not in self._movers():
            return ()
        return tuple(self._names(player))

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """Every live agent's move at once (see the class docstring)."""
        live = list(self.agents)
        rewards = dict.fromkeys(live, 0.0)
        infos: dict[str, dict[str, Any]] = {a: {} for a in live}
        movers = self._movers()
        parsed: dict[int, str] = {}
        for agent in live:
            player = self._player(agent)
            if player not in movers:
                continue
            raw = actions.get(agent) if isinstance(actions, dict) else None
            result = self.parser.parse(raw if isinstance(raw, str) else "" if raw is None else str(raw), self.legal_moves(agent))
            infos[agent] = {"action": result.as_info()}
            if result.parsed is not None:
                parsed[player] = result.parsed
            else:
                self.feedback[agent] = f"Invalid action: {result.error}. Nothing happened."
        self.num_cycles += 1
        if movers and len(parsed) == len(movers):
            self._apply(parsed)
        elif movers:
            stalled = ", ".join(self.possible_agents[p] for p in movers if p not in parsed)
            for p in parsed:
                self.feedback[self.possible_agents[p]] = (
                    f"Your move {parsed[p]} was not played: {stalled} wrote no legal move. Nothing happened."
                )
        terminated = self.state.is_terminal()
        if terminated:
            returns = self.state.returns()
            rewards = {a: float(returns[self._player(a)]) for a in live}
        truncated = not terminated and self.num_cycles >= self.max_cycles
        terminations = dict.fromkeys(live, terminated)
        truncations = dict.fromkeys(live, truncated)
        if terminated or truncated:
            self.agents = []
        self._update_vocabulary()
        observations = {a: self.observe(a) for a in live}
        self._render_human()
        return observations, rewards, terminations, truncations, infos

    def _apply(self, parsed: dict[int, str]) -> None:
        moves = {p: self.state.legal_actions(p)[self._names(p).index(name)] for p, name in parsed.items()}
        said = "; ".join(f"{self.possible_agents[p]} played {name}" for p, name in sorted(parsed.items()))
        told = f" Moves: {said}." if perfect_information(self.state) else ""  # else each sees its own only
        for agent in self.agents:
            mine = parsed.get(self._player(agent))
            self.feedback[agent] = (f"You played {mine}." if mine is not None else "") + told
        if self.state.current_player() == _SIMULTANEOUS:
            self.state.apply_actions([moves[p] for p in range(len(self.possible_agents))])
        else:
            (move,) = moves.values()
            self.state.apply_action(move)
        self._chance()

    def oracle_action(self, agent: str) -> str:
        """The expectimax move of ``agent`` against uniformly random opponents (:func:`oracle_move`)."""
        player = self._player(agent)
        if not self.legal_moves(agent):
            raise ValueError(f"{agent} has no move now (the game is over)")
        action = oracle_move(
            self.state, player, self.text_game.evaluate, self.text_game.oracle_nodes, self.text_game.transpositions
        )
        return self._names(player)[list(self.state.legal_actions(player)).index(action)]

    def render(self) -> NDArray[np.uint8] | str | None:
        if self.render_mode is None:
            return None
        agent = self.possible_agents[0]
        if self.render_mode == "ansi":
            return self._text(agent) + "\n"
        if self.render_mode == "human":
            self._render_human()
            return None
        return self._image(agent)

    def _render_human(self) -> None:
        if self.render_mode != "human":
            return
        if self._window is None:
            from rl4vlm_gym.rendering import HumanWindow

            self._window = HumanWindow(self.title, self.metadata["render_fps"])
        self._window.show(self._image(self.possible_agents[0]))

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def __str__(self) -> str:
        return f"OpenSpielParallel({self.spec})"


class SimultaneousAEC(parallel_to_aec_wrapper):
    """The AEC form of :class:`OpenSpielParallel` (PettingZoo's ``parallel_to_aec``): agents write
    their moves in turn, unseen by the others, and the joint move is applied after the last.
    ``infos[agent]["action"]`` is filled as soon as the agent writes (the match harness reads it
    then); attributes of the Parallel env (``state``, ``legal_moves``, ``oracle_action``,
    ``parser``, ``obs_mode``) are read through."""

    def __init__(self, parallel_env: OpenSpielParallel) -> None:
        super().__init__(parallel_env)
        self.reset()  # as every AEC env of the family: usable (``agents``, ``infos``) once made

    @property
    def state(self) -> Any:
        """The ``pyspiel.State`` being played (as every OpenSpiel env of the family: the numeric
        interface reads it), not PettingZoo's global-state method."""
        return self.env.state

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        live = not (self.terminations.get(agent, True) or self.truncations.get(agent, True))
        if live and self.env.legal_moves(agent):
            result = self.env.parser.parse(action if isinstance(action, str) else str(action), self.env.legal_moves(agent))
            self.infos[agent] = {"action": result.as_info()}
        super().step(action)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("env",):
            raise AttributeError(name)
        return getattr(self.env, name)

    def __str__(self) -> str:
        return str(self.env)


# Factories -----------------------------------------------------------------------------------------


def openspiel_parallel_env(game: str | TextGame = "goofspiel", **kwargs: Any) -> OpenSpielParallel:
    """The Parallel API env of a simultaneous-move OpenSpiel game (see :class:`OpenSpielParallel`)."""
    return OpenSpielParallel(game, **kwargs)


def openspiel_env(game: str | TextGame = "dots_and_boxes", **kwargs: Any) -> OpenSpielAEC | SimultaneousAEC:
    """The AEC env of any OpenSpiel game with a text observation: :class:`OpenSpielAEC` for a
    turn-based game, :class:`SimultaneousAEC` around :class:`OpenSpielParallel` for a
    simultaneous-move one."""
    text = _resolve(game)
    level = kwargs.get("level", 0)
    spec = text.levels[_check_level(level, text)].spec
    if load(spec).get_type().dynamics.name == "SIMULTANEOUS":
        return SimultaneousAEC(OpenSpielParallel(text, **kwargs))
    return OpenSpielAEC(text, **kwargs)


def goofspiel_env(**kwargs: Any) -> SimultaneousAEC:
    """Goofspiel (OpenSpiel's ``goofspiel``; ``level`` 0..2: 4, 5 or 6 cards), AEC form."""
    return openspiel_env("goofspiel", **{"max_cycles": 20, **kwargs})


def dots_and_boxes_env(**kwargs: Any) -> OpenSpielAEC:
    """Dots and Boxes (OpenSpiel's ``dots_and_boxes``; ``level`` 0..2: 2x2, 2x3, 3x3 boxes)."""
    return openspiel_env("dots_and_boxes", **{"max_cycles": 60, **kwargs})


def pig_env(**kwargs: Any) -> OpenSpielAEC:
    """Pig (OpenSpiel's ``pig``; ``level`` 0..2: first to 10, 20 or 30 points)."""
    return openspiel_env("pig", **{"max_cycles": 200, **kwargs})


# The single-agent view -------------------------------------------------------------------------------------


class OpenSpielView(VLMEnv):
    """An OpenSpiel game against uniformly random opponents (see the subclasses' docstrings)."""

    GAME: ClassVar[TextGame]
    CHANCE: ClassVar[bool] = True  # the opponents' moves (and the game's chance) are drawn as it goes
    REWARDS: ClassVar = {
        "native": {"move": 0.0, "won": 1.0, "lost": -1.0, "draw": 0.0, "invalid": 0.0},
        "sparse": {"move": 0.0, "won": 1.0, "lost": 0.0, "draw": 0.0, "invalid": 0.0},
        "penalty": {"move": 0.0, "won": 1.0, "lost": -1.0, "draw": 0.0, "invalid": -0.1},
    }
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 64
    MAX_ACTION_LENGTH: ClassVar[int] = 64

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "GAME" in vars(cls):
            cls.LEVELS = cls.GAME.levels
            cls.SYNONYMS = dict(cls.GAME.synonyms)

    @property
    def spiel_spec(self) -> str:
        """The OpenSpiel game string of the level."""
        return self.LEVELS[self.level].spec

    def _new_episode(self, config: TextLevel) -> None:
        game = load(config.spec)
        while True:  # a game the opponents end before our first move (Pig's lucky roller) is drawn again
            self.seat = int(self.np_random.integers(game.num_players()))  # OpenSpiel's player id
            self.history: tuple[tuple[int, ...], ...] = ()  # every node's action(s), chance included
            self.state = game.new_initial_state()
            self._advance()  # chance, and the opponents when they move first: the view shows it
            if not self.state.is_terminal():
                return

    def _record(self, actions: Sequence[int]) -> None:
        if len(actions) == 1 and self.state.current_player() != _SIMULTANEOUS:
            self.state.apply_action(int(actions[0]))
        else:
            self.state.apply_actions([int(a) for a in actions])
        self.history += (tuple(int(a) for a in actions),)

    def _uniform(self, player: int) -> int:
        legal = self.state.legal_actions(player)
        return int(legal[int(self.np_random.integers(len(legal)))])

    def _advance(self) -> str:
        """Play chance and the opponents until it is our move or the game is over."""
        said = []
        while not self.state.is_terminal():
            mover = self.state.current_player()
            if self.state.is_chance_node():
                actions, probs = zip(*self.state.chance_outcomes(), strict=True)
                action = sample(self.np_random, actions, probs)
                said.append(chance_sentence(self.state, action))
                self._record([action])
            elif mover in (self.seat, _SIMULTANEOUS):
                break
            else:
                action = self._uniform(mover)
                told = self._name(mover, action) if perfect_information(self.state) else "a move"
                said.append(f"{self.GAME.seat_name(mover).capitalize()} chose {told}.")
                self._record([action])
        return " ".join(x for x in said if x)

    def _name(self, player: int, action: int) -> str:
        return move_names(self.GAME, self.state, player)[list(self.state.legal_actions(player)).index(action)]

    def _actions(self) -> tuple[str, ...]:
        if self.state.is_terminal():
            return ()
        return tuple(move_names(self.GAME, self.state, self.seat))

    def _apply(self, action: str) -> StepOutcome:
        move = self.state.legal_actions(self.seat)[move_names(self.GAME, self.state, self.seat).index(action)]
        feedback = f"You chose {action}."
        if self.state.current_player() == _SIMULTANEOUS:
            players = range(self.state.num_players())
            joint = [move if p == self.seat else self._uniform(p) for p in players]
            if perfect_information(self.state):
                played = "; ".join(
                    f"{self.GAME.seat_name(p)} {self._name(p, a)}" for p, a in zip(players, joint, strict=True) if p != self.seat
                )
                feedback += f" Played: {played}."
            self._record(joint)
        else:
            self._record([move])
        said = self._advance()
        feedback = f"{feedback} {said}".strip()
        if self.state.is_terminal():
            event = self._outcome()
            returns = self.state.returns()
            scale = abs(returns[self.seat]) / load(self.spiel_spec).max_utility() if returns[self.seat] else 1.0
            return StepOutcome(
                event, terminated=True, scale=scale, feedback=f"{feedback} Game over: {_result(self.state, self.seat)}."
            )
        return StepOutcome("move", feedback=feedback)

    def _outcome(self) -> str:
        returns = self.state.returns()
        best_other = max(r for i, r in enumerate(returns) if i != self.seat)
        return "won" if returns[self.seat] > best_other else "lost" if returns[self.seat] < best_other else "draw"

    def _describe(self) -> str:
        return seat_text(self.GAME, self.state, self.seat)

    def _mission(self) -> str:
        return mission(self.GAME, self.spiel_spec)

    def _render(self) -> NDArray[np.uint8]:
        return text_image(self._describe(), self.image_size)

    def _frame_key(self) -> Any:
        return (self._describe(), self.image_size)  # the picture is the text

    def _state_key(self) -> str:
        # what our seat knows (its OpenSpiel string), never more: GiGPO groups steps by it
        return f"{self.level}:{self._describe()}"

    @property
    def score(self) -> float | None:
        """1 win, 0.5 draw, 0 loss once the game is over (``info["score"]``); ``None`` while it is on."""
        return {"won": 1.0, "draw": 0.5, "lost": 0.0}[self._outcome()] if self.state.is_terminal() else None

    def _success(self) -> bool:
        return self.score == 1.0

    def _progress(self) -> float:
        """The score at the end (a draw is half a win), 0 before: monotone in the score, as success."""
        return self.score or 0.0

    def _info(self, result: Any) -> dict[str, Any]:
        info = super()._info(result)
        if self.score is not None:
            info["score"] = self.score
        return info

    def _optimal_steps(self) -> int | None:
        return None  # the opponents' moves and chance are drawn as the game goes (CHANCE)

    def _decision(self) -> Decision:
        """Each legal move's expected return against the uniformly random opponent, on the reward
        variant's scale, where the rest of the game is small enough to search exactly
        (``TextGame.exact_moves``; the values of positions are kept across calls); else no
        optimal actions, and why. No steps to go: the opponent's moves and chance are drawn."""
        legal = self.state.legal_actions(self.seat)
        features: dict[str, int | str] = {"legal_moves": len(legal)}
        values = self._exact_values(self.reward_variant)
        if values is None:
            why = "" if self.GAME.exact_moves else " (never, for this game)"
            return Decision(None, None, reason=f"no exact solver here: the rest of the game is searched exactly only from positions "
                            f"with at most {self.GAME.exact_moves} legal moves{why}", features=features)
        names = move_names(self.GAME, self.state, self.seat)
        by_name = {names[i]: values[a] for i, a in enumerate(legal)}
        return Decision(best_actions(by_name, names), None, values=by_name, reason=CHANCE_REASON, features=features)

    def _exact_values(self, variant: str) -> dict[int, float] | None:
        """Each legal move's exact expected reward under the reward ``variant`` (OpenSpiel's
        action ids), or ``None`` where the rest of the game is too large to search (see
        :meth:`_decision`)."""
        if len(self.state.legal_actions(self.seat)) > self.GAME.exact_moves:
            return None
        table = self.REWARDS[variant]
        key = (self.spiel_spec, self.seat, tuple(sorted(table.items())))
        memo = _POSITION_VALUES.setdefault(key, {})
        if len(memo) >= _POSITION_VALUES_KEPT:
            memo.clear()
            _MOVE_VALUES.pop(key, None)
        moves = _MOVE_VALUES.setdefault(key, {})
        return exact_expectimax(self.state, self.seat, lambda end: self._reward_at_end(end, table), memo, moves)

    def _reward_at_end(self, state: Any, table: Mapping[str, float]) -> float:
        """The reward the env pays at the terminal ``state`` (as ``_apply`` does), ``table`` its events' rewards."""
        returns = state.returns()
        best_other = max(r for i, r in enumerate(returns) if i != self.seat)
        event = "won" if returns[self.seat] > best_other else "lost" if returns[self.seat] < best_other else "draw"
        scale = abs(returns[self.seat]) / load(self.spiel_spec).max_utility() if returns[self.seat] else 1.0
        return float(table[event]) * scale

    def oracle_action(self) -> str:
        """The expectimax move against the uniformly random opponents (:func:`oracle_move`), unless
        the exact values of the native return (where the rest of the game is searched whole, as
        for :meth:`decision`) show it is not a best one: then the first best."""
        if self.state.is_terminal():
            return "pass"  # the game is over: any move is refused
        move = oracle_move(self.state, self.seat, self.GAME.evaluate, self.GAME.oracle_nodes, self.GAME.transpositions)
        exact = self._exact_values("native")
        if exact is not None and exact[move] < max(exact.values()) - TIE:
            move = next(a for a, v in exact.items() if v >= max(exact.values()) - TIE)  # OpenSpiel's order
        return self._name(self.seat, move)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["state"] = None  # OpenSpiel states are rebuilt from the moves
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "history" in state:
            self.state = load(self.spiel_spec).new_initial_state()
            for actions in self.history:
                if len(actions) == 1 and self.state.current_player() != _SIMULTANEOUS:
                    self.state.apply_action(actions[0])
                else:
                    self.state.apply_actions(list(actions))


_POSITION_VALUES: dict[tuple[Any, ...], dict[tuple[str, int], float]] = {}
"""The single-agent views' exact position values, by (game string, seat, reward table)."""
_POSITION_VALUES_KEPT = 200_000  # per game, seat and variant: some 40 MB at most (a 3x3 Dots and Boxes position is 98 characters)
_MOVE_VALUES: dict[tuple[Any, ...], dict[tuple[str, int], dict[int, float]]] = {}
"""The same views' move values of the positions where their seat moves, by the same key and then the position."""


_VIEW_DOC = """{title} against a uniformly random opponent, on OpenSpiel's ``{name}`` (:mod:`~rl4vlm_gym.envs.games.openspiel_adapter`).

    ## Description
    {rules}. ``pyspiel`` plays the rules and pays the returns; the seed draws your seat (OpenSpiel's
    player 0 or 1), every chance outcome{chance} and every move of the opponent, who plays a
    uniformly random legal move, all from the env's RNG (a game the opponent ends before your
    first move is drawn again). {moves} The oracle maximises the
    expected return against that opponent: an expectimax searched as deep as {nodes} states allow
    ({exact}), valuing the positions where it stops by {evaluate}. Winning is a game of chance,
    so ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: {decisions}

    ## Observation
    - ``image``: the text below drawn in a grid of cells (the game has no renderer of its own).
    - ``text``: the step's feedback (your move, the opponent's reply), then which player you are
      and OpenSpiel's ``observation_string`` for your seat, and the result once the game is over;
      in ``image`` mode only the feedback.
    - ``mission``: the rules in brief (not your seat: the text tells it).
    - ``actions``: your legal moves, {grammar}.

    ## Actions
    One of ``actions``; anything else is invalid (nothing happens, the reason is reported).

    ## Rewards
    ``native``: OpenSpiel's return, +1 for a win, -1 for a loss, 0 for a draw, paid at the end;
    ``sparse``: 1 for a win only; ``penalty``: ``native`` with -0.1 per invalid action.
    At the end of the game ``info["score"]`` is 1 for a win, 0.5 for a draw, 0 for a loss;
    ``success`` is a win (a score of 1) and ``progress`` the score (0 while the game is on).

    ## Levels
    {levels}.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """


def _view_doc(
    game: TextGame, name: str, *, rules: str, chance: str, moves: str, exact: str, nodes: int, evaluate: str, decisions: str
) -> str:
    levels = "; ".join(f"{i}: {level.label}" for i, level in enumerate(game.levels))
    grammar = game.grammar
    return _VIEW_DOC.format(
        title=game.title,
        name=name,
        rules=rules,
        chance=chance,
        moves=moves,
        nodes=f"{nodes:,}",
        exact=exact,
        evaluate=evaluate,
        decisions=decisions,
        grammar=grammar,
        levels=levels,
    )


class Goofspiel(OpenSpielView):
    GAME: ClassVar[TextGame] = GOOFSPIEL
    __doc__ = _view_doc(
        GOOFSPIEL,
        "goofspiel",
        rules=f"{GOOFSPIEL.goal}",
        chance=" (the order of the point cards)",
        moves="Both bid at once: your step is your bid, and the opponent's bid is drawn with it. With one card left the "
        "last round plays itself.",
        exact="exact with 4 cards",
        decisions="exact where you have at most 4 legal moves (4 cards in hand): ``values`` are each move's "
        "expected return against the random opponent on the reward variant's scale, the whole rest of the game searched (the "
        "positions' values are kept), ``optimal_actions`` the best of them; before that none, with the reason. ``steps_to_go`` "
        "is -1 (chance); feature ``legal_moves``. With ``sparse``, which pays wins only, the best moves can differ from the "
        "oracle's, which maximises the native return.",
        nodes=GOOFSPIEL.oracle_nodes,
        evaluate="the points won so far",
    )


class DotsAndBoxes(OpenSpielView):
    GAME: ClassVar[TextGame] = DOTS_AND_BOXES
    __doc__ = _view_doc(
        DOTS_AND_BOXES,
        "dots_and_boxes",
        rules=f"{DOTS_AND_BOXES.goal}",
        chance="",
        moves="After you close a box you move again; the opponent's moves until your turn are played within your step.",
        exact="exact near the end of every game",
        decisions="exact where you have at most 9 legal moves (9 lines left): ``values`` are each move's "
        "expected return against the random opponent on the reward variant's scale, the whole rest of the game searched (the "
        "positions' values are kept), ``optimal_actions`` the best of them; before that none, with the reason. ``steps_to_go`` "
        "is -1 (chance); feature ``legal_moves``. There the oracle plays its search's move if it is a best one for the native "
        "return, else the first best (its search, cut at its budget, can miss the best); with ``sparse``, which pays wins only, "
        "the best moves can differ from the oracle's.",
        nodes=DOTS_AND_BOXES.oracle_nodes,
        evaluate="the boxes owned",
    )


class Pig(OpenSpielView):
    GAME: ClassVar[TextGame] = PIG
    __doc__ = _view_doc(
        PIG,
        "pig",
        rules=f"{PIG.goal}",
        chance=" (the die)",
        moves="The opponent's whole turn is played within your step.",
        exact="a few rolls ahead",
        decisions="none: the game's value needs a solution of every score and turn total (value iteration), which is not "
        "shipped, so ``optimal_actions`` and ``steps_to_go`` are None/-1 with the reason; feature ``legal_moves``.",
        nodes=PIG.oracle_nodes,
        evaluate="the lead in banked points and turn total",
    )
