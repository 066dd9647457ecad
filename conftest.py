"""Collection of the doctests under ``rl4vlm_gym/`` (``--doctest-modules``): a module that needs an
optional extra at import time is left out when the extra is absent, and the header says so."""

from __future__ import annotations

import importlib.util

OPTIONAL_MODULES = {
    "rl4vlm_gym/agents/tiny.py": ("transformers", "hf"),
    "rl4vlm_gym/agents/serve.py": ("flask", "hf"),
    "rl4vlm_gym/server/__init__.py": ("openenv", "server"),
    "rl4vlm_gym/server/_openenv.py": ("openenv", "server"),
    "rl4vlm_gym/server/app.py": ("openenv", "server"),
    "rl4vlm_gym/server/environment.py": ("openenv", "server"),
    "rl4vlm_gym/server/models.py": ("openenv", "server"),
    "rl4vlm_gym/server/remote.py": ("openenv", "server"),
    "rl4vlm_gym/backends/ray_vector.py": ("ray", "ray"),
}
"""Library modules that import an optional package at module level: the package and its extra."""

MISSING = {path: need for path, need in OPTIONAL_MODULES.items() if importlib.util.find_spec(need[0]) is None}
collect_ignore = list(MISSING)


def pytest_report_header() -> list[str]:
    return [f"doctests not collected: {path} (needs {module}: the {extra} extra)" for path, (module, extra) in MISSING.items()]
