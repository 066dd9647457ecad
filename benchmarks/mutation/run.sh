#!/usr/bin/env bash
# Mutation testing of the core modules with mutmut 3 (issue 36): NOT part of the test suite or of CI's
# time budget. Rerun by hand:  bash benchmarks/mutation/run.sh [WORKDIR]   (default /tmp/rl4vlm-mutation)
#
# It never touches the checkout it is run from: it clones it into WORKDIR/repo, sets the clone up
# (scripts/setup.sh dev all, its own .venv), installs mutmut there, and stages the package in its
# INSTALLED layout (envs/ -> rl4vlm_gym/envs, baselines/ -> rl4vlm_gym/baselines, leaderboards/suites
# -> rl4vlm_gym/suites) in WORKDIR/stage. mutmut 3 names a mutant after the module path of the file it
# mutates, and its trampolines compare that name with the function's __module__ at run time: run on the
# repository's own layout, envs/webshop/reward.py would be named envs.webshop.reward while the code runs
# as rl4vlm_gym.envs.webshop.reward, and every mutant there would silently "survive".
# Each mutant runs only the tests (of TESTS below) that call the function it changed (mutmut's stats).
# Output: WORKDIR/stage/results.txt (one line per mutant) and the per-module table on stdout.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/../.." && pwd)"
WORK="${1:-/tmp/rl4vlm-mutation}"
MUTMUT_VERSION=3.8.1
mkdir -p "$WORK"
if [ ! -d "$WORK/repo/.venv" ]; then
    rm -rf "$WORK/repo"
    git clone -q "$SRC" "$WORK/repo"
    (cd "$WORK/repo" && nice -n 15 bash scripts/setup.sh dev all)
fi
PY="$WORK/repo/.venv/bin/python"
"$PY" -m pip install -q "mutmut==$MUTMUT_VERSION"
# The clone follows the working tree: tests and modules not yet committed come along.
if [ "$SRC" != "$WORK/repo" ]; then
    (cd "$SRC" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$WORK/repo")
fi

STAGE="$WORK/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"
cp -r "$WORK/repo/rl4vlm_gym" "$STAGE/rl4vlm_gym"
cp -r "$WORK/repo/envs" "$STAGE/rl4vlm_gym/envs"
cp -r "$WORK/repo/baselines" "$STAGE/rl4vlm_gym/baselines"
cp -r "$WORK/repo/leaderboards/suites" "$STAGE/rl4vlm_gym/suites"
cp -r "$WORK/repo/tests" "$WORK/repo/conftest.py" "$WORK/repo/pyproject.toml" "$STAGE/"
find "$STAGE" -name __pycache__ -prune -exec rm -rf {} +
# Test files absent from the tree are left out; MUTATION_BASELINE=1 also leaves out the *_mutants.py files
# written to kill survivors, for the score before them.
# VLMEnv's own state may be assigned only by VLMEnv's methods' code (core._OWN_CODE); mutmut calls every
# method through its trampoline, whose code then assigns: the staged copy admits mutmut's trampoline code
# too (subclasses' code is still refused, so the tests of that rule keep their power).
cat >> "$STAGE/rl4vlm_gym/core.py" <<'PY'

# -- added by benchmarks/mutation/run.sh in the staging tree only --
from mutmut.mutation import trampoline as _mutmut_trampoline_module  # noqa: E402

_OWN_CODE = _OWN_CODE | frozenset(_codes(_mutmut_trampoline_module.wrap_in_trampoline.__code__))
PY
cat "$WORK/repo/setup.cfg" "$HERE/mutmut.cfg" | while IFS= read -r line; do
    case "$line" in
    "    tests/"*)
        [ -e "$STAGE/${line#    }" ] || continue
        [ "${MUTATION_BASELINE:-0}" = 1 ] && [[ "$line" == *_mutants.py ]] && continue ;;
    esac
    printf '%s\n' "$line"
done > "$STAGE/setup.cfg"

cd "$STAGE"
start=$(date +%s)
nice -n 15 "$WORK/repo/.venv/bin/mutmut" run --max-children "${MUTATION_JOBS:-2}" || true
echo "mutmut run took $(( $(date +%s) - start )) s"
"$WORK/repo/.venv/bin/mutmut" results --all true > results.txt || true
"$PY" "$HERE/scores.py" results.txt
