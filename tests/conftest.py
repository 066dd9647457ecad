"""Shared pytest set-up: ALFWorld's sample games, a WebShop-format sample catalog, and skips for absent extras."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Six real ALFWorld games ship with the tests (tests/data/README.md); $ALFWORLD_DATA wins.
ALFWORLD_SAMPLE = Path(__file__).resolve().parent / "data" / "alfworld_sample"
if "ALFWORLD_DATA" not in os.environ:
    os.environ["ALFWORLD_DATA"] = str(ALFWORLD_SAMPLE)

# WebShop's real files are not redistributable: each test process writes a small catalog in their
# schema (without our drawing hints), so rl4vlm/WebShop-Amazon-v1 runs the kit on the real loader.
if "WEBSHOP_DATA" not in os.environ:
    import atexit
    import shutil
    import tempfile

    import numpy as np

    from rl4vlm_gym.envs.webshop.generator import write_files
    from rl4vlm_gym.envs.webshop.levels import LEVELS

    WEBSHOP_SAMPLE = tempfile.mkdtemp(prefix="rl4vlm-webshop-sample-")
    atexit.register(shutil.rmtree, WEBSHOP_SAMPLE, ignore_errors=True)
    write_files(WEBSHOP_SAMPLE, LEVELS[1], np.random.default_rng(0), hints=False)
    os.environ["WEBSHOP_DATA"] = WEBSHOP_SAMPLE

# -- Optional extras: tests that need one skip with a reason when it is absent ---------------------

EXTRAS = {
    "nav": ("miniworld", "pyglet"),
    "household": ("alfworld", "textworld"),
    "webshop": ("flask", "selenium", "psutil"),
    "eval": ("matplotlib",),  # the reports' plots (the OpenAI agent's tests live with the hf ones)
    "hf": ("torch", "transformers"),
    "train": ("torch", "transformers", "peft"),
    "balrog": ("minigrid", "crafter"),
    "nethack": ("nle", "minihack"),  # minihack: setup.sh installs it apart (setup.cfg's nethack extra)
    "games": ("pettingzoo", "pyspiel"),
    "marl": ("pettingzoo", "pyspiel", "tianshou", "torch"),
    "ray": ("ray",),
    "trl": ("trl", "torch", "transformers"),
}
"""Each extra of setup.cfg a test may need, and the packages whose absence means it is not installed."""


def missing_extras(*extras: str) -> str | None:
    """Why a test needing ``extras`` cannot run here, or None when all are installed."""
    for extra in extras:
        absent = [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]
        if absent:
            return f"needs the {extra} extra ({', '.join(absent)} not installed): pip install 'rl4vlm-gym[{extra}]'"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "extra(*names): the test needs these extras of setup.cfg; skipped when one is absent")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The helpers beside the tests (servers, recorders of the originals' outputs, test envs) are not
    collected: setup.cfg's --doctest-modules is for the package's docstrings, and importing a recorder
    imports the original it records, which a core install lacks."""
    if collection_path.suffix == ".py" and not collection_path.name.startswith(("test_", "conftest")):
        return True
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("extra"):
        reason = missing_extras(*mark.args)
        if reason:
            pytest.skip(reason)
    # One torch thread per test process once torch is imported: the suite runs a worker per core, and
    # torch's intra-op threads spin waiting for each other on a loaded machine (the baselines' updates
    # took 2.3x the CPU with the default). Never imported here: a test that needs torch imports it.
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module's tests, set before its first torch op and restored after (the
    hook above sets it only from the next test on once torch is imported). Torch's intra-op threads
    spin while they wait for each other: on a 2-core machine running two test workers they made the
    tiny model several times slower (the smoke-suite eval: 75 s of CPU with torch's default threads,
    12.5 s with one; one update of each method on the games family: 35.8 s, 15.5 s). torch is imported
    when a test runs, not when modules are collected (without torch: nothing to do)."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def require_envs():  # noqa: ANN201 - returns the checking function
    """``require_envs(*env_ids)`` skips the test when an env's extra (its card's ``extra``) is absent."""
    from rl4vlm_gym.registry import env_card

    def require(*env_ids: str) -> None:
        reason = missing_extras(*sorted({extra for env_id in env_ids if (extra := env_card(env_id).extra)}))
        if reason:
            pytest.skip(reason)

    return require
