"""Record what BALROG's own TextWorld wrapper shows an agent: the golden transcripts of
balrog/TextWorld-{TreasureHunter,CookingGame,CoinCollector}-v0.

Run with the PRIVATE reference environment (see ../make_reference_env.sh), with BALROG's fork of
textworld first on the path, from outside its source folder (the checkouts there shadow packages):

    cd /tmp && PYTHONPATH=/work/balrog-ref/textworld-fork \\
        /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/textworld/record.py

It writes ``textworld.json.gz`` beside itself (the run takes about a minute). What it drives:
``balrog.environments.make_env("textworld", task, config)`` of balrog-ai/BALROG
af7d1f17e0deec3a7a0e334beae5f11b7a21371b, with ``config`` read from BALROG's own
``balrog/config/config.yaml`` (``textworld_kwargs``: objective, description, score, max_score, won,
max_episode_steps 80), except two values: ``textworld_games_path`` points at the 75 games of
conglu1997/intelligent-go-explore bcb4052e ``textworld/tw_games`` (BALROG's post-install downloads
the same files into ``tw_games``), and ``env_kwargs.seed`` is each episode's seed (BALROG's fixed-seed
path: game ``seed mod 25`` of the task's games in sorted order). The games are played by the
textworld BALROG installs: balrog-ai/TextWorld 1d56f4765e7b (textworld 1.6.2rc1 renamed), built
without its Inform 7 download (only compiling needs it), so that the ``.ulx`` games of the treasure
hunter and coin collector run on its Glulx interpreter (git-glulx) as in BALROG; textworld 1.7.0
cannot play them. The calls are made as ``Evaluator.run_episode`` makes them (balrog/evaluator.py):
``env.reset(seed=s)``, ``env.get_instruction_prompt()``, then per step
``env.check_action_validity(command)`` (every string is valid in BALROG's TextWorld) and
``env.step(action)``; the episode stops when terminated or truncated.

Recorded per task: the instruction prompt and ``env.max_steps``; per episode the seed, the game's
file name, the commands, and for the reset and every step BALROG's ``obs["text"]``
(``long_term_context``, ``short_term_context``), the reward (textworld's running score), terminated,
truncated and ``env.get_stats()`` (progression). BALROG's TextWorld has no image and no action list
(``language_action_space`` accepts every string). Commands: each game's walkthrough (from its
``.json``), with, before a step and at random (a fixed RNG per episode), "goal", "look",
"inventory", and commands that are not moves or not understood ("xyzzy", "take nothing", "",
"LOOK", "version", "restart" then "no", ...); one cooking episode plays its walkthrough alone (45
steps) and wins. Some episodes lose on purpose (the treasure hunter's
forbidden object taken; an ingredient eaten in the cooking game) or play 80 steps of wandering (the
step limit). Commands the Glulx and z-machine interpreters answer differently by design (undo,
again, save, restore, quit, script) are not played: see the env's docstring.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import pathlib
import random
import re
import subprocess
import sys

BALROG_COMMIT = "af7d1f17e0deec3a7a0e334beae5f11b7a21371b"
GAMES_COMMIT = "bcb4052e6de36a4389e666acd374832cfab1a042"
TEXTWORLD_FORK_COMMIT = "1d56f4765e7b28f04a68eff0bce5a6fe6ecd1a9f"
REF = pathlib.Path("/work/balrog-ref")
GAMES = REF / "src" / "tw_games"
OUT = pathlib.Path(__file__).with_name("textworld.json.gz")
TASKS = ("treasure_hunter", "the_cooking_game", "coin_collector")
# Seeds: BALROG plays game seed mod 25; 1435529258 and 3_000_000_000 are seeds of the size its
# random seeds have (8 hex digits).
# Each episode's kind: "walk" (the walkthrough with extra commands), "pure" (the walkthrough alone:
# the cooking game's shortest, 45 steps, wins within 80), "restart" (a walk with "restart", "no"),
# "lose", "wander" (80 steps of moves).
SEEDS = {
    "treasure_hunter": {0: "walk", 7: "walk", 13: "restart", 24: "lose", 1435529258: "walk", 3_000_000_000: "wander"},
    "the_cooking_game": {0: "walk", 10: "pure", 11: "restart", 19: "lose", 1435529258: "walk", 3_000_000_000: "wander"},
    "coin_collector": {0: "walk", 5: "walk", 17: "restart", 24: "lose", 1435529258: "walk", 3_000_000_000: "wander"},
}
EXTRAS = ("goal", "look", "inventory", "goal", "look", "inventory", "xyzzy", "take nothing", "", "LOOK",
          "examine me", "go nowhere", "wait", "help", "score", "version", "  look  ", "open", "dance")  # fmt: skip


def walkthrough(task: str, name: str) -> list[str]:
    return list(json.loads((GAMES / task / f"{name}.json").read_text())["metadata"]["walkthrough"])


def forbidden_object(task: str, name: str) -> str:
    """The treasure hunter's object whose taking loses (its quest's fail event)."""
    game = json.loads((GAMES / task / f"{name}.json").read_text())
    infos = dict((key, value) for key, value in game["infos"])
    for event in game["quests"][0]["fail_events"]:
        for fact in event["condition"]["preconditions"]:
            if fact["name"] == "in":
                return infos[fact["arguments"][0]["name"]]["name"]
    raise ValueError(f"{name}: no fail event")


def commands_for(task: str, name: str, seed: int, kind: str) -> list[str]:
    rng = random.Random(f"{task}/{seed}/{kind}")
    walk = walkthrough(task, name)
    if kind == "wander":  # the step limit: 85 commands, moves mostly
        moves = ("go north", "go south", "go east", "go west", "look", "goal", "inventory", "xyzzy")
        return [moves[rng.randrange(len(moves))] for _ in range(85)]
    commands: list[str] = []
    for step, command in enumerate(walk):
        while kind != "pure" and rng.random() < 0.3:
            commands.append(EXTRAS[rng.randrange(len(EXTRAS))])
        if step == 3 and kind == "restart":
            commands += ["restart", "no"]
        commands.append(command)
        if kind == "lose" and task == "treasure_hunter":
            thing = forbidden_object(task, name)
            commands += [f"take {thing}", f"take {thing} from case"]  # lost once it is in reach
        if kind == "lose" and task == "the_cooking_game":
            taken = re.match(r"take (.+?)(?: from .+)?$", command)
            if taken and taken.group(1) not in ("knife", "cookbook"):
                commands.append(f"eat {taken.group(1)}")  # eating an ingredient loses
    return commands


def main() -> None:
    import textworld
    from balrog.environments import make_env
    from omegaconf import OmegaConf

    assert textworld.__version__ == "1.6.2rc1", f"BALROG's textworld fork must come first on the path, not {textworld.__file__}"
    config = OmegaConf.load(REF / "src" / "BALROG" / "balrog" / "config" / "config.yaml")
    config.envs.textworld_kwargs.textworld_games_path = str(GAMES)
    balrog_head = subprocess.run(
        ["git", "-C", str(REF / "src" / "BALROG"), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    out = {
        "made_by": "cd /tmp && PYTHONPATH=/work/balrog-ref/textworld-fork /work/balrog-ref/venv/bin/python "
        "/work/main/tests/envs/balrog/golden/textworld/record.py",
        "balrog": f"balrog-ai/BALROG {balrog_head or BALROG_COMMIT}",
        "games": f"conglu1997/intelligent-go-explore {GAMES_COMMIT} textworld/tw_games",
        "textworld": f"balrog-ai/TextWorld {TEXTWORLD_FORK_COMMIT} (version {textworld.__version__})",
        "packages": {name: importlib.metadata.version(name) for name in ("jericho", "gym", "gymnasium", "TatSu", "omegaconf")},
        "python": sys.version.split()[0],
        "textworld_kwargs": OmegaConf.to_container(config.envs.textworld_kwargs),
        "tasks": {},
    }
    for task in TASKS:
        names = sorted(path.stem for path in (GAMES / task).glob("*.json"))
        record: dict = {"episodes": []}
        for seed in SEEDS[task]:
            config.envs.env_kwargs.seed = seed
            env = make_env("textworld", task, config)
            obs, _ = env.reset(seed=seed)
            record["instruction_prompt"] = env.get_instruction_prompt()
            record["max_steps"] = env.max_steps
            name = names[seed % len(names)]
            kind = SEEDS[task][seed]
            commands = commands_for(task, name, seed, kind)
            steps = [{"text": dict(obs["text"])}]
            played: list[str] = []
            for command in commands:
                action = env.check_action_validity(command)
                assert action == command
                obs, reward, terminated, truncated, _ = env.step(action)
                played.append(command)
                steps.append(
                    {
                        "text": dict(obs["text"]),
                        "reward": reward,
                        "terminated": bool(terminated),
                        "truncated": bool(truncated),
                        "stats": env.get_stats(),
                    }
                )
                if terminated or truncated:
                    break
            env.close()
            record["episodes"].append({"seed": seed, "game": name, "kind": kind, "commands": played, "steps": steps})
            last = steps[-1]
            print(task, seed, name, kind, len(played), "steps", last.get("terminated"), last.get("stats"), flush=True)
        out["tasks"][task] = record
    OUT.write_bytes(gzip.compress(json.dumps(out, indent=0, sort_keys=True).encode(), mtime=0))
    print(OUT, OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
