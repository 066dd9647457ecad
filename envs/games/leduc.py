"""Leduc hold'em on OpenSpiel's ``leduc_poker``: a single-agent view against a built-in opponent
(:class:`LeducHoldem`) and both seats behind PettingZoo's AEC API (:func:`leduc_env`)."""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.games.spiel import Policy, SpielAEC, SpielGame, SpielLevel, SpielView, tabular_best_response, uniform
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LEDUC", "LeducAEC", "LeducHoldem", "LeducHoldemVsCFR", "leduc_env"]

SPEC = "leduc_poker"
POLICY_FILE = Path(__file__).with_name("assets") / "leduc_cfr.json.gz"
RANKS = ("Jack", "Queen", "King")  # OpenSpiel's card c has rank c // 2 and suit c % 2
SUITS = ("spades", "hearts")
SUIT_SIGNS = ("\u2660", "\u2665")
ACTIONS = ("fold", "call", "raise")  # OpenSpiel's actions 0, 1, 2
RAISES = (2, 4)  # the raise of rounds 1 and 2


def card_name(card: int) -> str:
    return f"{RANKS[card // 2]} of {SUITS[card % 2]}"


@functools.cache
def equilibrium() -> dict[str, dict[int, float]]:
    """The CFR+ average policy by OpenSpiel information state (``spiel_cfr.py`` computed it)."""
    data = json.loads(gzip.decompress(POLICY_FILE.read_bytes()))
    return {key: {int(a): float(p) for a, p in pairs} for key, pairs in data["policy"].items()}


def cfr_policy(info_state: str, legal: Sequence[int]) -> list[float]:
    probs = equilibrium()[info_state]
    return [probs.get(a, 0.0) for a in legal]


@dataclass(frozen=True)
class LeducSeen:
    """What one player knows: its card, the public card once dealt, every bet, and at a showdown
    the other card. ``rounds`` holds each round's moves as (player, action)."""

    seat: int
    card: int
    public: int | None
    rounds: tuple[tuple[tuple[int, int], ...], ...]
    other: int | None
    result: float | None  # OpenSpiel's return for ``seat`` once the hand is over

    def put_in(self) -> tuple[int, int]:
        """The chips each player has put in the pot (ante 1; a call matches, a raise adds the
        round's raise)."""
        chips = [1, 1]
        for raise_, moves in zip(RAISES, self.rounds, strict=False):
            for player, action in moves:
                if action == 1:
                    chips[player] = max(chips)
                elif action == 2:
                    chips[player] = max(chips) + raise_
        return chips[0], chips[1]

    @property
    def folded(self) -> bool:
        return any(action == 0 for moves in self.rounds for _, action in moves)


class Leduc(SpielGame):
    title = "Leduc hold'em"
    synonyms: ClassVar[dict[str, str]] = {"check": "call", "bet": "raise"}
    max_payoff = 13.0  # ante 1, two raises of 2 in round 1 and of 4 in round 2

    def action_name(self, action: int, spec: str) -> str:
        return ACTIONS[action]

    def view(self, state: Any, seat: int) -> LeducSeen:
        private, public, dealt = [], None, 0
        rounds: list[list[tuple[int, int]]] = [[], []]
        for step in state.full_history():  # chance: the two private cards (player 0's first), then the public one
            if step.player < 0:
                if dealt < 2:
                    private.append(step.action)
                else:
                    public = step.action
                dealt += 1
            else:
                rounds[int(public is not None)].append((step.player, step.action))
        over = state.is_terminal()
        seen = LeducSeen(
            seat,
            private[seat],
            public,
            (tuple(rounds[0]), tuple(rounds[1])),
            None,
            float(state.returns()[seat]) if over else None,
        )
        if over and not seen.folded:
            return LeducSeen(seat, private[seat], public, seen.rounds, private[1 - seat], seen.result)  # showdown
        return seen

    def text(self, view: LeducSeen) -> str:
        seat = view.seat
        mine, theirs = view.put_in()[seat], view.put_in()[1 - seat]
        lines = [
            f"Leduc hold'em. You act {'first' if seat == 0 else 'second'} in each round. Your card: {card_name(view.card)}.",
            f"Public card: {card_name(view.public) if view.public is not None else 'not dealt yet'}. "
            f"Opponent's card: {card_name(view.other) if view.other is not None else 'hidden'}.",
        ]
        for r, moves in enumerate(view.rounds):
            if r == 0 or view.public is not None:
                said = ", ".join(f"{'you' if p == seat else 'opponent'} {ACTIONS[a]}" for p, a in moves)
                lines.append(f"Round {r + 1} (raises of {RAISES[r]}): {said or 'no moves yet'}.")
        lines.append(f"Pot: {mine + theirs} chips (you put in {mine}, your opponent {theirs}).")
        if view.result is not None:
            chips = view.result
            how = "Your opponent folded" if view.folded and chips > 0 else "You folded" if view.folded else "Showdown"
            end = f"you won {chips:g} chips" if chips > 0 else f"you lost {-chips:g} chips" if chips < 0 else "the pot is split"
            lines.append(f"The hand is over. {how}: {end}.")
        return "\n".join(lines)

    def image(self, view: LeducSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
        return leduc_image(view, size)

    def mission(self, spec: str) -> str:
        return (
            "Play one hand of Leduc hold'em and win chips. Six cards: Jack, Queen and King of spades and hearts; "
            "each player antes 1 chip and gets one private card. Two betting rounds, at most two raises each: raises "
            "of 2 chips in round 1 and of 4 in round 2; between them one public card is dealt. At the showdown a pair "
            "with the public card wins, else the higher rank; equal ranks split the pot. "
            "Write call (to check or call), raise, or fold (only when facing a raise)."
        )

    def chance_feedback(self, state: Any, action: int, seat: int) -> str:
        if len(state.history()) >= 2:  # the two private cards are dealt first; this is the public one
            return f"The public card is the {card_name(action)}."
        return ""

    def policy(self, name: str, spec: str) -> Policy:
        return {"random": uniform, "cfr": cfr_policy}[name]

    def features(self, view: LeducSeen) -> dict[str, int | str]:
        pair = view.public is not None and view.public // 2 == view.card // 2
        return {"round": 1 if view.public is None else 2, "card": RANKS[view.card // 2], "pair": int(pair)}

    def stake(self, state: Any, seat: int) -> float:
        return float(self.view(state, seat).put_in()[seat])

    def best_response(self, name: str, spec: str, seat: int) -> Callable[[Any], int]:
        actions = _best_response(name, seat)
        return lambda state: actions[state.information_state_string()]


@functools.cache
def _best_response(name: str, seat: int) -> dict[str, int]:
    """OpenSpiel's exact best response of ``seat`` to opponent ``name`` (the equilibrium table,
    or the uniform policy over the same information states)."""
    table = equilibrium()
    if name == "random":
        return tabular_best_response(SPEC, seat, {k: [(a, 1.0 / len(p)) for a in p] for k, p in table.items()})
    return tabular_best_response(SPEC, seat, {k: list(p.items()) for k, p in table.items()})


LEDUC = Leduc()


def _card(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], card: int | None, unit: int, empty: bool = False) -> None:
    x0, y0, x1, y1 = box
    if empty:
        draw.rounded_rectangle(box, radius=max(2, unit // 40), outline=(200, 220, 200), width=max(1, unit // 128))
        return
    face = (250, 250, 245) if card is not None else (150, 30, 40)
    draw.rounded_rectangle(box, radius=max(2, unit // 40), fill=face, outline=(0, 0, 0), width=max(1, unit // 128))
    if card is not None:
        colour = (200, 0, 0) if card % 2 else (0, 0, 0)
        draw.text(
            ((x0 + x1) // 2, (y0 + y1) // 2 - (y1 - y0) // 7),
            RANKS[card // 2][0],
            fill=colour,
            font=font(max(8, (y1 - y0) // 3), bold=True),
            anchor="mm",
        )
        draw.text(
            ((x0 + x1) // 2, (y0 + y1) // 2 + (y1 - y0) // 5),
            SUIT_SIGNS[card % 2],
            fill=colour,
            font=font(max(8, (y1 - y0) // 3)),
            anchor="mm",
        )


def leduc_image(view: LeducSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
    """The table as ``view.seat`` sees it: the opponent's card face down (up at a showdown) at the
    top, the public card (an empty slot until dealt) in the middle, its own card at the bottom,
    and on the left the bets of each round and the pot."""
    height, width = size
    image = Image.new("RGB", (width, height), (22, 101, 52))
    draw = ImageDraw.Draw(image)
    unit = min(width, height)
    card_w, card_h = width // 6, height // 4
    x = width - card_w - width // 8
    _card(draw, (x, height // 40, x + card_w, height // 40 + card_h), view.other, unit)
    y = (height - card_h) // 2
    _card(draw, (x, y, x + card_w, y + card_h), view.public, unit, empty=view.public is None)
    _card(draw, (x, height - height // 40 - card_h, x + card_w, height - height // 40), view.card, unit)
    mine, theirs = view.put_in()[view.seat], view.put_in()[1 - view.seat]
    lines = [f"you act {'first' if view.seat == 0 else 'second'}"]
    for r, moves in enumerate(view.rounds):
        if r == 0 or view.public is not None:
            lines.append(
                f"round {r + 1}: " + (" ".join(("you " if p == view.seat else "opp ") + ACTIONS[a] for p, a in moves) or "-")
            )
    lines.append(f"pot {mine + theirs} (you {mine}, opp {theirs})")
    if view.result is not None:
        lines.append(
            f"you {'won' if view.result > 0 else 'lost' if view.result < 0 else 'split'} {abs(view.result):g}"
            if view.result
            else "pot split"
        )
    small = font(max(6, unit // 22))
    y = height // 10
    for line in lines:
        # long bet lines wrap so that they stay left of the cards
        words, chunk = line.split(" "), []
        while words:
            chunk.append(words.pop(0))
            if not words or draw.textlength(" ".join([*chunk, words[0]]), font=small) > x - width // 15:
                draw.text((width // 30, y), " ".join(chunk), fill=(255, 255, 255), font=small)
                y, chunk = y + unit // 14, []
    return to_array(image)


class LeducHoldem(SpielView):
    """Leduc hold'em against a built-in opponent, on OpenSpiel's ``leduc_poker``.

    ## Description
    Leduc hold'em (Southey et al. 2005) as OpenSpiel plays it: six cards (Jack, Queen, King in two
    suits), an ante of 1 chip each, one private card each, two betting rounds with at most two
    raises each (raises of 2 chips in round 1, of 4 in round 2) and one public card dealt between
    them; at the showdown a pair with the public card wins, else the higher rank, and equal ranks
    split the pot. OpenSpiel's ``leduc_poker`` plays the rules and pays the chips; the seed draws
    your seat (player 1 acts first in each round), the deal (OpenSpiel's chance nodes, sampled
    with the env's RNG) and the opponent's moves. You see only your own card and the public one:
    the opponent's is drawn face down and named nowhere until a showdown (a fold keeps it hidden).

    The opponent is uniformly random or the equilibrium policy: OpenSpiel's CFR+ average policy
    after 2000 iterations (``spiel_cfr.py``, shipped in ``assets/leduc_cfr.json.gz``), whose
    exploitability (``pyspiel.exploitability``: the mean gain of the exact best responses) is
    8.6e-5 chips per hand. The oracle is OpenSpiel's exact best response to the opponent's policy
    (``pyspiel.TabularBestResponse``, computed once per process on the first oracle call): it
    earns +2.09 chips a hand as the first player and +2.66 as the second against the random
    opponent, and -0.0856 and +0.0857 against the equilibrium (Leduc's value for the first
    player). The
    deal is chance, so ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: exact. ``optimal_actions`` are the best responses to the opponents' known policy at
    your information state, ``values`` each legal move's expected return on the reward variant's
    scale (chips in ``native``), computed by an expectimax over the opponent's card (and the public
    card to come) you cannot see, weighted by the chance that the deal and the opponents' policy
    made the moves seen, the same values as OpenSpiel's ``TabularBestResponse``
    (``decisions.SpielResponse``); the oracle's move is one of them. ``steps_to_go`` is -1 (chance);
    features ``round`` (1 or 2), ``card`` (your rank) and ``pair`` (1 when it pairs the public
    card). Within a hand's length of the step limit, where a stalled hand is forfeited, there are
    none.

    ## Observation
    - ``image``: your card face up, the opponent's face down (up after a showdown), the public card
      (an empty slot until dealt), each round's bets and the pot.
    - ``text``: the same in words; in ``image`` mode only the step's feedback.
    - ``mission``: the rules and the goal.
    - ``actions``: OpenSpiel's legal moves now: ``call`` and ``raise`` (no raise after two in a
      round), and ``fold`` when facing a raise.

    ## Actions
    ``fold``, ``call`` or ``raise``; ``check`` means ``call`` and ``bet`` means ``raise``. A move
    the rules refuse now (folding when nothing is to call) is invalid: nothing happens.

    ## Rewards
    ``native``: OpenSpiel's return at the end, the chips won or lost (up to 13), 0 before: the
    episode return is the hand's chips, also in ``info["score"]``; ``penalty``: the same with
    -0.1 per invalid action. A hand stalled for ``STEP_LIMIT`` (20) steps, the registered step
    limit (only invalid moves make it that long), is truncated and scored as a fold: you lose
    what you put in (``forfeit``).

    ## Levels
    One level: the id names the opponent (random or CFR+ equilibrium). OpenSpiel's ``leduc_poker``
    has no deck-size parameter (only the number of players), so there are no deck levels.

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

    GAME: ClassVar[SpielGame] = LEDUC
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (SpielLevel(SPEC, "random", "a uniformly random opponent"),)
    # the most a hand pays is 13 chips; a hand that pays c chips scales it by c / 13
    REWARDS: ClassVar = {
        "native": {"move": 0.0, "won": 13.0, "lost": -13.0, "tie": 0.0, "forfeit": -13.0, "invalid": 0.0},
        "penalty": {"move": 0.0, "won": 13.0, "lost": -13.0, "tie": 0.0, "forfeit": -13.0, "invalid": -0.1},
    }
    REWARD_ALIASES: ClassVar = {"openspiel": "native"}
    SYNONYMS: ClassVar = LEDUC.synonyms
    STEP_LIMIT: ClassVar[int] = 20


class LeducHoldemVsCFR(LeducHoldem):
    __doc__ = LeducHoldem.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (SpielLevel(SPEC, "cfr", "the CFR+ equilibrium opponent"),)


class LeducAEC(SpielAEC):
    """Leduc hold'em for two VLM agents behind PettingZoo's AEC API; hidden cards stay hidden.

    ## Description
    OpenSpiel's ``leduc_poker`` plays the rules and pays the chips (see :class:`LeducHoldem`);
    ``player_0`` acts first in each round; the deal is drawn from the env's RNG.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own card face
    up, the opponent's face down (up after a showdown), the public card once dealt, the bets and
    the pot, the same in words, the rules, and its legal moves when it is its turn (else none).

    ## Action Space
    Free text parsed against the legal moves (``fold``, ``call``, ``raise``; ``check`` means call,
    ``bet`` raise). An invalid move changes nothing, keeps the turn and pays nothing; the reason is
    in the agent's ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's returns at the end of the hand (the chips won or lost), 0 before.

    ## Arguments
    ``players``: 2 (the only number the text and pictures are drawn for); ``obs_mode``,
    ``image_size`` (a square side), ``action_format``, ``action_match`` as in
    ``VLMEnv``; ``render_mode`` (``rgb_array`` and ``human`` show the view of the agent to move,
    ``ansi`` its text); ``max_cycles``: steps after which every agent is truncated;
    ``render_fps``: the pace of the ``human`` window. ``oracle_action(agent)`` plays the CFR+
    equilibrium as the mixed strategy it is: a move sampled with its probabilities at the agent's
    information state, from a generator spawned from the env's at reset (unexploitable; its most
    likely move alone would not be).
    """

    metadata: dict[str, Any] = {**SpielAEC.metadata, "name": "rl4vlm_leduc_holdem_v0"}
    GAME: ClassVar[SpielGame] = LEDUC
    SPECS: ClassVar[tuple[str, ...]] = (SPEC,)
    EQUILIBRIUM: ClassVar[tuple[str, ...]] = ("cfr",)


def leduc_env(**kwargs: Any) -> LeducAEC:
    """Leduc hold'em (OpenSpiel's ``leduc_poker``) with VLM observations and hidden cards."""
    return LeducAEC(**kwargs)
