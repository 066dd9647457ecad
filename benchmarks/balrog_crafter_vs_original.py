"""Step and reset time of balrog/Crafter-v0 against BALROG's own Crafter wrapper, same worlds and actions.

    .venv/bin/python benchmarks/balrog_crafter_vs_original.py /work/balrog-ref/venv/bin/python [--seeds 8] [--steps 300]

The argument is a Python in which BALROG (balrog-ai/BALROG af7d1f17) and crafter 1.8.3 import: the
private reference environment that tests/envs/balrog/golden/make_reference_env.sh builds. BALROG's
side runs in a subprocess of that interpreter (from a temporary directory, so no checkout folder
shadows a package); ours runs here.

Both sides play worlds 0..``--seeds``-1 (BALROG's ``crafter.Env`` built with ``seed=s``, ours
``reset(seed=s)``: the same world) for up to ``--steps`` steps (300 crosses the first night, steps
~148-272, when every render draws noise) with the same random actions among the 17 (drawn here from
a fixed generator), or until the player dies. Both check they played the same game: a digest of
every observation text of an episode must agree. To make that possible BALROG's side takes each
chunk's creatures in creation order when crafter balances them, as ours does (crafter's own order
follows memory addresses and changes from run to run: see tests/envs/balrog/golden/crafter/record.py);
that sorts a handful of objects per chunk every 10 steps. Timed per call with ``time.perf_counter``:

- BALROG: ``env.reset(seed=seed)`` and ``env.step(action)`` on the env ``balrog.environments.make_env``
  returns with BALROG's config (``EnvWrapper`` over ``GymV21CompatibilityV0`` over
  ``CrafterLanguageWrapper``: crafter's step, which renders a frame, then the wrapper's render of the
  image it shows and its text); also ``make_env`` + reset, which its evaluator pays per episode.
- Ours: ``gym.make(id)`` once, then ``env.reset(seed=seed)`` and ``env.step(action)`` through
  Gymnasium's wrappers, in ``image+text`` mode (BALROG's 256x256 image, its text, ``info["balrog"]``,
  the state key) and in ``text`` mode (no image).

One episode is played first, untimed, on each side (imports, numba's compilation of the world
generator's noise, crafter's textures). Printed: medians in ms per step and per reset, and the ratios.

Where the difference comes from: per step BALROG renders twice (crafter's ``step`` returns a frame
that its wrapper throws away, then the wrapper renders the image it shows), ours once (and never in
``text`` mode, where the game's random stream still advances as BALROG's renders advance it). Per
reset, crafter's world generator computes opensimplex noise: with numba (our ``balrog`` extra
installs it) it is compiled; BALROG's setup.py does not install numba, so its reset runs the noise
in pure Python (the worlds are the same: tests/envs/balrog/test_crafter.py).

Measured on the 2-core development machine under a load of about 6 (other jobs running), 8 worlds x
up to 300 steps (1,479 steps): BALROG 34.9 ms a step, ours 17.7 (image+text) and 1.0 (text); reset
2,773 ms against 206 (ours / BALROG: step 0.51, text mode 0.03, reset 0.07).
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np
from balrog_reference import ms, original, reference_parser, time_ours

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.crafter import ACTIONS

ENV = "balrog/Crafter-v0"

# BALROG's side, run by the reference interpreter (balrog_reference.original: play and digest defined first): the plan
# (seeds, actions) comes as a JSON file.
ORIGINAL = r"""
import contextlib, hashlib, io, json, re, sys, time
from pathlib import Path
with contextlib.redirect_stderr(io.StringIO()):  # gym's notice
    import crafter
    from omegaconf import OmegaConf
    import balrog
    from balrog.environments import make_env

original = crafter.Env._balance_chunk
def balance_chunk(self, chunk, objs):  # creation order, as ours (see the benchmark's docstring)
    created = self._world._obj_map
    return original(self, chunk, sorted(objs, key=lambda obj: created[tuple(obj.pos)]))
crafter.Env._balance_chunk = balance_chunk

plan = json.loads(Path(sys.argv[1]).read_text())
config = OmegaConf.load(Path(balrog.__file__).resolve().parent / "config" / "config.yaml")
resets, makes, steps, digests = [], [], [], []
for index, (seed, actions) in enumerate(plan):
    config.envs.crafter_kwargs.seed = seed
    start = time.perf_counter()
    env = make_env("crafter", "default", config)
    made = time.perf_counter()
    first = env.reset(seed=seed)
    end = time.perf_counter()
    text = lambda obs, info: obs["text"]["long_term_context"] + obs["text"]["short_term_context"]
    texts = play(env, first, actions, text, index, steps)
    if index:  # the first episode warms up
        resets.append(end - made)
        makes.append(end - start)
    digests.append(digest(texts))
print(json.dumps({"reset": resets, "make_reset": makes, "step": steps, "digests": digests}))
"""


def plan(seeds: int, steps: int) -> list[tuple[int, list[str]]]:
    """The episodes to play: (seed, actions); seed 0 is also played first as a warm-up."""
    rows = []
    for seed in [0, *range(seeds)]:
        rng = np.random.default_rng([17, seed])
        rows.append((seed, [ACTIONS[int(i)] for i in rng.integers(len(ACTIONS), size=steps)]))
    return rows


def ours(episodes: list[tuple[int, list[str]]], obs_mode: str) -> dict[str, Any]:
    env = gym.make(ENV, obs_mode=obs_mode)
    text = lambda obs, info: info["balrog"]["long_term_context"] + info["balrog"]["short_term_context"]
    timed = time_ours(env, episodes, text)
    env.close()
    return timed


def main() -> None:
    parser = reference_parser(__doc__.splitlines()[0], "the reference interpreter, where BALROG and crafter 1.8.3 import")
    parser.add_argument("--seeds", type=int, default=8, help="worlds to play (seeds 0..N-1)")
    parser.add_argument("--steps", type=int, default=300, help="steps per episode at most (it ends earlier if the player dies)")
    args = parser.parse_args()
    episodes = plan(args.seeds, args.steps)
    theirs = original(args.python, ORIGINAL, episodes)
    image = ours(episodes, "image+text")
    text = ours(episodes, "text")
    if not theirs["digests"] == image["digests"] == text["digests"]:
        parted = [seed for (seed, _), a, b in zip(episodes, theirs["digests"], image["digests"], strict=True) if a != b]
        raise SystemExit(f"the two sides did not play the same games (texts differ at seeds {parted})")
    print(f"Crafter, {args.seeds} worlds, up to {args.steps} steps each, same actions on both sides (texts checked equal); medians in ms")
    header = f"{'':<24}{'steps':>7}{'step':>9}{'reset':>9}{'make+reset':>12}"
    print(header)
    print("-" * len(header))
    print(f"{'BALROG (image and text)':<24}{len(theirs['step']):>7}{ms(theirs['step']):>9.3f}{ms(theirs['reset']):>9.3f}{ms(theirs['make_reset']):>12.3f}")
    print(f"{'ours, image+text':<24}{len(image['step']):>7}{ms(image['step']):>9.3f}{ms(image['reset']):>9.3f}{'':>12}")
    print(f"{'ours, text':<24}{len(text['step']):>7}{ms(text['step']):>9.3f}{ms(text['reset']):>9.3f}{'':>12}")
    print(
        f"ours / BALROG: step {ms(image['step']) / ms(theirs['step']):.2f} (text mode {ms(text['step']) / ms(theirs['step']):.2f}), "
        f"reset {ms(image['reset']) / ms(theirs['reset']):.2f} (against make_env + reset, as BALROG's evaluator does per "
        f"episode: {ms(image['reset']) / ms(theirs['make_reset']):.2f})"
    )
    print(f"Python {sys.version.split()[0]}; BALROG's side: {args.python}")


if __name__ == "__main__":
    main()
