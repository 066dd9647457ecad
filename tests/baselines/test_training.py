"""The policy's gradients, and every method's trainer on every env family (tiny model, CPU)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

# peft (and the transformers it imports) is loaded by the trainer when a test builds one, not at collection:
# every test worker imports this module to collect it, and importing peft takes seconds.
pytestmark = pytest.mark.extra("train")
torch = pytest.importorskip("torch", reason="the baselines' trainer needs the train extra (torch, transformers, peft)")

from rl4vlm_gym.baselines.common.algorithm import AGGREGATIONS  # noqa: E402
from rl4vlm_gym.baselines.common.policy import LoraSettings, Policy, PolicySettings  # noqa: E402
from rl4vlm_gym.baselines.config import ConfigError, default_config_path, load_config  # noqa: E402
from rl4vlm_gym.baselines.rl4vlm import RL4VLM  # noqa: E402
from rl4vlm_gym.baselines.trainer import Trainer  # noqa: E402


def conversations(n=2):
    rng = np.random.default_rng(0)
    return [
        [
            {
                "role": "user",
                "content": [
                    {"type": "image", "image": rng.integers(0, 255, (56, 56 + 28 * i, 3), dtype=np.uint8)},
                    {"type": "text", "text": "go " * (i + 1)},
                ],
            }
        ]
        for i in range(n)
    ]


@pytest.mark.parametrize("stop_gradient", [True, False])
def test_value_stop_gradient_keeps_the_value_loss_out_of_the_backbone(stop_gradient):
    policy = Policy(PolicySettings(lora=LoraSettings(r=2, alpha=4), value_head=(8,), value_stop_gradient=stop_gradient))
    prompts = policy.prompts(conversations())
    policy.score(prompts, [[105, 106], [107]]).values.sum().backward()
    lora = [p.grad for n, p in policy.model.named_parameters() if "lora_" in n]
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.value_head.parameters())
    if stop_gradient:
        assert all(g is None or g.abs().sum() == 0 for g in lora)
    else:
        assert any(g is not None and g.abs().sum() > 0 for g in lora)


def test_scores_do_not_depend_on_padding_and_the_reference_is_the_base_model():
    policy = Policy(PolicySettings(lora=LoraSettings(r=2, alpha=4)))
    prompts = policy.prompts(conversations(3))
    replies = [[105, 106, 107], [108], [109, 110]]
    with torch.no_grad():
        batch = policy.score(prompts, replies)
        for i, (prompt, reply) in enumerate(zip(prompts, replies, strict=True)):
            alone = policy.score([prompt], [reply])
            assert torch.allclose(batch.logprobs[i, : len(reply)], alone.logprobs[0, : len(reply)], atol=1e-5)
        assert batch.mask.sum().item() == 6
        encoded = policy.score(prompts, replies, inputs=policy.encode([p.messages for p in prompts]))
        assert torch.equal(encoded.logprobs, batch.logprobs)  # the rollout's one processor pass
        with torch.no_grad():
            for name, p in policy.model.named_parameters():
                if "lora_B" in name:
                    p.add_(0.5)
        moved = policy.score(prompts, replies)
        reference = policy.score(prompts, replies, reference=True)
    assert torch.allclose(reference.logprobs, batch.logprobs, atol=1e-5)  # adapters disabled = the start
    assert not torch.allclose(moved.logprobs, batch.logprobs, atol=1e-3)


def test_mixed_precision_computes_in_bfloat16_and_keeps_float32_weights():
    plain, mixed = Policy(PolicySettings()), Policy(PolicySettings(autocast="bfloat16"))
    prompts = mixed.prompts(conversations())
    reply = mixed.generate(prompts, max_new_tokens=3, temperature=1.0, seed=0)
    with torch.no_grad():
        exact = plain.score(prompts, reply).logprobs
    scores = mixed.score(prompts, reply)
    assert 0 < (scores.logprobs - exact).abs().max() < 0.1  # bfloat16 arithmetic, not float32
    scores.logprobs.sum().backward()
    assert all(p.dtype == torch.float32 and (p.grad is None or p.grad.dtype == torch.float32) for p in mixed.parameters())


def test_a_changed_prompt_is_refused():
    policy = Policy(PolicySettings())
    prompt = policy.prompts(conversations(1))[0]
    prompt.ids = prompt.ids[:-1]
    with pytest.raises(RuntimeError, match="no longer encodes"):
        policy.score([prompt], [[105]])


def test_rl4vlm_weights_split_a_json_reply_at_its_action_field():
    policy = Policy(PolicySettings())
    tokenizer = policy.processor.tokenizer
    reply = tokenizer.encode('{"thoughts": "go left now", "action": "turn left"}', add_special_tokens=False)
    step = type("S", (), {"response": reply})()
    weights = RL4VLM({"thought_coef": 0.5}).thought_weights(policy, [step], len(reply) + 2)[0]
    k = int((weights == 0.5).sum())
    assert 0 < k < len(reply) and weights[k : len(reply)].eq(1).all() and weights[len(reply) :].eq(0).all()
    assert '"action"' in tokenizer.decode(reply[k - 1 :]) and '"action"' not in tokenizer.decode(reply[:k])


def synthetic_steps(policy, n=4):
    """``n`` stored steps with replies of different lengths (1, 3, 5, ... tokens), two per episode,
    scored by ``policy`` as it acted."""
    from rl4vlm_gym.baselines.common.storage import Step

    policy.freeze_reference()
    prompts = policy.prompts(conversations(n))
    replies = [[105 + i + k for k in range(1 + 2 * i)] for i in range(n)]
    with torch.no_grad():
        acted = policy.score(prompts, replies)
        reference = policy.score(prompts, replies, reference=True)
    rng = np.random.default_rng(0)
    return [
        Step(
            env=i // 2,
            episode=i // 2,
            group=0,
            t=i % 2,
            prompt=prompts[i],
            response=replies[i],
            text="",
            logprobs=acted.logprobs[i, : len(replies[i])] + 0.05 * float(rng.normal()),  # ratios != 1
            ref_logprobs=reference.logprobs[i, : len(replies[i])] - 0.1,
            value=float(rng.normal()),
            advantage=float(rng.normal()),
            ret=float(rng.normal()),
        )  # fmt: skip
        for i in range(n)
    ]


MODES = {"vl-dac": AGGREGATIONS, "rl4vlm": ("seq-mean",), "loop": AGGREGATIONS, "gigpo": AGGREGATIONS}


@pytest.mark.slow
@pytest.mark.parametrize("algo, mode", [(algo, mode) for algo, modes in MODES.items() for mode in modes])
def test_micro_batches_give_the_gradient_of_the_whole_mini_batch(algo, mode):
    from rl4vlm_gym.baselines import algorithm_class

    torch.manual_seed(0)  # the LoRA and value-head initialisation (no ratio at a clip boundary)
    cls = algorithm_class(algo)
    config = {"kl_beta": 0.04, "value_warmup_updates": 0} if algo == "vl-dac" else {}
    method = cls(config if mode == "seq-mean" else {**config, "loss_agg_mode": mode})
    assert method.aggregation == mode
    policy = Policy(PolicySettings(lora=LoraSettings(r=2, alpha=4), value_head=(8,) if cls.critic else None,
                                   value_stop_gradient=cls.value_stop_gradient))  # fmt: skip
    batch = synthetic_steps(policy)

    def gradient(micro_batch):
        policy.zero_grad(set_to_none=True)
        loss, stats = method.backward(policy, batch, 0, micro_batch=micro_batch, scale=0.5)
        grads = [p.grad.clone() for p in policy.parameters() if p.requires_grad and p.grad is not None]
        return loss, stats, torch.cat([g.flatten() for g in grads])

    whole_loss, whole_stats, whole = gradient(None)
    with torch.no_grad():
        alone, alone_stats = method.loss(policy, batch, 0)
    assert whole_loss == pytest.approx(alone.item(), rel=1e-5)  # backward's loss is the mini-batch's
    assert whole_stats == pytest.approx(alone_stats, rel=1e-5, abs=1e-7)  # and its statistics, as loss() gives them
    for micro_batch in (1, 3):  # 3 splits the second episode (LOOP's sequence) across two passes
        loss, stats, parts = gradient(micro_batch)
        # float32 sums in another order: 1.2e-5 apart seen on one CPU (GiGPO, seq-mean-token-mean), as the gradient's 1e-4
        assert loss == pytest.approx(whole_loss, rel=1e-4), (algo, mode, micro_batch)
        assert (parts - whole).norm() <= 1e-4 * whole.norm(), f"{algo} {mode}: micro-batches of {micro_batch} change the gradient"
        assert stats == pytest.approx(whole_stats, rel=1e-4, abs=1e-6), (algo, mode, micro_batch)
    assert whole.abs().sum() > 0
    _, _, unscaled = gradient(None)  # scale=0.5 above: backward multiplies the loss by it, never divides
    policy.zero_grad(set_to_none=True)
    method.backward(policy, batch, 0, scale=1.0)
    doubled = torch.cat([p.grad.flatten() for p in policy.parameters() if p.requires_grad and p.grad is not None])
    assert (doubled - 2 * unscaled).norm() <= 1e-4 * doubled.norm(), f"{algo} {mode}: scale does not multiply the gradient"


def test_vl_dac_value_loss_is_c_v_times_the_clipped_loss_without_a_half():
    from rl4vlm_gym.baselines.common.algorithm import value_loss
    from rl4vlm_gym.baselines.vl_dac import VLDAC

    torch.manual_seed(0)
    policy = Policy(PolicySettings(value_head=(8,)))
    batch = synthetic_steps(policy, 3)
    method = VLDAC({"value_coef": 0.5, "value_clip": 0.1})  # update 0: value warm-up, the loss is L_V alone
    with torch.no_grad():
        loss, stats = method.loss(policy, batch, 0)
        values = policy.score([s.prompt for s in batch], [s.response for s in batch], values=True).values
    expected = 0.5 * value_loss(batch, values, 0.1).mean().item()  # c_v * max(...), mean over steps
    assert stats["value_warmup"] == 1.0
    assert loss.item() == pytest.approx(expected, rel=1e-5), "VL-DAC's value loss is c_v * max((V-R)^2, ...), no 1/2"


def test_rl4vlm_ratio_guard_is_off_by_default_and_keeps_only_the_clipped_term_when_on():
    # A deliberate difference (rl4vlm.py): the release's "any ratio > 10: clipped term only" is opt-in.
    policy = Policy(PolicySettings(value_head=(8,), value_stop_gradient=False))
    batch = synthetic_steps(policy, 2)
    batch[0].logprobs = batch[0].logprobs - 5.0  # rho_0 >= exp(0.5 * 5) > 10
    for s in batch:
        s.advantage = -1.0
    assert RL4VLM().config.ratio_guard is None, "RL4VLM's ratio guard is on by default"
    with torch.no_grad():
        _, plain = RL4VLM({"value_coef": 0.0}).loss(policy, batch, 0)
        _, guarded = RL4VLM({"value_coef": 0.0, "ratio_guard": 10.0}).loss(policy, batch, 0)
    assert plain["policy_loss"] > 10 and guarded["policy_loss"] <= 1.1  # -min(rho A, clip(rho) A) vs -clip(rho) A


def test_gigpo_kl_term_is_verls_low_var_kl():
    from rl4vlm_gym.baselines.gigpo import GiGPO

    policy = Policy(PolicySettings())
    batch = synthetic_steps(policy, 2)
    with torch.no_grad():
        now = policy.score([s.prompt for s in batch], [s.response for s in batch]).logprobs
        for d, expected in ((-10.5, np.exp(-10.5) + 9.5), (-12.0, 10.0)):  # k3 clamped to 10 after, not d before
            for i, s in enumerate(batch):
                s.ref_logprobs = now[i, : len(s.response)] + d  # d = log ref - log pi
            _, stats = GiGPO({"kl_coef": 1.0, "entropy_coef": 0.0}).loss(policy, batch, 0)
            assert stats["kl"] == pytest.approx(expected, rel=1e-4), f"GiGPO's KL at d = {d} is not verl's low_var_kl"


# One update of every method on every family -------------------------------------------------------

FAMILIES = {
    "cards": ("rl4vlm/EZPoints-v0", {"level": 0, "image_size": 128}),
    "navigation": ("rl4vlm/MiniWorld-OneRoom-v1", {"level": 0, "image_size": 64}),
    "household": ("rl4vlm/Household-PickPlace-v0", {"level": 0, "image_size": 64}),
    "webshop": ("rl4vlm/WebShop-v1", {"level": 0, "obs_mode": "text"}),
    "games": ("rl4vlm/TicTacToe-vs-Random-v0", {"level": 0, "obs_mode": "text"}),  # one seat vs a fixed opponent
}
SMALL = {
    "updates": 1, "warmup.steps": 1, "warmup.batch_size": 2, "eval.episodes": 1, "env.max_steps": 2, "generation.max_new_tokens": 6,
    "rollout.num_envs": 2, "rollout.steps": 2, "rollout.groups": 1, "rollout.group_size": 2, "optim.minibatch_size": 2,
    "model.value_head": [8], "model.lora": {"r": 2, "alpha": 4, "target_modules": ["q_proj", "v_proj"]}, "tensorboard": False,
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
# Not grow: its loss is GiGPO's (tests/baselines/test_grow.py asserts it and trains it end to end on Household).
@pytest.mark.parametrize("algo", ["vl-dac", "rl4vlm", "loop", "gigpo"])
def test_one_update_of_every_method_on_every_family(algo, family, tmp_path):
    env_id, kwargs = FAMILIES[family]
    extra = {  # exercise every term: the KL to the LoRA-disabled base, LOOP's loss on zero advantages
        "vl-dac": {"algorithm.kl_beta": 0.04}, "gigpo": {"algorithm.kl_coef": 0.04}, "loop": {"algorithm.abs_adv_threshold": -1.0}
    }.get(algo, {})  # fmt: skip
    config = load_config(default_config_path(algo, env_id, "cpu"), {**SMALL, "env.id": env_id, "env.kwargs": kwargs, **extra})
    trainer = Trainer(config, tmp_path)
    before: dict[str, torch.Tensor] = {}
    update = trainer.train_one_update

    def weights_then_update():  # the weights the RL update starts from (after the format warm-up)
        before.update(trainer.policy.trainable_state())
        return update()

    trainer.train_one_update = weights_then_update
    summary = trainer.run()
    assert summary["overall"]["episodes"] == 1
    with (tmp_path / "train_log.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and float(rows[0]["env_steps"]) >= 2
    row = {k: float(v) if v != "" else float("nan") for k, v in rows[0].items()}  # the log writes NaN as ""
    for key in ("loss", "policy_loss", "grad_norm", "clip_fraction", "invalid_rate", "advantage_std"):
        assert np.isfinite(row[key]), f"{algo} on {family}: {key} is {row[key]} after one update"
    assert 0 <= row["clip_fraction"] <= 1 and 0 <= row["invalid_rate"] <= 1 and row["grad_norm"] >= 0
    if row["episodes"]:  # no episode may end within one update of steps: then no success is logged
        assert 0 <= row["success"] <= 1 and np.isfinite(row["return"]), f"{algo} on {family}: success {row['success']}"
    if algo in ("vl-dac", "gigpo"):
        assert row["kl"] >= 0, f"{algo}: negative KL {row['kl']}"
    if algo in ("vl-dac", "rl4vlm"):
        assert np.isfinite(row["value_loss"]) and row["value_loss"] >= 0
    after = trainer.policy.trainable_state()
    assert all(torch.isfinite(v).all() for v in after.values()), f"{algo} on {family}: non-finite weights after one update"
    changed = any(not torch.equal(before[k], after[k]) for k in before)
    # a value loss (VL-DAC, RL4VLM) or GiGPO's entropy bonus always has a gradient; LOOP's
    # loss has none when every rollout of the group scored the same
    assert changed == (row["grad_norm"] > 0), f"{algo} on {family}: weights changed={changed}, grad_norm={row['grad_norm']}"
    assert changed or algo == "loop", f"{algo} on {family}: one update left the weights unchanged"
    with (tmp_path / "eval_log.csv").open() as f:
        evals = list(csv.DictReader(f))
    assert [r["update"] for r in evals] == ["0", "1"] and all(r["success"] != "" and r["invalid_rate"] != "" for r in evals)
    assert (tmp_path / "checkpoints" / "final" / "model" / "adapter_config.json").exists()
    assert (tmp_path / "report" / "report.html").exists()


def test_the_kl_reference_is_the_model_before_the_format_warmup(tmp_path):
    # A deliberate difference (gigpo.py, vl_dac.py): the reference is frozen when the policy is
    # built, so after a format warm-up it is the model before the warm-up, not the one RL starts from.
    from rl4vlm_gym.baselines.common.warmup import format_warmup

    overrides = {**SMALL, "model.lora": None, "algorithm.kl_coef": 0.01, "env.kwargs": {"level": 0, "obs_mode": "text"}}
    trainer = Trainer(load_config(default_config_path("gigpo", None, "cpu"), overrides), tmp_path)
    prompts = trainer.policy.prompts(conversations(2))
    replies = [[105, 106], [107]]
    with torch.no_grad():
        initial = trainer.policy.score(prompts, replies).logprobs
    format_warmup(
        trainer.policy, trainer._make_env, trainer.prompt, env_id=trainer.env_id, attach_images=False,
        steps=2, batch_size=2, lr=1e-2, seed=0,
    )  # fmt: skip
    with torch.no_grad():
        reference = trainer.policy.score(prompts, replies, reference=True).logprobs
        warmed = trainer.policy.score(prompts, replies).logprobs
    assert torch.allclose(reference, initial, atol=1e-6), "the KL reference is not the model before the warm-up"
    assert not torch.allclose(warmed, initial, atol=1e-4)


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path):
    overrides = {**SMALL, "model.lora": None, "env.kwargs": {"level": 0, "obs_mode": "text"}, "eval.every": 1}
    first = Trainer(load_config(default_config_path("vl-dac", None, "cpu"), {**overrides, "updates": 1}), tmp_path)
    first.run()
    state = first.policy.trainable_state()
    # Killed at the worst moments: between save_checkpoint's two renames, and before the
    # evaluation of update 1 logged its row.
    checkpoints = tmp_path / "checkpoints"
    (checkpoints / "latest").rename(checkpoints / ".latest.old")
    log = (tmp_path / "eval_log.csv").read_text().splitlines()
    (tmp_path / "eval_log.csv").write_text("\n".join(log[:2]) + "\n")
    second = Trainer(load_config(default_config_path("vl-dac", None, "cpu"), {**overrides, "updates": 3}), tmp_path)
    assert second._resume() and second.update == 1
    assert all(torch.equal(state[k], v) for k, v in second.policy.trainable_state().items())
    second.run()
    with (tmp_path / "train_log.csv").open() as f:
        assert [r["update"] for r in csv.DictReader(f)] == ["1", "2", "3"]
    with (tmp_path / "eval_log.csv").open() as f:
        assert [r["update"] for r in csv.DictReader(f)] == ["0", "1", "2", "3"]
    assert (checkpoints / "update_1" / "model" / "config.json").exists()
    assert not (checkpoints / ".latest.old").exists() and not list(checkpoints.glob("*/.model.tmp"))


def test_config_errors_name_the_problem(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("algo: vl-dac\noptim: {lr: -1}\n")
    with pytest.raises(ConfigError, match="optim.lr"):
        load_config(path)
    with pytest.raises(ConfigError, match="no training config"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match="hyperparameters"):
        RL4VLM({"lambda": 0.5})


def test_every_shipped_config_is_valid():
    from rl4vlm_gym.baselines.config import CONFIGS_DIR
    from rl4vlm_gym.prompts import PromptConfig
    from rl4vlm_gym.registry import env_card

    paths = sorted(CONFIGS_DIR.glob("*/*.yaml"))
    study = [p for p in paths if p.stem == "study-gpu"]  # the scaling study's: its env is each set's mixture
    assert [p.parent.name for p in study] == ["vl_dac"]
    config = load_config(study[0])
    assert config.env.id is None and not config.env.mixture and config.model.device == "cuda" and config.eval.every == 0
    paths = [p for p in paths if p not in study]
    games = [p for p in paths if p.stem in ("kuhn-cpu", "kuhn-selfplay-cpu", "games-gpu", "selfplay-gpu")]
    assert sorted(p.name for p in games) == ["games-gpu.yaml", "kuhn-cpu.yaml", "kuhn-selfplay-cpu.yaml", "selfplay-gpu.yaml"]
    assert {p.parent.name for p in games} == {"vl_dac"}  # the games' own configs, self-play among them
    assert len(paths) - len(games) == 5 * 5  # a CPU config and four GPU configs (one per family), for each of the five methods
    for path in games:
        config = load_config(path)
        assert env_card(config.env.id).family == "games"
        assert (config.opponent is not None) == ("selfplay" in path.stem), path
        if config.opponent is not None:  # the evaluation's view is of the game self-play trains on
            assert config.opponent.game.replace("_", "") in config.env.id.lower(), path
    for path in paths:
        config = load_config(path)
        assert config.algo.replace("-", "_") == path.parent.name, path
        PromptConfig(**config.prompt)
        card = env_card(config.env.id)
        assert config.env.kwargs.get("obs_mode", "image+text") in card.obs_modes, path
        if path.stem.endswith("-gpu"):
            assert (
                path.stem in (f"{card.family}-gpu", "selfplay-gpu")
                and config.model.device == "cuda"
                and config.model.name.startswith("Qwen/Qwen2-VL-")
            )
            if config.model.lora is None:  # a full fine-tune keeps float32 master weights
                assert config.model.dtype == "float32" and config.model.autocast == "bfloat16", path
    assert default_config_path("gigpo", "rl4vlm/WebShop-v1", "cuda").name == "webshop-gpu.yaml"


def test_collector_groups_share_seeds_and_streams_bootstrap():
    import gymnasium as gym

    from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
    from rl4vlm_gym.prompts import PromptConfig

    policy = Policy(PolicySettings(value_head=(8,)))

    def make_env():
        return gym.make("rl4vlm/NumberLine-v0", level=1, obs_mode="text", max_episode_steps=4)

    prompt, generation = PromptConfig(output_format="plain"), GenerationSettings(max_new_tokens=3)
    # waves of two groups of two; the second wave has one group, so two envs sit it out (parked)
    grouped = RolloutCollector(make_env, 4, policy, prompt, generation, attach_images=False, group_size=2, values=True, seed=1)
    buffer = grouped.collect_episodes(3)
    assert len(buffer.groups()) == 3 and all(len(g) == 2 for g in buffer.groups())
    for group in buffer.groups():
        assert group[0][0].state_key == group[1][0].state_key  # same seed, same start
        assert all(t[-1].done and not any(s.done for s in t[:-1]) for t in group)
    assert {s.env for t in buffer.groups()[2] for s in t[0:1]} <= {0, 1}
    grouped.close()

    stepper = RolloutCollector(make_env, 2, policy, prompt, generation, attach_images=False, values=True, seed=2)
    buffer = stepper.collect_steps(10)
    for stream in buffer.streams():
        assert len(stream) == 5
        for prev, nxt in zip(stream, stream[1:], strict=False):
            if not prev.done:
                assert prev.next_value == pytest.approx(nxt.value)  # V of the next observation
        truncated = [s for s in stream if s.truncated]
        assert all(s.next_value != 0.0 for s in truncated)  # bootstrapped from the final observation
        assert stream[-1].done or stream[-1].next_value != 0.0  # the cut end is bootstrapped
    assert buffer.episodes and stepper.env_steps == 10
    stepper.close()


def test_collector_takes_gigpo_anchor_states_from_info_in_image_mode():
    import hashlib

    import gymnasium as gym

    from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
    from rl4vlm_gym.prompts import PromptConfig

    def digest(image):
        return hashlib.sha1(np.ascontiguousarray(image).tobytes()).hexdigest()

    true_keys: dict[str, str] = {}  # every image an env showed -> its info["state_key"]

    class RecordStates(gym.Wrapper):
        def reset(self, **kwargs):
            obs, info = self.env.reset(**kwargs)
            true_keys[digest(obs["image"])] = info["state_key"]
            return obs, info

        def step(self, action):  # every reply makes a move, so that states change (the tiny model rarely writes one)
            obs, reward, terminated, truncated, info = self.env.step(("-", "+")[len(action) % 2])
            true_keys[digest(obs["image"])] = info["state_key"]
            return obs, reward, terminated, truncated, info

    def make_env():  # image mode: obs["text"] is only the env's feedback, never the state
        return RecordStates(gym.make("rl4vlm/NumberLine-v0", level=1, obs_mode="image", image_size=64, max_episode_steps=3))

    policy = Policy(PolicySettings())
    prompt, generation = PromptConfig(output_format="plain"), GenerationSettings(max_new_tokens=3)
    collector = RolloutCollector(make_env, 4, policy, prompt, generation, group_size=2, seed=3)
    buffer = collector.collect_episodes(2)
    collector.close()
    for group in buffer.groups():
        states = set()
        for s in (s for trajectory in group for s in trajectory):
            image = [p["image"] for m in s.prompt.messages for p in m["content"] if p["type"] == "image"][-1]
            states.add(true_keys[digest(image)])
            assert s.state_key == true_keys[digest(image)], "the rollout's GiGPO anchor state is not the env's info['state_key']"
        keys = {s.state_key for trajectory in group for s in trajectory}
        assert len(keys) == len(states), f"{len(states)} true states became {len(keys)} anchor keys"
    assert sum(len(t) for g in buffer.groups() for t in g) > len({s.state_key for s in buffer.steps})  # states repeat


def test_train_command(tmp_path):
    from typer.testing import CliRunner

    from rl4vlm_gym.cli import app

    runner = CliRunner()
    small = [
        "-o",
        "updates=1",
        "-o",
        "warmup.steps=1",
        "-o",
        "eval.episodes=2",
        "-o",
        "rollout.groups=1",
        "-o",
        "rollout.group_size=2",
    ]
    small += ["-o", "rollout.num_envs=2", "-o", "tensorboard=false"]
    result = runner.invoke(app, ["train", "--algo", "gigpo", "--out", str(tmp_path / "run"), *small])
    assert result.exit_code == 0, result.output
    assert "update    1" in result.output and (tmp_path / "run" / "report" / "report.html").exists()
    bad = runner.invoke(app, ["train", "--algo", "ppo"])
    assert bad.exit_code == 2 and "unknown" in bad.output.lower()
    gpu = runner.invoke(app, ["train", "--algo", "gigpo", "--config", str(default_config_path("loop", None, "cpu"))])
    # Rich wraps the message at the terminal's width, and the config path in it is as long as the checkout's
    assert gpu.exit_code == 2 and "is a loop config" in " ".join(gpu.output.split())
