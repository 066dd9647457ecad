#!/usr/bin/env bash
# Set everything up, then run the main job: the conformance kit over every registered env, with
# each env's oracle run per level and its throughput. Extra arguments go to `rl4vlm-gym check`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
export SDL_VIDEODRIVER="${SDL_VIDEODRIVER:-dummy}"
# rl4vlm/ALFWorld-v0 plays $ALFWORLD_DATA; by default the six sample games beside the repository.
if [ -z "${ALFWORLD_DATA:-}" ] && [ -d ../shared/data/alfworld_sample ]; then
  export ALFWORLD_DATA="$(cd ../shared/data/alfworld_sample && pwd)"
fi
exec .venv/bin/rl4vlm-gym check "$@"
