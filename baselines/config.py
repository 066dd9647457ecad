"""Training configurations: YAML files checked against a schema.

A config names the method, the env (or a mixture, with an optional curriculum), the model,
the prompt, sampling, rollout sizes, the optimiser and the method's own hyperparameters. The
files in ``configs/<algo>/`` carry the papers' settings for Qwen2-VL on GPU
(``<family>-gpu.yaml``) and small ones for the tiny model on CPU (``cpu.yaml``); any field can be
overridden on the command line (``-o optim.lr=1e-4``).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["CONFIGS_DIR", "ConfigError", "TrainConfig", "default_config_path", "load_config", "make_env"]

CONFIGS_DIR = Path(str(importlib.resources.files("rl4vlm_gym.baselines") / "configs"))


class ConfigError(ValueError):
    """A training config is malformed; the message names the file and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MixtureItem(_Model):
    id: str
    kwargs: dict[str, Any] = Field(default_factory=dict)
    weight: float = Field(default=1.0, gt=0)


class CurriculumSpec(_Model):
    """``success-rate`` (promote/demote over a window) or ``schedule`` (levels by episode count)."""

    kind: Literal["success-rate", "schedule"] = "success-rate"
    start_level: int = Field(default=0, ge=0)
    max_level: int = Field(default=0, ge=0)
    window: int = Field(default=64, ge=1)
    promote_at: float = 0.8
    demote_at: float | None = None
    schedule: list[list[int]] = Field(default_factory=list, description="[[episodes, level], ...]")


class EnvSpec(_Model):
    id: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)
    max_steps: int | None = Field(default=None, ge=1)
    mixture: list[MixtureItem] = Field(default_factory=list)
    curriculum: CurriculumSpec | None = None


class LoraSpec(_Model):
    r: int = Field(default=16, ge=1)
    alpha: int = Field(default=32, ge=1)
    dropout: float = Field(default=0.0, ge=0, lt=1)
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


class ModelSpec(_Model):
    name: str | None = None
    device: str = "cpu"
    dtype: str | None = None
    autocast: Literal["bfloat16", "float16"] | None = Field(
        default=None, description="mixed precision: compute in this dtype, keep the weights in dtype"
    )
    lora: LoraSpec | None = None
    value_head: list[int] = Field(default_factory=lambda: [3072, 2048])
    gradient_checkpointing: bool = False


class GenerationSpec(_Model):
    max_new_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=1.0, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)


class RaySpec(_Model):
    """Rollout envs in Ray actors (``vectorization: ray``; the model stays in the trainer's process)."""

    address: str | None = Field(default=None, description="the cluster (auto, ray://host:port); default a local Ray")
    num_actors: int | None = Field(default=None, ge=1, description="actors sharing the envs (default one per env, at most 8)")
    actor_options: dict[str, Any] = Field(default_factory=dict, description="Ray actor options, e.g. num_cpus, memory")
    max_actor_restarts: int = Field(default=4, ge=0, description="dead actors replaced (their episodes end truncated)")


class RolloutSpec(_Model):
    num_envs: int = Field(default=4, ge=1)
    steps: int = Field(default=256, ge=1, description="env steps per update (step-budget methods)")
    groups: int = Field(default=4, ge=1, description="episode groups per update (LOOP, GiGPO, GROW)")
    group_size: int = Field(default=8, ge=1)
    vectorization: Literal["sync", "async", "ray"] = "sync"
    ray: RaySpec = Field(default_factory=RaySpec)


class OptimSpec(_Model):
    lr: float = Field(default=1e-6, gt=0)
    final_lr: float = Field(default=1e-8, ge=0)
    schedule: Literal["cosine", "constant"] = "cosine"
    cosine_updates: int | None = Field(default=None, ge=1, description="T_max (default: all updates)")
    optimizer: Literal["adam", "adamw"] = "adam"
    eps: float = 1e-7
    weight_decay: float = 0.0
    max_grad_norm: float | None = 0.01
    epochs: int = Field(default=4, ge=1)
    minibatch_size: int = Field(default=1, ge=1, description="units (steps, or episodes for LOOP) per loss")
    grad_accum: int = Field(default=2, ge=1, description="mini-batches per optimiser step")
    micro_batch: int | None = Field(
        default=None, ge=1, description="steps per forward pass (memory only: the gradient is the mini-batch's)"
    )


class WarmupSpec(_Model):
    """Format warm-up: behaviour cloning of *uniformly random admissible actions* in the prompt's
    answer format, before RL. It teaches a random model to answer in the format (as RL4VLM's SFT
    start does for LLaVA) and nothing about the task: its success is the random agent's."""

    steps: int = Field(default=0, ge=0)
    batch_size: int = Field(default=32, ge=1)
    lr: float = Field(default=1e-3, gt=0)


class EvalSpec(_Model):
    every: int = Field(default=0, ge=0, description="evaluate every N updates (0: only at the start and the end)")
    episodes: int = Field(default=32, ge=1, description="episodes per task (seeds from the evaluation range)")
    suite: str | None = Field(default=None, description="a named suite instead of the training env")
    temperature: float = Field(default=0.0, ge=0)
    workers: int = Field(default=1, ge=1)


class OpponentSpec(_Model):
    """Self-play (``baselines/selfplay.py``): the learner plays one seat of the AEC game ``game``
    against snapshots of itself. ``env.id`` stays the single-agent view the run warms up and is
    evaluated on (e.g. the game against the random opponent)."""

    kind: Literal["selfplay"] = "selfplay"
    game: str = Field(description="tictactoe, connect_four, kuhn_poker, or module:function making a two-player AEC env")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="the game's arguments (obs_mode comes from env.kwargs)")
    snapshot_every: int = Field(default=5, ge=1, description="add the policy to the pool every K updates (and after the warm-up)")
    pool_size: int = Field(default=8, ge=1, description="the newest N snapshots are kept")
    sampling: Literal["uniform", "pfsp"] = "pfsp"
    pfsp_power: float = Field(
        default=2.0, ge=0, description="pfsp weight (1 - p)^power, p the learner's score against a snapshot"
    )
    temperature: float = Field(default=1.0, ge=0, description="the opponent's sampling temperature")


class TrainConfig(_Model):
    algo: Literal["vl-dac", "rl4vlm", "loop", "gigpo", "grow"]
    env: EnvSpec = Field(default_factory=EnvSpec)
    opponent: OpponentSpec | None = Field(default=None, description="self-play instead of the env's own opponent")
    model: ModelSpec = Field(default_factory=ModelSpec)
    prompt: dict[str, Any] = Field(default_factory=dict)
    generation: GenerationSpec = Field(default_factory=GenerationSpec)
    rollout: RolloutSpec = Field(default_factory=RolloutSpec)
    optim: OptimSpec = Field(default_factory=OptimSpec)
    algorithm: dict[str, Any] = Field(default_factory=dict, description="the method's hyperparameters")
    warmup: WarmupSpec = Field(default_factory=WarmupSpec)
    eval: EvalSpec = Field(default_factory=EvalSpec)
    updates: int = Field(default=100, ge=1)
    seed: int = 0
    checkpoint_every: int = Field(default=1, ge=1)
    tensorboard: bool = True


def make_env(env: EnvSpec) -> Any:
    """The training env an ``env`` section describes (an id, or a mixture), with its step limit.
    A module function of the section alone, so Ray can pickle it into rollout actors."""
    import gymnasium as gym

    from rl4vlm_gym.curriculum import MixtureEntry, MixtureEnv

    if env.mixture:
        entries = [MixtureEntry(m.id, weight=m.weight, kwargs=m.kwargs) for m in env.mixture]
        mixture = MixtureEnv(entries, **env.kwargs)
        return gym.wrappers.TimeLimit(mixture, env.max_steps) if env.max_steps else mixture
    if env.id is None:
        raise ValueError("the config's env needs an id or a mixture")
    kwargs = dict(env.kwargs)
    if env.max_steps:
        kwargs["max_episode_steps"] = env.max_steps
    return gym.make(env.id, **kwargs)


def default_config_path(algo: str, env_id: str | None, device: str) -> Path:
    """``configs/<algo>/cpu.yaml`` on CPU, ``configs/<algo>/<family>-gpu.yaml`` on CUDA."""
    from rl4vlm_gym.baselines import ALGORITHMS

    if algo not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {algo!r}; choose one of {sorted(ALGORITHMS)}")
    folder = CONFIGS_DIR / algo.replace("-", "_")
    if not str(device).startswith("cuda"):
        return folder / "cpu.yaml"
    from rl4vlm_gym.registry import env_card

    family = env_card(env_id).family if env_id else "cards"
    path = folder / f"{family}-gpu.yaml"
    if not path.exists():
        raise ConfigError(f"no GPU config for {algo} on the {family!r} family; give one with --config")
    return path


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read a YAML config, apply dotted overrides (``{"optim.lr": 1e-4}``) and check it."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"no training config at {str(path)!r}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {dotted!r}: {key!r} is not a section")
        node[leaf] = value
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
        raise ConfigError(f"{path}: {problems}") from None
