"""The baselines' advantage estimators and losses against hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.advantages import gae, normalize  # noqa: E402
from rl4vlm_gym.baselines.common.algorithm import aggregation_weights  # noqa: E402
from rl4vlm_gym.baselines.common.losses import clipped_value_loss, k3_kl, low_var_kl, masked_mean  # noqa: E402
from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step  # noqa: E402
from rl4vlm_gym.baselines.gigpo import GiGPO, GiGPOConfig, gigpo_advantages  # noqa: E402
from rl4vlm_gym.baselines.loop import LOOP, leave_one_out, loop_token_loss  # noqa: E402
from rl4vlm_gym.baselines.rl4vlm import RL4VLM, action_start  # noqa: E402
from rl4vlm_gym.baselines.vl_dac import VLDAC  # noqa: E402


def step(
    reward=0.0,
    value=None,
    terminated=False,
    truncated=False,
    next_value=0.0,
    episode=0,
    group=0,
    env=0,
    state="",
    valid=True,
    tokens=1,
):
    return Step(
        env=env, episode=episode, group=group, t=0, prompt=Prompt([]), response=[1] * tokens, text="",
        logprobs=torch.zeros(tokens), value=value, next_value=next_value, reward=reward, terminated=terminated,
        truncated=truncated, valid=valid, state_key=state,
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


def test_gae_bootstraps_a_truncation_in_the_middle_of_a_stream():
    # step 1 is cut by a time limit (final observation worth 3.0); step 2 starts the next episode.
    # delta1 = 0 + 0.9*3 - 1 = 1.7 (no carry past the cut); delta0 = 1 + 0.9*1 - 0.5 = 1.4, A0 = 1.4 + 0.45*1.7
    s = [step(1, 0.5), step(0, 1.0, truncated=True, next_value=3.0), step(2, 0.2, terminated=True, episode=1)]
    gae(s, gamma=0.9, lam=0.5)
    assert s[1].advantage == pytest.approx(1.7), "GAE did not bootstrap a mid-stream truncation from its next_value"
    assert [x.advantage for x in s] == pytest.approx([2.165, 1.7, 1.8]), "GAE carried advantage across a truncation"


def test_gae_with_gamma_and_lambda_one_is_return_minus_value():
    rng = np.random.default_rng(0)
    for _ in range(200):
        stream, expected = [], []
        for episode in range(int(rng.integers(1, 4))):  # whole episodes, then one cut by the rollout
            length, ending = int(rng.integers(1, 6)), rng.choice(["terminated", "truncated", "cut"])
            rewards, values = rng.normal(size=length), rng.normal(size=length)
            bootstrap = 0.0 if ending == "terminated" else float(rng.normal())
            for t in range(length):
                last = t == length - 1
                stream.append(step(rewards[t], values[t], terminated=last and ending == "terminated",
                                   truncated=last and ending == "truncated", next_value=bootstrap if last else 0.0,
                                   episode=episode))  # fmt: skip
                expected.append(rewards[t:].sum() + bootstrap - values[t])
            if ending == "cut":
                break
        gae(stream, gamma=1.0, lam=1.0)
        assert [x.advantage for x in stream] == pytest.approx(expected), "GAE(1, 1) is not return minus value"
        assert [x.ret for x in stream] == pytest.approx([a + x.value for a, x in zip(expected, stream, strict=True)])


def test_gae_stops_at_episode_boundaries_and_bootstraps_the_cut_end():
    # step 0 ends an episode; step 1 starts the next and is cut by the rollout (next_value 1.0)
    s = [step(1, 0.5, terminated=True), step(0, 1.0, next_value=1.0, episode=1)]
    gae(s, gamma=0.9, lam=0.5)
    assert [x.advantage for x in s] == pytest.approx([0.5, -0.1])


def test_normalize_standardises_with_the_sample_std_as_torch_std():
    s = [step() for _ in range(3)]
    for x, a in zip(s, (1.0, 2.0, 3.0), strict=True):
        x.advantage = a
    normalize(s)  # mean 2, torch.std([1, 2, 3]) = 1 (ddof 1; ddof 0 would give +-1.2247)
    assert [x.advantage for x in s] == pytest.approx([-1.0, 0.0, 1.0], rel=1e-6), "normalisation is not torch.std's"
    one = [step()]
    one[0].advantage = 5.0
    normalize(one)  # a buffer of one has no spread: 0, not NaN
    assert one[0].advantage == 0.0, "a buffer of one step must get advantage 0"
    same = [step(), step()]
    for x in same:
        x.advantage = 2.0
    normalize(same)
    assert [x.advantage for x in same] == [0.0, 0.0]


# LOOP ----------------------------------------------------------------------------------------------


def test_leave_one_out_baseline():
    assert leave_one_out([1, 0, 0, 1]) == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])
    r = np.array([3.0, 1.0, 2.0])
    assert leave_one_out(r) == pytest.approx(3 / 2 * (r - r.mean()))  # K/(K-1) (R_k - mean)
    assert leave_one_out([5.0]) == pytest.approx([0.0])
    # RwNorm divides by torch.std of the returns: std([1, 0]) = 1/sqrt(2) (ddof 1)
    assert leave_one_out([1, 0], normalize=True) == pytest.approx([np.sqrt(2), -np.sqrt(2)], rel=1e-6), (
        "RwNorm is not torch.std's"
    )
    assert leave_one_out([5.0], normalize=True) == pytest.approx([0.0])


def loop_buffer(returns):
    buffer = RolloutBuffer()
    for episode, reward in enumerate(returns):
        buffer.steps += [step(0.0, episode=episode), step(reward, terminated=True, episode=episode)]
    return buffer


def test_loop_drops_rollouts_with_tiny_advantages():
    buffer = loop_buffer([0.0, 0.015, 0.03])  # A = -0.0225, 0, +0.0225
    loop = LOOP({"abs_adv_threshold": 0.01})
    stats = loop.estimate(buffer)
    assert [t[0].advantage for t in buffer.trajectories()] == pytest.approx([-0.0225, 0.0, 0.0225])
    assert [t[0].episode for t in loop.select(buffer)] == [0, 2]
    assert stats["kept_fraction"] == pytest.approx(2 / 3)
    # |A| = 0.02 exactly: kept at the threshold, dropped just above it, kept just below
    buffer = loop_buffer([0.0, 0.02])
    for threshold, kept in ((0.02, [0, 1]), (0.0200001, []), (0.0199999, [0, 1])):
        loop = LOOP({"abs_adv_threshold": threshold})
        loop.estimate(buffer)
        assert [t[0].episode for t in loop.select(buffer)] == kept, threshold


def loop_example():
    """Two rollouts: one of 1 token with A = +1; one of 3 tokens (two steps: 1 and 2 tokens), A = -1."""
    batch = [step(episode=0, tokens=1), step(episode=1, tokens=1), step(episode=1, tokens=2)]
    for s, a in zip(batch, (1.0, -1.0, -1.0), strict=True):
        s.advantage = a
    mask = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    return batch, mask


@pytest.mark.parametrize(
    "mode, loss, gradients",
    [
        ("seq-mean-token-mean", 0.0, [-0.5, 1 / 6, 1 / 6, 1 / 6]),  # LOOP's (apple/ml-loop)
        ("token-mean", 0.5, [-0.25, 0.25, 0.25, 0.25]),
        ("seq-mean-token-sum", 1.0, [-0.5, 0.5, 0.5, 0.5]),
    ],
)
def test_loop_aggregates_the_token_mean_of_each_rollout_then_the_mean_over_rollouts(mode, loss, gradients):
    batch, mask = loop_example()
    loop = LOOP() if mode == "seq-mean-token-mean" else LOOP({"loss_agg_mode": mode})
    assert loop.aggregation == mode
    logprobs = torch.full((3, 2), -1.0, requires_grad=True)
    advantages = torch.tensor([[1.0], [-1.0], [-1.0]])
    value = loop.weights(batch).tokens_loss(loop_token_loss(logprobs, logprobs.detach(), advantages, 0.1), mask)  # rho = 1
    value.backward()
    assert value.item() == pytest.approx(loss, abs=1e-7), f"LOOP's {mode} loss of the worked example"
    got = [logprobs.grad[0, 0], logprobs.grad[1, 0], logprobs.grad[2, 0], logprobs.grad[2, 1]]
    assert [g.item() for g in got] == pytest.approx(gradients), f"LOOP's {mode} per-token gradients"


def test_aggregation_weights_of_each_mode():
    batch, _ = loop_example()
    step_seq = aggregation_weights(batch, "seq-mean-token-mean")  # each step its own sequence
    assert step_seq.token.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 6]) and step_seq.share.sum().item() == pytest.approx(1)
    rows = aggregation_weights(batch, "seq-mean")
    assert rows.token.tolist() == pytest.approx([1 / 3] * 3) and rows.tokens.tolist() == [1, 1, 1]
    assert VLDAC().aggregation == "seq-mean-token-mean" and GiGPO().aggregation == "token-mean"
    assert RL4VLM().aggregation == "seq-mean"
    with pytest.raises(ValueError, match="loss_agg_mode"):
        LOOP({"loss_agg_mode": "token-sum"})
    with pytest.raises(ValueError, match="loss_agg_mode"):
        GiGPO({"loss_agg_mode": "mean"})


# GiGPO ---------------------------------------------------------------------------------------------


def gigpo_group(penalised=False):
    # tau1: states a, b with rewards 0, 1; tau2: states a, c, b with rewards 0, 0, 0
    tau1 = [step(0, state="a"), step(1, state="b", terminated=True, valid=not penalised)]
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


def test_gigpo_group_of_one_takes_mean_0_and_std_1_as_verl_agent():
    tau = [step(0, state="x"), step(2, state="y", terminated=True)]
    # one episode: mean 0 and std 1, so A^E is its return; anchor groups of one: A^S = 0
    assert gigpo_advantages([tau], GiGPOConfig(invalid_penalty=0.0)) == [pytest.approx([2.0, 2.0])], (
        "verl: a group of one has mean 0"
    )
    std_norm = GiGPOConfig(invalid_penalty=0.0, mode="mean_std_norm")
    assert gigpo_advantages([tau], std_norm) == [pytest.approx([2 / (1 + 1e-6)] * 2)]
    # over step rows: one row alone is a group of one; two rows of one episode have no spread
    assert gigpo_advantages([[step(3, state="x", terminated=True)]], GiGPOConfig(episode_stats="steps")) == [pytest.approx([3.0])]
    assert gigpo_advantages([tau], GiGPOConfig(episode_stats="steps")) == [pytest.approx([0.0, 0.0])]


def test_gigpo_episode_stats_over_step_rows():
    # verl-agent's cross-step statistics: rows 1, 1, 0, 0, 0 -> mean 0.4
    a1, a2 = gigpo_advantages(gigpo_group(), GiGPOConfig(gamma=0.5, invalid_penalty=0.0, episode_stats="steps"))
    assert a1 == pytest.approx([0.6 + 0.25, 0.6 + 0.5]) and a2 == pytest.approx([-0.4 - 0.25, -0.4, -0.4 - 0.5])


def test_gigpo_invalid_penalty_costs_only_its_own_row_as_verl_agent():
    # tau1's *last* step (state b) is invalid, p = 0.1, gamma 0.5. R(tau1) = 1, R(tau2) = 0.
    # Episode term: row scores tau1 [1, 0.9], tau2 [0, 0, 0]; mean over episodes 0.5
    #   -> A^E tau1 [0.5, 0.4], tau2 [-0.5, -0.5, -0.5].
    # Step returns from the env's rewards, tau1 [0.5, 1], then -0.1 on the invalid row only: [0.5, 0.9]
    #   (penalising r_t before discounting would give [0.45, 0.9]); tau2 [0, 0, 0].
    # Anchors: a {0.5, 0} -> +-0.25; b {0.9, 0} -> +-0.45; c alone -> 0.
    p1, p2 = gigpo_advantages(gigpo_group(penalised=True), GiGPOConfig(gamma=0.5, invalid_penalty=0.1))
    assert p1 == pytest.approx([0.75, 0.85]), "the invalid-action penalty must cost only its own row, undiscounted"
    assert p2 == pytest.approx([-0.75, -0.5, -0.95])
    # over step rows: scores 1, 0.9, 0, 0, 0 -> mean 0.38
    q1, q2 = gigpo_advantages(gigpo_group(penalised=True), GiGPOConfig(gamma=0.5, invalid_penalty=0.1, episode_stats="steps"))
    assert q1 == pytest.approx([0.62 + 0.25, 0.52 + 0.45]) and q2 == pytest.approx([-0.38 - 0.25, -0.38, -0.38 - 0.45])


def test_gigpo_estimate_keeps_each_group_apart_when_state_keys_overlap():
    # Group 0 is gigpo_group() (hand-worked above: [0.75, 1.0], [-0.75, -0.5, -1.0]). Group 1 visits
    # the same states a and b: tau3 a:0, b:2; tau4 a:0, b:0. Its own A^E = +-1; step returns
    # (gamma 0.5) tau3 [1, 2], tau4 [0, 0], so anchor a: +-0.5, b: +-1. Pooling the groups (one
    # mean over the four returns, anchors across groups) gives other numbers.
    buffer = RolloutBuffer()
    buffer.steps += [s for tau in gigpo_group() for s in tau]
    buffer.steps += [step(0, state="a", episode=2, group=1), step(2, state="b", terminated=True, episode=2, group=1)]
    buffer.steps += [step(0, state="a", episode=3, group=1), step(0, state="b", terminated=True, episode=3, group=1)]
    stats = GiGPO({"gamma": 0.5, "invalid_penalty": 0.0}).estimate(buffer)
    advantages = [[s.advantage for s in tau] for tau in buffer.trajectories()]
    assert advantages == [
        pytest.approx([0.75, 1.0]),
        pytest.approx([-0.75, -0.5, -1.0]),
        pytest.approx([1.5, 2.0]),
        pytest.approx([-1.5, -2.0]),
    ]
    assert stats["anchor_group_size"] == pytest.approx((2 + 2 + 1 + 2 + 2) / 5)  # a, b, c | a, b


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
    assert k3_kl(torch.tensor([0.0]), torch.tensor([-50.0])).item() == pytest.approx(49.0)  # VL-DAC's is unclamped


@pytest.mark.parametrize(
    "d, value, gradient",
    [
        (-10.5, np.exp(-10.5) + 9.5, 1 - np.exp(-10.5)),  # k3 not yet capped: 9.500, gradient ~1 (not 9.000 and 0)
        (-10.99, np.exp(-10.99) + 9.99, 1 - np.exp(-10.99)),  # just below the cap of 10
        (-11.01, 10.0, 0.0),  # just above: capped
        (-25.0, 10.0, 0.0),  # d clamped to -20, then the cap
        (2.0, np.exp(2) - 3, 1 - np.exp(2)),
        (3.0, 10.0, 0.0),
    ],
)
def test_low_var_kl_is_verls(d, value, gradient):
    logp = torch.tensor([0.0], requires_grad=True)
    kl = low_var_kl(logp, torch.tensor([d]))
    kl.backward()
    assert kl.item() == pytest.approx(value, rel=1e-5), f"low_var_kl({d}) is not verl's"
    assert logp.grad.item() == pytest.approx(gradient, rel=1e-4, abs=1e-6), f"low_var_kl's gradient at d = {d}"


def test_clipped_value_loss_is_pessimistic():
    # V moved from 0 to 1 toward R = 2 with clip 0.1: the clipped prediction 0.1 is worse -> (0.1-2)^2
    assert clipped_value_loss(torch.tensor([1.0]), torch.tensor([0.0]), torch.tensor([2.0]), 0.1).item() == pytest.approx(1.9**2)
    assert clipped_value_loss(torch.tensor([1.0]), torch.tensor([0.0]), torch.tensor([0.5]), 0.1).item() == pytest.approx(
        0.5**2
    )  # unclipped is worse here


def test_masked_mean():
    x, m = torch.tensor([[1.0, 3.0, 100.0]]), torch.tensor([[1.0, 1.0, 0.0]])
    assert masked_mean(x, m).item() == 2.0 and masked_mean(x, m, dim=1).tolist() == [2.0]
