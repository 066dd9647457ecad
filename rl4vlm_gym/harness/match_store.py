"""A match folder on disk: its manifest, its finished games, and resuming it.

A match folder holds ``match.json`` (the game, its arguments, the players, the payoff and the
seats) and ``games.jsonl``, one line per finished game, appended and flushed as each ends
(:class:`GameLog`). :func:`open_match` creates a folder or checks that it holds the same match and
merges new players and seeds; :func:`load_matches` reads a folder back, checked.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from rl4vlm_gym.games import PAYOFFS, list_games
from rl4vlm_gym.harness.match_errors import MatchError
from rl4vlm_gym.harness.match_players import MAX_PLAYERS
from rl4vlm_gym.harness.runner import load_episodes

__all__ = ["GameLog", "load_matches", "open_match", "read_manifest"]

_SYNC_SECONDS = 1.0  # games.jsonl is flushed after every game, synced to disk at most once a second (fsync costs ms)


class GameLog:
    """A match folder's ``games.jsonl``, one finished game appended at a time.

    Each record is written as one line and flushed (in the OS's hands: a killed process loses no
    finished game), and synced to disk at most once a second (a crash of the machine loses at most
    a second); :meth:`close` syncs and closes. The file is opened at the first record.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / "games.jsonl"
        self._sink: Any = None
        self._synced = time.monotonic()

    def append(self, record: dict[str, Any]) -> None:
        if self._sink is None:
            self._sink = self.path.open("a", encoding="utf-8")
        self._sink.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._sink.flush()
        if time.monotonic() - self._synced >= _SYNC_SECONDS:
            os.fsync(self._sink.fileno())
            self._synced = time.monotonic()

    def close(self) -> None:
        if self._sink is not None:
            os.fsync(self._sink.fileno())
            self._sink.close()


def open_match(out: Path, manifest: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """Create ``out`` or check it holds a match of the same game; merge new players and seeds
    into its manifest; read back its finished games."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "match.json"
    if path.exists():
        old = read_manifest(path)
        for key in ("game", "factory", "game_kwargs", "prompt", "schedule"):
            if old.get(key) != manifest[key]:
                raise MatchError(
                    f"{out} holds a match with another {key} ({old.get(key)!r}, this one: {manifest[key]!r}); pass another --out"
                )
        for label, player in manifest["players"].items():
            if label in old["players"] and old["players"][label] != player:
                raise MatchError(
                    f"{out}: player {label!r} was {old['players'][label]} there, now {player}; give the new one another label"
                )
        if manifest["schedule"] == "swiss" and (old["players"] != manifest["players"] or old["seeds"] != manifest["seeds"]):
            raise MatchError(
                f"{out} holds a Swiss tournament of other players or seeds: its pairings would change; pass another --out"
            )
        manifest = {
            **manifest,
            "players": {**old["players"], **manifest["players"]},
            "seeds": list(dict.fromkeys([*old["seeds"], *manifest["seeds"]])),
        }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    records = load_episodes(out / "games.jsonl", repair=True)
    return {(r["task"], r["seed"]): r for r in records}


def read_manifest(path: Path) -> dict[str, Any]:
    """A folder's ``match.json``, checked to be a manifest: at most 1 MiB, a JSON object with players and seeds."""
    if path.stat().st_size > 1 << 20:
        raise MatchError(f"{path} is over 1 MiB: not a match manifest")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise MatchError(f"{path} is not valid JSON ({err}); move the folder away or pass another --out") from None
    if not isinstance(data, dict) or not isinstance(data.get("players"), dict) or not isinstance(data.get("seeds"), list):
        raise MatchError(f"{path} is not a match manifest (a JSON object with players and seeds)")
    return data


def load_matches(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A match folder's manifest and its finished games, checked: each record seats the match's
    players (as many as the game's seats, two in folders written before N-player matches), with
    a score of 0, 0.5 or 1 and a finite return per seat. The manifest's ``payoff`` is filled in
    for folders written before it was recorded (a registered game's own; else by ``cooperative``)."""
    folder = Path(folder)
    path = folder / "match.json"
    if not path.exists():
        raise MatchError(f"{folder} holds no match.json: not a match folder (rl4vlm-gym match writes one)")
    manifest = read_manifest(path)
    if manifest.get("payoff") not in PAYOFFS:
        registered = {g.name: g for g in list_games()}.get(str(manifest.get("game")))
        manifest["payoff"] = (
            "team" if manifest.get("cooperative") else registered.payoff if registered is not None else "win-loss"
        )
    seats = manifest.get("seats", 2)
    if isinstance(seats, bool) or not isinstance(seats, int) or not 2 <= seats <= MAX_PLAYERS:
        raise MatchError(f"{path}: seats {seats!r} is not a number of seats (2 to {MAX_PLAYERS})")
    records = load_episodes(folder / "games.jsonl")
    for n, r in enumerate(records, 1):
        players, scores, returns = r.get("players"), r.get("scores"), r.get("returns")
        if (
            not isinstance(players, list)
            or len(players) != seats
            or any(p not in manifest["players"] for p in players)
            or not isinstance(scores, list)
            or len(scores) != seats
            or any(s not in (0, 0.5, 1) for s in scores)
            or not isinstance(returns, list)
            or len(returns) != seats
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in returns)
        ):
            raise MatchError(
                f"{folder / 'games.jsonl'}: game {n} is not a record of {seats} of the match's players "
                "with scores 0, 0.5 or 1 and finite returns"
            )
    return manifest, records
