"""The report page of a match folder: ratings table, cross-table (win/draw/loss per pair) and its
plot, exploitability for the poker games, and the games that ended in an error. The page says
which payoff the game's results were scored by and what the rank rests on
(:data:`rl4vlm_gym.harness.ratings.RANK_BASIS`): mean chips per game with their bootstrap interval
in a chip game (poker; its AIVAT estimate where every game has one, the raw mean beside it, and
what was corrected: :mod:`rl4vlm_gym.harness.aivat`), the Bradley-Terry (Elo) fit with its interval in a win/draw/loss game. A
cooperative game (the seats one team) gets team success rates instead of ratings, and a
cross-table of the success of each pairing of roles (:func:`rl4vlm_gym.harness.ratings.team_rate`).

Written like the evaluation report (:mod:`rl4vlm_gym.harness.report`: one Markdown file with PNG
plots beside it and one self-contained HTML page, from the same blocks; text read from files is
escaped), into the match folder as ``report.md``/``report.html``, with ``ratings.json``.

Match ratings stay on this page rather than on the leaderboard's boards: a board ranks runs of
one agent on a fixed suite against fixed opponents, which any submitter can reproduce; a rating
is relative to the pool of players that met in one tournament, and changes when the pool does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rl4vlm_gym.harness import plots
from rl4vlm_gym.harness.match_store import load_matches
from rl4vlm_gym.harness.ratings import standings
from rl4vlm_gym.harness.report import _Figure, _Heading, _html, _markdown, _Table, _Text

__all__ = ["ERRORS_SHOWN", "write_match_report"]

ERRORS_SHOWN = 10


def _player_text(player: dict[str, Any]) -> str:
    what = f"built-in {player.get('name')}" if player.get("kind") == "builtin" else f"agent {player.get('name')}"
    kwargs = player.get("kwargs") or {}
    return what + (f" {json.dumps(kwargs, sort_keys=True)}" if kwargs else "")


def _exploitability(path: Path) -> dict[str, Any] | None:
    """``exploitability.json`` (written by ``match --exploitability``), or ``None`` if missing or
    not one (over 1 MiB, not JSON, no players): the report is written without it."""
    if not path.exists() or path.stat().st_size > 1 << 20:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("players"), dict) else None


def write_match_report(folder: str | Path, out: str | Path | None = None) -> tuple[Path, Path]:
    """Write ``report.md`` (plots in ``plots/``), ``report.html`` and ``ratings.json`` for the
    match in ``folder`` (into ``out``, default the folder itself).

    Returns:
        The Markdown and HTML paths.
    """
    folder = Path(folder)
    out = Path(out) if out is not None else folder
    manifest, records = load_matches(folder)
    labels = list(manifest["players"])
    payoff = manifest["payoff"]
    table = standings(records, labels, payoff=payoff)
    ratings, cross = table["ratings"], table["cross_table"]
    title = f"Match report: {manifest['game']}"
    seeds = manifest.get("seeds", [])
    seats = manifest.get("seats", 2)
    scheduled = len(seeds) * math.comb(len(labels), seats) * seats
    how = "both seat orders" if seats == 2 else f"every group of {seats} in each rotation of its seats"
    blocks: list[Any] = [
        _Heading(title, 1),
        _Text(
            f"Game `{manifest['game']}` with arguments `{json.dumps(manifest.get('game_kwargs', {}), sort_keys=True)}`; "
            f"{len(labels)} players, {seats} seats a game, round robin over {len(seeds)} seeds in {how}: "
            f"{len(records)} of {scheduled} games played. Payoff: {_PAYOFF_TEXT[payoff]}. Ranked by {table['rank_basis']}."
        ),
        _Table(["player", "plays"], [[label, _player_text(manifest["players"][label])] for label in labels]),
    ]
    if payoff == "team":
        blocks += _team_blocks(records, ratings, cross)
    elif payoff == "chips":
        blocks += _chip_blocks(ratings, cross, table, manifest.get("aivat"))
    else:
        blocks += _rating_blocks(ratings, cross)
    return _finish(folder, out, title, blocks, table, records)


_PAYOFF_TEXT = {
    "chips": "chips (the game's zero-sum return per game; a forfeit, by an error or by stalling with invalid moves, "
    "is scored as a fold: the player loses what it had put in)",
    "win-loss": "win 1, draw 0.5, loss 0 (by return; a forfeit loses)",
    "team": "team success (both seats share it)",
}


def _team_blocks(records: list[dict[str, Any]], ratings: list[dict[str, Any]], cross: dict[str, Any]) -> list[Any]:
    """A cooperative game: team success per player and per pairing of roles, no winners."""
    seats = records[0].get("agents") if records else None
    if not isinstance(seats, list) or len(seats) != 2 or not all(isinstance(a, str) for a in seats):
        seats = ["first seat", "second seat"]
    seats = [a[:40] for a in seats]

    def by_seat(row: dict[str, Any], seat: int) -> str:
        wins, n = row["by_seat"][seat]
        return f"{wins}/{n} ({wins / n:.2f})" if n else "-"

    blocks: list[Any] = [
        _Heading("Team success"),
        _Text(
            "A cooperative game: both seats are one team and share the payoff, so there is no winner to rate. "
            "Each player's figure is the success rate of the teams it played in (a game succeeds when every seat's "
            "return is positive; a forfeit fails it), with a Wilson 95% interval, ranked by the interval's lower end; "
            f"then its rate in each seat ({seats[0]}, {seats[1]})."
        ),
        _Table(
            [
                "rank",
                "player",
                "games",
                "successes",
                "success rate",
                "95% interval",
                f"as {seats[0]}",
                f"as {seats[1]}",
                "mean return",
                "forfeits",
            ],
            [
                [
                    str(r["rank"]),
                    r["player"],
                    str(r["games"]),
                    str(r["successes"]),
                    "-" if r["score"] is None else f"{r['score']:.3f}",
                    f"[{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]",
                    by_seat(r, 0),
                    by_seat(r, 1),
                    "-" if r["mean_return"] is None else f"{r['mean_return']:+.3f}",
                    str(r["forfeits"]),
                ]
                for r in ratings
            ],
        ),
        _Heading("Cross-table"),
        _Text(f"Row player as {seats[0]} with column player as {seats[1]}: successes/games (success rate)."),
    ]
    order = [r["player"] for r in ratings]

    def cell(a: str, b: str) -> str:
        if a == b:
            return ""
        c = cross[a][b]
        return f"{c['successes']}/{c['games']} ({c['score']:.2f})" if c["games"] else "-"

    blocks.append(_Table(["", *order], [[a, *(cell(a, b) for b in order)] for a in order]))
    scores = [[None if a == b else cross[a][b]["score"] for b in order] for a in order]
    counts = [[None if a == b else cross[a][b] for b in order] for a in order]
    blocks.append(
        _Figure(
            "cross_table",
            lambda: plots.cross_table(order, scores, counts, cooperative=True),
            f"Team success rate of the row player as {seats[0]} with the column player as {seats[1]}.",
        )
    )
    return blocks


def _aivat_text(table: dict[str, Any], aivat: Any) -> str:
    """What the chip figures are: AIVAT estimates (and what they corrected) or raw chips, and why."""
    if table.get("chip_estimator") == "aivat":
        baseline = aivat.get("baseline") if isinstance(aivat, dict) else None
        return (
            "Ranked by the AIVAT estimate of mean chips per game against the field (Burch et al., AAAI 2018): each game's "
            "chips less, at every node whose action distribution is known (every chance node, and every decision of a "
            "built-in player or of the random agent), the value of the action taken less the expected value of that "
            "node's actions. The values are the exact expected chips of the seating, a seat whose player is not known "
            f"(a model agent) valued as playing `{str(baseline)[:40]}`; its own decisions are not corrected. Each "
            "correction has mean zero, so the estimate is unbiased for any players; it removes the luck of the cards and "
            "of the known players' draws (between two known players, all of it). Raw chips: the mean chips won. "
        )
    games, with_aivat = table.get("games", 0), table.get("aivat_games", 0)
    why = (
        f"only {with_aivat} of {games} games hold an AIVAT estimate (a match resumed across versions), so the raw chips are used"
        if with_aivat
        else "the games hold no AIVAT estimate (an older match folder, or a game not played through OpenSpiel)"
    )
    return f"Ranked by the raw mean chips: {why}. "


def _chip_blocks(ratings: list[dict[str, Any]], cross: dict[str, Any], table: dict[str, Any], aivat: Any) -> list[Any]:
    """A zero-sum chip game: ranked by mean chips per game, hands won shown for reference only."""
    blocks: list[Any] = [
        _Heading("Ratings"),
        _Text(
            _aivat_text(table, aivat)
            + "Every seed is played from every seat; the bootstrap 95% intervals resample seeds, all seats of a seed "
            "together. W-D-L counts hands won, drawn and lost: a player that bets every hand wins many small pots and "
            "can still lose chips, so it is not the rank."
        ),
        _Table(
            [
                "rank",
                "player",
                "chips per game" + (" (AIVAT)" if table.get("chip_estimator") == "aivat" else ""),
                "95% interval",
                "raw chips",
                "raw 95% interval",
                "games",
                "W-D-L",
                "hands won",
                "forfeits",
            ],
            [
                [
                    str(r["rank"]),
                    r["player"],
                    "-" if r["chips"] is None else f"{r['chips']:+.3f}",
                    "-" if r["chips_ci95"] is None else f"[{r['chips_ci95'][0]:+.3f}, {r['chips_ci95'][1]:+.3f}]",
                    "-" if r.get("raw_chips") is None else f"{r['raw_chips']:+.3f}",
                    "-" if r.get("raw_chips_ci95") is None else f"[{r['raw_chips_ci95'][0]:+.3f}, {r['raw_chips_ci95'][1]:+.3f}]",
                    str(r["games"]),
                    f"{r['wins']}-{r['draws']}-{r['losses']}",
                    "-" if r["score"] is None else f"{r['score']:.3f}",
                    str(r["forfeits"]),
                ]
                for r in ratings
            ],
        ),
    ]
    return blocks + _cross_blocks(ratings, cross)


def _rating_blocks(ratings: list[dict[str, Any]], cross: dict[str, Any]) -> list[Any]:
    blocks: list[Any] = [
        _Heading("Ratings"),
        _Text(
            "Ranked by Elo (BT): the Bradley-Terry maximum-likelihood fit of all games on the Elo scale (mean 1000), as LLM "
            "arenas report it, with a bootstrap 95% interval that resamples seeds (all seats of a seed together); games "
            "of more than two seats count as their pairwise results. OpenSkill (Plackett-Luce), a second column: mu "
            "with mu +- 1.96 sigma and the ordinal mu - 3 sigma, averaged over 16 fixed orders of the games (its online "
            "updates depend on the order). Score: points per game (1 a win, 0.5 a draw; a game is won by the higher "
            "return). Mean return: per game."
        ),
        _Table(
            [
                "rank",
                "player",
                "Elo (BT)",
                "Elo 95% interval",
                "OpenSkill mu",
                "mu 95% interval",
                "ordinal",
                "games",
                "W-D-L",
                "score",
                "mean return",
                "forfeits",
            ],
            [
                [
                    str(r["rank"]),
                    r["player"],
                    f"{r['elo']:.0f}",
                    f"[{r['elo_ci95'][0]:.0f}, {r['elo_ci95'][1]:.0f}]",
                    f"{r['mu']:.2f}",
                    f"[{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]",
                    f"{r['ordinal']:.2f}",
                    str(r["games"]),
                    f"{r['wins']}-{r['draws']}-{r['losses']}",
                    "-" if r["score"] is None else f"{r['score']:.3f}",
                    "-" if r["mean_return"] is None else f"{r['mean_return']:+.3f}",
                    str(r["forfeits"]),
                ]
                for r in ratings
            ],
        ),
    ]
    return blocks + _cross_blocks(ratings, cross)


def _cross_blocks(ratings: list[dict[str, Any]], cross: dict[str, Any]) -> list[Any]:
    blocks: list[Any] = [
        _Heading("Cross-table"),
        _Text("Row player against column player, every seat: wins-draws-losses (the row player's mean return per game)."),
    ]
    order = [r["player"] for r in ratings]

    def cell(a: str, b: str) -> str:
        if a == b:
            return ""
        c = cross[a][b]
        return f"{c['wins']}-{c['draws']}-{c['losses']} ({c['mean_return']:+.2f})" if c["games"] else "-"

    blocks.append(_Table(["", *order], [[a, *(cell(a, b) for b in order)] for a in order]))
    scores = [[None if a == b else cross[a][b]["score"] for b in order] for a in order]
    counts = [[None if a == b else cross[a][b] for b in order] for a in order]
    blocks.append(
        _Figure(
            "cross_table",
            lambda: plots.cross_table(order, scores, counts),
            "Points per game of the row player against the column player.",
        )
    )
    return blocks


def _finish(
    folder: Path, out: Path, title: str, blocks: list[Any], table: dict[str, Any], records: list[dict[str, Any]]
) -> tuple[Path, Path]:
    """Exploitability and errors, then the files."""
    data = _exploitability(folder / "exploitability.json")
    if data is not None:
        blocks.append(_Heading("Exploitability"))
        blocks.append(
            _Text(
                f"What the exact best response wins per game against each player's policy in OpenSpiel's "
                f"`{data.get('game')}` (0 at a Nash equilibrium), the mean over the two seats; agents asked "
                f"{data.get('samples')} time(s) at each information state."
            )
        )
        rows = [
            [
                label,
                "not asked (no policy at OpenSpiel states)" if v is None else f"{v:.4f}" if isinstance(v, int | float) else "?",
            ]
            for label, v in data["players"].items()
        ]
        blocks.append(_Table(["player", "exploitability"], rows))
    failed = [r for r in records if r.get("error")]
    if failed:
        blocks.append(_Heading("Games with errors"))
        blocks.append(
            _Text(
                f"{len(failed)} game(s) ended in an error or a stall (the player at fault forfeits: it loses a win-loss game, "
                f"folds a chip game at that point, fails its team in a cooperative game); the first {min(len(failed), ERRORS_SHOWN)}:"
            )
        )
        blocks.append(
            _Table(["game", "seed", "error"], [[r["task"], str(r["seed"]), str(r["error"])[:300]] for r in failed[:ERRORS_SHOWN]])
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "ratings.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    md, page = out / "report.md", out / "report.html"
    md.write_text(_markdown(blocks, out), encoding="utf-8")
    page.write_text(_html(blocks, title), encoding="utf-8")
    return md, page
