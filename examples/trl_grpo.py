"""Train a model with TRL's GRPOTrainer on an RL4VLM Gym env, the reward coming from the env.

Each dataset row names an episode (a seed); TRL samples ``--num-generations`` completions of it,
each one a whole multi-turn episode played by :class:`rl4vlm_gym.integrations.trl.EnvRollout`
(the prompts from ``rl4vlm_gym.prompts``, the replies parsed by the env, the observations masked
out of the loss), and GRPO compares their returns. The env runs in this process, or behind
``rl4vlm-gym serve`` with ``--remote URL``.

TRL's ``rollout_func`` trains on text only (the images seen during a rollout never reach the loss),
so the env is made with ``obs_mode="text"``: a VLM plays from the text observation.

CPU smoke run (the tiny random Qwen2-VL built offline; 3 steps took 53 s on a busy 2-core machine)::

    python examples/trl_grpo.py --steps 3

GPU run (one 24 GB GPU; not measured on this project's machines, which have none)::

    python examples/trl_grpo.py --model Qwen/Qwen2-VL-2B-Instruct --env rl4vlm/NumberLine-v0 \\
        --steps 200 --batch 8 --num-generations 8 --max-turns 10 --max-completion-length 96 \\
        --learning-rate 1e-6 --bf16 --use-vllm --output runs/numberline-grpo

Through a server (the env in another process or on another machine)::

    rl4vlm-gym serve rl4vlm/NumberLine-v0 --port 8011 &
    python examples/trl_grpo.py --steps 3 --remote http://127.0.0.1:8011
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="a hub id or a folder; 'tiny': the tiny random Qwen2-VL (CPU)")
    parser.add_argument("--env", default="rl4vlm/NumberLine-v0", help="the env id (served by --remote, if given)")
    parser.add_argument("--remote", default=None, help="URL of `rl4vlm-gym serve` to play the env through")
    parser.add_argument("--level", type=int, default=None, help="the env's level (default: its default level)")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps")
    parser.add_argument("--batch", type=int, default=4, help="completions (episodes) per device per step")
    parser.add_argument("--num-generations", type=int, default=4, help="episodes per seed (the GRPO group)")
    parser.add_argument("--max-turns", type=int, default=4, help="replies per episode at most")
    parser.add_argument("--max-completion-length", type=int, default=16, help="tokens per reply at most")
    parser.add_argument("--output-format", default="json", choices=("json", "tags", "plain"), help="what the prompt asks for")
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=1024, help="dataset rows: seeds 0..N-1 of the train range")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 training (GPU)")
    parser.add_argument("--use-vllm", action="store_true", help="generate with vLLM (GPU; pip install vllm)")
    parser.add_argument("--output", default="runs/trl-grpo", help="checkpoints and logs")
    args = parser.parse_args()

    import gymnasium as gym
    import torch
    from trl import GRPOConfig, GRPOTrainer

    import rl4vlm_gym  # noqa: F401 - registers the envs
    from rl4vlm_gym.integrations.trl import EnvRollout, env_reward, episode_dataset
    from rl4vlm_gym.prompts import PromptConfig

    options = {} if args.level is None else {"level": args.level}
    if args.remote:
        # one server session per completion of a batch; the server makes the env with obs_mode="text"
        def make_env() -> gym.Env:
            return gym.make("rl4vlm/Remote-v0", url=args.remote, env_id=args.env, obs_mode="text")

        rollout = EnvRollout(
            make_env, env_id=args.env, prompt=PromptConfig(output_format=args.output_format), max_turns=args.max_turns
        )
    else:
        rollout = EnvRollout(args.env, prompt=PromptConfig(output_format=args.output_format), max_turns=args.max_turns)

    if args.model == "tiny":
        from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm

        model, processing_class = load_vlm(default_tiny_model())
    else:
        model, processing_class = args.model, None  # TRL loads the model and its processor
    config = GRPOConfig(
        output_dir=args.output,
        max_steps=args.steps,
        per_device_train_batch_size=args.batch,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate,
        bf16=args.bf16,
        use_cpu=not torch.cuda.is_available(),
        use_vllm=args.use_vllm,
        gradient_checkpointing=args.bf16,
        model_init_kwargs={"dtype": "bfloat16"} if args.bf16 and processing_class is None else None,
        logging_steps=1,
        save_steps=max(args.steps, 1),
        report_to="none",
        seed=0,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*rollout_func.*experimental", category=UserWarning)
        trainer = GRPOTrainer(
            model=model,
            processing_class=processing_class,
            reward_funcs=env_reward,
            args=config,
            train_dataset=episode_dataset(range(args.seeds), options),
            rollout_func=rollout,
        )
    try:
        trainer.train()
    finally:
        rollout.close()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(f"step {entry['step']}: mean env return {entry['reward']:.3f} (std {entry['reward_std']:.3f})")
    print(f"checkpoints in {Path(args.output).resolve()}")


if __name__ == "__main__":
    main()
