"""A test server's block: start a command that prints ``serving ... on URL``, yield the URL, and kill
its process group (server and env workers) at the end, whatever happened; or serve a catalog from a
thread of this process (no interpreter to start, for tests whose checks start no process)."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from rl4vlm_gym import processes


@contextmanager
def served(command: list[str]) -> Iterator[str]:
    proc, owned = processes.popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving "), f"the server did not start: {line!r}"
        yield line.split(" on ")[1].split()[0]
    finally:
        processes.kill_group(proc.pid)
        proc.wait()
        owned.release()


@contextmanager
def served_here(catalog: object) -> Iterator[str]:
    """``catalog`` (a :class:`~rl4vlm_gym.server.environment.Catalog`) served as ``rl4vlm-gym serve`` serves
    it (``create_app(catalog, max_sessions=64)``) by :func:`served_app`."""
    from rl4vlm_gym.server.app import create_app

    with served_app(create_app(catalog, max_sessions=64)) as url:
        yield url


@contextmanager
def served_app(app: object) -> Iterator[str]:
    """A ready app (:func:`~rl4vlm_gym.server.app.create_app`'s) served by uvicorn in a thread of this process on a
    free port, with the server's message limit; stopped, its sessions closed, at the end. The socket listens
    before the thread starts, so connections queue until uvicorn takes them (no wait)."""
    import uvicorn

    from rl4vlm_gym.server.app import MAX_WS_MESSAGE_BYTES

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(app, log_level="error", ws_max_size=MAX_WS_MESSAGE_BYTES)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
