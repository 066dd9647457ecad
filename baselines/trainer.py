"""The shared trainer: collect, estimate, optimise, log, checkpoint and evaluate.

One update of any method::

    buffer = collector.collect_steps(rollout.steps)        # VL-DAC, RL4VLM
           | collector.collect_episodes(rollout.groups)    # LOOP, GiGPO
    algo.estimate(buffer)                                  # advantages (and returns)
    for epoch in range(optim.epochs):                      # PPO epochs
        for minibatch in shuffled(algo.select(buffer)):
            algo.backward(policy, minibatch, update, micro_batch, scale=1 / grad_accum)
            every grad_accum mini-batches: clip the grad norm, optimiser step

A run folder holds ``config.yaml``, ``train_log.csv`` (one row per update: env steps, training
episodes' success and return, losses), ``eval_log.csv``, TensorBoard events in ``tb/``,
``checkpoints/latest`` (everything a killed run needs to resume: run the same command again),
``checkpoints/<tag>/model`` (loadable by the ``hf`` agent) and ``eval/<tag>`` (harness runs);
with self-play (the config's ``opponent``, see ``selfplay.py``) also ``selfplay_log.csv``.
Evaluation goes through the harness, at the start, every ``eval.every`` updates and at the end;
``report/`` then holds the usual report with the learning curves.
"""

from __future__ import annotations

import csv
import functools
import logging
import math
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import yaml

from rl4vlm_gym.baselines import algorithm_class
from rl4vlm_gym.baselines.common.policy import LoraSettings, Policy, PolicySettings
from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step
from rl4vlm_gym.baselines.common.warmup import format_warmup
from rl4vlm_gym.baselines.config import TrainConfig, make_env
from rl4vlm_gym.curriculum import FixedSchedule, SuccessRateCurriculum
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["Trainer"]

logger = logging.getLogger(__name__)

TRAIN_COLUMNS = (
    "update", "env_steps", "episodes", "success", "return", "length", "invalid_rate", "advantage_std",
    "loss", "policy_loss", "value_loss", "kl", "entropy", "clip_fraction", "grad_norm", "lr", "seconds",
)  # fmt: skip
EVAL_COLUMNS = ("update", "env_steps", "success", "progress", "return", "invalid_rate", "episodes")


class Trainer:
    """Trains one method on one env (or mixture) as configured, in the run folder ``out``."""

    def __init__(self, config: TrainConfig, out: str | Path, on_update: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.config, self.out, self.on_update = config, Path(out), on_update
        self.out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(config.seed)
        self.algo = algorithm_class(config.algo)(config.algorithm)
        self.prompt = PromptConfig(**config.prompt)
        env = config.env
        if not env.id and not env.mixture:
            raise ValueError("the config names no env: set env.id (or give --env) or env.mixture")
        if env.mixture and env.curriculum is not None:
            raise ValueError("env.curriculum applies to one env; give each mixture entry its own levels instead")
        self.env_id = env.id or ""
        self.obs_mode = env.kwargs.get("obs_mode", "image+text")
        model = config.model
        lora = (
            None
            if model.lora is None
            else LoraSettings(model.lora.r, model.lora.alpha, model.lora.dropout, tuple(model.lora.target_modules))
        )
        settings = PolicySettings(
            model=model.name, device=model.device, dtype=model.dtype, autocast=model.autocast, lora=lora,
            value_head=tuple(model.value_head) if self.algo.critic else None,
            value_stop_gradient=self.algo.value_stop_gradient, gradient_checkpointing=model.gradient_checkpointing,
        )  # fmt: skip
        self.policy = Policy(settings, temperature=config.generation.temperature)
        if self.algo.reference:
            self.policy.freeze_reference()
        params = [p for p in self.policy.parameters() if p.requires_grad]
        o = config.optim
        optimizer = torch.optim.AdamW if o.optimizer == "adamw" else torch.optim.Adam
        self.optimizer = optimizer(params, lr=o.lr, eps=o.eps, weight_decay=o.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        self.curriculum = _curriculum(env.curriculum)
        self.selfplay, collector, make_env = None, RolloutCollector, self._make_env
        if config.opponent is not None:
            from rl4vlm_gym.baselines.selfplay import SelfPlay, SelfPlayCollector

            if env.mixture or config.rollout.vectorization != "sync":
                raise ValueError(
                    "self-play needs one env (env.id) and rollout.vectorization: sync (the opponent runs in the driver)"
                )
            selfplay = self.selfplay = SelfPlay(
                config.opponent, self.policy, self.prompt, env_id=self.env_id, obs_mode=self.obs_mode,
                max_new_tokens=config.generation.max_new_tokens, top_p=config.generation.top_p, out=self.out,
            )  # fmt: skip
            collector = SelfPlayCollector

            def make_env() -> gym.Env:
                return selfplay.make_env(env.max_steps)

        self.collector = collector(
            make_env, config.rollout.num_envs if self.algo.collect == "steps" else _wave(config), self.policy, self.prompt,
            GenerationSettings(**config.generation.model_dump()), env_id=self.env_id, attach_images=self.obs_mode != "text",
            seed=config.seed, group_size=config.rollout.group_size if self.algo.collect == "episodes" else 1,
            reference=self.algo.reference, values=self.algo.critic, curriculum=self.curriculum,
            vectorization=config.rollout.vectorization, ray_options=config.rollout.ray.model_dump(),
        )  # fmt: skip
        self.rng = np.random.default_rng(config.seed + 1)
        self.update = 0
        self._tb: Any = None

    # The loop -----------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Train (resuming from ``checkpoints/latest`` if present), evaluate, report."""
        c = self.config
        (self.out / "config.yaml").write_text(yaml.safe_dump(c.model_dump(), sort_keys=False), encoding="utf-8")
        resumed = self._resume()
        if not resumed:
            _reset_log(self.out / "train_log.csv", TRAIN_COLUMNS)
            _reset_log(self.out / "eval_log.csv", EVAL_COLUMNS)
            if c.warmup.steps:
                format_warmup(
                    self.policy, self._make_env, self.prompt, env_id=self.env_id, attach_images=self.obs_mode != "text",
                    steps=c.warmup.steps, batch_size=c.warmup.batch_size, lr=c.warmup.lr, seed=c.seed,
                )  # fmt: skip
            self.evaluate("update_0")
            if self.selfplay is not None:
                self.selfplay.after_update(0)  # the warmed-up policy is the first opponent
        elif self._eval_due(self.update) and not _logged(self.out / "eval_log.csv", self.update):
            self.evaluate(f"update_{self.update}")  # the run was killed during this evaluation
        try:
            while self.update < c.updates:
                row = self.train_one_update()
                if self.selfplay is not None:
                    self.selfplay.after_update(self.update)
                if self.on_update is not None:
                    self.on_update(row)
                if self.update % c.checkpoint_every == 0 or self.update == c.updates:
                    self.save_checkpoint()
                if self._eval_due(self.update):
                    self.evaluate(f"update_{self.update}")
            summary = self.evaluate("final", force=True)
        finally:
            self.collector.close()
            if self._tb is not None:
                self._tb.close()
        self.report()
        return summary

    def train_one_update(self) -> dict[str, Any]:
        c, start = self.config, time.perf_counter()
        if self.algo.collect == "steps":
            buffer = self.collector.collect_steps(c.rollout.steps)
        else:
            buffer = self.collector.collect_episodes(c.rollout.groups)
        stats = self.algo.estimate(buffer)
        stats.update(self._optimise(buffer))
        self.scheduler.step()
        self.update += 1
        row = {
            "update": self.update,
            "env_steps": self.collector.env_steps,
            "episodes": len(buffer.episodes),
            **_rollout_stats(buffer),
            **stats,
            "lr": self.optimizer.param_groups[0]["lr"],
            "seconds": round(time.perf_counter() - start, 3),
        }
        self._log(row)
        return row

    def _eval_due(self, update: int) -> bool:
        """An evaluation follows ``update`` (the final one is the loop's own)."""
        every = self.config.eval.every
        return bool(every) and update % every == 0 and 0 < update < self.config.updates

    def _optimise(self, buffer: RolloutBuffer) -> dict[str, float]:
        o = self.config.optim
        units = self.algo.select(buffer)
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        totals: dict[str, list[float]] = {}
        self.policy.train()
        for _ in range(o.epochs):
            order = self.rng.permutation(len(units))
            batches = [
                [s for i in order[k : k + o.minibatch_size] for s in units[i]] for k in range(0, len(order), o.minibatch_size)
            ]
            for index, batch in enumerate(batches):
                loss, stats = self.algo.backward(
                    self.policy, batch, self.update, micro_batch=o.micro_batch, scale=1 / o.grad_accum
                )
                for key, value in {"loss": loss, **stats}.items():
                    totals.setdefault(key, []).append(value)
                if (index + 1) % o.grad_accum == 0 or index == len(batches) - 1:
                    norm = torch.nn.utils.clip_grad_norm_(params, o.max_grad_norm if o.max_grad_norm is not None else math.inf)
                    totals.setdefault("grad_norm", []).append(float(norm))
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
        self.policy.eval()
        return {key: float(np.mean(values)) for key, values in totals.items()}

    def _lr_factor(self, update: int) -> float:
        """Cosine annealing from ``lr`` to ``final_lr`` over ``cosine_updates`` (RL4VLM, VL-DAC), or constant."""
        o = self.config.optim
        if o.schedule == "constant":
            return 1.0
        horizon = o.cosine_updates or self.config.updates
        progress = min(update, horizon) / horizon
        return (o.final_lr + (o.lr - o.final_lr) * 0.5 * (1 + math.cos(math.pi * progress))) / o.lr

    # Envs ---------------------------------------------------------------------------------------

    @property
    def _make_env(self) -> Callable[[], gym.Env]:
        # a function of the env section alone: Ray pickles it into actors (not the trainer and its model)
        return functools.partial(make_env, self.config.env)

    # Evaluation and reports ---------------------------------------------------------------------

    def evaluate(self, tag: str, force: bool = False) -> dict[str, Any]:
        """Save the model as ``checkpoints/<tag>/model`` and play the evaluation suite with the
        ``hf`` agent on it; append the overall scores to ``eval_log.csv``."""
        from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary

        folder = self.out / "checkpoints" / tag / "model"
        if force or not folder.exists():  # written whole or not at all: a killed save leaves no folder
            scratch = folder.with_name(".model.tmp")
            shutil.rmtree(scratch, ignore_errors=True)
            self.policy.save_pretrained(scratch)
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(scratch, folder)
        suite = self.eval_suite()
        g, e = self.config.generation, self.config.eval
        agent = AgentSpec("hf", {
            "model": str(folder.resolve()), "device": self.config.model.device, "dtype": self.config.model.dtype,
            "max_new_tokens": g.max_new_tokens, "temperature": e.temperature, "top_p": g.top_p, "seed": self.config.seed,
        })  # fmt: skip
        run = self.out / "eval" / tag
        if force:
            shutil.rmtree(run, ignore_errors=True)
        records = run_suite(suite, agent, run, workers=e.workers, prompt=self.prompt)
        summary = write_summary(run, suite, records)
        overall = summary["overall"]
        row = {"update": self.update, "env_steps": self.collector.env_steps, "episodes": len(records)}
        for key, name in (
            ("success", "success"),
            ("progress", "progress"),
            ("return", "return"),
            ("invalid_rate", "invalid_action_rate"),
        ):
            value = overall.get(name)
            row[key] = value["mean"] if isinstance(value, dict) else value
        _append(self.out / "eval_log.csv", EVAL_COLUMNS, row)
        logger.info("eval %s: success %.3f", tag, row["success"])
        return summary

    def eval_suite(self) -> Any:
        """The evaluation suite: a named suite, or the training env (each mixture entry) on
        ``eval.episodes`` seeds drawn from the evaluation range with the run's seed as root."""
        from rl4vlm_gym.harness.suite import Suite, Task, draw_seeds, load_suite

        e, env = self.config.eval, self.config.env
        if e.suite:
            return load_suite(e.suite)
        seeds = tuple(draw_seeds("eval", e.episodes, root=self.config.seed))
        if env.mixture:
            items = [(m.id, m.kwargs) for m in env.mixture]
        elif env.id is not None:
            items = [(env.id, {})]
        else:
            raise ValueError("the config's env needs an id or a mixture")
        tasks = []
        for i, (env_id, extra) in enumerate(items):
            kwargs = {**env.kwargs, **extra}
            level, obs_mode = kwargs.pop("level", None), kwargs.pop("obs_mode", "image+text")
            name = f"{env_id.split('/')[-1]}-{i}" if env.mixture else env_id.split("/")[-1]
            tasks.append(
                Task(name=name, env=env_id, level=level, obs_mode=obs_mode, kwargs=kwargs, seeds=seeds, max_steps=env.max_steps)
            )
        return Suite(f"train-{self.config.algo}", "in-distribution", "Evaluation seeds of the training env.", self.prompt, tasks)

    def report(self) -> Path:
        """``report/report.html``: the final evaluation and the learning curves."""
        from rl4vlm_gym.harness.report import write_report

        markdown, _ = write_report(
            [self.out / "eval" / "final"],
            self.out / "report",
            training_logs=[self.out / "train_log.csv", self.out / "eval_log.csv"],
        )
        return markdown

    # Logs and checkpoints -----------------------------------------------------------------------

    def _log(self, row: dict[str, Any]) -> None:
        _append(self.out / "train_log.csv", TRAIN_COLUMNS, row)
        if self.config.tensorboard:
            if self._tb is None:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(self.out / "tb"))
            for key, value in row.items():
                if isinstance(value, (int, float)) and key not in ("update", "env_steps") and not math.isnan(value):
                    self._tb.add_scalar(f"train/{key}", value, row["env_steps"])
            self._tb.flush()

    def save_checkpoint(self) -> Path:
        """Write ``checkpoints/latest`` atomically (a temporary folder, then a rename)."""
        root = self.out / "checkpoints"
        root.mkdir(parents=True, exist_ok=True)
        scratch, latest = root / ".latest.tmp", root / "latest"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        state = {
            "update": self.update,
            "policy": self.policy.trainable_state(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "collector": self.collector.state_dict(),
            "curriculum": None
            if self.curriculum is None or not hasattr(self.curriculum, "state_dict")
            else self.curriculum.state_dict(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.random.get_rng_state(),
            "selfplay": None if self.selfplay is None else self.selfplay.state_dict(),
        }
        torch.save(state, scratch / "trainer_state.pt")
        old = root / ".latest.old"
        shutil.rmtree(old, ignore_errors=True)
        if latest.exists():
            os.replace(latest, old)
        os.replace(scratch, latest)
        shutil.rmtree(old, ignore_errors=True)
        return latest

    def _resume(self) -> bool:
        root = self.out / "checkpoints"
        # A kill between save_checkpoint's two renames leaves the previous checkpoint as .latest.old.
        path = next((p for p in (root / "latest", root / ".latest.old") if (p / "trainer_state.pt").exists()), None)
        if path is None:
            return False
        path = path / "trainer_state.pt"
        state = torch.load(path, weights_only=False)
        self.policy.load_trainable_state(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.collector.load_state_dict(state["collector"])
        if state["curriculum"] is not None and self.curriculum is not None:
            self.curriculum.load_state_dict(state["curriculum"])
        self.rng.bit_generator.state = state["rng"]
        torch.random.set_rng_state(state["torch_rng"])
        self.update = state["update"]
        if self.selfplay is not None:
            if state.get("selfplay") is None:
                raise ValueError(f"{path} was written by a run without self-play: use another run folder")
            self.selfplay.load_state_dict(state["selfplay"])
        _truncate_log(self.out / "train_log.csv", TRAIN_COLUMNS, self.update)
        _truncate_log(self.out / "eval_log.csv", EVAL_COLUMNS, self.update)
        logger.info("resumed %s at update %d", self.out, self.update)
        return True


def _wave(config: TrainConfig) -> int:
    """Envs of an episode-collecting method: ``num_envs`` rounded to whole groups (at least one)."""
    size = config.rollout.group_size
    return max(size, config.rollout.num_envs // size * size)


def _curriculum(spec: Any) -> Any:
    if spec is None:
        return None
    if spec.kind == "schedule":
        return FixedSchedule([(int(n), int(level)) for n, level in spec.schedule])
    demote = {} if spec.demote_at is None else {"demote_at": spec.demote_at}
    return SuccessRateCurriculum(
        max_level=spec.max_level, start_level=spec.start_level, window=spec.window, promote_at=spec.promote_at, **demote
    )


def _rollout_stats(buffer: RolloutBuffer) -> dict[str, float]:
    episodes = buffer.episodes
    steps: list[Step] = buffer.steps
    advantages = np.array([s.advantage for s in steps]) if steps else np.zeros(1)
    return {
        "success": float(np.mean([e.success for e in episodes])) if episodes else float("nan"),
        "return": float(np.mean([e.ret for e in episodes])) if episodes else float("nan"),
        "length": float(np.mean([e.length for e in episodes])) if episodes else float("nan"),
        "invalid_rate": float(np.mean([not s.valid for s in steps])) if steps else float("nan"),
        "advantage_std": float(advantages.std()),
    }


def _reset_log(path: Path, columns: tuple[str, ...]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerow(columns)


def _append(path: Path, columns: tuple[str, ...], row: dict[str, Any]) -> None:
    if not path.exists():
        _reset_log(path, columns)
    with path.open("a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerow([_cell(row.get(c)) for c in columns])
        f.flush()
        os.fsync(f.fileno())


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _logged(path: Path, update: int) -> bool:
    """``path`` (a CSV log) has a row for ``update``."""
    if not path.exists():
        return False
    with path.open(newline="", encoding="utf-8") as f:
        return any(r.get("update") == str(update) for r in csv.DictReader(f))


def _truncate_log(path: Path, columns: tuple[str, ...], update: int) -> None:
    """Drop the rows a killed run wrote after its last checkpoint."""
    if not path.exists():
        return _reset_log(path, columns)
    with path.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("update") and int(r["update"]) <= update]
    _reset_log(path, columns)
    with path.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writerows(rows)
