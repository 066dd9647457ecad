"""Kuhn poker on OpenSpiel's ``kuhn_poker``, hidden cards hidden: :data:`KUHN`, the game as a
:class:`~.spiel.SpielGame`, which the single-agent view :class:`KuhnPoker` (a :class:`~.spiel.SpielView`,
as Leduc hold'em and Liar's dice are) and the AEC env (:mod:`.kuhn_aec`) play, with two or three
players (OpenSpiel's deck has one card more than players: Jack, Queen, King, Ace).

What a player may know is one record, :class:`KuhnSeen` (its card, the moves, the cards shown at
a showdown); the text, the picture and the state key are drawn from it alone."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.games.spiel import Policy, SpielGame, SpielLevel, SpielView, load
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

SPEC = "kuhn_poker"
SPEC_3 = "kuhn_poker(players=3)"
CARDS = ("Jack", "Queen", "King", "Ace")  # OpenSpiel's cards 0, 1, 2 (and 3 with three players)
ACTIONS = ("pass", "bet")  # OpenSpiel's actions 0, 1
SYNONYMS = {"check": "pass", "fold": "pass", "call": "bet"}
POLICY_FILE = Path(__file__).with_name("assets") / "kuhn_cfr.json"
POLICY_FILES = {2: POLICY_FILE, 3: Path(__file__).with_name("assets") / "kuhn_3_cfr.json"}


@cache
def equilibrium(players: int = 2) -> dict[str, tuple[float, float]]:
    """The CFR average policy by OpenSpiel information state (``kuhn_cfr.py`` computed it); with
    three players the CFR average policy is no Nash equilibrium certificate (its NashConv is
    recorded in the file)."""
    data = json.loads(POLICY_FILES[players].read_text())
    return {key: (float(p[0]), float(p[1])) for key, p in data["policy"].items()}


@dataclass(frozen=True)
class KuhnOpponent:
    """An opponent's policy, ``random`` (uniform) or ``cfr`` (the equilibrium), with ``players`` players."""

    name: str
    players: int = 2

    def probs(self, info_state: str) -> tuple[float, float]:
        if self.name == "random":
            return (0.5, 0.5)
        return equilibrium(self.players)[info_state]


MISSION = (
    "Play one hand of Kuhn poker (cards Jack < Queen < King, ante 1 chip, one bet of 1) and win chips. "
    "Write pass or bet; after a bet, pass folds and bet calls."
)


def mission(players: int = 2) -> str:
    """The rules and the goal for ``players`` players (:data:`MISSION` with two)."""
    if players == 2:
        return MISSION
    deck = " < ".join(CARDS[: players + 1])
    return (
        f"Play one hand of Kuhn poker with {players} players (cards {deck}, one each, ante 1 chip, one bet of 1; "
        "players act in turn from player 0) and win chips. Write pass or bet; after a bet, pass folds and bet calls. "
        "The highest card among the players still in wins the pot."
    )


def contenders(history: tuple[int, ...], players: int) -> list[int]:
    """The players still in at the end of the betting: every player if nobody bet, else the bettor
    and those who called (a pass after a bet folds)."""
    bettors = [i % players for i, a in enumerate(history) if a == 1]
    return bettors or list(range(players))


def showdown(history: tuple[int, ...], terminal: bool, players: int = 2) -> bool:
    """The cards of the players still in are shown when the hand ended with two or more of them
    (with two players: it ended without a fold)."""
    return terminal and len(contenders(history, players)) >= 2


@dataclass(frozen=True)
class KuhnSeen:
    """What one player knows: its card, the moves (OpenSpiel's actions after the deal), and at a
    showdown the cards shown (``shown``: by player, ``None`` where hidden; ours is always known);
    ``result``: its OpenSpiel return once the hand is over."""

    seat: int
    card: int
    history: tuple[int, ...]
    shown: tuple[int | None, ...]
    result: float | None

    @property
    def players(self) -> int:
        return len(self.shown)

    @property
    def other(self) -> int | None:
        """The opponent's card where shown (two players)."""
        return self.shown[1 - self.seat]


def moves_text(seat: int, history: tuple[int, ...], players: int = 2) -> list[str]:
    def who(p: int) -> str:
        return "You" if p == seat else "Opponent" if players == 2 else f"Player {p}"

    return [f"{who(i % players)}: {ACTIONS[a]}" for i, a in enumerate(history)]


def hand_text(view: KuhnSeen) -> str:
    """What ``view.seat`` knows, in words: its card, the moves, the pot, and at a showdown the
    cards shown."""
    seat, history, n = view.seat, view.history, view.players
    if n == 2:
        lines = [
            f"You act {'first' if seat == 0 else 'second'}. Your card: {CARDS[view.card]}.",
            f"Opponent's card: {CARDS[view.other] if view.other is not None else 'hidden'}.",
        ]
    else:
        cards = [f"player {p}: {CARDS[c] if c is not None else 'hidden'}" for p, c in enumerate(view.shown) if p != seat]
        lines = [f"{n} players; you are player {seat} (player 0 acts first). Your card: {CARDS[view.card]}.", "Cards: " + ", ".join(cards) + "."]
    lines.append("Moves: " + (", ".join(moves_text(seat, history, n)) or "none") + f". Pot: {n + sum(history)} chips.")
    if view.result is not None:
        lines.append(f"The hand is over: you {'won' if view.result > 0 else 'lost'} {abs(view.result):g}.")
    return "\n".join(lines)


def hand_image(view: KuhnSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
    """What ``view.seat`` sees: its card face up, the others face down until a showdown, the moves."""
    seat, history, n = view.seat, view.history, view.players
    height, width = size
    image = Image.new("RGB", (width, height), (22, 101, 52))
    draw = ImageDraw.Draw(image)
    unit = min(width, height)
    small, big = font(max(8, unit // 16)), font(max(12, unit // 5 if n == 2 else unit // 7), bold=True)
    # two players: the cards in the middle column; more: the cards on the right, the moves left of them
    card_w, card_h = (width // 4, height // 3) if n == 2 else (width // 6, height // 4)

    def card(x: int, y: int, label: str | None) -> None:
        face = (250, 250, 245) if label else (150, 30, 40)
        draw.rounded_rectangle((x, y, x + card_w, y + card_h), radius=max(2, unit // 40), fill=face, outline=(0, 0, 0), width=2)
        if label:
            draw.text((x + card_w // 2, y + card_h // 2), label, fill=(0, 0, 0), font=big, anchor="mm")

    others = [p for p in range(n) if p != seat]
    mine_x = width // 2 - card_w // 2 if n == 2 else width - width // 30 - card_w
    for k, p in enumerate(others):  # the opponents' cards side by side at the top, in player order
        x = mine_x if n == 2 else width - width // 30 - (len(others) - k) * card_w - (len(others) - k - 1) * (width // 30)
        shown = view.shown[p]
        card(x, height // 20, CARDS[shown][0] if shown is not None else None)
        if n > 2:
            draw.text((x + card_w // 2, height // 20 + card_h + unit // 60), f"p{p}", fill=(255, 255, 255), font=small, anchor="mt")
    card(mine_x, height - height // 20 - card_h, CARDS[view.card][0])
    place = f"you act {'first' if seat == 0 else 'second'}" if n == 2 else f"you are p{seat}"
    text = [place, *[m.lower() for m in moves_text(seat, history, n)], f"pot {n + sum(history)}"]
    y = height // 2 - len(text) * unit // 32
    for line in text:
        draw.text((width // 20, y), line, fill=(255, 255, 255), font=small)
        y += unit // 15
    return to_array(image)


def expected_chips(pairs: list[tuple[Any, float]], seat: int, opponent: KuhnOpponent) -> float:
    """Expected chips (unnormalised) of ``seat`` playing best from ``pairs``, states of one of its
    information sets with their weights, against ``opponent``'s known policy."""
    state = pairs[0][0]
    if state.is_terminal():
        return sum(w * s.returns()[seat] for s, w in pairs)
    if state.current_player() == seat:
        return max(expected_chips([(s.child(a), w) for s, w in pairs], seat, opponent) for a in (0, 1))
    total = 0.0
    for a in (0, 1):
        branch = [(s.child(a), w * opponent.probs(s.information_state_string())[a]) for s, w in pairs]
        total += expected_chips(branch, seat, opponent)
    return total


def beliefs(state: Any, seat: int, opponent: KuhnOpponent) -> list[tuple[Any, float]]:
    """The states ``seat`` cannot tell from ``state`` (its card and the moves), each weighted by the
    chance that ``opponent``'s policy made the moves with those cards (the deal's prior is uniform)."""
    players = state.num_players()
    dealt, history = state.history()[:players], state.history()[players:]
    mine = dealt[seat]
    pairs = []
    for theirs in itertools.permutations([c for c in range(players + 1) if c != mine], players - 1):
        cards = [*theirs[:seat], mine, *theirs[seat:]]
        start, weight = state.get_game().new_initial_state(), 1.0
        for action in cards:
            start.apply_action(action)
        for action in history:
            if start.current_player() != seat:
                weight *= opponent.probs(start.information_state_string())[action]
            start.apply_action(action)
        pairs.append((start, weight))
    return pairs


def best_response(state: Any, seat: int, opponent: KuhnOpponent) -> int:
    """The exact best response of ``seat`` to ``opponent`` at ``state``: the move of the larger
    expected chips over its beliefs (``pass`` on a tie)."""
    pairs = beliefs(state, seat, opponent)
    values = [expected_chips([(s.child(a), w) for s, w in pairs], seat, opponent) for a in (0, 1)]
    return 1 if values[1] > values[0] + 1e-9 else 0


class Kuhn(SpielGame):
    """Kuhn poker as a :class:`~rl4vlm_gym.envs.games.spiel.SpielGame`: the single-agent view
    (:class:`KuhnPoker`) and the AEC env (:mod:`.kuhn_aec`) play it."""

    title = "Kuhn poker"
    synonyms: ClassVar[dict[str, str]] = SYNONYMS
    max_payoff = 2.0

    def action_name(self, action: int, spec: str) -> str:
        return ACTIONS[action]

    def view(self, state: Any, seat: int) -> KuhnSeen:
        n = state.num_players()
        deal, history = state.history()[:n], tuple(state.history()[n:])  # chance deals player 0's card first
        over = state.is_terminal()
        shown = contenders(history, n) if showdown(history, over, n) else []
        cards = tuple(c if p == seat or p in shown else None for p, c in enumerate(deal))
        return KuhnSeen(seat, deal[seat], history, cards, float(state.returns()[seat]) if over else None)

    def text(self, view: KuhnSeen) -> str:
        return hand_text(view)

    def image(self, view: KuhnSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
        return hand_image(view, size)

    def mission(self, spec: str) -> str:
        return mission(load(spec).num_players())

    def deal(self, rng: np.random.Generator, spec: str) -> tuple[int, ...]:
        """The cards by OpenSpiel player, drawn as the view always drew them (with two players: the
        first card of three, then one of the two left), so that a seed deals the same hand."""
        players = load(spec).num_players()
        if players == 2:
            first = int(rng.integers(3))
            return (first, (first + 1 + int(rng.integers(2))) % 3)
        return tuple(int(c) for c in rng.permutation(players + 1)[:players])

    def outcome_words(self, chips: float) -> str:
        return f"You {'won' if chips > 0 else 'lost'} {abs(chips):g} chip{'s' if abs(chips) > 1 else ''}."

    def policy(self, name: str, spec: str) -> Policy:
        opponent = KuhnOpponent(name, load(spec).num_players())

        def probs(info_state: str, legal: Sequence[int]) -> list[float]:
            return list(opponent.probs(info_state))  # both moves are always legal

        return probs

    def best_response(self, name: str, spec: str, seat: int) -> Callable[[Any], int]:
        opponent = KuhnOpponent(name, load(spec).num_players())
        return lambda state: best_response(state, seat, opponent)

    def features(self, view: KuhnSeen) -> dict[str, int | str]:
        return {"card": CARDS[view.card], "facing_bet": int(1 in view.history)}

    def stake(self, state: Any, seat: int) -> float:
        n = state.num_players()
        return 1.0 + sum(a for i, a in enumerate(state.history()[n:]) if i % n == seat)  # the ante and a bet


KUHN = Kuhn()


class KuhnPoker(SpielView):
    """Kuhn poker against built-in opponents, on OpenSpiel's ``kuhn_poker``.

    ## Description
    Three cards (Jack < Queen < King), one to each player, an ante of 1 chip each and one round
    of betting with bets of 1 (Kuhn 1950): pass or bet; after a bet each later player calls or
    folds; the highest card still in wins the pot. Level 1 seats three players (two opponents)
    with four cards, Jack to Ace, as OpenSpiel's ``kuhn_poker(players=3)`` deals them.
    OpenSpiel plays the rules and pays the chips; the seed draws your seat (player 0 acts first),
    the deal (OpenSpiel's chance nodes, sampled with the env's RNG) and the opponents' moves. You
    see only your own card: the others' are drawn face down and named nowhere until a showdown.
    The opponents are random or the equilibrium policy (OpenSpiel's CFR, computed by
    ``kuhn_cfr.py`` and shipped in ``assets/kuhn_cfr.json``, exploitability below 1e-4; with three
    players ``assets/kuhn_3_cfr.json``, CFR's average policy, NashConv 1.9e-4).

    The oracle is the exact best response to the opponents' known policy: it weighs their
    possible cards by how likely their policy made the moves seen, and maximises the expected
    chips. Over the seats it earns +0.458 chips a hand against the random opponent and +0.0001
    against the equilibrium (the values of OpenSpiel's ``TabularBestResponse``, which are those
    policies' exploitability; the game's value over both seats is 0); with three players +0.688
    against two random opponents and 0.000 against two CFR ones. The deal is chance, so
    ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: exact. ``optimal_actions`` are the best responses to the opponents' known policy at
    your information state, ``values`` each legal move's expected return on the reward variant's
    scale (chips in ``native``), computed by an expectimax over the cards you cannot see, weighted
    by the chance that the deal and the opponents' policy made the moves seen, the same values as
    OpenSpiel's ``TabularBestResponse`` (``decisions.SpielResponse``); the oracle's move is one of
    them. ``steps_to_go`` is -1 (chance); features ``card`` (yours) and ``facing_bet`` (1 once
    someone bet). Within a hand's length of the step limit, where a stalled hand is forfeited, there
    are none.

    ## Observation
    - ``image``: your card face up, the others face down (face up at a showdown, for the players
      still in), the moves so far and the pot.
    - ``text``: the same in words; in ``image`` mode only the step's feedback.
    - ``mission``: the rules and the goal.
    - ``actions``: ``pass``, ``bet`` (OpenSpiel's; after a bet, ``pass`` folds and ``bet`` calls).

    ## Actions
    ``pass`` or ``bet``; ``check`` and ``fold`` mean ``pass``, ``call`` means ``bet``.

    ## Rewards
    ``native``: OpenSpiel's return at the end, the chips won or lost (+-1 or +-2; up to +4 with
    three players), 0 before: the episode return is the hand's chips, also in ``info["score"]``.
    A hand stalled for ``STEP_LIMIT`` (10) steps, the registered step limit (only invalid moves
    make it that long), is truncated and scored as a fold: you lose what you put in
    (``forfeit``, -1 or -2).

    ## Levels
    Level 0: one opponent, three cards; level 1: two opponents, four cards. The id names the
    opponents' policy (random or CFR).

    ## Arguments
    ``duplicate`` (default False): play each deal from every seat, the duplicate format:
    ``reset(seed=s)`` seats you in seat ``s % N`` of the deal ``s // N`` (N players), so seeds
    2k and 2k+1 of a two-player game deal the same cards or dice with the seats swapped, and a
    pair's chips cancel the deal's luck; the opponents' moves are still drawn from the seed. And
    the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``, ``image_size``
    (default 256x256), ``reward_variant``, ``action_format``, ``action_match``, ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    GAME: ClassVar[SpielGame] = KUHN
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPEC, "random", "one opponent, three cards"),
        SpielLevel(SPEC_3, "random", "two opponents, four cards"),
    )
    # the most a hand pays (4 chips, with three players); a hand that pays c scales it by c / 4
    REWARDS: ClassVar = {"native": {"move": 0.0, "won": 4.0, "lost": -4.0, "forfeit": -4.0, "invalid": 0.0}}
    STEP_LIMIT: ClassVar[int] = 10
    REWARD_ALIASES: ClassVar = {"openspiel": "native"}
    SYNONYMS: ClassVar = KUHN.synonyms

    def _actions(self) -> tuple[str, ...]:
        return ACTIONS  # both moves are always legal; listed after the hand too, as since v0

    def _state_key(self) -> str:
        # our information state (and what the end reveals), never the opponents' hidden cards; the
        # level is in it (the number of players), so the key is v0's, without SpielView's prefix
        return str(self._seen())


class KuhnPokerVsCFR(KuhnPoker):
    __doc__ = KuhnPoker.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPEC, "cfr", "one opponent, three cards"),
        SpielLevel(SPEC_3, "cfr", "two opponents, four cards"),
    )
