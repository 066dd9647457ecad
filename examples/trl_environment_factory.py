"""Train a model with TRL's GRPOTrainer and its ``environment_factory``: the model plays an RL4VLM Gym env
served over OpenEnv by calling its MCP tools, and GRPO learns from the env's returns.

TRL makes one environment object per rollout (:class:`GymTools`); ``reset`` starts an episode (the
dataset row's seed) and returns its first observation, which TRL appends to the prompt; the object's
public methods are the model's tools (here ``act``: one move, its docstring the tool's description);
``get_reward`` is the episode's return. Each object talks to the server with openenv-core's
``MCPToolClient`` (a session of its own, over HTTP ``/mcp``), calling the server's MCP tools
``start_episode`` and ``act`` (:mod:`rl4vlm_gym.server.mcp`).

CPU smoke run: ``rl4vlm-gym serve ENV --mcp`` started here, the tiny random Qwen2-VL built offline (no
download; a step of 4 rollouts took 20 s of CPU on a busy 2-core machine)::

    python examples/trl_environment_factory.py --steps 2

A random model writes no tool call, so for ``--model tiny`` decoding is steered to a well-formed
``act`` call with a random move (``sequence_bias``, as a user constrains decoding); a real model is
left free. Against a server (``cd deploy/rl4vlm_gym_env && uv run --project . server``) with a
tool-calling model, on a GPU (not measured here)::

    python examples/trl_environment_factory.py --url http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B \\
        --steps 200 --batch 8 --num-generations 8 --max-completion-length 512 --bf16
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

INSTRUCTIONS = (
    "You play a game through the tool `act`. Each observation lists the admissible actions; "
    "call act with one of them until the episode ends."
)


class GymTools:
    """One rollout's environment for TRL's ``environment_factory``: the served env through its MCP tools.

    Args:
        url: the server's base URL.
        env_id: the served env id to play (None: the server's own).
        make_kwargs: the env's ``gym.make`` arguments, as far as the server allows them.
        options: the reset options of every episode, e.g. ``{"level": 2}``.
    """

    def __init__(
        self,
        url: str,
        env_id: str | None = None,
        make_kwargs: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        from openenv.core.mcp_client import MCPToolClient

        client = MCPToolClient(base_url=url)
        client.use_production_mode = True  # tools over HTTP /mcp, in a session of this object's own
        self._client = client.sync()
        self._env_id, self._make_kwargs, self._options = env_id, make_kwargs, options
        self.seed: int | None = None
        self.moves: list[str] = []
        self.episode_return = 0.0
        self.done = False

    def reset(self, seed: int | None = None, **row: Any) -> str:
        """Start the episode of the dataset row's seed; its first observation goes into the prompt."""
        first = self._client.call_tool(
            "start_episode", seed=seed, options=self._options, env_id=self._env_id, make_kwargs=self._make_kwargs
        )
        self.seed, self.moves, self.episode_return, self.done = seed, [], 0.0, bool(first["done"])
        return "\n" + _describe(first, first=True)

    def act(self, action: str) -> str:
        """Play one move in the game.

        Args:
            action: the move, one of the admissible actions of the last observation.

        Returns:
            The observation after the move, the move's reward and whether the episode ended.
        """
        if self.done:
            raise ValueError("the episode is over: no more moves")
        result = self._client.call_tool("act", action=action)
        self.moves.append(action)
        self.episode_return += result["reward"]
        self.done = bool(result["done"])
        return _describe(result)

    def get_reward(self) -> float:
        """The episode's return: the rewards of every move played (TRL calls it once per rollout)."""
        return self.episode_return

    def _close(self) -> None:
        self._client.close()


def _describe(observation: dict[str, Any], first: bool = False) -> str:
    """An observation as the text a model reads: the env's text; at the start its mission and admissible
    actions, after a move its reward and whether the episode ended."""
    if first:
        return f"{observation['text']}\nMission: {observation['mission']}\nAdmissible actions: {observation['actions']}"
    return f"{observation['text']}\nReward: {observation['reward']}; done: {observation['done']}"


@contextlib.contextmanager
def served(env_id: str) -> Iterator[str]:
    """``rl4vlm-gym serve ENV_ID --mcp --port 0`` in a child process of its own group, which
    :func:`rl4vlm_gym.processes.popen` kills if this process dies first; yields the URL its first line names,
    and stops it at the end."""
    from rl4vlm_gym import processes

    command = [sys.executable, "-m", "rl4vlm_gym.cli", "serve", env_id, "--mcp", "--port", "0", "--max-sessions", "64"]
    server, owned = processes.popen(command, stdout=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline()  # "serving ENV_ID on http://127.0.0.1:PORT (WebSocket ...)"
        if not ready.startswith("serving "):
            raise RuntimeError(f"rl4vlm-gym serve did not start: {ready!r}")
        yield ready.split(" on ")[1].split()[0]
    finally:
        processes.kill_group(server.pid)
        server.wait()
        owned.release()


def steer_to_act_calls(tokenizer: Any, moves: list[str], bias: float = 100.0) -> dict[tuple[int, ...], float]:
    """A ``sequence_bias`` (transformers' generation option) under which a random model writes a well-formed
    call of the tool ``act`` with one of ``moves`` (each as likely), then ends its turn: each token of the
    call is biased after the tokens before it, the more the longer the call so far (a key's bias applies
    wherever its last tokens match, so the call's first token is biased everywhere, and must lose to the
    next token of a call under way). For the tiny model only: it has never learnt tool calls."""

    def ids(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    head = ids('<tool_call>\n{"name": "act", "arguments": {"action": "')
    biases: dict[tuple[int, ...], float] = {}
    for move in moves:
        call = head + ids(move) + ids('"}}\n</tool_call>') + [tokenizer.convert_tokens_to_ids("<|im_end|>")]
        for end in range(1, len(call) + 1):
            biases[tuple(call[:end])] = bias * end
    return biases


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="a hub id or a folder; 'tiny': the tiny random Qwen2-VL (CPU)")
    parser.add_argument("--env", default="rl4vlm/NumberLine-v0", help="the env id to play")
    parser.add_argument("--level", type=int, default=None, help="the env's level (default: its default level)")
    parser.add_argument(
        "--url", default=None, help="a server's URL (rl4vlm-gym serve --mcp, or deploy/rl4vlm_gym_env); none: one started here"
    )
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps")
    parser.add_argument("--batch", type=int, default=4, help="rollouts per device per step")
    parser.add_argument("--num-generations", type=int, default=4, help="rollouts per seed (the GRPO group)")
    parser.add_argument("--max-tool-calls", type=int, default=2, help="tool calls per rollout at most")
    parser.add_argument(
        "--max-completion-length", type=int, default=240, help="tokens per rollout at most (tool answers included)"
    )
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=64, help="dataset rows: seeds 0..N-1")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 training (GPU)")
    parser.add_argument("--output", default="runs/trl-environment-factory", help="checkpoints and logs")
    args = parser.parse_args(argv)

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    generation_kwargs = None
    if args.model == "tiny":
        from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm

        model, processor = load_vlm(default_tiny_model())
        processing_class = processor.tokenizer  # text in, text out: the env's text observations and the tool calls
        # With a tokenizer TRL takes the model for a text LLM, and reads its context length at the config's top
        # level; Qwen2-VL keeps it in text_config.
        model.config.max_position_embeddings = model.config.text_config.max_position_embeddings
        processing_class.chat_template = qwen2_5_chat_template  # a template with tools, whose calls TRL parses
        generation_kwargs = {"sequence_bias": steer_to_act_calls(processing_class, ["+", "-"])}
    else:
        model, processing_class = args.model, None  # TRL loads the model and its tokenizer

    dataset = Dataset.from_list(
        [{"prompt": [{"role": "user", "content": INSTRUCTIONS}], "seed": seed} for seed in range(args.seeds)]
    )
    config = GRPOConfig(  # examples/trl_grpo.py's settings (repeated: each example reads alone), and the tool calls' bound
        output_dir=args.output,
        max_steps=args.steps,
        per_device_train_batch_size=args.batch,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls,
        learning_rate=args.learning_rate,
        bf16=args.bf16,
        use_cpu=not torch.cuda.is_available(),
        generation_kwargs=generation_kwargs,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
    )
    environments: list[GymTools] = []
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(served(args.env))

        def factory() -> GymTools:
            environments.append(GymTools(url, env_id=args.env, options=None if args.level is None else {"level": args.level}))
            return environments[-1]

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*environment_factory.*experimental", category=UserWarning)
            trainer = GRPOTrainer(
                model=model, processing_class=processing_class, args=config, train_dataset=dataset, environment_factory=factory
            )
        try:
            trainer.train()
        finally:
            for environment in environments:
                environment._close()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(f"step {entry['step']}: mean env return {entry['reward']:.3f} (std {entry['reward_std']:.3f})")
    print(json.dumps({"moves": [environment.moves for environment in environments]}))
    print(f"logs in {Path(args.output).resolve()}")
    return trainer, environments


if __name__ == "__main__":
    main()
