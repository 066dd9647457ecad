"""``verify.sh`` in one process: every mutant named on stdin against the same tests, pytest run once per
mutant in this interpreter (mutmut's trampolines read MUTANT_UNDER_TEST at each call), so the imports are
paid once. Run in WORKDIR/stage/mutants after copying the tests there (verify.sh does it):

    python verify_many.py TESTS... < names.txt      # prints "NAME | killed|survived | exit code"
    python verify_many.py --fork [--timeout S] [--stats] [TESTS...] < names.txt

``--fork`` runs each mutant in a child forked after a collect-only pass (as mutmut's fork server does), so
a cache filled under one mutant cannot answer for the next; ``--timeout S`` kills a child after S seconds
of wall time (verdict ``timeout``, not recorded by ``requeue.py mark``); ``--stats`` runs, for each mutant,
the tests mutmut's stats say call its function (``mutmut-stats.json``: mutmut's own selection), after
TESTS if any (pytest's own options may be among TESTS, e.g. ``-m "not slow"``). A mutant whose tests cannot be collected is reported as ``error``, never as killed.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

import pytest

ARGS = ["-p", "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-x"]


def _verdict(code: int) -> str:
    return {0: "survived", 1: "killed"}.get(code, "error")  # 2-5: interrupted, internal, usage, nothing collected


def _pytest(args: list[str]) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return int(pytest.main([*ARGS, *args]))


def _forked(name: str, args: list[str], timeout: float | None) -> tuple[str, int]:
    pid = os.fork()
    if pid == 0:  # the child: the mutant switched on, then pytest; never returns
        os.environ["MUTANT_UNDER_TEST"] = name
        try:
            code = _pytest(args)
        except BaseException:
            code = 3
        os._exit(code)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return _verdict(code), code
        if deadline is not None and time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", -9
        time.sleep(0.05)


def main(argv: list[str]) -> None:
    fork, use_stats, timeout, tests = False, False, None, []
    it = iter(argv)
    for arg in it:
        if arg == "--fork":
            fork = True
        elif arg == "--stats":
            use_stats = True
        elif arg == "--timeout":
            timeout = float(next(it))
        else:
            tests.append(arg)
    sys.path.insert(0, os.getcwd())  # the mutated package in WORKDIR/stage/mutants, as `python -m pytest` there
    tests_of = json.load(open("mutmut-stats.json"))["tests_by_mangled_function_name"] if use_stats else {}
    if fork and tests:
        os.environ["MUTANT_UNDER_TEST"] = ""
        _pytest(["--collect-only", *tests])  # imports paid once, before the forks
    for name in (line.strip() for line in sys.stdin):
        if not name:
            continue
        args = list(tests)
        if use_stats:
            args += sorted(tests_of.get(name.replace("__init__.", "").partition("__mutmut_")[0], []))
        if not args:
            print(f"{name} | no tests | -", flush=True)
            continue
        start = time.monotonic()
        if fork:
            verdict, code = _forked(name, args, timeout)
        else:
            os.environ["MUTANT_UNDER_TEST"] = name
            code = _pytest(args)
            verdict = _verdict(code)
        print(f"{name} | {verdict} | exit {code} | {time.monotonic() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
