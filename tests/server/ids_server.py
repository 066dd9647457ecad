"""``python ids_server.py [--kit] [--hidden] [ID ...]``: serves registered ids (every one when none is named)
from one server on a free port (its first line says where), so tests can run the kit through
rl4vlm/Remote-v0 on many ids. ``--kit`` serves the kit's test envs too (``tests/kit/kit_walk``: the
correct Walk and each broken variant); ``--hidden`` keeps the oracle hidden (no ``--expose-oracle``).

Envs are made per session, on its first reset: serving every id costs no more to start than one."""

from __future__ import annotations

import sys
from pathlib import Path

import rl4vlm_gym
from rl4vlm_gym.server.app import serve
from rl4vlm_gym.server.environment import Catalog

if __name__ == "__main__":
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    ids = [a for a in sys.argv[1:] if not a.startswith("--")] or [card.id for card in rl4vlm_gym.list_envs()]
    if "--kit" in flags:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kit"))
        import kit_walk

        ids += kit_walk.register_all()
    catalog = Catalog({i: (i, {}) for i in ids}, expose_oracle="--hidden" not in flags, title="registered ids")
    serve(catalog, port=0, max_sessions=64)
