"""Suites: loading, expansion, errors that name the field, and the protocol hash."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rl4vlm_gym.harness.suite import AXES, Suite, SuiteError, builtin_suites, draw_seeds, load_suite, parse_positions
from rl4vlm_gym.prompts import PromptConfig
from rl4vlm_gym.registry import EVAL_SEEDS, TRAIN_SEEDS

BASE = {
    "name": "tiny",
    "axis": "smoke",
    "max_steps": 5,
    "tasks": [
        {"name": "nl", "env": "rl4vlm/NumberLine-v0", "level": [0, 1], "obs_mode": ["image", "text"], "seeds": [1, 2]},
        {"name": "bj", "env": "rl4vlm/Blackjack-v0", "seeds": [3], "max_steps": 2},
    ],
}


def _with(**changes):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for path, value in changes.items():
        *keys, last = path.split("__")
        target = data
        for key in keys:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value
    return data


def test_expansion_names_levels_modes_and_budgets():
    suite = Suite.from_dict(BASE)
    assert [t.name for t in suite.tasks] == ["nl/l0/image", "nl/l0/text", "nl/l1/image", "nl/l1/text", "bj"]
    assert suite.tasks[2].make_kwargs == {"obs_mode": "image", "level": 1, "max_episode_steps": 5}
    assert suite.task("bj").max_steps == 2
    assert suite.episodes[:3] == [("nl/l0/image", 1), ("nl/l0/image", 2), ("nl/l0/text", 1)]
    assert len(suite.episodes) == 9


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tasks__0__seeds": [1, 1]}, "tasks.0.seeds"),
        ({"tasks__0__seeds": [-1]}, "seeds must be in [0, 2**32)"),
        ({"tasks__0__seeds": []}, "tasks.0.seeds"),
        ({"tasks__0__obs_mode": "pixels"}, "obs_mode 'pixels' is unknown"),
        ({"tasks__0__kwargs": {"level": 2}}, "are task fields"),
        ({"tasks__0__wrappers": ["os.system"]}, "unknown wrappers"),
        ({"tasks__0__colour": "red"}, "tasks.0.colour: Extra inputs are not permitted"),
        ({"axis": "sideways"}, "axis"),
        ({"prompt": {"template": "mine"}}, "prompt template 'mine' is unknown"),
        ({"tasks__1__name": "nl/l0/image"}, "tasks.1.name"),
        ({"tasks__0__env": "NumberLine"}, "tasks.0.env"),
    ],
)
def test_malformed_suites_name_the_field(changes, message):
    with pytest.raises(SuiteError) as err:
        Suite.from_dict(_with(**changes), "my.yaml")
    assert str(err.value).startswith("my.yaml: ")
    assert message in str(err.value)


def test_duplicate_task_names_after_expansion():
    data = _with(tasks__1__name="nl", tasks__1__env="rl4vlm/NumberLine-v0")
    data["tasks"][0] = {"name": "nl", "env": "rl4vlm/NumberLine-v0", "seeds": [1]}
    with pytest.raises(SuiteError, match="task names repeat"):
        Suite.from_dict(data)


def test_load_suite_file_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SuiteError, match="not valid YAML"):
        load_suite(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(SuiteError, match="a suite is a mapping"):
        load_suite(bad)
    with pytest.raises(SuiteError, match="no suite 'nope'"):
        load_suite("nope")
    with pytest.raises(SuiteError, match="cannot read suite"):
        load_suite(tmp_path / "missing.yaml")


def test_unknown_env_ids_are_reported():
    suite = Suite.from_dict(_with(tasks__1__env="rl4vlm/Nope-v0"))
    with pytest.raises(SuiteError, match=r"unknown env id 'rl4vlm/Nope-v0'"):
        suite.check_envs()
    suite = Suite.from_dict(_with(tasks__1__env="rl4vlm/WebShop-v1", tasks__1__obs_mode="image"))
    with pytest.raises(SuiteError, match=r"task 'bj': rl4vlm/WebShop-v1 has no obs_mode 'image'"):
        suite.check_envs()


def test_protocol_hash_covers_seeds_budgets_kwargs_and_prompt():
    base = Suite.from_dict(BASE).protocol_hash()
    assert Suite.from_dict(BASE).protocol_hash() == base
    for changes in (
        {"tasks__0__seeds": [1, 3]},
        {"max_steps": 6},
        {"tasks__1__kwargs": {"image_size": 128}},
        {"tasks__1__env": "rl4vlm/Blackjack-v1"},
    ):
        assert Suite.from_dict(_with(**changes)).protocol_hash() != base, changes
    suite = Suite.from_dict(BASE)
    assert suite.protocol_hash(PromptConfig(history=2)) != base
    assert suite.protocol_hash(PromptConfig(template="vl-dac")) != base


def test_protocol_records_the_facts_an_env_declares_and_only_those():
    from rl4vlm_gym.registry import env_card, protocol_facts

    assert "env_facts" not in Suite.from_dict(BASE).protocol()  # suites of other envs keep their hash
    data = _with(tasks__1__env="rl4vlm/WebShop-v1", tasks__1__kwargs={"reward_variant": "verl-agent"})
    facts = Suite.from_dict(data).protocol()["env_facts"]
    assert env_card("rl4vlm/WebShop-v1").protocol_facts is not None
    assert facts == {"bj": protocol_facts("rl4vlm/WebShop-v1", {"reward_variant": "verl-agent"})} and facts["bj"]
    assert protocol_facts("rl4vlm/No-Such-v0") == {}


def test_protocol_hash_is_the_same_in_another_process(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(BASE))
    code = f"from rl4vlm_gym.harness.suite import load_suite; print(load_suite({str(path)!r}).protocol_hash())"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == load_suite(path).protocol_hash()


def test_builtin_suites_load_and_cover_every_axis():
    names = builtin_suites()
    assert "smoke" in names
    axes = set()
    for name in names:
        suite = _builtin(name)
        suite.check_envs()
        axes.add(suite.axis)
        assert Path(suite.name).name == name
    assert axes == set(AXES)


# The in-distribution suites the transfer suites are drawn from, in their seeds' file order (task k:
# training seeds from root 100 + 2k, evaluation seeds from root 101 + 2k), and the families they train.
SOURCES = ("cards", "navigation", "household", "webshop")
TRAINED_FAMILIES = {"cards", "navigation"}
TRANSFER = ("transfer-seeds", "transfer-levels", "transfer-visual", "transfer-wording", "transfer-modality", "transfer-family")


def _fields(task, **changes):
    """What a task plays, name included, with ``changes`` applied."""
    fields = {k: getattr(task, k) for k in ("name", "env", "level", "obs_mode", "kwargs", "seeds", "max_steps", "wrappers", "score")}
    return {**fields, **changes}


@functools.cache
def _builtin(name):
    """A built-in suite, loaded once per process (suites are frozen; the games suite is large)."""
    return load_suite(name)


def _source_tasks():
    return [t for name in SOURCES for t in _builtin(name).tasks]


def test_in_distribution_suites_play_training_seeds_and_transfer_suites_evaluation_seeds():
    for name in builtin_suites():
        suite = _builtin(name)
        if suite.axis == "in-distribution":
            assert all(s in TRAIN_SEEDS for t in suite.tasks for s in t.seeds), name
        if suite.axis in ("seeds", "levels", "visual", "wording", "modality"):
            assert all(s in EVAL_SEEDS for t in suite.tasks for s in t.seeds), name
    tasks = _source_tasks()
    assert all(_builtin(name).axis == "in-distribution" for name in SOURCES)
    assert [t.seeds for t in tasks] == [tuple(draw_seeds("train", 8, root=100 + 2 * k)) for k in range(len(tasks))]


def test_transfer_suites_shift_one_axis():
    """Each transfer suite differs from its in-distribution source only along its axis: every task of
    cards, navigation, household and webshop (in that order), on its evaluation seeds, and then only
    its level, appearance, wording or observation mode changed; the family suite keeps the families
    those agents never trained on."""
    from rl4vlm_gym.registry import env_card

    suites = {name: _builtin(name) for name in TRANSFER}
    assert set(TRANSFER) <= set(builtin_suites())
    assert {s.axis for s in suites.values()} == {"seeds", "levels", "visual", "wording", "modality", "family"}
    source = _source_tasks()
    evaluation = [tuple(draw_seeds("eval", 8, root=101 + 2 * k)) for k in range(len(source))]
    assert all(s in EVAL_SEEDS for seeds in evaluation for s in seeds)
    unseen = [_fields(t, seeds=seeds) for t, seeds in zip(source, evaluation, strict=True)]
    assert [_fields(t) for t in suites["transfer-seeds"].tasks] == unseen
    # two levels up: NumberLine 1 -> 3, WebShop 1 -> 3, the others 0 -> 2
    assert [_fields(t) for t in suites["transfer-levels"].tasks] == [{**u, "level": u["level"] + 2} for u in unseen]
    assert [_fields(t) for t in suites["transfer-visual"].tasks] == [{**u, "kwargs": {"appearance": "held-out"}} for u in unseen]
    assert [_fields(t) for t in suites["transfer-wording"].tasks] == [{**u, "kwargs": {"wording": "held-out"}} for u in unseen]
    # each task in the three modes, in the order written (the web shop through its browser: screenshots of the page)
    browser = {"rl4vlm/WebShop-v1": "rl4vlm/WebShop-Browser-v2"}
    assert [_fields(t) for t in suites["transfer-modality"].tasks] == [
        {**u, "env": browser.get(u["env"], u["env"]), "name": f"{u['name']}/{mode}", "obs_mode": mode}
        for u in unseen
        for mode in ("image", "text", "image+text")
    ]
    held_out = [u for u in unseen if env_card(u["env"]).family not in TRAINED_FAMILIES]
    assert [_fields(t) for t in suites["transfer-family"].tasks] == held_out and held_out
    assert all(s.prompt == _builtin("cards").prompt for s in suites.values())


def test_draw_seeds():
    seeds = draw_seeds("eval", 50, root=3)
    assert seeds == draw_seeds("eval", 50, root=3)
    assert len(set(seeds)) == 50 and all(s in EVAL_SEEDS for s in seeds)
    assert seeds != draw_seeds("eval", 50, root=4)
    with pytest.raises(ValueError, match="split 'dev' is unknown"):
        draw_seeds("dev", 1)


def test_a_subset_keeps_the_named_tasks_and_their_first_seeds_or_deals():
    suite = Suite.from_dict(_with(tasks__0__seeds=[5, 1, 2], tasks__1__seeds=[3, 7]))
    cut = suite.subset(["nl/l1/text", "bj"], limit=2)
    assert [(t.name, t.seeds) for t in cut.tasks] == [("nl/l1/text", (5, 1)), ("bj", (3, 7))]
    assert [t.name for t in suite.subset(limit=1).tasks] == [t.name for t in suite.tasks]
    assert [t.seeds for t in suite.subset(limit=1).tasks] == [(5,)] * 4 + [(3,)]
    assert suite.subset(limit=3).protocol_hash() == suite.protocol_hash()  # every seed kept: the same protocol
    assert cut.protocol_hash() != suite.protocol_hash()  # a cut suite never passes for the whole one
    # a deal is played from `duplicate` seeds N k .. N k + N - 1: whole deals are kept, in the task's order
    dealt = Suite.from_dict(_with(tasks__1__seeds=[9, 8, 2, 3, 5, 4], tasks__1__score={"metric": "return", "low": -1, "high": 1, "duplicate": 2}))
    assert dealt.subset(["bj"], limit=2).tasks[0].seeds == (9, 8, 2, 3)
    assert dealt.subset(["bj"], limit=1).tasks[0].seeds == (9, 8)
    with pytest.raises(SuiteError, match=r"no task 'nl'; its tasks: nl/l0/image, .*bj"):
        suite.subset(["nl"])
    with pytest.raises(SuiteError, match="limit=0"):
        suite.subset(limit=0)


def test_seed_positions_parse_and_cut_each_task_at_and_within_its_range():
    assert parse_positions("0,3,5-7") == [range(0, 1), range(3, 4), range(5, 8)]
    assert parse_positions(" 2 - 4 ,2") == [range(2, 5), range(2, 3)]  # spaces, overlaps and repeats are fine
    for spec in ("", "1,", "-1", "a", "1-", "1.5", "\u0663"):  # below 0, empty, not whole numbers, non-ASCII digits
        with pytest.raises(SuiteError, match="is not a position N or a range N-M"):
            parse_positions(spec)
    with pytest.raises(SuiteError, match="the range '3-1' ends below its start"):
        parse_positions("3-1")
    suite = Suite.from_dict(_with(tasks__0__seeds=[5, 1, 2], tasks__1__seeds=[3, 7, 4]))
    last = suite.subset(positions=parse_positions("2"))  # at the top of the range: each task's third seed
    assert [t.seeds for t in last.tasks] == [(2,)] * 4 + [(4,)]
    with pytest.raises(SuiteError, match=r"seed position 3 is past the 3 seeds of task 'nl/l0/image' \(positions 0-2\)"):
        suite.subset(positions=parse_positions("0,3"))  # just above it
    with pytest.raises(SuiteError, match="give positions from 0"):
        suite.subset(positions=[-1])  # just below it (an API caller; the parser refuses '-1')
    # composes with the task names and the limit: positions first, then the first N of them, in the task's order
    cut = suite.subset(["bj", "nl/l1/text"], limit=1, positions=parse_positions("2,0"))
    assert [(t.name, t.seeds) for t in cut.tasks] == [("nl/l1/text", (5,)), ("bj", (3,))]
    assert [t.seeds for t in suite.subset(["bj"], positions=[0, 2]).tasks] == [(3, 4)]
    assert suite.subset(positions=parse_positions("0-2")).protocol_hash() == suite.protocol_hash()  # every seed: the same protocol
    assert last.protocol_hash() != suite.protocol_hash() != suite.subset(positions=[0, 1]).protocol_hash()
    # where a deal is played from 2 seeds, positions count deals and keep them whole
    dealt = Suite.from_dict(_with(tasks__1__seeds=[9, 8, 2, 3, 5, 4], tasks__1__score={"metric": "return", "low": -1, "high": 1, "duplicate": 2}))
    assert dealt.subset(["bj"], positions=[1, 2]).tasks[0].seeds == (2, 3, 5, 4)
    with pytest.raises(SuiteError, match="past the 3 deals of task 'bj'"):
        dealt.subset(["bj"], positions=[3])
