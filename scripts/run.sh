#!/usr/bin/env bash
# Set everything up, then run the main job: the conformance kit over every registered env, with
# each env's oracle run per level and its throughput. Extra arguments go to `rl4vlm-gym check`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
export SDL_VIDEODRIVER="${SDL_VIDEODRIVER:-dummy}"
exec .venv/bin/rl4vlm-gym check "$@"
