"""The match harness on the games family: round robin with seats swapped, resumable and the same in
two processes, ratings, exploitability against OpenSpiel's best response, reports and hostile input."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rl4vlm_gym.agents import Agent
from rl4vlm_gym.cli import app
from rl4vlm_gym.harness import matches
from rl4vlm_gym.harness.exploitability import PolicyError, exploitability, read_policy, uniform
from rl4vlm_gym.harness.match_report import write_match_report
from rl4vlm_gym.harness.ratings import bradley_terry, cross_table, rate

SMALL = {"obs_mode": "text", "image_size": 64}
CFR_FILE = Path(__file__).resolve().parents[2] / "envs" / "games" / "assets" / "kuhn_cfr.json"
runner = CliRunner()


def players(game: str, *names: str) -> list[matches.PlayerSpec]:
    spec = matches.game_spec(game)
    return [matches.parse_player(n, spec) for n in names]


def test_round_robin_plays_every_pair_on_every_seed_in_both_seats() -> None:
    games = matches.schedule(["a", "b", "c"], [5, 9])
    assert len(games) == 2 * 3 * 2 and len(set(games)) == len(games)
    for a, b, seed in games:
        assert (b, a, seed) in games


def test_a_match_resumes_after_a_kill_and_is_the_same_in_another_process(tmp_path: Path) -> None:
    args = ("tictactoe", ("random", "heuristic", "perfect"), range(3))
    whole = tmp_path / "whole"
    records = matches.run_matches(args[0], players(args[0], *args[1]), args[2], whole, game_kwargs=SMALL)
    assert len(records) == 18 and {r["seed"] for r in records} == {0, 1, 2}
    lines = (whole / "games.jsonl").read_bytes().splitlines(keepends=True)
    # the same games, byte for byte, played by another process
    code = (
        "import sys; from rl4vlm_gym.harness import matches as m; s = m.game_spec('tictactoe'); "
        "m.run_matches('tictactoe', [m.parse_player(n, s) for n in ('random', 'heuristic', 'perfect')], range(3), sys.argv[1], "
        "game_kwargs={'obs_mode': 'text', 'image_size': 64})"
    )
    other = tmp_path / "other"
    subprocess.run([sys.executable, "-W", "ignore", "-c", code, str(other)], check=True, timeout=120)
    assert (other / "games.jsonl").read_bytes() == b"".join(lines)
    # killed while writing game 8: the cut line is dropped, the 7 finished games are kept, not replayed
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "match.json").write_bytes((whole / "match.json").read_bytes())
    (cut / "games.jsonl").write_bytes(b"".join(lines[:7]) + lines[7][:40])
    seen: list[int] = []
    matches.run_matches(
        args[0], players(args[0], *args[1]), args[2], cut, game_kwargs=SMALL, on_game=lambda r, n, t: seen.append(n)
    )
    assert (cut / "games.jsonl").read_bytes() == b"".join(lines)
    assert seen == [7] * 7 + list(range(8, 19))  # 7 read back, 11 played


def test_a_swiss_tournament_pairs_by_points_without_rematches_and_resumes(tmp_path: Path) -> None:
    pool = players("tictactoe", "random", "r2=random", "heuristic", "perfect", "odd=random")
    records = matches.run_matches("tictactoe", pool, [4, 5, 6], tmp_path / "a", game_kwargs=SMALL, kind="swiss")
    assert len(records) == 3 * 2 * 2  # 5 players: two pairings a round, one sits out
    rounds = [records[i : i + 4] for i in (0, 4, 8)]
    assert all({r["seed"] for r in games} == {seed} for games, seed in zip(rounds, (4, 5, 6), strict=True))
    pairs = [frozenset(r["players"]) for r in records[::2]]
    assert len(set(pairs)) == len(pairs)  # no rematch
    assert rounds[0][0]["players"] == ["random", "r2"]  # round 1 in the order given
    assert all("odd" not in r["players"] for r in rounds[0])  # the last sits round 1 out
    # round 2: the leader after round 1 (ties in the order given) opens against one it has not met
    labels = ["random", "r2", "heuristic", "perfect", "odd"]
    points = {p: sum(r["scores"][r["players"].index(p)] for r in rounds[0] if p in r["players"]) for p in labels}
    leader = min(labels, key=lambda p: (-points[p], labels.index(p)))
    assert rounds[1][0]["players"][0] == leader and frozenset(rounds[1][0]["players"]) not in pairs[:2]
    whole = (tmp_path / "a" / "games.jsonl").read_bytes().splitlines(keepends=True)
    cut = tmp_path / "b"
    cut.mkdir()
    (cut / "match.json").write_bytes((tmp_path / "a" / "match.json").read_bytes())
    (cut / "games.jsonl").write_bytes(b"".join(whole[:5]))
    matches.run_matches("tictactoe", pool, [4, 5, 6], cut, game_kwargs=SMALL, kind="swiss")
    assert (cut / "games.jsonl").read_bytes() == b"".join(whole)
    with pytest.raises(matches.MatchError, match="Swiss tournament of other players or seeds"):
        matches.run_matches("tictactoe", pool, [4, 5, 6, 7], cut, game_kwargs=SMALL, kind="swiss")


def test_games_come_from_the_registry_or_any_aec_factory(tmp_path: Path) -> None:
    assert {"tictactoe", "connect_four", "kuhn_poker", "goofspiel", "dots_and_boxes", "pig"} <= {g.name for g in matches.list_games()}
    bare = matches.game_spec("rl4vlm_gym.envs.games.aec:connect_four_env")  # no registration at all
    assert dict(bare.players) == {}
    records = matches.run_matches(bare, players(bare.name, "random", "oracle"), [0], tmp_path, game_kwargs=SMALL)
    assert [r["players"][int(r["scores"][1] == 1.0)] for r in records] == ["oracle", "oracle"]  # alpha-beta beats random


def test_seats_are_swapped_and_seeds_decide_the_games(tmp_path: Path) -> None:
    records = matches.run_matches("kuhn_poker", players("kuhn_poker", "random", "cfr"), [3], tmp_path, game_kwargs=SMALL)
    assert [r["players"] for r in records] == [["random", "cfr"], ["cfr", "random"]]
    assert all(sum(r["returns"]) == 0 and r["scores"] in ([1.0, 0.0], [0.0, 1.0]) for r in records)


def test_adding_a_player_plays_only_its_games(tmp_path: Path) -> None:
    first = matches.run_matches("tictactoe", players("tictactoe", "random", "perfect"), [0, 1], tmp_path, game_kwargs=SMALL)
    old = (tmp_path / "games.jsonl").read_bytes()
    more = matches.run_matches(
        "tictactoe", players("tictactoe", "random", "perfect", "heuristic"), [0, 1], tmp_path, game_kwargs=SMALL
    )
    assert len(first) == 4 and len(more) == 12
    assert (tmp_path / "games.jsonl").read_bytes().startswith(old)
    assert set(json.loads((tmp_path / "match.json").read_text())["players"]) == {"random", "perfect", "heuristic"}


def test_ratings_recover_perfect_over_heuristic_over_random(tmp_path: Path) -> None:
    names = ("random", "heuristic", "perfect")
    records = matches.run_matches("tictactoe", players("tictactoe", *names), range(20), tmp_path, game_kwargs=SMALL)
    rows = rate(records, list(names))
    assert [r["player"] for r in rows] == ["perfect", "heuristic", "random"]
    assert rows[0]["mu"] > rows[1]["mu"] > rows[2]["mu"]
    assert rows[1]["ci95"][0] > rows[2]["ci95"][1]  # heuristic's interval clear of random's
    assert rows[0]["losses"] == 0  # perfect play never loses
    assert rows[0]["elo"] > rows[1]["elo"] > rows[2]["elo"] and rows[1]["elo_ci95"][0] > rows[2]["elo_ci95"][1]
    shuffled = list(reversed(records))
    assert bradley_terry(shuffled, list(names)) == bradley_terry(records, list(names))  # order-free, seeded
    table = cross_table(records, list(names))
    assert table["perfect"]["heuristic"]["games"] == 40 and table["perfect"]["heuristic"]["wins"] >= 1
    assert table["heuristic"]["perfect"]["losses"] == table["perfect"]["heuristic"]["wins"]


def test_a_win_loss_report_ranks_by_bradley_terry_and_an_old_folder_still_reads(tmp_path: Path) -> None:
    matches.run_matches("tictactoe", players("tictactoe", "random", "perfect"), range(3), tmp_path / "t", game_kwargs=SMALL)
    text = write_match_report(tmp_path / "t")[0].read_text()
    assert "Payoff: win 1, draw 0.5, loss 0" in text and "Ranked by Bradley-Terry" in text and "OpenSkill mu" in text
    # a folder written before payoffs and seats were recorded: the registered game's payoff, two seats
    pool = players("kuhn_poker", "random", "cfr")
    matches.run_matches("kuhn_poker", pool, [0], tmp_path / "k", game_kwargs=SMALL)
    manifest = json.loads((tmp_path / "k" / "match.json").read_text())
    del manifest["payoff"], manifest["seats"]
    (tmp_path / "k" / "match.json").write_text(json.dumps(manifest))
    assert matches.load_matches(tmp_path / "k")[0]["payoff"] == "chips"
    assert len(matches.run_matches("kuhn_poker", pool, [0, 1], tmp_path / "k", game_kwargs=SMALL)) == 4  # resumes
    assert "Payoff: chips" in write_match_report(tmp_path / "k")[0].read_text()


@pytest.mark.parametrize(("seats", "problem"), [(1, "seats 1 is not a number of seats"), (2, None), (3, "is not a record of 3")])
def test_a_folder_s_seats_are_checked_against_its_games(tmp_path: Path, seats: int, problem: str | None) -> None:
    matches.run_matches("tictactoe", players("tictactoe", "random", "perfect"), [0], tmp_path, game_kwargs=SMALL)
    manifest = json.loads((tmp_path / "match.json").read_text())
    (tmp_path / "match.json").write_text(json.dumps({**manifest, "seats": seats}))
    if problem is None:
        assert len(matches.load_matches(tmp_path)[1]) == 2
    else:
        with pytest.raises(matches.MatchError, match=problem):
            matches.load_matches(tmp_path)
    with pytest.raises(matches.MatchError, match="a game of 1 seat"):
        matches.schedule(["a", "b"], [0], 1)
    assert len(matches.schedule(["a", "b"], [0], 2)) == 2 and matches.schedule(["a", "b"], [0], 3) == []


def broken_game(**kwargs: Any) -> Any:
    """A game whose rules raise on the first move."""
    from rl4vlm_gym.envs.games.aec import tictactoe_env

    env = tictactoe_env(**kwargs)

    def step(action: Any) -> None:
        raise KeyError("no such square")

    env.step = step
    return env


class Raises(Agent):
    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        raise RuntimeError("out of tokens")


class Babbles(Agent):
    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        return "I would rather not move"


def test_a_player_that_raises_or_stalls_loses_its_games(tmp_path: Path) -> None:
    spec = matches.game_spec("tictactoe")
    pool = [
        matches.parse_player("random", spec),
        matches.parse_player(f"raises={__name__}:Raises", spec),
        matches.parse_player(f"babbles={__name__}:Babbles", spec),
    ]
    records = matches.run_matches(spec, pool, [0], tmp_path, game_kwargs={**SMALL, "max_cycles": 12})
    for r in records:
        loser = r["players"][r["forfeit"]]
        assert loser in ("raises", "babbles") and r["scores"][r["forfeit"]] == 0.0
        if loser == "babbles" and "raises" not in r["players"]:
            assert r["truncated"] and "invalid moves" in r["error"]
    assert any("RuntimeError: out of tokens" in r["error"] for r in records)
    md, html = write_match_report(tmp_path)
    assert "out of tokens" in md.read_text() and "Games with errors" in html.read_text()


def test_the_report_shows_ratings_cross_table_and_exploitability(tmp_path: Path) -> None:
    matches.run_matches("kuhn_poker", players("kuhn_poker", "random", "cfr"), range(4), tmp_path, game_kwargs=SMALL)
    result = matches.match_exploitability(tmp_path)
    assert result["players"]["random"] == pytest.approx(11 / 24)
    assert result["players"]["cfr"] < 1e-3
    md, html = write_match_report(tmp_path)
    text = md.read_text()
    assert "## Ratings" in text and "## Cross-table" in text and "0.4583" in text
    assert "Payoff: chips" in text and "Ranked by the AIVAT estimate of mean chips per game against the field" in text
    assert "| rank | player | chips per game (AIVAT) | 95% interval | raw chips | raw 95% interval |" in text
    assert "OpenSkill" not in text
    saved = json.loads((tmp_path / "ratings.json").read_text())
    assert saved["payoff"] == "chips" and all(len(r["chips_ci95"]) == 2 for r in saved["ratings"])
    assert (tmp_path / "plots" / "cross_table.png").stat().st_size > 1000 and "<svg" in html.read_text()
    assert json.loads((tmp_path / "ratings.json").read_text())["games"] == 8
    (tmp_path / "exploitability.json").write_text('{"players": [1, 2]}')  # damaged: left out, no traceback
    assert _cli("report", str(tmp_path), "--out", str(tmp_path / "again")).exit_code == 0
    assert "## Ratings" in (tmp_path / "again" / "report.md").read_text()
    assert "Exploitability" not in (tmp_path / "again" / "report.md").read_text()


def test_exploitability_of_the_shipped_cfr_policy_and_of_uniform_random() -> None:
    import pyspiel
    from open_spiel.python import policy as spiel_policy
    from open_spiel.python.algorithms.exploitability import nash_conv

    assert exploitability("kuhn_poker", uniform)["exploitability"] == pytest.approx(11 / 24, abs=1e-12)  # Kuhn's known value
    cfr = exploitability("kuhn_poker", read_policy(CFR_FILE))
    assert 0 <= cfr["exploitability"] < 1e-4 and cfr["information_states"] == 12
    game = pyspiel.load_game("leduc_poker")  # NashConv as OpenSpiel computes it, on a policy far from equilibrium
    assert exploitability("leduc_poker", uniform)["nash_conv"] == pytest.approx(nash_conv(game, spiel_policy.UniformRandomPolicy(game)), rel=1e-9)
    assert exploitability("leduc_poker", uniform)["information_states"] == 936  # generic over OpenSpiel names


def test_an_agent_is_asked_at_every_information_state() -> None:
    spec = matches.game_spec("kuhn_poker")
    always_bet = matches.PlayerSpec("bettor", "agent", f"{__name__}:AlwaysBet")
    policy = matches.player_policy(spec, always_bet, game_kwargs=SMALL)
    value = exploitability("kuhn_poker", policy)["exploitability"]
    table = {}
    for card in "012":
        for history in ("", "p", "b", "pb"):
            table[card + history] = [0.0, 1.0]
    assert value == pytest.approx(exploitability("kuhn_poker", table)["exploitability"]) and value == pytest.approx(1 / 3)


class AlwaysBet(Agent):
    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        assert obs["actions"] == ("pass", "bet") and "Your card" in obs["text"]
        return "<action>call</action>" if "Opponent: bet" in obs["text"] else "bet"


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"0": [0.5, 0.5]}, "misses 11"),
        ({"9zz": [1, 0]}, "are not 'kuhn_poker'"),
        (
            {
                **{k: [0.5, 0.5] for k in ("0", "0p", "0b", "0pb", "1", "1p", "1b", "1pb", "2", "2p", "2b", "2pb")},
                "0": [0.9, 0.5],
            },
            "sum to 1.4",
        ),
        (
            {
                **{k: [0.5, 0.5] for k in ("0", "0p", "0b", "0pb", "1", "1p", "1b", "1pb", "2", "2p", "2b", "2pb")},
                "0": [float("nan"), 1],
            },
            "not a finite",
        ),
        (
            {**{k: [0.5, 0.5] for k in ("0", "0p", "0b", "0pb", "1", "1p", "1b", "1pb", "2", "2p", "2b", "2pb")}, "0": [0, 0, 1]},
            "outside",
        ),
        (
            {**{k: [0.5, 0.5] for k in ("0", "0p", "0b", "0pb", "1", "1p", "1b", "1pb", "2", "2p", "2b", "2pb")}, "0": "half"},
            "list of probabilities",
        ),
    ],
)
def test_malformed_policy_tables_are_refused_by_name(table: dict[str, Any], problem: str) -> None:
    with pytest.raises(PolicyError, match=problem):
        exploitability("kuhn_poker", table)


def _cli(*args: str) -> Any:
    return runner.invoke(app, list(args), terminal_width=250)


def test_the_cli_plays_rates_and_reports(tmp_path: Path) -> None:
    result = _cli(
        "match",
        "kuhn_poker",
        "-p",
        "random",
        "-p",
        "eq=cfr",
        "--seeds",
        "2",
        "--out",
        str(tmp_path),
        "--obs-mode",
        "text",
        "--exploitability",
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    assert "exploitability of eq: 0.0001" in result.output and (tmp_path / "report.html").exists()
    # the standings, as ratings.json ranks them, by mean chips with their interval
    ratings = json.loads((tmp_path / "ratings.json").read_text())["ratings"]
    standings = [line for line in result.output.splitlines() if line.startswith("│")]
    assert "standings: AIVAT" in result.output and "chips [95% CI]" in result.output
    assert [line.split("│")[2].strip() for line in standings] == [row["player"] for row in ratings]
    assert f"{ratings[0]['chips']:.3f} [{ratings[0]['chips_ci95'][0]:.3f}," in standings[0]
    listed = _cli("match", "--list")
    assert listed.exit_code == 0 and "kuhn_poker" in listed.output and "heuristic, perfect" in listed.output
    assert "cfr, always-raise, br" in listed.output and "chips" in listed.output and "win-loss" in listed.output
    assert "exploitability 0.458333" in _cli("exploitability", "kuhn_poker", "--policy", str(_uniform_file(tmp_path))).output


def _uniform_file(tmp_path: Path) -> Path:
    path = tmp_path / "uniform.json"
    path.write_text(
        json.dumps({"policy": {k: [0.5, 0.5] for k in ("0", "0p", "0b", "0pb", "1", "1p", "1b", "1pb", "2", "2p", "2b", "2pb")}})
    )
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["match", "no_such_game", "-p", "random", "-p", "random"], "unknown game 'no_such_game'"),
        (["match", "tictactoe", "-p", "random", "-p", "cfr"], "the built-in players of 'tictactoe' are: heuristic, perfect"),
        (["match", "tictactoe", "-p", "random", "-p", "random"], "player labels repeat"),
        (["match", "tictactoe", "-p", "<b>=random", "-p", "perfect"], "player label '<b>' is not valid"),
        (["match", "tictactoe", "-p", "random"], "at least two players"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "-a", "nolabel"], "expected LABEL:KEY=VALUE"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "-a", "perfect:depth=3"], "takes no arguments"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "-a", "ghost:x=1"], "names no player"),
        (["match", "no.such.module:factory", "-p", "random", "-p", "oracle"], "cannot load 'no.such.module:factory'"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "--seeds", "0"], "Invalid value"),
        (["match"], "name a game"),
        (["match", "builtins:dict", "-p", "random", "-p", "r2=random"], "made a dict, not a PettingZoo AEC env"),
        (
            ["match", f"{__name__}:broken_game", "-p", "random", "-p", "r2=random"],
            "raised KeyError: 'no such square' in random vs r2, seed 0; the 0 finished games are saved",
        ),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "--history", "999"], "history"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "--schedule", "knockout"], "schedule 'knockout' is unknown"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "-g", "max_cycles=-3"], "max_cycles=-3 is not valid"),
        (["match", "tictactoe", "-p", "random", "-p", "perfect", "-g", "colour=red"], "unexpected keyword argument 'colour'"),
        (["exploitability", "no_such_poker", "--policy", "{policy}"], "OpenSpiel has no game 'no_such_poker'"),
        (["exploitability", "kuhn_poker", "--policy", "{missing}"], "cannot read the policy file"),
        (["exploitability", "kuhn_poker", "--policy", "{garbage}"], "is not valid JSON"),
        (["exploitability", "kuhn_poker", "--policy", "{array}"], "a policy is a JSON object"),
    ],
)
def test_hostile_cli_input_gets_a_clear_error(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "garbage.json").write_bytes(b"\xff{not json")
    (tmp_path / "array.json").write_text("[1, 2]")
    files = {
        "policy": _uniform_file(tmp_path),
        "missing": tmp_path / "nope.json",
        "garbage": tmp_path / "garbage.json",
        "array": tmp_path / "array.json",
    }
    args = [a.format(**files) for a in args]
    if args[0] == "match" and len(args) > 1:
        args += [
            "--out",
            str(tmp_path / "m"),
            "--no-progress",
            "--seeds" if "--seeds" not in args else "--obs-mode",
            "1" if "--seeds" not in args else "text",
        ]
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output


def test_a_damaged_match_folder_is_refused_by_name(tmp_path: Path) -> None:
    pool = players("tictactoe", "random", "perfect")
    matches.run_matches("tictactoe", pool, [0], tmp_path, game_kwargs=SMALL)
    with pytest.raises(matches.MatchError, match="another game_kwargs"):
        matches.run_matches("tictactoe", pool, [0], tmp_path, game_kwargs={**SMALL, "image_size": 96})
    with pytest.raises(matches.MatchError, match="player 'perfect' was"):
        matches.run_matches(
            "tictactoe",
            [pool[0], matches.parse_player("perfect=heuristic", matches.game_spec("tictactoe"))],
            [0],
            tmp_path,
            game_kwargs=SMALL,
        )
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    (tmp_path / "games.jsonl").write_text(
        lines[0] + "\n" + json.dumps({"task": "x", "seed": 1, "players": ["random", "mallory"], "scores": [1, 0]}) + "\n"
    )
    with pytest.raises(matches.MatchError, match="game 2 is not a record of 2 of the match's players"):
        write_match_report(tmp_path)
    damaged = _cli("report", str(tmp_path), "--out", str(tmp_path / "r"))
    assert damaged.exit_code == 2 and "game 2 is not a record" in " ".join(damaged.output.split())
    (tmp_path / "match.json").write_text("{oops")
    with pytest.raises(matches.MatchError, match="not valid JSON"):
        matches.run_matches("tictactoe", pool, [0], tmp_path, game_kwargs=SMALL)


# Leduc hold'em, Liar's dice and the cooperative referential game ---------------------------------


def test_a_leduc_match_is_rated_and_its_cfr_policy_is_near_unexploitable(tmp_path: Path) -> None:
    records = matches.run_matches(
        "leduc_poker", players("leduc_poker", "random", "cfr", "oracle"), range(3), tmp_path, game_kwargs=SMALL
    )
    assert len(records) == 18 and all(sum(r["returns"]) == 0 and not r["error"] for r in records)
    rows = rate(records, ["random", "cfr", "oracle"])
    assert sum(r["games"] for r in rows) == 36 and all(-13 <= r["mean_return"] <= 13 for r in rows)
    result = matches.match_exploitability(tmp_path)
    assert result["game"] == "leduc_poker" and result["players"]["oracle"] is None  # the env's move, no policy
    assert result["players"]["cfr"] == pytest.approx(8.62e-5, rel=1e-2)  # the shipped CFR+ table (spiel_cfr.py)
    assert result["players"]["random"] == pytest.approx(2.373611, abs=1e-6)  # uniform: NashConv 4.7472 (OpenSpiel)
    md, _ = write_match_report(tmp_path)
    assert "## Ratings" in md.read_text() and "0.0001" in md.read_text()


class AlwaysCall(Agent):
    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        assert "Your card" in obs["text"] and "call" in obs["actions"]
        return "check" if "raise" not in obs["text"].split("Pot")[0].split("Round")[-1] else "call"


def test_an_agent_is_asked_through_the_leduc_observation() -> None:
    policy = matches.player_policy(
        matches.game_spec("leduc_poker"), matches.PlayerSpec("c", "agent", f"{__name__}:AlwaysCall"), game_kwargs=SMALL
    )
    from open_spiel.python import policy as spiel_policy

    table = spiel_policy.TabularPolicy(__import__("pyspiel").load_game("leduc_poker"))
    calls = {key: {1: 1.0} for key in table.state_lookup}  # call (check) everywhere
    assert exploitability("leduc_poker", policy)["exploitability"] == pytest.approx(
        exploitability("leduc_poker", calls)["exploitability"]
    )


@pytest.mark.parametrize(("game", "level"), [("leduc_poker", 0), ("liars_dice", 0), ("liars_dice", 1)])
def test_the_spiel_observation_is_what_the_aec_env_shows(game: str, level: int) -> None:
    import numpy as np

    spec = matches.game_spec(game)
    observe = matches._load(spec.spiel_observation, "test")
    kwargs = {"level": level} if game == "liars_dice" else {}
    rng = np.random.default_rng(0)
    for mode in ("text", "image"):
        env = spec.make(obs_mode=mode, image_size=64, **kwargs)
        turns = 0
        for seed in range(6):
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                mine, parser = observe(env.state, obs_mode=mode, image_size=64, **kwargs)
                assert (mine["text"], mine["actions"], mine["mission"]) == (obs["text"], obs["actions"], obs["mission"])
                assert np.array_equal(mine["image"], obs["image"]) and parser.synonyms == env.parser.synonyms
                env.step(obs["actions"][int(rng.integers(len(obs["actions"])))])
                turns += 1
        assert turns > 12  # every game has moves after chance (a public card, a standing bid)


def test_liars_dice_levels_choose_the_players_and_the_exploitability(tmp_path: Path) -> None:
    pool = players("liars_dice", "random", "heuristic")
    records = matches.run_matches("liars_dice", pool, range(4), tmp_path / "two", game_kwargs={**SMALL, "level": 1})
    assert all(r["scores"] in ([1.0, 0.0], [0.0, 1.0]) for r in records)
    assert sum(r["players"][r["scores"].index(1.0)] == "heuristic" for r in records) >= 6  # of 8
    with pytest.raises(
        matches.MatchError, match="at level 1 is too large for an exact best response: exploitability is computed at level 0"
    ):
        matches.match_exploitability(tmp_path / "two")
    with pytest.raises(matches.MatchError, match="player 'cfr' .* the cfr policy is computed for level 0 only"):
        matches.run_matches(
            "liars_dice", players("liars_dice", "random", "cfr"), [0], tmp_path / "cfr", game_kwargs={**SMALL, "level": 1}
        )
    assert not (tmp_path / "cfr" / "games.jsonl").exists() or not (tmp_path / "cfr" / "games.jsonl").read_text()
    one = matches.run_matches("liars_dice", players("liars_dice", "cfr", "heuristic"), [0], tmp_path / "one", game_kwargs=SMALL)
    assert len(one) == 2 and not any(r["error"] for r in one)


def test_a_cooperative_game_is_rated_by_team_success(tmp_path: Path) -> None:
    spec = matches.game_spec("referential")
    pool = [*players("referential", "random", "partner", "oracle"), matches.parse_player(f"raises={__name__}:Raises", spec)]
    records = matches.run_matches(spec, pool, range(5), tmp_path, game_kwargs={**SMALL, "level": 1})
    assert all(r["scores"][0] == r["scores"][1] and r["agents"] == ["speaker", "listener"] for r in records)
    for r in records:
        if "raises" in r["players"]:
            assert r["scores"] == [0.0, 0.0] and r["players"][r["forfeit"]] == "raises"  # the team fails
        elif "random" not in r["players"]:
            assert r["scores"] == [1.0, 1.0]  # the oracle and the partner always understand each other
    table = matches.load_matches(tmp_path)[0]
    assert table["cooperative"] is True
    from rl4vlm_gym.harness.ratings import standings, team_table

    rows = standings(records, ["random", "partner", "oracle", "raises"], cooperative=True)["ratings"]
    assert [r["player"] for r in rows][2:] == ["random", "raises"] and rows[-1]["forfeits"] == rows[-1]["games"] == 30
    assert rows[-1]["score"] == 0 and rows[0]["games"] == 30 and rows[0]["by_seat"][0][1] == 15
    assert rows[0]["score"] == sum(r["scores"][0] for r in records if rows[0]["player"] in r["players"]) / 30
    cross = team_table(records, ["random", "partner", "oracle", "raises"])
    assert cross["oracle"]["partner"] == {"games": 5, "successes": 5, "returns": 5.0, "score": 1.0, "mean_return": 1.0}
    assert cross["random"]["oracle"]["score"] < 1 and cross["raises"]["oracle"]["successes"] == 0
    md, html = write_match_report(tmp_path)
    text = md.read_text()
    assert "## Team success" in text and "as speaker" in text and "5/5 (1.00)" in text and "OpenSkill" not in text
    assert json.loads((tmp_path / "ratings.json").read_text())["cooperative"] is True
    with pytest.raises(matches.MatchError, match="names no OpenSpiel game"):
        matches.match_exploitability(tmp_path)


def test_wilson_intervals() -> None:
    from rl4vlm_gym.harness.ratings import wilson

    assert wilson(5, 10) == pytest.approx([0.2366, 0.7634], abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0 and wilson(0, 0) == [0.0, 1.0]
    assert wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)


@pytest.mark.slow  # two exact best responses over Liar's dice's 24576 information states: ~25 s
def test_liars_dice_exploitability_of_the_built_in_players(tmp_path: Path) -> None:
    matches.run_matches("liars_dice", players("liars_dice", "cfr", "heuristic"), [0], tmp_path, game_kwargs=SMALL)
    result = matches.match_exploitability(tmp_path)
    assert result["game"] == "liars_dice"
    assert result["players"]["cfr"] == pytest.approx(1.25e-4, rel=2e-2)  # the shipped CFR+ table (spiel_cfr.py)
    assert result["players"]["heuristic"] == pytest.approx(0.4375, abs=1e-6)  # it never bluffs: its bids are read


SHIPPED_POLICIES = sorted((Path(__file__).resolve().parents[2] / "envs" / "games" / "assets").glob("*_cfr.json*"))


# Liar's dice's table is slow (best responses ~6 s): the inner loop reads Leduc's, whose gzipped rows
# are in the same format, and Kuhn's lists.
@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=[pytest.mark.slow] if p.name.startswith("liars_dice") else []) for p in SHIPPED_POLICIES],
    ids=lambda p: p.name,
)
def test_exploitability_reads_every_shipped_policy_table(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # kuhn_cfr.json (probability lists), leduc_cfr.json.gz and liars_dice_1_cfr.json.gz (gzipped
    # [[action, p], ...] rows as spiel_cfr.py writes them): each gives back the exploitability its
    # file records (within the rounding of its probabilities to 5 places), through the command too.
    # The command's own computation is the one checked (read through a spy that calls the real
    # function): Liar's dice's best responses take ~6 s, so the test pays for them once, not twice.
    import gzip

    from rl4vlm_gym.harness import exploitability as module

    raw = path.read_bytes()
    recorded = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    results: list[dict[str, Any]] = []

    def spied(game: str, policy: Any) -> dict[str, Any]:
        results.append(exploitability(game, policy))
        return results[-1]

    monkeypatch.setattr(module, "exploitability", spied)
    out = _cli("exploitability", recorded["game"], "--policy", str(path))
    assert len(results) == 1 and results[0]["game"] == recorded["game"], "the command computed it, once"
    assert results[0]["exploitability"] == pytest.approx(recorded["exploitability"], abs=1e-6)
    assert out.exit_code == 0 and f"exploitability {results[0]['exploitability']:.6f}" in out.output


def test_a_policy_row_of_pairs_is_checked_like_a_list() -> None:
    states = ["0", "0b", "0p", "0pb", "1", "1b", "1p", "1pb", "2", "2b", "2p", "2pb"]
    as_pairs = exploitability("kuhn_poker", {s: [[0, 0.5], [1, 0.5]] for s in states})["exploitability"]
    assert as_pairs == pytest.approx(11 / 24, abs=1e-12)  # uniform random, written as pairs
    with pytest.raises(PolicyError, match="an action is listed twice"):
        exploitability("kuhn_poker", {s: [[0, 0.5], [0, 0.5]] for s in states})
    with pytest.raises(PolicyError, match="sum to 0.9"):
        exploitability("kuhn_poker", {s: [[0, 0.5], [1, 0.4]] for s in states})


def test_a_gzipped_policy_is_bounded_once_inflated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from rl4vlm_gym.harness import exploitability as module

    path = tmp_path / "bomb.json"  # no .gz in the name: the magic bytes decide
    path.write_bytes(gzip.compress(b'{"policy": {"0": [' + b"0.5, " * 200 + b"0.5]}}"))
    monkeypatch.setattr(module, "MAX_POLICY_BYTES", 500)
    with pytest.raises(PolicyError, match="inflates to more than 500 bytes"):
        read_policy(path)
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(b'{"policy": {}}')[:-6])
    with pytest.raises(PolicyError, match="cannot read the policy file"):
        read_policy(tmp_path / "cut.json.gz")


def test_a_game_names_its_aivat_baseline_and_any_baseline_keeps_known_seatings_exact(tmp_path: Path) -> None:
    import dataclasses

    from rl4vlm_gym.harness.expected import pair_values

    with pytest.raises(ValueError, match="aivat='cfr' needs the chips payoff"):
        matches.GameSpec("x", "m:f", players={"cfr": "m:g"}, aivat="cfr")  # a win-loss game
    with pytest.raises(ValueError, match="aivat='nobody' needs the chips payoff and names a built-in"):
        matches.GameSpec("x", "m:f", players={"cfr": "m:g"}, payoff="chips", aivat="nobody")
    spec = dataclasses.replace(matches.game_spec("kuhn_poker"), aivat="uniform")
    pool = [matches.parse_player(n, spec) for n in ("random", "cfr", "br", "prefer")]
    records = matches.run_matches(spec, pool, range(20), tmp_path, game_kwargs=SMALL)
    assert json.loads((tmp_path / "match.json").read_text())["aivat"] == {"game": "kuhn_poker()", "baseline": "uniform"}
    exact = pair_values("kuhn_poker", {p.label: matches.player_policy(spec, p) for p in pool[:3]})
    for r in records:
        if "prefer" in r["players"]:  # an unknown seat: its decisions are not corrected
            assert r["aivat_nodes"] < len(r["spiel_history"])
        else:  # two known seats: the seating's exact value, whatever the baseline
            assert r["aivat_nodes"] == len(r["spiel_history"]) and r["aivat"] == pytest.approx(exact[tuple(r["players"])], abs=1e-9)
    none = dataclasses.replace(spec, aivat=None)
    records = matches.run_matches(none, pool[:2], range(2), tmp_path / "none", game_kwargs=SMALL)
    assert not any("aivat" in r for r in records) and "aivat" not in json.loads((tmp_path / "none" / "match.json").read_text())
