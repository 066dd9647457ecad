"""On an install without an extra, every id makes and plays or raises the one error naming its extra (issue 39).

"Without an extra" is made here by hiding the extra's modules (``sys.modules[name] = None``, which
makes ``import name`` fail as on an install without it) in a fresh interpreter, before anything of
ours is imported: the whole registry with every extra hidden is a core install as far as imports go.
"""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rl4vlm_gym import extras

ROOT = Path(__file__).resolve().parents[1]

PLAY_WITHOUT = r"""
import json, sys
hidden = json.loads(sys.argv[1])
for name in hidden:
    sys.modules[name] = None
import gymnasium as gym
import rl4vlm_gym
from rl4vlm_gym.extras import MissingExtraError
results = {}
for card in rl4vlm_gym.list_envs(family=sys.argv[2] or None):
    try:
        env = gym.make(card.id)
        try:
            env.reset(seed=0)
        finally:
            env.close()
        results[card.id] = [card.extra, "played", ""]
    except MissingExtraError as err:
        results[card.id] = [card.extra, "missing " + err.extra, str(err)]
    except Exception as err:
        results[card.id] = [card.extra, type(err).__name__, str(err)[:300]]
print(json.dumps(results))
"""


def play_without(hidden: list[str], family: str = "") -> dict[str, list[str]]:
    """Make and reset every id (of ``family``) in a fresh interpreter with ``hidden`` modules hidden."""
    out = subprocess.run(
        [sys.executable, "-c", PLAY_WITHOUT, json.dumps(hidden), family], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def wrong(results: dict[str, list[str]]) -> dict[str, list[str]]:
    """The ids that neither played (needing no extra) nor raised the error naming their extra."""
    return {
        env_id: [extra, outcome, message]
        for env_id, (extra, outcome, message) in results.items()
        if outcome != ("played" if extra is None else f"missing {extra}")
        or (extra is not None and f"pip install 'rl4vlm-gym[{extra}]'" not in message)
    }


def test_the_games_ids_name_their_extra_without_it() -> None:
    results = play_without(list(extras.MODULES["games"]), family="games")
    assert len(results) >= 18
    assert wrong(results) == {}


@pytest.mark.slow  # every id made and reset in one interpreter: about 10 s
def test_on_a_core_install_every_id_plays_or_names_its_extra() -> None:
    hidden = sorted({module for modules in extras.MODULES.values() for module in modules})
    results = play_without(hidden)
    assert {extra for extra, _, _ in results.values()} >= {None, "games", "nav", "balrog", "nethack", "household", "webshop"}
    assert wrong(results) == {}


def test_each_extras_modules_come_from_what_setup_cfg_lists_for_it() -> None:
    """MODULES is setup.cfg's extras in import names: each module is installed by a distribution the
    extra lists, or by one of their direct requirements (pyglet comes with miniworld)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = {
        extra: {re.split(r"[<>=!\[;\s]", line.strip())[0].lower() for line in value.strip().splitlines() if line.strip()}
        for extra, value in config["options.extras_require"].items()
    }
    assert set(extras.MODULES) == set(listed) - {"dev", "all"}
    providers = importlib.metadata.packages_distributions()
    for extra, modules in extras.MODULES.items():
        reach = set(listed[extra])
        for dist in listed[extra]:
            for requirement in importlib.metadata.requires(dist) or []:
                if "extra ==" not in requirement:
                    reach.add(re.split(r"[<>=!\[;\s(]", requirement)[0].lower())
        reach = {name.replace("_", "-") for name in reach}
        for module in modules:
            dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            assert dists & reach, f"{extra}: {module} comes from {dists}, not from {sorted(listed[extra])}"


def test_require_names_the_extra_the_missing_module_and_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(extras.MissingExtraError, match=r"the games family needs the `games` extra \(missing: pyspiel\)") as err:
        extras.require("games", "the games family")
    assert err.value.extra == "games" and "pip install 'rl4vlm-gym[games]'" in str(err.value)
    assert isinstance(err.value, ImportError)  # what code catching a failed import expects
    assert extras.installed()["games"] is False
    monkeypatch.delitem(sys.modules, "pyspiel")
    extras.require("games", "the games family")  # all there: nothing raised
    with pytest.raises(ValueError, match="unknown extra 'game'"):
        extras.require("game", "x")


COLLECT_WITHOUT = r"""
import json, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None
import pytest
# --assert=plain: rewriting asserts (13 of the 17 s, never cached under PYTHONDONTWRITEBYTECODE) changes no import
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:xdist", "--assert=plain", "tests"]))
"""


@pytest.mark.slow  # collecting the whole suite without rewriting asserts: about 5 s
def test_the_suite_collects_on_a_core_install() -> None:
    """Without any extra, every test module collects or is skipped saying which extra it needs."""
    hidden = sorted({module for modules in extras.MODULES.values() for module in modules})
    out = subprocess.run(
        [sys.executable, "-c", COLLECT_WITHOUT, json.dumps(hidden)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR ")]
    assert out.returncode == 0 and not errors, (errors, out.stdout[-3000:])


DOCS_WITHOUT_GAMES = r"""
import json, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None
import rl4vlm_gym
from rl4vlm_gym.docs import write_docs
ids = [c.id for c in rl4vlm_gym.list_envs() if c.family in ("games", "cards")]
missing = {}
pages = write_docs(sys.argv[2], ids, missing=missing)
print(json.dumps({"pages": [p.name for p in pages], "missing": missing}))
"""


@pytest.mark.slow  # a fresh interpreter writing the cards family's pages: about 3 s
def test_docs_on_an_install_without_an_extra_write_the_rest_and_name_what_they_skipped(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", DOCS_WITHOUT_GAMES, json.dumps(list(extras.MODULES["games"])), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert sorted(result["missing"]) == ["games"] and len(result["missing"]["games"]) >= 18
    assert "Blackjack-v0.md" in result["pages"] and not any("Kuhn" in page for page in result["pages"])
