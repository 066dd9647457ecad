"""The games family's entries in the match harness: each AEC game, its built-in players and, for
the OpenSpiel games (Kuhn, Leduc, Liar's dice), how OpenSpiel states look to an agent (``rl4vlm-gym match``,
:mod:`rl4vlm_gym.harness.matches`).

``register`` is this family's ``rl4vlm_gym.games`` entry point: the game registry
(:mod:`rl4vlm_gym.games`, in the core) calls it on its first look-up, when a match needs it, never
on ``import rl4vlm_gym``. A new game is one more :class:`~rl4vlm_gym.games.GameSpec` in ``GAMES``;
the harness itself needs no change, and this family imports no harness.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl4vlm_gym.games import GameSpec, register_game

_HERE = "rl4vlm_gym.envs.games.arena"

GAMES = (
    GameSpec(
        "tictactoe",
        "rl4vlm_gym.envs.games.aec:tictactoe_env",
        players={"heuristic": f"{_HERE}:heuristic", "perfect": f"{_HERE}:perfect"},
        summary="Tic-Tac-Toe (PettingZoo's tictactoe_v3); built-in players: heuristic, perfect (minimax).",
    ),
    GameSpec(
        "connect_four",
        "rl4vlm_gym.envs.games.aec:connect_four_env",
        players={"heuristic": f"{_HERE}:heuristic", "search": f"{_HERE}:search"},
        summary="Connect Four (PettingZoo's connect_four_v3); built-in players: heuristic, search (alpha-beta, 3 plies).",
    ),
    GameSpec(
        "kuhn_poker",
        "rl4vlm_gym.envs.games.kuhn_aec:kuhn_poker_env",
        players={"cfr": f"{_HERE}:kuhn_cfr", "always-raise": f"{_HERE}:kuhn_always_raise", "br": f"{_HERE}:kuhn_br"},
        spiel_game="kuhn_poker",
        spiel_observation=f"{_HERE}:kuhn_observation",
        payoff="chips",
        folded=f"{_HERE}:kuhn_folded",
        aivat="cfr",
        summary="Kuhn poker (OpenSpiel's kuhn_poker), one hand per game, scored in chips; built-in players: cfr (the "
        "equilibrium), always-raise, br (the exact best response to random).",
    ),
    GameSpec(
        "leduc_poker",
        "rl4vlm_gym.envs.games.leduc:leduc_env",
        players={"cfr": f"{_HERE}:leduc_cfr", "always-raise": f"{_HERE}:leduc_always_raise", "br": f"{_HERE}:leduc_br"},
        spiel_game="leduc_poker",
        spiel_observation=f"{_HERE}:leduc_observation",
        payoff="chips",
        folded=f"{_HERE}:leduc_folded",
        aivat="cfr",
        summary="Leduc hold'em (OpenSpiel's leduc_poker), one hand per game, scored in chips; built-in players: cfr (the "
        "CFR+ equilibrium), always-raise, br (the exact best response to random).",
    ),
    GameSpec(
        "liars_dice",
        "rl4vlm_gym.envs.games.liars_dice:liars_dice_env",
        players={"heuristic": f"{_HERE}:dice_heuristic", "cfr": f"{_HERE}:dice_cfr"},
        spiel_game="liars_dice",
        spiel_observation=f"{_HERE}:liars_dice_observation",
        spiel_levels=("liars_dice", None),  # two dice: 2^24 bid sequences a roll, no exact best response
        summary="Liar's dice (OpenSpiel's liars_dice; -g level=1: two dice each); built-in players: heuristic, "
        "cfr (the CFR+ equilibrium, one die only).",
    ),
    GameSpec(
        "referential",
        "rl4vlm_gym.envs.games.referential:referential_env",
        players={"partner": f"{_HERE}:referential_partner"},
        cooperative=True,
        summary="Cooperative referential game (speaker, then listener; -g level=0..2): both seats share the payoff, "
        "rated by team success; built-in player: partner (the single-agent views' speaker and listener).",
    ),
)


def register() -> None:
    """Register the games' match entries (the ``rl4vlm_gym.games`` entry point): ours, and the
    OpenSpiel adapter's (:mod:`rl4vlm_gym.envs.games.openspiel_games`)."""
    from rl4vlm_gym.envs.games.openspiel_games import GAMES as ADAPTED

    for spec in (*GAMES, *ADAPTED):
        register_game(spec)


# Board games: the opponents of the single-agent views, reading the AEC env's board.


@dataclass(frozen=True)
class BoardPlayer:
    """One of :mod:`rl4vlm_gym.envs.games.opponents`' players in a seat of a ``BoardGameAEC``."""

    name: str
    depth: int = 3

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.opponents import PLAYERS, SearchPlayer

        player = SearchPlayer(depth=self.depth) if self.name == "search" else PLAYERS[self.name]()
        return env.game.moves[player.choose(env.game, env.board, rng)]


def heuristic() -> BoardPlayer:
    return BoardPlayer("heuristic")


def perfect() -> BoardPlayer:
    return BoardPlayer("perfect")


def search() -> BoardPlayer:
    return BoardPlayer("search", depth=3)  # the depth of rl4vlm/ConnectFour-vs-Search-v0


# Kuhn poker: the CFR equilibrium, known at every information state.


@dataclass(frozen=True)
class KuhnTablePlayer:
    """A Kuhn poker policy by OpenSpiel information state (``kuhn.KuhnOpponent``)."""

    name: str

    def policy(self, state: Any) -> dict[int, float]:
        from rl4vlm_gym.envs.games.kuhn import KuhnOpponent

        p = KuhnOpponent(self.name, players=state.num_players()).probs(state.information_state_string())
        return {0: p[0], 1: p[1]}

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.kuhn import ACTIONS

        p = self.policy(env.state)
        return ACTIONS[int(rng.random() >= p[0])]  # the single-agent view's draw


def kuhn_cfr() -> KuhnTablePlayer:
    return KuhnTablePlayer("cfr")


def kuhn_observation(state: Any, obs_mode: str = "image+text", image_size: int = 256, **_: Any) -> tuple[dict[str, Any], Any]:
    """What the player to move at OpenSpiel ``state`` sees in ``KuhnPokerAEC`` (its card, the
    moves, the pot), and the env's parser."""
    from rl4vlm_gym.envs.games.kuhn import ACTIONS, KUHN, MISSION, SYNONYMS, hand_image, hand_text
    from rl4vlm_gym.parsing import ActionParser

    view = KUHN.view(state, state.current_player())
    text = hand_text(view) if obs_mode != "image" else ""
    if obs_mode == "text":
        image = np.zeros((image_size, image_size, 3), np.uint8)
    else:
        image = hand_image(view, (image_size, image_size))
    obs = {"image": image, "text": text, "mission": MISSION, "actions": tuple(ACTIONS[a] for a in state.legal_actions())}
    return obs, ActionParser(synonyms=SYNONYMS)


# Both poker games: an exploitable policy, the best response to random, and what a fold leaves.


def _spiel_move(env: Any, action: int) -> str:
    """The name ``env`` (a ``SpielAEC``) gives OpenSpiel's ``action`` (what its parser reads)."""
    return env.GAME.action_name(action, env.spec)


@dataclass(frozen=True)
class AlwaysRaise:
    """Bet or raise whenever the rules allow, else call or check; never fold. Deterministic and
    exploitable: it wins many hands (its bets make the other fold) yet loses chips against any
    player that calls it with strong hands and folds weak ones.

    Attributes:
        aggressive: OpenSpiel's bet/raise action (Kuhn: 1, bet; Leduc: 2, raise).
        passive: the action played when no raise is legal (Kuhn: 1, a bet facing a bet is the
            call; Leduc: 1, call or check).
    """

    aggressive: int
    passive: int

    def policy(self, state: Any) -> dict[int, float]:
        return {self.aggressive if self.aggressive in state.legal_actions() else self.passive: 1.0}

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        (action,) = self.policy(env.state)
        return _spiel_move(env, action)


def kuhn_always_raise() -> AlwaysRaise:
    return AlwaysRaise(aggressive=1, passive=1)


def leduc_always_raise() -> AlwaysRaise:
    return AlwaysRaise(aggressive=2, passive=1)


@functools.cache
def _best_response_to_uniform(spiel_game: str, seat: int) -> Any:
    """OpenSpiel's exact best response of ``seat`` to the uniform random policy (its Python
    ``BestResponsePolicy``: it values the whole tree once, then answers by information state;
    Kuhn and Leduc take well under a second)."""
    import pyspiel
    from open_spiel.python.algorithms.best_response import BestResponsePolicy
    from open_spiel.python.policy import UniformRandomPolicy

    game = pyspiel.load_game(spiel_game)
    return BestResponsePolicy(game, seat, UniformRandomPolicy(game))


@dataclass(frozen=True)
class BestResponse:
    """The exact best response to ``random`` (uniform over the legal moves), in either seat: the
    strongest player against random there is, deterministic, and itself exploitable (it does not
    play an equilibrium). ``policy`` is exact at every state, so its exploitability is too."""

    spiel_game: str

    def check(self, env: Any) -> None:
        if getattr(env, "spec", self.spiel_game) != self.spiel_game:
            raise ValueError(f"the best response is computed for {self.spiel_game!r} only, not {env.spec!r}")

    def policy(self, state: Any) -> dict[int, float]:
        best = _best_response_to_uniform(self.spiel_game, state.current_player())
        return {int(best.best_response_action(state.information_state_string())): 1.0}

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        (action,) = self.policy(env.state)
        return _spiel_move(env, action)


def kuhn_br() -> BestResponse:
    return BestResponse("kuhn_poker")


def leduc_br() -> BestResponse:
    return BestResponse("leduc_poker")


def _fold(put_in: list[float], seat: int) -> list[float]:
    """The returns when ``seat`` folds: it loses what it has put in the pot, which the other seats
    win (shared equally among them when there are more than one)."""
    others = len(put_in) - 1
    return [-put_in[seat] if i == seat else put_in[seat] / others for i in range(len(put_in))]


def kuhn_folded(env: Any, seat: int) -> list[float]:
    """Kuhn poker's returns if ``seat`` folded at ``env``'s OpenSpiel state: each player put in
    its ante (1) and one chip per bet (OpenSpiel's action 1; a bet facing a bet is the call)."""
    state = env.state
    put_in = [1.0] * state.num_players()
    for step in state.full_history():
        if step.player >= 0 and step.action == 1:
            put_in[step.player] += 1.0
    return _fold(put_in, seat)


def leduc_folded(env: Any, seat: int) -> list[float]:
    """Leduc hold'em's returns if ``seat`` folded at ``env``'s OpenSpiel state: what it put in is
    its starting money (the same for all: the pot plus the money left, shared) less its money left
    (``LeducState.money``)."""
    state = env.state
    money = [float(m) for m in state.money()]
    start = (float(state.pot()) + sum(money)) / len(money)
    return _fold([start - m for m in money], seat)


# Leduc hold'em and Liar's dice: OpenSpiel tables by information state (``spiel.SpielGame.policy``).


@dataclass(frozen=True)
class SpielTablePlayer:
    """The policy ``name`` of a ``SpielGame`` (``game``: ``"module:ATTRIBUTE"``), by information
    state as the single-agent views' opponents play it, in a seat of a ``SpielAEC``; ``levels``:
    the levels it is computed for (``None``: all); ``seats``: the number of players its table is
    computed for (``None``: any, a rule rather than a table)."""

    game: str
    name: str
    levels: tuple[int, ...] | None = None
    seats: int | None = None

    def _game(self) -> Any:
        import importlib

        module, _, attr = self.game.partition(":")
        return getattr(importlib.import_module(module), attr)

    def check(self, env: Any) -> None:
        if self.levels is not None and getattr(env, "level", 0) not in self.levels:
            raise ValueError(f"the {self.name} policy is computed for level {', '.join(map(str, self.levels))} only")
        if self.seats is not None and len(env.possible_agents) != self.seats:
            raise ValueError(f"the {self.name} policy is computed for {self.seats} players, not {len(env.possible_agents)}")

    def policy(self, state: Any) -> dict[int, float]:
        legal = state.legal_actions()
        probs = self._game().policy(self.name, str(state.get_game()))(state.information_state_string(), legal)
        return {int(a): float(q) for a, q in zip(legal, probs, strict=True)}

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.spiel import sample

        p = self.policy(env.state)
        return self._game().action_name(sample(rng, list(p), list(p.values())), env.spec)


def leduc_cfr() -> SpielTablePlayer:
    return SpielTablePlayer("rl4vlm_gym.envs.games.leduc:LEDUC", "cfr", seats=2)


def dice_heuristic() -> SpielTablePlayer:
    return SpielTablePlayer("rl4vlm_gym.envs.games.liars_dice:LIARS_DICE", "heuristic")


def dice_cfr() -> SpielTablePlayer:
    return SpielTablePlayer("rl4vlm_gym.envs.games.liars_dice:LIARS_DICE", "cfr", levels=(0,), seats=2)


def _spiel_observation(
    aec: Any,
    state: Any,
    *,
    level: int = 0,
    obs_mode: str = "image+text",
    image_size: int = 256,
    action_format: str = "auto",
    action_match: str = "lenient",
    **_: Any,
) -> tuple[dict[str, Any], Any]:
    """What the player to move at OpenSpiel ``state`` sees in the ``SpielAEC`` subclass ``aec``
    (as ``observe`` builds it, with the feedback of the last move and of the chance after it),
    and the env's parser."""
    from rl4vlm_gym.envs.games.spiel import replay
    from rl4vlm_gym.parsing import ActionParser

    game, spec = aec.GAME, aec.SPECS[level]
    seat = state.current_player()
    history = [(h.player, h.action) for h in state.full_history()]
    said = []
    moved = [i for i, (player, _) in enumerate(history) if player >= 0]
    if moved:
        player, action = history[moved[-1]]
        said.append(f"{'You' if player == seat else 'Your opponent'} chose {game.action_name(action, spec)}.")
        for i in range(moved[-1] + 1, len(history)):  # chance after the last move (a public card)
            said.append(game.chance_feedback(replay(spec, [a for _, a in history[:i]]), history[i][1], seat))
    feedback = " ".join(x for x in said if x)
    view = game.view(state, seat)
    text = [feedback] if feedback else []
    if obs_mode != "image":
        text.append(game.text(view))
    image = np.zeros((image_size, image_size, 3), np.uint8) if obs_mode == "text" else game.image(view, (image_size, image_size))
    obs = {"image": image, "text": "\n".join(text), "mission": game.mission(spec), "actions": tuple(game.name_moves(state, spec))}
    return obs, ActionParser(format=action_format, match=action_match, synonyms=dict(game.synonyms))  # type: ignore[arg-type]


def leduc_observation(state: Any, **kwargs: Any) -> tuple[dict[str, Any], Any]:
    """What the player to move at OpenSpiel ``state`` sees in ``LeducAEC``, and its parser."""
    from rl4vlm_gym.envs.games.leduc import LeducAEC

    return _spiel_observation(LeducAEC, state, **kwargs)


def liars_dice_observation(state: Any, **kwargs: Any) -> tuple[dict[str, Any], Any]:
    """What the player to move at OpenSpiel ``state`` sees in ``LiarsDiceAEC``, and its parser."""
    from rl4vlm_gym.envs.games.liars_dice import LiarsDiceAEC

    return _spiel_observation(LiarsDiceAEC, state, **kwargs)


# The referential game: the single-agent views' built-in partners, in either seat.


@dataclass(frozen=True)
class ReferentialPartner:
    """As speaker, the shortest description that singles out the target (``ReferentialListener``'s
    speaker); as listener, a uniform pick among the candidates fitting every word of the message,
    all of them if none fits (``ReferentialSpeaker``'s listener)."""

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> str:
        from rl4vlm_gym.envs.games.referential import fits, shortest_description

        r = env.round
        if agent == "speaker":
            return shortest_description(r.config, r.candidates[r.target], list(r.candidates))
        fitting = [k + 1 for k, i in enumerate(r.listener_order) if fits(r.candidates[i], env.message or "")]
        choices = fitting or list(range(1, len(r.candidates) + 1))
        return str(choices[int(rng.integers(len(choices)))])


def referential_partner() -> ReferentialPartner:
    return ReferentialPartner()
