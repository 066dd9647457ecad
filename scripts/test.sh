#!/usr/bin/env bash
# Set everything up (with the dev extra), then run the whole test suite in parallel.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev all
exec .venv/bin/python -m pytest -n auto --no-skips "$@"
