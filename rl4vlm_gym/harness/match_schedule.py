"""Which games a tournament plays: the round robin, Swiss pairings, and the seeds they are played on.

A game is ``(player in seat 0, ..., seed)``; its task name (``"a vs b"``) and its seed identify it
in a match folder's records.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rl4vlm_gym.harness.match_errors import MatchError

__all__ = ["MAX_SEEDS", "SCHEDULES", "check_seeds", "schedule", "swiss_pairings", "task_name"]

MAX_SEEDS = 100_000
SCHEDULES = ("round-robin", "swiss")


def schedule(labels: Sequence[str], seeds: Iterable[int], seats: int = 2) -> list[tuple[Any, ...]]:
    """The round robin: for each seed, every group of ``seats`` players (each combination, in the
    order of ``labels``), in each rotation of its seats, as ``(player in seat 0, ..., seed)``.

    Every player of a group so plays every seat on every seed (the duplicate format: a deal or an
    opening is played from each side, so luck cancels); with two seats, each pair in both seat
    orders. A seed holds ``C(players, seats) * seats`` games (4 players, 2 seats: 12; 5 players,
    3 seats: 30).
    """
    if seats < 2:
        raise MatchError(f"a game of {seats} seat(s): a match needs at least two")
    games = []
    for seed in seeds:
        for group in itertools.combinations(labels, seats):
            for k in range(seats):
                games.append((*group[k:], *group[:k], seed))
    return games


def task_name(*players: str) -> str:
    """A seating's name in the records: ``"a vs b"``."""
    return " vs ".join(players)


def check_seeds(seeds: Sequence[int]) -> list[int]:
    """``seeds`` as a list, checked: at least one, at most :data:`MAX_SEEDS`, ints in [0, 2**32), none repeated."""
    seeds = list(seeds)
    if not seeds:
        raise MatchError("no seeds: give at least one")
    if len(seeds) > MAX_SEEDS:
        raise MatchError(f"{len(seeds)} seeds: at most {MAX_SEEDS}")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**32:
            raise MatchError(f"seed {s!r} is not an int in [0, 2**32)")
    if len(set(seeds)) != len(seeds):
        raise MatchError("seeds repeat: each seed is played once per seating")
    return seeds


def swiss_pairings(
    labels: Sequence[str], records: Sequence[Mapping[str, Any]], seed: int, *, chips: bool = False
) -> list[tuple[str, str, int]]:
    """One Swiss round on ``seed``: players ordered by points so far (ties in the order given;
    with ``chips``, a chip game's, by chips won rather than games won: their AIVAT estimates where
    the records hold them), each paired with the next
    one below it it has not met yet (or, having met all, the next one); with an odd number, the
    last player unpaired sits the round out. Both seat orders are played."""
    points = dict.fromkeys(labels, 0.0)
    met: set[frozenset[str]] = set()
    for r in records:
        for label, score, chip in zip(r["players"], r["scores"], r.get("aivat") or r["returns"], strict=True):
            points[label] += float(chip) if chips else score
        met.add(frozenset(r["players"]))
    free = sorted(labels, key=lambda p: (-points[p], labels.index(p)))
    games = []
    while len(free) >= 2:
        a = free.pop(0)
        b = next((q for q in free if frozenset((a, q)) not in met), free[0])
        free.remove(b)
        games += [(a, b, seed), (b, a, seed)]
    return games
