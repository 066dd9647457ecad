"""``seeding``: seeds decide episodes; ``reset()`` without a seed continues the RNG."""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import _base, _digest, _make

WITH_OPTIONS = 3
"""Seeds at which ``reset(seed, options=...)`` must give ``reset(seed)``'s episode."""


def check_seeding(env_id: str, /, n_seeds: int = 20, unseeded: int = 4, **kwargs: Any) -> str:
    """``reset(seed)`` decides the episode: one seed repeats, different seeds differ, ``options`` that
    change nothing (``{}``, the current level) keep the seed's episode, and ``reset()`` without a
    seed continues the RNG (a new episode, never a replay)."""
    env = _make(env_id, **kwargs)
    level = _base(env).facts()["level"]
    keys = []
    for seed in range(n_seeds):
        a, info_a = env.reset(seed=seed)
        b, info_b = env.reset(seed=seed)
        assert a["text"] == b["text"] and np.array_equal(a["image"], b["image"]), f"seed {seed} did not repeat"
        assert info_a["state_key"] == info_b["state_key"], f"seed {seed} did not repeat its state_key"
        for options in ({}, {"level": level}) if seed < WITH_OPTIONS else ():
            c, info_c = env.reset(seed=seed, options=options)
            same = (
                a["text"] == c["text"] and np.array_equal(a["image"], c["image"]) and info_a["state_key"] == info_c["state_key"]
            )
            assert same, (
                f"reset(seed={seed}, options={options}) plays another episode than reset(seed={seed}): the seed is dropped"
            )
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
