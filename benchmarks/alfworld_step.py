"""ALFWorld step time with TextWorld's text generator as shipped beside the lightened one.

    .venv/bin/python benchmarks/alfworld_step.py [--rounds 3] [--steps 25]

Each round runs two fresh processes one after the other (the machine is shared and noisy): one
where ``pddl_cache.lighten_text_generation`` is switched off (TextWorld's own parsing and deep
copies), one as shipped. Each plays the same seeded random admissible commands on the sample games
(or $ALFWORLD_DATA) for three episodes and prints seconds per step (resets included) and a digest
of every text and command list, which must agree. Prints the medians over rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "alfworld_sample"  # shipped: tests/data/README.md

_PLAY = """
import hashlib, sys, time
import gymnasium as gym, numpy as np
import rl4vlm_gym
if sys.argv[1] == "textworld":
    from rl4vlm_gym.envs.household import pddl_cache
    pddl_cache.lighten_text_generation = lambda: None
env = gym.make("rl4vlm/ALFWorld-v0")
digest, rng, steps = hashlib.sha256(), np.random.default_rng(0), 0
start = time.perf_counter()
for seed in range(3):
    obs, info = env.reset(seed=seed)
    digest.update(obs["text"].encode())
    for k in range(int(sys.argv[2])):
        actions = obs["actions"]
        obs, reward, terminated, truncated, info = env.step(actions[rng.integers(len(actions))] if k % 3 else actions[0])
        steps += 1
        digest.update(obs["text"].encode() + repr(sorted(actions)).encode())
        if terminated or truncated:
            break
print((time.perf_counter() - start) / steps, digest.hexdigest()[:16])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=25, help="steps per episode at most")
    args = parser.parse_args()
    env = {**os.environ}
    env.setdefault("ALFWORLD_DATA", str(SAMPLE))
    times: dict[str, list[float]] = {"textworld": [], "lightened": []}
    digests = set()
    for r in range(args.rounds):
        for kind in times:
            out = subprocess.run([sys.executable, "-c", _PLAY, kind, str(args.steps)], env=env, capture_output=True, text=True, check=True)
            seconds, digest = out.stdout.split()[-2:]
            times[kind].append(float(seconds))
            digests.add(digest)
            print(f"round {r + 1}: {kind:9} {1000 * float(seconds):7.1f} ms/step  texts {digest}")
    print(f"median ms/step: TextWorld's generator {1000 * statistics.median(times['textworld']):.1f}, "
          f"lightened {1000 * statistics.median(times['lightened']):.1f}; texts identical: {len(digests) == 1}")  # fmt: skip


if __name__ == "__main__":
    main()
