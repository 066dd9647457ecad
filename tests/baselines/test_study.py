"""The env-set scaling study: its set draws, its analysis (means, fit, family effects) and one
real end-to-end study (tiny model, CPU) that resumes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

# peft (and the transformers it imports) is loaded by the trainer when a study trains, not at collection:
# every test worker imports this module to collect it, and importing peft takes seconds.
pytestmark = pytest.mark.extra("train")
pytest.importorskip("torch", reason="the study trains baselines: the train extra (torch, transformers, peft)")

from rl4vlm_gym.baselines.config import default_config_path, load_config  # noqa: E402
from rl4vlm_gym.baselines.study import FAMILIES, StudySpec, _analyse, run_study  # noqa: E402

SMALL = {
    "updates": 1, "warmup.steps": 1, "warmup.batch_size": 2, "eval.episodes": 1, "env.max_steps": 2, "generation.max_new_tokens": 4,
    "rollout.num_envs": 2, "rollout.steps": 2, "optim.minibatch_size": 2, "model.value_head": [8], "tensorboard": False,
}  # fmt: skip


def config():
    return load_config(default_config_path("vl-dac", None, "cpu"), dict(SMALL))


def test_sets_are_seeded_draws_without_repeats() -> None:
    spec = StudySpec(config(), ks=(1, 2, 3), draws=2, seed=7)
    sets = spec.sets()
    assert sets == StudySpec(config(), ks=(1, 2, 3), draws=2, seed=7).sets()  # the same seed, the same sets
    assert [len(s) for s in sets] == [1, 1, 2, 2, 3, 3] and len(set(sets)) == 6
    assert all(set(s) <= set(FAMILIES) and list(s) == sorted(s) for s in sets)
    assert sets != StudySpec(config(), ks=(1, 2, 3), draws=2, seed=8).sets()
    everything = StudySpec(config(), families={"a": ("x",), "b": ("y",)}, ks=(1, 2), draws=5).sets()
    assert everything == [("a",), ("b",), ("a", "b")]  # more draws than sets: each set once
    with pytest.raises(ValueError, match="k=3 is outside 1..2"):
        StudySpec(config(), families={"a": ("x",), "b": ("y",)}, ks=(3,)).sets()


def _row(families: tuple[str, ...], gain: float) -> dict:
    return {
        "families": list(families),
        "k": len(families),
        "targets": {"balrog": {"before": 0.1, "after": 0.1 + gain, "gain": gain}},
    }


def test_the_analysis_fits_a_log_law_and_measures_each_familys_effect() -> None:
    # gain = 0.05 + 0.1 log k exactly: the fit must give a and b back
    rows = [
        _row(("a",), 0.05),
        _row(("b",), 0.05),
        _row(("a", "b"), 0.05 + 0.1 * math.log(2)),
        _row(("a", "b", "c", "d"), 0.05 + 0.1 * math.log(4)),
    ]
    study = _analyse(rows, ["a", "b", "c", "d"])
    assert study["fit"]["balrog"]["a"] == pytest.approx(0.05) and study["fit"]["balrog"]["b"] == pytest.approx(0.1)
    assert study["gain_by_k"]["balrog"]["1"] == {
        "mean": pytest.approx(0.05),
        "ci95": [pytest.approx(0.05), pytest.approx(0.05)],
        "runs": 2,
    }
    # family c is only in the k=4 set: its effect is that set's gain minus the mean of the others
    others = (0.05 + 0.05 + 0.05 + 0.1 * math.log(2)) / 3
    assert study["family_effects"]["balrog"]["c"] == pytest.approx(0.05 + 0.1 * math.log(4) - others)
    one_size = _analyse([_row(("a",), 0.1), _row(("b",), 0.2)], ["a", "b"])
    assert one_size["fit"]["balrog"] is None  # a line needs two set sizes


@pytest.mark.extra("balrog")
def test_a_study_runs_end_to_end_and_resumes(tmp_path: Path) -> None:
    target = tmp_path / "tiny-balrog.yaml"
    target.write_text(
        "name: tiny-balrog\naxis: family\ndescription: one BabyAI episode\n"
        "prompt: {template: balrog, output_format: balrog-naive, history: 16, images: 1}\n"
        "tasks:\n- name: goto\n  env: balrog/BabyAI-GoTo-v0\n  wrappers: [balrog-actions]\n  max_steps: 2\n  seeds: [1073741824]\n"
    )
    families = {"probe": FAMILIES["probe"], "cards": ("rl4vlm/NumberLine-v0",)}
    spec = StudySpec(config(), families=families, ks=(1,), draws=1, targets=(str(target),), held_out_episodes=1)
    study = run_study(spec, tmp_path / "study")
    (run,) = study["runs"]
    held_out = f"held-out:{'cards' if run['families'] == ['probe'] else 'probe'}"
    assert set(run["targets"]) == {"tiny-balrog", held_out}
    for scores in run["targets"].values():
        assert 0.0 <= scores["before"] <= 1.0 and 0.0 <= scores["after"] <= 1.0
        assert scores["gain"] == pytest.approx(scores["after"] - scores["before"])
    folder = tmp_path / "study" / "runs" / run["families"][0]
    summary = json.loads((folder / "targets" / "tiny-balrog" / "after" / "summary.json").read_text())
    assert summary["balrog"]["envs"]["babyai"]["episodes_played"] == 1  # BALROG's figures scored the target
    assert (tmp_path / "study" / "report.md").read_text().startswith("# Env-set scaling study")
    assert (tmp_path / "study" / "gain_vs_k.png").stat().st_size > 0
    scores = folder / "scores.json"
    before = scores.stat().st_mtime_ns
    assert run_study(spec, tmp_path / "study") == study  # resumed: read back, nothing trained again
    assert scores.stat().st_mtime_ns == before
