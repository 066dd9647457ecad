"""Every family writes its env cards one way (CONTRIBUTING.md, "The card and registration"): in
``envs/<family>/__init__.py``, ``CARDS`` is one tuple of ``EnvCard(...)`` literals, one per id,
with keyword fields in ``EnvCard``'s order, and ``register()`` registers them; no helper function,
comprehension or ``**fields`` builds a card, so a reader finds each id's card by its id."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from rl4vlm_gym.registry import EnvCard

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = sorted(p.parent.name for p in (ROOT / "envs").glob("*/__init__.py"))
ORDER = [f.name for f in dataclasses.fields(EnvCard)]


def card_problems(source: str) -> list[str]:
    """What in a family's ``__init__.py`` source breaks the card style (empty when none)."""
    tree = ast.parse(source)
    problems = []
    assigned = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and "CARDS" in ast.dump(n)]
    targets = [
        n
        for n in assigned
        if any(isinstance(t, ast.Name) and t.id == "CARDS" for t in getattr(n, "targets", [getattr(n, "target", None)]))
    ]
    if len(targets) != 1 or not isinstance(targets[0], ast.Assign) or not isinstance(targets[0].value, ast.Tuple):
        return ["CARDS is not assigned once, as a tuple literal"]
    for node in targets[0].value.elts:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "EnvCard"):
            problems.append(f"line {node.lineno}: an element of CARDS is not an EnvCard(...) literal")
            continue
        names = [k.arg for k in node.keywords]
        if node.args or None in names:
            problems.append(f"line {node.lineno}: EnvCard takes keyword fields only (no positional or ** arguments)")
        elif names != sorted(names, key=ORDER.index):
            problems.append(f"line {node.lineno}: the fields are not in EnvCard's order ({', '.join(names)})")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name != "register":
            problems.append(f"line {node.lineno}: a function ({node.name}) beside register(): cards are data")
    return problems


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_writes_its_cards_as_data_in_one_field_order(family: str) -> None:
    assert card_problems((ROOT / "envs" / family / "__init__.py").read_text()) == []


def test_the_style_check_refuses_each_other_style() -> None:
    good = 'CARDS = (\n    EnvCard(id="a/B-v0", family="x", summary="s"),\n)\n\ndef register() -> None:\n    pass\n'
    assert card_problems(good) == []
    assert card_problems(good.replace('family="x", summary="s"', 'summary="s", family="x"')) == [
        "line 2: the fields are not in EnvCard's order (id, summary, family)"
    ]
    assert card_problems("CARDS = (\n    EnvCard(**fields),\n)\n") == [
        "line 2: EnvCard takes keyword fields only (no positional or ** arguments)"
    ]
    assert card_problems("CARDS = (\n    _card('x'),\n)\n") == ["line 2: an element of CARDS is not an EnvCard(...) literal"]
    assert card_problems("CARDS = tuple(EnvCard(id=i) for i in IDS)\n") == ["CARDS is not assigned once, as a tuple literal"]
    assert card_problems("CARDS = ()\nCARDS += (EnvCard(id='x'),)\n") == ["CARDS is not assigned once, as a tuple literal"]
    assert card_problems(good + "\ndef _card(name):\n    return name\n") == [
        "line 8: a function (_card) beside register(): cards are data"
    ]
