"""Ratings and cross-tables of a tournament's games (:mod:`rl4vlm_gym.harness.matches`).

Ranks come from fits over all games at once, so they do not depend on the order the games are
read in (a shuffled ``games.jsonl`` gives the same standings, byte for byte); each game's payoff
(:attr:`~rl4vlm_gym.harness.matches.GameSpec.payoff`) decides which:

- ``chips`` (zero-sum amounts, the poker games): each player's mean return per game against the
  field. In a balanced round robin (every group on every seed in every seat) this is also the
  least-squares fit of additive strengths to the games' chips, and the exact expected value it
  estimates is :func:`rl4vlm_gym.harness.expected.field_values`. Counting hands won instead would
  rank a player that bets every hand (it wins most, by small pots, and loses big ones) above one
  that wins chips. Where every game's record holds ``aivat`` (each seat's AIVAT estimate of its
  chips, :mod:`rl4vlm_gym.harness.aivat`: unbiased, with the luck of the cards and of the known
  players' draws removed), the means and intervals are of those estimates (:func:`chip_estimator`);
  the raw mean chips stay beside them.
- ``win-loss``: a Bradley-Terry fit by maximum likelihood on the Elo scale, as LLM arenas report
  it (:func:`bradley_terry`; a draw is half a win each; a game of more than two seats counts as
  the pairwise results of its seats, by return). Beside it, OpenSkill's Plackett-Luce rating
  (Weng and Lin 2011, the ``openskill`` package, extra ``games``), whose online updates do depend
  on the order of the games: here it is averaged over a fixed set of :data:`PERMUTATIONS` orders
  of the games, which removes that dependence; it is a second column, never the rank.
- ``team`` (a cooperative game, both seats one team): each player's team success rate over its
  games, with a Wilson 95% interval, per seat too, ranked by the interval's lower end; the
  cross-table is the success rate of each pairing of roles (:func:`team_rate`, :func:`team_table`).

Every interval is a 95% percentile bootstrap that resamples *seeds*, each with all its games (the
seats of a deal played from both sides stay together, so the duplicate format's cancelling of
luck is kept in the resamples); it is seeded, so the same records give the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

__all__ = [
    "BOOTSTRAP",
    "PERMUTATIONS",
    "RANK_BASIS",
    "bradley_terry",
    "chip_estimator",
    "chip_means",
    "cross_table",
    "openskill_average",
    "rate",
    "standings",
    "team_rate",
    "team_table",
    "wilson",
]

BOOTSTRAP = 200
"""Resamples of the seeds for the Bradley-Terry (Elo) intervals."""
CHIP_BOOTSTRAP = 2000
"""Resamples of the seeds for the intervals of mean chips (a weighted mean each: cheap)."""
PERMUTATIONS = 16
"""Orders of the games OpenSkill's online rating is averaged over."""
RANK_BASIS = {
    "chips": "mean chips per game against the field (zero-sum payoff)",
    "aivat": "AIVAT estimate of mean chips per game against the field (zero-sum payoff; unbiased, the luck of chance "
    "and of the known players' draws removed)",
    "win-loss": "Bradley-Terry (Elo scale) maximum-likelihood fit of wins, draws (half) and losses",
    "team": "team success rate (lower end of its Wilson 95% interval)",
}


def _ordered(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records in one order whatever the order given: by seed, then seating."""
    return sorted(records, key=lambda r: (r["seed"], tuple(r["players"])))


def _places(record: Mapping[str, Any]) -> list[tuple[bool, float]]:
    """How the seats of a game compare: a forfeiting seat below every other, then by return (the
    order the record's scores follow)."""
    return [(i != record.get("forfeit"), float(x)) for i, x in enumerate(record["returns"])]


def _pairs(record: Mapping[str, Any]) -> list[tuple[int, int, float]]:
    """The game's pairwise results ``(seat i, seat j, i's points against j)`` for ``i < j``."""
    places = _places(record)
    n = len(places)
    return [
        (i, j, 1.0 if places[i] > places[j] else 0.5 if places[i] == places[j] else 0.0) for i in range(n) for j in range(i + 1, n)
    ]


def _tally(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> dict[str, dict[str, Any]]:
    tally = {p: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0, "returns": 0.0, "forfeits": 0} for p in players}
    for r in records:
        for p, s, ret in zip(r["players"], r["scores"], r["returns"], strict=True):
            t = tally[p]
            t["games"] += 1
            t["returns"] += float(ret)
            t["points"] += s
            t["wins" if s == 1 else "draws" if s == 0.5 else "losses"] += 1
        if r.get("forfeit") is not None:
            tally[r["players"][r["forfeit"]]]["forfeits"] += 1
    return tally


def rate(records: Sequence[Mapping[str, Any]], players: Sequence[str], *, payoff: str = "win-loss") -> list[dict[str, Any]]:
    """The players' ratings from game records (``players``, ``scores``, ``returns``, ``seed``).

    Args:
        records: games of any number of seats.
        players: every player's label.
        payoff: ``"chips"`` ranks by mean return per game (:func:`chip_means`); ``"win-loss"`` by
            the Bradley-Terry fit (:func:`bradley_terry`), with OpenSkill averaged over orders
            (:func:`openskill_average`) beside it.

    Returns:
        One row per player, best first: ``player``, ``rank``, ``games``, ``wins``, ``draws``,
        ``losses``, ``score`` (points per game: 1 a win, 0.5 a draw), ``mean_return`` (per
        game) and ``forfeits``; for chips, ``chips`` and ``chips_ci95`` (the AIVAT estimate where
        every game has one, :func:`chip_estimator`; else the mean return) and ``raw_chips`` and
        ``raw_chips_ci95`` (the mean return, always); for win-loss, ``elo``,
        ``elo_ci95``, ``mu``, ``sigma``, ``ordinal`` (``mu - 3 sigma``) and ``ci95``
        (``mu +- 1.96 sigma``).
    """
    if payoff not in ("chips", "win-loss"):
        raise ValueError(f"payoff {payoff!r}: rate takes chips or win-loss (a team game is rated by team_rate)")
    tally = _tally(records, players)
    rows = []
    for p in players:
        t = tally[p]
        rows.append(
            {
                "player": p,
                "games": t["games"],
                "wins": t["wins"],
                "draws": t["draws"],
                "losses": t["losses"],
                "score": t["points"] / t["games"] if t["games"] else None,
                "mean_return": t["returns"] / t["games"] if t["games"] else None,
                "forfeits": t["forfeits"],
            }
        )
    if payoff == "chips":
        key = chip_estimator(records)
        chips = chip_means(records, players, key=key)
        raw = chips if key == "returns" else chip_means(records, players)
        for row in rows:
            row["chips"], row["chips_ci95"] = chips[row["player"]]["mean"], chips[row["player"]]["ci95"]
            row["raw_chips"], row["raw_chips_ci95"] = raw[row["player"]]["mean"], raw[row["player"]]["ci95"]
        rows.sort(key=lambda row: (-(row["chips"] if row["chips"] is not None else -math.inf), row["player"]))
    else:
        elo = bradley_terry(records, players)
        skill = openskill_average(records, players)
        for row in rows:
            row["elo"], row["elo_ci95"] = elo[row["player"]]["elo"], elo[row["player"]]["ci95"]
            row.update(skill[row["player"]])
        rows.sort(key=lambda row: (-row["elo"], row["player"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return rows


def _clusters(records: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], Any]:
    """The records in their fixed order, and each one's seed cluster index (seeds in order)."""
    records = _ordered(records)
    seeds = sorted({r["seed"] for r in records})
    index = {s: i for i, s in enumerate(seeds)}
    return records, np.array([index[r["seed"]] for r in records], dtype=int)


def _resample_weights(clusters: int, bootstrap: int, seed: int) -> Any:
    """``bootstrap`` rows of how often each of ``clusters`` seeds is drawn, with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(clusters, size=(bootstrap, clusters)) + clusters * np.arange(bootstrap)[:, None]
    return np.bincount(draws.ravel(), minlength=bootstrap * clusters).reshape(bootstrap, clusters).astype(float)


def chip_estimator(records: Sequence[Mapping[str, Any]]) -> str:
    """Which figure of a chip game's records its chips are estimated from: ``"aivat"`` (each seat's
    AIVAT estimate) when every record holds one, else ``"returns"`` (the chips won: older match
    folders, games not played through OpenSpiel, or a match resumed across the change)."""
    ok = bool(records) and all(
        isinstance(r.get("aivat"), list)
        and len(r["aivat"]) == len(r["returns"])
        and all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in r["aivat"])
        for r in records
    )
    return "aivat" if ok else "returns"


def chip_means(
    records: Sequence[Mapping[str, Any]],
    players: Sequence[str],
    *,
    bootstrap: int = CHIP_BOOTSTRAP,
    seed: int = 0,
    key: str = "returns",
) -> dict[str, dict[str, Any]]:
    """Each player's mean return per game (chips in poker) with a bootstrap 95% interval.

    The interval is the 2.5-97.5 percentiles of the mean over ``bootstrap`` resamples of the
    seeds, each seed with all its games (``seed`` fixes the resamples). ``key`` is the records'
    field of per-seat figures averaged: ``"returns"`` (the chips won) or ``"aivat"`` (their
    AIVAT estimates).

    Returns:
        ``{player: {"mean": float | None, "ci95": [low, high] | None}}`` (``None``: no games).
    """
    records, cluster = _clusters(records)
    index = {p: i for i, p in enumerate(players)}
    c = int(cluster.max()) + 1 if len(records) else 0
    sums, counts = np.zeros((c, len(players))), np.zeros((c, len(players)))
    for r, k in zip(records, cluster, strict=True):
        for p, x in zip(r["players"], r[key], strict=True):
            sums[k, index[p]] += float(x)
            counts[k, index[p]] += 1
    out: dict[str, dict[str, Any]] = {}
    total = counts.sum(axis=0)
    weights = _resample_weights(c, bootstrap, seed) if c else np.zeros((0, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (weights @ sums) / (weights @ counts) if c else np.zeros((0, len(players)))
    for p, i in index.items():
        if not total[i]:
            out[p] = {"mean": None, "ci95": None}
            continue
        drawn = means[:, i][np.isfinite(means[:, i])]  # a resample without any of its seeds has no mean
        low, high = np.percentile(drawn, [2.5, 97.5])
        out[p] = {"mean": float(sums[:, i].sum() / total[i]), "ci95": [float(low), float(high)]}
    return out


def _bt_fit(wins: Any, games: Any, iterations: int = 500) -> Any:
    """Bradley-Terry strengths by the MM algorithm (Hunter 2004): ``wins[..., i, j]`` points of
    ``i`` against ``j`` (a draw is half a win each), ``games[..., i, j]`` games between them; any
    leading axes are separate fits, iterated together (a bootstrap's resamples at once)."""
    n = wins.shape[-1]
    strength = np.ones(wins.shape[:-1])
    total = wins.sum(axis=-1)
    off = 1.0 - np.eye(n)
    for _ in range(iterations):
        pair = games * off / (strength[..., :, None] + strength[..., None, :])
        new = total / pair.sum(axis=-1)
        new /= np.exp(np.log(new).mean(axis=-1, keepdims=True))
        if np.allclose(new, strength, rtol=1e-10, atol=0):
            return new
        strength = new
    return strength


def bradley_terry(
    records: Sequence[Mapping[str, Any]], players: Sequence[str], *, bootstrap: int = BOOTSTRAP, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Elo-scale Bradley-Terry ratings with bootstrap 95% intervals, as LLM arenas report them.

    A maximum-likelihood fit over all games at once (unlike OpenSkill's online updates, the order
    of the games does not matter); a draw counts half a win to each side; a game of more than two
    seats counts as the pairwise results of its seats (by return, a forfeiting seat below all).
    Every pair of players gets one virtual draw (a weak prior), so a player that never lost
    keeps a finite rating. On the Elo scale (400 points: 10 to 1 odds) with the players' mean at
    1000; the interval is the 2.5-97.5 percentiles over ``bootstrap`` resamples of the seeds,
    each with all its games (``seed`` fixes them).

    Returns:
        ``{player: {"elo": float, "ci95": [low, high]}}``.
    """
    records, cluster = _clusters(records)
    index = {p: i for i, p in enumerate(players)}
    n = len(players)
    c = int(cluster.max()) + 1 if len(records) else 0
    wins, games = np.zeros((max(c, 1), n, n)), np.zeros((max(c, 1), n, n))
    for r, k in zip(records, cluster, strict=True):
        for i, j, s in _pairs(r):
            a, b = index[r["players"][i]], index[r["players"][j]]
            wins[k, a, b] += s
            wins[k, b, a] += 1.0 - s
            games[k, a, b] += 1.0
            games[k, b, a] += 1.0

    def fit(weights: Any) -> Any:
        """Elo of each row of ``weights`` (how often each seed counts), fitted together."""
        off = 1.0 - np.eye(n)
        w = (np.tensordot(weights, wins, axes=1) + 0.5) * off  # the prior: one draw between every pair
        g = (np.tensordot(weights, games, axes=1) + 1.0) * off
        elo = 400.0 * np.log10(_bt_fit(w, g))
        return elo - elo.mean(axis=-1, keepdims=True) + 1000.0

    point = fit(np.ones((1, max(c, 1))) if c else np.zeros((1, 1)))[0]
    samples = fit(_resample_weights(c, bootstrap, seed)) if c else np.tile(point, (1, 1))
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return {p: {"elo": float(point[i]), "ci95": [float(low[i]), float(high[i])]} for p, i in index.items()}


def openskill_average(
    records: Sequence[Mapping[str, Any]], players: Sequence[str], *, permutations: int = PERMUTATIONS, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """OpenSkill (Plackett-Luce) ratings averaged over ``permutations`` fixed orders of the games.

    OpenSkill updates online, so one order of the games gives other ratings than another (a
    weaker player can come out first). The games are put in one canonical order, then rated in
    each of ``permutations`` seeded shuffles of it; ``mu`` and ``sigma`` are the means over them,
    so the figure depends on the set of games only.

    Returns:
        ``{player: {"mu", "sigma", "ordinal" (mu - 3 sigma), "ci95" (mu +- 1.96 sigma)}}``.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError as err:
        raise ImportError("match ratings use openskill, in the games extra: pip install 'rl4vlm-gym[games]'") from err

    model = PlackettLuce()
    records = _ordered(records)
    games = []
    for r in records:
        places = _places(r)
        # ranks: 1 is best; equal places share a rank (a draw)
        games.append((list(r["players"]), [1 + sum(q > p for q in places) for p in places]))
    rng = np.random.default_rng(seed)
    mus, sigmas = np.zeros((permutations, len(players))), np.zeros((permutations, len(players)))
    for k in range(permutations):
        ratings = {p: model.rating(name=p) for p in players}
        for g in rng.permutation(len(games)) if games else []:
            seated, ranks = games[g]
            rated = model.rate([[ratings[p]] for p in seated], ranks=ranks)
            for p, [rating] in zip(seated, rated, strict=True):
                ratings[p] = rating
        mus[k] = [float(ratings[p].mu) for p in players]
        sigmas[k] = [float(ratings[p].sigma) for p in players]
    out = {}
    for i, p in enumerate(players):
        mu, sigma = float(mus[:, i].mean()), float(sigmas[:, i].mean())
        out[p] = {"mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma, "ci95": [mu - 1.96 * sigma, mu + 1.96 * sigma]}
    return out


def cross_table(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """``table[a][b]``: over the games ``a`` and ``b`` played together (every seat), ``a``'s wins,
    draws and losses against ``b`` (by return, a forfeiting seat below all), its points per game
    (``score``) and its mean return in those games (chips in poker), or ``None`` where they never
    met."""
    table: dict[str, dict[str, dict[str, Any]]] = {
        a: {b: {"wins": 0, "draws": 0, "losses": 0, "games": 0, "points": 0.0, "returns": 0.0} for b in players if b != a}
        for a in players
    }
    for r in records:
        seated = r["players"]
        for i, j, s in _pairs(r):
            for x, y, points in ((i, j, s), (j, i, 1.0 - s)):
                cell = table[seated[x]][seated[y]]
                cell["games"] += 1
                cell["points"] += points
                cell["returns"] += float(r["returns"][x])
                cell["wins" if points == 1 else "draws" if points == 0.5 else "losses"] += 1
    for row in table.values():
        for cell in row.values():
            n = cell["games"]
            cell["score"] = cell["points"] / n if n else None
            cell["mean_return"] = cell["returns"] / n if n else None
    return table


def wilson(successes: int, n: int, z: float = 1.96) -> list[float]:
    """The Wilson score interval of a success rate (sound at 0 and n successes, unlike the normal
    approximation); ``[0, 1]`` with no games."""
    if n == 0:
        return [0.0, 1.0]
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


class _TeamTally(TypedDict):
    games: int
    successes: int
    returns: float
    forfeits: int
    by_seat: list[list[int]]


def team_rate(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> list[dict[str, Any]]:
    """Each player's team success in a cooperative game (a game's ``scores`` are the team's: 1 or 0).

    Returns:
        One row per player, best first (by the lower end of the interval, then the rate):
        ``player``, ``rank``, ``games``, ``successes``, ``score`` (the success rate), ``ci95``
        (Wilson), ``by_seat`` (``[successes, games]`` in each seat), ``mean_return`` and
        ``forfeits`` (games it lost the team by an error or stalling).
    """
    tally: dict[str, _TeamTally] = {
        p: {"games": 0, "successes": 0, "returns": 0.0, "forfeits": 0, "by_seat": [[0, 0], [0, 0]]} for p in players
    }
    for r in records:
        team = int(r["scores"][0] == 1)
        for seat, p in enumerate(r["players"]):
            t = tally[p]
            t["games"] += 1
            t["successes"] += team
            t["returns"] += float(r["returns"][seat])
            t["by_seat"][seat][0] += team
            t["by_seat"][seat][1] += 1
        if r.get("forfeit") is not None:
            tally[r["players"][r["forfeit"]]]["forfeits"] += 1
    rows: list[dict[str, Any]] = []
    for p in players:
        t = tally[p]
        n = t["games"]
        rows.append(
            {
                "player": p,
                "games": n,
                "successes": t["successes"],
                "score": t["successes"] / n if n else None,
                "ci95": wilson(t["successes"], n),
                "by_seat": t["by_seat"],
                "mean_return": t["returns"] / n if n else None,
                "forfeits": t["forfeits"],
            }
        )
    rows.sort(key=lambda row: (-row["ci95"][0], -(row["score"] or 0.0), row["player"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return rows


def team_table(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """``table[a][b]``: the team of ``a`` in the first seat and ``b`` in the second (roles differ,
    so the table is not symmetric): its ``games``, ``successes``, success rate (``score``) and
    mean return per seat, or ``None`` scores where they never played so."""
    table: dict[str, dict[str, dict[str, Any]]] = {
        a: {b: {"games": 0, "successes": 0, "returns": 0.0} for b in players if b != a} for a in players
    }
    for r in records:
        a, b = r["players"]
        cell = table[a][b]
        cell["games"] += 1
        cell["successes"] += int(r["scores"][0] == 1)
        cell["returns"] += sum(float(x) for x in r["returns"]) / len(r["returns"])
    for row in table.values():
        for cell in row.values():
            n = cell["games"]
            cell["score"] = cell["successes"] / n if n else None
            cell["mean_return"] = cell["returns"] / n if n else None
    return table


def standings(
    records: Sequence[Mapping[str, Any]], players: Sequence[str], *, payoff: str = "win-loss", cooperative: bool = False
) -> dict[str, Any]:
    """Ratings and cross-table together (what ``ratings.json`` of a match folder holds), with the
    ``payoff`` and the ``rank_basis`` (:data:`RANK_BASIS`); for a chip game, also which figure its
    chips are estimated from (``chip_estimator``: ``aivat`` or ``returns``) and how many games
    hold an AIVAT estimate (``aivat_games``); for a ``cooperative`` game (payoff ``team``), team
    success rates and the table of pairings (:func:`team_rate`)."""
    if cooperative or payoff == "team":
        return {
            "cooperative": True,
            "payoff": "team",
            "rank_basis": RANK_BASIS["team"],
            "ratings": team_rate(records, players),
            "cross_table": team_table(records, players),
            "games": len(records),
        }
    if payoff == "chips":
        estimator = chip_estimator(records)
        return {
            "payoff": payoff,
            "rank_basis": RANK_BASIS["aivat" if estimator == "aivat" else "chips"],
            "chip_estimator": estimator,
            "ratings": rate(records, players, payoff=payoff),
            "cross_table": cross_table(records, players),
            "games": len(records),
            "aivat_games": sum(isinstance(r.get("aivat"), list) for r in records),
        }
    return {
        "payoff": payoff,
        "rank_basis": RANK_BASIS[payoff],
        "ratings": rate(records, players, payoff=payoff),
        "cross_table": cross_table(records, players),
        "games": len(records),
    }
