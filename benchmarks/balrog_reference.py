"""What the benchmarks/balrog_*_vs_original.py scripts share: BALROG's side run by the reference interpreter.

Each of those scripts compares our balrog/ envs with BALROG's own wrappers; BALROG's side is a script
(the benchmark's ``ORIGINAL``) run by a reference interpreter in a subprocess, from a temporary
directory so that no checkout folder shadows a package. Imported as ``balrog_reference`` (the
scripts run as ``python benchmarks/<script>.py``, which puts this folder first on ``sys.path``).

- :func:`reference_parser`: the argument parser, its first argument the reference interpreter.
- :func:`original`: runs BALROG's side on a plan (a JSON file) and reads its last stdout line as JSON.
- :func:`play` and :func:`digest`: one episode's timed steps and its texts hashed, on either side
  (:data:`PLAY` is their source, which starts BALROG's side's script).
- :func:`ms`: a median in ms.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def play(env, first, actions, text, timed, steps, act=None):
    """Plays ``actions`` on ``env`` after the reset that returned ``first`` (obs, info), to the episode's end.

    Each ``env.step`` (with ``act(action)`` inside the timing, when given) is timed by
    ``time.perf_counter`` and appended to ``steps`` if ``timed``. Returns the texts, ``text(obs, info)``
    of the reset and of every step. No annotations: BALROG's side runs this source too (:data:`PLAY`).
    """
    texts = [text(*first)]
    for action in actions:
        t0 = time.perf_counter()
        obs, reward, terminated, truncated, info = env.step(action if act is None else act(action))
        t1 = time.perf_counter()
        texts.append(text(obs, info))
        if timed:
            steps.append(t1 - t0)
        if terminated or truncated:
            break
    return texts


def digest(texts, mask=None):
    """An episode's texts hashed (``mask``, a regular expression, removed first where given)."""
    joined = "\x00".join(texts)
    return hashlib.sha256((joined if mask is None else re.sub(mask, "", joined)).encode()).hexdigest()


def balrog_text(obs, info):
    """The long-term context our envs give in ``info["balrog"]``, BALROG's ``obs["text"]`` one."""
    return info["balrog"]["long_term_context"]


def time_ours(env: Any, rows: Any, text: Any = balrog_text, mask: str | None = None) -> dict[str, Any]:
    """Our side: each (seed, actions) of ``rows`` played on ``env`` after a timed reset; the first
    episode warms up (not timed). Returns the reset and step times and each episode's digest."""
    resets: list[float] = []
    steps: list[float] = []
    digests = []
    for index, (seed, actions) in enumerate(rows):
        start = time.perf_counter()
        first = env.reset(seed=seed)
        end = time.perf_counter()
        texts = play(env, first, actions, text, index, steps)
        if index:
            resets.append(end - start)
        digests.append(digest(texts, mask))
    return {"reset": resets, "step": steps, "digests": digests}


# play's and digest's source, which BALROG's side starts with (it imports hashlib, re and time itself)
PLAY = inspect.getsource(play) + "\n\n" + inspect.getsource(digest)


def original(python: str, script: str, plan: Any, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs ``script`` (BALROG's side, :data:`PLAY` put first) with ``python`` on ``plan``.

    The script is called as ``script plan.json *args`` from a temporary directory (with the
    environment ``env`` where given) and prints its result as JSON on its last stdout line.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.json"
        path.write_text(json.dumps(plan))
        source = Path(tmp) / "balrog_side.py"
        source.write_text(PLAY + script)
        done = subprocess.run(
            [python, str(source), str(path), *args], cwd=tmp, capture_output=True, text=True, check=False, env=env
        )
    if done.returncode:
        raise SystemExit(f"BALROG's side failed ({python}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ms(values: Any) -> float:
    """The median of ``values`` (seconds), in ms."""
    return 1000 * statistics.median(values)


def reference_parser(description: str, python_help: str) -> argparse.ArgumentParser:
    """The scripts' argument parser: its first argument, ``python``, the reference interpreter."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("python", help=python_help)
    return parser
