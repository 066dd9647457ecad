"""The conformance kit is a package, one module per check family, and every name it exported as one
module is still importable from ``rl4vlm_gym.testing``."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import rl4vlm_gym.testing as kit
from rl4vlm_gym.testing import CHECKS, rollout_digest

# What `from rl4vlm_gym.testing import ...` gave before the split (its __all__ and public constants).
PUBLIC = (
    "CHECKS", "FUZZ_INPUTS", "ORACLE_EPISODES", "ORACLE_EPISODES_EXPENSIVE", "CheckResult", "NotCheckable",
    "DECISION_EPISODES", "check_api", "check_arguments", "check_decisions", "check_determinism", "check_docs", "check_fuzz", "check_observations",
    "check_oracle", "check_pickle", "check_render", "check_rules", "check_seeding", "check_vector", "is_remote",
    "measure_throughput", "rollout_digest", "run_checks", "REMOTE", "SURELY_INVALID", "VECTOR_TIMEOUT_S",
)  # fmt: skip
# Checks that share a module with a sibling: pickling is part of the API contract.
HOMES = {"pickle": "api"}


def test_every_public_name_is_importable_from_the_package() -> None:
    missing = [name for name in PUBLIC if not hasattr(kit, name)]
    assert not missing, missing
    assert set(kit.__all__) == set(PUBLIC)


def test_each_check_lives_in_its_family_s_module() -> None:
    for name, check in CHECKS.items():
        home = f"rl4vlm_gym.testing.{HOMES.get(name, name)}"
        assert check.__module__ == home, f"check {name!r} lives in {check.__module__}, not {home}"
        assert importlib.import_module(home).__doc__, f"{home} has no docstring"


def test_python_m_runs_the_digest_subprocess() -> None:
    kwargs = {"obs_mode": "text"}
    command = [sys.executable, "-m", "rl4vlm_gym.testing", "digest", "rl4vlm/NumberLine-v0", "3", "5", json.dumps(kwargs)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == rollout_digest("rl4vlm/NumberLine-v0", 3, 5, kwargs)
