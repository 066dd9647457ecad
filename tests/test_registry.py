"""The registry: env cards, list_envs, seed ranges and third-party plugins."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym
from rl4vlm_gym import registry
from rl4vlm_gym.registry import EVAL_SEEDS, OBS_MODES, TEST_SEEDS, TRAIN_SEEDS, EnvCard, env_card, list_envs, register

CARD_IDS = ["rl4vlm/Blackjack-v0", "rl4vlm/EZPoints-v0", "rl4vlm/NumberLine-v0", "rl4vlm/Points24-v0"]
SUBPROCESS_TIMEOUT = 180


@pytest.fixture
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Cards and Gymnasium ids registered inside a test are removed afterwards."""
    monkeypatch.setattr(registry, "_CARDS", dict(registry._CARDS))
    before = set(gym.registry)
    try:
        yield
    finally:
        for env_id in set(gym.registry) - before:
            del gym.registry[env_id]


def _card(env_id: str = "testreg/Dummy-v0", **overrides: Any) -> EnvCard:
    fields: dict[str, Any] = {
        "id": env_id,
        "entry_point": "rl4vlm_gym.envs.cards.numberline:NumberLine",
        "family": "testfamily",
        "summary": "A NumberLine under another id.",
        "skills": ("counting",),
        "levels": ("easy", "harder"),
        "default_level": 0,
        "action_grammar": "'-' or '+'",
        "action_examples": ("+",),
        "reward_variants": ("rl4vlm", "verl-agent"),
        "success": "the numbers are equal",
        "max_episode_steps": 7,
    }
    fields.update(overrides)
    return EnvCard(**fields)


# --------------------------------------------------------------------------------------------
# list_envs
# --------------------------------------------------------------------------------------------


def test_cards_family_lists_the_four_games() -> None:
    assert [c.id for c in list_envs(family="cards")] == CARD_IDS


def test_list_envs_is_sorted_by_id() -> None:
    ids = [c.id for c in list_envs()]
    assert ids == sorted(ids)
    assert set(CARD_IDS) <= set(ids)


@pytest.mark.parametrize(
    ("skill", "expected"),
    [
        ("planning", ["rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0"]),
        ("numbers", ["rl4vlm/NumberLine-v0"]),
        ("decision-making", ["rl4vlm/Blackjack-v0"]),
        ("visual-reading", CARD_IDS),
    ],
)
def test_list_envs_by_skill(skill: str, expected: list[str]) -> None:
    assert [c.id for c in list_envs(skill=skill, family="cards")] == expected


def test_list_envs_contains_is_case_insensitive() -> None:
    assert [c.id for c in list_envs(contains="POINTS", family="cards")] == ["rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0"]
    assert [c.id for c in list_envs(contains="numberline")] == ["rl4vlm/NumberLine-v0"]
    assert list_envs(contains="no-such-env-anywhere") == []


def test_cards_need_no_extra() -> None:
    assert [c.id for c in list_envs(extra="core", family="cards")] == CARD_IDS


@pytest.mark.usefixtures("isolated_registry")
def test_list_envs_filters_combine() -> None:
    register(_card("testreg/A-v0"))
    register(_card("testreg/B-v0", skills=("counting", "memory"), obs_modes=("text",)))
    register(_card("testreg/C-v0", family="otherfamily", extra="nav"))

    def ids(**filters: Any) -> list[str]:
        return [c.id for c in list_envs(**filters) if c.id.startswith("testreg/")]

    assert ids(family="testfamily") == ["testreg/A-v0", "testreg/B-v0"]
    assert ids(skill="memory") == ["testreg/B-v0"]
    assert ids(skill="counting") == ["testreg/A-v0", "testreg/B-v0", "testreg/C-v0"]
    assert ids(obs_mode="image") == ["testreg/A-v0", "testreg/C-v0"]
    assert ids(obs_mode="text") == ["testreg/A-v0", "testreg/B-v0", "testreg/C-v0"]
    assert ids(extra="nav") == ["testreg/C-v0"]
    assert ids(extra="core") == ["testreg/A-v0", "testreg/B-v0"]
    assert ids(contains="TESTREG/b") == ["testreg/B-v0"]
    assert ids(family="testfamily", obs_mode="image") == ["testreg/A-v0"]
    assert ids(family="otherfamily", extra="core") == []
    assert ids(family="testfamily", skill="memory", obs_mode="text", extra="core", contains="b-v0") == ["testreg/B-v0"]


# --------------------------------------------------------------------------------------------
# env_card and the cards' consistency with their envs
# --------------------------------------------------------------------------------------------


def test_env_card_returns_the_card() -> None:
    card = env_card("rl4vlm/NumberLine-v0")
    assert card.id == "rl4vlm/NumberLine-v0"
    assert card.family == "cards"
    assert card.entry_point == "rl4vlm_gym.envs.cards.numberline:NumberLine"
    assert card.max_level == len(card.levels) - 1 == 4


def test_unknown_id_raises_key_error_with_a_hint() -> None:
    with pytest.raises(KeyError) as excinfo:
        env_card("rl4vlm/NumberLine-v1")
    message = excinfo.value.args[0]
    assert "'rl4vlm/NumberLine-v1'" in message
    assert "Did you mean 'rl4vlm/NumberLine-v0'?" in message


def test_unrelated_unknown_id_has_no_hint_but_says_how_to_list() -> None:
    with pytest.raises(KeyError) as excinfo:
        env_card("zzzzzz")
    message = excinfo.value.args[0]
    assert "Did you mean" not in message
    assert "rl4vlm-gym list" in message


@pytest.mark.parametrize("env_id", CARD_IDS)
def test_card_matches_its_env(env_id: str) -> None:
    card = env_card(env_id)
    env = gym.make(env_id)
    base = env.unwrapped
    assert card.entry_point == f"{type(base).__module__}:{type(base).__name__}"
    assert len(card.levels) == len(base.LEVELS)  # type: ignore[attr-defined]
    assert card.reward_variants == tuple(base.REWARDS)  # type: ignore[attr-defined]
    assert base.reward_variant == card.reward_variants[0]  # type: ignore[attr-defined]
    assert set(card.obs_modes) <= set(OBS_MODES)
    assert env.spec is not None and env.spec.max_episode_steps == card.max_episode_steps
    _, info = env.reset(seed=0)
    assert info["level"] == card.default_level
    assert all(isinstance(line, str) and line for line in card.levels)


# --------------------------------------------------------------------------------------------
# EnvCard validation and registration
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"levels": ()}, "at least one level"),
        ({"default_level": 2}, "default_level=2"),
        ({"default_level": -1}, "default_level=-1"),
        ({"reward_variants": ()}, "at least one reward variant"),
    ],
)
def test_invalid_card_raises(overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        _card(**overrides)
    assert fragment in str(excinfo.value)
    assert "testreg/Dummy-v0" in str(excinfo.value)


def test_default_level_error_names_the_range() -> None:
    with pytest.raises(ValueError, match=r"0\.\.1"):
        _card(default_level=2)


def test_card_kwargs_are_read_only() -> None:
    card = _card(kwargs={"level": 1})
    with pytest.raises(TypeError):
        card.kwargs["level"] = 0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        card.family = "x"  # type: ignore[misc]


@pytest.mark.usefixtures("isolated_registry")
def test_registered_card_is_makeable_with_its_kwargs_and_time_limit() -> None:
    register(_card(kwargs={"level": 1}))
    assert env_card("testreg/Dummy-v0").kwargs == {"level": 1}
    env = gym.make("testreg/Dummy-v0")
    _, info = env.reset(seed=0)
    assert info["level"] == 1
    for _ in range(6):
        _, _, terminated, truncated, _ = env.step("not an action")
        assert not (terminated or truncated)
    _, _, terminated, truncated, _ = env.step("not an action")
    assert truncated  # max_episode_steps=7 of the card


@pytest.mark.usefixtures("isolated_registry")
def test_registering_the_same_card_twice_is_a_no_op() -> None:
    card = _card()
    register(card)
    register(dataclasses.replace(card))  # an equal card, another object
    assert [c.id for c in list_envs(family="testfamily")] == ["testreg/Dummy-v0"]
    assert env_card("testreg/Dummy-v0") is card


@pytest.mark.usefixtures("isolated_registry")
def test_registering_a_different_card_under_the_same_id_raises() -> None:
    card = _card()
    register(card)
    with pytest.raises(ValueError) as excinfo:
        register(_card(summary="Something else."))
    assert "testreg/Dummy-v0" in str(excinfo.value)
    assert env_card("testreg/Dummy-v0") is card


@pytest.mark.usefixtures("isolated_registry")
def test_load_plugins_twice_changes_nothing() -> None:
    before = list_envs()
    assert rl4vlm_gym.load_plugins() == []
    assert list_envs() == before


def test_isolated_registry_cleans_up() -> None:
    assert not [c for c in list_envs() if c.id.startswith("testreg/")]
    assert not [env_id for env_id in gym.registry if env_id.startswith("testreg/")]


# --------------------------------------------------------------------------------------------
# Seed ranges
# --------------------------------------------------------------------------------------------


def test_seed_ranges_are_disjoint_and_contiguous() -> None:
    assert TRAIN_SEEDS.start == 0
    assert TRAIN_SEEDS.stop == EVAL_SEEDS.start
    assert EVAL_SEEDS.stop == TEST_SEEDS.start
    assert TRAIN_SEEDS.step == EVAL_SEEDS.step == TEST_SEEDS.step == 1
    assert len(TRAIN_SEEDS) > 0 and len(EVAL_SEEDS) > 0 and len(TEST_SEEDS) > 0
    assert TEST_SEEDS.stop <= 2**32  # every seed is a valid numpy seed
    for a, b in [(TRAIN_SEEDS, EVAL_SEEDS), (EVAL_SEEDS, TEST_SEEDS), (TRAIN_SEEDS, TEST_SEEDS)]:
        assert a[-1] < b[0] or b[-1] < a[0]


def test_cards_expose_the_seed_ranges() -> None:
    assert env_card("rl4vlm/EZPoints-v0").seed_ranges == {"train": TRAIN_SEEDS, "eval": EVAL_SEEDS, "test": TEST_SEEDS}


@pytest.mark.parametrize("seed", [TRAIN_SEEDS[0], TRAIN_SEEDS[-1], EVAL_SEEDS[0], TEST_SEEDS[-1]])
def test_extreme_seeds_reset(seed: int) -> None:
    env = gym.make("rl4vlm/NumberLine-v0")
    obs_a, info_a = env.reset(seed=seed)
    obs_b, info_b = env.reset(seed=seed)
    assert info_a == info_b
    assert obs_a["text"] == obs_b["text"]


# --------------------------------------------------------------------------------------------
# Third-party plugins through the entry-point group
# --------------------------------------------------------------------------------------------

PLUGIN_INIT = '''
from rl4vlm_gym import EnvCard, register as _register

CARD = EnvCard(
    id="demo/Echo-v0",
    entry_point="demo_rl4vlm_plugin.env:Echo",
    family="demo",
    summary="Say pong.",
    skills=("echo",),
    levels=("the only level",),
    default_level=0,
    action_grammar="'ping' or 'pong'",
    action_examples=("pong",),
    reward_variants=("default",),
    success="the agent said pong",
    max_episode_steps=5,
)


def register():
    _register(CARD)
'''

PLUGIN_ENV = '''
import numpy as np

from rl4vlm_gym import StepOutcome, VLMEnv


class Echo(VLMEnv):
    LEVELS = ("the only level",)
    REWARDS = {"default": {"ok": 1.0, "wrong": -0.5, "invalid": -2.0}}

    def _new_episode(self, config):
        self.said = ""

    def _actions(self):
        return ("ping", "pong")

    def _apply(self, action):
        self.said = action
        if action == "pong":
            return StepOutcome("ok", terminated=True, feedback="pong!")
        return StepOutcome("wrong", feedback="ping?")

    def _describe(self):
        return "Said: " + (self.said or "nothing")

    def _mission(self):
        return "Say pong."

    def _render(self):
        return np.zeros((*self.image_size, 3), np.uint8)

    def _state_key(self):
        return self.said

    def _success(self):
        return self.said == "pong"

    def _progress(self):
        return float(self._success())

    def _optimal_steps(self):
        return 1

    def oracle_action(self):
        return "pong"
'''

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"
"""

PLUGIN_CHECK = textwrap.dedent(
    """
    import json, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import rl4vlm_gym
    import gymnasium as gym

    result = {
        "ids": [c.id for c in rl4vlm_gym.list_envs()],
        "warnings": [[w.category.__name__, str(w.message)] for w in caught],
    }
    if "demo/Echo-v0" in result["ids"]:
        card = rl4vlm_gym.env_card("demo/Echo-v0")
        env = gym.make("demo/Echo-v0", image_size=64)
        obs, info = env.reset(seed=0)
        steps = [[obs["text"], None, False, info["state_key"]]]
        for action in ["ping", "no idea", '{"thoughts": "now", "action": "pong"}']:
            obs, reward, terminated, truncated, info = env.step(action)
            steps.append([obs["text"], reward, terminated, info["state_key"]])
        result["echo"] = {
            "family": card.family,
            "max_episode_steps": env.spec.max_episode_steps,
            "image_shape": list(obs["image"].shape),
            "steps": steps,
            "success": info["success"],
        }
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result["failed_again"] = sorted(rl4vlm_gym.load_plugins())
    print(json.dumps(result))
    """
)


def _build_backend_problem() -> str | None:
    """Why pip cannot build a setuptools package without build isolation here, if it cannot."""
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return "setuptools is not installed in this environment"
    major, minor = (int(part) for part in version.split(".")[:2])
    if (major, minor) < (70, 1):
        try:
            import wheel  # noqa: F401  (setuptools < 70.1 needs it for bdist_wheel)
        except ImportError:
            return f"setuptools {version} needs the 'wheel' package to build wheels, and it is not installed"
    return None


def _require_build_backend() -> None:
    problem = _build_backend_problem()
    if problem is not None:
        pytest.fail(
            f"cannot build test packages with `pip install --no-build-isolation`: {problem}. "
            "Install setuptools>=70.1 (or setuptools plus wheel) in the environment (the dev extra "
            "should require them)."
        )


def _write_package(root: Path, dist_name: str, module: str, entry_point: str, files: dict[str, str]) -> Path:
    pkg = root / dist_name
    (pkg / module).mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "setup.cfg").write_text(
        textwrap.dedent(
            f"""\
            [metadata]
            name = {dist_name}
            version = 0.1.0

            [options]
            packages = {module}

            [options.entry_points]
            rl4vlm_gym.envs =
                {entry_point}
            """
        )
    )
    for name, text in files.items():
        (pkg / module / name).write_text(text)
    return pkg


def _pip_install(target: Path, *packages: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
            "--disable-pip-version-check", "--quiet", "--target", str(target), *map(str, packages),
        ],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _run_check(site: Path, cwd: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run(
        [sys.executable, "-c", PLUGIN_CHECK], capture_output=True, text=True, env=env, cwd=cwd, timeout=SUBPROCESS_TIMEOUT
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def plugin_sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    _require_build_backend()
    root = tmp_path_factory.mktemp("plugins")
    good = _write_package(
        root,
        "demo-rl4vlm-plugin",
        "demo_rl4vlm_plugin",
        "demo = demo_rl4vlm_plugin:register",
        {"__init__.py": PLUGIN_INIT, "env.py": PLUGIN_ENV},
    )
    raises = _write_package(
        root,
        "broken-register-plugin",
        "broken_register_plugin",
        "broken_register = broken_register_plugin:register",
        {"__init__.py": "def register():\n    raise RuntimeError('boom from register')\n"},
    )
    unimportable = _write_package(
        root,
        "broken-import-plugin",
        "broken_import_plugin",
        "broken_import = broken_import_plugin:register",
        {"__init__.py": "import not_a_real_module_for_rl4vlm_tests\n\ndef register():\n    pass\n"},
    )
    sites = {"good": root / "site-good", "all": root / "site-all"}
    _pip_install(sites["good"], good)
    _pip_install(sites["all"], good, raises, unimportable)
    return sites


@pytest.mark.slow  # a subprocess imports the installed plugin: ~4 s
def test_installed_plugin_registers_its_env(plugin_sites: dict[str, Path], tmp_path: Path) -> None:
    result = _run_check(plugin_sites["good"], tmp_path)
    assert "demo/Echo-v0" in result["ids"]
    assert set(CARD_IDS) <= set(result["ids"])
    assert not [w for w in result["warnings"] if "plugin" in w[1]]
    assert result["failed_again"] == []
    echo = result["echo"]
    assert echo["family"] == "demo"
    assert echo["max_episode_steps"] == 5
    assert echo["image_shape"] == [64, 64, 3]
    assert echo["steps"] == [
        ["Said: nothing", None, False, ""],
        ["ping?\nSaid: ping", -0.5, False, "ping"],
        [
            "Invalid action: 'no idea' is not an admissible action; choose one of 'ping', 'pong'. "
            "Nothing happened.\nSaid: ping",
            -2.0,
            False,
            "ping",
        ],
        ["pong!\nSaid: pong", 1.0, True, "pong"],
    ]
    assert echo["success"] is True


def test_broken_plugins_warn_and_do_not_break_the_import(plugin_sites: dict[str, Path], tmp_path: Path) -> None:
    result = _run_check(plugin_sites["all"], tmp_path)
    # the import succeeded and every working family is still there
    assert "demo/Echo-v0" in result["ids"]
    assert set(CARD_IDS) <= set(result["ids"])
    assert result["echo"]["success"] is True
    runtime = [message for category, message in result["warnings"] if category == "RuntimeWarning"]
    assert len(runtime) == 2, result["warnings"]
    raised = [m for m in runtime if "'broken_register'" in m]
    missing = [m for m in runtime if "'broken_import'" in m]
    assert len(raised) == 1 and "boom from register" in raised[0]
    assert len(missing) == 1 and "not_a_real_module_for_rl4vlm_tests" in missing[0]
    assert result["failed_again"] == ["broken_import", "broken_register"]
