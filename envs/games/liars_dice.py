"""Liar's dice on OpenSpiel's ``liars_dice``: single-agent views against a built-in opponent
(:class:`LiarsDice`) and both seats behind PettingZoo's AEC API (:func:`liars_dice_env`)."""

from __future__ import annotations

import functools
import gzip
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from rl4vlm_gym.envs.games.spiel import Policy, SpielAEC, SpielGame, SpielLevel, SpielView, uniform
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LIARS_DICE", "LiarsDice", "LiarsDiceAEC", "LiarsDiceVsCFR", "LiarsDiceVsHeuristic", "heuristic", "liars_dice_env"]

SPECS = ("liars_dice(numdice=1)", "liars_dice(numdice=2)")  # the levels: dice per player
POLICY_FILE = Path(__file__).with_name("data") / "liars_dice_1_cfr.json.gz"
BR_FILE = Path(__file__).with_name("data") / "liars_dice_1_br.json.gz"
FACES = 6
WILD = 6  # OpenSpiel's rule: the highest face counts as any other face


def num_dice(spec: str) -> int:
    return 1 if spec == SPECS[0] else 2


def liar_action(dice: int) -> int:
    """OpenSpiel's "Liar" action: after the bids ``q-f`` (action ``(q - 1) * 6 + f - 1``)."""
    return 2 * dice * FACES


def bid(action: int) -> tuple[int, int]:
    """OpenSpiel's bid action as (quantity, face)."""
    return action // FACES + 1, action % FACES + 1


def bid_true_probability(quantity: int, face: int, mine: Sequence[int], unknown: int) -> float:
    """The chance that at least ``quantity`` of all dice show ``face`` (wilds included) given our
    dice ``mine`` and ``unknown`` dice we cannot see."""
    hit = (1 if face == WILD else 2) / FACES
    need = quantity - sum(1 for d in mine if d == face or (d == WILD and face != WILD))
    if need <= 0:
        return 1.0
    return sum(math.comb(unknown, k) * hit**k * (1 - hit) ** (unknown - k) for k in range(need, unknown + 1))


def heuristic(info_state: str, legal: Sequence[int]) -> list[float]:
    """The heuristic player, from its own information state only: it values calling liar by the
    chance the standing bid is false and each raise by the chance it is true (its own dice known,
    the opponent's as fair dice), as if the game ended with its move; it takes the best, liar
    first among equals, else uniform over the best raises of the lowest quantity."""
    tokens = info_state.split()
    mine = [int(c) for c in tokens[0]]
    dice = len(mine)
    bids = [t for t in tokens[1:] if t != "Liar"]
    values = []
    for action in legal:
        if action == liar_action(dice):
            q, f = (int(x) for x in bids[-1].split("-"))
            values.append(1.0 - bid_true_probability(q, f, mine, dice))
        else:
            values.append(bid_true_probability(*bid(action), mine, dice))
    top = max(values)
    best = [a for a, v in zip(legal, values, strict=True) if v >= top - 1e-9]
    if liar_action(dice) in best:
        best = [liar_action(dice)]
    else:
        lowest = min(bid(a)[0] for a in best)
        best = [a for a in best if bid(a)[0] == lowest]
    return [1.0 / len(best) if a in best else 0.0 for a in legal]


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
    every die (the call reveals them) and the result."""

    seat: int
    dice: tuple[int, ...]
    moves: tuple[tuple[int, int], ...]
    other: tuple[int, ...] | None
    result: float | None


def move_name(action: int, dice: int) -> str:
    return "liar" if action == liar_action(dice) else "{}-{}".format(*bid(action))


class Dice(SpielGame):
    title = "Liar's dice"
    synonyms: ClassVar[dict[str, str]] = {"challenge": "liar", "call liar": "liar", "bluff": "liar"}
    max_payoff = 1.0

    def action_name(self, action: int, spec: str) -> str:
        return move_name(action, num_dice(spec))

    def view(self, state: Any, seat: int) -> DiceSeen:
        chance = [h.action + 1 for h in state.full_history() if h.player < 0]
        moves = tuple((h.player, h.action) for h in state.full_history() if h.player >= 0)
        n = len(chance) // 2  # OpenSpiel rolls player 0's dice first
        rolled = (tuple(sorted(chance[:n])), tuple(sorted(chance[n:])))
        over = state.is_terminal()
        return DiceSeen(
            seat, rolled[seat], moves, rolled[1 - seat] if over else None, float(state.returns()[seat]) if over else None
        )

    def text(self, view: DiceSeen) -> str:
        dice = len(view.dice)
        shown = " and ".join(map(str, view.other)) if view.other else "hidden"
        lines = [
            f"Liar's dice with {dice} {'die' if dice == 1 else 'dice'} each. You bid {'first' if view.seat == 0 else 'second'}. "
            f"Your {'die' if dice == 1 else 'dice'}: {' and '.join(map(str, view.dice))}. Opponent's: {shown}.",
            "Bids: "
            + (", ".join(f"{'you' if p == view.seat else 'opponent'} {move_name(a, dice)}" for p, a in view.moves) or "none yet")
            + ".",
        ]
        if view.result is not None:
            caller = "You" if view.moves[-1][0] == view.seat else "Your opponent"
            lines.append(f"{caller} called liar. The game is over: you {'won' if view.result > 0 else 'lost'}.")
        return "\n".join(lines)

    def image(self, view: DiceSeen, size: tuple[int, int]) -> NDArray[np.uint8]:
        return dice_image(view, size)

    def mission(self, spec: str) -> str:
        dice = num_dice(spec)
        return (
            f"Play Liar's dice: each player rolls {dice} {'die' if dice == 1 else 'dice'} in secret. Players take turns to bid "
            "q-f, claiming that at least q of all dice show face f (a 6 is wild: it counts as any face, and a bid on 6 counts only 6s); "
            "each bid must be higher than the last (a higher quantity, or the same quantity and a higher face). Instead of bidding, "
            "write liar to challenge the last bid: the dice are shown, and if the bid holds its bidder wins, else the challenger wins. "
            "Write a bid such as 1-4, or liar."
        )

    def policy(self, name: str, spec: str) -> Policy:
        return POLICIES[name]

    def best_response(self, name: str, spec: str, seat: int) -> Callable[[Any], int] | None:
        if spec != SPECS[0]:
            return None  # two dice: no table of every information state (2^24 bid sequences a roll)
        actions = best_responses()[name]
        return lambda state: actions[state.information_state_string()]

    def fallback(self, spec: str) -> Policy:
        return heuristic


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
    """The table as ``view.seat`` sees it: the opponent's dice hidden (shown after the call) at the
    top, its own at the bottom, and every bid in the middle, ours in yellow, the last one large."""
    height, width = size
    image = Image.new("RGB", (width, height), (30, 70, 120))
    draw = ImageDraw.Draw(image)
    unit = min(width, height)
    side = unit // 6
    n = len(view.dice)
    for row, dice in ((height // 30, view.other or (None,) * n), (height - height // 30 - side, view.dice)):
        for i, face in enumerate(dice):
            _die(draw, (width - n * side - (n - 1) * side // 3) // 2 + i * (side + side // 3), row, side, face)
    small = font(max(6, unit // 20))
    dice_n = len(view.dice)
    x0, y = width // 20, height // 30 + side + unit // 30
    x = x0
    for k, (player, action) in enumerate(view.moves):
        label = move_name(action, dice_n)
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
            "you won" if view.result > 0 else "you lost",
            fill=(255, 255, 255),
            font=font(max(6, unit // 16), bold=True),
            anchor="mm",
        )
    return to_array(image)


class LiarsDice(SpielView):
    """Liar's dice against a built-in opponent, on OpenSpiel's ``liars_dice``.

    ## Description
    OpenSpiel's ``liars_dice`` plays the rules and pays the result (+1 to the winner, -1 to the
    loser): each player rolls its dice in secret; players alternate bids ``q-f`` ("at least q of
    all dice show face f"; a 6 is wild and counts as any face, and a bid on 6 counts only sixes),
    each higher than the last (more dice, or as many and a higher face), until one calls
    ``liar``: the dice are shown and the bid's maker wins if it holds, the challenger if not. The
    seed draws your seat (player 1 bids first), the dice (OpenSpiel's chance nodes, sampled with
    the env's RNG) and the opponent's moves. The opponent's dice stay hidden (drawn as cups,
    named nowhere) until someone calls liar.

    Opponents: uniformly random; a heuristic that reads only its own information state (it values
    calling by the chance the standing bid is false and each raise by the chance it is true, its
    own dice known and the others counted as fair dice, as if the game ended with its move, and
    plays the best: it never bluffs); and, with one die each, the equilibrium: OpenSpiel's CFR+
    average policy after 1000 iterations (``spiel_cfr.py``, ``data/liars_dice_1_cfr.json.gz``,
    24576 information states), whose exploitability (``pyspiel.exploitability``) is 1.3e-4. With
    two dice no equilibrium is computed: the game has 2^24 bid sequences per roll.

    The oracle: with one die, OpenSpiel's exact best response to the opponent's policy
    (``pyspiel.TabularBestResponse`` over the opponent's policy tabulated at every information
    state, shipped in ``data/liars_dice_1_br.json.gz``; it earns +0.78 a game on average over the
    seats against random, +0.44 against the heuristic and +0.0001 against the equilibrium, whose
    game value is 0 over both seats); with two dice, the heuristic player's move
    (not a best response). The dice are chance, so ``optimal_steps`` is -1 (``CHANCE``).

    ## Observation
    - ``image``: your dice face up, the opponent's as cups (face up after the call), every bid in
      order (yours in yellow, the standing one large).
    - ``text``: the same in words; in ``image`` mode only the step's feedback.
    - ``mission``: the rules and the goal.
    - ``actions``: OpenSpiel's legal moves: every higher bid ``q-f`` and, once a bid stands, ``liar``.

    ## Actions
    A bid ``q-f`` (quantity, face) higher than the standing one, or ``liar`` (``challenge``,
    ``bluff`` and ``call liar`` mean ``liar``).

    ## Rewards
    ``native``: OpenSpiel's, +1 for a win, -1 for a loss, 0 before the call; ``sparse``: 1 for a
    win only; ``penalty``: ``native`` with -0.1 per invalid action.

    ## Levels
    The number of dice each player rolls (OpenSpiel's ``numdice``): level 0 one die, level 1 two
    dice (with the CFR opponent one die only). OpenSpiel allows more dice and more faces, but the
    bid list grows to 12 per die.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    GAME: ClassVar[SpielGame] = LIARS_DICE
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPECS[0], "random", "one die each"),
        SpielLevel(SPECS[1], "random", "two dice each"),
    )
    REWARDS: ClassVar = {
        "native": {"move": 0.0, "won": 1.0, "lost": -1.0, "tie": 0.0, "invalid": 0.0},
        "sparse": {"move": 0.0, "won": 1.0, "lost": 0.0, "tie": 0.0, "invalid": 0.0},
        "penalty": {"move": 0.0, "won": 1.0, "lost": -1.0, "tie": 0.0, "invalid": -0.1},
    }
    REWARD_ALIASES: ClassVar = {"openspiel": "native"}
    SYNONYMS: ClassVar = LIARS_DICE.synonyms


class LiarsDiceVsHeuristic(LiarsDice):
    __doc__ = LiarsDice.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (
        SpielLevel(SPECS[0], "heuristic", "one die each"),
        SpielLevel(SPECS[1], "heuristic", "two dice each"),
    )


class LiarsDiceVsCFR(LiarsDice):
    __doc__ = LiarsDice.__doc__
    LEVELS: ClassVar[tuple[SpielLevel, ...]] = (SpielLevel(SPECS[0], "cfr", "one die each"),)


class LiarsDiceAEC(SpielAEC):
    """Liar's dice for two VLM agents behind PettingZoo's AEC API; hidden dice stay hidden.

    ## Description
    OpenSpiel's ``liars_dice`` plays the rules and pays the result (see :class:`LiarsDice`);
    ``player_0`` bids first; the dice are drawn from the env's RNG.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own dice, the
    opponent's hidden until the call, every bid, the same in words, the rules, and its legal
    moves when it is its turn (else none).

    ## Action Space
    Free text parsed against the legal moves (bids ``q-f`` and ``liar``). An invalid move changes
    nothing, keeps the turn and pays nothing; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's: +1 to the winner and -1 to the loser at the call, 0 before.

    ## Arguments
    ``level``: 0 (one die each) or 1 (two dice each); ``obs_mode``, ``image_size`` (a square
    side), ``action_format``, ``action_match`` as in ``VLMEnv``; ``render_mode`` (``rgb_array``
    and ``human`` show the view of the agent to move, ``ansi`` its text); ``max_cycles``: steps
    after which every agent is truncated; ``render_fps``: the pace of the ``human`` window.
    ``oracle_action(agent)`` is the CFR+ equilibrium's most likely move with one die, the
    heuristic player's with two.
    """

    metadata: ClassVar[dict[str, Any]] = {**SpielAEC.metadata, "name": "rl4vlm_liars_dice_v0"}
    GAME: ClassVar[SpielGame] = LIARS_DICE
    SPECS: ClassVar[tuple[str, ...]] = SPECS
    EQUILIBRIUM: ClassVar[tuple[str, ...]] = ("cfr", "heuristic")
    MAX_ACTIONS: ClassVar[int] = 32


def liars_dice_env(**kwargs: Any) -> LiarsDiceAEC:
    """Liar's dice (OpenSpiel's ``liars_dice``) with VLM observations and hidden dice."""
    return LiarsDiceAEC(**kwargs)
