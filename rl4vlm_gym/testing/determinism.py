"""``determinism``: byte-identical rollouts in processes with different str hashing (and a served env's
local twin)."""

from __future__ import annotations

from typing import Any

from rl4vlm_gym.testing.common import REMOTE, _ensure_registered, _spec_json, is_remote
from rl4vlm_gym.testing.fresh import fork_server
from rl4vlm_gym.testing.remote import _local_twin_trace
from rl4vlm_gym.testing.rollouts import _first_difference, _rollout_trace

DETERMINISM_TIMEOUT_S = 600.0
"""How long the fresh process's rollout may take before the kit kills it and fails the check."""


def check_determinism(env_id: str, /, seed: int = 0, steps: int = 40, **kwargs: Any) -> str:
    """The same seed gives byte-identical rollouts here and in a fresh process whose str hashing
    (``PYTHONHASHSEED``) differs from this one's.

    The fresh process is a child of the kit's fork server (:mod:`rl4vlm_gym.testing.fresh`): it has
    imported what a new interpreter running the kit imports, and made no env before this rollout.
    It plays while this process plays its own rollout."""
    server = fork_server()
    hash_seed = server.hash_seed
    job = server.start(
        _trace_in_child, env_id, _spec_json(env_id), seed, steps, kwargs, what=f"{env_id}'s rollout in a fresh process"
    )
    try:
        here, trace = _rollout_trace(env_id, seed, steps, kwargs)
    except BaseException:
        job.cancel()
        raise
    answer = job.result(DETERMINISM_TIMEOUT_S)
    rollouts = {"this process": (here, trace), f"a process with PYTHONHASHSEED={hash_seed}": answer}
    if is_remote(env_id):
        rollouts.update(_local_twin_trace(env_id, seed, steps, kwargs))
    digests = {name: value[0] for name, value in rollouts.items()}
    traces = {name: value[1] for name, value in rollouts.items()}
    assert len(set(digests.values())) == 1, f"rollouts differ across processes: {digests}; {_first_difference(traces)}"
    summary = f"{steps}-step rollouts identical in 2 processes with different str hashing (sha256 {here[:12]})"
    if is_remote(env_id):
        if len(digests) == 2:
            return (
                f"{summary}; {REMOTE}the served env under other str hashing (one server process plays both rollouts; "
                "its id is not registered here to compare with a local env)"
            )
        summary += "; the same as the local env's rollout (the server plays in another process, with its own str hashing)"
    return summary


def _trace_in_child(
    env_id: str, spec_json: str | None, seed: int, steps: int, kwargs: dict[str, Any]
) -> tuple[str, list[list[str]]]:
    """:func:`_rollout_trace` in the fresh process (a test-only id registered there first)."""
    _ensure_registered(env_id, spec_json)
    return _rollout_trace(env_id, seed, steps, kwargs)
