"""The Ray runner's fault bookkeeping (:func:`rl4vlm_gym.harness.ray_runner.play_on_ray`) without a
cluster: a stub standing in for the ``ray`` module, whose actors are the runner's real workers in
this process, kills an actor at a chosen play of a chosen episode, deterministically.

The real-cluster tests (test_ray_eval.py) are ``slow``, and there whether a removed node interrupts
an episode depends on timing. Here, in the inner loop: the episode whose actor dies is played again
from its seed, not dropped nor saved twice; the dead actor gets no more work; an episode that kills
every actor it is given is recorded as failed after ``max_attempts``; an actor that dies while
starting is replaced. The records equal an undisturbed local run's."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rl4vlm_gym.harness.ray_runner import _EvalActor
from rl4vlm_gym.harness.runner import AgentSpec, load_episodes, run_suite
from rl4vlm_gym.harness.suite import Suite

SMALL = {
    "name": "small",
    "axis": "smoke",
    "max_steps": 6,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": 0, "obs_mode": "text", "seeds": [11, 12, 13, 14]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "obs_mode": "text", "seeds": [21, 22, 23]},
    ],
}
AGENT = AgentSpec("random", {"seed": 1})


class RayActorError(Exception):
    """Stands in for ``ray.exceptions.RayActorError``."""


class ActorDiedError(RayActorError):
    """Stands in for ``ray.exceptions.ActorDiedError``."""


class _Ref:
    """An object ref: the call runs when the runner gets it (after ``wait`` hands it out)."""

    def __init__(self, handle: _Handle, method: str, args: tuple) -> None:
        self.handle, self.method, self.args = handle, method, args
        handle.stub.calls += 1
        self.order = handle.stub.calls


class _Handle:
    """An actor handle whose actor is a real ``_EvalActor`` in this process."""

    def __init__(self, stub: FakeRay, name: str, args: tuple) -> None:
        self.stub, self.name, self.args = stub, name, args
        self.actor: _EvalActor | None = None
        self.alive = True
        self.ready = SimpleNamespace(remote=lambda: _Ref(self, "ready", ()))
        self.play = SimpleNamespace(remote=lambda *a: _Ref(self, "play", a))
        self.close = SimpleNamespace(remote=lambda: _Ref(self, "close", ()))

    def call(self, method: str, args: tuple) -> Any:
        if not self.alive:
            raise ActorDiedError(f"{self.name} is dead")
        if method == "ready" and self.name in self.stub.die_starting:
            self.alive = False
            raise ActorDiedError(f"{self.name} died while starting")
        if self.actor is None:
            self.actor = _EvalActor(*self.args)
        if method == "play":
            self.stub.played.append((self.name, *args))
            self.stub.plays[args] = plays = self.stub.plays.get(args, 0) + 1
            if self.stub.dies.get(args, 0) >= plays:  # the actor dies mid-episode: no record comes back
                self.alive = False
                self.actor.close()
                raise ActorDiedError(f"{self.name} died playing {args}")
        return getattr(self.actor, method)(*args)


class FakeRay:
    """The parts of the ``ray`` module the runner uses. ``dies`` maps an episode ``(task, seed)`` to
    how many of its plays kill their actor (the first ones); ``die_starting`` names actors
    (``rl4vlm-eval-<run>-<n>`` without the run) that die in their constructor."""

    exceptions = SimpleNamespace(RayActorError=RayActorError, ActorDiedError=ActorDiedError)

    def __init__(self, dies: dict[tuple[str, int], int] | None = None, die_starting: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.dies = dies or {}
        self.die_starting = die_starting
        self.plays: dict[tuple, int] = {}
        self.played: list[tuple] = []  # (actor, task, seed) in play order
        self.started: list[str] = []
        self.killed: list[str] = []
        self.calls = 0

    def is_initialized(self) -> bool:
        return True  # "connected": the runner starts no local Ray

    def get_runtime_context(self) -> Any:
        return SimpleNamespace(get_actor_id=lambda: None)  # the driver: no render threads set

    def remote(self, cls: type) -> Any:
        assert cls is _EvalActor
        stub = self

        class Remote:
            @staticmethod
            def options(**options: Any) -> Any:
                assert options["max_restarts"] == 0 and options["max_task_retries"] == 0, "Ray must not replay it behind our back"
                name = "-".join(options["name"].split("-")[:2] + options["name"].split("-")[3:])  # without the run id

                def remote(*args: Any) -> _Handle:
                    stub.started.append(name)
                    return _Handle(stub, name, args)

                return SimpleNamespace(remote=remote)

        return Remote

    def wait(self, refs: list[_Ref], num_returns: int = 1, timeout: float | None = None) -> tuple[list[_Ref], list[_Ref]]:
        first = sorted(refs, key=lambda ref: ref.order)[:num_returns]  # the oldest calls end first
        return first, [ref for ref in refs if ref not in first]

    def get(self, ref: _Ref) -> Any:
        return ref.handle.call(ref.method, ref.args)

    def kill(self, handle: _Handle) -> None:
        if handle.alive and handle.actor is not None:
            handle.actor.close()
        handle.alive = False
        self.killed.append(handle.name)


Untimed = Callable[[list[dict[str, Any]]], list[str]]  # the `untimed` fixture (conftest.py)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory, untimed: Untimed) -> list[str]:
    out = tmp_path_factory.mktemp("local")
    run_suite(Suite.from_dict(SMALL), AGENT, out, workers=1)
    return untimed(load_episodes(out / "episodes.jsonl"))


def _run(stub: FakeRay, out: Path, monkeypatch: pytest.MonkeyPatch, workers: int = 2) -> list[dict[str, Any]]:
    monkeypatch.setitem(sys.modules, "ray", stub)
    run_suite(Suite.from_dict(SMALL), AGENT, out, workers=workers, backend="ray")
    return load_episodes(out / "episodes.jsonl")


def test_an_actor_dying_mid_episode_has_its_episode_replayed(
    local_run: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, untimed: Untimed
) -> None:
    stub = FakeRay(dies={("nl", 12): 1})
    with caplog.at_level(logging.WARNING, logger="rl4vlm_gym.harness.ray_runner"):
        records = _run(stub, tmp_path / "r", monkeypatch)
    # Two actors: eval-1 plays nl 11 then nl 13, eval-2 dies playing nl 12, which goes back first in
    # line and is played by eval-1 once it is free; eval-3 is started in eval-2's place.
    twelve = [actor for actor, task, seed in stub.played if (task, seed) == ("nl", 12)]
    assert twelve == ["rl4vlm-eval-2", "rl4vlm-eval-1"]
    assert stub.plays[("nl", 12)] == 2
    assert "episode nl seed 12: its Ray actor died (ActorDiedError); replaying it from its seed" in caplog.text
    assert [actor for actor, *_ in stub.played].count("rl4vlm-eval-2") == 1, "a dead actor was given work"
    assert stub.started == ["rl4vlm-eval-1", "rl4vlm-eval-2", "rl4vlm-eval-3"]
    assert len(records) == 7, "an episode is missing or was saved twice"
    assert untimed(records) == local_run
    assert sorted(stub.killed) == sorted(stub.started), "every actor ended"


def test_an_episode_that_kills_every_actor_is_recorded_as_failed(
    local_run: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, untimed: Untimed
) -> None:
    stub = FakeRay(dies={("nl", 12): 3})
    records = _run(stub, tmp_path / "r", monkeypatch)
    assert stub.plays[("nl", 12)] == 3  # max_attempts: played three times, no fourth
    failed = [r for r in records if r["error"]]
    assert [(r["task"], r["seed"], r["error"]) for r in failed] == [
        ("nl", 12, "the Ray actor died during this episode (3 times)")
    ]
    assert untimed([r for r in records if not r["error"]]) == [line for line in local_run if '"seed":12,' not in line]
    # twice the death was one short of the limit: replayed on a live actor (a second death of the
    # same episode is not counted as its first)
    assert len(records) == 7


def test_an_actor_dying_while_starting_is_replaced(
    local_run: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, untimed: Untimed
) -> None:
    stub = FakeRay(die_starting={"rl4vlm-eval-1"})
    with caplog.at_level(logging.WARNING, logger="rl4vlm_gym.harness.ray_runner"):
        records = _run(stub, tmp_path / "r", monkeypatch)
    assert "a Ray actor died while starting (ActorDiedError); starting another" in caplog.text
    assert stub.started == ["rl4vlm-eval-1", "rl4vlm-eval-2", "rl4vlm-eval-3"]
    assert {actor for actor, *_ in stub.played} == {"rl4vlm-eval-2", "rl4vlm-eval-3"}
    assert untimed(records) == local_run
