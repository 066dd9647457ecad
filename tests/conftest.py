"""Shared pytest set-up: ALFWorld's sample games and a WebShop-format sample catalog."""

from __future__ import annotations

import os
from pathlib import Path

# The six real ALFWorld games shipped beside the repository (CI has them); $ALFWORLD_DATA wins.
ALFWORLD_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld_sample"
if ALFWORLD_SAMPLE.is_dir():
    os.environ.setdefault("ALFWORLD_DATA", str(ALFWORLD_SAMPLE))

# WebShop's real files are not redistributable: each test process writes a small catalog in their
# schema (without our drawing hints), so rl4vlm/WebShop-Amazon-v0 runs the kit on the real loader.
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
