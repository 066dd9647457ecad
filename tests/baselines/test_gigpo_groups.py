"""GiGPO's ``estimate`` on a buffer of several groups: each group is its own world.

Both of GiGPO's statistics live inside one episode group (Feng et al. 2025, Eq. 3 and Eq. 4-7): the
episode-level advantage normalises an episode's return by its *group's* returns, and the anchor-state
groups are the steps of *that group's* episodes sharing a state key. Two groups start from different
seeds, so the same key in two groups is two different situations; pooling them (one group per
buffer, or anchors across groups) is a bug that the one-group tests cannot see.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction as F

import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step  # noqa: E402
from rl4vlm_gym.baselines.gigpo import GiGPO, GiGPOConfig, gigpo_advantages  # noqa: E402


def _step(episode: int, group: int, t: int, state: str, reward: float, last: bool = False) -> Step:
    return Step(
        env=episode, episode=episode, group=group, t=t, prompt=Prompt([]), response=[1], text="",
        logprobs=torch.zeros(1), reward=reward, terminated=last, state_key=state,
    )  # fmt: skip


# (episode, group, [(state, reward), ...]): group 0 holds episodes 0 and 3, group 1 episodes 1, 2, 4,
# so neither a group's episode numbers nor its steps in the buffer are contiguous.
EPISODES = [
    (0, 0, [("a", 0), ("b", 1)]),
    (1, 1, [("b", 0), ("a", 2)]),
    (2, 1, [("b", 0), ("a", 0), ("c", 1)]),
    (3, 0, [("a", 0), ("c", 0)]),
    (4, 1, [("b", 0)]),
]


def _buffer() -> RolloutBuffer:
    """The episodes' steps interleaved in time, as a vector env's collector writes them."""
    buffer = RolloutBuffer()
    for t in range(3):
        for episode, group, steps in EPISODES:
            if t < len(steps):
                state, reward = steps[t]
                buffer.steps.append(_step(episode, group, t, state, reward, last=t == len(steps) - 1))
    return buffer


def test_estimate_keeps_groups_apart_when_state_keys_overlap_across_groups():
    # gamma = 1/2, omega = 1, mean_norm (F = 1), no invalid actions. Step returns R_t = r_t + R_{t+1}/2.
    #
    # Group 0: episode 0  a:0 -> b:1   R(tau) = 1   step returns a: 0 + 1/2 = 1/2, b: 1
    #          episode 3  a:0 -> c:0   R(tau) = 0   step returns a: 0,           c: 0
    #   A^E: mean of {1, 0} = 1/2            -> episode 0: +1/2, episode 3: -1/2
    #   A^S: anchor a {1/2, 0}, mean 1/4     -> episode 0 a: +1/4, episode 3 a: -1/4
    #        b (episode 0 only), c (episode 3 only): anchor groups of one -> 0
    #   A:   episode 0 [1/2 + 1/4, 1/2 + 0] = [3/4, 1/2];  episode 3 [-1/2 - 1/4, -1/2 + 0] = [-3/4, -1/2]
    #
    # Group 1: episode 1  b:0 -> a:2          R = 2   step returns b: 0 + 2/2 = 1,   a: 2
    #          episode 2  b:0 -> a:0 -> c:1   R = 1   step returns c: 1, a: 1/2, b: 1/4
    #          episode 4  b:0                 R = 0   step returns b: 0
    #   A^E: mean of {2, 1, 0} = 1           -> +1, 0, -1
    #   A^S: anchor b {1, 1/4, 0}, mean 5/12 -> episode 1: 7/12, episode 2: -1/6, episode 4: -5/12
    #        anchor a {2, 1/2}, mean 5/4     -> episode 1: +3/4, episode 2: -3/4
    #        c (episode 2 only) -> 0
    #   A:   episode 1 [1 + 7/12, 1 + 3/4] = [19/12, 7/4]
    #        episode 2 [0 - 1/6, 0 - 3/4, 0 + 0] = [-1/6, -3/4, 0]
    #        episode 4 [-1 - 5/12] = [-17/12]
    #
    # Pooling the buffer into one group would give A^E over {1, 0, 2, 1, 0} (mean 4/5), anchor a over
    # {1/2, 0, 2, 1/2}, and c over {0, 1}: c is alone in each group, so even pooling only the anchors
    # moves episode 3's last step from -1/2 and episode 2's from 0.
    buffer = _buffer()
    stats = GiGPO({"gamma": 0.5, "step_weight": 1.0, "mode": "mean_norm", "invalid_penalty": 0.0}).estimate(buffer)
    expected = {
        0: [F(3, 4), F(1, 2)],
        1: [F(19, 12), F(7, 4)],
        2: [F(-1, 6), F(-3, 4), F(0)],
        3: [F(-3, 4), F(-1, 2)],
        4: [F(-17, 12)],
    }
    got = {tau[0].episode: [s.advantage for s in tau] for tau in buffer.trajectories()}
    assert got == {e: pytest.approx([float(x) for x in a], abs=1e-12) for e, a in expected.items()}, (
        "GiGPO's advantages must be computed within each episode group (pooled across groups?)"
    )
    assert all(s.ret == s.advantage for s in buffer.steps)  # GiGPO has no critic: the return target is A
    # anchor groups per group: group 0 a:2, b:1, c:1; group 1 a:2, b:3, c:1 (pooled: a:4, b:4, c:2)
    assert stats["anchor_group_size"] == pytest.approx(10 / 6)


def test_estimate_equals_each_group_alone_in_mean_std_norm():
    # The same buffer under F = std (sample std, ddof 1) and omega = 2: estimate must give every step
    # what gigpo_advantages gives its group on its own, and pooling must give something else.
    config = {"gamma": 0.5, "step_weight": 2.0, "mode": "mean_std_norm", "invalid_penalty": 0.0}
    buffer = _buffer()
    GiGPO(config).estimate(buffer)
    alone = [a for group in buffer.groups() for a in gigpo_advantages(group, GiGPOConfig(**config))]
    estimated = [[s.advantage for s in tau] for group in buffer.groups() for tau in group]
    assert estimated == [pytest.approx(a, abs=1e-12) for a in alone]
    pooled = gigpo_advantages([tau for group in buffer.groups() for tau in group], GiGPOConfig(**config))
    assert estimated != [pytest.approx(a, abs=1e-6) for a in pooled]  # the case tells the two apart


@pytest.mark.extra("train")
def test_a_training_update_with_two_groups_estimates_each_group_alone(tmp_path):
    # One GiGPO update with rollout.groups: 2 (one wave of two groups of two on four envs), the tiny
    # offline model on CPU. The env makes a move of every reply ("-" or "+" by the reply's length:
    # the tiny model rarely writes an admissible action), so episodes differ inside a group. With
    # seed 14 the two groups start from different states with the same target and meet in one state
    # (target=3|current=4), and their returns differ ({1, 1} and {1, 0}), so pooling changes the
    # numbers (seeds 0 and 11 give two identical groups, where pooling is invisible).
    import gymnasium as gym

    from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
    from rl4vlm_gym.baselines.config import default_config_path, load_config
    from rl4vlm_gym.baselines.trainer import Trainer

    class Moves(gym.Wrapper):
        def step(self, action):
            return self.env.step(("-", "+")[len(action) % 2])

    def make_env():
        return Moves(gym.make("rl4vlm/NumberLine-v0", level=0, obs_mode="text", max_episode_steps=3))

    overrides = {
        "updates": 1, "warmup.steps": 0, "generation.max_new_tokens": 4, "seed": 14, "tensorboard": False,
        "rollout.num_envs": 4, "rollout.groups": 2, "rollout.group_size": 2, "optim.minibatch_size": 4,
        "env.id": "rl4vlm/NumberLine-v0", "env.kwargs": {"level": 0, "obs_mode": "text"},
    }  # fmt: skip
    trainer = Trainer(load_config(default_config_path("gigpo", None, "cpu"), overrides), tmp_path)
    trainer.collector.close()  # the same collector as the trainer's, on the env that moves
    c = trainer.config
    trainer.collector = RolloutCollector(
        make_env, 4, trainer.policy, trainer.prompt, GenerationSettings(**c.generation.model_dump()),
        attach_images=False, seed=c.seed, group_size=c.rollout.group_size, reference=trainer.algo.reference,
    )  # fmt: skip
    buffers: list[RolloutBuffer] = []
    estimate = trainer.algo.estimate

    def recorded(buffer: RolloutBuffer) -> dict[str, float]:  # the buffer the update estimated, kept for the checks
        buffers.append(buffer)
        return estimate(buffer)

    trainer.algo.estimate = recorded  # type: ignore[method-assign]
    before = trainer.policy.trainable_state()
    try:
        row = trainer.train_one_update()
    finally:
        trainer.collector.close()
    (buffer,) = buffers
    groups = buffer.groups()
    assert [len(g) for g in groups] == [2, 2] and row["episodes"] == 4
    keys = [{s.state_key for tau in g for s in tau} for g in groups]
    assert keys[0] & keys[1], "the case needs a state key in both groups"
    config = trainer.algo.config
    alone = [a for group in groups for a in gigpo_advantages(group, config)]
    estimated = [[s.advantage for s in tau] for group in groups for tau in group]
    assert estimated == [pytest.approx(a, abs=1e-12) for a in alone], "the update pooled the two groups"
    pooled = gigpo_advantages([tau for group in groups for tau in group], config)
    assert estimated != [pytest.approx(a, abs=1e-6) for a in pooled]  # the rollout tells the two apart
    sizes = [n for g in groups for n in Counter(s.state_key for tau in g for s in tau).values()]
    assert row["anchor_group_size"] == pytest.approx(sum(sizes) / len(sizes))
    for key in ("loss", "policy_loss", "grad_norm", "advantage_std"):
        assert torch.isfinite(torch.tensor(row[key])), f"{key} is {row[key]}"
    after = trainer.policy.trainable_state()
    assert any(not torch.equal(before[k], after[k]) for k in before), "the update left the weights unchanged"
