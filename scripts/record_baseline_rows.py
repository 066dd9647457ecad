"""Train the four reference baselines on CPU and put each on the board of the family it trained on.

Each row is one run of the whole pipeline a user runs, through the CLI: ``rl4vlm-gym train`` (the
method's CPU config, ``baselines/configs/<algo>/cpu.yaml``: the tiny random-weight Qwen2-VL, every
weight trained, a format warm-up on random admissible actions, then RL) on one env of the board's
family, ``rl4vlm-gym eval --agent hf -a model=<the final checkpoint>`` on the board's suite,
unchanged but for the prompt's answer format (``plain``, the one the model was trained to write;
the board checks the protocol with the submitted prompt), and ``rl4vlm-gym submit``, which
packages the run with its ``metadata.yaml`` and a ``README.md`` saying how it was made, and
validates it by replaying every episode:

    nice -n 10 .venv/bin/python scripts/record_baseline_rows.py [--board navigation ...] [--out runs/baseline-rows]

| board | method | training env (the family of the method's paper) |
|---|---|---|
| navigation | VL-DAC | ``rl4vlm/MiniWorld-OneRoom-v1`` (VL-DAC's MiniWorld) |
| cards | RL4VLM | ``rl4vlm/NumberLine-v0`` level 1 (RL4VLM's gym-cards) |
| webshop | LOOP | ``rl4vlm/WebShop-v1`` level 1 (LOOP's AppWorld is not here; its closest family, multi-step tool use on pages) |
| household | GiGPO | ``rl4vlm/Household-v0`` (GiGPO's ALFWorld) |

The budget is a pipeline check's, not a paper's (``TRAINING``): a short warm-up, 3 updates of 64
env steps or 2 groups of 4 episodes, episodes cut at 10 steps in training (the board plays the
suite's own budgets). The rows say so in their names: a random model trained for minutes shows
that a baseline trains, checkpoints, evaluates and submits end to end, and where its replies go
(mostly one reply at every step), not how the method ranks.

Torch runs on one thread (``OMP_NUM_THREADS=1``), niced: the machine is shared. Intermediate
runs go to ``--out`` (``runs/`` is not committed); a finished train or eval folder there is
reused, with the CPU minutes it took (``seconds.json``), so an interrupted recording resumes. The
CPU minutes of training and evaluating (user + system of their processes) go into the row's
``compute``. About 10 min of CPU time for the four, 4 of them the navigation board's 7,482 steps.

Re-checking: with the row already committed, the script packages its run in a temporary folder
and compares instead of writing: the episodes must equal the committed ones in everything but
timings (the same commands on the same seeds play the same replies), and it says which differ.
Give a fresh ``--out`` to train and evaluate again from scratch (a reused run only re-checks the
packaging). ``--replace`` writes the new row over the committed one.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "rl4vlm_gym.cli"]
CONTACT = "RL4VLM Gym maintainers (leaderboards/README.md)"
MODEL = "tiny-qwen2-vl (random init, 0.8M parameters)"  # the hf agent's name of rl4vlm_gym.agents.tiny's model

# board: method, training env, its kwargs (the board's level and observation mode), config overrides
ROWS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "navigation": ("vl-dac", "rl4vlm/MiniWorld-OneRoom-v1", {"level": 0, "obs_mode": "image+text"}, {}),
    "cards": ("rl4vlm", "rl4vlm/NumberLine-v0", {"level": 1, "obs_mode": "image+text"}, {}),
    # "click[b06xyz]" and "search[...]" need more than the CPU configs' 4 tokens
    "webshop": ("loop", "rl4vlm/WebShop-v1", {"level": 1, "obs_mode": "image+text"}, {"generation.max_new_tokens": 16}),
    # "put soapbar 1 in/on toilet 1" is 11 of the tiny tokenizer's tokens
    "household": ("gigpo", "rl4vlm/Household-v0", {"level": 0, "obs_mode": "image+text"}, {"generation.max_new_tokens": 12}),
}

NAMES = {"vl-dac": "VL-DAC", "rl4vlm": "RL4VLM", "loop": "LOOP", "gigpo": "GiGPO"}
UPDATES = 3
TRAINING: dict[str, Any] = {  # one small budget for every method
    "env.max_steps": 10,
    "rollout.num_envs": 8,
    "rollout.steps": 64,  # VL-DAC, RL4VLM: env steps per update
    "rollout.groups": 2,  # LOOP, GiGPO: groups of group_size episodes sharing a seed
    "rollout.group_size": 4,
    "warmup.steps": 20,
    "warmup.batch_size": 16,
    "eval.episodes": 2,  # the trainer's own evaluation on the training env; the board's is below
    "eval.every": 0,
    "tensorboard": False,
    "checkpoint_every": UPDATES,
}
_TIMINGS = ("agent_ms", "env_ms")


def _run(command: list[str]) -> float:
    """Run a CLI command on one torch thread, niced; its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    print("$ rl4vlm-gym", " ".join(command[len(CLI) :]), flush=True)
    subprocess.run(["nice", "-n", "10", *command], cwd=REPO, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _overrides(board: str) -> list[str]:
    algo, env_id, kwargs, extra = ROWS[board]
    settings = {**TRAINING, "env.kwargs": kwargs, **extra}
    return [f"-o{key}={json.dumps(value)}" for key, value in settings.items()]


def _train(board: str, out: Path, seconds: dict[str, float]) -> None:
    algo, env_id, _, _ = ROWS[board]
    if not (out / "eval" / "final" / "summary.json").exists():  # finished runs are reused
        shutil.rmtree(out, ignore_errors=True)
        command = [*CLI, "train", "--algo", algo, "--config", f"baselines/configs/{algo.replace('-', '_')}/cpu.yaml"]
        command += ["--env", env_id, "--out", str(out), "--updates", str(UPDATES), *_overrides(board)]
        seconds["train"] = _run(command)


def _evaluate(board: str, train: Path, out: Path, seconds: dict[str, float], workers: int) -> None:
    """The board's suite with the final checkpoint, sampled as the trainer's own evaluation does."""
    if (out / "summary.json").exists():
        return
    config = _config(train)
    generation = config["generation"]
    model = train / "checkpoints" / "final" / "model"
    model = model.relative_to(REPO) if model.is_relative_to(REPO) else model  # run.json names it as given
    command = [*CLI, "eval", "--agent", "hf", "--suite", board, "--out", str(out), "--no-report", "--no-progress"]
    command += ["-a", f"model={model}", "-a", f"max_new_tokens={generation['max_new_tokens']}", "-a", "temperature=0"]
    command += ["-a", f"seed={config['seed']}", "--output-format", config["prompt"]["output_format"], "--workers", str(workers)]
    seconds["eval"] = _run(command)


def _config(train: Path) -> dict[str, Any]:
    import yaml

    return yaml.safe_load((train / "config.yaml").read_text(encoding="utf-8"))


def _train_log(train: Path) -> list[dict[str, str]]:
    import csv

    with (train / "train_log.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _env_steps(train: Path) -> int:
    return int(float(_train_log(train)[-1]["env_steps"]))


def _training(train: Path) -> str:
    """What the updates saw: each one's training success and invalid rate, and whether any changed the weights."""
    rows = _train_log(train)
    said = "; ".join(f"{float(r['success']):.2f} / {float(r['invalid_rate']):.2f}" for r in rows)
    said = f"training success / invalid rate per update: {said}"
    if not any(r["loss"] for r in rows):  # no unit kept: LOOP drops every rollout whose advantage is about 0
        said += "; no update changed the weights (every rollout of a group scored alike, so every advantage was 0)"
    return said


def _replies(run: Path) -> str:
    """The board run's most common replies and their shares of its steps."""
    from collections import Counter

    with (run / "episodes.jsonl").open(encoding="utf-8") as f:
        counts = Counter(step["raw"] for line in f if line.strip() for step in json.loads(line)["steps"])
    total = sum(counts.values())
    return ", ".join(f"{json.dumps(reply)} {n / total:.0%}" for reply, n in counts.most_common(3)) + f" of {total:,} steps"


def _readme(board: str, train: Path, run: Path, seconds: dict[str, float]) -> str:
    algo, env_id, _, _ = ROWS[board]
    name = NAMES[algo]
    config = f"baselines/configs/{algo.replace('-', '_')}/cpu.yaml"
    final = json.loads((train / "eval" / "final" / "summary.json").read_text(encoding="utf-8"))["overall"]
    success, invalid = final["success"]["mean"], final["invalid_action_rate"]
    overrides = " ".join(option[2:] for option in _overrides(board))
    train_min, eval_min = seconds.get("train", 0) / 60, seconds.get("eval", 0) / 60
    return f"""# {name} on the tiny random model, trained on CPU: a pipeline check

This row is the reference pipeline run end to end, not a result: the tiny random-weight Qwen2-VL
(0.8M parameters, no pretraining) after a format warm-up on random admissible actions and
{UPDATES} updates of {name} (`{config}`) on `{env_id}`, then the harness on this board with the
final checkpoint. It shows that the baseline trains, checkpoints, evaluates and submits; it says
nothing about how {name} ranks against other methods.

Recorded by `python scripts/record_baseline_rows.py --board {board}`: `rl4vlm-gym train --algo {algo}
--config {config} --env {env_id} --updates {UPDATES}` with the overrides below, `rl4vlm-gym eval
--agent hf -a model=<checkpoints/final/model> --suite {board} --output-format plain` (the format
the model was trained to write), `rl4vlm-gym submit`.

- overrides: `{overrides}`
- {_training(train)}
- its greedy replies on this board: {_replies(run)}
- env steps of RL: {_env_steps(train)}; the trainer's own final evaluation (2 evaluation seeds of
  the training env, 10 steps): success {success:.2f}, invalid rate {invalid:.2f}
- CPU time (user + system, one torch thread, on a shared 2-core machine): training {train_min:.1f} min,
  this board's evaluation {eval_min:.1f} min
"""


def _same_play(new: Path, old: Path) -> str | None:
    """Why the new row's episodes are not the committed row's (timings aside), or ``None``."""

    def records(folder: Path) -> list[dict[str, Any]]:
        path = folder / "episodes.jsonl.gz"
        text = gzip.decompress(path.read_bytes()).decode() if path.exists() else (folder / "episodes.jsonl").read_text()
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        for row in rows:
            row["steps"] = [{k: v for k, v in s.items() if k not in _TIMINGS} for s in row["steps"]]
        return sorted(rows, key=lambda r: (r["task"], r["seed"]))

    new_rows, old_rows = records(new), records(old)
    if len(new_rows) != len(old_rows):
        return f"{len(new_rows)} episodes, the row has {len(old_rows)}"
    for a, b in zip(new_rows, old_rows):
        if a != b:
            return f"episode ({b['task']}, {b['seed']}) differs"
    return None


def record(board: str, out: Path, replace: bool, workers: int = 1) -> str:
    algo = ROWS[board][0]
    seconds_file = out / board / "seconds.json"
    seconds: dict[str, float] = json.loads(seconds_file.read_text()) if seconds_file.exists() else {}
    train = out / board / "train"
    _train(board, train, seconds)
    seconds_file.write_text(json.dumps(seconds))
    run = out / board / "eval"
    _evaluate(board, train, run, seconds, workers)
    seconds_file.write_text(json.dumps(seconds))

    folder = REPO / "leaderboards" / "submissions" / board
    existing = sorted(folder.glob(f"*_{algo}-tiny-cpu"))
    date = datetime.datetime.now(datetime.UTC).date()
    target = existing[-1] if existing else folder / f"{date:%Y%m%d}_{algo}-tiny-cpu"
    minutes = {step: seconds.get(step, 0) / 60 for step in ("train", "eval")}
    compute = f"CPU (2 shared cores), 1 torch thread: {minutes['train']:.1f} min training, {minutes['eval']:.1f} min evaluation (CPU time)"
    metadata = [
        "--name", f"{NAMES[algo]}, tiny random model on CPU (pipeline check, not a result)",  # short: a column of the transfer matrix
        "--contact", CONTACT, "--model", MODEL, "--training-env", ROWS[board][1], "--algorithm", algo,
        "--env-steps", str(_env_steps(train)), "--compute", compute,
        "--date", str(date if not existing else _committed_date(target)),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        readme = Path(tmp) / "README.md"
        readme.write_text(_readme(board, train, run, seconds), encoding="utf-8")
        staged = Path(tmp) / board / target.name  # submit checks the suite by the folder's parent's name
        staged.parent.mkdir()
        _run([*CLI, "submit", str(run), str(staged), *metadata, "--readme", str(readme)])
        if existing and not replace:
            problem = _same_play(staged, target)
            return f"{target.relative_to(REPO)}: " + ("the same play as committed" if problem is None else f"DIFFERS: {problem}")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(staged, target)
    return f"{target.relative_to(REPO)}: recorded"


def _committed_date(target: Path) -> str:
    import yaml

    return str(yaml.safe_load((target / "metadata.yaml").read_text(encoding="utf-8"))["date"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", action="append", choices=list(ROWS), help="only these boards (repeatable; default: all four)")
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "baseline-rows", help="training and evaluation runs")
    parser.add_argument("--workers", type=int, default=1, help="eval's worker processes (greedy replies: the same episodes)")
    parser.add_argument("--replace", action="store_true", help="write over a committed row instead of comparing with it")
    args = parser.parse_args()
    differs = False
    for board in args.board or list(ROWS):
        verdict = record(board, args.out.resolve(), args.replace, args.workers)
        differs |= "DIFFERS" in verdict
        print(verdict, flush=True)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
