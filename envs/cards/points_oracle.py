"""Exact arithmetic for the points card games: evaluate formulas and find shortest solutions.

EZPoints asks for 12 using ``+`` and ``*`` without parentheses; Points24 asks for 24 using
``+ - * /`` and parentheses. Both build a formula one token at a time, where a token is

- a number: a decimal integer string such as ``"7"`` or ``"13"`` (one token is one number, so
  ``["1", "2"]`` is malformed, never twelve);
- an operator: ``"+"``, ``"-"``, ``"*"`` or ``"/"`` (binary only: there is no unary minus);
- a parenthesis: ``"("`` or ``")"``.

Arithmetic is exact (:class:`fractions.Fraction`), so ``8 / (3 - 8 / 3)`` is exactly 24.
"""

from __future__ import annotations

import enum
import functools
import itertools
import operator
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

__all__ = ["MAX_NUMBERS", "OPERATORS", "evaluate", "numbers_in", "solvable", "solve"]

OPERATORS: Final = "+-*/"
MAX_NUMBERS: Final = 6  # solving enumerates expression trees, which grows super-exponentially

_PRECEDENCE: Final = {"+": 1, "-": 1, "*": 2, "/": 2}
# Values stay Python ints until a division leaves a remainder: int arithmetic is ~30x faster
# than Fraction's, and evaluate runs on every env step.
Rational = int | Fraction


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------


def evaluate(tokens: Sequence[str]) -> Fraction | None:
    """Evaluate a token formula exactly.

    ``*`` and ``/`` bind tighter than ``+`` and ``-``; operators of equal precedence associate
    to the left. The parser is an iterative shunting-yard, so deeply nested input cannot hit the
    recursion limit, and a 20-token formula takes about ten microseconds.

    Args:
        tokens: the formula, one token per item (see the module docstring).

    Returns:
        The exact value, or ``None`` if the formula is malformed (empty, unknown token, adjacent
        numbers, dangling operator, unary minus, unbalanced parentheses) or divides by zero.

    Raises:
        TypeError: if ``tokens`` is a single ``str``: ``"12"`` would otherwise be read as the
            malformed ``["1", "2"]``, silently hiding the caller's bug.
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of token strings, not a str: {tokens!r}")
    values: list[Rational] = []
    pending: list[str] = []  # operators and "(" whose right-hand side is still being read
    expect_operand = True
    for token in tokens:
        if not isinstance(token, str):
            return None
        if expect_operand:
            if token == "(":
                pending.append(token)
                continue
            number = _number(token)
            if number is None:
                return None
            values.append(number)
            expect_operand = False
        elif token == ")":
            if not _reduce(values, pending, 0) or not pending:
                return None
            pending.pop()  # the matching "("
        elif token in _PRECEDENCE:
            if not _reduce(values, pending, _PRECEDENCE[token]):
                return None
            pending.append(token)
            expect_operand = True
        else:
            return None
    if expect_operand or not _reduce(values, pending, 0) or pending:
        return None  # empty, dangling operator, or an unclosed "("
    return Fraction(values[0])


def numbers_in(tokens: Sequence[str]) -> list[int]:
    """Return the number tokens of a formula as ints, in order (other tokens are skipped)."""
    values = (_number(token) for token in tokens if isinstance(token, str))
    return [value for value in values if value is not None]


def _number(token: str) -> int | None:
    """The value of a number token, or ``None`` if ``token`` is not one."""
    if not (token.isascii() and token.isdigit()):
        return None  # isdigit alone accepts "²", "١" and "１", none of which a card shows
    try:
        return int(token)
    except ValueError:  # longer than the interpreter's int-string conversion limit
        return None


def _reduce(values: list[Rational], pending: list[str], min_precedence: int) -> bool:
    """Apply pending operators down to the nearest "(" while they bind at least as tightly.

    Returns:
        False on division by zero, True otherwise.
    """
    while pending and pending[-1] != "(" and _PRECEDENCE[pending[-1]] >= min_precedence:
        right = values.pop()
        result = _apply(pending.pop(), values.pop(), right)
        if result is None:
            return False
        values.append(result)
    return True


def _apply(op: str, left: Rational, right: Rational) -> Rational | None:
    """``left op right``, or ``None`` when dividing by zero."""
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if not right:
        return None
    quotient = Fraction(left, right)
    return quotient.numerator if quotient.denominator == 1 else quotient


# --------------------------------------------------------------------------------------------
# Solving
#
# A dynamic programme over sub-multisets of the numbers. A sub-multiset of at most _TABLE_MAX
# numbers gets a table of every value it reaches; a larger one is asked for one value at a time:
# for each cut into a left and a right operand, the smaller operand's table is scanned and the
# value the larger operand then needs is solved for exactly and looked up recursively (meet in
# the middle). Four numbers take milliseconds and six under a second this way; tabulating every
# value of every sub-multiset would take orders of magnitude longer.
# --------------------------------------------------------------------------------------------


def solve(
    numbers: Sequence[int], target: int, ops: str = OPERATORS, parentheses: bool = True
) -> tuple[str, ...] | None:
    """Find a shortest formula that uses every number once and evaluates exactly to ``target``.

    The result is canonical: the fewest tokens (that is, the fewest parentheses: every formula
    over ``n`` numbers has ``2n - 1`` other tokens), ties broken by the smallest token tuple in
    Python's ordering of strings (so ``"("`` < ``"*"`` < ``"+"`` < ``"-"`` < ``"/"`` < digits, and
    ``"10"`` < ``"2"``). It depends only on the multiset of numbers, never on their order or on the
    process, and contains only parentheses that are needed. Results are cached.

    Args:
        numbers: 1 to :data:`MAX_NUMBERS` non-negative integers; repeats must all be used.
        target: the integer the formula must equal.
        ops: the allowed operators, a non-empty string of characters from ``"+-*/"``.
        parentheses: whether the formula may contain parentheses.

    Returns:
        The formula as a tuple of tokens, or ``None`` if no formula reaches ``target``.

    Raises:
        ValueError: on a bad argument (the message names it and the allowed values).

    Example:
        >>> solve([3, 3, 8, 8], 24)
        ('8', '/', '(', '3', '-', '8', '/', '3', ')')
        >>> solve([2, 2, 5], 12, ops="+*", parentheses=False)
        ('2', '*', '5', '+', '2')
    """
    return _solve(*_normalise(numbers, target, ops, parentheses))


def solvable(
    numbers: Sequence[int], target: int, ops: str = OPERATORS, parentheses: bool = True
) -> bool:
    """Whether some formula over ``numbers`` reaches ``target`` (arguments as in :func:`solve`)."""
    return solve(numbers, target, ops, parentheses) is not None


def _normalise(
    numbers: Sequence[int], target: int, ops: str, parentheses: bool
) -> tuple[tuple[int, ...], int, str, bool]:
    """Validate :func:`solve`'s arguments and put them in canonical (cache key) form."""
    try:
        values = sorted(operator.index(number) for number in numbers)
    except TypeError:
        raise ValueError(f"numbers must be non-negative integers, got {numbers!r}") from None
    if not 1 <= len(values) <= MAX_NUMBERS:
        raise ValueError(f"numbers must hold 1 to {MAX_NUMBERS} values, got {len(values)}")
    if values[0] < 0:  # a formula token cannot be negative: there is no unary minus
        raise ValueError(f"numbers must be non-negative integers, got {numbers!r}")
    try:
        goal = operator.index(target)
    except TypeError:
        raise ValueError(f"target must be an integer, got {target!r}") from None
    if not (isinstance(ops, str) and ops and set(ops) <= set(OPERATORS)):
        raise ValueError(
            f"ops must be a non-empty string of characters from {OPERATORS!r}, got {ops!r}"
        )
    canonical_ops = "".join(op for op in OPERATORS if op in ops)
    return tuple(values), goal, canonical_ops, bool(parentheses)


@functools.lru_cache(maxsize=4096)
def _solve(
    numbers: tuple[int, ...], target: int, ops: str, parentheses: bool
) -> tuple[str, ...] | None:
    """:func:`solve` on canonical arguments (the cached core)."""
    entry = _Solver(ops, parentheses).best(numbers, target)
    found = [tokens for tokens in entry if tokens is not None]
    return min(found, key=_rank) if found else None


Group = tuple[int, ...]  # a sorted multiset of numbers
Tokens = tuple[str, ...]
# The best formula (by _rank) for each precedence class of its top-level operator, indexed by
# class: _ATOM (a single number), _SUM (+ or -), _PRODUCT (* or /). They are kept apart because
# the class decides where the formula needs parentheses once it becomes an operand.
Entry = list[Tokens | None]
Best = Sequence[Tokens | None]  # an Entry that is only read

_ATOM, _SUM, _PRODUCT = 0, 1, 2
_RESULT_CLASS: Final = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT}
# Operand classes that need parentheses so that the printed tokens re-parse, left-associatively,
# to the same value. a+(b-c) prints as a+b-c and a*(b/c) as a*b/c: exactly equal in rationals.
_WRAP_LEFT: Final = {"+": (), "-": (), "*": (_SUM,), "/": (_SUM,)}
_WRAP_RIGHT: Final = {"+": (), "-": (_SUM,), "*": (_SUM,), "/": (_SUM, _PRODUCT)}
_NOTHING: Final[Best] = (None, None, None)
# Groups up to this size get every reachable value tabulated; larger ones are searched for one
# value at a time (meet in the middle), since their full tables would dominate the run time.
# With MAX_NUMBERS = 6 the smaller operand of a split never needs a larger table.
_TABLE_MAX: Final = 3


class _Free(enum.Enum):
    """An operand whose value does not matter (``0 * x``), or only must not be zero (``0 / x``)."""

    ANY = enum.auto()
    NONZERO = enum.auto()


Need = Rational | _Free | None  # the value an unknown operand must take; None: impossible


def _rank(tokens: Tokens) -> tuple[int, Tokens]:
    """Sort key of the canonical order: shortest first, then the smallest token tuple."""
    return len(tokens), tokens


class _Solver:
    """Dynamic programme over sub-multisets, keeping per value and class the best formula.

    Keeping only the best formula per (sub-multiset, value, class) loses nothing: swapping an
    operand for a better one of the same value and class keeps the total value and the
    parentheses the same, and since no formula over a multiset is a proper prefix of another,
    the smallest operand also gives the smallest whole at equal length.
    """

    def __init__(self, ops: str, parentheses: bool) -> None:
        self._ops = ops
        self._parentheses = parentheses
        self._tables: dict[Group, dict[Rational, Entry]] = {}
        self._searches: dict[tuple[Group, Rational], Entry] = {}
        self._anything: dict[tuple[Group, bool], Entry] = {}

    def best(self, group: Group, target: Rational) -> Best:
        """The best formulas over ``group`` whose value is ``target``."""
        if len(group) <= _TABLE_MAX:
            return self._table(group).get(target, _NOTHING)
        key = (group, target)
        if key not in self._searches:
            self._searches[key] = self._search(group, target)
        return self._searches[key]

    def _search(self, group: Group, target: Rational) -> Entry:
        """Tabulate the smaller operand of each split and look up what the larger must be."""
        entry: Entry = [None, None, None]
        for left, right in _splits(group):
            for op in self._ops:
                if len(left) <= len(right):
                    for value, known in self._table(left).items():
                        unknown = self._lookup(right, _right_need(op, value, target))
                        self._combine(entry, op, known, unknown)
                else:
                    for value, known in self._table(right).items():
                        unknown = self._lookup(left, _left_need(op, value, target))
                        self._combine(entry, op, unknown, known)
        return entry

    def _lookup(self, group: Group, need: Need) -> Best:
        """The best formulas over ``group`` that satisfy ``need``."""
        if need is None:
            return _NOTHING
        if isinstance(need, _Free):
            return self._any_value(group, nonzero=need is _Free.NONZERO)
        return self.best(group, need)

    def _any_value(self, group: Group, nonzero: bool) -> Best:
        """The best formulas over ``group`` whatever their value (but not zero if ``nonzero``).

        Only reached when a sub-formula is zero, so the full table it builds is rarely needed.
        """
        key = (group, nonzero)
        if key not in self._anything:
            entry: Entry = [None, None, None]
            for value, candidates in self._table(group).items():
                if value or not nonzero:
                    for cls, tokens in enumerate(candidates):
                        _keep_better(entry, cls, tokens)
            self._anything[key] = entry
        return self._anything[key]

    def _table(self, group: Group) -> dict[Rational, Entry]:
        """Every value reachable over ``group``, with its best formulas."""
        if group in self._tables:
            return self._tables[group]
        table: dict[Rational, Entry] = {}
        if len(group) == 1:
            table[group[0]] = [(str(group[0]),), None, None]
        for left, right in _splits(group):
            left_table, right_table = self._table(left), self._table(right)
            for op in self._ops:
                for a, left_entry in left_table.items():
                    for b, right_entry in right_table.items():
                        value = _apply(op, a, b)
                        if value is not None:
                            entry = table.setdefault(value, [None, None, None])
                            self._combine(entry, op, left_entry, right_entry)
        self._tables[group] = table
        return table

    def _combine(self, entry: Entry, op: str, left: Best, right: Best) -> None:
        """Offer every ``left op right`` formula to ``entry``, with the parentheses it needs."""
        result_class = _RESULT_CLASS[op]
        for left_class, left_tokens in enumerate(left):
            wrap_left = left_class in _WRAP_LEFT[op]
            if left_tokens is None or (wrap_left and not self._parentheses):
                continue
            for right_class, right_tokens in enumerate(right):
                wrap_right = right_class in _WRAP_RIGHT[op]
                if right_tokens is None or (wrap_right and not self._parentheses):
                    continue
                incumbent = entry[result_class]
                length = len(left_tokens) + len(right_tokens) + 1 + 2 * (wrap_left + wrap_right)
                if incumbent is not None and length > len(incumbent):
                    continue  # cheap rejection before building the tuple
                tokens = (
                    _wrap(left_tokens, wrap_left) + (op,) + _wrap(right_tokens, wrap_right)
                )
                _keep_better(entry, result_class, tokens)


def _keep_better(entry: Entry, cls: int, tokens: Tokens | None) -> None:
    """Store ``tokens`` as the class-``cls`` formula if it beats the incumbent."""
    incumbent = entry[cls]
    if tokens is not None and (incumbent is None or _rank(tokens) < _rank(incumbent)):
        entry[cls] = tokens


def _wrap(tokens: Tokens, parenthesise: bool) -> Tokens:
    """``tokens`` in parentheses, or unchanged."""
    return ("(", *tokens, ")") if parenthesise else tokens


def _right_need(op: str, left: Rational, target: Rational) -> Need:
    """The value ``right`` must take for ``left op right == target``."""
    if op == "+":
        return target - left
    if op == "-":
        return left - target
    if op == "*":
        if left:
            return Fraction(target, left)
        return _Free.ANY if not target else None
    if target:  # op == "/": right = left / target, which must not be zero
        return Fraction(left, target) if left else None
    return _Free.NONZERO if not left else None


def _left_need(op: str, right: Rational, target: Rational) -> Need:
    """The value ``left`` must take for ``left op right == target``."""
    if op == "+":
        return target - right
    if op == "-":
        return target + right
    if op == "*":
        if right:
            return Fraction(target, right)
        return _Free.ANY if not target else None
    return target * right if right else None  # op == "/"


@functools.lru_cache(maxsize=4096)
def _splits(group: Group) -> tuple[tuple[Group, Group], ...]:
    """Every ordered way to cut a sorted multiset into two non-empty sorted parts."""
    counts = sorted(Counter(group).items())
    splits = []
    for taken in itertools.product(*(range(count + 1) for _, count in counts)):
        left = tuple(v for (v, _), k in zip(counts, taken) for _ in range(k))
        if 0 < len(left) < len(group):
            right = tuple(v for (v, count), k in zip(counts, taken) for _ in range(count - k))
            splits.append((left, right))
    return tuple(splits)
