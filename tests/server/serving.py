"""A test server's block: start a command that prints ``serving ... on URL``, yield the URL, and kill
its process group (server and env workers) at the end, whatever happened."""

from __future__ import annotations

import subprocess
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
