"""The games family's decision facts (issue 38): hand-worked best responses and values, an independent
reference for each solver (OpenSpiel's TabularBestResponse, plain expectimax), and the step-limit rule.
The kit's ``decisions`` check (tests/kit) holds the facts to their laws along the oracle's play."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.games.boards import GAMES
from rl4vlm_gym.envs.games.decisions import ChipsReward, SpielResponse, exact_expectimax
from rl4vlm_gym.envs.games.kuhn import KUHN, equilibrium
from rl4vlm_gym.envs.games.opponents import RandomPlayer
from rl4vlm_gym.envs.games.spiel import load


def _dealt(env_id: str, wanted: Callable[[Any], bool], **kwargs: Any) -> Any:
    """The env reset at the first seed whose state ``wanted`` accepts."""
    env = gym.make(env_id, obs_mode="text", **kwargs)
    for seed in range(400):
        env.reset(seed=seed)
        if wanted(env.unwrapped):
            return env
    raise AssertionError("no seed deals that hand")


def test_kuhn_against_random_by_hand() -> None:
    # First to act with the King: a bet is called (+2) or folded to (+1) at even odds, 1.5; a pass is
    # bet into (then we call, +2) or checked back (+1) at even odds, 1.5 too: both are best.
    env = _dealt("rl4vlm/KuhnPoker-vs-Random-v0", lambda u: u.seat == 0 and u._seen().card == 2)
    facts = env.unwrapped.decision()
    assert facts["values"] == pytest.approx({"pass": 1.5, "bet": 1.5}, abs=1e-12)
    assert facts["optimal_actions"] == ["pass", "bet"] and facts["steps_to_go"] == -1 and "chance" in facts["reason"]
    assert facts["features"] == {"card": "King", "facing_bet": 0}
    # With the Jack: a bet is called (-2) or folded to (+1), -0.5; a pass loses 1 (a bet is folded to, a check loses the showdown).
    env = _dealt("rl4vlm/KuhnPoker-vs-Random-v0", lambda u: u.seat == 0 and u._seen().card == 0)
    facts = env.unwrapped.decision()
    assert facts["values"] == pytest.approx({"pass": -1.0, "bet": -0.5}, abs=1e-12) and facts["optimal_actions"] == ["bet"]


def test_kuhn_against_cfr_by_hand() -> None:
    # Second with the Queen, facing a bet: the bettor holds the Jack or the King, each dealt alike, weighted by
    # how often the equilibrium bets each ("0" and "2": the Jack's and the King's opening information states).
    env = _dealt("rl4vlm/KuhnPoker-vs-CFR-v0", lambda u: u.seat == 1 and u._seen().card == 1 and u._seen().history == (1,))
    jack, king = equilibrium()["0"][1], equilibrium()["2"][1]
    call = (2.0 * jack - 2.0 * king) / (jack + king)  # win 2 against the Jack, lose 2 against the King
    facts = env.unwrapped.decision()
    assert facts["values"] == pytest.approx({"pass": -1.0, "bet": call}, abs=1e-12)  # pass folds: the ante is lost
    assert facts["optimal_actions"] == (["bet"] if call > -1.0 else ["pass"])
    assert facts["features"] == {"card": "Queen", "facing_bet": 1}


@pytest.mark.parametrize("name", ["random", "cfr"])
def test_the_values_are_openspiels_best_response_values(name: str) -> None:
    """Over the deal and the opponent's moves, the best of our values at our first move is the value of
    OpenSpiel's exact best response (``TabularBestResponse``), from both seats."""
    import pyspiel

    game, policy = load("kuhn_poker"), KUHN.policy(name, "kuhn_poker")
    table = {}
    for cards in itertools.permutations(range(3), 2):
        for history in ((), (0,), (1,), (0, 1)):
            state = game.new_initial_state()
            for action in (*cards, *history):
                state.apply_action(action)
            key = state.information_state_string()
            table[key] = list(zip(state.legal_actions(), policy(key, state.legal_actions()), strict=True))
    for seat in (0, 1):
        response = SpielResponse(KUHN, "kuhn_poker", name, seat, ChipsReward(1.0, -1.0, 0.0, 1.0))

        def value(state: Any, seat: int = seat, response: SpielResponse = response) -> float:
            if state.is_terminal():
                return float(state.returns()[seat])
            if state.is_chance_node():
                return sum(p * value(state.child(o)) for o, p in state.chance_outcomes())
            if state.current_player() == seat:
                return max(response.action_values(state).values())
            return sum(p * value(state.child(a)) for a, p in table[state.information_state_string()])

        expected = pyspiel.TabularBestResponse(game, seat, table).value(game.new_initial_state().history_str())
        assert value(game.new_initial_state()) == pytest.approx(expected, abs=1e-12)


def _ttt_reference(board: tuple[int, ...], piece: int, payoff: tuple[float, float, float]) -> dict[int, float]:
    """Each move's expected return against the random player, by plain recursion (no memo, no shared code)."""
    game = GAMES["tictactoe"]
    win, draw, loss = payoff

    def after_ours(b: tuple[int, ...]) -> float:
        if game.winner(b):
            return win
        replies = game.legal(b)
        if not replies:
            return draw
        total = 0.0
        for reply in replies:
            then = game.play(b, reply, 3 - piece)
            total += loss if game.winner(then) else draw if not game.legal(then) else max(after_ours(game.play(then, m, piece)) for m in game.legal(then))
        return total / len(replies)

    return {m: after_ours(game.play(board, m, piece)) for m in game.legal(board)}


@pytest.mark.parametrize(("variant", "payoff"), [("native", (1.0, 0.0, -1.0)), ("sparse", (1.0, 0.0, 0.0))])
def test_tictactoe_values_by_hand_and_by_reference(variant: str, payoff: tuple[float, float, float]) -> None:
    # We are X with a1 b1; O holds a2 b2 and threatens c2. c1 wins now (worth a win); every other square
    # leaves O a win among its replies.
    env = _dealt("rl4vlm/TicTacToe-vs-Random-v0", lambda u: u.seat == 1, reward_variant=variant)
    base, game = env.unwrapped, GAMES["tictactoe"]
    for square in ("a1", "a2", "b1", "b2"):
        base._play(game.moves.index(square))
    facts = base.decision()
    assert facts["optimal_actions"] == ["c1"] and facts["values"]["c1"] == payoff[0]
    assert facts["features"] == {"pieces": 4, "can_win": 1, "must_block": 1}
    reference = _ttt_reference(base.board, 1, payoff)
    assert facts["values"] == pytest.approx({game.moves[m]: v for m, v in reference.items()}, abs=1e-12)
    assert base.oracle_action() == "c1" and isinstance(base.opponent, RandomPlayer)


def test_referential_values_by_hand() -> None:
    listener = gym.make("rl4vlm/ReferentialGame-Listener-v0", obs_mode="text", level=2)
    listener.reset(seed=3)
    target = str(listener.unwrapped.round.target_position())
    facts = listener.unwrapped.decision()
    assert facts["optimal_actions"] == [target] and facts["steps_to_go"] == 1
    assert facts["values"] == {str(k): float(str(k) == target) for k in range(1, 7)}
    speaker = gym.make("rl4vlm/ReferentialGame-Speaker-v0", obs_mode="text", level=0)
    speaker.reset(seed=3)
    r = speaker.unwrapped.round
    facts = speaker.unwrapped.decision()
    assert facts["steps_to_go"] == -1 and "chance" in facts["reason"]  # the listener draws among what a message fits
    (colour, shape) = (v for _, v in r.candidates[r.target])
    fits = [c for c in r.candidates if colour in {v for _, v in c}]
    assert facts["values"][colour] == pytest.approx(1.0 / len(fits))  # the colour alone: uniform over what it fits
    assert facts["values"][f"{colour} {shape}"] == 1.0 and f"{colour} {shape}" in facts["optimal_actions"]  # distinct candidates
    assert all(facts["values"][a] == 1.0 for a in facts["optimal_actions"])
    seen = {v for c in r.candidates for _, v in c}
    absent = next(p for p in speaker.unwrapped._actions() if not seen & set(p.split()))
    assert facts["values"][absent] == pytest.approx(1.0 / len(r.candidates))  # fits none: uniform over all


def _expectimax_reference(state: Any, seat: int) -> float:
    """Dots and Boxes against the random opponent, its native return, by plain recursion over OpenSpiel states."""
    if state.is_terminal():
        return float(state.returns()[seat])
    values = [_expectimax_reference(state.child(a), seat) for a in state.legal_actions()]
    return max(values) if state.current_player() == seat else sum(values) / len(values)


def test_dots_and_boxes_endgame_values_are_a_plain_expectimax() -> None:
    env = gym.make("rl4vlm/OpenSpiel-DotsAndBoxes-v0", obs_mode="text", level=0)
    env.reset(seed=5)
    base = env.unwrapped
    for lines in (2, 3):  # 10 lines left: no facts (the bound is 9, TextGame.exact_moves); 9 left: exact
        base.state = base.state.get_game().new_initial_state()
        for action in range(lines):  # the top lines: no box closes, the players alternate
            base.state.apply_action(action)
        base.seat = base.state.current_player()
        facts = base.decision()
        assert (facts["optimal_actions"] is None) == (lines == 2) and facts["features"] == {"legal_moves": 12 - lines}
    while len(base.state.legal_actions()) > 6:  # on to a small endgame
        base.state.apply_action(base.state.legal_actions()[0])
    base.seat = base.state.current_player()
    facts = base.decision()
    names = base._actions()
    expected = {names[i]: _expectimax_reference(base.state.child(a), base.seat) for i, a in enumerate(base.state.legal_actions())}
    assert facts["values"] == pytest.approx(expected, abs=1e-12) and facts["features"] == {"legal_moves": len(names)}
    memo: dict[tuple[str, int], float] = {}
    sparse = exact_expectimax(base.state, base.seat, lambda s: float(s.returns()[base.seat] > 0), memo, {})  # P(win)
    assert all(0.0 <= v <= 1.0 for v in sparse.values()) and memo


@pytest.mark.parametrize(("invalid", "known"), [(6, True), (7, True), (8, False)])
def test_no_facts_within_a_hands_length_of_the_step_limit(invalid: int, known: bool) -> None:
    """Kuhn's hand is forfeited at step 10 (STEP_LIMIT) if it is still on; it takes at most 3 more moves
    (OpenSpiel's max_game_length), so the facts hold through 7 invalid steps and give way at 8."""
    env = _dealt("rl4vlm/KuhnPoker-vs-Random-v0", lambda u: u.seat == 0)
    before = env.unwrapped.decision()
    for _ in range(invalid):
        env.step("shuffle")
    facts = env.unwrapped.decision()
    assert (facts == before) if known else (facts["optimal_actions"] is None and facts["reason"].startswith("near the step limit"))


@pytest.mark.parametrize(("env_id", "level"), [("rl4vlm/LiarsDice-vs-Random-v0", level) for level in range(3)] + [("rl4vlm/KuhnPoker-vs-Random-v0", 0)])
def test_the_features_read_off_the_state_are_the_views(env_id: str, level: int) -> None:
    """``SpielGame.state_features`` (what the facts carry, read off OpenSpiel's state: Liar's dice counts the
    bids without building the view) equals ``features`` of the seat's view, at every state of random play."""
    import numpy as np

    env = gym.make(env_id, obs_mode="text", level=level)
    base, rng = env.unwrapped, np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            assert base.GAME.state_features(base.state, base.seat) == base.GAME.features(base.GAME.view(base.state, base.seat))
            checked += 1
            obs, _, terminated, truncated, _ = env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
            done = terminated or truncated
    assert checked >= 6


@pytest.mark.parametrize("level", [0, 2])
def test_liars_dice_facts_against_random_are_shared_across_bid_sequences_exactly(level: int) -> None:
    """Against the random player (who reads no dice) one kept entry serves every information state with our
    dice and the standing bid (``Dice.decision_key``; the number of bids, the feature, given apart): at every
    state of mixed oracle and random play the kept facts equal the facts solved afresh for that state, and
    some entry served information states with different numbers of bids."""
    import numpy as np

    from rl4vlm_gym.envs.games.liars_dice import reads_no_dice

    assert reads_no_dice("liars_dice(numdice=1)", "random") and not reads_no_dice("liars_dice(numdice=1)", "heuristic")
    env = gym.make("rl4vlm/LiarsDice-vs-Random-v0", obs_mode="text", level=level)
    base, rng = env.unwrapped, np.random.default_rng(level)
    served: dict[Any, set[Any]] = {}
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            facts = base.decision()
            assert facts == base._solve().as_dict()
            key, _ = base.GAME.decision_key("random", base.config.spec, base.state, base.seat)
            served.setdefault(key, set()).add(facts["features"]["bids"])
            move = base.oracle_action() if rng.random() < 0.5 else obs["actions"][int(rng.integers(len(obs["actions"])))]
            obs, _, terminated, truncated, _ = env.step(move)
            done = terminated or truncated
    assert max(len(counts) for counts in served.values()) > 1


@pytest.mark.slow  # the search of the public tree: 0.5 s
def test_liars_dice_against_cfr_searches_the_public_tree_as_the_state_search_does() -> None:
    """TabularDiceResponse (the views' facts against CFR+) against SpielResponse (over OpenSpiel's states)
    at states the opponent's policy reaches, 2 to 5 bids in (below them the state search is quick)."""
    import numpy as np

    from rl4vlm_gym.envs.games.liars_dice import LIARS_DICE, cfr_policy
    from rl4vlm_gym.envs.games.liars_dice_oracle import TabularDiceResponse

    spec, seat, rng = "liars_dice(numdice=1)", 1, np.random.default_rng(0)
    tabular = TabularDiceResponse.of(seat, "cfr", (1.0, -1.0))
    reference = SpielResponse(LIARS_DICE, spec, "cfr", seat, ChipsReward(1.0, -1.0, 0.0, 1.0))
    compared = 0
    for _ in range(300):
        state = load(spec).new_initial_state()
        state.apply_action(int(rng.integers(6)))
        state.apply_action(int(rng.integers(6)))
        bids = int(rng.integers(2, 6))
        while not state.is_terminal() and len(state.history()) < 2 + bids:
            legal = [a for a in state.legal_actions() if a != 12]  # bids only, so that the game goes on
            probs = cfr_policy(state.information_state_string(), legal) if state.current_player() != seat else [1.0] * len(legal)
            if not legal or sum(probs) == 0:
                break
            state.apply_action(int(rng.choice(legal, p=np.array(probs) / sum(probs))))
        if state.is_terminal() or state.current_player() != seat or len(state.history()) < 2 + bids:
            continue
        die, moves = state.history()[seat] + 1, state.history()[2:]
        assert tabular.action_values(die, moves) == pytest.approx(reference.action_values(state), abs=1e-12)
        compared += 1
    assert compared >= 20, compared
