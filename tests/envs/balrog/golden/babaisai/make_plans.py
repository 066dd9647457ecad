"""Write ``plans.json``: the seeds and scripted move sequences that ``record.py`` plays through BALROG.

Run in the project's environment (it uses our env and solver, not BALROG's code):

    .venv/bin/python tests/envs/balrog/golden/babaisai/make_plans.py

Per task (BALROG's 40), five seeds: 0, 1, 2 and two drawn below 2**32 as BALROG's seeds are, from a
fixed generator. Scripted sequences, so that the recording covers wins and BALROG's mid-episode
reset, which random moves seldom reach:

- ``solved``: for the first and fourth seed, the moves of our oracle from the reset (a win);
- ``broken``: for the tasks where "baba is you" can be broken (the make-you tasks), for every seed,
  a fewest-moves sequence that leaves no "you" object (found by breadth-first search over our
  engine), after which BALROG's wrapper draws a new level.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import gymnasium as gym
import numpy as np

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.envs.balrog.babaisai import engine as E
from rl4vlm_gym.envs.balrog.babaisai import levels

OUT = Path(__file__).with_name("plans.json")


def seeds(task_index: int) -> list[int]:
    drawn = np.random.default_rng([2407, task_index]).integers(0, 2**32, 2)
    return [0, 1, 2, *(int(s) for s in drawn)]


def break_you(world: E.World, depth: int = 14) -> list[str] | None:
    """Fewest moves after which BALROG's wrapper finds no "you" object."""
    start = world.copy()
    seen = {start.key()}
    queue = deque([(start, [])])
    while queue:
        state, moves = queue.popleft()
        if len(moves) >= depth:
            continue
        for move in ("up", "right", "down", "left"):
            nxt = state.copy()
            win, _ = nxt.step(move)
            if win:
                continue
            if nxt.you_position() is None:
                return [*moves, move]
            key = nxt.key()
            if key not in seen:
                seen.add(key)
                queue.append((nxt, [*moves, move]))
    return None


def main() -> None:
    plans = {}
    for i, task in enumerate(levels.TASKS):
        env = gym.make(f"balrog/BabaIsAI-{task.name}-v0", obs_mode="text")
        base = env.unwrapped
        entry: dict = {"seeds": seeds(i), "solved": {}, "broken": {}}
        for seed in (entry["seeds"][0], entry["seeds"][3]):
            env.reset(seed=seed)
            steps, moves, done = base.optimal_steps, [], False
            while not done:
                moves.append(base.oracle_action())
                _, _, terminated, truncated, info = env.step(moves[-1])
                done = terminated or truncated
            assert info["success"] and len(moves) == steps, (task.task, seed)
            entry["solved"][str(seed)] = moves
        if task.kind == "make_you":
            for seed in entry["seeds"]:
                env.reset(seed=seed)
                moves = break_you(base.game.world)
                if moves is not None:
                    entry["broken"][str(seed)] = moves
        plans[task.task] = entry
        env.close()
    OUT.write_text(json.dumps(plans, indent=1) + "\n")


if __name__ == "__main__":
    main()
