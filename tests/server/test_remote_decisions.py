"""Decision facts over the wire: rl4vlm/Remote-v0's ``decision()`` is the served env's (an ``--expose-oracle``
server's), a server hiding its oracle hides them too, and the client refuses malformed facts from a server."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split

from rl4vlm_gym.core import Decision  # noqa: E402
from rl4vlm_gym.registry import unregister  # noqa: E402
from rl4vlm_gym.server.remote import RemoteError, _decision_of  # noqa: E402
from rl4vlm_gym.testing import run_checks  # noqa: E402

serving = importlib.import_module("serving")  # tests/server and tests/kit are on sys.path (conftest.py)
kit_walk = importlib.import_module("kit_walk")
REMOTE_ID = "rl4vlm/Remote-v0"
WALK = "kit/Walk-v0"
PRECISE = "kit/WalkValuesDisagree-v0"  # Walk with action values (and a non-finite one, below)


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    """Walk served in this process's threads by two servers: one exposing its oracle, one hiding it."""
    from rl4vlm_gym.server.environment import Catalog

    ids = kit_walk.register_all()
    entries = {i: (i, {}) for i in (WALK, PRECISE)}
    with serving.served_here(Catalog(entries, expose_oracle=True)) as exposed, serving.served_here(Catalog(entries)) as hidden:
        yield exposed, hidden
    for env_id in ids:
        unregister(env_id)


def test_a_remote_env_gives_the_served_envs_decision_facts_step_by_step(urls: tuple[str, str]) -> None:
    remote, local = gym.make(REMOTE_ID, url=urls[0], env_id=WALK), gym.make(WALK)
    with pytest.raises(gym.error.ResetNeeded):
        remote.unwrapped.decision()
    for level in (0, 1):
        remote.reset(seed=3, options={"level": level})
        local.reset(seed=3, options={"level": level})
        done = False
        while not done:
            assert remote.unwrapped.decision() == local.unwrapped.decision()
            action = local.unwrapped.oracle_action()
            _, _, terminated, truncated, _ = remote.step(action)
            local.step(action)
            done = terminated or truncated
        assert remote.unwrapped.decision() == local.unwrapped.decision() == {
            "optimal_actions": None, "steps_to_go": 0, "values": None, "reason": "the episode is over", "features": None,
        }  # fmt: skip
    remote.close()
    local.close()


def test_non_finite_values_come_back_as_floats(urls: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The server sends a non-finite float as a string (JSON has none); the client turns it back. The server runs
    # in this process's threads, so the patched class is the one it serves.
    monkeypatch.setattr(kit_walk.ValuesDisagree, "_decision", lambda self: Decision(("up",), None, {"up": math.inf}, "chance"))
    env = gym.make(REMOTE_ID, url=urls[0], env_id=PRECISE)
    env.reset(seed=0)
    facts = env.unwrapped.decision()
    env.close()
    assert facts["values"] == {"up": math.inf} and facts["steps_to_go"] == -1, facts


def test_a_server_hiding_its_oracle_hides_the_decision_facts(urls: tuple[str, str]) -> None:
    env = gym.make(REMOTE_ID, url=urls[1], env_id=WALK)
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="does not expose decision facts"):
        env.unwrapped.decision()
    assert not {"decision", "decision_error"} & set(env.unwrapped.server_state().model_dump())
    env.close()
    [result] = run_checks(REMOTE_ID, ["decisions"], url=urls[1], env_id=WALK)
    assert result.not_checked and not result.passed and "--expose-oracle" in result.detail


GOOD = {"optimal_actions": ["up"], "steps_to_go": 2, "values": {"up": 1.0, "down": "-inf"}, "reason": None, "features": {"k": 1}}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"extra": 1}, "not a mapping of"),
        ({"optimal_actions": "up"}, "optimal_actions is not null or a list"),
        ({"optimal_actions": ["x" * 1025]}, "optimal_actions is not null or a list"),
        ({"optimal_actions": ["up"] * 4097}, "optimal_actions is not null or a list"),
        ({"steps_to_go": -2}, "steps_to_go is not an int of at least -1"),
        ({"steps_to_go": True}, "steps_to_go is not an int"),
        ({"steps_to_go": 1.0}, "steps_to_go is not an int"),
        ({"values": {"up": "high"}}, "values is not null or a mapping"),
        ({"values": [1.0]}, "values is not null or a mapping"),
        ({"reason": 3}, "reason is not null or a string"),
        ({"features": [1]}, "features is not null or a mapping"),
        ({"reason": "x" * (1 << 20)}, "characters of JSON, over 1048576"),
    ],
)
def test_the_client_refuses_malformed_decision_facts(change: dict, why: str) -> None:
    assert _decision_of(GOOD)["values"] == {"up": 1.0, "down": float("-inf")}
    with pytest.raises(RemoteError, match=why) as refused:
        _decision_of({**GOOD, **change})
    assert refused.value.code == "BAD_DECISION" and len(str(refused.value)) < 200  # never echoes what it refused
