"""Tests that kill the mutants of ``baselines/common`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors, each test names the mutation it catches)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.advantages import gae, normalize  # noqa: E402
from rl4vlm_gym.baselines.common.algorithm import Weights, reference_logprobs, value_loss  # noqa: E402
from rl4vlm_gym.baselines.common.losses import clipped_value_loss, low_var_kl, masked_mean  # noqa: E402
from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import Step  # noqa: E402


def _steps(advantages=(), values=(), returns=()):
    n = max(len(advantages), len(values), len(returns))
    out = []
    for i in range(n):
        s = Step(env=0, episode=0, group=0, t=i, prompt=Prompt([]), response=[1], text="", logprobs=torch.zeros(1))
        s.advantage = advantages[i] if advantages else 0.0
        s.value = values[i] if values else None
        s.ret = returns[i] if returns else 0.0
        out.append(s)
    return out


def test_gae_without_a_critic_counts_missing_values_as_zero():
    # Two rewards of 1, no values, gamma 0.5, lambda 1: A_1 = 1, A_0 = 1 + 0.5 * A_1 = 1.5 (a missing
    # value read as 1 gives other advantages).
    s = _steps(advantages=(0.0, 0.0))
    for x in s:
        x.reward = 1.0
    gae(s, gamma=0.5, lam=1.0)
    assert [(x.advantage, x.ret) for x in s] == [(1.5, 1.5), (1.0, 1.0)]


def test_normalize_two_steps_uses_their_sample_std():
    # [0, 4]: mean 2, sample std 2*sqrt(2): +-1/sqrt(2). Std 1 (a buffer of two treated as one, or no
    # std at all) gives +-2; multiplying by the std gives +-5.66.
    s = _steps(advantages=(0.0, 4.0))
    normalize(s)
    assert [x.advantage for x in s] == pytest.approx([-(0.5**0.5), 0.5**0.5], rel=1e-6)


def test_normalize_adds_eps_to_a_tiny_std():
    # A spread of 2e-8: std 1.414e-8, + eps 1e-8 -> +-0.414 (std - eps would give +-2.414).
    s = _steps(advantages=(0.0, 2e-8))
    normalize(s, eps=1e-8)
    assert [x.advantage for x in s] == pytest.approx([-(2**0.5 - 1), 2**0.5 - 1], rel=1e-6)


def test_masked_mean_over_a_dim_keeps_rows_apart():
    # Row means over the masked entries; the second row has one entry (a count of 1 stays 1).
    x = torch.tensor([[1.0, 3.0, 100.0], [5.0, 0.0, 7.0]])
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert masked_mean(x, m, dim=1).tolist() == [2.0, 5.0]
    assert masked_mean(x, m).item() == 3.0  # (1 + 3 + 5) / 3
    assert masked_mean(torch.tensor([7.0, 1.0]), torch.tensor([1.0, 0.0])).item() == 7.0  # one entry counts 1
    assert masked_mean(torch.tensor([7.0]), torch.tensor([0.0])).item() == 0.0  # none: 0, not NaN


def test_weights_mean_of_token_values_averages_each_row_over_its_reply_tokens_only():
    # Statistics weigh each row's token mean by its share; padding (mask 0) is left out, never divided by.
    weights = Weights(torch.ones(2), torch.tensor([2.0, 1.0]), torch.tensor([0.75, 0.25]))
    x = torch.tensor([[1.0, 3.0, 100.0], [8.0, 50.0, 60.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert weights.mean(x, mask).item() == pytest.approx(0.75 * 2.0 + 0.25 * 8.0)
    assert weights.mean(torch.tensor([4.0, 8.0])).item() == pytest.approx(5.0)  # per-row values: shares alone


def test_low_var_kl_of_a_huge_log_ratio_is_capped_with_a_finite_gradient():
    # d = 1000: exp(d) overflows unless d is clamped to 20 first; the capped value's gradient is 0, not NaN.
    logp = torch.tensor([-1000.0], requires_grad=True)
    kl = low_var_kl(logp, torch.tensor([0.0]))
    kl.sum().backward()
    assert kl.item() == 10.0 and logp.grad is not None and logp.grad.item() == 0.0


def test_clipped_value_loss_clips_a_move_downward():
    # V moved from 0 down to -1 toward R = -2 with clip 0.1: clipped prediction -0.1, loss 1.9^2
    # (a clamp without its lower bound keeps -1 and gives 1).
    loss = clipped_value_loss(torch.tensor([-1.0]), torch.tensor([0.0]), torch.tensor([-2.0]), 0.1)
    assert loss.item() == pytest.approx(1.9**2)


def test_value_loss_against_stored_values_and_returns():
    batch = _steps(values=(0.0, 1.0), returns=(2.0, 1.0))
    loss = value_loss(batch, torch.tensor([1.0, 1.0]), 0.1)
    assert loss.tolist() == pytest.approx([1.9**2, 0.0])


class _TensorDevices(torch.overrides.TorchFunctionMode):
    """Records the ``device`` each ``torch.tensor(...)`` call asks for (None when it names none)."""

    def __init__(self) -> None:
        super().__init__()
        self.devices: list[object] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        kwargs = kwargs or {}
        if func is torch.tensor:
            self.devices.append(kwargs.get("device"))
        return func(*args, **kwargs)


def test_value_loss_builds_its_targets_on_the_values_device():
    # On a CPU-only machine a target built without a device lands on the right one by luck; the
    # device asked for is what a GPU run depends on (a "meta" tensor would show it too, at ~4 s).
    batch = _steps(values=(0.0, 1.0), returns=(2.0, 1.0))
    values = torch.zeros(2)
    with _TensorDevices() as seen:
        value_loss(batch, values, 0.1)
    assert seen.devices == [values.device, values.device]


@pytest.mark.parametrize("values, stored", [(None, (0.0, 1.0)), (torch.zeros(2), (0.0, None))])
def test_value_loss_without_a_critic_says_so(values, stored):
    batch = _steps(values=stored)
    message = r"^the value loss needs a critic: current values \(rescore with values=True\) and each step's stored value$"
    with pytest.raises(ValueError, match=message):
        value_loss(batch, values, 0.1)


def test_reference_logprobs_are_padded_on_the_asked_device():
    batch = _steps(values=(0.0, 0.0))
    batch[0].ref_logprobs, batch[1].ref_logprobs = torch.tensor([-1.0, -2.0]), torch.tensor([-3.0])
    assert reference_logprobs(batch, 3, "cpu").tolist() == [[-1.0, -2.0, 0.0], [-3.0, 0.0, 0.0]]
    assert reference_logprobs(batch, 3, "meta").device.type == "meta"


def test_reference_logprobs_missing_says_so():
    batch = _steps(values=(0.0, 0.0))
    batch[0].ref_logprobs = torch.tensor([-1.0])
    message = r"^a KL penalty needs the reference log-probs of every step \(collect with reference=True\)$"
    with pytest.raises(ValueError, match=message):
        reference_logprobs(batch, 3, "cpu")


@pytest.mark.parametrize(
    "template, output_format, answer",
    [
        ("vl-dac", "plain", '{"thoughts": "", "action": 1}'),  # the action's index, whatever the format
        ("rl4vlm", "plain", '{"thoughts": "", "action": "down"}'),  # rl4vlm fixes JSON ("or", not "and")
        ("default", "json", '{"thoughts": "", "action": "down"}'),
        ("default", "tags", "<think></think><action>down</action>"),
        ("default", "plain", "down"),
    ],
)
def test_the_format_warmup_writes_an_action_as_the_prompt_asks(template, output_format, answer):
    # warmup.answer_in_format: the targets the format warm-up clones (its only fast caller trains a model).
    from rl4vlm_gym.baselines.common.warmup import answer_in_format
    from rl4vlm_gym.prompts import PromptConfig

    assert answer_in_format(PromptConfig(template=template, output_format=output_format), "down", ("up", "down")) == answer


@pytest.fixture(scope="module")
def warmup_trainer(tmp_path_factory):
    pytest.importorskip("transformers", reason="the trainer needs the train extra")
    from rl4vlm_gym.baselines.config import default_config_path, load_config
    from rl4vlm_gym.baselines.trainer import Trainer

    overrides = {
        "updates": 1, "warmup.steps": 0, "eval.episodes": 1, "env.max_steps": 2, "generation.max_new_tokens": 4,
        "rollout.num_envs": 1, "rollout.steps": 2, "model.lora": None, "tensorboard": False,
        "env.kwargs": {"level": 0, "obs_mode": "text"},
    }  # fmt: skip
    return Trainer(load_config(default_config_path("gigpo", None, "cpu"), overrides), tmp_path_factory.mktemp("warmup"))


def _warmup(trainer, *, lr, seed):
    from rl4vlm_gym.baselines.common.warmup import format_warmup

    return format_warmup(
        trainer.policy, trainer._make_env, trainer.prompt, env_id=trainer.env_id, attach_images=False,
        steps=3, batch_size=2, lr=lr, seed=seed,
    )  # fmt: skip


def test_format_warmup_is_seeded_and_trains_at_its_learning_rate(warmup_trainer, caplog):
    # lr=0 changes no weight (Adam without its lr trains at 1e-3), so two runs with one seed see the same
    # batches and give the same losses (default_rng(None) draws other episodes and actions).
    import logging
    import math

    before = [p.detach().clone() for p in warmup_trainer.policy.model.parameters()]
    with caplog.at_level(logging.INFO, logger="rl4vlm_gym.baselines.common.warmup"):
        first = _warmup(warmup_trainer, lr=0.0, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(before, warmup_trainer.policy.model.parameters(), strict=True))
    assert _warmup(warmup_trainer, lr=0.0, seed=3) == first
    # The loss is the mean negative log-likelihood of a target token: near ln(vocabulary) for an untrained model
    # (not its negative, not the sum times the count), and the log line reports the first and last.
    vocabulary = len(warmup_trainer.policy.processor.tokenizer)
    assert all(0 < loss < 2 * math.log(vocabulary) for loss in first), first
    assert f"format warm-up: 3 steps, loss {first[0]:.3f} -> {first[-1]:.3f}" in caplog.messages  # [-1], not [1]


# The tiny policy with a value head: policy.py's and rollout.py's survivors -------------------------------


@pytest.fixture(scope="module")
def critic():
    """The tiny offline policy with a small value head: one load (~4 s of CPU) for the tests below."""
    pytest.importorskip("transformers", reason="the policy needs the train extra")
    from rl4vlm_gym.baselines.common.policy import Policy, PolicySettings

    torch.manual_seed(0)
    return Policy(PolicySettings(value_head=(8,)))


def _conversations(n):
    return [[{"role": "user", "content": [{"type": "text", "text": "go " * (i + 1)}]}] for i in range(n)]


def test_hf_generator_writes_at_most_max_new_tokens(critic):
    # HFGenerator passes max_new_tokens on (generate_tokens' own default is 64).
    from rl4vlm_gym.baselines.common.policy import HFGenerator

    prompts = critic.prompts(_conversations(3))
    replies = HFGenerator()(critic, prompts, inputs=None, max_new_tokens=2, temperature=1.0, top_p=1.0, seed=0)
    assert max(len(r) for r in replies) == 2 and min(len(r) for r in replies) >= 1, replies


def test_values_are_the_head_on_the_last_layer_at_the_last_prompt_token(critic):
    # Worked out from the model's own forward pass: the value head reads the last hidden layer at the
    # prompt's last token, in values() and in score() alike (the layer below gives other values).
    prompts = critic.prompts(_conversations(1))
    ids = torch.tensor([prompts[0].ids])
    with torch.no_grad():
        hidden = critic.model(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True).hidden_states
        expected = critic.value_head(hidden[-1][:, -1].float()).squeeze(-1)
        below = critic.value_head(hidden[-2][:, -1].float()).squeeze(-1)
        alone = critic.values(prompts)
        scored = critic.score(prompts, [[105, 106]]).values
    assert (expected - below).abs().item() > 1e-4  # the test can tell the layers apart
    assert torch.allclose(alone, expected, atol=1e-6) and torch.allclose(scored, expected, atol=1e-6), (alone, scored, expected)


def test_score_gives_the_entropy_of_each_reply_position_only_when_asked(critic):
    # Row 0 worked out from the unpadded forward pass: H = -sum p log p of softmax(logits / T) at each reply
    # position; padding (row 1's second position) is 0.
    prompts = critic.prompts(_conversations(2))
    replies = [[105, 106], [107]]
    with torch.no_grad():
        scores = critic.score(prompts, replies, values=False, entropy=True)
        assert critic.score(prompts, replies, values=False).entropy is None
        ids = torch.tensor([prompts[0].ids + replies[0]])
        logits = critic.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0].float() / critic.temperature
        start = len(prompts[0].ids) - 1
        log_p = torch.log_softmax(logits[start : start + 2], dim=-1)
        expected = -(log_p.exp() * log_p).sum(-1)
    assert scores.entropy is not None and scores.entropy.shape == (2, 2)
    assert torch.allclose(scores.entropy[0], expected, atol=1e-4), (scores.entropy[0], expected)
    assert scores.entropy[1, 0] > 0 and scores.entropy[1, 1] == 0


def test_collector_records_times_reference_logprobs_and_bootstraps_a_truncated_step(critic, monkeypatch):
    # One episode cut by a 2-step limit: each step knows its time, its reference log-probs (the frozen
    # start: the policy itself) and, truncated, the value of the observation it reached with its history.
    import gymnasium as gym

    from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
    from rl4vlm_gym.prompts import PromptConfig

    wait = critic.processor.tokenizer.encode("wait", add_special_tokens=False)  # not an action: no move, no end

    def write_wait(policy, prompts, **_):
        return [list(wait) for _ in prompts]

    reached = []

    class Reached(gym.Wrapper):
        def step(self, action):
            out = self.env.step(action)
            reached.append(out[0])
            return out

    def make_env():
        return Reached(gym.make("rl4vlm/NumberLine-v0", level=1, obs_mode="text", max_episode_steps=2))

    monkeypatch.setattr(critic, "generator", write_wait)
    critic.freeze_reference()
    collector = RolloutCollector(
        make_env, 1, critic, PromptConfig(output_format="plain"), GenerationSettings(max_new_tokens=3),
        attach_images=False, reference=True, values=True, seed=5,
    )  # fmt: skip
    try:
        steps = collector.collect_episodes(1).steps
        with torch.no_grad():
            final = critic.values(critic.prompts([collector.builders[0].messages(reached[-1])])).item()
    finally:
        collector.close()
    assert [(s.t, s.terminated, s.truncated) for s in steps] == [(0, False, False), (1, False, True)]
    for s in steps:
        assert s.ref_logprobs is not None and torch.allclose(s.ref_logprobs, s.logprobs, atol=1e-5), s
    assert steps[1].next_value == pytest.approx(final, abs=1e-6) and steps[1].next_value != steps[1].value


def test_the_model_input_of_prompts_and_replies_keeps_the_processors_dtypes(critic):
    # _batch appends the replies to every per-token input in its own dtype: a float attention mask or
    # mm_token_type_ids (an index in some models) is another input, even where this model reads it alike.
    image = torch.zeros((56, 56, 3), dtype=torch.uint8).numpy()
    conversations = [[{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": "go"}]}]] * 2
    inputs = critic.encode(conversations)
    batch, _, reply_length = critic._batch(critic.prompts(conversations, inputs), [[105, 106], [107]], inputs)
    assert reply_length == 2 and "mm_token_type_ids" in inputs  # the processor's per-token inputs this test is about
    assert {k: v.dtype for k, v in batch.items()} == {k: v.dtype for k, v in inputs.items()}
