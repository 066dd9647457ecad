"""TextWorld's PDDL env with the translation cached and its text generation lightened
(envs/household/pddl_cache.py) plays exactly as TextWorld's own.

A cached load or reset must give the same intro, admissible commands, facts, feedback, win and planner
plan as a fresh ``textworld.envs.PddlEnv`` in a process where TextWorld is untouched, and must not
translate again.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("alfworld", reason="the household extra (alfworld, textworld) is not installed")

from rl4vlm_gym.core import MissingDataError  # noqa: E402
from rl4vlm_gym.envs.household.alfworld import GAME_FILE, find_games, task_type  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "alfworld_sample"  # as in test_alfworld.py
DATA = Path(os.environ["ALFWORLD_DATA"]) if os.environ.get("ALFWORLD_DATA") else SAMPLE
# Skipped only when DATA holds no game file (as test_alfworld.py); game files that discovery misses fail.
if not DATA.is_dir() or next(DATA.rglob(GAME_FILE), None) is None:
    pytest.skip(f"no ALFWorld game files ({GAME_FILE}) in {DATA}", allow_module_level=True)
GAME = next((g for g in find_games(DATA) if task_type(g) == "pick_and_place_simple"), None)  # a bedroom: cheap
if GAME is None:
    raise MissingDataError(f"no ALFWorld pick_and_place_simple game among the games found in {DATA}")

pytestmark = pytest.mark.slow  # TextWorld's fresh loads: ~2 s each


def _wrap(env_class: type) -> object:
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

    return AlfredDemangler(shuffle=False)(env_class(textworld.EnvInfos(won=True, admissible_commands=True, facts=True)))


def _rollout(env: object, game: str, steps: int = 12, on_steps: object = None) -> list:
    """Load, reset twice, and play seeded random admissible commands (then one the game rejects),
    then replan from there; ``on_steps()`` is called before the replan."""
    env.load(game)
    seen = []
    for _ in range(2):
        state = env.reset()
        seen.append((state.feedback, state["admissible_commands"], sorted(map(str, state["facts"])), state["won"]))
    rng = random.Random(0)
    for command in [*(None for _ in range(steps)), "fly to the moon"]:
        command = command or rng.choice(state["admissible_commands"])
        state, score, done = env.step(command)
        seen.append((command, state.feedback, state["admissible_commands"], sorted(map(str, state["facts"])), score, done))
    if on_steps is not None:
        on_steps()
    game_env = env.unwrapped
    seen.append(game_env._pddl_state.replan(game_env._entity_infos))
    env.close()
    return seen


_TEXTWORLDS_OWN = """
import json, sys
sys.path.insert(0, sys.argv[1])
import test_pddl_cache as here
from textworld.envs import PddlEnv
from textworld.envs.pddl import textgen
seen = here._rollout(here._wrap(PddlEnv), sys.argv[2])
assert textgen.copy_context.__module__ == textgen.__name__, "TextWorld was changed in this process"
print(json.dumps(seen))
"""


def test_cached_env_plays_as_textworlds_own_and_translates_each_game_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import fast_downward

    from rl4vlm_gym.envs.household import pddl_cache

    game = GAME
    # TextWorld's own, in a process where nothing of ours has changed its text generator
    own = subprocess.run([sys.executable, "-c", _TEXTWORLDS_OWN, str(Path(__file__).parent), str(game)], capture_output=True, text=True, timeout=300)
    assert own.returncode == 0, own.stderr[-3000:]
    expected = json.loads(own.stdout.strip().splitlines()[-1])
    _rollout_json = lambda env: json.loads(json.dumps(_rollout(env, game)))  # noqa: E731 - tuples as lists
    pddl_cache._translations.clear()
    pddl_cache._logics.clear()
    calls = []
    real = fast_downward.pddl2sas
    monkeypatch.setattr(fast_downward, "pddl2sas", lambda *a, **k: calls.append(k["optimize"]) or real(*a, **k))
    argv = list(sys.argv)
    played = []  # what was translated before the replan: the optimized task waits for it
    first = _rollout(_wrap(pddl_cache.CachedPddlEnv), game, on_steps=lambda: played.extend(calls))
    assert json.loads(json.dumps(first)) == expected  # first load: translates; the replan task loaded after steps
    assert played == [False] and calls == [False, True]  # plain, then optimized for the replan, once each
    assert _rollout_json(_wrap(pddl_cache.CachedPddlEnv)) == expected  # a new env on the same game: all cached
    assert calls == [False, True]
    assert sys.argv == argv  # pddl2sas overwrites it; the cache puts it back
    from textworld.envs.pddl import textgen

    assert textgen.copy_context is pddl_cache._copy_context  # the lightened generator played


def test_cache_is_bounded_and_keyed_by_content(monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.envs.household import pddl_cache

    monkeypatch.setattr(pddl_cache, "_translations", pddl_cache._LRU(2))
    made = []
    for key in ["a", "b", "a", "c", "b"]:
        pddl_cache._translations.get(key, lambda key=key: made.append(key) or key)
    assert made == ["a", "b", "c", "b"]  # "a" was used last before "c" came: "b" went
    assert len(pddl_cache._translations.items) == 2
    assert pddl_cache._digest("ab", "c") != pddl_cache._digest("a", "bc")
