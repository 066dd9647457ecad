"""``render``: ``rgb_array``, ``ansi`` and ``human`` render modes; ``close()`` twice."""

from __future__ import annotations

from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import REMOTE, _base, _make, _move, _no_frame_wait, _policy_action, _view_overridden, is_remote

RENDER_STEPS = 2
"""Steps after ``reset`` at which each render mode is checked again (an env's frame or text may go
stale after a step, not at reset)."""


def check_render(env_id: str, /, **kwargs: Any) -> str:
    """``rgb_array`` gives the frame, ``ansi`` the text state, ``human`` a window; close twice.

        At reset and after each of ``RENDER_STEPS`` steps: ``render()`` in ``rgb_array`` mode equals the
        observed image unless the env overrides ``_view`` (another view, such as a map), which then only
        has to be a stable ``uint8`` RGB frame; ``ansi`` holds the mission, the state (``describe()``) and
        every admissible action. A remote env has no ``human`` window (it would open on the server's machine),
    and its frames and texts are drawn from the observations it was sent, so the served env's own
    ``render()`` is not seen (the summary says so)."""
    proxy = is_remote(env_id)
    for mode in ("rgb_array", "ansi") if proxy else ("rgb_array", "ansi", "human"):
        env = _make(env_id, **{**kwargs, "render_mode": mode})
        base = _base(env)
        with _no_frame_wait(type(base)):
            obs, _ = env.reset(seed=1)
            rng = np.random.default_rng(1)
            for t in range(RENDER_STEPS + 1):
                at = "after reset" if t == 0 else f"after step {t}"
                _assert_render(env, base, mode, obs, at, proxy)
                if t == RENDER_STEPS:
                    break
                # a move that changes the state (the oracle's), then admissible words at random
                action = _move(base) if t == 0 else _policy_action(base, obs, rng, random_moves=1.0)
                obs, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    _assert_render(env, base, mode, obs, f"at the end (step {t + 1})", proxy)
                    break
            env.close()
            env.close()
    if proxy:
        return (
            f"rgb_array and ansi render at reset and {RENDER_STEPS} steps; close() twice is safe; {REMOTE}the human window "
            "(it would open on the server) and the served env's own render() (a remote env draws its frame and text "
            "from what the server sent: the observation)"
        )
    return f"rgb_array, ansi and human render at reset and {RENDER_STEPS} steps; close() twice is safe"


def _assert_render(env: Any, base: Any, mode: str, obs: Any, at: str, is_remote_env: bool) -> None:
    out = env.render()
    if mode == "rgb_array":
        assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3, (
            f"bad rgb_array frame {at}"
        )
        if not _view_overridden(base):
            assert np.array_equal(out, obs["image"]), (
                f"render() {at} differs from the observed image (and _view is not overridden)"
            )
        else:
            assert np.array_equal(out, np.asarray(env.render())), f"render() of an overridden _view {at} changes between calls"
    elif mode == "ansi":
        assert isinstance(out, str) and obs["mission"] in out, f"the ansi render {at} lacks the mission"
        # A remote env writes its ansi text from the observation's text (the served render is not seen).
        state = obs["text"] if is_remote_env else base.describe()
        assert state in out, f"the ansi render {at} lacks the state ({'the observation text' if is_remote_env else 'describe()'})"
        rest = out.replace(obs["mission"], "").replace(state, "")  # the actions' own place
        missing = [a for a in obs["actions"] if a not in rest]
        assert not missing, f"the ansi render {at} lacks admissible actions {missing[:3]}"
    else:
        assert out is None, "human render must return None"
