#!/usr/bin/env bash
# Set everything up, then run the main job: the oracle, the random agent and the tiny local VLM
# (a random Qwen2-VL built offline on first use) evaluated over the smoke suite, ending in a report
# (runs/main/report/report.html) that compares them seed by seed; then a short CPU training run of
# VL-DAC on the same tiny model (rl4vlm/ColourNaming-v0), ending in its evaluation report with the
# learning curves (runs/main/train-vl-dac/report/report.html). Re-running resumes finished runs.
# Extra arguments go to each `rl4vlm-gym eval` (e.g. --workers 2).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
out=runs/main
for agent in oracle random hf; do
  .venv/bin/rl4vlm-gym eval --agent "$agent" --suite smoke --out "$out/smoke-$agent" --no-report "$@"
done
.venv/bin/rl4vlm-gym report "$out/smoke-oracle" "$out/smoke-random" "$out/smoke-hf" \
  --baseline "$out/smoke-random" --out "$out/report"
.venv/bin/rl4vlm-gym train --algo vl-dac --updates 12 --out "$out/train-vl-dac"
