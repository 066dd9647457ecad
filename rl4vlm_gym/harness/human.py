"""A person in one seat of a match (``rl4vlm-gym match GAME -p human -p cfr``), at the terminal.

On each of its turns the seat prints what an agent in it would see: the text observation (its
feedback and view of the game), the legal moves, and where the seat's image is saved (a PNG,
overwritten each turn, that any image viewer can keep open), then reads one line from standard
input. The line goes to the game's parser like any agent's output: an invalid move is refused by
the env as it would be for a model (it keeps the turn and says why in the next observation).

The end of the input (EOF, Ctrl-D) forfeits the game being played, with a message saying so;
the match harness then stops, keeping the finished games (a re-run resumes with the next one).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import numpy as np

__all__ = ["HumanPlayer", "HumanQuit"]


class HumanQuit(EOFError):
    """The person's input ended (EOF) before a move: it forfeits the game."""


class HumanPlayer:
    """One person in one seat, reading moves from ``stdin`` and writing to ``stdout``.

    Args:
        label: the player's label in the match (names its image file).
        folder: where the seat's current image is written (``folder/LABEL.png``).
        stdin: where moves are read, one per line (default ``sys.stdin``).
        stdout: where the observation and the prompt are written (default ``sys.stdout``).
    """

    def __init__(self, label: str, folder: Path, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.label = label
        self.image_path = Path(folder) / f"{label}.png"
        self.stdin = stdin
        self.stdout = stdout
        self.quit = False
        self._turns = 0

    def _out(self, text: str) -> None:
        out = self.stdout or sys.stdout
        out.write(text + "\n")
        out.flush()

    def begin(self, game: str, seed: int, agent: str, seats: int) -> None:
        """A new game: say which one, and which seat the person plays."""
        self._turns = 0
        self._out(f"\n=== {game}, seed {seed}: you ({self.label}) play {agent}, one of {seats} seats ===")

    def _save(self, image: Any) -> str:
        array = np.asarray(image)
        if array.ndim != 3 or not array.any():  # obs_mode text: the image is blank
            return "no image (the match plays obs_mode text)"
        from PIL import Image

        self.image_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.image_path.with_suffix(".tmp.png")
        Image.fromarray(array.astype(np.uint8)).save(tmp)
        tmp.replace(self.image_path)  # a viewer never reads half a file
        return str(self.image_path)

    def act(self, obs: Mapping[str, Any]) -> str:
        """Show the observation and the legal moves; return the line the person types."""
        if self._turns == 0 and obs.get("mission"):
            self._out(f"Mission: {obs['mission']}")
        self._turns += 1
        if obs.get("text"):
            self._out(str(obs["text"]))
        self._out(f"Image: {self._save(obs.get('image'))}")
        self._out(f"Legal moves: {', '.join(map(str, obs.get('actions', ()))) or '(none)'}")
        out = self.stdout or sys.stdout
        out.write("your move> ")
        out.flush()
        line = (self.stdin or sys.stdin).readline()
        if not line:
            self.quit = True
            self._out("")
            raise HumanQuit("the input ended (EOF) before a move: the human player forfeits this game")
        return line.rstrip("\r\n")

    def end(self, obs: Mapping[str, Any], returns: list[float], seat: int) -> None:
        """The game is over: its last view (a showdown shows the cards) and the seat's return."""
        if obs.get("text"):
            self._out(str(obs["text"]))
        self._out(f"Game over: your return {returns[seat]:+g} (all seats: {', '.join(f'{r:+g}' for r in returns)})")
