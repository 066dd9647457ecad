"""Learning evidence on a game, on CPU: the tiny model's success against the random opponent rises,
trained against that opponent and in self-play.

Kuhn poker, text observations (``rl4vlm/KuhnPoker-vs-Random-v0``): the smallest game where a
simple policy beats the random opponent (always betting wins ~0.69 of hands, the best response
does no better; the random agent ~0.51). Two ways to train VL-DAC from the same start (the tiny
random Qwen2-VL after a format warm-up on random moves):

- ``random``: one seat against the random opponent through the single-agent view
  (``baselines/configs/vl_dac/kuhn-cpu.yaml``);
- ``selfplay``: one seat of the AEC game, seats alternating, against a pool of the policy's own
  snapshots (``kuhn-selfplay-cpu.yaml``): it never meets the random opponent in training.

Each run is evaluated greedily by the harness against the random opponent on the same evaluation
seeds before RL (after the warm-up) and after the last update; the random agent plays those seeds
too. The modes of a seed start from the same weights (one format warm-up per seed). Prints every
run and the medians over the seeds.

    .venv/bin/python benchmarks/games_learning.py [--seeds 0 1 2] [--updates 4] [--out runs/bench-games-learning]
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import time
from pathlib import Path

from rl4vlm_gym.baselines.config import CONFIGS_DIR, load_config

CONFIGS = {"random": "kuhn-cpu.yaml", "selfplay": "kuhn-selfplay-cpu.yaml"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--modes", nargs="+", choices=sorted(CONFIGS), default=["random", "selfplay"])
    parser.add_argument("--updates", type=int, default=4)
    parser.add_argument("--steps", type=int, default=32, help="env steps per update")
    parser.add_argument("--episodes", type=int, default=64, help="evaluation seeds")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-games-learning"))
    args = parser.parse_args()
    from rl4vlm_gym.baselines.trainer import Trainer
    from rl4vlm_gym.harness.runner import AgentSpec, run_suite, write_summary

    rows: list[tuple[str, int, float, float, float, float]] = []
    for seed in args.seeds:
        random_success, warmed = None, None
        for mode in args.modes:
            overrides = {
                "seed": seed, "updates": args.updates, "rollout.steps": args.steps, "eval.episodes": args.episodes,
                "eval.every": 0, "tensorboard": False,
            }  # fmt: skip
            if warmed is not None:  # the modes of a seed share one format warm-up (the same in each)
                overrides["warmup.steps"] = 0
            config = load_config(CONFIGS_DIR / "vl_dac" / CONFIGS[mode], overrides)
            out = args.out / f"{mode}-seed{seed}"
            shutil.rmtree(out, ignore_errors=True)  # a fresh run, not a resumed one
            start = time.perf_counter()
            trainer = Trainer(config, out)
            if warmed is None:

                def keep_warmed(tag: str, force: bool = False, evaluate=trainer.evaluate, first=trainer) -> dict:
                    nonlocal warmed
                    if warmed is None:  # update_0: the weights right after the warm-up
                        warmed = first.policy.trainable_state()
                    return evaluate(tag, force)

                trainer.evaluate = keep_warmed  # type: ignore[method-assign]
            else:
                trainer.policy.load_trainable_state(warmed)
            summary = trainer.run()
            minutes = (time.perf_counter() - start) / 60
            with (out / "eval_log.csv").open() as f:
                before = float(next(csv.DictReader(f))["success"])
            if random_success is None:  # the random agent on the same evaluation seeds
                suite = trainer.eval_suite()
                folder = args.out / f"random-agent-seed{seed}"
                records = run_suite(suite, AgentSpec("random", {"seed": seed}), folder, prompt=trainer.prompt)
                random_success = write_summary(folder, suite, records)["overall"]["success"]["mean"]
            after = float(summary["overall"]["success"]["mean"])
            rows.append((mode, seed, random_success, before, after, minutes))
            print(
                f"{mode:9s} seed {seed}: random agent {random_success:.3f}, before {before:.3f}, after {after:.3f} ({minutes:.1f} min)",
                flush=True,
            )
    print(
        f"\nKuhn poker vs random (text), VL-DAC, tiny Qwen2-VL on CPU, {args.updates} updates of {args.steps} env steps, {args.episodes} eval seeds"
    )
    print(f"{'training':9s} {'seeds':>5s} {'random agent':>12s} {'before':>7s} {'after':>7s} {'minutes':>8s}   (medians)")
    for mode in args.modes:
        mine = [r for r in rows if r[0] == mode]
        med = [statistics.median(r[i] for r in mine) for i in (2, 3, 4, 5)]
        print(f"{mode:9s} {len(mine):5d} {med[0]:12.3f} {med[1]:7.3f} {med[2]:7.3f} {med[3]:8.1f}")


if __name__ == "__main__":
    main()
