"""The games' entries in the match harness (envs/games/arena.py): the poker built-ins always-raise and
br, a forfeit scored as a fold, players' draws apart from the deal, N-seat matches and a human seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl4vlm_gym.agents import Agent
from rl4vlm_gym.harness import matches
from rl4vlm_gym.harness.exploitability import expected_returns, uniform
from rl4vlm_gym.harness.ratings import rate, standings

pyspiel = pytest.importorskip("pyspiel")

SMALL = {"obs_mode": "text", "image_size": 64}


def _decision_states(game: str) -> list[Any]:
    """Every state of ``game`` where a player moves (Kuhn: 24, Leduc: several thousand)."""
    out, todo = [], [pyspiel.load_game(game).new_initial_state()]
    while todo:
        state = todo.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            out.append(state)
        todo += [state.child(a) for a in state.legal_actions()]
    return out


@pytest.mark.parametrize(
    ("game", "raise_", "seat_values"), [("kuhn_poker", 1, (0.5, 5 / 12)), ("leduc_poker", 2, (2.0875, 2.6597222))]
)
def test_always_raise_and_the_best_response_are_exact_policies(game: str, raise_: int, seat_values: tuple[float, float]) -> None:
    spec = matches.game_spec(game)
    always, br = spec.builtin("always-raise"), spec.builtin("br")
    for state in _decision_states(game)[:3000]:
        legal = state.legal_actions()
        assert always.policy(state) == {raise_ if raise_ in legal else 1: 1.0}  # never folds, raises when it may
        (move,) = br.policy(state)
        assert move in legal
    # what the best response wins against uniform random in each seat: OpenSpiel's BestResponsePolicy value
    # (Leduc: 2.0875 and 2.6597), exactly, through our tree walk of the played policies
    assert expected_returns(game, [br.policy, uniform])[0] == pytest.approx(seat_values[0], abs=1e-6)
    assert expected_returns(game, [uniform, br.policy])[1] == pytest.approx(seat_values[1], abs=1e-6)


class _Env:
    """What the fold rules read: the env's OpenSpiel state."""

    def __init__(self, state: Any) -> None:
        self.state = state


@pytest.mark.parametrize("game", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"])
def test_a_fold_is_scored_as_openspiel_scores_one(game: str) -> None:
    # Wherever the rules let the player to move fold, our rule gives OpenSpiel's returns of that
    # fold (Kuhn: a pass facing a bet; Leduc: action 0) for two players; with three, the folding
    # player loses what it put in exactly as OpenSpiel's fold does (the others share it equally:
    # our convention, where OpenSpiel's hand would go on).
    spec = matches.game_spec("leduc_poker" if game.startswith("leduc") else "kuhn_poker")
    folded = matches._load(spec.folded, "test")
    checked = 0
    for state in _decision_states(game):
        seat = state.current_player()
        facing_bet = "leduc" not in game and any(h.action == 1 for h in state.full_history() if h.player >= 0)
        fold = 0 if (0 in state.legal_actions() and ("leduc" in game or facing_bet)) else None
        ours = folded(_Env(state), seat)
        assert sum(ours) == pytest.approx(0.0) and ours[seat] < 0
        if fold is None:
            continue
        theirs = state.child(fold)
        if theirs.is_terminal() and "players=3" not in game:
            assert ours == pytest.approx(theirs.returns())
            checked += 1
        elif theirs.is_terminal():  # three players: the folder's loss is OpenSpiel's; we split it among the others
            assert ours[seat] == pytest.approx(theirs.returns()[seat])
            checked += 1
        else:  # three players: the game goes on without the folder, whose loss is already fixed
            assert ours[seat] == pytest.approx(-(1 + sum(h.action == 1 for h in state.full_history() if h.player == seat)))
    assert checked >= (12 if "leduc" not in game else 1000)


class Babbles(Agent):
    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        return "I would rather not say"


def test_a_player_that_stalls_a_hand_folds_it_and_ranks_below_random(tmp_path: Path) -> None:
    spec = matches.game_spec("kuhn_poker")
    pool = [matches.parse_player(n, spec) for n in ("random", "cfr", f"junk={__name__}:Babbles")]
    records = matches.run_matches(spec, pool, range(12), tmp_path, game_kwargs={**SMALL, "max_cycles": 6})
    stalled = [r for r in records if "junk" in r["players"]]
    assert stalled and all(r["players"][r["forfeit"]] == "junk" for r in stalled)
    for r in stalled:  # it never moved: it loses its ante, which the other seat wins
        seat = r["forfeit"]
        assert r["env_returns"] == [0.0, 0.0] and r["returns"][seat] == -1.0 and sum(r["returns"]) == 0
        assert "the step limit ended the game" in r["error"]
    rows = {r["player"]: r for r in rate(records, ["random", "cfr", "junk"], payoff="chips")}
    assert rows["junk"]["raw_chips"] == -1.0 and rows["junk"]["raw_chips"] < rows["random"]["raw_chips"]
    # ranked by the AIVAT estimate: the deal's luck corrected up to the stall, -1 in expectation
    assert rows["junk"]["chips_ci95"][0] < -1.0 < rows["junk"]["chips_ci95"][1] and rows["junk"]["chips"] < rows["random"]["chips"]


def test_a_seat_zero_player_does_not_draw_on_the_numbers_that_dealt_its_card() -> None:
    # default_rng([seed, 0]) is the env's own dealing stream (SeedSequence(seed)): a seat-0 player
    # drawing from it bet or passed on the very number that picked its card. The equilibrium bets
    # a Jack with p = 0.2026 and a King with p = 0.6083; over 300 deals of each card it must do so.
    spec = matches.game_spec("kuhn_poker")
    env = spec.make(**SMALL)
    seat = matches._Seat(matches.parse_player("cfr", spec), spec, None)  # type: ignore[arg-type]
    bets: dict[int, list[bool]] = {0: [], 2: []}
    for seed in range(900):
        env.reset(seed=seed)
        seat.begin(env, "player_0", seed, 0)
        card = env.state.history()[0]
        if card in bets:
            bets[card].append(seat.act(env, "player_0", env.observe("player_0")) == "bet")
    assert 0.12 < np.mean(bets[0]) < 0.29 and 0.5 < np.mean(bets[2]) < 0.72


def test_a_three_seat_match_rotates_every_group_through_every_seat(tmp_path: Path) -> None:
    spec = matches.game_spec("kuhn_poker")
    pool = [matches.parse_player(n, spec) for n in ("random", "always-raise", "cfr", "r2=random")]
    games = matches.schedule([p.label for p in pool], [7], 3)
    assert len(games) == 4 * 3  # C(4, 3) groups, each in its 3 rotations
    for group in {frozenset(g[:3]) for g in games}:
        seatings = [g[:3] for g in games if frozenset(g[:3]) == group]
        assert all({s[i] for s in seatings} == group for i in range(3))  # each player in each seat
    records = matches.run_matches(spec, pool, range(40), tmp_path, game_kwargs={**SMALL, "players": 3})
    assert len(records) == 480 and all(len(r["players"]) == 3 and sum(r["returns"]) == pytest.approx(0) for r in records)
    assert not any("aivat" in r for r in records)  # AIVAT's zero-sum correction is for two seats
    manifest, loaded = matches.load_matches(tmp_path)
    assert manifest["seats"] == 3 and manifest["payoff"] == "chips" and len(loaded) == 480
    from rl4vlm_gym.harness.match_report import write_match_report

    rows = standings(records, [p.label for p in pool], payoff="chips")["ratings"]
    assert {r["player"] for r in rows[2:]} == {"random", "r2"}  # the two random players, far below the others
    md, _ = write_match_report(tmp_path)
    assert "3 seats a game" in md.read_text() and "of 480 games played" in md.read_text()
    with pytest.raises(matches.MatchError, match="seats 3 players: give at least 3"):
        matches.run_matches(spec, pool[:2], [0], tmp_path / "two", game_kwargs={**SMALL, "players": 3})
    with pytest.raises(matches.MatchError, match="player 'br' .* computed for 'kuhn_poker' only"):
        matches.run_matches(
            spec, [*pool[:2], matches.parse_player("br", spec)], [0], tmp_path / "br", game_kwargs={**SMALL, "players": 3}
        )


def test_liars_dice_with_three_players_rates_win_loss_by_pairs(tmp_path: Path) -> None:
    spec = matches.game_spec("liars_dice")
    pool = [matches.parse_player(n, spec) for n in ("random", "heuristic", "r2=random")]
    records = matches.run_matches(spec, pool, range(30), tmp_path, game_kwargs={**SMALL, "players": 3})
    assert len(records) == 90 and {tuple(r["players"]) for r in records[:3]} == {
        ("random", "heuristic", "r2"),
        ("heuristic", "r2", "random"),
        ("r2", "random", "heuristic"),
    }
    # OpenSpiel's three-player liars_dice: the loser -1, the winner +1, the third 0
    assert all(sorted(r["returns"]) == [-1.0, 0.0, 1.0] or r["forfeit"] is not None for r in records)
    table = standings(records, ["random", "heuristic", "r2"], payoff="win-loss")
    best = table["ratings"][0]
    assert best["player"] == "heuristic" and best["elo_ci95"][0] > max(r["elo_ci95"][1] for r in table["ratings"][1:])
    with pytest.raises(matches.MatchError, match="with 3 players: exploitability is computed for two players"):
        matches.match_exploitability(tmp_path)
    with pytest.raises(matches.MatchError, match="player 'cfr' .* the cfr policy is computed for 2 players, not 3"):
        matches.run_matches(
            spec, [*pool, matches.parse_player("cfr", spec)], [0], tmp_path / "cfr", game_kwargs={**SMALL, "players": 3}
        )


def _human(tmp_path: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, "-m", "rl4vlm_gym.cli", "match", "kuhn_poker", "-p", "me=human", "-p", "always-raise"]
    cmd += ["--seeds", "1", "--out", str(tmp_path / "m"), "--image-size", "64", *extra]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


def test_a_person_plays_a_seat_from_the_terminal(tmp_path: Path) -> None:
    # Seed 0, both seats: "hmm" is refused by the parser (the turn is kept); "call" is a synonym of bet.
    done = _human(tmp_path, "hmm\ncall\nbet\nbet\nbet\n")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "you (me) play player_0" in out and "you (me) play player_1" in out
    assert "Legal moves: pass, bet" in out and "Your card" in out and "Invalid action" in out
    image = tmp_path / "m" / "human" / "me.png"
    assert f"Image: {image}" in out and image.stat().st_size > 100
    assert "Game over: your return" in out
    records = [json.loads(line) for line in (tmp_path / "m" / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["forfeit"] is None for r in records)
    mine = [s for r in records for s in r["steps"] if r["players"][s["seat"]] == "me"]
    assert mine[0] == {**mine[0], "raw": "hmm", "valid": False} and mine[1]["raw"] == "call" and mine[1]["parsed"] == "bet"


def test_the_end_of_input_forfeits_the_game_and_stops_the_match(tmp_path: Path) -> None:
    done = _human(tmp_path, "", "--obs-mode", "text")
    assert done.returncode == 2
    assert "me (human) ended the input: it forfeits me vs always-raise on seed 0" in " ".join(done.stdout.split())
    assert "no image (the match plays obs_mode text)" in done.stdout
    (record,) = [json.loads(line) for line in (tmp_path / "m" / "games.jsonl").read_text().splitlines()]
    assert record["forfeit"] == 0 and "the input ended (EOF)" in record["error"] and record["returns"] == [-1.0, 1.0]
    again = _human(tmp_path, "bet\nbet\n", "--obs-mode", "text")  # resumes with the next game
    assert again.returncode == 0 and "you (me) play player_1" in again.stdout and "player_0" not in again.stdout.split("===")[1]
