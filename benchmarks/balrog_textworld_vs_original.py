"""Step and reset time of balrog/TextWorld-* against BALROG's own TextWorld wrapper, same games and commands.

    .venv/bin/python benchmarks/balrog_textworld_vs_original.py /work/balrog-ref/venv/bin/python [--games 5]

The argument is a Python in which BALROG (balrog-ai/BALROG af7d1f17) imports: the private reference
environment that tests/envs/balrog/golden/make_reference_env.sh builds. BALROG's side runs in
subprocesses of that interpreter (from a temporary directory, so no checkout folder shadows a
package), twice:

- "BALROG": as BALROG runs, with its textworld fork first on the path (``--fork``, default
  ``textworld-fork`` beside the interpreter's venv) and BALROG's 75 game files (``--games-dir``,
  default ``src/tw_games`` there): the treasure hunter's and coin collector's ``.ulx`` on the fork's
  Glulx interpreter (a process per game, spoken to through a socket), the cooking ``.z8`` on jericho.
- "BALROG on .z8": the same wrapper code on the reference environment's textworld 1.7.0, playing the
  ``.z8`` files we compile (the cache of :mod:`rl4vlm_gym.envs.balrog.textworld_games`): the same
  interpreter as ours, so the difference is the wrappers'.

Each side plays games 0..``--games``-1 of each task (``reset(seed=k)``: game k) with the same commands:
the game's walkthrough with "goal", "look", "inventory" and nonsense mixed in at random (a fixed
generator), up to BALROG's 80 steps. The sides check they played the same game: a digest of every
observation text of an episode must agree with ours (for "BALROG on .z8", in the cooking game only:
on the two Glulx tasks it shows the z-machine's replies, which ours turn into Glulx's). Timed per call with ``time.perf_counter``:

- BALROG: ``env.reset(seed=k)`` and ``env.step(command)`` on the env ``balrog.environments.make_env``
  returns with BALROG's config (``EnvWrapper`` over ``GymV21CompatibilityV0`` over its
  ``TextWorldWrapper`` over textworld's gym env); also ``make_env`` + reset, which its evaluator pays
  per episode (a fresh env per episode).
- Ours: ``gym.make(id, free_commands=True)`` once per task (BALROG's setting: the ``balrog`` suites
  play so), then ``reset(seed=k)`` and ``step(command)`` through Gymnasium's wrappers, in ``text``
  mode and in ``image+text`` mode (the text drawn at 448x448); and ``free_commands=False`` in text
  mode (textworld's state tracking lists the admissible commands: not BALROG's setting).

One episode of each task is played first, untimed, on each side. Printed: medians in ms per step and
per reset, per task and over all, and the ratios. Every episode plays another game, so every reset
starts a game (ours keeps started games: a reset of one played before costs about 5 ms).

Measured on the 2-core development machine under a load of about 1-1.4 (other jobs running), 10
games per task (1,236 steps): ours (text, BALROG's setting and the ``balrog`` suite's LLM mode)
against BALROG, step 1.73 against 3.68 ms (0.47; treasure hunter 2.30 / 2.94, cooking 1.96 / 5.02,
coin collector 1.48 / 1.87), reset 16.2 against 20.7 ms (0.78; treasure hunter 17.1 / 19.0, cooking
41.1 / 75.8, coin collector 13.4 / 13.2; against make_env + reset 0.75); image+text 7.8 ms a step
(the page drawn, which BALROG does not have); free_commands=False 6.5 ms (textworld's state
tracking for the admissible commands). Where the difference comes from: textworld's description
info, which BALROG requests, makes the game describe the room after every command (cooking: 9.0
instead of 1.6 ms a step on the z-machine), and textworld parses the whole game definition at every
start (10-90 ms); ours does neither (:class:`~rl4vlm_gym.envs.balrog.textworld_env.ZGame`). With
BALROG's infos, textworld runs these games 1.0-1.3x slower on the z-machine than on Glulx (the
"BALROG on .z8" rows).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
from balrog_reference import ms, original, reference_parser, time_ours

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog import textworld_games

IDS = {
    "treasure_hunter": "balrog/TextWorld-TreasureHunter-v0",
    "the_cooking_game": "balrog/TextWorld-CookingGame-v0",
    "coin_collector": "balrog/TextWorld-CoinCollector-v0",
}
EXTRAS = ("goal", "look", "inventory", "xyzzy", "examine me", "wait", "take nothing", "")

# BALROG's side, run by the reference interpreter (balrog_reference.original: play and digest defined first): the plan
# ({task: [(seed, commands)]}) and the games folder come as arguments.
ORIGINAL = r"""
import contextlib, hashlib, io, json, re, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
with contextlib.redirect_stderr(io.StringIO()):  # gym's notice
    import textworld
    from omegaconf import OmegaConf
    import balrog
    from balrog.environments import make_env

plan = json.loads(Path(sys.argv[1]).read_text())
config = OmegaConf.load(Path(balrog.__file__).resolve().parent / "config" / "config.yaml")
config.envs.textworld_kwargs.textworld_games_path = sys.argv[2]
out = {"textworld": textworld.__version__}
for task, episodes in plan.items():
    resets, makes, steps, digests = [], [], [], []
    for index, (seed, commands) in enumerate(episodes):
        config.envs.env_kwargs.seed = seed
        start = time.perf_counter()
        env = make_env("textworld", task, config)
        made = time.perf_counter()
        first = env.reset(seed=seed)
        end = time.perf_counter()
        text = lambda obs, info: obs["text"]["long_term_context"]
        texts = play(env, first, commands, text, index, steps, act=env.check_action_validity)
        env.close()
        if index:  # the first episode warms up
            resets.append(end - made)
            makes.append(end - start)
        digests.append(digest(texts))
    out[task] = {"reset": resets, "make_reset": makes, "step": steps, "digests": digests}
print(json.dumps(out))
"""


def plan(games: int) -> dict[str, list[tuple[int, list[str]]]]:
    """Per task the episodes to play, (seed, commands); game 0 is also played first as a warm-up."""
    rows: dict[str, list[tuple[int, list[str]]]] = {}
    for task in IDS:
        rows[task] = []
        for seed in [0, *range(games)]:
            rng = random.Random(f"{task}/{seed}")
            commands: list[str] = []
            for command in textworld_games.walkthrough(task, seed % textworld_games.POOL):
                while rng.random() < 0.25:
                    commands.append(EXTRAS[rng.randrange(len(EXTRAS))])
                commands.append(command)
            rows[task].append((seed, commands[:80]))
    return rows


def ours(episodes: list[tuple[int, list[str]]], env_id: str, **kwargs: Any) -> dict[str, Any]:
    env = gym.make(env_id, action_format="balrog-robust-naive", **kwargs)  # passes "" as BALROG does
    timed = time_ours(env, episodes)
    env.close()
    return timed


def balrog_side(python: str, episodes: dict[str, Any], games_dir: Path, fork: Path | None) -> dict[str, Any]:
    environ = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if fork is not None:
        environ["PYTHONPATH"] = str(fork)
    return original(python, ORIGINAL, episodes, str(games_dir), env=environ)


def compiled_games(folder: Path) -> Path:
    """A tw_games-like folder of our compiled .z8 games (links into the cache), for BALROG's wrapper."""
    for task in IDS:
        (folder / task).mkdir(parents=True)
        for index in range(textworld_games.POOL):
            path = textworld_games.make_game(task, index)
            for suffix in (".z8", ".json"):
                (folder / task / path.with_suffix(suffix).name).symlink_to(path.with_suffix(suffix))
    return folder


def main() -> None:
    parser = reference_parser(__doc__.splitlines()[0], "the reference interpreter, where BALROG imports")
    parser.add_argument("--games", type=int, default=5, help="games per task (0..N-1)")
    parser.add_argument("--fork", type=Path, help="BALROG's textworld fork (default: textworld-fork beside the venv)")
    parser.add_argument("--games-dir", type=Path, help="BALROG's tw_games (default: src/tw_games beside the venv)")
    args = parser.parse_args()
    ref = Path(args.python).absolute().parents[2]
    fork = args.fork or ref / "textworld-fork"
    games_dir = args.games_dir or ref / "src" / "tw_games"
    episodes = plan(args.games)
    theirs = balrog_side(args.python, episodes, games_dir, fork)
    with tempfile.TemporaryDirectory() as tmp:
        theirs_z8 = balrog_side(args.python, episodes, compiled_games(Path(tmp) / "tw_games"), None)
    rows: dict[str, dict[str, dict[str, Any]]] = {
        "BALROG": {},
        "BALROG on .z8": {},
        "ours, text": {},
        "ours, image+text": {},
        "ours, admissible": {},
    }
    for task, env_id in IDS.items():
        rows["BALROG"][task], rows["BALROG on .z8"][task] = theirs[task], theirs_z8[task]
        rows["ours, text"][task] = ours(episodes[task], env_id, free_commands=True, obs_mode="text")
        rows["ours, image+text"][task] = ours(episodes[task], env_id, free_commands=True, obs_mode="image+text")
        rows["ours, admissible"][task] = ours(episodes[task], env_id, obs_mode="text")
        # BALROG's wrapper on the .z8 shows the z-machine's replies as they are (status lines): the
        # same texts as ours in the cooking game only
        for name in ("BALROG", "BALROG on .z8") if task not in textworld_games.GLULX_TASKS else ("BALROG",):
            ours_digests = rows["ours, text"][task]["digests"]
            parted = [
                seed for (seed, _), a, b in zip(episodes[task], rows[name][task]["digests"], ours_digests, strict=True) if a != b
            ]
            if parted:
                raise SystemExit(f"{name} and ours did not show the same texts in {task} (seeds {parted})")
    print(
        f"TextWorld, {args.games} games per task, same commands on both sides (walkthrough + extras, up to 80; texts "
        f"checked equal); medians in ms. BALROG: textworld {theirs['textworld']} (.ulx on Glulx, cooking .z8); "
        f"BALROG on .z8: textworld {theirs_z8['textworld']}"
    )
    header = f"{'':<18}{'task':<18}{'steps':>7}{'step':>9}{'reset':>9}{'make+reset':>12}"
    print(header)
    print("-" * len(header))
    merged: dict[str, dict[str, list[float]]] = {}
    for name, per_task in rows.items():
        merged[name] = {key: [v for task in IDS for v in per_task[task].get(key, [])] for key in ("step", "reset", "make_reset")}
        for task in [*IDS, "all"]:
            figures = per_task[task] if task != "all" else merged[name]
            make_reset = f"{ms(figures['make_reset']):>12.2f}" if figures.get("make_reset") else f"{'':>12}"
            print(
                f"{name:<18}{task:<18}{len(figures['step']):>7}{ms(figures['step']):>9.2f}{ms(figures['reset']):>9.2f}{make_reset}"
            )
    for name in ("BALROG", "BALROG on .z8"):
        base = merged[name]
        print(
            f"ours (text) / {name}: step {ms(merged['ours, text']['step']) / ms(base['step']):.2f}, "
            f"reset {ms(merged['ours, text']['reset']) / ms(base['reset']):.2f} "
            f"(against make_env + reset, as BALROG's evaluator does per episode: {ms(merged['ours, text']['reset']) / ms(base['make_reset']):.2f})"
        )
    for task in IDS:
        print(
            f"  {task}: ours (text) / BALROG step {ms(rows['ours, text'][task]['step']) / ms(rows['BALROG'][task]['step']):.2f}, "
            f"/ BALROG on .z8 {ms(rows['ours, text'][task]['step']) / ms(rows['BALROG on .z8'][task]['step']):.2f}"
        )
    print(f"Python {sys.version.split()[0]}; BALROG's side: {args.python} (fork {fork})")


if __name__ == "__main__":
    main()
