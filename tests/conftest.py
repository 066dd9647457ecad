"""Shared pytest set-up: headless pygame and the ids of every registered env."""

from __future__ import annotations

import os

# Windows for render_mode="human" open on SDL's dummy driver: no screen in CI.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
