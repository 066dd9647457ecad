"""Liar's dice on OpenSpiel's ``liars_dice``: single-agent views against built-in opponents
(:class:`LiarsDice`) and every seat behind PettingZoo's AEC API (:func:`liars_dice_env`).

Two players play OpenSpiel's own ``liars_dice``; three or more play
:mod:`~rl4vlm_gym.envs.games.liars_dice_rules`, its rules as an OpenSpiel Python game (OpenSpiel's
takes two players only)."""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.games import liars_dice_rules
from rl4vlm_gym.envs.games.spiel import Policy, SpielAEC, SpielGame, SpielLevel, SpielView, load, sample, uniform
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LIARS_DICE", "LiarsDice", "LiarsDiceAEC", "LiarsDiceVsCFR", "LiarsDiceVsHeuristic", "heuristic", "liars_dice_env", "reads_no_dice"]

SPECS = ("liars_dice(numdice=1)", "liars_dice(numdice=2)")  # the levels of two players: dice per player
THREE_PLAYERS = liars_dice_rules.spec(3, 1)  # one die each, two opponents
POLICY_FILE = Path(__file__).with_name("assets") / "liars_dice_1_cfr.json.gz"
BR_FILE = Path(__file__).with_name("assets") / "liars_dice_1_br.json.gz"
FACES = 6
WILD = 6  # OpenSpiel's rule: the highest face counts as any other face


@functools.cache
def shape(spec: str) -> tuple[int, int]:
    """(players, dice per player) of the game ``spec``."""
    params = load(spec).get_parameters()
    return int(params["players"]), int(params["numdice"])


def num_dice(spec: str) -> int:
    return shape(spec)[1]


def total_dice(spec: str) -> int:
    players, dice = shape(spec)
    return players * dice


def liar_action(total: int) -> int:
    """OpenSpiel's "Liar" action, after the bids ``q-f`` (action ``(q - 1) * 6 + f - 1``) on
    ``total`` dice in play."""
    return total * FACES


def bid(action: int) -> tuple[int, int]:
    """OpenSpiel's bid action as (quantity, face)."""
    return action // FACES + 1, action % FACES + 1


def bid_holds(action: int, dice: Sequence[int]) -> bool:
    """Whether the bid ``action`` holds on all the ``dice`` (a 6 is wild except in a bid on 6)."""
    quantity, face = bid(action)
    return sum(1 for d in dice if d == face or (d == WILD and face != WILD)) >= quantity


def bid_true_probability(quantity: int, face: int, mine: Sequence[int], unknown: int) -> float:
    """The chance that at least ``quantity`` of all dice show ``face`` (wilds included) given our
    dice ``mine`` and ``unknown`` dice we cannot see."""
    hit = (1 if face == WILD else 2) / FACES
    need = quantity - sum(1 for d in mine if d == face or (d == WILD and face != WILD))
    if need <= 0:
        return 1.0
    return sum(math.comb(unknown, k) * hit**k * (1 - hit) ** (unknown - k) for k in range(need, unknown + 1))


@functools.cache
def heuristic_probs(mine: tuple[int, ...], last: int | None, total: int) -> tuple[float, ...]:
    """The heuristic player's move probabilities with dice ``mine`` after the standing bid
    ``last`` (``None``: none yet), over the legal actions in OpenSpiel's order (see
    :func:`heuristic`)."""
    liar = liar_action(total)
    legal = [*range(0 if last is None else last + 1, liar), *([] if last is None else [liar])]
    unknown = total - len(mine)
    values = [
        1.0 - bid_true_probability(*bid(last), mine, unknown) if a == liar and last is not None else bid_true_probability(*bid(a), mine, unknown)
        for a in legal
    ]
    top = max(values)
    best = [a for a, v in zip(legal, values, strict=True) if v >= top - 1e-9]
    if liar in best:
        best = [liar]
    else:
        lowest = min(bid(a)[0] for a in best)
        best = [a for a in best if bid(a)[0] == lowest]
    return tuple(1.0 / len(best) if a in best else 0.0 for a in legal)


def heuristic(info_state: str, legal: Sequence[int]) -> list[float]:
    """The heuristic player, from its own information state only (its dice and the standing bid):
    it values calling liar by the chance the standing bid is false and each raise by the chance it
    is true (its own dice known, the others' as fair dice), as if the game ended with its move; it
    takes the best, liar first among equals, else uniform over the best raises of the lowest
    quantity. The number of dice in play is read from ``legal`` (Liar, the last action, is legal
    once a bid stands; before, the bids run up to it)."""
    tokens = info_state.split()
    mine = tuple(int(c) for c in tokens[0])
    bids = [t for t in tokens[1:] if t != "Liar"]
    last = None
    if bids:
        q, f = (int(x) for x in bids[-1].split("-"))
        last = (q - 1) * FACES + f - 1
    total = max(legal) // FACES if last is not None else (max(legal) + 1) // FACES
    liar = liar_action(total)
    moves = [*range(0 if last is None else last + 1, liar), *([] if last is None else [liar])]
    probs = dict(zip(moves, heuristic_probs(mine, last, total), strict=True))
    return [probs.get(a, 0.0) for a in legal]


@functools.cache
def equilibrium() -> dict[str, dict[int, float]]:
    """The CFR+ average policy of one-die Liar's dice by information state (``spiel_cfr.py``)."""
    data = json.loads(gzip.decompress(POLICY_FILE.read_bytes()))
    return {key: {int(a): float(p) for a, p in pairs} for key, pairs in data["policy"].items()}


def cfr_policy(info_state: str, legal: Sequence[int]) -> list[float]:
    probs = equilibrium()[info_state]
    return [probs.get(a, 0.0) for a in legal]


POLICIES: dict[str, Policy] = {"random": uniform, "heuristic": heuristic, "cfr": cfr_policy}


@functools.cache
def best_responses() -> dict[str, dict[str, int]]:
    """OpenSpiel's exact best response of either seat to each one-die opponent, by information
    state (``spiel_cfr.py liars_dice_1_br`` computed them: seconds each, too slow for a first
    oracle call)."""
    data = json.loads(gzip.decompress(BR_FILE.read_bytes()))
    return {name: dict(actions) for name, actions in data["actions"].items()}


@dataclass(frozen=True)
class DiceSeen:
    """What one player knows: its dice, every bid (player, action) and, once someone called liar,
    every player's dice (the call reveals them; ``shown``) and its result. ``total``: the dice in
    play; ``players``: how many play."""

    seat: int
    dice: tuple[int, ...]
    moves: tuple[tuple[int, int], ...]
    shown: tuple[tuple[int, ...], ...] | None
    result: float | None
    players: int = 2

    @property
    def total(self) -> int:
        return self.players * len(self.dice)

    def name(self, player: int) -> str:
        """How the seat calls ``player``: you, opponent (two players) or player k."""
        return "you" if player == self.seat else "opponent" if self.players == 2 else f"player {player}"


def move_name(action: int, total: int) -> str:
    return "liar" if action == liar_action(total) else "{}-{}".format(*bid(action))


class Dice(SpielGame):
    title = "Liar's dice"
    synonyms: ClassVar[dict[str, str]] = {"challenge": "liar", "call liar": "liar", "bluff": "liar"}
    max_payoff = 1.0

    def action_name(self, action: int, spec: str) -> str:
        return move_name(action, total_dice(spec))

    def view(self, state: Any, seat: int) -> DiceSeen:
        players = state.num_players()
        chance, bids = _rolls_and_bids(state)
        moves = tuple(bids)
        n = len(chance) // players  # OpenSpiel rolls player 0's dice first
        rolled = tuple(tuple(sorted(chance[i * n : (i + 1) * n])) for i in range(players))
        over = state.is_terminal()
        return DiceSeen(seat, rolled[seat], moves, rolled if over else None, float(state.returns()[seat]) if over else None, players)

    def text(self, view: DiceSeen) -> str:
        dice = len(view.dice)
        word = "die" if dice == 1 else "dice"
        bids = ", ".join(f"{view.name(p)} {move_name(a, view.total)}" for p, a in view.moves) or "none yet"
        if view.players == 2:
            other = view.shown[1 - view.seat] if view.shown else None
            lines = [
                f"Liar's dice with {dice} {word} each. You bid {'first' if view.seat == 0 else 'second'}. "
                f"Your {word}: {' and '.join(map(str, view.dice))}. Opponent's: {' and '.join(map(str, other)) if other else 'hidden'}.",
                f"Bids: {bids}.",
            ]
        else:
            others = [
                f"player {p}: {' and '.join(map(str, view.shown[p])) if view.shown else f'{dice} {word} hidden'}"
                for p in range(view.players)
                if p != view.seat
            ]
            lines = [
                f"Liar's dice with {view.players} players, {dice} {word} each ({view.total} in play); they bid in turn from "
                f"player 0. You are player {view.seat}. Your {word}: {' and '.join(map(str, view.dice))}. " + "; ".join(others) + ".",
                f"Bids: {bids}.",
            ]
        if view.result is not None:
            caller = view.moves[-1][0]
            who = "You" if caller == view.seat else "Your opponent" if view.players == 2 else f"Player {caller}"
            end = "you won" if view.result > 0 else "you lost" if view.result < 0 else "you took no part in the challenge"
            lines.append(f"{who} called liar. The game is over: {end}.")
        return "\n".join(lines)

    def image(self, view: DiceSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
        return dice_image(view, size)

    def mission(self, spec: str) -> str:
        players, dice = shape(spec)
        who = "each player" if players == 2 else f"each of {players} players"
        order = "Players take turns" if players == 2 else "Players take turns in order (player 0 first)"
        end = "if the bid holds its bidder wins, else the challenger wins."
        if players > 2:
            end = "if the bid holds its bidder wins and the challenger loses, else the other way round; the others neither win nor lose."
        return (
            f"Play Liar's dice: {who} rolls {dice} {'die' if dice == 1 else 'dice'} in secret. {order} to bid "
            "q-f, claiming that at least q of all dice show face f (a 6 is wild: it counts as any face, and a bid on 6 counts only 6s); "
            "each bid must be higher than the last (a higher quantity, or the same quantity and a higher face). Instead of bidding, "
            f"write liar to challenge the last bid: the dice are shown, and {end} "
            "Write a bid such as 1-4, or liar."
        )

    def policy(self, name: str, spec: str) -> Policy:
        return POLICIES[name]

    def best_response(self, name: str, spec: str, seat: int) -> Callable[[Any], int] | None:
        if spec == SPECS[0]:
            actions = best_responses()[name]  # OpenSpiel's TabularBestResponse, shipped
            return lambda state: actions[state.information_state_string()]
        if name not in MARKOV:
            return None
        from rl4vlm_gym.envs.games.liars_dice_oracle import DiceResponse

        return DiceResponse.of(spec, seat, name).move

    def action_values(self, name: str, spec: str, seat: int, state: Any, payoff: Callable[[float], float]) -> dict[int, float] | None:
        """Against the random and heuristic players :mod:`.liars_dice_oracle`'s search (exact at
        every level); against CFR+ (one die) its search of the whole public tree, once per seat
        (:class:`~.liars_dice_oracle.TabularDiceResponse`)."""
        from rl4vlm_gym.envs.games.liars_dice_oracle import DiceResponse, TabularDiceResponse

        rolls, bids = _rolls_and_bids(state)
        if name not in MARKOV:
            if spec != SPECS[0]:
                return None
            return TabularDiceResponse.of(seat, name, (payoff(1.0), payoff(-1.0))).action_values(rolls[seat], [a for _, a in bids])
        response = DiceResponse.of(spec, seat, name, (payoff(1.0), payoff(-1.0), payoff(0.0)))
        mine = tuple(sorted(rolls[seat * response.numdice : (seat + 1) * response.numdice]))
        return response.action_values(mine, bids)

    def features(self, view: DiceSeen) -> dict[str, int | str]:
        return {"bids": len(view.moves)}

    def state_features(self, state: Any, seat: int) -> dict[str, int | str]:
        return {"bids": len(_rolls_and_bids(state)[1])}  # the view's moves

    def decision_key(self, name: str, spec: str, state: Any, seat: int) -> tuple[Hashable, dict[str, int | str] | None]:
        """Against a player who reads no dice (:func:`reads_no_dice`: random) the facts but the features
        depend on our dice and the standing bid alone, not on the bids before it (the belief stays the
        prior): one entry serves every sequence of them, the number of bids (the feature) given apart."""
        if name not in MARKOV or not reads_no_dice(spec, name):
            return super().decision_key(name, spec, state, seat)
        numdice, (rolls, bids) = num_dice(spec), _rolls_and_bids(state)
        last = bids[-1][1] if bids else None
        return (tuple(sorted(rolls[seat * numdice : (seat + 1) * numdice])), last), {"bids": len(bids)}

    def fallback(self, spec: str) -> Policy:
        return heuristic

    def forfeit_words(self, stake: float) -> str:
        return "it is scored as a fold, a lost game"


def uniform_probs(mine: tuple[int, ...], last: int | None, total: int) -> tuple[float, ...]:
    """The random player's move probabilities after the standing bid ``last`` (every legal move alike)."""
    legal = liar_action(total) - (0 if last is None else last + 1) + (last is not None)  # the higher bids, and Liar once a bid stands
    return (1.0 / legal,) * legal


# The opponents whose move reads only their own dice and the standing bid, by name: the exact best
# response to them (liars_dice_oracle.py) needs no table of every information state.
MARKOV: dict[str, Callable[[tuple[int, ...], int | None, int], Sequence[float]]] = {"random": uniform_probs, "heuristic": heuristic_probs}


def _rolls_and_bids(state: Any) -> tuple[list[int], list[tuple[int, int]]]:
    """The dice rolled so far (faces 1-6, in OpenSpiel's order: player 0's first) and the bids made,
    as (player, action), of an OpenSpiel Liar's dice ``state``."""
    rolls, bids = [], []
    for h in state.full_history():
        if h.player < 0:
            rolls.append(h.action + 1)
        else:
            bids.append((h.player, h.action))
    return rolls, bids


@functools.cache
def reads_no_dice(spec: str, name: str) -> bool:
    """The policy ``MARKOV[name]`` moves alike whatever its dice (the random player): its bids tell nothing
    about them, and the best response to it depends on our dice and the standing bid alone."""
    players, numdice = shape(spec)
    total, policy = players * numdice, MARKOV[name]
    rolls = list(itertools.combinations_with_replacement(range(1, FACES + 1), numdice))
    return all(len({tuple(policy(hand, last, total)) for hand in rolls}) == 1 for last in (None, *range(liar_action(total))))

LIARS_DICE = Dice()


def _die(draw: ImageDraw.ImageDraw, x: int, y: int, side: int, face: int | None) -> None:
    """A die with its pips, or a hidden one (a dark cup with a question mark)."""
    if face is None:
        draw.rounded_rectangle(
            (x, y, x + side, y + side), radius=side // 6, fill=(60, 40, 30), outline=(0, 0, 0), width=max(1, side // 24)
        )
        draw.text((x + side // 2, y + side // 2), "?", fill=(230, 210, 160), font=font(max(6, side // 2), bold=True), anchor="mm")
        return
    draw.rounded_rectangle(
        (x, y, x + side, y + side), radius=side // 6, fill=(250, 250, 245), outline=(0, 0, 0), width=max(1, side // 24)
    )
    spots = {
        1: [(1, 1)],
        2: [(0, 0), (2, 2)],
        3: [(0, 0), (1, 1), (2, 2)],
        4: [(0, 0), (0, 2), (2, 0), (2, 2)],
        5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    }
    pips = spots.get(face, [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)])
    r = max(1, side // 10)
    colour = (190, 20, 20) if face == WILD else (0, 0, 0)  # the wild face in red
    for cx, cy in pips:
        px, py = x + side * (1 + 2 * cx) // 6, y + side * (1 + 2 * cy) // 6
        draw.ellipse((px - r, py - r, px + r, py + r), fill=colour)


def dice_image(view: DiceSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
    """The table as ``view.seat`` sees it: the opponents' dice hidden (shown after the call) at the
    top, each opponent's apart and named with more than one, its own at the bottom, and every bid
    in the middle, ours in yellow, the last one large (with more than two players each bid is
    prefixed with its bidder's number)."""
    height, width = size
    image = Image.new("RGB", (width, height), (30, 70, 120))
    draw = ImageDraw.Draw(image)
    unit = min(width, height)
    n = len(view.dice)
    opponents = [p for p in range(view.players) if p != view.seat]
    count = len(opponents) * n + (len(opponents) - 1)  # dice on the top row and a die's gap between opponents
    side = min(unit // 6, int(width * 0.9) // max(1, count + (count - 1) // 3))
    small = font(max(6, unit // 20))

    def row(y: int, dice: Sequence[int | None], x: int) -> int:
        for face in dice:
            _die(draw, x, y, side, face)
            x += side + side // 3
        return x

    mine_x = (width - n * side - (n - 1) * side // 3) // 2
    top = height // 30 + (unit // 18 if view.players > 2 else 0)
    x = (width - count * side - (count - 1) * side // 3) // 2
    for p in opponents:
        if view.players > 2:
            draw.text((x + (n * side + (n - 1) * side // 3) // 2, height // 30), f"player {p}", fill=(255, 255, 255), font=small, anchor="mt")
        x = row(top, view.shown[p] if view.shown else (None,) * n, x) + side
    row(height - height // 30 - side, view.dice, mine_x)
    x0, y = width // 20, top + side + unit // 30
    x = x0
    for k, (player, action) in enumerate(view.moves):
        label = move_name(action, view.total)
        if view.players > 2:
            label = f"{'you' if player == view.seat else player}:{label}"
        colour = (250, 220, 80) if player == view.seat else (255, 255, 255)
        last = k == len(view.moves) - 1
        f = font(max(8, unit // 11), bold=True) if last else small
        w = int(draw.textlength(label, font=f)) + unit // 25
        if x + w > width - width // 20:
            x, y = x0, y + unit // 16
        draw.text((x, y), label, fill=colour, font=f)
        x += w
    if view.result is not None:
        draw.text(
            (width // 2, height - height // 30 - side - unit // 14),
            "you won" if view.result > 0 else "you lost" if view.result < 0 else "no part in it",
            fill=(255, 255, 255),
            font=font(max(6, unit // 16), bold=True),
            anchor="mm",
        )
    return to_array(image)


class LiarsDice(SpielView):
    """Liar's dice against built-in opponents, on OpenSpiel's ``liars_dice``.

    ## Description
    OpenSpiel's ``liars_dice`` plays the rules and pays the result (+1 to the winner, -1 to the
    loser): each player rolls its dice in secret; players bid in turn ``q-f`` ("at least q of
    all dice show face f"; a 6 is wild and counts as any face, and a bid on 6 counts only sixes),
    each higher than the last (more dice, or as many and a higher face), until one calls
    ``liar``: the dice are shown and the bid's maker wins if it holds, the challenger if not.
    With three players (level 2) the game is :mod:`.liars_dice_rules` (OpenSpiel's rules; its
    ``liars_dice`` takes two players only): the two in the challenge win and lose 1, the third
    gets 0. The seed draws your seat (player 0 bids first), the dice (chance nodes, sampled with
    the env's RNG) and the opponents' moves. The opponents' dice stay hidden (drawn as cups, named
    nowhere) until someone calls liar.

    Opponents: uniformly random; a heuristic that reads only its own information state (it values
    calling by the chance the standing bid is false and each raise by the chance it is true, its
    own dice known and the others counted as fair dice, as if the game ended with its move, and
    plays the best: it never bluffs); and, with one die each, the equilibrium: OpenSpiel's CFR+
    average policy after 1000 iterations (``spiel_cfr.py``, ``assets/liars_dice_1_cfr.json.gz``,
    24576 information states), whose exploitability (``pyspiel.exploitability``) is 1.3e-4. With
    two dice no equilibrium is computed: the game has 2^24 bid sequences per roll.

    The oracle is the exact best response to the opponents' policy at every level, the move of
    the highest expected return at our information state. With one die and two players it is
    OpenSpiel's (``pyspiel.TabularBestResponse`` over the opponent's policy at every information
    state, shipped in ``assets/liars_dice_1_br.json.gz``); elsewhere :mod:`.liars_dice_oracle`
    computes it (the random and heuristic players read only their dice and the standing bid, so
    a search over the bids with our belief about their dice is exact; it gives OpenSpiel's values
    at one die). Its expected return, over the seats: one die, +0.781 against random, +0.437
    against the heuristic, +0.0001 against the equilibrium (whose game value is 0 over both
    seats); two dice, +0.919 against random and +0.642 against the heuristic; three players,
    +0.779 against random and +0.457 against the heuristic. With three players the other two
    can end the game before your first move (one calls the other's opening bid; 19% of games
    against random, 2% against the heuristic when you bid last): such a game is dealt again, so
    every episode gives you a move, and the figures are over those games (with ``duplicate``
    the new dice come from the deal's stream, so that seat's game leaves the pair). The dice are chance,
    so ``optimal_steps`` is -1 (``CHANCE``).

    Decisions: exact. ``optimal_actions`` are the best responses to the opponents' known policy at
    your information state, ``values`` each legal move's expected return on the reward variant's
    scale (the game's return in ``native``), computed by an expectimax over the dice you cannot see,
    weighted by the chance that the deal and the opponents' policy made the moves seen, the same
    values as OpenSpiel's ``TabularBestResponse`` (against CFR+ a search of the whole public tree of
    bids, once per seat, :class:`~.liars_dice_oracle.TabularDiceResponse`; against the random and
    heuristic players :mod:`.liars_dice_oracle`'s search, exact at every level); the oracle's move
    is one of them (with ``sparse``, which pays wins only, not always with three players: the oracle
    maximises the native return). ``steps_to_go`` is -1 (chance); feature ``bids`` (the bids made so
    far). Within a hand's length of the step limit, where a stalled hand is forfeited, there are
    none.

    ## Observation
    - ``image``: your dice face up, the opponents' as cups (face up after the call), every bid in
      order (yours in yellow, the standing one large; with three players each named by bidder).
    - ``text``: the same in words; in ``image`` mode only the step's feedback.
    - ``mission``: the rules and the goal.
    - ``actions``: OpenSpiel's legal moves: every higher bid ``q-f`` and, once a bid stands, ``liar``.

    ## Actions
    A bid ``q-f`` (quantity, face) higher than the standing one, or ``liar`` (``challenge``,
    ``bluff`` and ``call liar`` mean ``liar``).

    ## Rewards
    ``native``: OpenSpiel's, +1 for a win, -1 for a loss (0 with three players when you took no
    part in the challenge), 0 before the call; ``sparse``: 1 for a win only; ``penalty``:
    ``native`` with -0.1 per invalid action. ``info["score"]`` is the game's return (+1, -1, 0).
    A game stalled for ``STEP_LIMIT`` (40) steps, the registered step limit, only possible with
    invalid moves, is truncated and scored as a loss (``forfeit``: -1 in ``native``).

    ## Levels
    Level 0: one die each; level 1: two dice each; level 2: three players, one die each (two
    opponents of the id's kind). The CFR opponent has level 0 only. OpenSpiel allows more dice
    and faces, but the bid list grows by 12 per die.

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

    GAME: ClassVar[SpielGame] = LIARS_DICE
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPECS[0], "random", "one die each"),
        SpielLevel(SPECS[1], "random", "two dice each"),
        SpielLevel(THREE_PLAYERS, "random", "one die each, two opponents"),
    )
    REWARDS: ClassVar = {
        "native": {"move": 0.0, "won": 1.0, "lost": -1.0, "tie": 0.0, "forfeit": -1.0, "invalid": 0.0},
        "sparse": {"move": 0.0, "won": 1.0, "lost": 0.0, "tie": 0.0, "forfeit": 0.0, "invalid": 0.0},
        "penalty": {"move": 0.0, "won": 1.0, "lost": -1.0, "tie": 0.0, "forfeit": -1.0, "invalid": -0.1},
    }
    REWARD_ALIASES: ClassVar = {"openspiel": "native"}
    SYNONYMS: ClassVar = LIARS_DICE.synonyms
    STEP_LIMIT: ClassVar[int] = 40


class LiarsDiceVsHeuristic(LiarsDice):
    __doc__ = LiarsDice.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPECS[0], "heuristic", "one die each"),
        SpielLevel(SPECS[1], "heuristic", "two dice each"),
        SpielLevel(THREE_PLAYERS, "heuristic", "one die each, two opponents"),
    )


class LiarsDiceVsCFR(LiarsDice):
    __doc__ = LiarsDice.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (SpielLevel(SPECS[0], "cfr", "one die each"),)


class LiarsDiceAEC(SpielAEC):
    """Liar's dice for two or more VLM agents behind PettingZoo's AEC API; hidden dice stay hidden.

    ## Description
    OpenSpiel's ``liars_dice`` plays the rules and pays the result (see :class:`LiarsDice`);
    ``player_0`` bids first, then ``player_1`` and so on; the dice are drawn from the env's RNG.
    With ``players`` above two the rules are :mod:`.liars_dice_rules` (OpenSpiel's, as an
    OpenSpiel Python game; OpenSpiel's own takes two players): the challenge's winner gets +1,
    its loser -1, the others 0.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own dice, every
    opponent's as hidden cups (their number: each rolls as many) until the call, every bid and
    its bidder, the same in words, the rules, and its legal moves when it is its turn (else none).
    Each agent is told each move: "You chose ...", "Your opponent chose ..." (two players) or
    "Player k chose ...".

    ## Action Space
    Free text parsed against the legal moves (bids ``q-f`` and ``liar``). An invalid move changes
    nothing, keeps the turn and pays nothing; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's: +1 to the winner and -1 to the loser at the call (0 to the others), 0 before.

    ## Arguments
    ``level``: 0 (one die each) or 1 (two dice each); ``players``: 2 (default) to 6;
    ``obs_mode``, ``image_size`` (a square side), ``action_format``, ``action_match`` as in
    ``VLMEnv``; ``render_mode`` (``rgb_array`` and ``human`` show the view of the agent to move,
    ``ansi`` its text); ``max_cycles``: steps after which every agent is truncated;
    ``render_fps``: the pace of the ``human`` window. ``oracle_action(agent)`` samples the CFR+
    equilibrium with one die and two players; elsewhere, where no equilibrium is computed, it
    samples the heuristic player (not an equilibrium: exploitable).
    """

    metadata: dict[str, Any] = {**SpielAEC.metadata, "name": "rl4vlm_liars_dice_v0"}
    GAME: ClassVar[SpielGame] = LIARS_DICE
    SPECS: ClassVar[tuple[str, ...]] = SPECS
    EQUILIBRIUM: ClassVar[tuple[str, ...]] = ("cfr", "heuristic")
    PLAYERS: ClassVar[tuple[int, ...]] = tuple(range(2, liars_dice_rules.MAX_PLAYERS + 1))
    MAX_ACTIONS: ClassVar[int] = 2 * FACES * liars_dice_rules.MAX_PLAYERS + 1  # the bids of two dice each, and Liar

    @classmethod
    def game_spec(cls, level: int, players: int) -> str:
        return cls.SPECS[level] if players == 2 else liars_dice_rules.spec(players, level + 1)

    def _oracle_move(self, agent: str) -> str:
        if self.players == 2:
            return super()._oracle_move(agent)
        legal = self.state.legal_actions()  # no equilibrium computed: the heuristic player, sampled
        move = sample(self._oracle_rng, legal, heuristic(self.state.information_state_string(), legal))
        return self.GAME.action_name(move, self.spec)


def liars_dice_env(**kwargs: Any) -> LiarsDiceAEC:
    """Liar's dice (OpenSpiel's ``liars_dice``) with VLM observations and hidden dice; ``players``
    (default 2) seats that many agents."""
    return LiarsDiceAEC(**kwargs)
