"""Demonstrations for BALROG's few-shot agent (``balrog-few-shot``), played by the env's oracle.

BALROG's ``few_shot`` agent (BALROG af7d1f1, ``balrog/agents/few_shot.py``, ``balrog/dataset.py``)
shows ``eval.icl_episodes`` (1) recorded expert episodes of the task before the episode, each as
the long-term text of its observations and its actions (:class:`~rl4vlm_gym.prompts.BalrogDemo`;
the prompt around them is :class:`~rl4vlm_gym.prompts.PromptBuilder`'s). BALROG's recordings
(``records.zip``, a download named in its ``docs/few_shot_learning.md``) are not shipped here. Ours
are played when first needed by the env's own oracle:

- on seeds :data:`DEMO_SEEDS` (0, then 1): training seeds (``rl4vlm_gym.registry.TRAIN_SEEDS``),
  outside the evaluation and test ranges every suite draws from. The prompt shows the first whose
  first observation differs from the episode's (BALROG keeps a TextWorld demonstration of the very
  game being played out of the prompt; our TextWorld plays game ``seed mod 25``, so an evaluation
  seed can play seed 0's game). Every episode of a task sees the same demonstration, where BALROG
  draws one of its recordings at random;
- on a fresh env made from the episode env's spec (same id, arguments and step limit), with the
  env's default reply parser (the oracle writes plain actions) and no wrappers;
- observation texts as BALROG's: ``info["balrog"]["long_term_context"]`` where the env gives it,
  else ``obs["text"]``;
- at most :data:`MAX_DEMO_STEPS` actions: BALROG's ``max_icl_history`` of 1,000 events cuts a longer
  demonstration at the same place;
- kept per process by env id and arguments, so a worker plays each demonstration once.

Envs without an oracle (``HAS_ORACLE = False``: Crafter, MiniHack, NetHack) have no
demonstrations here: :func:`oracle_demos` raises :class:`DemoError` naming the env, and the
harness records its episodes as failed with that message.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from rl4vlm_gym.prompts import BalrogDemo

__all__ = ["DEMO_SEEDS", "MAX_DEMO_STEPS", "DemoError", "oracle_demos", "play_demo"]

DEMO_SEEDS: tuple[int, ...] = (0, 1)
MAX_DEMO_STEPS = 500

_CACHE: dict[tuple[str, str], tuple[BalrogDemo, ...]] = {}
_LOCK = threading.Lock()


class DemoError(ValueError):
    """No demonstration can be made for this env (it has no oracle)."""


def oracle_demos(env: gym.Env) -> tuple[BalrogDemo, ...]:
    """The candidate demonstrations for episodes of ``env`` (one per seed of :data:`DEMO_SEEDS`).

    Raises:
        DemoError: the env has no oracle.
    """
    spec = env.spec
    base = env.unwrapped
    env_id = spec.id if spec is not None else type(base).__name__
    if not getattr(base, "HAS_ORACLE", True) or not hasattr(base, "oracle_action") or spec is None:
        raise DemoError(
            f"{env_id} has no oracle, so the balrog-few-shot agent has no demonstrations for it "
            "(BALROG's are recorded expert episodes, not shipped here); use another BALROG agent for this env"
        )
    kwargs = {k: v for k, v in spec.kwargs.items() if k not in ("action_format", "action_match")}
    key = (env_id, json.dumps(kwargs, sort_keys=True, default=repr))
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = tuple(play_demo(env_id, seed, kwargs) for seed in DEMO_SEEDS)
        return _CACHE[key]


def play_demo(env_id: str, seed: int, kwargs: Mapping[str, Any] | None = None) -> BalrogDemo:
    """The oracle's episode of ``env_id`` (made with ``kwargs``) from ``reset(seed=seed)``, up to
    its end or :data:`MAX_DEMO_STEPS` actions."""
    env = gym.make(env_id, **dict(kwargs or {}))
    try:
        obs, info = env.reset(seed=seed)
        texts, actions = [_long_term(obs, info)], []
        for _ in range(MAX_DEMO_STEPS):
            action = env.unwrapped.oracle_action()  # type: ignore[attr-defined]
            obs, _, terminated, truncated, info = env.step(action)
            actions.append(action)
            texts.append(_long_term(obs, info))
            if terminated or truncated:
                break
    finally:
        env.close()
    return BalrogDemo(tuple(texts), tuple(actions), source=f"{env_id} oracle, seed {seed}")


def _long_term(obs: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    context = info.get("balrog")
    return context.get("long_term_context", "") if isinstance(context, Mapping) else obs["text"]
