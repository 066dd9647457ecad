"""The AEC base owns the set-up (issue 35: one shape per family): every AEC env of the games family
checks its own arguments, names its agents and hands the rest to ``VLMAgentsAEC.__init__``, which
checks the common arguments and builds the parser, the spaces and ``np_random`` once for all."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspiel", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")
pytest.importorskip("pettingzoo", reason="the games extra is not installed: pip install 'rl4vlm-gym[games]'")

from rl4vlm_gym.envs.games.aec import VLMAgentsAEC, connect_four_env, tictactoe_env
from rl4vlm_gym.envs.games.kuhn_aec import kuhn_poker_env
from rl4vlm_gym.envs.games.leduc import leduc_env
from rl4vlm_gym.envs.games.liars_dice import liars_dice_env
from rl4vlm_gym.envs.games.openspiel_adapter import OpenSpielAEC
from rl4vlm_gym.envs.games.referential import referential_env

GAMES = Path(__file__).resolve().parents[3] / "envs" / "games"
SET_UP = {"check_arguments", "agent_spaces", "ActionParser", "np_random"}  # what only the base's __init__ does
FACTORIES: dict[str, Callable[..., Any]] = {
    "tictactoe": tictactoe_env,
    "connect_four": connect_four_env,
    "kuhn": kuhn_poker_env,
    "leduc": leduc_env,
    "liars_dice": liars_dice_env,
    "referential": referential_env,
    "openspiel": lambda **kwargs: OpenSpielAEC("tic_tac_toe", **kwargs),
}


def set_up_in_subclass_inits(source: str) -> list[str]:
    """``Class.__init__: name`` for each common set-up step that a subclass's ``__init__`` in ``source`` does itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef) or node.name == "VLMAgentsAEC":
            continue
        for init in (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
            names = {n.id for n in ast.walk(init) if isinstance(n, ast.Name)} | {
                n.attr for n in ast.walk(init) if isinstance(n, ast.Attribute)
            }
            found += [f"{node.name}.__init__: {step}" for step in sorted(SET_UP & names)]
    return found


@pytest.mark.parametrize("module", ["aec.py", "spiel.py", "referential.py"])
def test_no_aec_env_repeats_the_bases_set_up(module: str) -> None:
    assert set_up_in_subclass_inits((GAMES / module).read_text()) == []


def test_the_openspiel_adapters_aec_leaves_its_set_up_to_the_base() -> None:
    found = set_up_in_subclass_inits((GAMES / "openspiel_adapter.py").read_text())
    # the Parallel env is no AEC env: it keeps its own set-up
    assert [f for f in found if not f.startswith("OpenSpielParallel.")] == []
    assert set_up_in_subclass_inits("class A(VLMAgentsAEC):\n    def __init__(self):\n        self.np_random = 1\n") == [
        "A.__init__: np_random"
    ]


@pytest.mark.parametrize("name", FACTORIES)
def test_every_aec_env_gets_the_bases_set_up(name: str) -> None:
    env = FACTORIES[name](image_size=64, render_fps=7, max_cycles=9, action_format="tags")
    assert isinstance(env, VLMAgentsAEC)
    assert env.metadata["render_fps"] == 7 and env.max_cycles == 9 and env.image_size == 64
    assert env.parser.format == "tags" and env.np_random is not None
    for agent in env.possible_agents:  # one space object per agent, built once
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.observation_space(agent)["image"].shape == (64, 64, 3)
    with pytest.raises(ValueError, match=r"obs_mode='pixels' is unknown"):
        FACTORIES[name](obs_mode="pixels")
    with pytest.raises(ValueError, match=r"image_size=8 is not valid"):
        FACTORIES[name](image_size=8)
    with pytest.raises(ValueError, match=r"max_cycles=0 is not valid"):
        FACTORIES[name](max_cycles=0)
