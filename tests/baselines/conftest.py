"""One torch thread for these tests (the tiny model gains nothing from more)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Torch's intra-op threads spin while they wait for each other: on a 2-core machine running two
    test workers they made the tiny model's updates several times slower (one update of each method
    on the games family: 35.8 s of CPU with torch's default threads, 15.5 s with one). torch is
    imported here, when a test runs, not when the module is collected (without torch: nothing to do)."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
