"""Step and reset time of our balrog/BabaIsAI-* ids against BALROG's own BabaIsAI wrapper, same levels.

    .venv/bin/python benchmarks/balrog_babaisai_vs_original.py /work/balrog-ref/venv/bin/python [--seeds 5] [--rounds 2]

The argument is a Python in which BALROG (balrog-ai/BALROG af7d1f17) and nacloos/baba-is-ai
(ad466e02) import: the private reference environment that
tests/envs/balrog/golden/make_reference_env.sh builds. BALROG's side runs in a subprocess of that
interpreter (from a temporary directory, so no checkout folder shadows a package); ours runs here.

Both sides play BALROG's 40 tasks on seeds 0..``--seeds``-1 with the same 100 actions per episode
(random among the five, "idle" 4%, drawn here from a fixed generator, to the episode's end), and
both check they played the same game: a digest of every observation text of an episode (memory
addresses masked) must agree. Timed per call with ``time.perf_counter``:

- BALROG: ``np.random.seed(seed)`` + ``env.reset(seed=seed)`` and ``env.step(action)`` on the env
  ``balrog.environments.make_env`` returns with BALROG's config (``EnvWrapper`` over
  ``GymV21CompatibilityV0`` over ``BabaIsAIWrapper``: the original's step, the text, the full
  render as a PIL image, every step); ``make_env`` itself is not timed (BALROG pays it per episode).
- Ours: ``gym.make(id)`` once per task, then ``env.reset(seed=seed)`` and ``env.step(action)``
  through Gymnasium's wrappers, in ``image+text`` mode (the image drawn every step, as BALROG's)
  and in ``text`` mode (no image).

The sides take turns ``--rounds`` times (BALROG, ours, BALROG, ours...) and pool their samples, so
a change in the machine's load touches both. One episode per task is played first on each side,
untimed (imports, tile caches). Printed: medians in ms per step and per reset, for the one-room
(8x8) and two-room (13x9) tasks and overall, and the ratios.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from balrog_reference import ms, original, reference_parser, time_ours

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.babaisai.levels import TASKS

ACTIONS = ("idle", "up", "right", "down", "left")
ADDRESS = r" at 0x[0-9a-fA-F]+>"

# BALROG's side, run by the reference interpreter (balrog_reference.original: play and digest defined first): the plan
# (tasks, seeds, actions) comes as a JSON file, the addresses' pattern as the second argument.
ORIGINAL = r"""
import hashlib, json, random, re, sys, time
import numpy as np
from omegaconf import OmegaConf
import balrog
from balrog.environments import make_env
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
config = OmegaConf.load(Path(balrog.__file__).resolve().parents[1] / "balrog" / "config" / "config.yaml")
out = {}
for task, episodes in plan.items():
    env = make_env("babaisai", task, config)
    resets, steps, digests = [], [], []
    for index, (seed, actions) in enumerate(episodes):
        start = time.perf_counter()
        random.seed(seed)
        np.random.seed(seed)
        first = env.reset(seed=seed)
        end = time.perf_counter()
        texts = play(env, first, actions, lambda obs, info: obs["text"]["long_term_context"], index, steps)
        if index:  # the first episode warms up
            resets.append(end - start)
        digests.append(digest(texts, sys.argv[2]))
    out[task] = {"reset": resets, "step": steps, "digests": digests}
print(json.dumps(out))
"""


def plan(seeds: int) -> dict[str, list[tuple[int, list[str]]]]:
    """Per task, the episodes to play: (seed, actions); seed 0 is also played first as a warm-up."""
    episodes = {}
    for t, task in enumerate(TASKS):
        rows = []
        for seed in [0, *range(seeds)]:
            rng = np.random.default_rng([t, seed])
            picks = rng.choice(len(ACTIONS), size=100, p=[0.04, 0.24, 0.24, 0.24, 0.24])
            rows.append((seed, [ACTIONS[int(i)] for i in picks]))
        episodes[task.task] = rows
    return episodes


def ours(episodes: dict[str, list[tuple[int, list[str]]]], obs_mode: str) -> dict[str, Any]:
    out = {}
    for task, rows in episodes.items():
        env = gym.make(f"balrog/BabaIsAI-{task.removeprefix('env/')}-v0", obs_mode=obs_mode)
        timed = time_ours(env, rows, mask=ADDRESS)
        env.close()
        out[task] = timed
    return out


def _pool(runs: list[dict[str, Any]]) -> dict[str, Any]:
    pooled: dict[str, Any] = {}
    for run in runs:
        for task, row in run.items():
            into = pooled.setdefault(task, {"reset": [], "step": [], "digests": row["digests"]})
            assert into["digests"] == row["digests"], task
            into["reset"] += row["reset"]
            into["step"] += row["step"]
    return pooled


def _median_ms(rows: dict[str, Any], tasks: list[str], key: str) -> float:
    return ms([x for task in tasks for x in rows[task][key]])


def main() -> None:
    parser = reference_parser(__doc__.split("\n\n")[0], "the reference interpreter (BALROG and baba import there)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    episodes = plan(args.seeds)
    runs: dict[str, list[dict[str, Any]]] = {"BALROG": [], "ours image+text": [], "ours text": []}
    for _ in range(args.rounds):
        runs["BALROG"].append(original(args.python, ORIGINAL, episodes, ADDRESS))
        runs["ours image+text"].append(ours(episodes, "image+text"))
        runs["ours text"].append(ours(episodes, "text"))
    pooled = {side: _pool(rows) for side, rows in runs.items()}
    for side in ("ours image+text", "ours text"):
        for task in episodes:
            assert pooled[side][task]["digests"] == pooled["BALROG"][task]["digests"], (
                f"{side} played another game than BALROG: {task}"
            )
    groups = {
        "one room (8x8, 10 tasks)": [t.task for t in TASKS if t.kind == "make_win"],
        "two rooms (13x9, 30 tasks)": [t.task for t in TASKS if t.kind != "make_win"],
        "all 40 tasks": [t.task for t in TASKS],
    }
    steps = sum(len(pooled["BALROG"][t]["step"]) for t in episodes)
    print(
        f"{len(episodes)} tasks x {args.seeds} seeds x {args.rounds} rounds, {steps} timed steps a side; same texts on both sides"
    )
    print(f"{'':34s} {'BALROG':>10s} {'ours img':>10s} {'ours text':>10s} {'ratio img':>10s} {'ratio text':>10s}  (ms, medians)")
    for key in ("step", "reset"):
        for name, tasks in groups.items():
            b, i, t = (_median_ms(pooled[side], tasks, key) for side in ("BALROG", "ours image+text", "ours text"))
            print(f"{key + ' ' + name:34s} {b:10.3f} {i:10.3f} {t:10.3f} {i / b:10.2f} {t / b:10.2f}")
    print("ratio: ours / BALROG (below 1: ours is faster)")


if __name__ == "__main__":
    main()
