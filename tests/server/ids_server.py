"""``python ids_server.py ID [ID ...]``: serves registered ids with ``--expose-oracle`` from one server on a
free port (its first line says where), so tests can run the kit through rl4vlm/Remote-v0 on many ids."""

from __future__ import annotations

import sys

from rl4vlm_gym.server.app import serve
from rl4vlm_gym.server.environment import Catalog

if __name__ == "__main__":
    catalog = Catalog({i: (i, {}) for i in sys.argv[1:]}, expose_oracle=True, title="registered ids")
    serve(catalog, port=0, max_sessions=64)
