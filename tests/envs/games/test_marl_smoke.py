"""A MARL library trains on the numeric interface (issue 34): Tianshou's DQN, one learner per seat.

Tianshou (PyPI ``tianshou``, 2.0) reads PettingZoo AEC envs through its ``PettingZooEnv``: the
observation's ``observation`` and ``action_mask`` keys (the mask keeps its Q-learning to legal
moves) and ``agent_id`` dispatch each turn to that seat's learner, so turn-based games need no
adapter. A few updates of self-play on Kuhn poker: the run must finish, and each learner's network
must have changed and stay finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

from rl4vlm_gym.envs.games.numeric import numeric_env

# Tianshou and torch are imported by the tests that use them, not at collection (seconds per xdist
# worker); the marker skips them where the marl extra is absent.
pytestmark = pytest.mark.extra("marl")


def kuhn() -> Any:
    from tianshou.env.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(numeric_env("kuhn_poker"))


def learner(env: Any) -> Any:
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.utils.net.common import Net

    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n, hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-2), gamma=1.0, target_update_freq=20)


@pytest.fixture
def one_thread():
    """Seeded, one torch thread (the CI machine is shared); the process's settings restored after."""
    import torch

    threads, np_state, torch_state = torch.get_num_threads(), np.random.get_state(), torch.get_rng_state()
    torch.set_num_threads(1)
    np.random.seed(0)  # Tianshou's exploration draws from NumPy's global RNG
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
    np.random.set_state(np_state)
    torch.set_rng_state(torch_state)


def test_tianshous_wrapper_reads_each_turn_of_numeric_kuhn_poker() -> None:
    """The inner loop's check (the DQN run below is slow: Numba first compiles Tianshou's return
    kernels, ~8 s): Tianshou's PettingZooEnv reads each turn's seat, observation vector and legal-move
    mask from our env, and whole hands play out, zero-sum."""
    env = kuhn()
    assert env.agents == ["player_0", "player_1"] and env.action_space.n == 2
    rng = np.random.default_rng(0)
    seats = set()
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            assert obs["obs"].shape == env.observation_space["observation"].shape
            assert list(obs["mask"]) == [bool(m) for m in env.env.observe(obs["agent_id"])["action_mask"]]
            seats.add(obs["agent_id"])
            obs, rewards, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
            done = terminated or truncated
        assert sum(rewards) == 0 and max(abs(r) for r in rewards) >= 1, rewards  # the antes change hands
    assert seats == set(env.agents)


@pytest.mark.slow  # Numba compiles Tianshou's kernels (~8 s of 9); the test above is the quick check
def test_tianshou_dqn_self_play_trains_on_numeric_kuhn_poker(one_thread: None) -> None:
    import torch
    from tianshou.algorithm import MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, CollectStats, ReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    env = kuhn()
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner(env), learner(env)], env=env)
    nets = {agent: algorithm.get_algorithm(agent).policy.model for agent in env.agents}  # each seat's Q-network
    before = {agent: [p.detach().clone() for p in net.parameters()] for agent, net in nets.items()}
    train = DummyVectorEnv([kuhn])
    train.seed(0)  # PettingZooEnv.seed resets our env with the seed
    collector = Collector[CollectStats](algorithm, train, ReplayBuffer(1000), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=64)  # a first batch to sample from
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=1,
            epoch_num_steps=60,
            collection_step_num_env_steps=10,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.5,
            multi_agent_return_reduction=lambda returns: returns[:, 0],
            show_progress=False,
            verbose=False,
        )
    )
    assert result.train_step >= 60 and result.update_step >= 6 and result.train_episode > 10
    for agent, net in nets.items():
        after = list(net.parameters())
        assert any(not torch.equal(p, q) for p, q in zip(after, before[agent], strict=True)), agent  # updated
        assert all(torch.isfinite(p).all() for p in after), agent
    # the learned policy: finite Q-values for every information state of the first move
    observations = np.array([numeric_env("kuhn_poker").observe("player_0")["observation"]])
    q = nets["player_0"](observations)[0]
    assert torch.isfinite(q).all() and q.shape == (1, 2)
