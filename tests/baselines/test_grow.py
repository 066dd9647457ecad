"""GROW (``baselines/grow.py``): hand-worked advantages, an independent reference on random cases,
and ``rl4vlm-gym train --algo grow`` end to end on CPU."""

from __future__ import annotations

import csv
import math
import random
import statistics

import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import RolloutBuffer, Step  # noqa: E402
from rl4vlm_gym.baselines.gigpo import GiGPO  # noqa: E402
from rl4vlm_gym.baselines.grow import GROW, GROWConfig, grow_advantages  # noqa: E402

NO_REPLY = torch.zeros(1)  # the estimate never reads a step's log-probs


def _trajectory(rewards, invalid=(), episode=0, group=0):
    return [
        Step(env=episode, episode=episode, group=group, t=t, prompt=Prompt([]), response=[1], text="", logprobs=NO_REPLY,
             reward=float(r), valid=t not in invalid, terminated=t == len(rewards) - 1)
        for t, r in enumerate(rewards)
    ]  # fmt: skip


def _advantages(trajectories, **config):
    return [list(a) for a in grow_advantages(trajectories, GROWConfig(**config))]


# Hand-worked ------------------------------------------------------------------------------------


def test_every_sample_of_an_outcome_episode_carries_the_outcome_normalised_over_samples():
    # gamma 1: tau_1 = (0, 0, 1) gives samples R = 1, 1, 1; tau_2 = (0, 0) gives 0, 0.
    # Over the 5 samples: mean 3/5, sample variance (3 * 0.4^2 + 2 * 0.6^2) / 4 = 0.3.
    a = _advantages([_trajectory([0, 0, 1]), _trajectory([0, 0], episode=1)])
    s = math.sqrt(0.3) + 1e-6
    assert a[0] == pytest.approx([0.4 / s] * 3, rel=1e-12) and a[1] == pytest.approx([-0.6 / s] * 2, rel=1e-12)
    # not GRPO over trajectories (mean 1/2 over the two episodes: +-0.7071): the long episode weighs 3 samples
    assert a[0][0] != pytest.approx(1 / math.sqrt(2), rel=1e-3)


def test_a_discounted_sample_reward_is_its_return_from_its_state():
    # gamma 1/2: tau_1 = (0, 0, 1) -> R = 1/4, 1/2, 1; tau_2 = (0, 0) -> 0, 0. Mean 0.35.
    trajectories = [_trajectory([0, 0, 1]), _trajectory([0, 0], episode=1)]
    a = _advantages(trajectories, gamma=0.5, norm_by_std=False)
    assert a == [pytest.approx([-0.1, 0.15, 0.65]), pytest.approx([-0.35, -0.35])]
    # with the std: deviations -0.1, 0.15, 0.65, -0.35, -0.35; squares sum to 0.70; over 4: 0.175
    a = _advantages(trajectories, gamma=0.5)
    s = math.sqrt(0.175) + 1e-6
    assert a == [pytest.approx([-0.1 / s, 0.15 / s, 0.65 / s], rel=1e-12), pytest.approx([-0.35 / s] * 2, rel=1e-12)]


def test_the_invalid_penalty_costs_only_its_own_sample():
    # (0, 0 invalid, 1), gamma 1, p 0.1: R = 1, 0.9, 1 (the penalty does not flow into sample 0)
    a = _advantages([_trajectory([0, 0, 1], invalid={1})], invalid_penalty=0.1, norm_by_std=False)
    mean = 2.9 / 3
    assert a == [pytest.approx([1 - mean, 0.9 - mean, 1 - mean], abs=1e-12)]


def test_a_group_of_one_sample_takes_mean_0_and_std_1_as_verl():
    assert _advantages([_trajectory([10])]) == [pytest.approx([10 / (1 + 1e-6)], rel=1e-12)]
    assert _advantages([_trajectory([10])], norm_by_std=False) == [[10.0]]


def test_estimate_normalises_each_task_alone_and_reports_groups_without_signal():
    # group 0: two episodes with the same outcome -> no signal; group 1: (1) and (0, 0)
    buffer = RolloutBuffer()
    episodes = [_trajectory([0, 1], episode=0, group=0), _trajectory([1], episode=1, group=1),
                _trajectory([0, 1], episode=2, group=0), _trajectory([0, 0], episode=3, group=1)]  # fmt: skip
    for t in range(2):  # interleaved in time, as a vector env writes them
        buffer.steps += [tau[t] for tau in episodes if t < len(tau)]
    stats = GROW({"norm_by_std": False}).estimate(buffer)
    assert [s.advantage for s in episodes[0] + episodes[2]] == [0.0] * 4
    assert [s.advantage for s in episodes[1] + episodes[3]] == pytest.approx([2 / 3, -1 / 3, -1 / 3])
    assert all(s.ret == s.advantage for s in buffer.steps)
    assert stats == {"sample_group_size": 3.5, "zero_advantage": 4 / 7}  # groups of 4 and 3 samples


def test_config_is_checked_and_the_loss_is_gigpos():
    with pytest.raises(ValueError, match="loss_agg_mode"):
        GROWConfig(loss_agg_mode="sum")
    for gamma in (-0.01, 1.01):
        with pytest.raises(ValueError, match="gamma"):
            GROWConfig(gamma=gamma)
    GROWConfig(gamma=0.0), GROWConfig(gamma=1.0)  # the ends are allowed
    with pytest.raises(ValueError, match="hyperparameters"):
        GROW({"step_weight": 1.0})  # GiGPO's anchor weight is not GROW's
    assert GROW.loss is GiGPO.loss and GROW.collect == "episodes" and GROW.unit == "step"


# An independent reference -----------------------------------------------------------------------


def reference(groups, gamma, penalty, norm_by_std):
    """Plain loops over lists: ``groups`` maps a group id to its trajectories, each a list of
    (reward, valid). Returns {(group, trajectory, t): advantage}."""
    out = {}
    for g, trajectories in groups.items():
        samples = []  # (trajectory, t, reward of the sample)
        for i, tau in enumerate(trajectories):
            for t in range(len(tau)):
                ret = sum(gamma ** (k - t) * tau[k][0] for k in range(t, len(tau)))
                samples.append((i, t, ret - (penalty if not tau[t][1] else 0.0)))
        values = [r for _, _, r in samples]
        if len(values) == 1:
            mean, spread = 0.0, 1.0
        else:
            mean, spread = statistics.fmean(values), statistics.stdev(values)
        for i, t, r in samples:
            out[g, i, t] = (r - mean) / (spread + 1e-6) if norm_by_std else r - mean
    return out


def test_estimate_equals_an_independent_reference_on_random_cases():
    rng = random.Random(38)
    checked = 0
    for _ in range(300):
        gamma = rng.choice([1.0, 0.95, 0.5, 0.0, rng.random()])
        penalty, norm = rng.choice([0.0, 0.1, rng.random()]), rng.random() < 0.7
        groups = {}
        for g in rng.sample(range(10), rng.randint(1, 3)):
            groups[g] = [
                [
                    (rng.choice([0.0, 0.0, 1.0, 10.0, -1.0, rng.uniform(-2, 2)]), rng.random() < 0.8)
                    for _ in range(rng.randint(1, 8))
                ]
                for _ in range(rng.randint(1, 5))
            ]
        buffer, steps, playing = RolloutBuffer(), {}, []
        for g, trajectories in groups.items():
            for i, tau in enumerate(trajectories):
                rewards, invalid = [r for r, _ in tau], {t for t, (_, ok) in enumerate(tau) if not ok}
                playing.append(_trajectory(rewards, invalid, episode=len(playing), group=g))
                steps.update({(g, i, s.t): s for s in playing[-1]})
        while playing:  # the episodes interleaved at random, each in time order (as a vector env stores them)
            tau = rng.choice(playing)
            buffer.steps.append(tau.pop(0))
            playing = [tau for tau in playing if tau]
        GROW({"gamma": gamma, "invalid_penalty": penalty, "norm_by_std": norm}).estimate(buffer)
        for key, expected in reference(groups, gamma, penalty, norm).items():
            if not math.isclose(steps[key].advantage, expected, rel_tol=1e-9, abs_tol=1e-9):
                pytest.fail(
                    f"sample {key}: {steps[key].advantage} != {expected} (gamma {gamma}, p {penalty}, std {norm}, {groups})"
                )
            checked += 1
    assert checked > 3000


# End to end -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_train_algo_grow_runs_end_to_end_on_a_household_env(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from rl4vlm_gym.cli import app

    seen: list[RolloutBuffer] = []
    estimate = GROW.estimate

    def recording(self, buffer):  # the real estimate, with the buffer kept to check it
        seen.append(buffer)
        return estimate(self, buffer)

    monkeypatch.setattr(GROW, "estimate", recording)
    overrides = {
        "updates": 1, "warmup.steps": 1, "warmup.batch_size": 2, "eval.episodes": 1, "env.max_steps": 3, "rollout.num_envs": 2,
        "rollout.groups": 1, "rollout.group_size": 2, "optim.minibatch_size": 2, "tensorboard": "false", "algorithm.kl_coef": 0.04,
        "env.kwargs.image_size": 64,
    }  # fmt: skip
    args = ["train", "--algo", "grow", "--env", "rl4vlm/Household-PickPlace-v0", "--out", str(tmp_path / "run")]
    for key, value in overrides.items():
        args += ["-o", f"{key}={value}"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (buffer,) = seen
    (group,) = buffer.groups()
    assert len(group) == 2 and sum(map(len, group)) >= 2
    expected = grow_advantages(group, GROWConfig(invalid_penalty=0.1))  # cpu.yaml's penalty, gamma 1
    assert [s.advantage for tau in group for s in tau] == pytest.approx([a for e in expected for a in e])
    with (tmp_path / "run" / "train_log.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    for key in ("loss", "policy_loss", "grad_norm", "kl"):
        assert math.isfinite(float(row[key])), (key, row[key])
    assert float(row["grad_norm"]) > 0 and float(row["kl"]) >= 0  # the entropy bonus always has a gradient
    assert (tmp_path / "run" / "report" / "report.html").exists()
