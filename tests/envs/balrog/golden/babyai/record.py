"""Record BALROG's BabyAI as its own wrapper plays it: the golden transcripts of ``babyai.json.gz``.

Run with the private reference environment (tests/envs/balrog/golden/make_reference_env.sh), from a
directory other than REF_DIR/src (its checkout folders shadow the packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/babyai/record.py

It drives BALROG's own code, nothing of ours: ``balrog.environments.make_env("babyai", task, config)``
with BALROG's ``balrog/config/config.yaml`` (``babyai_kwargs: {num_dists: 0}``), which builds the
minigrid fork's ``BabyAI-MixedTrainLocal-v0`` until its goal kind is the task's and wraps it in
``BabyAITextCleanLangWrapper`` and ``EnvWrapper``; then, as BALROG's evaluator does
(``balrog/evaluator.py:Evaluator.run_episode``), it seeds ``random`` and ``np.random``, calls
``env.reset(seed=seed)``, reads the instruction prompt with the mission, and plays up to
``env.max_steps`` steps, each action through ``env.check_action_validity`` (an invalid output plays
the default action), stopping when ``terminated or truncated``.

Per task (BALROG's five), 20 seeds: 0..4 and 15 drawn like BALROG's (8 hex digits, below 2**32)
from a fixed generator. Actions come from a fixed generator per (task, seed): even seed indices
follow minigrid's ``BabyAIBot`` (BabyAI's own planner, which unlocks doors) with 15% random
actions, so many episodes succeed; odd ones are random actions (toggles, pick-ups and drops
included). About 3% of the outputs are invalid strings (BALROG's default action is played).

Recorded per episode: the seed, the step limit, the mission, the instruction prompt, and at reset
and after every step ``long_term_context``, ``short_term_context``, the sha256 of the image array
(``np.asarray(obs["image"])``, 112x112x3 uint8), and per step the output, the action played, the
reward (``repr``), terminated, truncated and the progression (``get_stats()``); ``get_stats()`` in
full at the end.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

SEEDS_PER_TASK = 20
INVALID = ("Go forward", "pick up the ball", "", "move forward", "toggle door", "PICK UP")
OUT = Path(__file__).with_name("babyai.json.gz")


# The commits make_reference_env.sh checks out; a checkout without .git is taken to be at them.
COMMITS = {"BALROG": "af7d1f17e0deec3a7a0e334beae5f11b7a21371b", "Minigrid": "cf73dd148e51276bd675a37e3bfb0bf2b42329b2"}


def _commit(path: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{COMMITS[path.name]} (make_reference_env.sh's; {path} has no .git)"


def _digest(image) -> str:
    array = np.ascontiguousarray(np.asarray(image), dtype=np.uint8)
    assert array.shape == (112, 112, 3), array.shape
    return hashlib.sha256(array.tobytes()).hexdigest()


def _texts(obs) -> dict:
    return {"long_term_context": obs["text"]["long_term_context"], "short_term_context": obs["text"]["short_term_context"]}


def seeds() -> list[int]:
    rng = np.random.default_rng(20241118)
    return list(range(5)) + [int(s) for s in rng.integers(0, 2**32, SEEDS_PER_TASK - 5)]


def play(env, task_index: int, seed_index: int, seed: int, bot_class) -> dict:
    random.seed(seed)
    np.random.seed(seed)
    obs, _ = env.reset(seed=seed)
    mission = obs["mission"]
    episode = {
        "seed": seed,
        "max_steps": int(env.max_steps),
        "mission": mission,
        "instruction_prompt": env.get_instruction_prompt(instructions=mission),
        "reset": {**_texts(obs), "image_sha256": _digest(obs["image"]), "progression": env.get_stats()["progression"]},
        "steps": [],
    }
    rng = np.random.default_rng([task_index, seed_index])
    names = env.env.language_action_space  # BabyAITextCleanLangWrapper (gymnasium wrappers forward no attributes)
    use_bot = seed_index % 2 == 0
    bot = bot_class(env.unwrapped) if use_bot else None
    taken = None
    for _ in range(env.max_steps):
        output = None
        if bot is not None:
            try:
                suggested = int(bot.replan(taken))
            except Exception:  # the bot gives up on some perturbed states: random from then on
                bot, suggested = None, None
            if suggested is not None and suggested < len(names) and rng.random() >= 0.15:
                output = names[suggested]
        if output is None:
            if rng.random() < 0.03:
                output = INVALID[int(rng.integers(len(INVALID)))]
            else:
                output = names[int(rng.choice(6, p=[0.15, 0.15, 0.36, 0.12, 0.1, 0.12]))]
        action = env.check_action_validity(output)
        taken = names.index(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode["steps"].append(
            {
                "output": output,
                "action": action,
                "reward": repr(float(reward)),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                **_texts(obs),
                "image_sha256": _digest(obs["image"]),
                "progression": env.get_stats()["progression"],
            }
        )
        if terminated or truncated:
            break
    episode["stats"] = env.get_stats()
    return episode


def main() -> None:
    import balrog
    import minigrid
    from balrog.environments import make_env
    from minigrid.utils.baby_ai_bot import BabyAIBot
    from omegaconf import OmegaConf

    balrog_dir = Path(balrog.__file__).resolve().parents[1]
    minigrid_dir = Path(minigrid.__file__).resolve().parents[1]
    config = OmegaConf.load(balrog_dir / "balrog" / "config" / "config.yaml")
    tasks = list(config.tasks.babyai_tasks)
    data = {
        "header": {
            "what": "BALROG's BabyAI, recorded by tests/envs/balrog/golden/babyai/record.py (see its docstring)",
            "command": f"cd /tmp && {sys.executable} {Path(__file__).resolve()}",
            "balrog": {"repo": "balrog-ai/BALROG", "commit": _commit(balrog_dir)},
            "minigrid": {"repo": "BartekCupial/Minigrid", "commit": _commit(minigrid_dir)},
            "babyai_kwargs": OmegaConf.to_container(config.envs.babyai_kwargs),
            "python": sys.version.split()[0],
            "packages": {name: metadata.version(name) for name in ("gymnasium", "numpy", "pillow", "pygame", "omegaconf")},
        },
        "tasks": tasks,
        "seeds": seeds(),
        "episodes": [],
    }
    for task_index, task in enumerate(tasks):
        for seed_index, seed in enumerate(data["seeds"]):
            env = make_env("babyai", task, config)
            if task_index == seed_index == 0:
                data["language_action_space"] = list(env.env.language_action_space)
                data["default_action"] = env.env.default_action
            with open(os.devnull, "w") as devnull:  # minigrid prints every rejected layout
                stdout, sys.stdout = sys.stdout, devnull
                try:
                    episode = play(env, task_index, seed_index, seed, BabyAIBot)
                finally:
                    sys.stdout = stdout
            data["episodes"].append({"task": task, **episode})
            env.close()
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    OUT.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))  # mtime 0: the same bytes every run
    steps = sum(len(e["steps"]) for e in data["episodes"])
    wins = sum(e["stats"]["progression"] == 1.0 for e in data["episodes"])
    print(f"{OUT}: {len(data['episodes'])} episodes, {steps} steps, {wins} won, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
