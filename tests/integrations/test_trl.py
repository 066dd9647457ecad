"""TRL's GRPOTrainer on our envs (rl4vlm_gym.integrations.trl): the real trainer, the tiny offline
Qwen2-VL, NumberLine; the rewards it logs are the env's returns for the replies it generated."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm
from rl4vlm_gym.integrations.trl import EnvRollout, env_reward, episode_dataset, episode_spec, parse_episode_spec
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig, to_hf

# trl and torch are imported where they are used: every test worker imports this module to collect it,
# and they take seconds to import. Without the extra, the tests skip.
pytestmark = pytest.mark.extra("trl")

ENV = "rl4vlm/NumberLine-v0"
PROMPT = PromptConfig(output_format="plain")
ENV_KWARGS = {"action_match": "lenient"}


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: the tiny model gains nothing from more, and on a shared 2-core machine
    torch's threads waiting on each other made a step 10x slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_trainer(out: Path, rollout: Any, steps: int = 3) -> Any:
    """A real GRPOTrainer on the tiny model. Its sampling is restricted to '+', '-' and the end of
    turn (``generation_kwargs``, as a user would constrain decoding): a random model writes no valid
    action otherwise, and every episode would earn the same return (no advantage, no update)."""
    from trl import GRPOConfig, GRPOTrainer

    model, processor = load_vlm(default_tiny_model())
    tokenizer = processor.tokenizer
    keep = {tokenizer.convert_tokens_to_ids("+"), tokenizer.convert_tokens_to_ids("-"), tokenizer.eos_token_id}
    args = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=4, num_generations=4, max_completion_length=2, max_steps=steps,
        logging_steps=1, save_steps=steps, save_only_model=True, report_to="none", use_cpu=True, seed=0, learning_rate=1e-2,
        gradient_checkpointing=False, generation_kwargs={"suppress_tokens": [i for i in range(len(tokenizer)) if i not in keep]},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*rollout_func.*experimental", category=UserWarning)
        return GRPOTrainer(
            model=model, processing_class=processor, reward_funcs=env_reward, args=args,
            train_dataset=episode_dataset(range(16)), rollout_func=rollout,
        )  # fmt: skip


class Recorder:
    """The rollout as TRL calls it, keeping each call's prompts and output to check against the env."""

    def __init__(self, rollout: EnvRollout) -> None:
        self.rollout, self.calls = rollout, []

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        out = self.rollout(prompts, trainer)
        self.calls.append((list(prompts), out))
        return out


def replies(completion_ids: list[int], mask: list[int]) -> list[list[int]]:
    """The model's turns: the runs of tokens the env mask marks as the model's."""
    turns, current = [], None
    for token, mine in zip(completion_ids, mask, strict=True):
        if mine:
            if current is None:
                current = []
                turns.append(current)
            current.append(token)
        else:
            current = None
    return turns


def replay_return(spec: str, texts: list[str]) -> tuple[float, bool]:
    """The return a fresh env pays for these replies in the episode ``spec`` names."""
    seed, options = parse_episode_spec(spec)
    env = gym.make(ENV, obs_mode="text", **ENV_KWARGS)
    env.reset(seed=seed, options=options or None)
    total, success = 0.0, False
    for text in texts:
        _, reward, terminated, truncated, info = env.step(text)
        total += float(reward)
        success = info["success"]
        if terminated or truncated:
            break
    env.close()
    return total, success


def conversation(seed: int, options: dict[str, Any] | None, texts: list[str]) -> list[dict[str, Any]]:
    """The episode's conversation with the replies ``texts``, rebuilt with our prompt machinery and a fresh env."""
    env = gym.make(ENV, obs_mode="text", **ENV_KWARGS)
    try:
        obs, _ = env.reset(seed=seed, options=options or None)
        builder = PromptBuilder(PROMPT, env_id=ENV, attach_images=False)
        messages = builder.messages(obs)
        for j, text in enumerate(texts):
            messages.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
            obs, _, terminated, truncated, _ = env.step(text)
            if terminated or truncated or j == len(texts) - 1:
                break
            messages.append(builder.messages(obs)[-1])
        return messages
    finally:
        env.close()


# The rollout on the real trainer -------------------------------------------------------------------


@pytest.mark.slow
def test_rollout_tokens_are_the_episode_conversation(tmp_path):
    """prompt + completion is the chat template's rendering of the episode's conversation; the mask
    marks exactly the model's replies; the extra fields are the env's."""
    rollout = EnvRollout(ENV, prompt=PROMPT, max_turns=3, env_kwargs=ENV_KWARGS)
    trainer = make_trainer(tmp_path, rollout)
    tokenizer = trainer.processing_class.tokenizer
    prompts = [episode_spec(3), episode_spec(3), episode_spec(11, {"level": 1})]
    out = rollout(prompts, trainer)
    assert set(out) == {"prompt_ids", "completion_ids", "logprobs", "env_mask", "env_reward", "env_success", "env_turns"}
    assert out["logprobs"] is None  # transformers' generate gives none; TRL then needs none
    for i, spec in enumerate(prompts):
        seed, options = parse_episode_spec(spec)
        turns = replies(out["completion_ids"][i], out["env_mask"][i])
        texts = [tokenizer.decode(t, skip_special_tokens=True) for t in turns]
        assert len(turns) == out["env_turns"][i] <= 3
        messages = conversation(seed, options, texts)
        rendered = trainer.processing_class.apply_chat_template(to_hf(messages)[0], tokenize=False)
        ids = out["prompt_ids"][i] + out["completion_ids"][i]
        assert rendered.startswith(tokenizer.decode(ids))
        assert rendered[len(tokenizer.decode(ids)) :] in ("\n", "<|im_end|>\n")  # a reply cut by the budget has no end
        assert (out["env_reward"][i], out["env_success"][i]) == replay_return(spec, texts)
    rollout.close()
    assert rollout.envs == []


@pytest.mark.slow
def test_grpo_trains_on_the_env_reward(tmp_path):
    """Three real GRPO steps: each logged reward is the mean return the env paid for the batch's
    replies (replayed in fresh envs), the rewards vary, the weights move, a checkpoint is written."""
    import torch

    rollout = EnvRollout(ENV, prompt=PROMPT, max_turns=4, env_kwargs=ENV_KWARGS)
    recorder = Recorder(rollout)
    trainer = make_trainer(tmp_path, recorder, steps=3)
    tokenizer = trainer.processing_class.tokenizer
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()
    rollout.close()

    assert trainer.state.global_step == 3
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logged) == len(recorder.calls) == 3
    returns = []
    for entry, (prompts, out) in zip(logged, recorder.calls, strict=True):
        assert len(prompts) == 4 and len(set(prompts)) == 1  # one GRPO group: the same episode 4 times
        for spec, ids, mask, paid in zip(prompts, out["completion_ids"], out["env_mask"], out["env_reward"], strict=True):
            texts = [tokenizer.decode(t, skip_special_tokens=True) for t in replies(ids, mask)]
            assert replay_return(spec, texts)[0] == paid
        assert entry["reward"] == pytest.approx(sum(out["env_reward"]) / 4)
        assert entry["rewards/env_reward/mean"] == pytest.approx(entry["reward"])
        returns += out["env_reward"]
    assert len(set(returns)) > 1, "every episode earned the same return: the test would not see a wrong reward"
    moved = [name for name, p in trainer.model.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert moved, "no weight changed in three GRPO steps"
    checkpoint = tmp_path / "checkpoint-3"
    assert (checkpoint / "model.safetensors").is_file() and (checkpoint / "config.json").is_file()


# Through the server -------------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[str]:
    """NumberLine served as ``rl4vlm-gym serve`` serves it (its catalog, app and uvicorn settings), by
    uvicorn in a thread of this process on a free port; its URL. A thread rather than the command:
    no second Python to start and import the server (1.6 s of the clean run's 11 s here); the command
    itself is started by the server's tests (tests/server). The socket listens before the thread
    starts, so connections queue until uvicorn takes them."""
    pytest.importorskip("openenv", reason="needs the server extra: pip install 'rl4vlm-gym[server]'")
    import socket
    import threading

    import uvicorn

    from rl4vlm_gym.server.app import MAX_WS_MESSAGE_BYTES, create_app
    from rl4vlm_gym.server.environment import Catalog

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(
        create_app(Catalog.of(ENV)),
        log_level="error",
        ws_max_size=MAX_WS_MESSAGE_BYTES,
        ws_per_message_deflate=False,
        lifespan="on",
    )
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uvicorn_server.should_exit = True
        thread.join(30)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"


@pytest.mark.slow
def test_grpo_trains_through_the_server(tmp_path, server):
    """Two GRPO steps with every episode played by rl4vlm/Remote-v0 against `rl4vlm-gym serve`: the
    logged rewards are the returns the local env pays for the same replies."""

    def remote() -> gym.Env:  # each session's env made by the server with these arguments
        return gym.make("rl4vlm/Remote-v0", url=server, env_id=ENV, obs_mode="text", **ENV_KWARGS)

    image_only = EnvRollout(lambda: gym.make("rl4vlm/Remote-v0", url=server, env_id=ENV, obs_mode="image"))
    with pytest.raises(ValueError, match="obs_mode is 'image'"):
        image_only._new_env()
    rollout = EnvRollout(remote, env_id=ENV, prompt=PROMPT, max_turns=4)
    recorder = Recorder(rollout)
    trainer = make_trainer(tmp_path, recorder, steps=2)
    tokenizer = trainer.processing_class.tokenizer
    trainer.train()
    rollout.close()

    assert trainer.state.global_step == 2
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logged) == len(recorder.calls) == 2
    for entry, (prompts, out) in zip(logged, recorder.calls, strict=True):
        for spec, ids, mask, paid in zip(prompts, out["completion_ids"], out["env_mask"], out["env_reward"], strict=True):
            texts = [tokenizer.decode(t, skip_special_tokens=True) for t in replies(ids, mask)]
            assert replay_return(spec, texts)[0] == paid
        assert entry["reward"] == pytest.approx(sum(out["env_reward"]) / 4)
    assert (tmp_path / "checkpoint-2" / "model.safetensors").is_file()


def test_a_language_models_tokenizer_gets_string_contents():
    """With a tokenizer as TRL's processing class (a text LLM), messages are rendered with string
    contents: many LLM chat templates print a list of parts as it is."""
    _, processor = load_vlm(default_tiny_model())
    rollout = EnvRollout(ENV)
    env = gym.make(ENV, obs_mode="text")
    messages = to_hf(PromptBuilder(PROMPT, attach_images=False).messages(env.reset(seed=1)[0]))[0]
    tokenizer = processor.tokenizer
    tokenizer.chat_template = (  # a template that takes only strings, like many LLMs'
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    text = tokenizer.decode(rollout._encode(tokenizer, tokenizer, messages, generation_prompt=True))
    assert "Target:" in text and "'type'" not in text
    assert text.startswith("<|im_start|>system\nYou are an agent") and text.endswith("<|im_start|>assistant\n")


# The rollout's bookkeeping on a stub generator --------------------------------------------------------


class StubGenerator:
    """Stands in for the trainer's ``_generate_single_turn``: replies chosen by the test ("+" or "-",
    some ending in the end-of-turn token, some cut by the budget before it), with log-probs, and every
    call's input kept; an input is known as its episode's by its first call's prompt. The processing
    class is the tiny model's real processor."""

    def __init__(self, processing: Any) -> None:
        self.processing_class = processing
        tokenizer = processing.tokenizer
        self.plus, self.minus = tokenizer.convert_tokens_to_ids("+"), tokenizer.convert_tokens_to_ids("-")
        self.eos = tokenizer.eos_token_id
        self.inputs: list[list[list[int]]] = []
        self.replies: dict[int, list[list[int]]] = {}  # by the episode's place in the batch
        self.turn = 0

    def _generate_single_turn(self, prompts: list[list[int]], images: Any, kwargs: Any, num_generations: int) -> tuple:
        assert num_generations == 1
        self.inputs.append([list(p) for p in prompts])
        if not self.replies:  # the first call: the batch's prompts, one per episode
            self.starts = [list(p) for p in prompts]
        replies = []
        for prompt in prompts:
            i = next(i for i, start in enumerate(self.starts) if prompt[: len(start)] == start)
            token = self.plus if (i + self.turn) % 2 else self.minus
            replies.append([token, self.eos] if (i + self.turn) % 3 else [token])  # no EOS: cut by the budget
            self.replies.setdefault(i, []).append(replies[-1])
        self.turn += 1
        return replies, [[-0.5 - 0.25 * k for k in range(len(r))] for r in replies]


def test_the_env_mask_marks_exactly_the_generated_tokens_with_a_stub_generator():
    """The inner loop's version of test_rollout_tokens_are_the_episode_conversation: every token the
    generator wrote is marked the model's (mask 1, its log-prob kept) and no other (a closing EOS the
    rollout adds, an observation's user turn: mask 0, log-prob 0); prompt + completion is the chat
    template's rendering of the conversation."""
    _, processor = load_vlm(default_tiny_model())
    trainer = StubGenerator(processor)
    tokenizer = processor.tokenizer
    rollout = EnvRollout(ENV, prompt=PROMPT, max_turns=3, env_kwargs=ENV_KWARGS)
    prompts = [episode_spec(s, {"level": 1}) for s in (5, 6, 7)]
    out = rollout(prompts, trainer)
    rollout.close()
    assert len(set(map(tuple, trainer.starts))) == 3 and max(out["env_turns"]) == 3  # the seeds' prompts differ; a third turn
    for i, spec in enumerate(prompts):
        ids, mask = out["completion_ids"][i], out["env_mask"][i]
        assert replies(ids, mask) == trainer.replies[i], "a token the model did not write is marked as the model's"
        assert sum(mask) == sum(len(r) for r in trainer.replies[i]), "a generated token is not marked as the model's"
        assert out["logprobs"] is not None, "the generator's log-probs were dropped"
        logprobs = out["logprobs"][i]
        assert len(ids) == len(mask) == len(logprobs)
        mine = [p for token, m, p in zip(ids, mask, logprobs, strict=True) if m]
        assert mine == [-0.5 - 0.25 * k for r in trainer.replies[i] for k in range(len(r))]
        assert all(p == 0.0 for m, p in zip(mask, logprobs, strict=True) if not m)
        # each generator call saw the episode so far: the prompt, then every completion token before it
        seen = [p for batch in trainer.inputs for p in batch if p[: len(trainer.starts[i])] == trainer.starts[i]]
        assert len(seen) == len(trainer.replies[i]) == out["env_turns"][i]
        assert all(p == out["prompt_ids"][i] + ids[: len(p) - len(out["prompt_ids"][i])] for p in seen)
        # the env's tokens between two replies: the closing EOS where the reply lacked one, then the
        # next observation's user turn and the generation prompt
        seed, options = parse_episode_spec(spec)
        texts = [tokenizer.decode(r, skip_special_tokens=True) for r in trainer.replies[i]]
        messages = conversation(seed, options, texts)
        rendered = processor.apply_chat_template(to_hf(messages)[0], tokenize=False)
        decoded = tokenizer.decode(out["prompt_ids"][i] + ids)
        assert rendered.startswith(decoded) and rendered[len(decoded) :] in ("\n", "<|im_end|>\n")
        assert (out["env_reward"][i], out["env_success"][i]) == replay_return(spec, texts)
