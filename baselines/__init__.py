"""Reference baselines on one shared trainer, installed as ``rl4vlm_gym.baselines``.

- ``vl-dac`` (:mod:`.vl_dac`): token-level PPO, step-level GAE critic on a stop-gradient, value
  warm-up, per-token KL to the base model;
- ``rl4vlm`` (:mod:`.rl4vlm`): one step-level ratio over lambda-weighted thought and action
  log-probs, GAE critic trained through the backbone;
- ``loop`` (:mod:`.loop`): leave-one-out advantages over K rollouts of a task, per-token PPO
  with LOOP's asymmetric clip;
- ``gigpo`` (:mod:`.gigpo`): episode-group plus anchor-state step-group advantages;
- ``grow`` (:mod:`.grow`): GRPO advantages between the state-action samples of a task's episodes,
  GiGPO's loss.

Shared parts are in :mod:`.common` (policy, rollout collector, storage, GAE, loss pieces),
the loop in :mod:`.trainer`, configs in :mod:`.config` and ``configs/``. ``rl4vlm-gym train``
runs it all. Modules load lazily: importing this package imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ALGORITHMS", "algorithm_class"]

ALGORITHMS: dict[str, str] = {
    "vl-dac": "rl4vlm_gym.baselines.vl_dac:VLDAC",
    "rl4vlm": "rl4vlm_gym.baselines.rl4vlm:RL4VLM",
    "loop": "rl4vlm_gym.baselines.loop:LOOP",
    "gigpo": "rl4vlm_gym.baselines.gigpo:GiGPO",
    "grow": "rl4vlm_gym.baselines.grow:GROW",
}


def algorithm_class(name: str) -> Any:
    """The :class:`~rl4vlm_gym.baselines.common.algorithm.Algorithm` subclass named ``name``."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of {sorted(ALGORITHMS)}")
    module, _, attr = ALGORITHMS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
