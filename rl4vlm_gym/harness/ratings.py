"""Ratings and cross-tables of a tournament's games (:mod:`rl4vlm_gym.harness.matches`).

Ratings are OpenSkill's (Weng and Lin 2011, the ``openskill`` package, extra ``games``): the
Plackett-Luce model, a Bayesian rating like TrueSkill with a mean ``mu`` and an uncertainty
``sigma`` per player, draws included. Online updates depend on the order of the games, so games
are rated in one fixed order (seed, then pairing), the same in every process. The table ranks
by the ordinal ``mu - 3 sigma`` (OpenSkill's conservative estimate: a player who played few
games ranks below one with the same mean and more evidence) and shows ``mu +- 1.96 sigma``.
Beside them, the order-free rating LLM arenas publish: a Bradley-Terry fit on the Elo scale with
bootstrap intervals (:func:`bradley_terry`; numpy, a few lines of MM iterations rather than a
dependency for one fit).

A cooperative game (both seats one team, sharing the payoff: :attr:`GameSpec.cooperative`) has no
winner to rate: there each player's figure is the team's success rate over its games, with a
Wilson 95% interval, per seat too (a player may speak better than it listens), ranked by the
interval's lower end, and the cross-table is the success rate of each pairing of roles
(:func:`team_rate`, :func:`team_table`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["BOOTSTRAP", "bradley_terry", "cross_table", "rate", "standings", "team_rate", "team_table", "wilson"]

BOOTSTRAP = 200
"""Resamples of the games for the Bradley-Terry (Elo) intervals."""


def _ordered(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(records, key=lambda r: (r["seed"], r["players"][0], r["players"][1]))


def rate(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> list[dict[str, Any]]:
    """OpenSkill ratings of ``players`` from two-player game records (``players``, ``scores``).

    Returns:
        One row per player, best first: ``player``, ``rank``, ``mu``, ``sigma``, ``ordinal``
        (``mu - 3 sigma``), ``ci95`` (``mu +- 1.96 sigma``), ``elo`` and ``elo_ci95``
        (:func:`bradley_terry`), ``games``, ``wins``, ``draws``,
        ``losses``, ``score`` (points per game: 1 a win, 0.5 a draw), ``mean_return`` (per game:
        chips in poker, where it says more than wins) and ``forfeits``.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError as err:
        raise ImportError("match ratings use openskill, in the games extra: pip install 'rl4vlm-gym[games]'") from err

    model = PlackettLuce()
    ratings = {p: model.rating(name=p) for p in players}
    tally = {p: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0, "returns": 0.0, "forfeits": 0} for p in players}
    for r in _ordered(records):
        a, b = r["players"]
        sa, sb = r["scores"]
        # ranks: lower is better; equal ranks are a draw
        ranks = [1, 1] if sa == sb else [1, 2] if sa > sb else [2, 1]
        [[ratings[a]], [ratings[b]]] = model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
        for p, s, ret in ((a, sa, r["returns"][0]), (b, sb, r["returns"][1])):
            t = tally[p]
            t["games"] += 1
            t["returns"] += float(ret)
            t["points"] += s
            t["wins" if s == 1 else "draws" if s == 0.5 else "losses"] += 1
        if r.get("forfeit") is not None:
            tally[r["players"][r["forfeit"]]]["forfeits"] += 1
    rows = []
    for p in players:
        mu, sigma = float(ratings[p].mu), float(ratings[p].sigma)
        t = tally[p]
        rows.append(
            {
                "player": p,
                "mu": mu,
                "sigma": sigma,
                "ordinal": mu - 3 * sigma,
                "ci95": [mu - 1.96 * sigma, mu + 1.96 * sigma],
                "games": t["games"],
                "wins": t["wins"],
                "draws": t["draws"],
                "losses": t["losses"],
                "score": t["points"] / t["games"] if t["games"] else None,
                "mean_return": t["returns"] / t["games"] if t["games"] else None,
                "forfeits": t["forfeits"],
            }
        )
    elo = bradley_terry(records, players)
    for row in rows:
        row["elo"], row["elo_ci95"] = elo[row["player"]]["elo"], elo[row["player"]]["ci95"]
    rows.sort(key=lambda row: (-row["ordinal"], row["player"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return rows


def _bt_fit(wins: Any, games: Any, iterations: int = 500) -> Any:
    """Bradley-Terry strengths by the MM algorithm (Hunter 2004): ``wins[i, j]`` points of ``i``
    against ``j`` (a draw is half a win each), ``games[i, j]`` games between them."""
    import numpy as np

    n = len(wins)
    strength = np.ones(n)
    total = wins.sum(axis=1)
    for _ in range(iterations):
        pair = games / (strength[:, None] + strength[None, :])
        np.fill_diagonal(pair, 0.0)
        new = total / pair.sum(axis=1)
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, strength, rtol=1e-10, atol=0):
            return new
        strength = new
    return strength


def bradley_terry(
    records: Sequence[Mapping[str, Any]], players: Sequence[str], *, bootstrap: int = BOOTSTRAP, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Elo-scale Bradley-Terry ratings with bootstrap 95% intervals, as LLM arenas report them.

    A maximum-likelihood fit over all games at once (unlike OpenSkill's online updates, the order
    of the games does not matter); a draw counts half a win to each side. Every pair of players
    gets one virtual draw (a weak prior), so a player that never lost keeps a finite rating. On
    the Elo scale (400 points: 10 to 1 odds) with the players' mean at 1000; the interval is the
    2.5-97.5 percentiles over ``bootstrap`` resamples of the games (``seed`` fixes them).

    Returns:
        ``{player: {"elo": float, "ci95": [low, high]}}``.
    """
    import numpy as np

    records = _ordered(records)  # the resamples too are independent of the records' order
    index = {p: i for i, p in enumerate(players)}
    n = len(players)
    a = np.array([index[r["players"][0]] for r in records], dtype=int)
    b = np.array([index[r["players"][1]] for r in records], dtype=int)
    sa = np.array([float(r["scores"][0]) for r in records])

    def fit(rows: Any) -> Any:
        wins = np.full((n, n), 0.5)  # the prior: one draw between every pair
        games = np.ones((n, n))
        np.add.at(wins, (a[rows], b[rows]), sa[rows])
        np.add.at(wins, (b[rows], a[rows]), 1.0 - sa[rows])
        np.add.at(games, (a[rows], b[rows]), 1.0)
        np.add.at(games, (b[rows], a[rows]), 1.0)
        np.fill_diagonal(wins, 0.0)
        np.fill_diagonal(games, 0.0)
        elo = 400.0 * np.log10(_bt_fit(wins, games))
        return elo - elo.mean() + 1000.0

    point = fit(np.arange(len(records)))
    rng = np.random.default_rng(seed)
    samples = (
        np.array([fit(rng.integers(len(records), size=len(records))) for _ in range(bootstrap)])
        if len(records)
        else np.tile(point, (1, 1))
    )
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return {p: {"elo": float(point[i]), "ci95": [float(low[i]), float(high[i])]} for p, i in index.items()}


def cross_table(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """``table[a][b]``: ``a``'s wins, draws and losses against ``b`` over both seats, its points
    per game (``score``) and its mean return (chips in poker), or ``None`` where they never met."""
    table: dict[str, dict[str, dict[str, Any]]] = {
        a: {b: {"wins": 0, "draws": 0, "losses": 0, "games": 0, "points": 0.0, "returns": 0.0} for b in players if b != a}
        for a in players
    }
    for r in records:
        for i in (0, 1):
            a, b = r["players"][i], r["players"][1 - i]
            cell = table[a][b]
            s = r["scores"][i]
            cell["games"] += 1
            cell["points"] += s
            cell["returns"] += float(r["returns"][i])
            cell["wins" if s == 1 else "draws" if s == 0.5 else "losses"] += 1
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


def team_rate(records: Sequence[Mapping[str, Any]], players: Sequence[str]) -> list[dict[str, Any]]:
    """Each player's team success in a cooperative game (a game's ``scores`` are the team's: 1 or 0).

    Returns:
        One row per player, best first (by the lower end of the interval, then the rate):
        ``player``, ``rank``, ``games``, ``successes``, ``score`` (the success rate), ``ci95``
        (Wilson), ``by_seat`` (``[successes, games]`` in each seat), ``mean_return`` and
        ``forfeits`` (games it lost the team by an error or stalling).
    """
    tally = {p: {"games": 0, "successes": 0, "returns": 0.0, "forfeits": 0, "by_seat": [[0, 0], [0, 0]]} for p in players}
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
    rows = []
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


def standings(records: Sequence[Mapping[str, Any]], players: Sequence[str], *, cooperative: bool = False) -> dict[str, Any]:
    """Ratings and cross-table together (what ``ratings.json`` of a match folder holds); for a
    ``cooperative`` game, team success rates and the table of pairings (:func:`team_rate`)."""
    if cooperative:
        return {
            "cooperative": True,
            "ratings": team_rate(records, players),
            "cross_table": team_table(records, players),
            "games": len(records),
        }
    return {"ratings": rate(records, players), "cross_table": cross_table(records, players), "games": len(records)}
