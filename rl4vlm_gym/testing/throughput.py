"""Steps per second and reset latency (``rl4vlm-gym check`` prints them; ``benchmarks/`` records them)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import _base, _make, _move


def measure_throughput(
    env_id: str, /, steps: int = 2000, resets: int = 200, policy: str = "random", **kwargs: Any
) -> dict[str, float]:
    """Steps per second (episode resets included) and reset latency in ms.

    ``policy="random"`` steps with random admissible actions (cheap invalid moves included);
    ``policy="oracle"`` with the oracle's, so every step is a new state and a new frame.
    """
    if policy not in ("random", "oracle"):
        raise ValueError(f"policy={policy!r} is unknown; choose 'random' or 'oracle'")
    env = _make(env_id, **kwargs)
    base, rng = _base(env), np.random.default_rng(0)
    reset_times = []
    for seed in range(resets):
        start = time.perf_counter()
        env.reset(seed=seed)
        reset_times.append(time.perf_counter() - start)
    episode = resets  # fresh deals: seeds the timed resets did not use
    obs, _ = env.reset(seed=episode)
    start = time.perf_counter()
    for _ in range(steps):
        actions = obs["actions"]
        action = _move(base) if policy == "oracle" else actions[int(rng.integers(len(actions)))]
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            episode += 1
            obs, _ = env.reset(seed=episode)
    elapsed = time.perf_counter() - start
    env.close()
    return {
        "steps_per_s": steps / elapsed,
        "reset_ms_p50": float(np.percentile(reset_times, 50) * 1e3),
        "reset_ms_p95": float(np.percentile(reset_times, 95) * 1e3),
    }
