"""Step and reset time of our balrog/BabyAI-* ids against BALROG's own BabyAI wrapper, same games.

    .venv/bin/python benchmarks/balrog_babyai_vs_original.py /work/balrog-ref/venv/bin/python [--seeds 20]

The argument is a Python in which BALROG (balrog-ai/BALROG af7d1f17) and its minigrid fork
(BartekCupial/Minigrid cf73dd14) import: the private reference environment that
tests/envs/balrog/golden/make_reference_env.sh builds. BALROG's side runs in a subprocess of that
interpreter (from a temporary directory, so no checkout folder shadows a package); ours runs here.

Both sides play BALROG's five tasks on seeds 0..``--seeds``-1 with the same action sequences
(random actions among the six, drawn here from a fixed generator, up to the step limit or the end
of the episode), and both check they played the same game: a digest of every observation text of
an episode must agree. Timed per call with ``time.perf_counter``:

- BALROG: ``env.reset(seed=seed)`` and ``env.step(action)`` on the env ``balrog.environments.make_env``
  returns with BALROG's config (its ``EnvWrapper`` over ``BabyAITextCleanLangWrapper``: minigrid's
  step, the fork's descriptions, ``get_pov_render(16)`` as a PIL image); also ``make_env`` + reset,
  which its evaluator pays per episode (``make_env`` rebuilds the fork's level until its goal kind
  is the task's).
- Ours: ``gym.make(id)`` once per task (image+text, 112x112), then ``env.reset(seed=seed)`` and
  ``env.step(action)`` through Gymnasium's wrappers: minigrid's step, the text, the image, the
  oracle's shortest plan at reset and ``info``. The frames are cached by the agent's view (the image
  is a function of it), so "frame cache off" repeats the run with that cache disabled.

One episode per task is played first, untimed, on each side (imports, minigrid's tile cache).
Printed: medians in ms, per step and per reset, each side and each task, and the ratios.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np
from balrog_reference import ms, original, reference_parser, time_ours

import rl4vlm_gym  # noqa: F401  (registers the ids)

TASKS = {
    "goto": "balrog/BabyAI-GoTo-v0",
    "pickup": "balrog/BabyAI-Pickup-v0",
    "open": "balrog/BabyAI-Open-v0",
    "putnext": "balrog/BabyAI-PutNext-v0",
    "pick_up_seq_go_to": "balrog/BabyAI-PickUpSeqGoTo-v0",
}
ACTIONS = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
LIMITS = {"goto": 64, "pickup": 64, "open": 128, "putnext": 128, "pick_up_seq_go_to": 128}

# BALROG's side, run by the reference interpreter (balrog_reference.original: play and digest defined first): the plan
# (tasks, seeds, actions) comes as a JSON file.
ORIGINAL = r"""
import contextlib, hashlib, io, json, re, sys, time
from omegaconf import OmegaConf
import balrog
from balrog.environments import make_env
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
config = OmegaConf.load(Path(balrog.__file__).resolve().parents[1] / "balrog" / "config" / "config.yaml")
out = {}
quiet = contextlib.redirect_stdout(io.StringIO())  # minigrid prints rejected layouts
for task, episodes in plan.items():
    name = "BabyAI-MixedTrainLocal-v0/" + task
    resets, makes, steps, digests = [], [], [], []
    for index, (seed, actions) in enumerate(episodes):
        with quiet:
            start = time.perf_counter()
            env = make_env("babyai", name, config)
            made = time.perf_counter()
            first = env.reset(seed=seed)
            end = time.perf_counter()
        texts = play(env, first, actions, lambda obs, info: obs["text"]["long_term_context"], index, steps)
        if index:  # the first episode warms up
            resets.append(end - made)
            makes.append(end - start)
        digests.append(digest(texts))
    out[task] = {"reset": resets, "make_reset": makes, "step": steps, "digests": digests}
print(json.dumps(out))
"""


def plan(seeds: int) -> dict[str, list[tuple[int, list[str]]]]:
    """Per task, the episodes to play: (seed, actions); seed 0 is also played first as a warm-up."""
    episodes = {}
    for t, task in enumerate(TASKS):
        rows = []
        for seed in [0, *range(seeds)]:
            rng = np.random.default_rng([t, seed])
            picks = rng.choice(len(ACTIONS), size=LIMITS[task], p=[0.2, 0.2, 0.35, 0.1, 0.08, 0.07])
            rows.append((seed, [ACTIONS[int(i)] for i in picks]))
        episodes[task] = rows
    return episodes


def ours(episodes: dict[str, list[tuple[int, list[str]]]], frame_cache: bool = True) -> dict[str, Any]:
    out = {}
    for task, rows in episodes.items():
        env = gym.make(TASKS[task])
        if not frame_cache:
            env.unwrapped._frame_key = lambda: None  # type: ignore[method-assign]
        timed = time_ours(env, rows)
        env.close()
        out[task] = timed
    return out


def main() -> None:
    parser = reference_parser(__doc__.splitlines()[0], "the reference interpreter, where BALROG and its minigrid fork import")
    parser.add_argument("--seeds", type=int, default=20, help="episodes per task (seeds 0..N-1)")
    args = parser.parse_args()
    episodes = plan(args.seeds)
    theirs = original(args.python, ORIGINAL, episodes)
    mine = ours(episodes)
    cold = ours(episodes, frame_cache=False)
    for task in TASKS:
        if theirs[task]["digests"] != mine[task]["digests"]:
            raise SystemExit(f"{task}: the two sides did not play the same games (their texts differ)")
    print(f"BabyAI, {args.seeds} episodes per task, same seeds and actions on both sides (texts checked equal); medians in ms")
    header = (
        f"{'task':<19}{'steps':>7}{'BALROG step':>13}{'ours':>8}{'no cache':>10}{'BALROG reset':>14}{'make+reset':>12}{'ours':>8}"
    )
    print(header)
    print("-" * len(header))
    every: dict[str, list[float]] = {k: [] for k in ("bs", "os", "cs", "br", "bm", "or")}
    for task in TASKS:
        b, o, c = theirs[task], mine[task], cold[task]
        every["bs"] += b["step"]
        every["os"] += o["step"]
        every["cs"] += c["step"]
        every["br"] += b["reset"]
        every["bm"] += b["make_reset"]
        every["or"] += o["reset"]
        print(
            f"{task:<19}{len(o['step']):>7}{ms(b['step']):>13.3f}{ms(o['step']):>8.3f}{ms(c['step']):>10.3f}"
            f"{ms(b['reset']):>14.3f}{ms(b['make_reset']):>12.3f}{ms(o['reset']):>8.3f}"
        )
    print("-" * len(header))
    e = every
    print(
        f"{'all':<19}{len(e['os']):>7}{ms(e['bs']):>13.3f}{ms(e['os']):>8.3f}{ms(e['cs']):>10.3f}"
        f"{ms(e['br']):>14.3f}{ms(e['bm']):>12.3f}{ms(e['or']):>8.3f}"
    )
    print(
        f"ours / BALROG: step {ms(e['os']) / ms(e['bs']):.2f} (frame cache off {ms(e['cs']) / ms(e['bs']):.2f}), "
        f"reset {ms(e['or']) / ms(e['br']):.2f} (against make_env + reset, as BALROG's evaluator does per episode: "
        f"{ms(e['or']) / ms(e['bm']):.2f})"
    )
    print(f"Python {sys.version.split()[0]}; BALROG's side: {args.python}")


if __name__ == "__main__":
    main()
