"""The baselines' advantage estimators and losses against hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.advantages import gae, normalize  # noqa: E402
from rl4vlm_gym.baselines.common.losses import clipped_value_loss, k3_kl, masked_mean  # noqa: E402
from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step  # noqa: E402
from rl4vlm_gym.baselines.gigpo import GiGPOConfig, gigpo_advantages  # noqa: E402
from rl4vlm_gym.baselines.loop import LOOP, leave_one_out  # noqa: E402
from rl4vlm_gym.baselines.rl4vlm import action_start  # noqa: E402


def step(
    reward=0.0, value=None, terminated=False, truncated=False, next_value=0.0, episode=0, group=0, env=0, state="", valid=True
):
    return Step(
        env=env, episode=episode, group=group, t=0, prompt=Prompt([]), response=[1], text="", logprobs=torch.zeros(1),
        value=value, next_value=next_value, reward=reward, terminated=terminated, truncated=truncated, valid=valid, state_key=state,
    )  # fmt: skip


# GAE ----------------------------------------------------------------------------------------------


def test_gae_terminated_episode_does_not_bootstrap():
    # gamma 0.9, lambda 0.5: delta2 = 2 - 0.2 = 1.8; delta1 = 0.9*0.2 - 1 = -0.82; A1 = -0.82 + 0.45*1.8
    s = [step(1, 0.5), step(0, 1.0), step(2, 0.2, terminated=True, next_value=99.0)]
    gae(s, gamma=0.9, lam=0.5)
    assert [x.advantage for x in s] == pytest.approx([1.3955, -0.01, 1.8])
    assert [x.ret for x in s] == pytest.approx([1.8955, 0.99, 2.0])


def test_gae_truncated_episode_bootstraps_from_its_final_observation():
    # delta2 = 2 + 0.9*3 - 0.2 = 4.5; A1 = -0.82 + 0.45*4.5 = 1.205; A0 = 1.4 + 0.45*1.205
    s = [step(1, 0.5), step(0, 1.0), step(2, 0.2, truncated=True, next_value=3.0)]
    gae(s, gamma=0.9, lam=0.5)
    assert [x.advantage for x in s] == pytest.approx([1.94225, 1.205, 4.5])


def test_gae_stops_at_episode_boundaries_and_bootstraps_the_cut_end():
    # step 0 ends an episode; step 1 starts the next and is cut by the rollout (next_value 1.0)
    s = [step(1, 0.5, terminated=True), step(0, 1.0, next_value=1.0, episode=1)]
    gae(s, gamma=0.9, lam=0.5)
    assert [x.advantage for x in s] == pytest.approx([0.5, -0.1])


def test_normalize_standardises_over_the_buffer():
    s = [step() for _ in range(3)]
    for x, a in zip(s, (1.0, 2.0, 3.0), strict=True):
        x.advantage = a
    normalize(s)
    assert [x.advantage for x in s] == pytest.approx([-1.2247449, 0.0, 1.2247449], rel=1e-6)


# LOOP ----------------------------------------------------------------------------------------------


def test_leave_one_out_baseline():
    assert leave_one_out([1, 0, 0, 1]) == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])
    r = np.array([3.0, 1.0, 2.0])
    assert leave_one_out(r) == pytest.approx(3 / 2 * (r - r.mean()))  # K/(K-1) (R_k - mean)
    assert leave_one_out([5.0]) == pytest.approx([0.0])
    assert leave_one_out([1, 0], normalize=True) == pytest.approx([2.0, -2.0], rel=1e-6)  # std 0.5


def test_loop_drops_rollouts_with_tiny_advantages():
    buffer = RolloutBuffer()
    for episode, reward in enumerate([1.0, 1.0, 1.0, 0.0]):
        buffer.steps += [step(0.0, episode=episode), step(reward, terminated=True, episode=episode)]
    loop = LOOP({"abs_adv_threshold": 0.01})
    stats = loop.estimate(buffer)
    kept = loop.select(buffer)
    assert [t[0].episode for t in kept] == [3, 0, 1, 2][-4:] or len(kept) == 4
    assert [t[0].advantage for t in buffer.trajectories()] == pytest.approx([1 / 3, 1 / 3, 1 / 3, -1.0])
    buffer2 = RolloutBuffer()
    for episode in range(3):
        buffer2.steps.append(step(1.0, terminated=True, episode=episode))
    loop.estimate(buffer2)
    assert loop.select(buffer2) == [] and stats["kept_fraction"] == 1.0


# GiGPO ---------------------------------------------------------------------------------------------


def gigpo_group(penalised=False):
    # tau1: states a, b with rewards 0, 1; tau2: states a, c, b with rewards 0, 0, 0
    tau1 = [step(0, state="a", valid=not penalised), step(1, state="b", terminated=True)]
    tau2 = [step(0, state="a", episode=1), step(0, state="c", episode=1), step(0, state="b", terminated=True, episode=1)]
    return [tau1, tau2]


def test_gigpo_episode_plus_anchor_state_advantages_mean_norm():
    # A^E = +-0.5. Step returns (gamma 0.5): tau1 [0.5, 1], tau2 [0, 0, 0].
    # Anchor a: {0.5, 0} -> +-0.25; b: {1, 0} -> +-0.5; c alone -> 0.
    config = GiGPOConfig(gamma=0.5, invalid_penalty=0.0)
    a1, a2 = gigpo_advantages(gigpo_group(), config)
    assert a1 == pytest.approx([0.75, 1.0])
    assert a2 == pytest.approx([-0.75, -0.5, -1.0])
    b1, b2 = gigpo_advantages(gigpo_group(), GiGPOConfig(gamma=0.5, invalid_penalty=0.0, step_weight=2.0))
    assert b1 == pytest.approx([1.0, 1.5]) and b2 == pytest.approx([-1.0, -0.5, -1.5])


def test_gigpo_mean_std_norm_uses_the_sample_std():
    config = GiGPOConfig(gamma=0.5, invalid_penalty=0.0, mode="mean_std_norm")
    a1, a2 = gigpo_advantages(gigpo_group(), config)
    s = 1 / np.sqrt(2)  # (R - mean) / std(ddof=1) of any two distinct values is +-1/sqrt(2)
    assert a1 == pytest.approx([2 * s, 2 * s], rel=1e-5)
    assert a2 == pytest.approx([-2 * s, -s, -2 * s], rel=1e-5)


def test_gigpo_unique_states_reduce_to_episode_advantages():
    tau1 = [step(1, state="x", terminated=True)]
    tau2 = [step(0, state="y", terminated=True, episode=1)]
    assert gigpo_advantages([tau1, tau2], GiGPOConfig(invalid_penalty=0.0)) == [pytest.approx([0.5]), pytest.approx([-0.5])]
    assert gigpo_advantages([tau1], GiGPOConfig(invalid_penalty=0.0)) == [pytest.approx([0.0])]  # a group of one


def test_gigpo_episode_stats_over_step_rows_and_invalid_penalty():
    # verl-agent's cross-step statistics: rows 1, 1, 0, 0, 0 -> mean 0.4
    a1, a2 = gigpo_advantages(gigpo_group(), GiGPOConfig(gamma=0.5, invalid_penalty=0.0, episode_stats="steps"))
    assert a1 == pytest.approx([0.6 + 0.25, 0.6 + 0.5]) and a2 == pytest.approx([-0.4 - 0.25, -0.4, -0.4 - 0.5])
    # an invalid first step of tau1 costs 0.1: R(tau1) = 0.9, its step return 0.5*1 - 0.1 = 0.4
    p1, p2 = gigpo_advantages(gigpo_group(penalised=True), GiGPOConfig(gamma=0.5, invalid_penalty=0.1))
    assert p1 == pytest.approx([0.45 + 0.2, 0.45 + 0.5]) and p2 == pytest.approx([-0.45 - 0.2, -0.45, -0.45 - 0.5])


def test_gigpo_config_rejects_unknown_modes():
    with pytest.raises(ValueError, match="mode"):
        GiGPOConfig(mode="std")


# RL4VLM's thought/action split -------------------------------------------------------------------------


def test_action_split_by_text_position():
    pieces = ['{"thoughts": "go', " left", '", "', "action", '": "+"}']
    assert action_start(pieces) == 2  # the token holding the opening quote of "action"
    assert action_start(["+"]) == 0  # no action key: all action
    # a thought that mentions the key: the last key starts the action
    pieces = ['{"thoughts": "', 'the "action": key', '", ', '"action": "-"}']
    assert action_start(pieces) == 3


# Loss pieces --------------------------------------------------------------------------------------


def test_k3_kl_is_zero_at_the_reference_and_positive_elsewhere():
    logp = torch.tensor([-1.0, -2.0])
    assert k3_kl(logp, logp).tolist() == [0.0, 0.0]
    kl = k3_kl(torch.tensor([-1.0]), torch.tensor([-2.0]))
    assert kl.item() == pytest.approx(np.exp(-1) + 1 - 1)
    assert k3_kl(torch.tensor([0.0]), torch.tensor([-50.0]), clamp=10.0).item() == pytest.approx(np.exp(-10) + 10 - 1)


def test_clipped_value_loss_is_pessimistic():
    # V moved from 0 to 1 toward R = 2 with clip 0.1: the clipped prediction 0.1 is worse -> (0.1-2)^2
    assert clipped_value_loss(torch.tensor([1.0]), torch.tensor([0.0]), torch.tensor([2.0]), 0.1).item() == pytest.approx(1.9**2)
    assert clipped_value_loss(torch.tensor([1.0]), torch.tensor([0.0]), torch.tensor([0.5]), 0.1).item() == pytest.approx(
        0.5**2
    )  # unclipped is worse here


def test_masked_mean():
    x, m = torch.tensor([[1.0, 3.0, 100.0]]), torch.tensor([[1.0, 1.0, 0.0]])
    assert masked_mean(x, m).item() == 2.0 and masked_mean(x, m, dim=1).tolist() == [2.0]
