"""VLMEnv's public inspection API (``facts()``, ``describe()``, ``fresh_render()``, ``started``,
``computed_optimal_steps``), which the conformance kit, the server and rl4vlm/Remote-v0 read
instead of the base class's private hooks."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym
from rl4vlm_gym.core import FACT_ATTRIBUTES, NOT_COMPUTED

sys.path.insert(0, str(Path(__file__).resolve().parent))
kit_walk = importlib.import_module("kit_walk")

PACKAGE = Path(rl4vlm_gym.__file__).resolve().parent
# The base class's private hooks and state: the kit and the server read the public API instead.
PRIVATE = re.compile(r"(?<!self)\.(_elapsed|_admissible|_describe|_render|_state_key|_optimal|_started|_frames|_view)\b")


def test_facts_are_json_data_and_follow_the_level() -> None:
    env = gym.make("rl4vlm/FrozenLake-v0")
    base = env.unwrapped
    chance = {}
    for level in range(len(base.LEVELS)):
        env.reset(seed=0, options={"level": level})
        facts = base.facts()
        assert json.loads(json.dumps(facts, allow_nan=False)) == facts, "facts() is not JSON data"
        assert set(FACT_ATTRIBUTES) <= set(facts) and facts["level"] == level and facts["name"] == "FrozenLake"
        chance[level] = facts["CHANCE"]
    env.close()
    # FrozenLake's CHANCE is a property: slippery levels only (the bug was its repr sent as a string).
    assert chance == {level: base.LEVELS[level].slippery for level in chance} and set(chance.values()) == {False, True}
    blackjack = gym.make("rl4vlm/Blackjack-v0").unwrapped
    facts = blackjack.facts()
    assert facts["CHANCE"] is True and facts["DEFAULT_IMAGE_SIZE"] == list(blackjack.DEFAULT_IMAGE_SIZE)
    assert facts["REWARDS"] == {k: dict(v) for k, v in blackjack.REWARDS.items()}


class _ObjectFact(kit_walk.Walk):
    INVALID_FEEDBACK: ClassVar = object()  # type: ignore[assignment]


class _NumpyFacts(kit_walk.Walk):
    MIN_IMAGE_SIDE: ClassVar = np.int64(16)  # type: ignore[assignment]
    CHANCE: ClassVar = np.bool_(True)  # type: ignore[assignment]


def test_facts_refuse_what_is_not_data_and_unwrap_numpy() -> None:
    with pytest.raises(TypeError, match=r"_ObjectFact.facts\(\)\['INVALID_FEEDBACK'\] is a object, not JSON data"):
        _ObjectFact().facts()
    facts = _NumpyFacts().facts()
    assert type(facts["MIN_IMAGE_SIDE"]) is int and facts["CHANCE"] is True


def test_describe_render_and_plan_are_read_without_private_hooks() -> None:
    env = kit_walk.Walk(obs_mode="image+text")
    assert not env.started and env.computed_optimal_steps is None
    for read in (env.describe, env.fresh_render):
        with pytest.raises(gym.error.ResetNeeded):
            read()
    obs, info = env.reset(seed=0)
    assert env.started and env.describe() == obs["text"]  # no feedback at reset: the text is the state
    assert np.array_equal(env.fresh_render(), obs["image"])
    assert env.computed_optimal_steps == info["optimal_steps"] == env.optimal_steps
    planned = kit_walk.PlannedWalk()  # EXPENSIVE_PLAN: nothing planned until someone asks
    _, info = planned.reset(seed=0)
    assert planned.computed_optimal_steps is None and info["optimal_steps"] == NOT_COMPUTED
    assert planned.computed_optimal_steps is None  # reading it did not plan
    steps = planned.optimal_steps
    assert steps >= 0 and planned.computed_optimal_steps == steps


# The kit (a module or a package), the server's session and RemoteEnv.
READERS = sorted(
    str(p.relative_to(PACKAGE))
    for p in [
        *PACKAGE.glob("testing.py"),
        *PACKAGE.glob("testing/*.py"),
        PACKAGE / "server/environment.py",
        PACKAGE / "server/remote.py",
    ]
)


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.replace("/", "-"))
def test_the_kit_and_the_server_use_no_private_hook_of_the_env(path: str) -> None:
    source = (PACKAGE / path).read_text(encoding="utf-8")
    lines = [f"{i}: {line.strip()}" for i, line in enumerate(source.splitlines(), 1) if PRIVATE.search(line.split("#")[0])]
    # Docstrings and messages may name the hooks a contributor implements (``_render()``), not call them.
    calls = [line for line in lines if not re.search(r"``_\w+\(?\)?``|fresh _render\(\)|_frame_key", line)]
    assert not calls, f"{path} reads VLMEnv's private hooks: {calls}"
    assert not re.search(r"\bbase\.[A-Z][A-Z_]+\b", source), f"{path} reads class attributes of the env; use facts()"
