"""Learning evidence on CPU: each baseline trains the tiny model on an easy env and beats the
random agent.

Every method starts from the tiny random Qwen2-VL, runs the format warm-up of its CPU config
(random admissible actions in the answer format: success stays at the random agent's level),
then RL for a few minutes on the one-step colour-naming env (``benchmarks/colour_naming.py``,
image observations). The harness evaluates each policy on 64 evaluation seeds after the
warm-up and at the end; the random agent plays the same seeds. Prints a table of start and
end success and writes the learning curves to ``OUT/learning_curves.png`` and a report per
method to ``OUT/<algo>/report/``.

    .venv/bin/python benchmarks/baselines_learning.py [--updates 12] [--out runs/bench-learning]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from colour_naming import ENV_ID, register_colour_naming  # noqa: E402

from rl4vlm_gym.baselines import ALGORITHMS  # noqa: E402
from rl4vlm_gym.baselines.config import default_config_path, load_config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--episodes", type=int, default=64, help="evaluation seeds")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-learning"))
    args = parser.parse_args()
    register_colour_naming()
    from rl4vlm_gym.baselines.trainer import Trainer
    from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary

    overrides = {
        "env.id": ENV_ID, "env.kwargs": {"obs_mode": "image", "image_size": 112}, "updates": args.updates,
        "eval.episodes": args.episodes, "eval.every": 5, "optim.lr": args.lr, "optim.final_lr": args.lr, "rollout.groups": 8, "rollout.num_envs": 16,
    }  # fmt: skip
    rows, logs = [], []
    random_success = None
    for algo in args.algos:
        config = load_config(default_config_path(algo, ENV_ID, "cpu"), overrides)
        out = args.out / algo
        start = time.perf_counter()
        trainer = Trainer(config, out)
        summary = trainer.run()
        seconds = time.perf_counter() - start
        with (out / "eval_log.csv").open() as f:
            evals = list(csv.DictReader(f))
        if random_success is None:  # the random agent on the same evaluation seeds
            suite = trainer._eval_suite()
            records = run_suite(suite, AgentSpec("random"), args.out / "random", prompt=trainer.prompt)
            random_success = write_summary(args.out / "random", suite, records)["overall"]["success"]["mean"]
        rows.append(
            (algo, float(evals[0]["success"]), float(summary["overall"]["success"]["mean"]), int(evals[-1]["env_steps"]), seconds)
        )
        logs.append(out / "eval_log.csv")
    print(f"\nOne-step colour naming (image, 112x112), tiny Qwen2-VL on CPU, {args.updates} updates, {args.episodes} eval seeds")
    print(f"random agent: success {random_success:.3f}")
    print(f"{'method':8s} {'start':>7s} {'end':>7s} {'env steps':>10s} {'minutes':>8s}")
    for algo, first, last, steps, seconds in rows:
        print(f"{algo:8s} {first:7.3f} {last:7.3f} {steps:10d} {seconds / 60:8.1f}")
    _plot(logs, random_success, args.out / "learning_curves.png")
    print(f"curves: {args.out / 'learning_curves.png'}")


def _plot(logs: list[Path], random_success: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for log in logs:
        with log.open() as f:
            rows = list(csv.DictReader(f))
        ax.plot([int(r["env_steps"]) for r in rows], [float(r["success"]) for r in rows], marker="o", label=log.parent.name)
    ax.axhline(random_success, color="grey", linestyle="--", label="random agent")
    ax.set_xlabel("env steps")
    ax.set_ylabel("eval success (64 seeds)")
    ax.set_ylim(0, 1.02)
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
