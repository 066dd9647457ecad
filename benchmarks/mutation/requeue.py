"""Queue mutants again in a mutmut 3 staging tree, so that a plain ``mutmut run`` checks only them.

Usage (in the staging tree, benchmarks/mutation/run.sh's WORKDIR/stage)::

    python requeue.py survived            # every survivor runs again (after new tests were added)
    python requeue.py skip-unchecked      # mutants not yet checked are marked skipped (34)

mutmut reruns a mutant only if its recorded exit code is missing (``mutmut run NAMES`` would run
the clean tests by id, which fails for some parametrised ids here). Its exit codes live in
``mutants/**/*.py.meta``: 1 killed, 0 survived, 33 no tests, 34 skipped, 36 timeout.
"""

from __future__ import annotations

import json
import pathlib
import sys


def main(what: str) -> None:
    changed = 0
    for meta in sorted(pathlib.Path("mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        for key, code in codes.items():
            if what == "survived" and code == 0:
                codes[key] = None
            elif what == "skip-unchecked" and code is None:
                codes[key] = 34
            else:
                continue
            changed += 1
        meta.write_text(json.dumps(data, indent=4))
    print(f"{what}: {changed} mutants changed")


if __name__ == "__main__":
    main(sys.argv[1])
