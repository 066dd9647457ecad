"""Games family of RL4VLM Gym: two-player board games on PettingZoo's ``classic`` envs.

The multi-agent envs (PettingZoo's AEC API) are :func:`rl4vlm_gym.envs.games.aec.tictactoe_env`
and :func:`~rl4vlm_gym.envs.games.aec.connect_four_env`; the ids registered here are single-agent
views, one seat against a built-in opponent (extra ``games``).

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
    "Heuristic": "wins when it can, blocks your immediate win, else plays the most central move",
    "Perfect": "plays perfectly (minimax); you can at best draw",
    "Search": "searches the game tree by alpha-beta",
}


def _tictactoe(opponent: str, entry: str) -> EnvCard:
    return EnvCard(
        id=f"rl4vlm/TicTacToe-vs-{opponent}-v0",
        entry_point=f"rl4vlm_gym.envs.games.views:{entry}",
        family="games",
        summary=f"Win Tic-Tac-Toe against an opponent who {_OPPONENTS[opponent]} (PettingZoo's tictactoe_v3).",
        skills=("visual-reading", "planning", "game-play"),
        levels=(f"one opponent ({opponent.lower()}); the seed draws your seat",),
        default_level=0,
        action_grammar="a free square: a column letter a-c and a row number 1-3 from the top, e.g. 'b2'",
        action_examples=("<think>the centre is free</think><action>b2</action>", '{"action": "a1"}', "c3"),
        reward_variants=("native", "sparse", "penalty"),
        success="you get three in a row before the opponent does",
        max_episode_steps=30,
        references=(_PETTINGZOO,),
        extra="games",
    )


def _connect_four(opponent: str, entry: str, levels: tuple[str, ...], default_level: int = 0) -> EnvCard:
    return EnvCard(
        id=f"rl4vlm/ConnectFour-vs-{opponent}-v0",
        entry_point=f"rl4vlm_gym.envs.games.views:{entry}",
        family="games",
        summary=f"Win Connect Four against an opponent who {_OPPONENTS[opponent]} (PettingZoo's connect_four_v3).",
        skills=("visual-reading", "planning", "game-play"),
        levels=levels,
        default_level=default_level,
        action_grammar="a column that is not full, '1' to '7' from the left",
        action_examples=("<think>block the middle</think><action>4</action>", '{"action": "3"}', "5"),
        reward_variants=("native", "sparse", "penalty"),
        success="you get four in a line before the opponent does",
        max_episode_steps=100,
        references=(_PETTINGZOO,),
        extra="games",
    )


CARDS = (
    _tictactoe("Random", "TicTacToe"),
    _tictactoe("Heuristic", "TicTacToeVsHeuristic"),
    _tictactoe("Perfect", "TicTacToeVsPerfect"),
    _connect_four("Random", "ConnectFour", ("one opponent (random); the seed draws your seat",)),
    _connect_four("Heuristic", "ConnectFourVsHeuristic", ("one opponent (heuristic); the seed draws your seat",)),
    _connect_four(
        "Search",
        "ConnectFourVsSearch",
        ("one opponent (alpha-beta search 3 plies deep); the seed draws your seat",),
    ),
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
        levels=(f"one opponent ({name}); the seed draws seat, deal and its moves",),
        default_level=0,
        action_grammar="'pass' or 'bet' (after a bet, pass folds and bet calls)",
        action_examples=("<think>a King wins every showdown</think><action>bet</action>", '{"action": "pass"}', "bet"),
        reward_variants=("native",),
        success="you end the hand with more chips than you started",
        max_episode_steps=10,
        references=("OpenSpiel kuhn_poker and CFR (Lanctot et al. 2019), github.com/google-deepmind/open_spiel", "H. W. Kuhn, A simplified two-person poker, 1950"),
        extra="games",
    )
    for name, entry, who in _KUHN
)


def register() -> None:
    """Register the games envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
