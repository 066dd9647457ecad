"""The conformance kit's laws, listed mechanically: every ``assert`` and every ``AssertionError(...)`` in
``rl4vlm_gym/testing/*.py`` (read with :mod:`ast`), each with a stable id and its message as a template.

``tests/kit/test_kit.py`` names the law each broken env of ``BROKEN_LAWS`` must trigger, checks at run time
that the failure it caught is that law's (:func:`law_of`), and fails when a law has no broken env
(``test_every_law_has_a_broken_env``): a law no broken env triggers can be disabled unnoticed.
"""

from __future__ import annotations

import ast
import re
import traceback
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import rl4vlm_gym.testing

KIT = Path(rl4vlm_gym.testing.__file__).resolve().parent
ID_LENGTH = 90
"""Characters of a law's message skeleton kept in its id (enough to tell every law apart)."""


@dataclass(frozen=True)
class Law:
    """One assertion the kit can fail with."""

    id: str
    """``module: message skeleton`` (formatted values as ``{}``, a leading ``{}: `` place dropped), ``#2``
    and so on for a repeated skeleton in one module: stable while the message's words stay."""
    path: Path
    lines: tuple[int, int]
    template: re.Pattern[str] | None
    """Matches exactly the messages the law can give (formatted values as ``.*``); None for a bare ``assert``."""


def _message(node: ast.expr | None) -> tuple[str, re.Pattern[str]] | None:
    """The skeleton and template of a message: a string, an f-string, or neither (None)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parts: list[str | None] = [node.value]
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) else None for v in node.values]
    else:
        return None
    skeleton = "".join("{}" if p is None else p for p in parts)
    template = "".join("(?:.*)" if p is None else re.escape(p) for p in parts)
    return skeleton, re.compile(template, re.DOTALL)


def _is_assertion_error(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "AssertionError"


@cache
def kit_laws() -> tuple[Law, ...]:
    """Every law of every kit module, in source order."""
    laws: list[Law] = []
    for path in sorted(KIT.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        seen: dict[str, int] = {}
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Assert) or _is_assertion_error(n)]
        for node in sorted(nodes, key=lambda n: n.lineno):
            message = _message(node.msg if isinstance(node, ast.Assert) else (node.args[0] if node.args else None))  # type: ignore[attr-defined]
            if message is None:
                skeleton, template = (
                    f"assert {ast.unparse(node.test)}" if isinstance(node, ast.Assert) else "AssertionError()",
                    None,
                )  # type: ignore[attr-defined]
            else:
                skeleton, template = message
            skeleton = " ".join(skeleton.removeprefix("{}: ").split())[:ID_LENGTH]
            seen[skeleton] = seen.get(skeleton, 0) + 1
            law_id = f"{path.stem}: {skeleton}" + (f" #{seen[skeleton]}" if seen[skeleton] > 1 else "")
            laws.append(Law(law_id, path, (node.lineno, node.end_lineno or node.lineno), template))
    return tuple(laws)


def law_of(error: BaseException) -> Law | None:
    """The law ``error`` (an ``AssertionError`` a check raised) is: the one whose template matches its
    message; of several (one message in two places), the one on the error's traceback. None for an
    error that no law raised (e.g. a ``KeyError`` from the env itself)."""
    message = str(error)
    laws = [law for law in kit_laws() if law.template is not None and law.template.fullmatch(message)]
    if len(laws) > 1:
        frames = [(Path(f.filename).resolve(), f.lineno) for f in traceback.extract_tb(error.__traceback__)]
        laws = [law for law in laws if any(p == law.path and law.lines[0] <= n <= law.lines[1] for p, n in frames)]
    return laws[0] if len(laws) == 1 else None
