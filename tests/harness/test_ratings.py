"""Ranks that mean strength (issue 34): poker matches ranked by chips in the order of the players'
exact expected chips, standings that no game order changes, and intervals that resample seeds."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl4vlm_gym.harness import matches
from rl4vlm_gym.harness.aivat import estimator, uniform
from rl4vlm_gym.harness.expected import field_values, pair_values
from rl4vlm_gym.harness.ratings import RANK_BASIS, bradley_terry, chip_means, openskill_average, standings

POOL = ["random", "always-raise", "cfr", "br"]


def _match(game: str, seeds: range, folder: Path, pool: list[str] = POOL) -> tuple[list[dict[str, Any]], dict[str, float]]:
    spec = matches.game_spec(game)
    players = [matches.parse_player(n, spec) for n in pool]
    records = matches.run_matches(spec, players, seeds, folder, game_kwargs={"obs_mode": "text"})
    if pool is not POOL:  # the caller values its own players
        return records, {}
    exact = field_values(game, {p.label: matches.player_policy(spec, p) for p in players})
    return records, exact


def _per_seed(records: list[dict[str, Any]], key: str = "returns") -> dict[str, np.ndarray]:
    """Each player's mean chips per game on each seed (``key``: the raw ``returns`` or their
    ``aivat`` estimates; 6 games a seed: 3 opponents, 2 seats)."""
    seeds = sorted({r["seed"] for r in records})
    at = {s: i for i, s in enumerate(seeds)}
    players = sorted({p for r in records for p in r["players"]})
    per = {p: np.zeros(len(seeds)) for p in players}
    for r in records:
        for p, x in zip(r["players"], r[key], strict=True):
            per[p][at[r["seed"]]] += x / 6
    return per


def _same_in_every_order(records: list[dict[str, Any]], payoff: str, orders: int = 20) -> dict[str, Any]:
    table = standings(records, POOL, payoff=payoff)
    for k in range(orders):
        shuffled = list(records)
        random.Random(k).shuffle(shuffled)
        assert standings(shuffled, POOL, payoff=payoff) == table  # identical, intervals included
    return table


@pytest.mark.parametrize(
    ("game", "values"),
    [
        # Exact chips per game against the field (both seats, every opponent). Kuhn's closest gaps
        # are 0.083 and 0.073 chips against a raw per-seed SD of about 0.72 (1,000 seeds for 3 SE);
        # Leduc's are 0.032 (cfr over always-raise) and 0.070 against raw per-seed SDs of about 3.7
        # and 1.4: ordering them by raw chips at 3 SE takes about 114,000 seeds (1.4 million games).
        ("kuhn_poker", [-0.3261, 0.0324, 0.1056, 0.1882]),
        ("leduc_poker", [-1.66, 0.566, 0.5984, 0.4956]),
    ],
)
def test_a_poker_match_ranks_by_exact_expected_chips_in_every_order(game: str, values: list[float], tmp_path: Path) -> None:
    # The issue's Done-when. The four players' move distributions are all known to the harness
    # (the built-ins' policy; the random agent's uniform draw), so AIVAT corrects every node of
    # every game, chance and decisions, with the values of the seating's own policies: each
    # game's estimate is the exact expected chips of its seating, whatever the cards and draws
    # (per-seed SD of the differences: 0 against 3.7 raw in Leduc). 100 seeds (1,200 games) then
    # order them, every gap over 3 SE of its corrected per-seed differences; about 1.5 s a game.
    records, exact = _match(game, range(100), tmp_path)
    assert [round(exact[p], 4) for p in POOL] == values
    pairs = pair_values(
        game, {p: matches.player_policy(matches.game_spec(game), matches.parse_player(p, matches.game_spec(game))) for p in POOL}
    )
    for r in records:  # every node corrected: the estimate is the seating's exact value, every game
        assert r["aivat_nodes"] >= r["num_steps"] + 2  # the deal and every move (and Leduc's public card)
        assert r["aivat"] == pytest.approx(pairs[tuple(r["players"])], abs=1e-6)  # (OpenSpiel's walk renormalises the rows)
    order = sorted(POOL, key=lambda p: -exact[p])
    raw, corrected = _per_seed(records), _per_seed(records, "aivat")
    for better, worse in zip(order, order[1:], strict=False):
        diff = corrected[better] - corrected[worse]
        assert exact[better] - exact[worse] > 3 * diff.std() / np.sqrt(len(diff))
        assert diff.std() < 1e-6 < 0.1 < (raw[better] - raw[worse]).std()
    table = _same_in_every_order(records, "chips")
    assert table["chip_estimator"] == "aivat" and table["aivat_games"] == len(records) and "AIVAT" in table["rank_basis"]
    rows = table["ratings"]
    assert [r["player"] for r in rows] == order and table["payoff"] == "chips"
    assert all(r["chips"] == pytest.approx(exact[r["player"]], abs=1e-6) for r in rows)
    assert all(r["chips_ci95"][0] - 1e-6 <= exact[r["player"]] <= r["chips_ci95"][1] + 1e-6 for r in rows)
    by = {r["player"]: r for r in rows}
    assert by["always-raise"]["score"] > by["cfr"]["score"]  # it wins more hands, and fewer chips: hands won would misrank
    if game == "leduc_poker":  # the raw chips of the same games cannot tell the top three apart: intervals overlap
        for a, b in (("cfr", "always-raise"), ("always-raise", "br")):
            assert (
                by[a]["raw_chips_ci95"][0] < by[b]["raw_chips_ci95"][1]
                and by[b]["raw_chips_ci95"][0] < by[a]["raw_chips_ci95"][1]
            )


@pytest.mark.slow  # many poker matches: ~4 s
def test_aivat_is_unbiased_where_the_harness_does_not_know_a_players_moves(tmp_path: Path) -> None:
    # Two agents whose moves the harness does not know: rnd, the random agent given by its class
    # (uniform, but not declared so: its decisions are not corrected), and prefer (always raises:
    # deterministic, unknown). Only chance and the built-ins' decisions are corrected, so each
    # correction has mean zero and the estimate stays unbiased: every player's corrected mean
    # chips lies within 3 SE of its exact value, and every player's mean correction within 3 SE
    # of 0. Correcting an unknown seat as if it played the baseline (cfr) misses by over 10 SE.
    # 300 seeds of Leduc, 3,600 games: about 3 s. The known players' per-seed SD falls (cfr: 2.47
    # raw, 1.17 corrected); the unknown seats' luck stays (prefer: 1.71 raw, 1.99 corrected).
    pool = ["rnd=rl4vlm_gym.agents.simple:RandomAgent", "prefer", "cfr", "br"]
    records, _ = _match("leduc_poker", range(300), tmp_path, pool)
    spec = matches.game_spec("leduc_poker")
    policies = {
        p.label: matches.player_policy(spec, p, game_kwargs={"obs_mode": "text"})
        for p in (matches.parse_player(n, spec) for n in pool[1:])
    }
    exact = field_values("leduc_poker", {"rnd": uniform, **policies})  # RandomAgent is uniform, exactly
    assert [round(exact[p], 4) for p in ("rnd", "prefer", "cfr", "br")] == [-1.66, 0.566, 0.5984, 0.4956]
    raw, corrected = _per_seed(records), _per_seed(records, "aivat")
    n = len(raw["cfr"])
    for p in exact:
        assert abs(corrected[p].mean() - exact[p]) < 3 * corrected[p].std() / np.sqrt(n), p
        correction = corrected[p] - raw[p]
        assert abs(correction.mean()) < 3 * correction.std() / np.sqrt(n), p
    assert corrected["cfr"].std() < 0.6 * raw["cfr"].std()
    assert all(r["aivat_nodes"] < r["num_steps"] + 2 for r in records if "rnd" in r["players"] or "prefer" in r["players"])


def _kuhn_terminals() -> list[tuple[int, ...]]:
    import pyspiel

    out = []

    def walk(state: Any) -> None:
        if state.is_terminal():
            out.append(tuple(state.history()))
        for a in [] if state.is_terminal() else state.legal_actions():
            walk(state.child(a))

    walk(pyspiel.load_game("kuhn_poker").new_initial_state())
    return out


def test_the_aivat_correction_on_hand_built_kuhn_histories() -> None:
    import pyspiel

    spec = matches.game_spec("kuhn_poker")
    cfr = spec.builtin("cfr").policy
    est = estimator("kuhn_poker()", cfr, key="cfr")
    assert est is not None and est.baseline_name == "cfr"
    known = est.table([cfr, cfr], ["cfr", "cfr"])
    root = known[()]
    assert root == pytest.approx(-1 / 18, abs=1e-4)  # the equilibrium's value to the first seat (the table's: -0.05556)
    terminals = _kuhn_terminals()
    assert len(terminals) == 30
    for z in terminals:
        state = pyspiel.load_game("kuhn_poker").new_initial_state()
        for a in z:
            state.apply_action(a)
        u = state.returns()
        # every node known, valued by the players' own policies: the corrections telescope to
        # the seating's exact value, whatever the cards and moves
        estimate, nodes = est.estimate(u, z, [cfr, cfr], ["cfr", "cfr"])
        assert nodes == len(z) and estimate == pytest.approx([root, -root], abs=1e-12)
        # decisions unknown: only the deal is corrected, by the value of the cards dealt
        table = est.table([None, None], [None, None])
        estimate, nodes = est.estimate(u, z, [None, None], [None, None])
        assert nodes == 2 and estimate == pytest.approx([u[0] - table[z[:2]] + table[()], u[1] + table[z[:2]] - table[()]])
        # a constant value function corrects nothing: the estimate is the chips
        assert est.correction(z, [cfr, cfr], dict.fromkeys(known, 0.7)) == (pytest.approx(0.0, abs=1e-12), len(z))
    assert est.correction((), [cfr, cfr], known) == (0.0, 0)  # no node on the path: nothing corrected


def test_a_match_without_aivat_estimates_ranks_by_raw_chips_and_says_so(tmp_path: Path) -> None:
    from rl4vlm_gym.harness.match_report import write_match_report

    spec = matches.game_spec("kuhn_poker")
    records = matches.run_matches(
        spec, [matches.parse_player(n, spec) for n in POOL], range(5), tmp_path, game_kwargs={"obs_mode": "text"}
    )
    manifest = json.loads((tmp_path / "match.json").read_text())
    assert manifest["aivat"] == {"game": "kuhn_poker()", "baseline": "cfr"}
    assert all(len(r["aivat"]) == 2 and r["aivat_nodes"] >= 4 for r in records)
    import pyspiel

    for r in records:  # the OpenSpiel history recorded is the game played: it ends in its returns
        state = pyspiel.load_game("kuhn_poker").new_initial_state()
        for a in r["spiel_history"]:
            state.apply_action(a)
        assert state.is_terminal() and state.returns() == r["returns"] and r["aivat_nodes"] == len(r["spiel_history"])
    write_match_report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "Ranked by the AIVAT estimate" in text and "| chips per game (AIVAT) | 95% interval | raw chips |" in text
    # an older folder: no estimates; then one game without (a resumed match): raw chips, and the report says why
    original = (tmp_path / "games.jsonl").read_text()
    for drop, why in (
        (len(records), "the games hold no AIVAT estimate"),
        (1, f"only {len(records) - 1} of {len(records)} games"),
    ):
        lines = [json.loads(x) for x in original.splitlines()]
        for r in lines[:drop]:
            r.pop("aivat", None)
        (tmp_path / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
        table = standings(lines, POOL, payoff="chips")
        assert table["chip_estimator"] == "returns" and table["rank_basis"] == RANK_BASIS["chips"]
        assert all(r["chips"] == r["raw_chips"] and r["chips_ci95"] == r["raw_chips_ci95"] for r in table["ratings"])
        write_match_report(tmp_path, tmp_path / "old")
        text = (tmp_path / "old" / "report.md").read_text()
        assert "Ranked by the raw mean chips" in text and why in text
    for damaged in (["x", 0.0], [float("nan"), 0.0], [1.0], True):  # a damaged estimate: the raw chips
        lines = [json.loads(x) for x in original.splitlines()]
        lines[0]["aivat"] = damaged
        assert standings(lines, POOL, payoff="chips")["chip_estimator"] == "returns"


def test_online_openskill_depends_on_the_order_and_the_average_does_not() -> None:
    # Two evenly matched players, 60 games: one online pass puts either first depending on the order.
    rng = np.random.default_rng(3)
    records = []
    for seed in range(30):
        for seat in range(2):
            first = rng.random() < 0.5
            players = ["a", "b"] if seat == 0 else ["b", "a"]
            records.append({"seed": seed, "players": players, "returns": [1.0, -1.0] if first else [-1.0, 1.0], "forfeit": None})
    leaders = set()
    for k in range(20):
        one = openskill_average(records, ["a", "b"], permutations=1, seed=k)
        leaders.add(max(one, key=lambda p: one[p]["mu"]))
    assert leaders == {"a", "b"}  # the old online rank: the order decides
    shuffled = list(reversed(records))
    assert openskill_average(shuffled, ["a", "b"]) == openskill_average(records, ["a", "b"])


def test_chip_intervals_resample_seeds_with_all_their_seats() -> None:
    # Pure seat luck: on each seed the first seat wins x chips, whoever sits there. Both players
    # then make 0 on every seed (they swap seats): a seed resampled whole keeps that, so the
    # interval is [0, 0]; a bootstrap over single games would show a wide one.
    records = []
    for seed, x in enumerate([1.0, 4.0, 2.0, 8.0, 3.0, 5.0]):
        records += [
            {"seed": seed, "players": ["a", "b"], "returns": [x, -x], "scores": [1.0, 0.0]},
            {"seed": seed, "players": ["b", "a"], "returns": [x, -x], "scores": [1.0, 0.0]},
        ]
    out = chip_means(records, ["a", "b", "idle"])
    assert out["a"] == {"mean": 0.0, "ci95": [0.0, 0.0]} and out["b"] == {"mean": 0.0, "ci95": [0.0, 0.0]}
    assert out["idle"] == {"mean": None, "ci95": None}
    records[0]["returns"] = [3.0, -3.0]  # a wins 2 more on seed 0: its sum there is 2, elsewhere 0
    out = chip_means(records, ["a", "b"])
    # a resample drawing seed 0 k times of 6 has mean 2k/12; k >= 3 has probability 0.063, k >= 4 0.009
    assert out["a"]["mean"] == pytest.approx(2 / 12) and out["a"]["ci95"] == pytest.approx([0.0, 0.5])


def test_a_game_of_three_seats_rates_as_its_pairwise_results() -> None:
    # A game of three seats counts as its three pairwise results, by return, a forfeiting seat
    # below every other: the same fit as those pairs played as two-seat games on the same seeds.
    three = [{"seed": s, "players": ["a", "b", "c"], "returns": [2.0, 0.0, -2.0], "forfeit": None} for s in range(4)]
    three.append({"seed": 9, "players": ["b", "c", "a"], "returns": [0.0, 0.0, 0.0], "forfeit": 2})  # a stalled
    pairs = []
    for s in range(4):
        pairs += [
            {"seed": s, "players": ["a", "b"], "returns": [2.0, 0.0], "forfeit": None},
            {"seed": s, "players": ["a", "c"], "returns": [2.0, -2.0], "forfeit": None},
            {"seed": s, "players": ["b", "c"], "returns": [0.0, -2.0], "forfeit": None},
        ]
    pairs += [
        {"seed": 9, "players": ["b", "c"], "returns": [0.0, 0.0], "forfeit": None},
        {"seed": 9, "players": ["b", "a"], "returns": [0.0, 0.0], "forfeit": 1},
        {"seed": 9, "players": ["c", "a"], "returns": [0.0, 0.0], "forfeit": 1},
    ]
    fit = bradley_terry(three, ["a", "b", "c"])
    assert fit == bradley_terry(pairs, ["a", "b", "c"])
    assert fit["a"]["elo"] > fit["b"]["elo"] > fit["c"]["elo"]
    pairs[-1]["forfeit"] = None  # c and a drawn instead: another fit
    assert bradley_terry(pairs, ["a", "b", "c"]) != fit


def test_bradley_terry_is_the_maximum_likelihood_fit() -> None:
    # a beats b 3 times in 4 (with the prior's draw: 3.5 points of 5): p = 0.7, odds 7:3, so the
    # Elo gap is 400 log10(7/3) = 147.19, around the mean of 1000
    records = [
        {"seed": s, "players": ["a", "b"], "returns": [1.0, -1.0] if s else [-1.0, 1.0], "forfeit": None} for s in range(4)
    ]
    fit = bradley_terry(records, ["a", "b"])
    gap = 400 * np.log10(7 / 3)
    assert fit["a"]["elo"] == pytest.approx(1000 + gap / 2, abs=1e-6) and fit["b"]["elo"] == pytest.approx(
        1000 - gap / 2, abs=1e-6
    )
    low, high = fit["a"]["ci95"]  # resamples of 4 seeds: a wins 0 to 4 of them
    assert low < 1000 < fit["a"]["elo"] < high


def test_a_swiss_round_of_a_chip_game_pairs_by_chips() -> None:
    # a won one big pot and lost a small one (1 of 2 hands, +3 chips); b won two small ones (+2)
    records = [
        {"seed": 0, "players": ["a", "c"], "scores": [1.0, 0.0], "returns": [4.0, -4.0]},
        {"seed": 0, "players": ["c", "a"], "scores": [1.0, 0.0], "returns": [1.0, -1.0]},
        {"seed": 0, "players": ["b", "d"], "scores": [1.0, 0.0], "returns": [1.0, -1.0]},
        {"seed": 0, "players": ["d", "b"], "scores": [0.0, 1.0], "returns": [-1.0, 1.0]},
    ]
    labels = ["a", "b", "c", "d"]
    assert matches.swiss_pairings(labels, records, 1)[0] == ("b", "a", 1)  # by hands won: b leads
    assert matches.swiss_pairings(labels, records, 1, chips=True)[0] == ("a", "b", 1)  # by chips: a (+3) leads b (+2)
    records[0]["aivat"], records[1]["aivat"] = [-0.5, 0.5], [0.5, -0.5]  # a's big pot was luck: AIVAT gives it -1
    records[2]["aivat"], records[3]["aivat"] = [1.0, -1.0], [-1.0, 1.0]
    assert matches.swiss_pairings(labels, records, 1, chips=True)[0] == ("b", "c", 1)  # b (+2) leads c (+1), a (-1)


def test_a_shuffled_games_file_gives_the_same_ratings_file(tmp_path: Path) -> None:
    from rl4vlm_gym.harness.match_report import write_match_report

    spec = matches.game_spec("kuhn_poker")
    matches.run_matches(spec, [matches.parse_player(n, spec) for n in POOL], range(5), tmp_path, game_kwargs={"obs_mode": "text"})
    write_match_report(tmp_path, tmp_path / "before")
    lines = (tmp_path / "games.jsonl").read_text().splitlines(keepends=True)
    random.Random(0).shuffle(lines)
    (tmp_path / "games.jsonl").write_text("".join(lines))
    write_match_report(tmp_path, tmp_path / "after")
    assert (tmp_path / "after" / "ratings.json").read_bytes() == (tmp_path / "before" / "ratings.json").read_bytes()
