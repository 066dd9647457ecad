"""Games family of RL4VLM Gym: two-player board, card, dice and cooperative games.

The multi-agent envs (PettingZoo's AEC API) are :func:`rl4vlm_gym.envs.games.aec.tictactoe_env`,
:func:`~rl4vlm_gym.envs.games.aec.connect_four_env`, :func:`~rl4vlm_gym.envs.games.kuhn_aec.kuhn_poker_env`,
:func:`~rl4vlm_gym.envs.games.leduc.leduc_env`, :func:`~rl4vlm_gym.envs.games.liars_dice.liars_dice_env`
and :func:`~rl4vlm_gym.envs.games.referential.referential_env`; the ids registered here are
single-agent views, one seat against a built-in opponent or partner (extra ``games``).

``register`` is this family's ``rl4vlm_gym.envs`` entry point. Keep this module light: it runs on
every ``import rl4vlm_gym``, so it imports no env module (the entry point string below is
imported only when an env is made).
"""

from __future__ import annotations

from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

_PETTINGZOO = "PettingZoo classic (Farama Foundation; Terry et al., NeurIPS 2021), pettingzoo.farama.org/environments/classic"
_OPPONENTS = {
    "Random": "plays uniformly random legal moves",
    "Heuristic": "wins when it can, blocks your immediate win, else draws a move with a preference for the centre",
    "Perfect": "plays perfectly (minimax); you can at best draw",
    "Search": "searches the game tree by alpha-beta and draws its move by a softmax over the moves' values",
}
_STRENGTH = {
    # mean score (1 win, 0.5 draw) over 100 games from both seats, by benchmarks/games_variety.py
    ("Heuristic", (3, 3)): ", scoring 0.89 against random",
    ("Perfect", (3, 3)): ", never losing",
    ("Heuristic", (4, 5)): ", scoring 0.88 against random",
    ("Heuristic", (6, 7)): ", scoring 0.99 against random",
    ("Heuristic", (7, 9)): ", scoring 1.00 against random",
    ("Search", (4, 5)): " 3 plies deep, scoring 0.76 against the heuristic and 0.98 against random",
    ("Search", (6, 7)): " 3 plies deep, scoring 0.85 against the heuristic and 1.00 against random",
    ("Search", (7, 9)): " 3 plies deep, scoring 0.96 against the heuristic and 1.00 against random",
}
_SCORE = "info['score'] is 1 for a win, 0.5 for a draw, 0 for a loss"
_C4_SIZES = ((4, 5), (6, 7), (7, 9))  # boards.CONNECT_FOUR_SIZES (this module imports no env module)


def _tictactoe(opponent: str, entry: str, success: str = f"you win ({_SCORE}; only a win succeeds)") -> EnvCard:
    return EnvCard(
        id=f"rl4vlm/TicTacToe-vs-{opponent}-v0",
        entry_point=f"rl4vlm_gym.envs.games.views:{entry}",
        family="games",
        summary=f"Win Tic-Tac-Toe against an opponent who {_OPPONENTS[opponent]} (PettingZoo's tictactoe_v3).",
        skills=("visual-reading", "planning", "game-play"),
        levels=(f"one opponent ({opponent.lower()}{_STRENGTH.get((opponent, (3, 3)), '')}); the seed draws your seat and its moves",),
        default_level=0,
        action_grammar="a free square: a column letter a-c and a row number 1-3 from the top, e.g. 'b2'",
        action_examples=("<think>the centre is free</think><action>b2</action>", '{"action": "a1"}', "c3"),
        reward_variants=("native", "sparse", "penalty"),
        success=success,
        max_episode_steps=30,
        references=(_PETTINGZOO,),
        extra="games",
    )


def _connect_four(opponent: str, entry: str) -> EnvCard:
    return EnvCard(
        id=f"rl4vlm/ConnectFour-vs-{opponent}-v0",
        entry_point=f"rl4vlm_gym.envs.games.views:{entry}",
        family="games",
        summary=f"Win Connect Four against an opponent who {_OPPONENTS[opponent]} (PettingZoo's connect_four_v3; other board sizes by OpenSpiel's connect_four).",
        skills=("visual-reading", "planning", "game-play"),
        levels=tuple(
            f"{rows} rows x {cols} columns"
            + (" (PettingZoo's board)" if (rows, cols) == (6, 7) else " (OpenSpiel's rules, PettingZoo's art)")
            + f"; one opponent ({opponent.lower()}{_STRENGTH.get((opponent, (rows, cols)), '')}); the seed draws your seat and its moves"
            for rows, cols in _C4_SIZES
        ),
        default_level=_C4_SIZES.index((6, 7)),
        action_grammar="a column that is not full, '1' to the number of columns ('7' on the default board) from the left",
        action_examples=("<think>block the middle</think><action>4</action>", '{"action": "3"}', "5"),
        reward_variants=("native", "sparse", "penalty"),
        success=f"you get four in a line before the opponent does ({_SCORE}; only a win succeeds)",
        max_episode_steps=100,
        references=(_PETTINGZOO, "OpenSpiel (Lanctot et al. 2019): connect_four(rows, columns), github.com/google-deepmind/open_spiel"),
        extra="games",
    )


CARDS = (
    _tictactoe("Random", "TicTacToe"),
    _tictactoe("Heuristic", "TicTacToeVsHeuristic"),
    _tictactoe(
        "Perfect",
        "TicTacToeVsPerfect",
        success=f"you do not lose ({_SCORE}; a score of at least 0.5 succeeds: perfect play draws, so a draw is the best result)",
    ),
    _connect_four("Random", "ConnectFour"),
    _connect_four("Heuristic", "ConnectFourVsHeuristic"),
    _connect_four("Search", "ConnectFourVsSearch"),
)

_KUHN = (
    ("Random", "KuhnPoker", "a uniformly random opponent"),
    ("CFR", "KuhnPokerVsCFR", "the equilibrium opponent (OpenSpiel's CFR)"),
)
CARDS += tuple(
    EnvCard(
        id=f"rl4vlm/KuhnPoker-vs-{name}-v0",
        entry_point=f"rl4vlm_gym.envs.games.kuhn:{entry}",
        family="games",
        summary=f"Win chips at Kuhn poker against {who}; its card stays hidden (OpenSpiel's kuhn_poker).",
        skills=("visual-reading", "game-play", "hidden-information"),
        levels=(
            f"one opponent ({name}), three cards; the seed draws seat, deal and its moves",
            f"two opponents ({name}), four cards (Jack to Ace); the seed draws seat, deal and their moves",
        ),
        default_level=0,
        action_grammar="'pass' or 'bet' (after a bet, pass folds and bet calls)",
        action_examples=("<think>a King wins every showdown</think><action>bet</action>", '{"action": "pass"}', "bet"),
        reward_variants=("native",),
        success="you end the hand with more chips than you started (the score, info['score'], is the chips won: success is a score above 0; a hand stalled to the step limit scores as a fold)",
        max_episode_steps=10,
        references=("OpenSpiel kuhn_poker and CFR (Lanctot et al. 2019), github.com/google-deepmind/open_spiel", "H. W. Kuhn, A simplified two-person poker, 1950"),
        extra="games",
    )
    for name, entry, who in _KUHN
)

_OPENSPIEL = "OpenSpiel (Lanctot et al. 2019), github.com/google-deepmind/open_spiel"
_LEDUC = (
    ("Random", "LeducHoldem", "a uniformly random opponent"),
    ("CFR", "LeducHoldemVsCFR", "the equilibrium opponent (OpenSpiel's CFR+)"),
)
CARDS += tuple(
    EnvCard(
        id=f"rl4vlm/LeducHoldem-vs-{name}-v0",
        entry_point=f"rl4vlm_gym.envs.games.leduc:{entry}",
        family="games",
        summary=f"Win chips at Leduc hold'em against {who}; its card stays hidden (OpenSpiel's leduc_poker).",
        skills=("visual-reading", "game-play", "hidden-information"),
        levels=(f"one opponent ({name}); the seed draws seat, deal and its moves",),
        default_level=0,
        action_grammar="'fold', 'call' or 'raise' among the legal moves listed ('check' means call, 'bet' raise)",
        action_examples=("<think>a pair with the public card</think><action>raise</action>", '{"action": "call"}', "fold"),
        reward_variants=("native", "penalty"),
        success="you end the hand with more chips than you started (the score, info['score'], is the chips won: success is a score above 0; a hand stalled to the step limit scores as a fold)",
        max_episode_steps=20,
        references=(f"{_OPENSPIEL}: leduc_poker, CFR+ and exact best responses", "F. Southey et al., Bayes' bluff: opponent modelling in poker, UAI 2005"),
        extra="games",
    )
    for name, entry, who in _LEDUC
)

_LIARS_DICE = (
    ("Random", "LiarsDice", "a uniformly random opponent", ("one die each", "two dice each", "one die each, two opponents")),
    (
        "Heuristic",
        "LiarsDiceVsHeuristic",
        "an opponent who bids and calls by the odds of its own dice",
        ("one die each", "two dice each", "one die each, two opponents"),
    ),
    ("CFR", "LiarsDiceVsCFR", "the equilibrium opponent (OpenSpiel's CFR+)", ("one die each",)),
)
CARDS += tuple(
    EnvCard(
        id=f"rl4vlm/LiarsDice-vs-{name}-v0",
        entry_point=f"rl4vlm_gym.envs.games.liars_dice:{entry}",
        family="games",
        summary=f"Win Liar's dice against {who}; its dice stay hidden until the call (OpenSpiel's liars_dice).",
        skills=("visual-reading", "game-play", "hidden-information", "probabilistic-reasoning"),
        levels=tuple(f"{dice}; the seed draws seat, dice and the opponents' moves" for dice in levels),
        default_level=0,
        action_grammar="a bid 'q-f' higher than the last (at least q dice show face f; 6 is wild), or 'liar' to challenge",
        action_examples=("<think>I hold a 4 and a 6</think><action>2-4</action>", '{"action": "liar"}', "1-3"),
        reward_variants=("native", "sparse", "penalty"),
        success="you win the challenge (the score, info['score'], is the game's return, +1, -1 or 0 when another pair is in the challenge: success is a score above 0; a game stalled to the step limit scores -1)",
        max_episode_steps=40,
        references=(f"{_OPENSPIEL}: liars_dice, CFR+ and exact best responses",),
        extra="games",
    )
    for name, entry, who, levels in _LIARS_DICE
)

_REFERENTIAL_LEVELS = (
    "3 candidates varying in colour and shape",
    "4 candidates varying in size, colour and shape",
    "6 candidates varying in size, colour and shape",
)
_LAZARIDOU = "A. Lazaridou, A. Peysakhovich, M. Baroni, Multi-agent cooperation and the emergence of (natural) language, ICLR 2017"
CARDS += (
    EnvCard(
        id="rl4vlm/ReferentialGame-Listener-v0",
        entry_point="rl4vlm_gym.envs.games.referential:ReferentialListener",
        family="games",
        summary="Cooperative referential game, as the listener: a built-in speaker describes a target shape; pick it among candidates.",
        skills=("visual-reading", "communication", "cooperation"),
        levels=_REFERENTIAL_LEVELS,
        default_level=0,
        action_grammar="the number of a candidate, '1' to 'n'",
        action_examples=("<think>only one green triangle</think><action>2</action>", '{"action": "3"}', "1"),
        reward_variants=("native", "penalty"),
        success="you pick the target",
        max_episode_steps=5,
        references=(_LAZARIDOU, "D. Lewis, Convention, 1969 (signalling games)"),
        extra="games",
    ),
    EnvCard(
        id="rl4vlm/ReferentialGame-Speaker-v0",
        entry_point="rl4vlm_gym.envs.games.referential:ReferentialSpeaker",
        family="games",
        summary="Cooperative referential game, as the speaker: describe the framed target so that a built-in literal listener picks it.",
        skills=("visual-reading", "communication", "cooperation"),
        levels=_REFERENTIAL_LEVELS,
        default_level=0,
        action_grammar="a phrase of one word or none per attribute, in the order size, colour, shape, from the listed vocabulary",
        action_examples=("<think>two triangles, one green</think><action>green triangle</action>", '{"action": "large square"}', "red"),
        reward_variants=("native", "penalty"),
        success="the listener picks the target",
        max_episode_steps=5,
        references=(_LAZARIDOU, "D. Lewis, Convention, 1969 (signalling games)"),
        extra="games",
    ),
)


_OPENSPIEL_TEXT = (
    # (id name, class, OpenSpiel name, levels, grammar, examples, skills, max steps)
    (
        "Goofspiel", "Goofspiel", "goofspiel", ("4 cards each", "5 cards each", "6 cards each"),
        "a card of your hand to bid, e.g. '3'", ("<think>bid high for the 4</think><action>4</action>", '{"action": "2"}', "1"),
        ("visual-reading", "game-play", "simultaneous-moves", "probabilistic-reasoning"), 30,
    ),
    (
        "DotsAndBoxes", "DotsAndBoxes", "dots_and_boxes", ("2x2 boxes", "2x3 boxes", "3x3 boxes"),
        "a free line, (h,r,c) horizontal from dot row r, column c, or (v,r,c) vertical from it down",
        ("<think>do not give the third side</think><action>(h,0,0)</action>", '{"action": "(v,1,2)"}', "(h,2,1)"),
        ("visual-reading", "planning", "game-play"), 60,
    ),
    (
        "Pig", "Pig", "pig", ("first to 10 points", "first to 20 points", "first to 30 points"),
        "'roll' or 'stop'", ("<think>a 1 would cost me 12</think><action>stop</action>", '{"action": "roll"}', "roll"),
        ("visual-reading", "game-play", "probabilistic-reasoning"), 200,
    ),
)
_OPENSPIEL_TITLES = {"goofspiel": "Goofspiel", "dots_and_boxes": "Dots and Boxes", "pig": "Pig"}
CARDS += tuple(
    EnvCard(
        id=f"rl4vlm/OpenSpiel-{name}-v0",
        entry_point=f"rl4vlm_gym.envs.games.openspiel_adapter:{entry}",
        family="games",
        summary=f"Win {_OPENSPIEL_TITLES[spiel]}, seen as OpenSpiel's text and a picture of it, against a uniformly random opponent "
        f"(OpenSpiel's {spiel}, through the generic OpenSpiel adapter).",
        skills=skills,
        levels=tuple(f"{label}; the seed draws your seat, chance and the opponent's moves" for label in levels),
        default_level=0,
        action_grammar=grammar,
        action_examples=examples,
        reward_variants=("native", "sparse", "penalty"),
        success="you win (info['score'] is 1 for a win, 0.5 for a draw, 0 for a loss; only a win succeeds)",
        max_episode_steps=steps,
        references=(f"{_OPENSPIEL}: {spiel}",),
        extra="games",
    )
    for name, entry, spiel, levels, grammar, examples, skills, steps in _OPENSPIEL_TEXT
)


def register() -> None:
    """Register the games envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
