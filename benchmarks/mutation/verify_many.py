"""``verify.sh`` in one process: every mutant named on stdin against the same tests, pytest run once per
mutant in this interpreter (mutmut's trampolines read MUTANT_UNDER_TEST at each call), so the imports are
paid once. Run in WORKDIR/stage/mutants after copying the tests there (verify.sh does it):

    python verify_many.py TESTS... < names.txt      # prints "NAME | killed|survived | exit code"
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest


def main(tests: list[str]) -> None:
    sys.path.insert(0, os.getcwd())  # the mutated package in WORKDIR/stage/mutants, as `python -m pytest` there
    for name in (line.strip() for line in sys.stdin):
        if not name:
            continue
        os.environ["MUTANT_UNDER_TEST"] = name
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            code = pytest.main(["-p", "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-x", *tests])
        print(f"{name} | {'survived' if code == 0 else 'killed'} | exit {int(code)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
