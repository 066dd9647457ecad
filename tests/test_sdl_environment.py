"""``rendering.sdl_environment``: SDL's hints are set in the environment only for the block, never over
the user's own, and blocks in different threads do not undo each other's."""

from __future__ import annotations

import os
import threading
import time

import pytest

from rl4vlm_gym.rendering import sdl_environment

HINT = "RL4VLM_TEST_SDL_HINT"  # a name no one sets: the test's own


def test_the_hints_are_set_for_the_block_only_and_never_over_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HINT, raising=False)
    monkeypatch.delenv("SDL_NO_SIGNAL_HANDLERS", raising=False)
    with sdl_environment({HINT: "dummy"}):
        assert os.environ[HINT] == "dummy" and os.environ["SDL_NO_SIGNAL_HANDLERS"] == "1"
    assert HINT not in os.environ and "SDL_NO_SIGNAL_HANDLERS" not in os.environ
    monkeypatch.setenv(HINT, "x11")  # the user's choice stays, during and after
    with sdl_environment({HINT: "dummy"}):
        assert os.environ[HINT] == "x11"
        with sdl_environment({HINT: "dummy"}):  # a block inside a block (the same thread)
            assert os.environ[HINT] == "x11"
    assert os.environ[HINT] == "x11"


def test_a_thread_leaving_its_block_does_not_remove_what_another_threads_block_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # Thread A sets the hint; thread B asks for it while A is inside. Unserialised, B found it set (so
    # did not set it) and A's exit removed it under B: B's SDL would start without it.
    monkeypatch.delenv(HINT, raising=False)
    a_inside, b_asking, a_left = threading.Event(), threading.Event(), threading.Event()
    seen: list[str | None] = []

    def a() -> None:
        with sdl_environment({HINT: "dummy"}):
            a_inside.set()
            b_asking.wait(5)
            time.sleep(0.05)  # B is at its block's door (or, unserialised, inside it)
        a_left.set()

    def b() -> None:
        a_inside.wait(5)
        b_asking.set()
        with sdl_environment({HINT: "dummy"}):
            a_left.wait(5)
            seen.append(os.environ.get(HINT))

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == ["dummy"]
    assert HINT not in os.environ
