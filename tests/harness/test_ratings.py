"""Ranks that mean strength (issue 34): poker matches ranked by chips in the order of the players'
exact expected chips, standings that no game order changes, and intervals that resample seeds."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl4vlm_gym.harness import matches
from rl4vlm_gym.harness.expected import field_values
from rl4vlm_gym.harness.ratings import bradley_terry, chip_means, openskill_average, standings

POOL = ["random", "always-raise", "cfr", "br"]


def _match(game: str, seeds: range, folder: Path) -> tuple[list[dict[str, Any]], dict[str, float]]:
    spec = matches.game_spec(game)
    players = [matches.parse_player(n, spec) for n in POOL]
    records = matches.run_matches(spec, players, seeds, folder, game_kwargs={"obs_mode": "text"})
    exact = field_values(game, {p.label: matches.player_policy(spec, p) for p in players})
    return records, exact


def _per_seed(records: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Each player's mean chips per game on each seed (6 games a seed: 3 opponents, 2 seats)."""
    seeds = sorted({r["seed"] for r in records})
    at = {s: i for i, s in enumerate(seeds)}
    per = {p: np.zeros(len(seeds)) for p in POOL}
    for r in records:
        for p, x in zip(r["players"], r["returns"], strict=True):
            per[p][at[r["seed"]]] += x / 6
    return per


def _same_in_every_order(records: list[dict[str, Any]], payoff: str, orders: int = 20) -> dict[str, Any]:
    table = standings(records, POOL, payoff=payoff)
    for k in range(orders):
        shuffled = list(records)
        random.Random(k).shuffle(shuffled)
        assert standings(shuffled, POOL, payoff=payoff) == table  # identical, intervals included
    return table


def test_a_kuhn_match_ranks_by_exact_expected_chips_in_every_order(tmp_path: Path) -> None:
    # Exact chips per game against the field (both seats, every opponent): br +0.1882, cfr +0.1056,
    # always-raise +0.0324, random -0.3261. The closest gaps (0.083 and 0.073) against the sampling
    # error of a difference over 1,000 seeds (per-seed SD about 0.72: SE about 0.023) are over
    # 3 SE each, so the order is the data's, not the seeds' luck. 12,000 games: about 9 s.
    records, exact = _match("kuhn_poker", range(1000), tmp_path)
    assert [round(exact[p], 4) for p in POOL] == [-0.3261, 0.0324, 0.1056, 0.1882]
    order = sorted(POOL, key=lambda p: -exact[p])
    per = _per_seed(records)
    for better, worse in zip(order, order[1:], strict=False):
        diff = per[better] - per[worse]
        assert exact[better] - exact[worse] > 3 * diff.std() / np.sqrt(len(diff))
    table = _same_in_every_order(records, "chips")
    rows = table["ratings"]
    assert [r["player"] for r in rows] == order and table["payoff"] == "chips"
    assert all(r["chips_ci95"][0] <= exact[r["player"]] <= r["chips_ci95"][1] for r in rows)
    by = {r["player"]: r for r in rows}
    assert by["always-raise"]["score"] > by["cfr"]["score"]  # it wins more hands, and fewer chips: hands won would misrank


def test_a_leduc_match_separates_what_its_seeds_can_and_no_order_changes_it(tmp_path: Path) -> None:
    # Exact chips per game against the field: cfr +0.5984, always-raise +0.5660, br +0.4956, random
    # -1.6600. The top three's gaps (0.032 and 0.070) are under one SE of their differences at 200
    # seeds (per-seed SD about 3.7 and 1.4: SE 0.26 and 0.10); ordering them at 3 SE would take
    # about 114,000 seeds (1.4 million games). So a test of reasonable cost can ask only that
    # random is last with its interval clear of the others, that the intervals of the three close
    # ones overlap (the report claims no separation the data lacks), that every exact value lies
    # in its interval, and that no game order changes the standings.
    records, exact = _match("leduc_poker", range(200), tmp_path)
    assert [round(exact[p], 4) for p in POOL] == [-1.66, 0.566, 0.5984, 0.4956]
    rows = _same_in_every_order(records, "chips")["ratings"]
    by = {r["player"]: r for r in rows}
    assert rows[-1]["player"] == "random"
    assert all(by["random"]["chips_ci95"][1] < by[p]["chips_ci95"][0] for p in ("always-raise", "cfr", "br"))
    for a, b in (("cfr", "always-raise"), ("always-raise", "br"), ("cfr", "br")):
        assert by[a]["chips_ci95"][0] < by[b]["chips_ci95"][1] and by[b]["chips_ci95"][0] < by[a]["chips_ci95"][1]
    assert all(r["chips_ci95"][0] <= exact[r["player"]] <= r["chips_ci95"][1] for r in rows)


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
