"""Record BALROG's BabaIsAI as its own wrapper plays it: the golden transcripts of ``babaisai.json.gz``.

Run with the private reference environment (tests/envs/balrog/golden/make_reference_env.sh), from a
directory other than REF_DIR/src (its checkout folders shadow the packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/babaisai/record.py

It drives BALROG's own code, nothing of ours: ``balrog.environments.make_env("babaisai", task,
config)`` with BALROG's ``balrog/config/config.yaml`` (``babaisai_kwargs: {add_ruleset: True}``),
which makes ``baba.make(task)`` (nacloos/baba-is-ai ad466e02) and wraps it in ``BabaIsAIWrapper``,
``GymV21CompatibilityV0`` and ``EnvWrapper``; then, as BALROG's evaluator does
(``balrog/evaluator.py:Evaluator.run_episode``), it seeds ``random`` and ``np.random`` with the
episode's seed, calls ``env.reset(seed=seed)``, reads the instruction prompt, and plays each output
through ``env.check_action_validity`` (an invalid output plays BALROG's default action, "idle"),
stopping when ``terminated or truncated``.

The seeds and the scripted move sequences come from ``plans.json`` beside this file (written by
``make_plans.py`` with our env: its oracle's winning moves, and move sequences that break
"baba is you"; here they are only outputs to play). Per task (BALROG's 40), episodes of kind:

- ``random``: each of the five seeds, 50 outputs (or to the episode's end) from a fixed generator
  per (task, seed): "idle" 6%, each move 22%, an invalid output 6%;
- ``solved``: the first and fourth seed, the oracle's moves (wins);
- ``broken``: the make-you tasks, every seed, the moves that break "baba is you" and then 30 random
  outputs (BALROG's wrapper draws a new level mid-episode);
- ``long``: every fifth task, the second seed, 100 outputs, mostly "idle" (the step budget's end).

Recorded per episode: the task, kind, seed, and at reset and after every step
``long_term_context``, ``short_term_context``, the image's size, ``get_stats()`` (progression,
target plan), and per step the output, the action played, the reward (``repr``), terminated and
truncated. The instruction prompt, the step limit and the action space are the same for every
task (checked here) and stored once. ``tiles.npz`` holds the original's 32-pixel tiles of every
object and word (``BabaIsYouGrid.render_tile``, cast to uint8 as ``BabaIsYouGrid.render`` does).
"""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
OUT = HERE / "babaisai.json.gz"
TILES = HERE / "tiles.npz"
ACTIONS = ["idle", "up", "right", "down", "left"]
INVALID = ("Up", "move left", "", "wait", "RIGHT", "go down", "Idle")
COMMITS = {"BALROG": "af7d1f17e0deec3a7a0e334beae5f11b7a21371b", "baba-is-ai": "ad466e027ad0a08f253ac2bf48550a2eb21b5ecc"}


def _commit(path: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{COMMITS[path.name]} (make_reference_env.sh's; {path} has no .git)"


def random_outputs(rng: np.random.Generator, n: int, idle: float = 0.06) -> list[str]:
    outputs = []
    for _ in range(n):
        u = rng.random()
        if u < 0.06:
            outputs.append(INVALID[int(rng.integers(len(INVALID)))])
        elif u < 0.06 + idle:
            outputs.append("idle")
        else:
            outputs.append(ACTIONS[1 + int(rng.integers(4))])
    return outputs


def _observation(env, obs) -> dict:
    stats = env.get_stats()
    return {
        "long_term_context": obs["text"]["long_term_context"],
        "short_term_context": obs["text"]["short_term_context"],
        "image_size": list(obs["image"].size),
        "progression": stats["progression"],
        "target_plan": stats["target_plan"],
    }


def play(env, task: str, kind: str, seed: int, outputs: list[str], common: dict) -> dict:
    random.seed(seed)
    np.random.seed(seed)
    obs, _ = env.reset(seed=seed)
    prompt = env.get_instruction_prompt()
    inner = env.env  # GymV21CompatibilityV0 forwards attributes to BabaIsAIWrapper (gymnasium's wrappers do not)
    for name, value in (
        ("instruction_prompt", prompt),
        ("max_steps", int(env.max_steps)),
        ("language_action_space", list(inner.language_action_space)),
        ("default_action", inner.default_action),
    ):
        assert common.setdefault(name, value) == value, (task, name)  # the same for every task
    episode = {"task": task, "kind": kind, "seed": seed, "reset": _observation(env, obs), "steps": []}
    for output in outputs:
        action = env.check_action_validity(output)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode["steps"].append(
            {"output": output, "action": action, "reward": repr(float(reward)), "terminated": bool(terminated),
             "truncated": bool(truncated), **_observation(env, obs)}
        )  # fmt: skip
        if terminated or truncated:
            break
    return episode


def tiles() -> dict[str, np.ndarray]:
    """The original's tiles, as its full render holds them."""
    from baba.grid import BabaIsYouGrid
    from baba.world_object import FBall, FDoor, FKey, FWall, RuleIs, RuleObject, RuleProperty, Wall, make_obj

    def tile(obj) -> np.ndarray:
        BabaIsYouGrid.tile_cache.clear()  # baba's cached tile ignores its direction
        out = np.zeros((32, 32, 3), np.uint8)
        out[:] = BabaIsYouGrid.render_tile(obj, tile_size=32)
        return out

    found = {"empty": tile(None), "border": tile(Wall())}
    for color in ("red", "green", "blue", "purple", "yellow", "grey"):
        for cls, name in ((FWall, "wall"), (FBall, "ball"), (FKey, "key"), (FDoor, "door")):
            found[f"{name}:{color}"] = tile(cls(color))
    for direction in range(4):
        baba = make_obj("baba")
        baba.dir = direction
        found[f"baba:{direction}"] = tile(baba)
    for noun in ("baba", "wall", "ball", "key", "door"):
        found[f"word:{noun}"] = tile(RuleObject(noun))
    found["word:is"] = tile(RuleIs())
    for prop in ("you", "win", "stop", "push", "lose", "pull", "move", "open", "shut"):
        found[f"word:{prop}"] = tile(RuleProperty(prop))
    return found


def main() -> None:
    import baba
    import balrog
    from balrog.environments import make_env
    from omegaconf import OmegaConf

    balrog_dir = Path(balrog.__file__).resolve().parents[1]
    baba_dir = Path(baba.__file__).resolve().parents[1]
    config = OmegaConf.load(balrog_dir / "balrog" / "config" / "config.yaml")
    tasks = list(config.tasks.babaisai_tasks)
    plans = json.loads((HERE / "plans.json").read_text())
    assert sorted(plans) == sorted(tasks)
    common: dict = {}
    episodes = []
    for t, task in enumerate(tasks):
        env = make_env("babaisai", task, config)
        plan = plans[task]
        for s, seed in enumerate(plan["seeds"]):
            outputs = random_outputs(np.random.default_rng([t, s]), 50)
            episodes.append(play(env, task, "random", seed, outputs, common))
        for seed, moves in plan["solved"].items():
            episodes.append(play(env, task, "solved", int(seed), moves, common))
            assert episodes[-1]["steps"][-1]["progression"] == 1.0, (task, seed)  # our oracle's plan wins in BALROG too
        for seed, moves in plan["broken"].items():
            outputs = moves + random_outputs(np.random.default_rng([t, int(seed), 2]), 30)
            episodes.append(play(env, task, "broken", int(seed), outputs, common))
        if t % 5 == 0:
            outputs = random_outputs(np.random.default_rng([t, 3]), 100, idle=0.84)
            episodes.append(play(env, task, "long", plan["seeds"][1], outputs, common))
        env.close()
    data = {
        "header": {
            "what": "BALROG's BabaIsAI, recorded by tests/envs/balrog/golden/babaisai/record.py (see its docstring)",
            "command": f"cd /tmp && {sys.executable} {Path(__file__).resolve()}",
            "balrog": {"repo": "balrog-ai/BALROG", "commit": _commit(balrog_dir)},
            "baba": {"repo": "nacloos/baba-is-ai", "commit": _commit(baba_dir)},
            "babaisai_kwargs": OmegaConf.to_container(config.envs.babaisai_kwargs),
            "python": sys.version.split()[0],
            "packages": {
                name: metadata.version(name)
                for name in ("gym", "gymnasium", "numpy", "pillow", "opencv-python-headless", "omegaconf")
            },
        },
        "tasks": tasks,
        **common,
        "episodes": episodes,
    }
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(data, f, separators=(",", ":"))
    np.savez_compressed(TILES, **tiles())
    steps = sum(len(e["steps"]) for e in episodes)
    print(
        f"{len(episodes)} episodes, {steps} steps -> {OUT} ({OUT.stat().st_size} bytes), {TILES} ({TILES.stat().st_size} bytes)"
    )


if __name__ == "__main__":
    main()
