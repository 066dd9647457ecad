"""The conformance kit through rl4vlm/Remote-v0 on registered ids: the server sends each env's
``facts()`` as JSON data and RemoteEnv returns them, so the kit reads a served env through the same
public inspection API as a local one and passes it wherever it passes the local env.

The inner loop serves a sample (FrozenLake, whose ``CHANCE`` is a per-level property that once
arrived as the string ``'<property object ...>'``, and Blackjack, a game of chance); the slow sweep
serves every registered id. Each module's server runs in a subprocess on a free port of its own.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("openenv.core")
from typer.testing import CliRunner  # noqa: E402

import rl4vlm_gym  # noqa: E402
from rl4vlm_gym.cli import app  # noqa: E402
from rl4vlm_gym.core import MissingDataError  # noqa: E402
from rl4vlm_gym.testing import CHECKS, run_checks  # noqa: E402

HERE = Path(__file__).resolve().parent
REMOTE_ID = "rl4vlm/Remote-v0"
SAMPLE = ("rl4vlm/FrozenLake-v0", "rl4vlm/Blackjack-v0")
ALL_IDS = [card.id for card in rl4vlm_gym.list_envs()]
# The checks that run in this process (determinism and vector start processes: test_kit_remote.py runs them).
IN_PROCESS = [c for c in CHECKS if c not in ("determinism", "vector")]
SMALL = {"oracle": {"episodes": 3}, "rules": {"seeds": 1}, "seeding": {"n_seeds": 6}, "observations": {"seeds": 4}}
# The sweep: what RemoteEnv reads through the inspection API (facts, docs, the oracle's laws), one episode each.
SWEEP_CHECKS = ["docs", "oracle"]
SWEEP = {"oracle": {"episodes": 1}}


def _server(ids: list[str] | tuple[str, ...]) -> AbstractContextManager[str]:
    """ids_server.py serving ``ids`` on a free port (serving.py's block)."""
    sys.path.insert(0, str(HERE))
    return importlib.import_module("serving").served([sys.executable, str(HERE / "ids_server.py"), *ids])


@pytest.fixture(scope="module")
def sample_url() -> Iterator[str]:
    with _server(SAMPLE) as url:
        yield url


def _assert_facts_match(url: str, env_id: str, levels: range | list[int]) -> None:
    """At each level, the served env's facts (JSON data over the wire) equal the local env's."""
    local, remote = gym.make(env_id), gym.make(REMOTE_ID, url=url, env_id=env_id)
    try:
        for level in levels:
            local.reset(seed=0, options={"level": level})
            remote.reset(seed=0, options={"level": level})
            assert remote.unwrapped.facts() == local.unwrapped.facts(), f"{env_id} level {level}: served facts differ"
            assert remote.unwrapped.describe() == local.unwrapped.describe()
            assert remote.unwrapped.admissible_actions == local.unwrapped.admissible_actions
    finally:
        local.close()
        remote.close()


@pytest.mark.parametrize("env_id", SAMPLE)
def test_served_facts_are_the_local_env_s_at_every_level(sample_url: str, env_id: str) -> None:
    levels = range(len(rl4vlm_gym.registry.env_card(env_id).levels))
    _assert_facts_match(sample_url, env_id, levels)
    remote = gym.make(REMOTE_ID, url=sample_url, env_id=env_id)
    chance = set()
    for level in levels:
        remote.reset(seed=0, options={"level": level})
        chance.add(remote.unwrapped.facts()["CHANCE"])
    remote.close()
    assert chance <= {True, False}, f"CHANCE arrived as {chance}, not as bools"
    if env_id == "rl4vlm/FrozenLake-v0":
        assert chance == {True, False}, "FrozenLake's CHANCE is true on its slippery levels only"


@pytest.mark.parametrize("env_id", SAMPLE)
def test_the_remote_kit_passes_on_served_envs(sample_url: str, env_id: str) -> None:
    results = run_checks(REMOTE_ID, IN_PROCESS, options=SMALL, url=sample_url, env_id=env_id)
    assert all(r.passed for r in results), {r.check: r.detail for r in results if not r.passed}


def test_run_checks_asks_a_server_for_its_card_once(sample_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rl4vlm_gym.testing import remote

    asked = []

    def counted_make(env_id: str, /, **kwargs: object) -> gym.Env:
        asked.append(kwargs.get("env_id"))
        return make(env_id, **kwargs)

    make = remote._make
    monkeypatch.setattr(remote, "_make", counted_make)  # the real maker, counted
    results = run_checks(REMOTE_ID, ["docs", "oracle"], options={"oracle": {"episodes": 1}}, url=sample_url, env_id=SAMPLE[1])
    assert all(r.passed for r in results), [r.detail for r in results]
    assert asked == [SAMPLE[1]], f"{len(asked)} sessions opened for the card (both checks read it): {asked}"


@pytest.mark.slow  # the oracle's default 50 episodes on each of FrozenLake's 5 levels, over the wire (about 40 s)
def test_cli_check_oracle_passes_on_served_frozenlake(sample_url: str) -> None:
    args = [
        "check",
        REMOTE_ID,
        "--url",
        sample_url,
        "--env-id",
        "rl4vlm/FrozenLake-v0",
        "--only",
        "oracle",
        "--throughput-steps",
        "0",
    ]
    done = CliRunner().invoke(app, args, terminal_width=250)
    assert done.exit_code == 0 and "all checks passed" in done.output, done.output


@pytest.fixture(scope="module")
def every_url() -> Iterator[str]:
    with _server(ALL_IDS) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_every_registered_id_served_passes_where_the_local_env_passes(every_url: str, env_id: str) -> None:
    try:
        gym.make(env_id).close()
    except MissingDataError as err:  # envs on downloaded data (conftest points at the samples)
        pytest.skip(f"{env_id} has no data on this machine: {err}")
    _assert_facts_match(every_url, env_id, [rl4vlm_gym.registry.env_card(env_id).default_level])
    remote = {r.check: r for r in run_checks(REMOTE_ID, SWEEP_CHECKS, options=SWEEP, url=every_url, env_id=env_id)}
    failed = [c for c, r in remote.items() if not r.passed]
    if failed:  # held to the local env's verdict: a check the local env fails is test_conformance's to report
        local = {r.check: r for r in run_checks(env_id, failed, options=SWEEP)}
        assert all(not local[c].passed for c in failed), {c: remote[c].detail for c in failed if local[c].passed}
