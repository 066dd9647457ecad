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
SRC="$(cd "$HERE/../.." && pwd -P)"
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
# The clone holds the committed tree (at the time it was cloned: delete WORKDIR/repo for a newer one),
# plus this folder's and the *_mutants.py tests' working copies: in a tree shared with work in
# progress, another file's half-made change must not break the run (MUTATION_WORKTREE=1: take every
# uncommitted change along, as a single developer wants).
if [ "$SRC" != "$(cd "$WORK/repo" && pwd -P)" ]; then
    if [ "${MUTATION_WORKTREE:-0}" = 1 ]; then
        (cd "$SRC" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$WORK/repo")
    else
        (cd "$SRC" && git ls-files -z -co --exclude-standard -- benchmarks/mutation 'tests/*_mutants.py' \
            | xargs -0 cp --parents -t "$WORK/repo")
    fi
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
# VLMEnv's own state may be assigned only by VLMEnv's methods' code: _OwnState.__set__ checks its
# caller, sys._getframe(1).f_code, which under mutmut is the trampoline every function runs through.
# The staged core.py asks _mutmut_caller.caller_code() instead, which skips the trampoline's frames, so
# the run-time guard (and the tests of it) keep their power.
cp "$HERE/_mutmut_caller.py" "$STAGE/rl4vlm_gym/_mutmut_caller.py"
"$PY" - "$STAGE/rl4vlm_gym/core.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
assert text.count("sys._getframe(1).f_code") == 2, "core.py's guard changed: update benchmarks/mutation/run.sh"
text = text.replace("sys._getframe(1).f_code", "_mutmut_caller_code()")
text = text.replace("\nimport sys\n", "\nimport sys\n\nfrom rl4vlm_gym._mutmut_caller import caller_code as _mutmut_caller_code\n", 1)
open(path, "w", encoding="utf-8").write(text)
PY
# The kit's law list (tests/kit/kit_laws.py) and its private-hook scan (test_inspection.py) read the kit's
# source: under mutmut that holds a copy of each function per mutant, so there they read the unmutated
# sources, and a failure's frame in a mutant's copy is matched to its law by place (_kit_laws_staged.py).
cat "$HERE/_kit_laws_staged.py" >> "$STAGE/tests/kit/kit_laws.py"
"$PY" - "$STAGE/tests/kit/test_inspection.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
old = "PACKAGE = Path(rl4vlm_gym.__file__).resolve().parent"
assert text.count(old) == 1, "test_inspection.py's PACKAGE changed: update benchmarks/mutation/run.sh"
text = text.replace(old, 'PACKAGE = Path(__file__).resolve().parents[3] / "rl4vlm_gym"  # staging: the unmutated sources')
open(path, "w", encoding="utf-8").write(text)
PY
# The hostile-submission tests copy the committed smoke submission (tests/harness/conftest.py).
cp -r "$WORK/repo/leaderboards" "$STAGE/leaderboards"
cat "$WORK/repo/setup.cfg" "$HERE/mutmut.cfg" | while IFS= read -r line; do
    case "$line" in
    "    tests/"*)
        [ -e "$STAGE/${line#    }" ] || continue
        [ "${MUTATION_BASELINE:-0}" = 1 ] && [[ "$line" == *_mutants.py ]] && continue ;;
    esac
    printf '%s\n' "$line"
done > "$STAGE/setup.cfg"

cd "$STAGE"
if [ "${MUTATION_STAGE_ONLY:-0}" = 1 ]; then echo "staged in $STAGE"; exit 0; fi
start=$(date +%s)
# MUTATION_SAMPLE_BUDGET_S=S: check a seeded random sample per module that fits about S seconds of one
# child (requeue.py sample, drawn right after mutmut's stats); unset: every mutant.
nice -n 15 "$PY" "$HERE/_mutmut_sampled.py" run --max-children "${MUTATION_JOBS:-2}" || true
echo "mutmut run took $(( $(date +%s) - start )) s"
"$WORK/repo/.venv/bin/mutmut" results --all true > results.txt || true
if [ -e sample.json ]; then "$PY" "$HERE/scores.py" results.txt sample.json; else "$PY" "$HERE/scores.py" results.txt; fi
