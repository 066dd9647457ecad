"""``render``: ``rgb_array``, ``ansi`` and ``human`` render modes; ``close()`` twice."""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import REMOTE, _base, _make, _move, _no_frame_wait, _view_overridden, is_remote


def check_render(env_id: str, /, **kwargs: Any) -> str:
    """``rgb_array`` gives the frame, ``ansi`` the text state, ``human`` a window; close twice.

    ``render()`` in ``rgb_array`` mode equals the observed image unless the env overrides
    ``_view`` (another view, such as a map), which then only has to be a stable ``uint8`` RGB frame.
    A remote env has no ``human`` window (it would open on the server's machine)."""
    proxy = is_remote(env_id)
    for mode in ("rgb_array", "ansi") if proxy else ("rgb_array", "ansi", "human"):
        env = _make(env_id, **{**kwargs, "render_mode": mode})
        base = _base(env)
        with _no_frame_wait(type(base)):
            obs, _ = env.reset(seed=1)
            out = env.render()
            if mode == "rgb_array":
                assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3, (
                    "bad rgb_array frame"
                )
                if not _view_overridden(base):
                    assert np.array_equal(out, obs["image"]), (
                        "render() differs from the observed image (and _view is not overridden)"
                    )
                else:
                    assert np.array_equal(out, np.asarray(env.render())), "render() of an overridden _view changes between calls"
            elif mode == "ansi":
                assert isinstance(out, str) and obs["mission"] in out, "ansi render must hold the mission and state"
            else:
                assert out is None, "human render must return None"
                env.step(_move(base))
            env.close()
            env.close()
    if proxy:
        return f"rgb_array and ansi render; close() twice is safe; {REMOTE}the human window (it would open on the server)"
    return "rgb_array, ansi and human render; close() twice is safe"
