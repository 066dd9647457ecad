"""``seeding``: seeds decide episodes; ``reset()`` without a seed continues the RNG."""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import _digest, _make


def check_seeding(env_id: str, /, n_seeds: int = 20, unseeded: int = 4, **kwargs: Any) -> str:
    """``reset(seed)`` decides the episode: one seed repeats, different seeds differ, and
    ``reset()`` without a seed continues the RNG (a new episode, never a replay)."""
    env = _make(env_id, **kwargs)
    keys = []
    for seed in range(n_seeds):
        a, info_a = env.reset(seed=seed)
        b, info_b = env.reset(seed=seed)
        assert a["text"] == b["text"] and np.array_equal(a["image"], b["image"]), f"seed {seed} did not repeat"
        assert info_a["state_key"] == info_b["state_key"], f"seed {seed} did not repeat its state_key"
        keys.append((a["text"], a["mission"], _digest(a["image"]), info_a["state_key"]))
    distinct = len(set(keys))
    assert distinct > 1, f"{n_seeds} different seeds all gave the same first observation"
    env.reset(seed=0)
    fresh = set()
    for _ in range(unseeded):
        obs, info = env.reset()
        fresh.add((obs["text"], obs["mission"], _digest(obs["image"]), info["state_key"]))
    env.close()
    assert fresh - {keys[0]} and len(fresh) > 1, (
        f"reset() without a seed replays the same episode ({unseeded} unseeded resets after reset(seed=0) "
        f"gave {len(fresh)} distinct first observation(s)); it must continue the RNG, not reseed it"
    )
    return f"{distinct} distinct first observations over {n_seeds} seeds; {len(fresh)}/{unseeded} unseeded resets distinct"
