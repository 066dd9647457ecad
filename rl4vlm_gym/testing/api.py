"""``api``: Gymnasium's ``check_env`` in every obs mode; ``pickle``: a pickled env continues identically."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
from gymnasium.utils.env_checker import check_env

from rl4vlm_gym.testing.common import _base, _make, _move, _no_frame_wait
from rl4vlm_gym.testing.remote import _card


def check_api(env_id: str, /, **kwargs: Any) -> str:
    """Gymnasium's ``check_env``, unmodified, in every obs mode; its warnings count as failures.

    Its render-mode pass makes envs from the registered spec, whatever the obs mode, so it runs
    once (with the first obs mode)."""
    card = _card(env_id, kwargs)
    for i, obs_mode in enumerate(card.obs_modes):
        env = _make(env_id, **{**kwargs, "obs_mode": obs_mode})
        cls = type(env.unwrapped)
        with _no_frame_wait(cls), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped, skip_render_check=i > 0)
        env.close()
        assert not caught, f"check_env warned in obs_mode={obs_mode!r}: {[str(w.message) for w in caught]}"
    return f"check_env passed in {', '.join(card.obs_modes)}"


PICKLE_SEEDS = range(3, 8)
"""Seeds tried in turn for an episode that a first move does not end (a clone of an ended episode checks little)."""


def check_pickle(env_id: str, /, **kwargs: Any) -> str:
    """A pickled env, one move into an episode, continues exactly like the original."""
    env = _make(env_id, **kwargs)
    base = _base(env)
    for seed in PICKLE_SEEDS:
        env.reset(seed=seed)
        _, _, terminated, truncated, _ = env.step(_move(base))
        if not (terminated or truncated):
            break
    clone = pickle.loads(pickle.dumps(env))
    try:
        for _ in range(3):
            action = _move(base)
            a, b = env.step(action), clone.step(action)
            assert np.array_equal(a[0]["image"], b[0]["image"]) and a[0]["text"] == b[0]["text"], "pickled env diverged"
            assert a[1:] == b[1:], f"pickled env diverged: {a[1:]} != {b[1:]}"
            if a[2] or a[3]:
                break
    finally:  # both hold what the env holds (a browser window, a server): an unclosed one outlives the check
        clone.close()
        env.close()
    return "pickled env continues identically"
