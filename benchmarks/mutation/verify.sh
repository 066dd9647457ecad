#!/usr/bin/env bash
# Check mutants against some tests without mutmut's runner and its time limits (a survivor against a new
# *_mutants.py test, or a "timeout" under load), in the staging tree that benchmarks/mutation/run.sh made:
#
#   bash benchmarks/mutation/verify.sh TESTS... < names.txt     (one mutmut name a line)
#
# Prints "NAME | killed|survived | pytest's summary" a line. The tests are copied from this checkout into
# WORKDIR/stage/mutants first (MUTATION_WORKDIR, default /tmp/rl4vlm-mutation); mutmut's trampolines read
# MUTANT_UNDER_TEST from the environment, so pytest runs them with that mutant switched on.
# `requeue.py mark FILE` records its verdicts in mutmut's results.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
WORK="${MUTATION_WORKDIR:-/tmp/rl4vlm-mutation}"
cd "$WORK/stage/mutants"
for test in "$@"; do path="${test%%::*}"; cp "$SRC/$path" "$path"; done
while read -r name; do
    [ -n "$name" ] || continue
    if out=$(MUTANT_UNDER_TEST="$name" nice -n 15 "$WORK/repo/.venv/bin/python" -m pytest -p no:randomly -p no:xdist \
        -p no:cacheprovider -q -x "$@" 2>&1); then verdict=survived; else verdict=killed; fi
    echo "$name | $verdict | $(tail -1 <<<"$out")"
done
