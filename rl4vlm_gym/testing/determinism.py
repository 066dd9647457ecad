"""``determinism``: byte-identical rollouts in processes with different str hashing (and a served env's
local twin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from rl4vlm_gym.testing.common import REMOTE, _spec_json, is_remote
from rl4vlm_gym.testing.remote import _local_twin_trace
from rl4vlm_gym.testing.rollouts import _first_difference, _rollout_trace


def check_determinism(env_id: str, /, seed: int = 0, steps: int = 40, **kwargs: Any) -> str:
    """The same seed gives byte-identical rollouts here and in a fresh process whose str hashing
    (``PYTHONHASHSEED``) differs from this one's."""
    here, trace = _rollout_trace(env_id, seed, steps, kwargs)
    where = json.dumps({"spec": _spec_json(env_id), "path": sys.path})
    command = [sys.executable, "-m", "rl4vlm_gym.testing", "trace", env_id, str(seed), str(steps), json.dumps(kwargs), where]
    # Unset or "random", this process's hash seed is random, so "1" differs from it.
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, f"digest subprocess failed:\n{done.stderr[-2000:]}"
    answer = json.loads(done.stdout.strip().splitlines()[-1])  # the last line: an env may print before it
    rollouts = {"this process": (here, trace), f"a process with PYTHONHASHSEED={hash_seed}": (answer["digest"], answer["trace"])}
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
