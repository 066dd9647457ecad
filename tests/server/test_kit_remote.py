"""The whole conformance kit through rl4vlm/Remote-v0, against servers in subprocesses on free ports (they
die with this process: rl4vlm_gym.processes): it catches every broken kit env the local kit catches
(tests/kit's BROKEN_LAWS) but those whose defect a served env cannot show (NOT_SEEN_REMOTELY, SERVED_RENDER: each
with its reason), reports what a remote env cannot show as not checked, and its process checks pass on a
sample of served envs. The kit's test envs are served by the family's shared server (conftest.py's
``registry_url``, with every registered id); a second server here hides its oracle.

Which served ids run which checks (the in-process checks on one id per env class, facts, docs and the
oracle on every id) is test_kit_remote_ids.py's; scripts/check_remote.py runs the whole kit on every id."""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
from typer.testing import CliRunner  # noqa: E402

from rl4vlm_gym.cli import app  # noqa: E402
from rl4vlm_gym.registry import unregister  # noqa: E402
from rl4vlm_gym.testing import CHECKS, REMOTE, run_checks  # noqa: E402

# tests/kit and tests/server are on sys.path (tests/server/conftest.py)
serving = importlib.import_module("serving")  # the server's blocks: started, its URL, stopped
kit_walk = importlib.import_module("kit_walk")
kit_tests = importlib.import_module("test_kit")  # its table of broken envs, the checks that catch them and their messages

REMOTE_ID = "rl4vlm/Remote-v0"
PROCESS_CHECKS = ("determinism", "vector")
# Caught remotely with another message than locally (the law, or how the defect shows over the wire).
REMOTE_MESSAGES = {
    # The search for a shorter solution is not run remotely (below); the oracle's own moves show the detour.
    ("DetourOracle", "oracle"): r"the oracle took \d+ steps, but optimal_steps=\d+",
    # The step cost's event cannot be traced remotely; the lenient table's range cannot hold it.
    ("StepCostOutsideTable", "rules"): r"reward -0.25 is outside the REWARDS table's range \[0.0, 1.0\]",
    # The env's IndexError comes back as the server's error.
    ("FirstWordOnly", "fuzz"): r"step\(empty\) raised RemoteError: list index out of range",
    ("UndocumentedWalk", "docs"): r"UndocumentedWalk \(served as kit/WalkUndocumentedWalk-v0\)'s docstring lacks the sections",
    # The server serves it, without a card or facts: the kit cannot read it as an RL4VLM Gym env.
    ("PlainGymWalk", "seeding"): r"the server sends no facts for 'kit/WalkPlainGymWalk-v0': it is not an RL4VLM Gym env",
}
# Not seen remotely: RemoteEnv draws render()'s frame and text from the observations the server sent, never
# by the served env's render(), so the check passes these and says the served render was not seen.
SERVED_RENDER = {
    "RenderStaleAfterStep", "AnsiLacksState", "AnsiLacksActions", "AnsiLacksMission", "HumanRenderReturnsFrame", "FloatFrame",
    "FlickeringView",
}  # fmt: skip
# Defects a served env cannot show through rl4vlm/Remote-v0 (laws of the env in its own process), each with the
# reason; the check passes them, and where it knows what it could not see, says so (SAID_NOT_CHECKED).
NOT_SEEN_REMOTELY = {
    ("FloatFrame", "api"): "check_env renders RemoteEnv, whose frame is the observation's uint8 image",
    ("RenderIgnoresImageSize", "arguments"): "RemoteEnv's render() is the observation's image, drawn at image_size",
    ("ScaleOutOfRange", "rules"): "StepOutcome.scale stays in the server; the reward it scales (0.0) is in range",
    ("IntReward", "rules"): "RemoteEnv gives float(reward), as Gymnasium's contract asks; the served type stays there",
    ("IntReward", "fuzz"): "RemoteEnv gives float(reward), as Gymnasium's contract asks; the served type stays there",
    # Pickling a RemoteEnv opens a new session and replays the seeded episode there: the served env is never
    # pickled (nor by the server, which keeps each session's env in its process), so its __getstate__ never runs.
    ("PickleLosesGoal", "pickle"): "a pickled RemoteEnv replays the episode in a new session: the served env is never pickled",
    ("PickleForgetsMoves", "pickle"): "a pickled RemoteEnv replays the episode in a new session: the served env is never pickled",
    # Copies of a served env are sessions replaying the episode; the search tries up to 200 moves an episode
    # searched (a session each): the remote kit says the search was not run.
    ("DetourOnLevelOne", "oracle"): "the search for a shorter solution (a session per move tried) is not run remotely",
    # The vector check's forked workers hold RemoteEnvs; the served envs stay in the server's process, never forked.
    **{
        (name, "vector"): "the served env runs in the server, never in a forked worker"
        for name in ("ForkedActions", "ForkedImage", "ForkedTruncates")
    },
}
# Seen remotely only where the server hands a bad make argument to the env: a server whose policy checks it against
# the served card first refuses make(appearance='nope') itself, naming the argument, and the env never sees it.
SERVER_MAY_REFUSE = {("ForgivingAppearance", "arguments"), ("VagueArguments", "arguments")}
SAID_NOT_CHECKED = {
    ("ScaleOutOfRange", "rules"): "the events behind rewards",
    ("IntReward", "rules"): "the events behind rewards",
    ("DetourOnLevelOne", "oracle"): "shorter solutions",
}


@pytest.fixture(scope="module", autouse=True)
def _kit_envs() -> Iterator[None]:
    """Registered here too, so the determinism check can compare a served rollout with the local env's."""
    ids = kit_walk.register_all()
    yield
    for env_id in ids:
        unregister(env_id)


@pytest.fixture(scope="module")
def kit_url(registry_url: str) -> str:
    """The kit's test envs (and every registered id) with the oracle exposed: the shared server."""
    return registry_url


@pytest.fixture(scope="module")
def hidden_url(_kit_envs: None) -> Iterator[str]:
    """The kit's test envs served without ``--expose-oracle``, from a thread of this process (its tests
    start no process)."""
    from rl4vlm_gym.server.environment import Catalog

    ids = [kit_walk.env_id(cls) for cls in (kit_walk.Walk, kit_walk.StaleFrameCache)]
    with serving.served_here(Catalog({i: (i, {}) for i in ids}, title="kit test envs, oracle hidden")) as url:
        yield url


def _remote(url: str, served: str, checks: list[str] | None = None, **kwargs) -> dict[str, object]:
    return {r.check: r for r in run_checks(REMOTE_ID, checks, url=url, env_id=served, **kwargs)}


@pytest.mark.parametrize(
    ("cls", "check", "pattern"),
    [
        pytest.param(c, k, p, id=f"{c.__name__}-{k}", marks=[pytest.mark.slow] if k in PROCESS_CHECKS else [])
        for c, k, _, p in kit_tests.BROKEN_LAWS
    ],
)
def test_the_remote_kit_names_each_defect_of_a_served_env(kit_url, cls, check, pattern) -> None:
    [result] = _remote(kit_url, kit_walk.env_id(cls), [check]).values()
    if cls.__name__ in SERVED_RENDER and check == "render":
        assert result.passed and f"{REMOTE}" in result.detail and "the served env's own render()" in result.detail, result.detail
        return
    if (cls.__name__, check) in SERVER_MAY_REFUSE and _server_refuses_a_bad_appearance(kit_url):
        assert result.passed, (
            f"{check} fails {cls.__name__} remotely, though its server refuses the argument itself: {result.detail}"
        )
        return
    if (cls.__name__, check) in NOT_SEEN_REMOTELY:
        assert result.passed, (
            f"{check} fails {cls.__name__} remotely, which NOT_SEEN_REMOTELY says it cannot see: {result.detail}"
        )
        said = SAID_NOT_CHECKED.get((cls.__name__, check))
        assert said is None or f"{REMOTE}" in result.detail and said in result.detail, result.detail
        return
    pattern = REMOTE_MESSAGES.get((cls.__name__, check), pattern)
    assert not result.passed and not result.not_checked, f"{check} passed {cls.__name__} remotely: {result.detail}"
    assert re.search(pattern, result.detail), f"{check} failed {cls.__name__} for another reason: {result.detail}"


def _server_refuses_a_bad_appearance(url: str) -> bool:
    """Whether the server refuses ``make(appearance='nope')`` itself (its policy, naming ``make_kwargs``), not the env."""
    with pytest.raises(ValueError, match="appearance") as refused:
        gym.make(REMOTE_ID, url=url, env_id="kit/Walk-v0", appearance="nope")
    return "make_kwargs" in str(refused.value)


def test_every_check_passes_the_served_reference_env_and_says_what_it_could_not_see(kit_url) -> None:
    checks = [c for c in CHECKS if c not in PROCESS_CHECKS]
    results = _remote(kit_url, "kit/Walk-v0", checks)
    assert all(r.passed for r in results.values()), {c: r.detail for c, r in results.items() if not r.passed}
    not_seen = {c for c, r in results.items() if REMOTE in r.detail}
    assert not_seen == {"rules", "oracle", "render"}, not_seen
    assert "the events behind rewards" in results["rules"].detail and "cached frames" not in results["rules"].detail
    assert "human window" in results["render"].detail and "shorter solutions" in results["oracle"].detail


@pytest.mark.slow  # processes: the determinism check's subprocess, vector workers
def test_the_process_checks_pass_remotely_and_compare_with_the_local_env(kit_url) -> None:
    results = _remote(kit_url, "kit/Walk-v0", list(PROCESS_CHECKS))
    assert all(r.passed for r in results.values()), {c: r.detail for c, r in results.items() if not r.passed}
    assert "the same as the local env's rollout" in results["determinism"].detail


def test_a_server_hiding_its_oracle_gets_not_checked_never_a_pass(hidden_url) -> None:
    results = _remote(hidden_url, "kit/Walk-v0", ["oracle", "rules", "observations"])
    oracle = results["oracle"]
    assert oracle.not_checked and not oracle.passed and "--expose-oracle" in oracle.detail
    # Frames cannot be compared with fresh renders without the server's: said, not passed silently (the
    # rules check then misses a stale frame cache; the observations check still sees its images lack the goal).
    stale = _remote(hidden_url, kit_walk.env_id(kit_walk.StaleFrameCache), ["rules", "observations"])
    for result in (results["rules"], results["observations"], stale["rules"]):
        assert result.passed and REMOTE in result.detail and "cached frames against fresh renders" in result.detail
    assert not stale["observations"].passed and "the image lacks information the text has" in stale["observations"].detail
    env = gym.make(REMOTE_ID, url=hidden_url, env_id="kit/Walk-v0")
    env.reset(seed=0)
    state = env.unwrapped.server_state().model_dump()
    env.close()
    assert state["card"]["class"]["name"] == "Walk" and state["served_id"] == "kit/Walk-v0"
    assert not {"oracle_action", "optimal_steps", "fresh_frame_sha256"} & set(state), sorted(state)


def test_refused_arguments_are_value_errors_naming_themselves(kit_url) -> None:
    for name, value in (("level", 7), ("obs_mode", "video"), ("image_size", [1, 1])):
        with pytest.raises(ValueError, match=name):
            gym.make(REMOTE_ID, url=kit_url, env_id="kit/Walk-v0", **{name: value})
    env = gym.make(REMOTE_ID, url=kit_url, env_id="kit/Walk-v0")
    with pytest.raises(ValueError, match="level"):
        env.reset(seed=0, options={"level": 9})
    env.close()


def test_cli_check_runs_the_kit_on_a_served_env(kit_url, hidden_url) -> None:
    runner = CliRunner()
    args = ["check", REMOTE_ID, "--env-id", "kit/Walk-v0", "--only", "docs", "--only", "oracle", "--throughput-steps", "0"]
    done = runner.invoke(app, [*args, "--url", kit_url], terminal_width=250)
    assert done.exit_code == 0, done.output
    assert "all checks passed" in done.output
    done = runner.invoke(app, [*args, "--url", hidden_url], terminal_width=250)
    assert done.exit_code == 1 and "not checked" in done.output and "1 could not be checked" in done.output, done.output
    done = runner.invoke(app, args, terminal_width=250)
    assert done.exit_code == 2 and "give --url" in done.output, done.output


# The process checks (a digest subprocess; vector workers, spawned ones importing openenv-core) on a sample
# of served envs: a cards env, a grid env and (with the navigation extra) a MiniWorld room, at small image
# sizes, from the shared server. Their in-process checks run in test_kit_remote_ids.py (one id per class).
SERVED = [
    pytest.param("rl4vlm/NumberLine-v0", {"image_size": [72, 64]}, id="NumberLine"),
    pytest.param("rl4vlm/Sokoban-v0", {}, id="Sokoban"),
    pytest.param("rl4vlm/MiniWorld-OneRoom-v1", {"image_size": [64, 64]}, id="MiniWorld-OneRoom"),
]


@pytest.mark.slow
@pytest.mark.parametrize("check", PROCESS_CHECKS)
@pytest.mark.parametrize(("served", "kwargs"), SERVED)
def test_the_process_checks_pass_on_served_envs(registry_url, served, kwargs, check) -> None:
    if "MiniWorld" in served and importlib.util.find_spec("miniworld") is None:
        pytest.skip("MiniWorld is not installed (extra nav)")
    [result] = _remote(registry_url, served, [check], **kwargs).values()
    assert result.passed, result.detail
    if check == "determinism":
        assert "the same as the local env's rollout" in result.detail
