"""Learning evidence on CPU: each baseline trains the tiny model on an easy env and beats the
random agent.

Each method runs its CPU config (``baselines/configs/<algo>/cpu.yaml``): the tiny random
Qwen2-VL, a format warm-up (random admissible actions in the answer format, so success stays at
the random agent's level), then RL on ``rl4vlm/ColourNaming-v0`` (name the colour of the image,
image observations). The harness evaluates each policy on 64 evaluation seeds after the warm-up,
every 5 updates and at the end; the random agent plays the same seeds. Prints a table of start and
end success and writes the learning curves to ``OUT/learning_curves.png`` and a report per
method to ``OUT/<algo>/report/``.

    .venv/bin/python benchmarks/baselines_learning.py [--updates 20] [--out runs/bench-learning]
"""

from __future__ import annotations

import argparse
import csv
import shutil
import time
from pathlib import Path

from rl4vlm_gym.baselines import ALGORITHMS
from rl4vlm_gym.baselines.config import default_config_path, load_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--lr", type=float, default=None, help="override the CPU configs' learning rate")
    parser.add_argument("--episodes", type=int, default=64, help="evaluation seeds")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-learning"))
    args = parser.parse_args()
    from rl4vlm_gym.baselines.trainer import Trainer
    from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary

    overrides: dict[str, object] = {"updates": args.updates, "eval.episodes": args.episodes}
    if args.lr is not None:
        overrides.update({"optim.lr": args.lr, "optim.final_lr": args.lr})
    rows, logs = [], []
    random_success = None
    for algo in args.algos:
        config = load_config(default_config_path(algo, None, "cpu"), overrides)
        out = args.out / algo
        shutil.rmtree(out, ignore_errors=True)  # a fresh run, not a resumed one
        start = time.perf_counter()
        trainer = Trainer(config, out)
        summary = trainer.run()
        seconds = time.perf_counter() - start
        with (out / "eval_log.csv").open() as f:
            evals = list(csv.DictReader(f))
        if random_success is None:  # the random agent on the same evaluation seeds
            suite = trainer.eval_suite()
            records = run_suite(suite, AgentSpec("random"), args.out / "random", prompt=trainer.prompt)
            random_success = write_summary(args.out / "random", suite, records)["overall"]["success"]["mean"]
        rows.append(
            (algo, float(evals[0]["success"]), float(summary["overall"]["success"]["mean"]), int(evals[-1]["env_steps"]), seconds)
        )
        logs.append(out / "eval_log.csv")
    print(f"\n{config.env.id} {config.env.kwargs}, tiny Qwen2-VL on CPU, {args.updates} updates, {args.episodes} eval seeds")
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
