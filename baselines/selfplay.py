"""Self-play: the policy plays one seat of a multi-agent game against a pool of its own past snapshots.

Selected by a config's ``opponent`` section (``kind: selfplay``). The learner trains exactly as
against a fixed opponent (any method, the same collector and update), but its envs are
:class:`SelfPlayEnv`: a PettingZoo AEC game (``opponent.game``) seen from one seat, where every
move of the other seat is written by a frozen snapshot of the policy, run in the driver process.

- **Snapshots**: the weights training changes (the LoRA adapters, or every weight of a small
  model; not the value head), copied to the CPU after the format warm-up (update 0) and every
  ``snapshot_every`` updates. The pool keeps the newest ``pool_size`` (first in, first out).
- **Sampling**: each episode draws its opponent from the pool with the env's own RNG:
  ``uniform``, or ``pfsp`` (prioritised fictitious self-play, AlphaStar's "hard" weighting): a
  snapshot is drawn with probability proportional to ``(1 - p)^pfsp_power``, where ``p`` is the
  learner's score against it (win 1, draw 1/2, loss 0), ``(score + 1) / (games + 2)`` so that a
  new snapshot starts at 1/2. Snapshots the learner beats are drawn less.
- **Seats**: the seat is the episode seed's parity (even: the first mover, odd: the second), and
  the self-play collector alternates the parity of the seeds it draws, so the seat swaps with
  every episode it starts; a seed fixes seat, opponent, deal and every sampled opponent move.
- **The frozen opponent**: one set of weights in memory. To move, the opponent's snapshot is
  copied into the policy's trainable weights, the reply generated with the policy's own
  generator (``opponent.temperature``), and the learner's weights copied back: no second model,
  so a 7B model with LoRA costs one adapter copy per snapshot (and two copies per opponent move).
- **Records and resuming**: ``selfplay_log.csv`` holds one row per finished training episode
  (update, seed, seat, the opponent's snapshot, outcome, return); the pool (weights and
  statistics) is part of ``checkpoints/latest``, so a killed run resumes with the same pool.

The opponent replies through the same parser as the learner; an invalid reply changes nothing
and it writes again (sampling, so the reply changes), until the game's ``max_cycles`` truncates
the episode: no move is ever made up for it.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import torch

from rl4vlm_gym.baselines.common.rollout import RolloutCollector
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig

if TYPE_CHECKING:
    from rl4vlm_gym.baselines.common.policy import Policy

__all__ = ["GAMES", "SelfPlay", "SelfPlayCollector", "SelfPlayEnv", "SnapshotPool", "make_game"]

GAMES: dict[str, str] = {
    "tictactoe": "rl4vlm_gym.envs.games.aec:tictactoe_env",
    "connect_four": "rl4vlm_gym.envs.games.aec:connect_four_env",
    "kuhn_poker": "rl4vlm_gym.envs.games.kuhn_aec:kuhn_poker_env",
}
"""Short names of two-player AEC games; ``opponent.game`` may also be any ``module:function``."""

LOG_COLUMNS = ("update", "seed", "seat", "opponent", "outcome", "return")


def make_game(game: str, **kwargs: Any) -> Any:
    """The AEC env named ``game`` (a key of :data:`GAMES` or ``module:function``)."""
    target = GAMES.get(game, game)
    module, _, attr = target.partition(":")
    if not attr:
        raise ValueError(f"opponent.game={game!r} is unknown; choose one of {sorted(GAMES)} or give 'module:function'")
    return getattr(importlib.import_module(module), attr)(**kwargs)


# The pool ----------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    """Frozen weights of the policy after ``update`` updates, and the learner's record against them."""

    update: int
    weights: dict[str, torch.Tensor]
    games: int = 0
    score: float = 0.0  # win 1, draw 1/2, loss 0


@dataclass
class SnapshotPool:
    """The newest ``size`` snapshots, sampled ``uniform`` or by ``pfsp`` (see the module docstring)."""

    size: int = 8
    sampling: str = "pfsp"
    pfsp_power: float = 2.0
    snapshots: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"pool size {self.size} must be at least 1")
        if self.sampling not in ("uniform", "pfsp"):
            raise ValueError(f"sampling={self.sampling!r} is unknown; choose 'uniform' or 'pfsp'")

    def add(self, update: int, weights: Mapping[str, torch.Tensor]) -> None:
        self.snapshots.append(Snapshot(update, {k: v.detach().to("cpu", copy=True) for k, v in weights.items()}))
        del self.snapshots[: -self.size]

    def updates(self) -> list[int]:
        return [s.update for s in self.snapshots]

    def probabilities(self) -> np.ndarray:
        if not self.snapshots:
            raise RuntimeError("the snapshot pool is empty: add the policy's weights before playing")
        if self.sampling == "uniform":
            weights = np.ones(len(self.snapshots))
        else:
            p = np.array([(s.score + 1) / (s.games + 2) for s in self.snapshots])
            weights = (1 - p) ** self.pfsp_power
        return weights / weights.sum()

    def sample(self, rng: np.random.Generator) -> int:
        """The update number of a snapshot drawn with ``rng``."""
        return self.snapshots[int(rng.choice(len(self.snapshots), p=self.probabilities()))].update

    def get(self, update: int) -> Snapshot | None:
        return next((s for s in self.snapshots if s.update == update), None)

    def record(self, update: int, score: float) -> None:
        """The learner scored ``score`` (1, 1/2 or 0) against snapshot ``update`` (ignored if it left the pool)."""
        snapshot = self.get(update)
        if snapshot is not None:
            snapshot.games += 1
            snapshot.score += score

    def state_dict(self) -> dict[str, Any]:
        return {"snapshots": [vars(s).copy() for s in self.snapshots]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.snapshots = [Snapshot(**s) for s in state["snapshots"]][-self.size :]


@contextlib.contextmanager
def weights_of(policy: Policy, weights: Mapping[str, torch.Tensor]) -> Iterator[None]:
    """Inside, ``policy``'s trainable weights are ``weights`` (``model.``-prefixed, as in
    ``Policy.trainable_state``); the learner's are put back on the way out."""
    params = dict(policy.model.named_parameters())
    saved = {}
    with torch.no_grad():
        for key, value in weights.items():
            param = params[key.removeprefix("model.")]
            saved[key] = param.detach().clone()
            param.copy_(value)
    try:
        yield
    finally:
        with torch.no_grad():
            for key, value in saved.items():
                params[key.removeprefix("model.")].copy_(value)


def snapshot_weights(policy: Policy) -> dict[str, torch.Tensor]:
    """The policy's trainable model weights (not the value head: the opponent only writes)."""
    return {k: v for k, v in policy.trainable_state().items() if k.startswith("model.")}


# The env -----------------------------------------------------------------------------------------


class SelfPlayEnv(gym.Env):
    """One seat of a two-player AEC game; the other seat is played by a snapshot from ``selfplay``.

    ## Description
    ``reset(seed)`` takes the seat from the seed's parity (0, even: the first mover; 1: the
    second), seeds the game from the env's RNG, draws the opponent's snapshot from the pool and
    lets it move until it is the learner's turn (if its replies are invalid until the game's
    ``max_cycles`` end the game, the game is dealt again from the env's RNG). ``step(text)`` plays the learner's move, then
    the opponent's, and returns the learner's next view.

    ## Observation
    The AEC env's view of the learner's seat (``image``, ``text``, ``mission``, ``actions``).

    ## Rewards
    The learner's rewards from the AEC env between two of its moves (PettingZoo's cumulative
    rewards: its own move's and those paid when the opponent's move ends the game).

    ## Info
    ``action`` (the parser's verdict on the learner's reply), ``seat``, ``opponent`` (the
    snapshot's update), ``seed``, and at the end ``success`` (the learner won).
    """

    metadata: dict[str, Any] = {"render_modes": []}
    RESTARTS = 10  # games dealt anew when the opponent's opening replies are all invalid until max_cycles

    def __init__(self, selfplay: SelfPlay) -> None:
        self.selfplay = selfplay
        self.aec = selfplay.make_game()
        agents = self.aec.possible_agents
        if len(agents) != 2:
            raise ValueError(f"self-play needs a two-player game; {self.aec} has {len(agents)} agents")
        self.observation_space = self.aec.observation_space(agents[0])
        self.action_space = self.aec.action_space(agents[0])
        self.builder = selfplay.builder()
        self.seat, self.opponent, self.seed_used = 0, -1, -1
        self._ret = 0.0
        self._parked = False
        self._snapshot: Snapshot | None = None

    @property
    def learner(self) -> str:
        return self.aec.possible_agents[self.seat]

    @property
    def rival(self) -> str:
        return self.aec.possible_agents[1 - self.seat]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        # a parked env (it sits out the rest of a collector's wave) plays no opponent and records nothing
        self._parked = bool((options or {}).get("parked"))
        self.seed_used = -1 if seed is None else int(seed)
        self.seat = int(seed) % 2 if seed is not None else int(self.np_random.integers(2))
        self.opponent = self.selfplay.pool.sample(self.np_random)
        # the env holds the snapshot itself: it may leave the pool while this episode runs on
        # across updates (collect_steps), and the episode keeps its opponent
        self._snapshot = self.selfplay.pool.get(self.opponent)
        for _ in range(self.RESTARTS):
            self.aec.reset(seed=int(self.np_random.integers(2**31)))
            self.builder.reset()
            self._ret = 0.0
            self._play_opponent()
            if not self._done():
                break
        else:  # the snapshot opened with invalid replies until max_cycles, in every restart
            raise RuntimeError(f"snapshot {self.opponent} wrote no legal opening move in {self.RESTARTS} games of {self.aec}")
        return self.aec.observe(self.learner), self._info()

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._done():
            raise RuntimeError("the episode is over: call reset()")
        learner = self.learner
        self.aec.step(action if isinstance(action, str) else str(action))
        verdict = dict(self.aec.infos[learner].get("action", {}))
        self._play_opponent()
        reward = float(self.aec._cumulative_rewards[learner])  # its rewards since its move (PettingZoo's)
        self._ret += reward
        terminated = bool(self.aec.terminations[learner])
        truncated = bool(self.aec.truncations[learner]) and not terminated
        info = self._info()
        info["action"] = verdict
        if terminated or truncated:
            # win 1, draw 1/2, loss (or a game cut by max_cycles) 0; the last reward holds the result
            score = 0.0 if truncated else 1.0 if reward > 0 else 0.5 if reward == 0 else 0.0
            info["success"] = score == 1.0
            if not self._parked:
                self.selfplay.finished(self.seed_used, self.seat, self.opponent, score, self._ret)
        return self.aec.observe(learner), reward, terminated, truncated, info

    def _done(self) -> bool:
        return bool(self.aec.terminations[self.learner] or self.aec.truncations[self.learner])

    def _play_opponent(self) -> None:
        """The snapshot moves while it is its turn (an invalid reply keeps the turn; ``max_cycles`` ends it)."""
        while not self._parked and not self._done() and self.aec.agent_selection == self.rival:
            obs = self.aec.observe(self.rival)
            if self._snapshot is None:
                raise RuntimeError("reset() draws the opponent first")
            reply = self.selfplay.reply(self._snapshot, self.builder.messages(obs), seed=int(self.np_random.integers(2**31)))
            self.builder.record(obs, reply)
            self.aec.step(reply)

    def _info(self) -> dict[str, Any]:
        return {"seat": self.seat, "opponent": self.opponent, "seed": self.seed_used}

    def close(self) -> None:
        self.aec.close()


class SelfPlayCollector(RolloutCollector):
    """The rollout collector whose episode seeds alternate in parity, so seats alternate."""

    _drawn = 0

    def _draw_seed(self) -> int:
        seed = super()._draw_seed()
        self._drawn += 1
        return seed - seed % 2 + self._drawn % 2  # TRAIN_SEEDS starts at 0: still in range

    def _park(self, envs: Any) -> None:
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[list(envs)] = True
        self.envs.reset(seed=[0 if m else None for m in mask], options={"reset_mask": mask, "parked": True})

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "drawn": self._drawn}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self._drawn = int(state.get("drawn", 0))


# The manager the trainer holds --------------------------------------------------------------------


class SelfPlay:
    """The pool, the frozen opponent and the log of one training run (see the module docstring).

    Args:
        spec: the config's ``opponent`` section.
        policy: the learner (its weights are borrowed for the opponent's moves).
        prompt: the prompt configuration (the opponent is prompted as the learner is).
        env_id: the single-agent view the run evaluates on (picks the prompt template).
        obs_mode: the game's observation mode.
        max_new_tokens, top_p: the learner's sampling settings (the opponent's temperature is its own).
        out: the run folder (``selfplay_log.csv``).
    """

    def __init__(
        self, spec: Any, policy: Policy, prompt: PromptConfig, *, env_id: str, obs_mode: str,
        max_new_tokens: int, top_p: float, out: Path,
    ) -> None:  # fmt: skip
        self.spec, self.policy, self.prompt = spec, policy, prompt
        self.env_id, self.obs_mode = env_id, obs_mode
        self.max_new_tokens, self.top_p = max_new_tokens, top_p
        self.pool = SnapshotPool(spec.pool_size, spec.sampling, spec.pfsp_power)
        self.log = Path(out) / "selfplay_log.csv"
        self.update = 0
        make_game(spec.game, obs_mode=obs_mode, **spec.kwargs).close()  # a bad game name fails now, not in the vector env

    def make_game(self) -> Any:
        return make_game(self.spec.game, obs_mode=self.obs_mode, **self.spec.kwargs)

    def builder(self) -> PromptBuilder:
        return PromptBuilder(self.prompt, env_id=self.env_id, attach_images=self.obs_mode != "text")

    def make_env(self, max_steps: int | None = None) -> gym.Env:
        env: gym.Env = SelfPlayEnv(self)
        return gym.wrappers.TimeLimit(env, max_steps) if max_steps else env

    def after_update(self, update: int) -> None:
        """Called after the warm-up (update 0) and every update: snapshot every ``snapshot_every``."""
        self.update = update
        if update % self.spec.snapshot_every == 0 and self.pool.get(update) is None:
            self.pool.add(update, snapshot_weights(self.policy))

    def reply(self, snapshot: Snapshot, messages: list[Any], seed: int) -> str:
        """The reply of ``snapshot`` to one conversation."""
        policy = self.policy
        conversations = [messages]
        inputs = policy.encode(conversations)
        with weights_of(policy, snapshot.weights), torch.no_grad():
            reply = policy.generate(
                policy.prompts(conversations, inputs), inputs=inputs, max_new_tokens=self.max_new_tokens,
                temperature=self.spec.temperature, top_p=self.top_p, seed=seed,
            )[0]  # fmt: skip
        return policy.decode(reply)

    def finished(self, seed: int, seat: int, opponent: int, score: float, ret: float) -> None:
        self.pool.record(opponent, score)
        outcome = {1.0: "win", 0.5: "draw"}.get(score, "loss")
        new = not self.log.exists()
        with self.log.open("a", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            if new:
                writer.writerow(LOG_COLUMNS)
            writer.writerow([self.update, seed, seat, opponent, outcome, f"{ret:.6g}"])
            f.flush()
            os.fsync(f.fileno())

    def state_dict(self) -> dict[str, Any]:
        return {"pool": self.pool.state_dict(), "update": self.update}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the pool; drop the log rows of episodes played after the checkpoint."""
        self.pool.load_state_dict(state["pool"])
        self.update = int(state["update"])
        if self.log.exists():
            with self.log.open(newline="", encoding="utf-8") as f:
                rows = [r for r in csv.DictReader(f) if int(r["update"]) < self.update]
            with self.log.open("w", newline="", encoding="utf-8") as f:
                writer = csv.DictWriter(f, fieldnames=LOG_COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
