"""Write the balrog suites (leaderboards/suites/balrog*.yaml) from the registry's balrog cards.

    .venv/bin/python scripts/make_balrog_suites.py

Every balrog card names its BALROG env and task (``EnvCard.benchmark``), so the suites follow the
registry: BALROG's six envs in its own order (``envs.names`` of balrog/config/config.yaml at
af7d1f17), its episodes per task (``eval.num_episodes``) and each env's own step limit. The seeds
are data, drawn once per task from the evaluation range (``draw_seeds``, one root per task), so a
re-run writes the same files.

- ``balrog``: BALROG's default protocol: LLM mode (``agent.max_image_history: 0``: text only),
  the naive agent, 16 observations of history, the default action and feedback on an invalid
  output (wrapper ``balrog-actions``), NetHack's 100,000 steps.
- ``balrog-vlm``: the same in BALROG's VLM mode (``max_image_history: 1``): the current image is
  attached and NetHack / MiniHack give BALROG's VLM-mode text.
- ``balrog-smoke``: one seed of every task, 16 steps, VLM mode: an end-to-end check, not a benchmark.
"""

from __future__ import annotations

from pathlib import Path

import rl4vlm_gym  # noqa: F401  (registers every id)
from rl4vlm_gym.harness.suite import draw_seeds, load_suite
from rl4vlm_gym.registry import env_card, list_envs

SUITES = Path(__file__).resolve().parents[1] / "leaderboards" / "suites"

EPISODES = {"nle": 5, "minihack": 5, "babyai": 10, "crafter": 10, "babaisai": 3, "textworld": 10}  # eval.num_episodes
# BALROG's task lists (config.yaml ``tasks``), its envs in the order of ``envs.names``: the suites
# list tasks in this order.
BALROG_TASKS = {
    "babyai": [f"BabyAI-MixedTrainLocal-v0/{t}" for t in ("goto", "pickup", "open", "putnext", "pick_up_seq_go_to")],
    "babaisai": [f"env/{t}" for t in (
        "make_win-distr_obj_rule", "goto_win-distr_obj_rule", "goto_win", "goto_win-distr_obj", "goto_win-distr_rule",
        "goto_win-distr_obj-irrelevant_rule", "make_win-distr_obj", "make_win-distr_rule", "make_win",
        "make_win-distr_obj-irrelevant_rule", "two_room-goto_win", "two_room-goto_win-distr_obj_rule",
        "two_room-goto_win-distr_rule", "two_room-goto_win-distr_obj", "two_room-goto_win-distr_obj-irrelevant_rule",
        "two_room-goto_win-distr_win_rule", "two_room-break_stop-goto_win-distr_obj_rule",
        "two_room-break_stop-goto_win-distr_obj", "two_room-break_stop-goto_win-distr_rule",
        "two_room-break_stop-goto_win-distr_obj-irrelevant_rule", "two_room-break_stop-goto_win",
        "two_room-maybe_break_stop-goto_win-distr_obj_rule", "two_room-maybe_break_stop-goto_win",
        "two_room-maybe_break_stop-goto_win-distr_obj", "two_room-maybe_break_stop-goto_win-distr_rule",
        "two_room-maybe_break_stop-goto_win-distr_obj-irrelevant_rule", "two_room-make_win-distr_obj_rule",
        "two_room-make_win-distr_rule", "two_room-make_win", "two_room-make_win-distr_obj-irrelevant_rule",
        "two_room-make_win-distr_obj", "two_room-make_win-distr_win_rule", "two_room-break_stop-make_win-distr_obj_rule",
        "two_room-break_stop-make_win-distr_rule", "two_room-break_stop-make_win",
        "two_room-break_stop-make_win-distr_obj-irrelevant_rule", "two_room-break_stop-make_win-distr_obj",
        "two_room-make_you", "two_room-make_you-make_win", "two_room-make_wall_win",
    )],
    "textworld": ["treasure_hunter", "the_cooking_game", "coin_collector"],
    "crafter": ["default"],
    "nle": ["NetHackChallenge-v0"],
    "minihack": [f"MiniHack-{t}-v0" for t in (
        "Boxoban-Hard", "Boxoban-Medium", "MazeWalk-9x9", "MazeWalk-15x15", "Corridor-R3", "CorridorBattle-Dark",
        "Quest-Easy", "Quest-Medium",
    )],
}  # fmt: skip
TEXTWORLD_FIRST_SEED = 2**30 + 1  # the first evaluation seed that plays game 0 (seed mod 25)


def _kwargs(env: str, vlm: bool) -> dict[str, object]:
    """Env kwargs of BALROG's settings: its NetHack and MiniHack text differs between LLM and VLM
    mode; its TextWorld passes any reply to the game (no admissible-command list)."""
    if env in ("nle", "minihack"):
        return {"text_format": "vlm" if vlm else "hybrid"}
    if env == "textworld":
        return {"free_commands": "true"}
    return {}


def _tasks() -> list[tuple[str, str, str]]:
    """(id, BALROG env, BALROG task) of every balrog card, in BALROG's env order, then task order."""
    rows = []
    for card in list_envs(family="balrog"):
        if card.benchmark is not None:
            rows.append((card.id, *card.benchmark))
    missing = sorted({(env, task) for env, tasks in BALROG_TASKS.items() for task in tasks} - {r[1:] for r in rows})
    if missing:
        raise SystemExit(f"no balrog card plays these BALROG tasks: {missing}")
    order = list(BALROG_TASKS)
    return sorted(rows, key=lambda r: (order.index(r[1]), BALROG_TASKS[r[1]].index(r[2])))


def _task_name(env: str, task: str) -> str:
    """The suite's task name: the env for a one-task env, else ``env-task`` in BALROG's words."""
    if len(BALROG_TASKS[env]) == 1:
        return env
    short = task.rsplit("/", 1)[-1] if env != "babaisai" else task.removeprefix("env/")
    return f"{env}-{short}".lower().replace("minihack-minihack-", "minihack-").removesuffix("-v0")


def _yaml_list(values: list[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def write(name: str, header: str, description: str, vlm: bool, smoke: bool, root0: int) -> Path:
    images = 1 if vlm else 0
    lines = [*(f"# {line}".rstrip() for line in header.strip().splitlines())]
    lines += [f"name: {name}", f"axis: {'smoke' if smoke else 'family'}", "description: >-"]
    lines += [f"  {line}" for line in description.strip().splitlines()]
    lines.append(f"prompt: {{template: balrog, output_format: balrog-naive, history: 16, images: {images}}}")
    if smoke:
        lines.append("max_steps: 16")
    lines.append("tasks:")
    for i, (env_id, env, task) in enumerate(_tasks()):
        n = 1 if smoke else EPISODES[env]
        if env == "textworld":
            seeds = list(range(TEXTWORLD_FIRST_SEED, TEXTWORLD_FIRST_SEED + n))
        else:
            seeds = draw_seeds("eval", n, root=root0 + i)
        lines += [f"- name: {_task_name(env, task)}", f"  env: {env_id}"]
        if not vlm:
            lines.append("  obs_mode: text  # LLM mode: no image is shown, so none is drawn")
        elif env == "textworld":
            lines.append("  obs_mode: text  # BALROG shows no image for TextWorld, in either mode")
        kwargs = _kwargs(env, vlm)
        if kwargs:
            lines.append("  kwargs: {" + ", ".join(f"{k}: {v}" for k, v in kwargs.items()) + "}")
        lines.append("  wrappers: [balrog-actions]")
        if not smoke:
            lines.append(f"  max_steps: {env_card(env_id).max_episode_steps}")
        lines.append(f"  seeds: {_yaml_list(seeds)}")
    path = SUITES / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load_suite(path)  # the file must load (names, ids, seeds checked)
    return path


_COMMON = """
Written by scripts/make_balrog_suites.py from the balrog cards: BALROG's six envs (babyai, babaisai,
textworld, crafter, nle, minihack; 58 tasks), its episodes per task (babyai 10, babaisai 3,
textworld 10, crafter 10, nle 5, minihack 5) and each env's own step limit (NetHack 100,000 with
NLE's no-progress abort after 150 steps). BALROG's protocol: its instruction prompts, 16
observations of history, the naive agent (--output-format balrog-cot etc. for its others), exact
action matching, the env's default action with "Your previous output did not contain a valid
action" on an invalid output (wrapper balrog-actions). Its summary is BALROG's: progression
percentage per env with BALROG's standard error, averaged over the six envs.
Options that are ours, not BALROG's: the seeds are fixed draws from the evaluation range, recorded
and replayable (BALROG draws a fresh random seed per episode, so its runs cannot be re-checked;
TextWorld plays games 0..9 of each task where BALROG's counter plays game k mod 25), an episode
that errors counts as progression 0 (BALROG drops it), and 95% bootstrap intervals sit beside
BALROG's standard errors.
"""


def main() -> None:
    write(
        "balrog",
        "BALROG's benchmark (Paglieri et al. 2024) under its default protocol, LLM mode (text only):\n"
        "`rl4vlm-gym eval --suite balrog`; `balrog-vlm` is its VLM mode (images)." + _COMMON,
        "BALROG's six envs (BabyAI, BabaIsAI, TextWorld, Crafter, NetHack, MiniHack; 58 tasks) under\n"
        "BALROG's default protocol (LLM mode: text only); the summary gives BALROG's progression\n"
        "percentage with its standard error beside our bootstrap intervals.",
        vlm=False,
        smoke=False,
        root0=400,
    )
    write(
        "balrog-vlm",
        "BALROG's benchmark in its VLM mode (max_image_history 1): the current image is attached and\n"
        "NetHack and MiniHack give BALROG's VLM-mode text (no ASCII map, statistics added)." + _COMMON,
        "BALROG's six envs (58 tasks) under BALROG's protocol in its VLM mode (the current image\n"
        "attached); the summary gives BALROG's progression percentage with its standard error.",
        vlm=True,
        smoke=False,
        root0=400,
    )
    write(
        "balrog-smoke",
        "A fast check of the BALROG protocol end to end: one seed of every BALROG task, 16 steps, VLM\n"
        "mode. Not comparable with BALROG's numbers (use the balrog suite). Written by\n"
        "scripts/make_balrog_suites.py.",
        "BALROG's protocol on one seed of each BALROG task (VLM mode), with short step budgets: a\n"
        "quick end-to-end check, not a benchmark.",
        vlm=True,
        smoke=True,
        root0=500,
    )


if __name__ == "__main__":
    main()
