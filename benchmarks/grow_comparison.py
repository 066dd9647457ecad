"""GROW against GiGPO and RL4VLM on CPU (issue 38): the tiny model on two families with long episodes.

Each method runs its CPU config (``baselines/configs/<algo>/cpu.yaml``: the tiny random Qwen2-VL,
every weight trained, a format warm-up on random admissible actions) on each family's env at level
0, with the same small budget: ``--updates`` updates of ``--groups`` x ``--group-size`` episodes
for the episode-group methods (GROW, GiGPO) and as many env steps per update for RL4VLM as those
take when every episode runs to the step limit (``rollout.steps`` = groups x group size x max
steps: the tiny model's episodes mostly do), for every seed. The harness evaluates the
policy greedily on ``--episodes`` evaluation seeds after the warm-up and at the end; the random agent
plays the same seeds. Success (with its 95% interval) comes from the harness's summary of the
evaluation episodes pooled over the seeds; where the family's envs give decision facts, so do
decision accuracy and regret in steps (``rl4vlm_gym.harness.decisions``: intervals resample
episodes), and the first method minus each other one, paired by evaluation episode. Writes
``OUT/table.md`` and ``OUT/results.json``; a run folder that has finished is
reused, so an interrupted comparison resumes.

    nice -n 10 .venv/bin/python benchmarks/grow_comparison.py [--seeds 0 1 2] [--updates 3] [--out runs/grow-comparison]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import time
from pathlib import Path
from typing import Any

FAMILIES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {  # env id, its kwargs, config overrides
    # "put soapbar 1 in/on toilet 1" is 11 tokens of the tiny model's tokenizer (the CPU configs write 4)
    "household": ("rl4vlm/Household-PickPlace-v0", {"level": 0, "image_size": 64}, {"generation.max_new_tokens": 12}),
    "navigation": ("rl4vlm/MiniWorld-OneRoom-v1", {"level": 0, "image_size": 64}, {}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", nargs="+", default=["grow", "gigpo", "rl4vlm"])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=10, help="the episodes' step limit, in training and evaluation")
    parser.add_argument("--warmup", type=int, default=10, help="format warm-up batches")
    parser.add_argument("--warmup-batch", type=int, default=16)
    parser.add_argument("--episodes", type=int, default=8, help="evaluation seeds per run")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (one: the machine is shared)")
    parser.add_argument("--out", type=Path, default=Path("runs/grow-comparison"))
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from rl4vlm_gym.baselines.config import default_config_path, load_config
    from rl4vlm_gym.baselines.trainer import Trainer
    from rl4vlm_gym.harness.runner import AgentSpec, run_suite

    start = time.perf_counter()
    runs: dict[tuple[str, str], list[Path]] = {}
    for family in args.families:
        env_id, kwargs, family_overrides = FAMILIES[family]
        for seed in args.seeds:
            trainer = None
            for algo in args.algos:
                overrides: dict[str, Any] = {
                    "env.id": env_id, "env.kwargs": kwargs, "env.max_steps": args.max_steps, "updates": args.updates, "seed": seed,
                    "rollout.groups": args.groups, "rollout.group_size": args.group_size,
                    "rollout.num_envs": args.groups * args.group_size,
                    "rollout.steps": args.groups * args.group_size * args.max_steps,
                    "warmup.steps": args.warmup, "warmup.batch_size": args.warmup_batch,
                    "eval.episodes": args.episodes, "eval.every": 0, "tensorboard": False, "checkpoint_every": args.updates,
                }  # fmt: skip
                overrides.update(family_overrides)
                config = load_config(default_config_path(algo, None, "cpu"), overrides)
                out = args.out / family / algo / f"seed{seed}"
                runs.setdefault((family, algo), []).append(out)
                if (out / "eval" / "final" / "summary.json").exists():
                    continue
                shutil.rmtree(out, ignore_errors=True)  # a fresh run, not a half one
                began = time.perf_counter()
                trainer = Trainer(config, out)
                trainer.run()
                (out / "seconds.txt").write_text(f"{time.perf_counter() - began:.1f}\n")
                print(f"{family} {algo} seed {seed}: {time.perf_counter() - began:.0f} s", flush=True)
            random_out = args.out / family / "random" / f"seed{seed}"
            if not (random_out / "episodes.jsonl").exists():  # the random agent on the same evaluation seeds
                shutil.rmtree(random_out, ignore_errors=True)
                trainer = trainer or Trainer(config, args.out / family / "suite")  # only its evaluation suite is used
                run_suite(trainer.eval_suite(), AgentSpec("random"), random_out, prompt=trainer.prompt)
    results = {family: _family_rows(args, family, runs) for family in args.families}
    paired = {family: _paired(args, family, runs) for family in args.families}
    (args.out / "results.json").write_text(json.dumps({**results, "paired": paired}, indent=1) + "\n")
    table = _table(args, results, time.perf_counter() - start) + _paired_table(paired)
    (args.out / "table.md").write_text(table)
    print(table)


def _records(path: Path) -> list[dict[str, Any]]:
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def _scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Success (pooled episodes) and, with decision facts, accuracy and regret in steps, each with its interval."""
    from rl4vlm_gym.harness.decisions import decision_summary, has_decisions
    from rl4vlm_gym.harness.metrics import summarize

    overall = summarize(records)["overall"]
    row: dict[str, Any] = {"episodes": len(records), "success": overall["success"]}
    decisions = decision_summary(records)["overall"] if has_decisions(records) else None
    row["accuracy"] = decisions and decisions["accuracy"]
    row["regret_steps"] = decisions and decisions["regret_steps"]
    row["scored_steps"] = decisions and decisions["scored_steps"]
    return row


def _family_rows(args: argparse.Namespace, family: str, runs: dict[tuple[str, str], list[Path]]) -> list[dict[str, Any]]:
    rows = []
    random_records = [r for seed in args.seeds for r in _records(args.out / family / "random" / f"seed{seed}" / "episodes.jsonl")]
    rows.append({"method": "random agent", "stage": "", **_scores(random_records)})
    # the same seed gives every method the same warmed-up weights: one row then (checked, not assumed)
    warmed = [_outcomes(runs[(family, algo)]) for algo in args.algos]
    same = all(w == warmed[0] for w in warmed)
    for algo in args.algos:
        folders = runs[(family, algo)]
        stages = [] if same and algo != args.algos[0] else [("after warm-up", "update_0")]
        for stage, tag in [*stages, (f"after {args.updates} updates", "final")]:
            records = [r for out in folders for r in _records(out / "eval" / tag / "episodes.jsonl")]
            per_seed = [_success(_records(out / "eval" / tag / "episodes.jsonl")) for out in folders]
            method = "every method" if same and tag == "update_0" else algo
            row = {"method": method, "stage": stage, **_scores(records), "per_seed_success": per_seed}
            if tag == "final":
                steps = []
                for out in folders:
                    with (out / "train_log.csv").open() as f:
                        steps.append(int(float(list(csv.DictReader(f))[-1]["env_steps"])))
                row["env_steps"] = steps
                row["seconds"] = [float((out / "seconds.txt").read_text()) for out in folders if (out / "seconds.txt").exists()]
            rows.append(row)
    return rows


def _outcomes(folders: list[Path]) -> list[tuple[Any, ...]]:
    """Every warm-up evaluation episode's seed and replies, to tell whether two methods started alike."""
    records = [r for out in folders for r in _records(out / "eval" / "update_0" / "episodes.jsonl")]
    return [(r["seed"], tuple(s["raw"] for s in r["steps"])) for r in records]


def _paired(args: argparse.Namespace, family: str, runs: dict[tuple[str, str], list[Path]]) -> dict[str, Any]:
    """The first method minus each other one after training, paired by evaluation episode (same run
    seed, same evaluation seed, same warmed-up start): success, and decision accuracy as a ratio of
    sums, with 95% intervals from 2,000 resamples of the paired episodes."""
    import numpy as np

    from rl4vlm_gym.harness.decisions import episode_decisions, has_decisions

    def counts(algo: str) -> np.ndarray:  # [episodes, 3]: success, optimal steps, scored steps
        records = [
            r for out in runs[(family, algo)] for r in sorted(_records(out / "eval" / "final" / "episodes.jsonl"), key=_key)
        ]
        facts = has_decisions(records)
        rows = [
            (float(r["success"]), *((e.optimal, e.scored) if facts and (e := episode_decisions(r)) else (0, 0))) for r in records
        ]
        return np.array(rows, dtype=float)

    first, rng, out = counts(args.algos[0]), np.random.default_rng(38), {}
    for other in args.algos[1:]:
        second = counts(other)
        picks = rng.integers(0, len(first), (2000, len(first)))
        entry = {}
        for name, diff in (("success", _success_diff), ("accuracy", _accuracy_diff)):
            mean = diff(first, second, np.arange(len(first))[None])[0]
            if np.isnan(mean):
                entry[name] = None
                continue
            boot = diff(first, second, picks)
            entry[name] = {"mean": float(mean), "ci95": [float(np.nanpercentile(boot, 2.5)), float(np.nanpercentile(boot, 97.5))]}
        out[f"{args.algos[0]} - {other}"] = entry
    return out


def _key(record: dict[str, Any]) -> tuple[Any, ...]:
    return (record["task"], record["seed"])


def _success_diff(a: Any, b: Any, picks: Any) -> Any:
    return a[picks, 0].mean(1) - b[picks, 0].mean(1)


def _accuracy_diff(a: Any, b: Any, picks: Any) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return a[picks, 1].sum(1) / a[picks, 2].sum(1) - b[picks, 1].sum(1) / b[picks, 2].sum(1)


def _paired_table(paired: dict[str, dict[str, Any]]) -> str:
    lines = ["", "| family | paired difference | success [95% CI] | decision accuracy [95% CI] |", "|---|---|---|---|"]
    for family, entries in paired.items():
        for name, entry in entries.items():
            lines.append(f"| {family} | {name} | {_interval(entry['success'])} | {_interval(entry['accuracy'])} |")
    return "\n".join(lines) + "\n"


def _success(records: list[dict[str, Any]]) -> float:
    return sum(bool(r["success"]) for r in records) / max(1, len(records))


def _interval(entry: dict[str, Any] | None, digits: int = 2) -> str:
    if not entry:
        return "n/a"
    low, high = entry["ci95"]
    return f"{entry['mean']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _table(args: argparse.Namespace, results: dict[str, list[dict[str, Any]]], seconds: float) -> str:
    lines = [
        f"Tiny Qwen2-VL on CPU, level 0, max {args.max_steps} steps, seeds {args.seeds}, {args.updates} updates of "
        f"{args.groups}x{args.group_size} episodes (RL4VLM: {args.groups * args.group_size * args.max_steps} steps), "
        f"{args.episodes} evaluation episodes per seed (pooled: {args.episodes * len(args.seeds)}); {seconds / 60:.0f} min in all.",
        "",
        "| family | method | stage | success [95% CI] | per-seed success | decision accuracy [95% CI] | regret in steps [95% CI] | train env steps |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for family, rows in results.items():
        for row in rows:
            per_seed = ", ".join(f"{s:.2f}" for s in row.get("per_seed_success", [])) or ""
            steps = ", ".join(str(s) for s in row.get("env_steps", []))
            lines.append(
                f"| {family} | {row['method']} | {row['stage']} | {_interval(row['success'])} | {per_seed} | "
                f"{_interval(row['accuracy'])} | {_interval(row['regret_steps'])} | {steps} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
