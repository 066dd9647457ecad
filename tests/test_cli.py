from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

import rl4vlm_gym
import rl4vlm_gym.extras
from rl4vlm_gym.cli import app
from rl4vlm_gym.docs import SECTIONS, missing_sections, parse_sections

runner = CliRunner()
ENV_EXTRAS = sorted({card.extra for card in rl4vlm_gym.list_envs() if card.extra})


def test_list_shows_every_registered_id_and_filters() -> None:
    result = runner.invoke(app, ["list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for card in rl4vlm_gym.list_envs():
        assert card.id in result.output
    only = runner.invoke(app, ["list", "--family", "sokoban"], terminal_width=200)
    assert only.exit_code == 0 and "rl4vlm/Sokoban-v0" in only.output and "rl4vlm/Points24-v0" not in only.output
    for option, value in (("--family", "no-such-family"), ("--skill", "juggling"), ("--obs-mode", "smell")):
        refused = runner.invoke(app, ["list", option, value], terminal_width=200)  # was an empty table and status 0
        assert refused.exit_code == 2 and f"no env has {option} '{value}'" in refused.output, refused.output
        assert "rl4vlm/" not in refused.output
    assert "sokoban" in runner.invoke(app, ["list", "--family", "x"], terminal_width=200).output  # the registered ones


def test_doctor_lists_the_extras_and_how_to_install_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # as on an install without the games extra
    monkeypatch.setenv("ALFWORLD_DATA", "/no/such/folder")
    result = runner.invoke(app, ["doctor"], terminal_width=250)
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 4}
    assert set(rl4vlm_gym.extras.MODULES) <= set(rows)
    assert "no" in rows["games"] and "pyspiel: `pip install 'rl4vlm-gym[games]'`" in rows["games"]
    assert all("yes" in rows[e] for e in rl4vlm_gym.extras.MODULES if e not in ("games", "marl"))
    assert "no such folder" in rows["ALFWORLD_DATA"]


def test_info_shows_the_card_and_unknown_ids_get_a_hint() -> None:
    result = runner.invoke(app, ["info", "rl4vlm/Points24-v0"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "any deal (may be unsolvable)" in result.output and "verl-agent" in result.output
    unknown = runner.invoke(app, ["info", "rl4vlm/Points25-v0"], terminal_width=200)
    assert unknown.exit_code == 2 and "Did you mean 'rl4vlm/Points24-v0'" in " ".join(unknown.output.split())


def test_info_shows_the_facts_this_machine_scores_with() -> None:
    from rl4vlm_gym.envs.webshop.nouns import tagger

    result = runner.invoke(app, ["info", "rl4vlm/WebShop-v1"], terminal_width=250)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.replace("│", " ").split())  # the table wraps long cells
    assert "on this machine" in shown and f"title_nouns: {tagger()}" in shown
    assert "on this machine" not in runner.invoke(app, ["info", "rl4vlm/Points24-v0"], terminal_width=250).output


def test_check_passes_one_env_and_rejects_unknown_checks() -> None:
    result = runner.invoke(
        app, ["check", "rl4vlm/NumberLine-v0", "--only", "fuzz", "--only", "oracle", "--throughput-steps", "200"],
        terminal_width=250,
    )
    assert result.exit_code == 0, result.output
    assert "all checks passed" in result.output and "steps/s" in result.output and "(oracle," in result.output
    assert "checked" in result.output and "2/2" in result.output  # the progress bar's last state: both checks run
    bad = runner.invoke(app, ["check", "rl4vlm/NumberLine-v0", "--only", "nope"])
    assert bad.exit_code == 2 and "unknown checks" in bad.output


@pytest.mark.extra("nav")
def test_check_measures_envs_whose_plans_are_searches_with_random_moves() -> None:
    result = runner.invoke(
        app, ["check", "rl4vlm/MiniWorld-PutNext-v1", "--only", "docs", "--throughput-steps", "20"], terminal_width=250
    )
    assert result.exit_code == 0, result.output
    assert "steps/s" in result.output and "(random," in result.output  # no planning per episode


def test_train_refuses_another_algorithms_config_naming_its_long_path(tmp_path: Path) -> None:
    """The message names the config's path and Rich wraps it at the console's width (80 columns
    under CliRunner), so a long checkout path split it: matched with the whitespace taken out. The
    path is made as long as splits the words of the message itself (a check on the raw output fails)."""
    from rl4vlm_gym.baselines.config import default_config_path

    width = 80
    # The path's last line then holds 70 characters: "is a loop" fits after it, "config," does not.
    pad = (70 - len(str(tmp_path / "x" / "cpu.yaml"))) % width + 2 * width
    folder = tmp_path / ("x" * pad)
    folder.mkdir()
    config = folder / "cpu.yaml"
    config.write_bytes(default_config_path("loop", None, "cpu").read_bytes())
    result = runner.invoke(app, ["train", "--algo", "gigpo", "--config", str(config)], terminal_width=width)
    assert result.exit_code == 2, result.output
    assert "is a loop config" not in result.output, "the path's length did not split the message: it tests no wrap"
    assert "".join(f"{config} is a loop config, not gigpo".split()) in "".join(result.output.split())


def test_play_reads_actions_from_the_terminal_and_saves_frames(tmp_path: Path) -> None:
    frame = tmp_path / "frame.png"
    # NumberLine seed 0 at level 0: target 3, current 5 (moves: "-" twice, the second by index).
    result = runner.invoke(
        app, ["play", "rl4vlm/NumberLine-v0", "--seed", "0", "--save", str(frame)], input="-\nnonsense\n0\n",
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert "Invalid action" in result.output and "episode over (terminated)" in result.output
    assert "return +0" in result.output  # 0 (closer) - 1 (invalid) + 1 (reached)
    image = np.asarray(Image.open(frame))
    assert image.shape == (300, 300, 3)


def test_play_shows_the_final_state(tmp_path: Path) -> None:
    """Blackjack's dealer shows the face-down card only at the end: the last text and frame are shown."""
    frame = tmp_path / "frame.png"
    result = runner.invoke(
        app, ["play", "rl4vlm/Blackjack-v0", "--seed", "0", "--save", str(frame)], input="stand\n", terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "You stand: you lose.\nDealer: Q♥, 7♦\nPlayer: 5♣, A♣" in result.output
    env = gym.make("rl4vlm/Blackjack-v0")
    env.reset(seed=0)
    final = env.step("stand")[0]["image"]
    env.close()
    assert np.array_equal(np.asarray(Image.open(frame)), final)


def test_play_with_the_oracle_finishes_a_points_game(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["play", "rl4vlm/EZPoints-v0", "--seed", "1", "--oracle", "--save", str(tmp_path / "f.png")],
        input="\n" * 10, terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert "Correct" in result.output and "return +10" in result.output


@pytest.mark.extra(*ENV_EXTRAS)  # it draws every env's example image
def test_missing_docstring_sections_are_reported() -> None:
    class Undocumented:
        """Does something.

        ## Description
        Text.

        ## Rewards
        """

    assert parse_sections(Undocumented.__doc__) == {"Description": "Text.", "Rewards": ""}
    assert missing_sections(Undocumented) == [s for s in SECTIONS if s != "Description"]


@pytest.mark.parametrize("env_id", [card.id for card in rl4vlm_gym.list_envs()])
def test_registered_envs_document_every_section(env_id: str, require_envs) -> None:
    import gymnasium as gym

    require_envs(env_id)
    env = gym.make(env_id)
    assert missing_sections(type(env.unwrapped)) == []


def test_eval_plays_only_the_named_tasks_on_their_first_seeds(tmp_path: Path) -> None:
    import json

    from rl4vlm_gym.harness.suite import load_suite

    out = tmp_path / "run"
    args = ["eval", "--agent", "oracle", "--suite", "smoke", "--task", "numberline/text", "--task", "ezpoints", "--limit", "1"]
    result = runner.invoke(app, [*args, "--out", str(out), "--no-progress", "--no-report"], terminal_width=200)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["task"] for r in records) == ["ezpoints", "numberline/text"]
    unknown = runner.invoke(app, ["eval", "--agent", "oracle", "--suite", "smoke", "--task", "nope", "--out", str(tmp_path / "x")])
    assert unknown.exit_code == 2 and "has no task 'nope'; its tasks: numberline/image+text" in unknown.output
    assert not (tmp_path / "x").exists()  # refused before anything is written
    # a cut run is no submission: submit says so and writes nothing
    submission = tmp_path / "submissions" / "smoke" / "20261129_cut"
    cut = runner.invoke(app, ["submit", str(out), str(submission), "--name", "n", "--contact", "c", "--no-replay"], terminal_width=400)
    assert cut.exit_code == 2, cut.output
    total = len(load_suite("smoke").episodes)
    assert f"is a cut run (eval --task, --limit or --seeds): it plays 2 of the {total} episodes" in " ".join(cut.output.split())
    assert not submission.parent.exists()


def test_eval_plays_only_the_seeds_at_the_given_positions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from rl4vlm_gym.harness.suite import load_suite

    monkeypatch.chdir(tmp_path)
    args = ["eval", "--agent", "oracle", "--suite", "smoke", "--task", "ezpoints", "--no-progress", "--no-report"]
    result = runner.invoke(app, [*args, "--seeds", "1"], terminal_width=200)
    assert result.exit_code == 0, result.output
    (out,) = (tmp_path / "runs").iterdir()  # a cut run's own default folder, never the whole run's runs/smoke-oracle
    assert out.name.startswith("smoke-oracle-cut-") and len(out.name) == len("smoke-oracle-cut-") + 8
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert [(r["task"], r["seed"]) for r in records] == [("ezpoints", load_suite("smoke").task("ezpoints").seeds[1])]
    assert json.loads((out / "run.json").read_text())["protocol_hash"] != load_suite("smoke").protocol_hash()
    for spec, message in (("2", "seed position 2 is past the 2 seeds of task 'ezpoints' (positions 0-1)"), ("1-0", "ends below its start")):
        refused = runner.invoke(app, [*args, "--seeds", spec, "--out", str(tmp_path / "x")], terminal_width=200)
        assert refused.exit_code == 2 and message in refused.output, refused.output
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_submit_packages_a_finished_run_the_validator_accepts(tmp_path: Path) -> None:
    import shutil

    from rl4vlm_gym.harness.leaderboard import validate_submission
    from rl4vlm_gym.harness.suite import load_suite

    committed = Path(__file__).resolve().parents[1] / "leaderboards" / "submissions" / "smoke" / "20261122_random"
    run = tmp_path / "runs" / "smoke-random"
    shutil.copytree(committed, run, ignore=shutil.ignore_patterns("metadata.yaml"))  # a finished run, compressed
    (run / "plots").mkdir()
    (run / "plots" / "run0_success.png").write_bytes(b"\x89PNG")  # eval's report: never copied
    out = tmp_path / "submissions" / "smoke" / "20261129_mine"
    args = ["submit", str(run), str(out), "--name", "Mine", "--contact", "me@example.org", "--algorithm", "grow", "--no-replay"]
    result = runner.invoke(app, args, terminal_width=400)
    assert result.exit_code == 0, result.output
    assert f"{len(load_suite('smoke').episodes)} episodes validated without replay" in " ".join(result.output.split())
    assert sorted(p.name for p in out.iterdir()) == ["episodes.jsonl.gz", "metadata.yaml", "run.json", "summary.json"]
    assert (out / "episodes.jsonl.gz").read_bytes() == (run / "episodes.jsonl.gz").read_bytes()
    assert "algorithm: grow" in (out / "metadata.yaml").read_text() and validate_submission(out, replay=False).ok


def test_train_s_progress_bar_follows_the_trainer_s_update_from_a_resume(capsys: pytest.CaptureFixture[str]) -> None:
    from rl4vlm_gym.cli import _progress

    update = 7  # what a resumed trainer's counter holds before its first callback
    bar = _progress(follow=lambda: update)
    bar.add_task("vl-dac on ColourNaming-v0", total=12)
    with bar:
        pass
    assert "7/12" in capsys.readouterr().out


@pytest.mark.slow  # ~1 s of CPU alone: the study's config schema and its report's plot (matplotlib)
def test_study_shows_a_bar_over_its_sets_and_resumes_finished_ones(tmp_path: Path) -> None:
    import json

    out = tmp_path / "study"
    for family in ("cards", "probe"):  # both sets finished by an earlier run: nothing is trained again
        (out / "runs" / family).mkdir(parents=True)
        scores = {"families": [family], "k": 1, "targets": {"balrog-smoke": {"before": 0.1, "after": 0.2, "gain": 0.1}}}
        (out / "runs" / family / "scores.json").write_text(json.dumps(scores))
    args = ["study", "--family", "probe", "--family", "cards", "--k", "1", "--draws", "2", "--held-out-episodes", "0", "--out", str(out)]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "analysing" in result.output and "2/2" in result.output
    assert "balrog-smoke: k=1 gain +0.100" in result.output and (out / "report.md").exists()
