"""The rollout collector: plays a vector env with the policy and fills a :class:`RolloutBuffer`.

Envs run in a Gymnasium vector env (sync or async) with autoreset disabled, so the collector
chooses every episode's seed and level. Each env has its own
:class:`~rl4vlm_gym.prompts.PromptBuilder` (the same prompts the harness evaluates with). At each
step the collector builds the prompts of all active envs, generates the replies in one batch,
scores them under the acting policy (and the reference policy, when the method has a KL term),
and steps the envs with the decoded text.

Two ways to collect:

- :meth:`RolloutCollector.collect_steps` (VL-DAC, RL4VLM): a fixed number of steps; episodes
  run on across updates, and the last step of each env is bootstrapped with the value of its
  next observation;
- :meth:`RolloutCollector.collect_episodes` (LOOP, GiGPO): whole episodes in groups of
  ``group_size`` envs that share a start seed (and level), as verl-agent's ``env.rollout.n``.

Time limits: when an episode is *truncated*, the value of its final observation is stored in the
step's ``next_value`` so that GAE bootstraps from it; a *terminated* step gets none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import torch

from rl4vlm_gym.baselines.common.policy import Policy
from rl4vlm_gym.baselines.common.storage import Episode, RolloutBuffer, Step
from rl4vlm_gym.curriculum import Curriculum
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig
from rl4vlm_gym.registry import TRAIN_SEEDS

if TYPE_CHECKING:
    from rl4vlm_gym.backends.ray_vector import RayVectorEnv

__all__ = ["GenerationSettings", "RolloutCollector"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GenerationSettings:
    """How replies are sampled during training (evaluation uses the same budget)."""

    max_new_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0


class RolloutCollector:
    """Plays ``num_envs`` envs with ``policy``.

    Args:
        make_env: builds one env (``gym.make`` with the run's kwargs).
        num_envs: envs played side by side (one generation batch).
        policy: the acting policy.
        prompt: the prompt configuration.
        generation: sampling settings.
        env_id: the env's id (the ``rl4vlm`` prompt template picks its text by it).
        attach_images: ``False`` for ``obs_mode="text"``.
        seed: seeds the episode seeds (drawn from the training range) and the sampling.
        group_size: envs per group in :meth:`collect_episodes`; must divide ``num_envs``.
        reference: also score replies under the reference policy (KL terms).
        values: also score the prompts' values (critic methods).
        curriculum: chooses each episode's level (one per group), learning from outcomes.
        vectorization: ``"sync"``, ``"async"`` (one process per env) or ``"ray"`` (Ray actors:
            :class:`rl4vlm_gym.backends.ray_vector.RayVectorEnv`; ``make_env`` must pickle).
        ray_options: with ``"ray"``: ``address`` (connects Ray if it is not yet) and
            :class:`~rl4vlm_gym.backends.ray_vector.RayVectorEnv`'s ``num_actors``,
            ``actor_options``, ``max_actor_restarts``.
    """

    def __init__(
        self,
        make_env: Callable[[], gym.Env],
        num_envs: int,
        policy: Policy,
        prompt: PromptConfig,
        generation: GenerationSettings,
        *,
        env_id: str = "",
        attach_images: bool = True,
        seed: int = 0,
        group_size: int = 1,
        reference: bool = False,
        values: bool = False,
        curriculum: Curriculum | None = None,
        vectorization: str = "sync",
        ray_options: Mapping[str, Any] | None = None,
    ) -> None:
        if num_envs < 1 or group_size < 1 or num_envs % group_size:
            raise ValueError(f"num_envs={num_envs} must be a positive multiple of group_size={group_size}")
        vectors: dict[str, Callable[..., gym.vector.SyncVectorEnv | gym.vector.AsyncVectorEnv | RayVectorEnv]] = {
            "sync": gym.vector.SyncVectorEnv,
            "async": gym.vector.AsyncVectorEnv,
            "ray": _ray_vector_env,
        }
        vector = vectors.get(vectorization)
        if vector is None:
            raise ValueError(f"vectorization={vectorization!r} is unknown; choose 'sync', 'async' or 'ray'")
        extra = {"options": dict(ray_options or {})} if vectorization == "ray" else {}
        self.envs = vector([make_env] * num_envs, autoreset_mode=gym.vector.AutoresetMode.DISABLED, **extra)
        self.num_envs, self.group_size = num_envs, group_size
        self.policy, self.generation = policy, generation
        self.builders = [PromptBuilder(prompt, env_id=env_id, attach_images=attach_images) for _ in range(num_envs)]
        self.reference, self.values, self.curriculum = reference, values, curriculum
        self.rng = np.random.default_rng(seed)
        self.env_steps = 0
        self.episodes_done = 0
        self._calls = 0
        self._next_episode = 0
        self._next_group = 0
        self._obs: list[dict[str, Any]] | None = None
        self._info: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._episode = [0] * num_envs
        self._group = [0] * num_envs
        self._t = [0] * num_envs
        self._ret = [0.0] * num_envs
        self._invalid = [0] * num_envs
        self._level = [0] * num_envs

    # Collection -----------------------------------------------------------------------------------

    def collect_steps(self, n_steps: int) -> RolloutBuffer:
        """At least ``n_steps`` steps (a whole number of rounds over the envs); episodes continue
        across calls."""
        buffer = RolloutBuffer()
        if self._obs is None:
            self._reset({env: self._draw_seed() for env in range(self.num_envs)})
        last: list[Step | None] = [None] * self.num_envs
        for _ in range(-(-n_steps // self.num_envs)):
            steps = self._step(list(range(self.num_envs)), buffer)
            for env, step in enumerate(steps):
                previous = last[env]
                if step.value is not None and previous is not None and not previous.done:
                    previous.next_value = step.value
                last[env] = step
                if step.done:
                    self._reset({env: self._draw_seed()})
        # Bootstrap every stream that the rollout cut mid-episode from its current observation.
        cut = {e: step for e, step in enumerate(last) if step is not None and not step.done}
        if self.values and cut:
            observations = self._obs
            assert observations is not None  # set by the reset above, kept by every step
            for step, value in zip(cut.values(), self._values([observations[e] for e in cut], list(cut)), strict=True):
                step.next_value = value
        return buffer

    def collect_episodes(self, n_groups: int) -> RolloutBuffer:
        """``n_groups`` groups of ``group_size`` whole episodes each; the envs of a group start
        from the same seed and level. Runs in waves of ``num_envs // group_size`` groups."""
        buffer = RolloutBuffer()
        per_wave = self.num_envs // self.group_size
        for wave_start in range(0, n_groups, per_wave):
            groups = min(per_wave, n_groups - wave_start)
            active = list(range(groups * self.group_size))
            group_seeds = [self._draw_seed() for _ in range(groups)]
            self._obs = None
            self._reset(
                {e: group_seeds[e // self.group_size] if e in active else 0 for e in range(self.num_envs)},
                {e: e // self.group_size for e in range(self.num_envs)},
            )
            while active:
                steps = self._step(active, buffer)
                active = [env for env, step in zip(active, steps, strict=True) if not step.done]
                finished = [step.env for step in steps if step.done]
                if finished and active:
                    self._park(finished)
        self._obs = None  # the next call starts fresh episodes
        return buffer

    # One step of the active envs ------------------------------------------------------------------

    def _step(self, active: Sequence[int], buffer: RolloutBuffer) -> list[Step]:
        assert self._obs is not None
        observations = [self._obs[e] for e in active]
        conversations = [self.builders[e].messages(o) for e, o in zip(active, observations, strict=True)]
        inputs = self.policy.encode(conversations)  # one processor pass serves generation and scoring
        prompts = self.policy.prompts(conversations, inputs)
        replies = self.policy.generate(prompts, inputs=inputs, seed=self._sampling_seed(), **vars(self.generation))
        with torch.no_grad():
            scores = self.policy.score(prompts, replies, values=self.values, inputs=inputs)
            reference = self.policy.score(prompts, replies, reference=True, inputs=inputs) if self.reference else None
        texts = [self.policy.decode(r) for r in replies]
        # Envs whose episode ended wait for the rest of the wave: they were parked (reset) and
        # step with an empty reply that is never recorded.
        actions = [""] * self.num_envs
        for env, text in zip(active, texts, strict=True):
            actions[env] = text
        obs, rewards, terminated, truncated, infos = self.envs.step(tuple(actions))
        next_obs = _unbatch(obs, self.num_envs)
        waiting = set(active)
        stale = [e for e in range(self.num_envs) if e not in waiting and (terminated[e] or truncated[e])]
        if stale:  # a parked env ended its filler episode: park it again before the next step
            self._park(stale)
        steps = []
        for row, env in enumerate(active):
            n = len(replies[row])
            info = _info_at(infos, env)
            valid = bool(info.get("action", {}).get("valid", True))
            step = Step(
                env=env,
                episode=self._episode[env],
                group=self._group[env],
                t=self._t[env],
                prompt=prompts[row],
                response=list(replies[row]),
                text=texts[row],
                logprobs=scores.logprobs[row, :n].cpu(),
                ref_logprobs=None if reference is None else reference.logprobs[row, :n].cpu(),
                value=None if scores.values is None else float(scores.values[row]),
                reward=float(rewards[env]),
                terminated=bool(terminated[env]),
                truncated=bool(truncated[env]) and not bool(terminated[env]),
                valid=valid,
                state_key=str(self._info[env].get("state_key", "")),
            )
            self.builders[env].record(observations[row], texts[row])
            self._t[env] += 1
            self._ret[env] += step.reward
            self._invalid[env] += not valid
            self._obs[env], self._info[env] = next_obs[env], info
            steps.append(step)
            buffer.steps.append(step)
            if step.done:
                success = bool(info.get("success", False))
                buffer.episodes.append(
                    Episode(
                        env, step.episode, step.group, self._t[env], self._ret[env], success, self._invalid[env], self._level[env]
                    )
                )
                self.episodes_done += 1
                if self.curriculum is not None:
                    self.curriculum.update(self._level[env], success)
        self.env_steps += len(active)
        truncated_steps = [s for s in steps if s.truncated]
        if self.values and truncated_steps:
            final = [self._obs[s.env] for s in truncated_steps]
            for step, value in zip(truncated_steps, self._values(final, [s.env for s in truncated_steps]), strict=True):
                step.next_value = value
        return steps

    # Helpers ---------------------------------------------------------------------------------------

    def _reset(self, seeds: Mapping[int, int], groups: Mapping[int, int] | None = None) -> None:
        """Start new episodes: env ``e`` from ``seeds[e]``, in group ``groups[e]`` (default: a new
        group each). One level from the curriculum for all of them."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[list(seeds)] = True
        options: dict[str, Any] = {"reset_mask": mask}
        level = None
        if self.curriculum is not None:
            level = self.curriculum.next_level()
            options["level"] = level
        obs, infos = self.envs.reset(seed=[seeds.get(e) for e in range(self.num_envs)], options=options)
        batch = _unbatch(obs, self.num_envs)
        if self._obs is None:
            self._obs = batch
        for env in seeds:
            self._obs[env] = batch[env]
            self._info[env] = _info_at(infos, env)
            self._episode[env] = self._next_episode
            self._next_episode += 1
            if groups is None:
                self._group[env] = self._next_group
                self._next_group += 1
            else:
                self._group[env] = self._next_group + groups[env]
            self._t[env], self._ret[env], self._invalid[env] = 0, 0.0, 0
            self._level[env] = int(self._info[env].get("level", level or 0))
            self.builders[env].reset()
        if groups is not None:
            self._next_group += max(groups.values()) + 1

    def _park(self, envs: Sequence[int]) -> None:
        """Reset envs that sit out the rest of a wave (a vector env steps every env)."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[list(envs)] = True
        self.envs.reset(seed=[0 if m else None for m in mask], options={"reset_mask": mask})

    def _values(self, observations: Sequence[Mapping[str, Any]], envs: Sequence[int]) -> list[float]:
        """Values of observations just reached (the builders have recorded the previous reply)."""
        conversations = [self.builders[e].messages(o) for e, o in zip(envs, observations, strict=True)]
        inputs = self.policy.encode(conversations)
        with torch.no_grad():
            return [float(v) for v in self.policy.values(self.policy.prompts(conversations, inputs), inputs)]

    def _draw_seed(self) -> int:
        return int(self.rng.integers(TRAIN_SEEDS.start, TRAIN_SEEDS.stop))

    def _sampling_seed(self) -> int:
        self._calls += 1
        return int(self.rng.integers(2**31)) + self._calls

    def state_dict(self) -> dict[str, Any]:
        """What a resumed run needs to draw the same seeds (episodes in flight restart)."""
        return {
            "rng": self.rng.bit_generator.state,
            "env_steps": self.env_steps,
            "episodes_done": self.episodes_done,
            "calls": self._calls,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.env_steps, self.episodes_done, self._calls = state["env_steps"], state["episodes_done"], state["calls"]

    def close(self) -> None:
        self.envs.close()


def _unbatch(obs: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    return [{key: value[i] for key, value in obs.items()} for i in range(n)]


def _info_at(infos: Mapping[str, Any], i: int) -> dict[str, Any]:
    """Env ``i``'s entries of a vector env's info dict (entries it did not set are left out)."""
    out: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        if isinstance(value, Mapping):
            out[key] = _info_at(value, i)
        elif infos.get(f"_{key}") is None or bool(infos[f"_{key}"][i]):
            out[key] = value[i].item() if hasattr(value[i], "item") else value[i]
    return out


def _ray_vector_env(env_fns: list[Callable[[], gym.Env]], autoreset_mode: Any, options: dict[str, Any]) -> RayVectorEnv:
    """A :class:`RayVectorEnv` (the ``ray`` extra), connecting to ``options["address"]`` first."""
    import ray

    from rl4vlm_gym.backends.ray_vector import RayVectorEnv

    address = options.pop("address", None)
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    return RayVectorEnv(env_fns, autoreset_mode=autoreset_mode, **options)
