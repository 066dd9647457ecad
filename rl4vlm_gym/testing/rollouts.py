"""Seeded rollouts as digests and per-step traces, and where two traces first part (for ``determinism``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from rl4vlm_gym.testing.common import Moves, _base, _json_default, _make


def rollout_digest(env_id: str, seed: int, steps: int, kwargs: Mapping[str, Any] | None = None) -> str:
    """SHA-256 of a seeded rollout: every image, text, reward, flag and info, in order."""
    return _rollout_trace(env_id, seed, steps, kwargs)[0]


def _rollout_trace(env_id: str, seed: int, steps: int, kwargs: Mapping[str, Any] | None = None) -> tuple[str, list[list[str]]]:
    """:func:`rollout_digest` and its trace: per reset and step, a label and short digests of the
    image, of the text / mission / actions / info, and of the action with its reward and flags, so
    that two rollouts that differ can say where they first part."""
    env = _make(env_id, **dict(kwargs or {}))
    base = _base(env)
    policy = Moves(base, np.random.default_rng(seed))
    digest, trace = hashlib.sha256(), []

    def record(label: str, obs: Mapping[str, Any], info: Mapping[str, Any], result: Any) -> None:
        parts = (
            obs["image"].tobytes(),
            json.dumps([obs["text"], obs["mission"], obs["actions"], info], default=_json_default, sort_keys=True).encode(
                "utf-8", "surrogatepass"
            ),
            json.dumps(result).encode("utf-8", "surrogatepass"),
        )
        for part in parts:
            digest.update(part)
        trace.append([label, *(hashlib.sha256(part).hexdigest()[:12] for part in parts)])

    episode = 0
    obs, info = env.reset(seed=seed)
    record(f"reset(seed={seed})", obs, info, None)
    for step in range(1, steps + 1):
        action = policy(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        record(f"step {step}", obs, info, [action, reward, terminated, truncated])
        if terminated or truncated:
            episode += 1
            obs, info = env.reset(seed=seed + episode)
            record(f"reset(seed={seed + episode})", obs, info, None)
    env.close()
    return digest.hexdigest(), trace


_TRACE_PARTS = ("the image", "the text, mission, actions or info", "the action taken, its reward or its flags")


def _first_difference(traces: Mapping[str, list[list[str]]]) -> str:
    """Where ``traces`` (see :func:`_rollout_trace`) first part: after which reset or step, and what differs."""
    (first, reference), *others = traces.items()
    for i, (label, *parts) in enumerate(reference):
        for name, trace in others:
            # Entries align until a first difference: an episode ending early shows in its flags first.
            theirs = trace[i][1:] if i < len(trace) else [None] * len(parts)
            if theirs != parts:
                what = ", ".join(_TRACE_PARTS[k] for k, (a, b) in enumerate(zip(parts, theirs, strict=True)) if a != b)
                return f"{first} and {name} first differ after {label}: {what}"
    return "their traces agree"
