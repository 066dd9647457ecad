"""The server family's shared server: one ``ids_server.py --kit`` per test process (per xdist worker),
serving every registered id and the kit's test envs with the oracle exposed, on a free port of its
own, killed at the end of the session. Its envs are made per session on their first reset, so one
server costs one start (an interpreter importing openenv-core: seconds) whatever the tests ask of it;
each test's WebSocket sessions are its own, so tests share no env state through it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "kit"))


@pytest.fixture(scope="session")
def registry_url() -> Iterator[str]:
    """Every registered id and every kit test env (``kit/...``), served with ``--expose-oracle``."""
    pytest.importorskip("openenv.core")
    from serving import served

    with served([sys.executable, str(HERE / "ids_server.py"), "--kit"]) as url:
        yield url


@pytest.fixture(scope="module")
def server_test_envs() -> Iterator[list[str]]:
    """The test-only envs of ``server_envs.py`` registered with Gymnasium for a module's tests, removed after."""
    import gymnasium as gym
    import server_envs

    ids = server_envs.register()
    yield ids
    for env_id in ids:
        gym.registry.pop(env_id, None)
