"""Shared pytest set-up: headless pygame, and ALFWorld's sample games when nothing else is set."""

from __future__ import annotations

import os
from pathlib import Path

# Windows for render_mode="human" open on SDL's dummy driver: no screen in CI.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

# The six real ALFWorld games shipped beside the repository (CI has them); $ALFWORLD_DATA wins.
ALFWORLD_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld_sample"
if ALFWORLD_SAMPLE.is_dir():
    os.environ.setdefault("ALFWORLD_DATA", str(ALFWORLD_SAMPLE))
