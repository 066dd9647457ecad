"""``python kit_server.py [--expose-oracle]``: serves the conformance kit's test envs (``tests/kit/kit_walk``:
the correct Walk and each broken variant) on a free port, so tests can run the kit through rl4vlm/Remote-v0."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kit"))

import kit_walk  # noqa: E402

from rl4vlm_gym.server.app import serve  # noqa: E402
from rl4vlm_gym.server.environment import Catalog  # noqa: E402

if __name__ == "__main__":
    ids = kit_walk.register_all()
    catalog = Catalog({i: (i, {}) for i in ids}, expose_oracle="--expose-oracle" in sys.argv, title="kit test envs")
    serve(catalog, port=0, max_sessions=64)
