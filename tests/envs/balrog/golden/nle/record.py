"""Record BALROG's NetHack as its own wrappers play it: the golden transcripts of ``nle.json.gz``.

Run with the private reference environment (tests/envs/balrog/golden/make_reference_env.sh), from a
directory other than REF_DIR/src (its checkout folders shadow the packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/nle/record.py

It drives BALROG's own code: ``balrog.environments.make_env("nle", "NetHackChallenge-v0", config)``
with BALROG's ``balrog/config/config.yaml`` (``nle_kwargs``: ``character="@"``,
``max_episode_steps=100_000``, ``no_progress_timeout=150``, ``skip_more``), which stacks
``gym.make(task)``, ``AutoMore``, BALROG's ``NLELanguageWrapper`` (``vlm`` from
``agent.max_image_history``), ``NLETimeLimit``, ``GymV21CompatibilityV0`` and ``EnvWrapper``; then,
as BALROG's evaluator does (``balrog/evaluator.py:Evaluator.run_episode``), it seeds ``random`` and
``np.random``, calls ``env.reset(seed=seed)``, reads the instruction prompt, and plays each output
through ``env.check_action_validity`` (an invalid output plays the default action, "esc").

Both of BALROG's text modes, on the same seeds and outputs: LLM mode (``max_image_history: 0``,
BALROG's default: "hybrid" text with the ASCII map) and VLM mode (``max_image_history: 1``: no map,
statistics added, and an image, whose sha256 is recorded).

Two things are fixed here that BALROG leaves to the machine, so that the recording can be replayed:

- NetHack's calendar. NetHack reads the wall clock (moon phase, Friday the 13th, night, the game's
  birth time). The games are made with the library our ``rl4vlm_gym.envs.balrog.nethack_clock``
  patches (clock pinned to 2000-01-01 12:00 UTC): ``nle.nethack.nethack.DLPATH`` points at that
  copy, checked against its SHA-256 (``--library``, default: the one the project's venv makes,
  found with ``--project-python``). Only ``getnow``/``time``/``localtime``/``mktime`` differ.
- NetHack's display RNG. ``reset(seed=s)`` reaches ``NLE.seed(core=s, disp=None)``, which draws
  ``disp`` from ``random.SystemRandom``. Here the NLE's ``_random`` answers ``s``: ``disp = core =
  s``, as MiniHack seeds its fixed levels (``seed(s, s, reseed=False)``) and as our env does.

Pillow 13 with raqm fails on BALROG's ``nle/render.py`` (its tty renderer, built at import, draws
every byte with Hack-Regular.ttf): fonts are opened with Pillow's basic layout engine. That
renderer makes no image BALROG shows (the VLM image is ``render_rgb``'s tiles).

Episodes, each in both modes with the same outputs (fixed generators per episode):

- random play: seeds 0, 1, 2 and three drawn like BALROG's (8 hex digits, below 2**32), 50 steps
  each: half moves (compass and far moves), a tenth ``more``/``esc``/``search``/``wait``, the rest
  any name or key a-z, A-Z, 0-9, and 5% invalid strings; never "00".."99", which BALROG lists but
  its language wrapper refuses (the episode errors);
- two deaths: seeds 32 and 7 with moves, fights and prayers (an angry god, a jackal), to the end;
- a no-progress timeout: seed 3 with commands that take no game time, to NLE's abort after 150
  steps in which the turn counter stands still (truncated).

Recorded per episode: the mode, the seed, the step limit, the action list, the default action, the
instruction prompt, and at reset and after every step ``long_term_context``,
``short_term_context``, the image's sha256 (VLM mode) and ``get_stats()``; per step the output,
the action played, the reward (``repr``), terminated and truncated. Texts are stored once in a
table (``strings``) and named by index.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("nle.json.gz")
STEPS = 50
INVALID = ("North", "go north", "", "move east", "ESC", "goto", "pick up")
COMPASS = ("north", "east", "south", "west", "northeast", "southeast", "southwest", "northwest")
COMMITS = {"BALROG": "af7d1f17e0deec3a7a0e334beae5f11b7a21371b", "minihack": "3ecb6da4eadcac7a4dbc5f8e801ccf636e34d7ec"}
PROJECT_PYTHON = "/work/main/.venv/bin/python"
PINNED_SHA256 = "1618ea64eaf39b92059ae7d8221134cbc77f4f42117f03d1cea2313cbbc6b5b5"  # nethack_clock.PATCHED_SHA256


def commit(path: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{COMMITS[path.name]} (make_reference_env.sh's; {path} has no .git)"


def pinned_library(args: argparse.Namespace) -> str:
    """The clock-pinned libnethack.so: --library, else the project's (made on first use)."""
    path = args.library or subprocess.run(
        [args.project_python, "-c", "from rl4vlm_gym.envs.balrog.nethack_clock import pinned_library; print(pinned_library())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip().splitlines()[-1]
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != PINNED_SHA256:
        raise SystemExit(f"{path} has SHA-256 {digest}, not the pinned-clock build {PINNED_SHA256}")
    return path


def setup(args: argparse.Namespace):
    """Import BALROG with the pinned library and Pillow's basic layout; its config."""
    warnings.filterwarnings("ignore")
    from PIL import ImageFont

    truetype = ImageFont.truetype

    def basic(*a: Any, **k: Any):
        return truetype(*a, **{**k, "layout_engine": ImageFont.Layout.BASIC})

    ImageFont.truetype = basic
    import balrog
    import nle.nethack.nethack as nle_nethack
    from omegaconf import OmegaConf

    nle_nethack.DLPATH = pinned_library(args)
    balrog_dir = Path(balrog.__file__).resolve().parents[1]
    config = OmegaConf.load(balrog_dir / "balrog" / "config" / "config.yaml")
    return balrog_dir, config


def mode_config(config, mode: str):
    from omegaconf import OmegaConf

    config = OmegaConf.create(OmegaConf.to_container(config))
    config.agent.max_image_history = 1 if mode == "vlm" else 0
    return config


class FixedDisp:
    """Stands in for NLE's ``random.SystemRandom``: ``seed(core=s)`` then draws ``disp = s``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def randrange(self, stop: int) -> int:
        assert 0 <= self.value < stop
        return self.value


def nle_base(env):
    """The NLE env under BALROG's stack (EnvWrapper > GymV21CompatibilityV0 > gym wrappers)."""
    return env.env.gym_env.unwrapped


class Table:
    """Texts stored once, named by index."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]


def digest(image) -> str | None:
    if image is None:
        return None
    array = np.ascontiguousarray(np.asarray(image), dtype=np.uint8)
    return hashlib.sha256(array.tobytes()).hexdigest() + f":{array.shape[0]}x{array.shape[1]}"


def stats(env) -> dict:
    """``get_stats()`` as BALROG's episode JSON writes it (json.dumps: an IntEnum as its int)."""
    return json.loads(json.dumps(env.get_stats()))


def observe(env, obs, table: Table) -> dict:
    return {
        "long": table(obs["text"]["long_term_context"]),
        "short": table(obs["text"]["short_term_context"]),
        "image": digest(obs["image"]),
        "stats": stats(env),
    }


def play(env, seed: int, outputs, table: Table, steps: int = STEPS, levels: list[str] | None = None) -> dict:
    """One episode as BALROG's evaluator plays it; ``outputs(names, obs)`` gives the next model output
    (``obs``: BALROG's observation); ``levels``: Boxoban's level list, set before the reset (MiniHack)."""
    base = nle_base(env)
    base._random = FixedDisp(seed)
    if levels is not None:
        base._levels = levels
    random.seed(seed)
    np.random.seed(seed)
    obs, _ = env.reset(seed=seed)
    names = list(env.env.language_action_space)
    episode = {
        "seed": seed,
        "max_steps": int(env.max_steps),
        "actions": names,
        "default_action": env.env.default_action,
        "instruction_prompt": table(env.get_instruction_prompt()),
        "reset": observe(env, obs, table),
        "steps": [],
    }
    for _ in range(min(steps, env.max_steps)):
        output = outputs(names, obs)
        action = env.check_action_validity(output)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode["steps"].append(
            {
                "output": output,
                "action": action,
                "reward": repr(float(reward)),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                **observe(env, obs, table),
            }
        )
        if terminated or truncated:
            break
    return episode


def nle_outputs(seed_index: int):
    rng = np.random.default_rng([33, seed_index])

    def draw(names: list[str], obs: Any = None) -> str:
        playable = [n for n in names if not (len(n) == 2 and n.isdigit())]  # "00".."99": BALROG's wrapper raises
        moves = [n for n in playable if n.split()[-1] in COMPASS]
        u = rng.random()
        if u < 0.05:
            return INVALID[int(rng.integers(len(INVALID)))]
        if u < 0.55:
            return moves[int(rng.integers(len(moves)))]
        if u < 0.65:
            return ("more", "esc", "search", "wait")[int(rng.integers(4))]
        return playable[int(rng.integers(len(playable)))]

    return draw


def seeds() -> list[int]:
    rng = np.random.default_rng(20241133)
    return [0, 1, 2] + [int(s) for s in rng.integers(0, 2**32, 3)]


def header(balrog_dir: Path, config, what: str, kwargs_key: str, script: str = __file__) -> dict:
    from omegaconf import OmegaConf

    return {
        "what": what,
        "command": f"cd /tmp && {sys.executable} {Path(script).resolve()}",
        "balrog": {"repo": "balrog-ai/BALROG", "commit": commit(balrog_dir)},
        "kwargs": OmegaConf.to_container(config.envs[kwargs_key]),
        "pinned_clock_library_sha256": PINNED_SHA256,
        "python": sys.version.split()[0],
        "packages": {name: metadata.version(name) for name in ("balrog-nle", "gym", "gymnasium", "numpy", "pillow", "omegaconf")},
    }


def write(data: dict, out: Path) -> None:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))  # mtime 0: the same bytes every run
    steps = sum(len(e["steps"]) for e in data["episodes"])
    print(f"{out}: {len(data['episodes'])} episodes, {steps} steps, {len(data['strings'])} texts, {out.stat().st_size} bytes")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project-python", default=PROJECT_PYTHON, help="the project's venv python (makes the pinned library)")
    parser.add_argument("--library", help="the pinned-clock libnethack.so (default: ask --project-python)")
    return parser.parse_args()


def reckless_outputs(seed_index: int):
    """Moves, fights, "y", "more", "esc", "down" and prayers: prayers too soon anger the god, and
    the character dies within a few dozen steps on the seeds below."""
    rng = np.random.default_rng([34, seed_index])

    def draw(names: list[str], obs: Any = None) -> str:
        pool = names[:16] + ["fight", "fight", "y", "more", "esc", "down", "pray"]
        return pool[int(rng.integers(len(pool)))]

    return draw


def idle_outputs(seed_index: int):
    """Commands that take no game time (esc, inventory, look, options, invalid strings): NLE aborts
    after 150 steps in which the turn counter stands still (no_progress_timeout)."""
    rng = np.random.default_rng([35, seed_index])

    def draw(names: list[str], obs: Any = None) -> str:
        pool = ("esc", "esc", "inventory", "look", "i", "go north", "seeall", "versionshort")
        return pool[int(rng.integers(len(pool)))]

    return draw


# (kind, seed, outputs, steps): random play, two deaths (a jackal; a god's wrath), a no-progress timeout
def schedule() -> list[tuple[str, int, Any, int]]:
    plays = [("random", seed, nle_outputs(i), STEPS) for i, seed in enumerate(seeds())]
    return plays + [
        ("death", 32, reckless_outputs(0), 200),
        ("death", 7, reckless_outputs(1), 200),
        ("timeout", 3, idle_outputs(0), 200),
    ]


def main() -> None:
    args = arguments()
    balrog_dir, config = setup(args)
    from balrog.environments import make_env

    table = Table()
    data = {
        "header": header(balrog_dir, config, "BALROG's NetHack, recorded by tests/envs/balrog/golden/nle/record.py (see its docstring)", "nle_kwargs"),
        "task": "NetHackChallenge-v0",
        "episodes": [],
    }
    for mode in ("hybrid", "vlm"):
        for kind, seed, outputs, steps in schedule():  # outputs afresh per mode: the same outputs in both
            env = make_env("nle", "NetHackChallenge-v0", mode_config(config, mode))
            episode = play(env, seed, outputs, table, steps)
            data["episodes"].append({"mode": mode, "kind": kind, **episode})
            env.close()
    data["strings"] = table.strings
    write(data, OUT)


if __name__ == "__main__":
    main()
