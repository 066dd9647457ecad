"""Step and reset time of our balrog/NetHack-v0 and balrog/MiniHack-* ids against BALROG's own wrappers, same games.

    .venv/bin/python benchmarks/balrog_nethack_vs_original.py /work/balrog-ref/venv/bin/python [--seeds 8] [--steps 100] [--rounds 2]

The argument is a Python in which BALROG (balrog-ai/BALROG af7d1f17), balrog-nle 0.9.0 and its
MiniHack (balrog-ai/minihack 3ecb6da4) import: the private reference environment that
tests/envs/balrog/golden/make_reference_env.sh builds. BALROG's side runs in a subprocess of that
interpreter (from a temporary directory, so no checkout folder shadows a package); ours runs here.

Both sides play NetHackChallenge-v0 and BALROG's eight MiniHack tasks on seeds 0..``--seeds``-1
with the same action sequences (random names of the task's action list, drawn here from a fixed
generator; NetHack's "00".."99" left out), up to ``--steps`` steps or the end of the episode, in
both of BALROG's text modes, and both check they played the same games: a digest of every
long-term context of an episode must agree. As in the golden recordings, BALROG's NetHack loads
the library our ``nethack_clock`` pins (the calendar; same code otherwise), its display RNG is
seeded with the seed, and Boxoban plays our shipped level list. Timed per call with
``time.perf_counter``:

- BALROG: ``env.step(action)`` and ``env.reset(seed=seed)`` on the env ``balrog.environments.make_env``
  returns with BALROG's config (``EnvWrapper`` > ``GymV21CompatibilityV0`` > ``NLETimeLimit`` >
  its ``NLELanguageWrapper`` > ``AutoMore`` > the NLE env): LLM mode (``max_image_history`` 0:
  text only) and VLM mode (1: text and a PIL image of the tiles); also ``make_env`` + reset, which
  its evaluator pays per episode.
- Ours: ``gym.make(id, text_format=...)`` once per task and mode, then ``env.reset(seed=seed)``
  and ``env.step(action)`` through Gymnasium's wrappers: LLM mode with ``obs_mode="text"`` (no
  image, as BALROG's LLM mode), VLM mode with ``obs_mode="image+text"`` (the tiles image, cached
  by the glyphs). Both modes fill ``info`` (``info["balrog"]``, the state key) every step.

One episode per task and mode is played first, untimed, on each side. The sides take turns,
``--rounds`` times, and their samples are pooled. Printed: medians in ms, per step and per reset,
each side, task and mode, and the ratios.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np
from balrog_reference import ms, original, reference_parser, time_ours

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.minihack import TASKS as MINIHACK_TASKS
from rl4vlm_gym.envs.balrog.minihack import boxoban_levels
from rl4vlm_gym.envs.balrog.nethack_clock import pinned_library

TASKS = {"NetHackChallenge-v0": "balrog/NetHack-v0", **{task: f"balrog/{task}" for task in MINIHACK_TASKS}}
MODES = ("hybrid", "vlm")

# BALROG's side, run by the reference interpreter (balrog_reference.original: play and digest defined first): the plan
# comes as a JSON file.
ORIGINAL = r"""
import contextlib, hashlib, io, json, random, re, sys, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
from PIL import ImageFont
_truetype = ImageFont.truetype
ImageFont.truetype = lambda *a, **k: _truetype(*a, **{**k, "layout_engine": ImageFont.Layout.BASIC})  # Pillow 13 + raqm
import numpy as np
import nle.nethack.nethack as nle_nethack
from omegaconf import OmegaConf
import balrog
from balrog.environments import make_env

plan = json.loads(Path(sys.argv[1]).read_text())
nle_nethack.DLPATH = plan["library"]
config = OmegaConf.load(Path(balrog.__file__).resolve().parents[1] / "balrog" / "config" / "config.yaml")

class Disp:
    def __init__(self, value): self.value = value
    def randrange(self, stop): return self.value

out = {}
for mode in ("hybrid", "vlm"):
    cfg = OmegaConf.create(OmegaConf.to_container(config))
    cfg.agent.max_image_history = 1 if mode == "vlm" else 0
    for task, episodes in plan["tasks"].items():
        family = "nle" if task.startswith("NetHack") else "minihack"
        resets, makes, steps, digests = [], [], [], []
        for index, (seed, actions) in enumerate(episodes):
            start = time.perf_counter()
            env = make_env(family, task, cfg)
            made = time.perf_counter()
            base = env.env.gym_env.unwrapped
            base._random = Disp(seed)
            if task in plan["levels"]:
                base._levels = plan["levels"][task]
            random.seed(seed)
            np.random.seed(seed)
            begin = time.perf_counter()
            first = env.reset(seed=seed)
            end = time.perf_counter()
            texts = play(env, first, actions, lambda obs, info: obs["text"]["long_term_context"], index, steps)
            if index:  # the first episode warms up
                resets.append(end - begin)
                makes.append((made - start) + (end - begin))
            digests.append(digest(texts))
            env.close()
        out[f"{mode}|{task}"] = {"reset": resets, "make_reset": makes, "step": steps, "digests": digests}
print(json.dumps(out))
"""


def action_lists() -> dict[str, tuple[str, ...]]:
    """Each task's action list (ours, which the golden tests show is BALROG's), "00".."99" left out."""
    lists = {}
    for task, env_id in TASKS.items():
        env = gym.make(env_id, obs_mode="text")
        names = env.reset(seed=0)[0]["actions"]
        lists[task] = tuple(n for n in names if not (len(n) == 2 and n.isdigit()))
        env.close()
    return lists


def plan(seeds: int, steps: int) -> dict[str, list[tuple[int, list[str]]]]:
    """Per task, the episodes to play: (seed, actions); seed 0 is also played first as a warm-up."""
    episodes = {}
    for t, (task, names) in enumerate(action_lists().items()):
        rows = []
        for seed in [0, *range(seeds)]:
            rng = np.random.default_rng([t, seed])
            rows.append((seed, [names[int(i)] for i in rng.integers(len(names), size=steps)]))
        episodes[task] = rows
    return episodes


def ours(episodes: dict[str, list[tuple[int, list[str]]]]) -> dict[str, Any]:
    out = {}
    for mode in MODES:
        for task, rows in episodes.items():
            env = gym.make(TASKS[task], text_format=mode, obs_mode="image+text" if mode == "vlm" else "text")
            timed = time_ours(env, rows)
            env.close()
            out[f"{mode}|{task}"] = timed
    return out


def theirs_round(python: str, episodes: dict[str, list[tuple[int, list[str]]]]) -> dict[str, Any]:
    levels = {task: list(boxoban_levels("hard" if "Hard" in task else "medium")) for task in episodes if "Boxoban" in task}
    return original(python, ORIGINAL, {"tasks": episodes, "levels": levels, "library": str(pinned_library())})


def main() -> None:
    parser = reference_parser(__doc__.splitlines()[0], "the reference interpreter, where BALROG, balrog-nle and its minihack import")
    parser.add_argument("--seeds", type=int, default=8, help="episodes per task and mode (seeds 0..N-1)")
    parser.add_argument("--steps", type=int, default=100, help="steps per episode at most")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both sides, taking turns (their samples pooled)")
    args = parser.parse_args()
    episodes = plan(args.seeds, args.steps)
    theirs: dict[str, Any] = {}
    mine: dict[str, Any] = {}
    for _ in range(args.rounds):  # the sides take turns, so a change in the machine's load hits both
        their_round, my_round = theirs_round(args.python, episodes), ours(episodes)
        for key in my_round:
            if their_round[key]["digests"] != my_round[key]["digests"]:
                raise SystemExit(f"{key}: the two sides did not play the same games (their texts differ)")
        for pooled, new in ((theirs, their_round), (mine, my_round)):
            for key, timings in new.items():
                for name, values in timings.items():
                    pooled.setdefault(key, {}).setdefault(name, []).extend(values if name != "digests" else [])
    print(
        f"NetHack and MiniHack, {args.seeds} episodes per task and mode, {args.rounds} rounds taking turns, same seeds and "
        "actions on both sides (texts checked equal); medians in ms"
    )
    header = f"{'mode':<7}{'task':<34}{'steps':>6}{'BALROG step':>12}{'ours':>8}{'BALROG reset':>13}{'make+reset':>11}{'ours':>8}"
    print(header)
    print("-" * len(header))
    for mode in MODES:
        every: dict[str, list[float]] = {k: [] for k in ("bs", "os", "br", "bm", "or")}
        for task in TASKS:
            b, o = theirs[f"{mode}|{task}"], mine[f"{mode}|{task}"]
            for name, values in (("bs", b["step"]), ("os", o["step"]), ("br", b["reset"]), ("bm", b["make_reset"]), ("or", o["reset"])):
                every[name] += values
            print(
                f"{mode:<7}{task:<34}{len(o['step']):>6}{ms(b['step']):>12.3f}{ms(o['step']):>8.3f}"
                f"{ms(b['reset']):>13.3f}{ms(b['make_reset']):>11.3f}{ms(o['reset']):>8.3f}"
            )
        e = every
        print(
            f"{mode:<7}{'all':<34}{len(e['os']):>6}{ms(e['bs']):>12.3f}{ms(e['os']):>8.3f}"
            f"{ms(e['br']):>13.3f}{ms(e['bm']):>11.3f}{ms(e['or']):>8.3f}"
        )
        print(
            f"{mode}: ours / BALROG: step {ms(e['os']) / ms(e['bs']):.2f}, reset {ms(e['or']) / ms(e['br']):.2f} "
            f"(against make_env + reset, as BALROG's evaluator does per episode: {ms(e['or']) / ms(e['bm']):.2f})"
        )
        print("-" * len(header))
    print(f"Python {sys.version.split()[0]}; BALROG's side: {args.python}")


if __name__ == "__main__":
    main()
