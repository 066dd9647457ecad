"""Where RL4VLM Gym keeps what it makes once per machine: the tiny model, BALROG's TextWorld games,
NetHack's library with its calendar pinned."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_VARIABLE", "cache_dir"]

CACHE_VARIABLE = "RL4VLM_GYM_CACHE"
"""The environment variable that moves the cache (default ``~/.cache/rl4vlm_gym``)."""


def cache_dir(*parts: str) -> Path:
    """``$RL4VLM_GYM_CACHE/<parts...>`` (default ``~/.cache/rl4vlm_gym/<parts...>``); not created here."""
    root = os.environ.get(CACHE_VARIABLE) or Path.home() / ".cache" / "rl4vlm_gym"
    return Path(root).expanduser().joinpath(*parts)
