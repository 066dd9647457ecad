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
from typing import Any, Final

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


def _divide(left: Rational, right: Rational) -> Rational:
    """``left / right`` exactly (``right`` not zero), an int when it is whole: ints hash and compare
    several times faster than fractions, and the completion search keys its tables by value."""
    if isinstance(left, int):
        if isinstance(right, int):
            quotient, remainder = divmod(left, right)
            return Fraction(left, right) if remainder else quotient
        value = Fraction(left * right.denominator, right.numerator)
    else:
        value = left / right
    return value.numerator if value.denominator == 1 else value


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
    entry = _shared(ops, parentheses).best(numbers, target)
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
        self.entries = 0  # values tabulated and searches made, to bound a shared solver's memory

    def best(self, group: Group, target: Rational) -> Best:
        """The best formulas over ``group`` whose value is ``target``."""
        if len(group) <= _TABLE_MAX:
            return self._table(group).get(target, _NOTHING)
        key = (group, target)
        if key not in self._searches:
            self._searches[key] = self._search(group, target)
            self.entries += 1
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
        self.entries += len(table)
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


_SHARED_LIMIT: Final = 200_000
"""Entries (table values, searches, completions) a shared solver or completer keeps before it starts
afresh: about 150 bytes each, so some 30 MB (a Points24 walk adds about 110 an episode)."""
_SHARED_SOLVERS: dict[tuple[str, bool], _Solver] = {}


def _shared(ops: str, parentheses: bool) -> _Solver:
    """One solver per rule set, shared by every hand: its tables are per group of numbers, so the
    groups that hands have in common (every small group recurs) are solved once."""
    solver = _SHARED_SOLVERS.get((ops, parentheses))
    if solver is None or solver.entries > _SHARED_LIMIT:
        solver = _SHARED_SOLVERS[(ops, parentheses)] = _Solver(ops, parentheses)
    return solver


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
def _parts(group: Group) -> tuple[tuple[Group, Group], ...]:
    """Every way to cut a sorted multiset into a (possibly empty) part and the rest."""
    counts = sorted(Counter(group).items())
    cuts = []
    for taken in itertools.product(*(range(count + 1) for _, count in counts)):
        part = tuple(v for (v, _), k in zip(counts, taken) for _ in range(k))
        rest = tuple(v for (v, count), k in zip(counts, taken) for _ in range(count - k))
        cuts.append((part, rest))
    return tuple(cuts)


@functools.lru_cache(maxsize=4096)
def _splits(group: Group) -> tuple[tuple[Group, Group], ...]:
    """Every ordered way to cut a sorted multiset into two non-empty sorted parts."""
    return tuple((left, right) for left, right in _parts(group) if left and right)


# --------------------------------------------------------------------------------------------
# Completing a partial formula
#
# A points game builds its formula left to right and cannot erase, so from a partial formula the
# question is the shortest completion: the fewest tokens that, appended, give a formula over the
# remaining cards that reaches the target. The prefix is parsed into a stack of frames, one per
# open parenthesis and one for the top level; a frame's value is, exactly,
#
#     S + sigma * X * c + tau * t
#
# where S is the sum of its finished terms, sigma the sign of its current term, X the current
# term's product so far, c the multiplier of an operator chain still to come (``* F`` for any
# product-class formula F, or ``/ g`` for one factor g followed by another chain; 1 if none) and
# ``tau * t`` the terms still to come (t any formula: its own signs flip inline, "- a + b" is
# "- (a - b)", at the same length). A frame still waiting for an operand first takes one: the
# closing of the frame above it, or from the remaining cards. The cards left are split between
# the parts of every frame; for each split the two smallest parts are enumerated and the largest
# is solved for exactly and looked up (the solver's tables for small groups, its meet-in-the-middle
# search for large ones), so a completion costs look-ups rather than a search over token strings.
# Lengths come from the solver's canonical formulas (the shortest formula of each value and
# class), so the completion is the shortest possible.
# --------------------------------------------------------------------------------------------

_INF: Final = 1 << 30
_Lens = tuple[int, int, int]  # (any formula, a product chain, one factor) lengths of one value


_FrameKey = tuple[Rational, int, Rational, str | None]
"""A frame of a partial formula: (S, sign, X, pending). ``pending`` is ``None`` at the start of a term
(waiting for its first operand; X unused), ``"*"`` or ``"/"`` after that operator (waiting), and ``""``
once the current term's product X is complete."""
_Parsed = tuple[tuple[_FrameKey, ...], tuple[int, ...]]
"""A partial formula read so far: its frames (outermost first) and its numbers."""
_START: Final[_Parsed] = (((0, 1, 1, None),), ())


def _operand(frame: _FrameKey, value: Rational) -> _FrameKey | None:
    """``frame`` after a complete operand; ``None`` on a division by zero."""
    total, sign, product, pending = frame
    if pending is None:
        return total, sign, value, ""
    if pending == "*":
        return total, sign, product * value, ""
    if not value:
        return None
    return total, sign, _divide(product, value), ""


def _read(parsed: _Parsed, token: str) -> _Parsed | None:
    """A partial formula after one more token; ``None`` if no completion can make it a formula (a
    token out of place, an unmatched ``)``, a division by zero)."""
    frames, numbers = parsed
    total, sign, product, pending = frames[-1]
    waiting = pending != ""
    number = _number(token)
    if number is not None:
        top = _operand(frames[-1], number) if waiting else None
        return None if top is None else (frames[:-1] + (top,), numbers + (number,))
    if token == "(":
        return (frames + ((0, 1, 1, None),), numbers) if waiting else None
    if waiting:
        return None
    if token == ")":
        closed = _operand(frames[-2], total + sign * product) if len(frames) > 1 else None
        return None if closed is None else (frames[:-2] + (closed,), numbers)
    if token in ("+", "-"):
        return frames[:-1] + ((total + sign * product, 1 if token == "+" else -1, 1, None),), numbers
    if token in ("*", "/"):
        return frames[:-1] + ((total, sign, product, token),), numbers
    return None


class _Completer:
    """Shortest completions of partial formulas over one hand (its tables shared by every prefix)."""

    def __init__(self, ops: str, parentheses: bool) -> None:
        self._solver = _shared(ops, parentheses)
        self._ops, self._parentheses = ops, parentheses
        self._signs = tuple(s for s, op in ((1, "+"), (-1, "-")) if op in ops)
        self._lens: dict[tuple[Group, Rational], _Lens] = {}
        self._tables: dict[Group, dict[Rational, _Lens]] = {}
        self._chains: dict[Group, dict[Rational, int]] = {}
        self._chain_points: dict[tuple[Group, Rational], int] = {}
        self.frames = _Completion(self)

    # -- the solver's formulas as lengths -------------------------------------------------------

    def _as_lens(self, best: Best) -> _Lens:
        atom, summed, product = (_INF if tokens is None else len(tokens) for tokens in best)
        wrap = 2 if self._parentheses else _INF
        any_formula = min(atom, summed, product)
        return any_formula, min(atom, product, summed + wrap), min(atom, product + wrap, summed + wrap)

    def point(self, group: Group, value: Rational) -> _Lens:
        """The lengths of the shortest formulas over ``group`` worth ``value`` (``_INF``: none)."""
        key = (group, value)
        found = self._lens.get(key)
        if found is None:
            found = self._lens[key] = self._as_lens(self._solver.best(group, value))
        return found

    def table(self, group: Group) -> dict[Rational, _Lens]:
        """Every value over ``group`` with its lengths (small groups: a full table is costly)."""
        found = self._tables.get(group)
        if found is None:
            found = self._tables[group] = {v: self._as_lens(best) for v, best in self._solver._table(group).items()}
        return found

    def chains(self, group: Group) -> dict[Rational, int]:
        """Every multiplier of an operator chain over ``group`` (``* F`` or ``/ g`` then a chain),
        with its fewest tokens."""
        found = self._chains.get(group)
        if found is not None:
            return found
        found = {}
        if "*" in self._ops:
            for value, (_, chain, _) in self.table(group).items():
                if chain < _INF:
                    found[value] = 1 + chain
        if "/" in self._ops:
            for first, rest in _parts(group):
                if not first:
                    continue
                after = self.chains(rest) if rest else {1: 0}
                for g, (_, _, factor) in self.table(first).items():
                    if g and factor < _INF:
                        for c, length in after.items():
                            key = _divide(c, g)
                            if 1 + factor + length < found.get(key, _INF):
                                found[key] = 1 + factor + length
        self._chains[group] = found
        return found

    def chain_point(self, group: Group, c: Rational) -> int:
        """The fewest tokens of an operator chain over ``group`` with multiplier ``c``."""
        if not group:
            return 0 if c == 1 else _INF
        if len(group) <= _TABLE_MAX:
            return self.chains(group).get(c, _INF)
        key = (group, c)
        found = self._chain_points.get(key)
        if found is not None:
            return found
        found = min(1 + self.point(group, c)[1], _INF) if "*" in self._ops else _INF
        if "/" in self._ops:  # "/ g" then a chain over the rest: c = rest / g; enumerate the smaller side
            for first, rest in _parts(group):
                if not first:
                    continue
                if len(first) <= len(rest):
                    for g, (_, _, factor) in self.table(first).items():
                        if g and 1 + factor < found:
                            found = min(found, 1 + factor + self.chain_point(rest, c * g))
                elif c:
                    for after, length in (self.chains(rest) if rest else {1: 0}).items():
                        if after and 1 + length < found:
                            found = min(found, 1 + length + self.point(first, _divide(after, c))[2])
                else:  # c == 0: the chain after g is worth 0, g anything but 0
                    after_zero = (self.chains(rest) if rest else {1: 0}).get(0, _INF)
                    if after_zero < found:
                        factors = [lens[2] for g, lens in self.table(first).items() if g]
                        found = min([found, *(1 + f + after_zero for f in factors)])
        self._chain_points[key] = found
        return found


_Need = Rational | _Free  # a frame's required value, or any value (but zero)


_Frames = tuple[_FrameKey, ...]
"""A frame and the frames open inside it, innermost last."""


class _Completion:
    """Shortest completions of frames over groups of cards, for one rule set. Memoised by (frames,
    group, need), which neither the hand nor the rest of the prefix changes, so prefixes that share
    their inner frames and hands that share cards share the work."""

    def __init__(self, completer: _Completer) -> None:
        self._c = completer
        self._solved: dict[tuple[_Frames, Group, _Need], tuple[int, int]] = {}  # (length or _INF, bound searched)
        self._values: dict[tuple[_Frames, Group], dict[Rational, int]] = {}
        self._sorted_tables: dict[tuple[_Frames, str, Group], tuple[tuple[int, Rational], ...]] = {}
        self._split_plans: dict[tuple[Any, ...], tuple[tuple[tuple[Group, ...], int, int, int, tuple[int, ...]], ...]] = {}

    @property
    def size(self) -> int:
        return len(self._solved) + len(self._values) + len(self._sorted_tables)

    @staticmethod
    def _parts_of(frames: _Frames) -> tuple[Rational, tuple[tuple[str, int], ...]]:
        """The outer frame's value as ``S + sign * coeff * prod(part ** exponent) + t``: its coeff and
        multiplicative parts (kinds: ``F`` a product formula, ``g`` one factor, ``c`` a chain, ``V``
        the frame inside, closed)."""
        _, _, product, pending = frames[0]
        if len(frames) > 1:
            return (1 if pending is None else product), (("V", -1 if pending == "/" else 1), ("c", 1))
        if pending == "*":
            return product, (("F", 1),)
        if pending == "/":
            return product, (("g", -1), ("c", 1))
        return product, (("c", 1),)

    @staticmethod
    def lower_bound(frames: _Frames, group: Group) -> int:
        """Fewest tokens any completion takes: a number and an operator per card (the first number
        of a waiting innermost frame has its operator already), a ``)`` per inner frame."""
        waiting = frames[-1][3] != ""
        if waiting and not group:
            return _INF
        return 2 * len(group) - waiting + len(frames) - 1

    def _part_bound(self, frames: _Frames, kind: str, group: Group) -> int:
        """Fewest tokens a part over ``group`` takes (a lower bound, for pruning)."""
        if kind == "V":
            return 1 + self.lower_bound(frames[1:], group)
        if kind == "g":
            return 1 if len(group) == 1 else 2 * len(group) + 1  # more than one card: in parentheses
        return 2 * len(group) - (kind == "F")

    # -- the parts' lengths ------------------------------------------------------------------------

    def _table(self, frames: _Frames, kind: str, group: Group) -> dict[Rational, int]:
        c = self._c
        if kind == "t":
            if not group:
                return {0: 0}
            found: dict[Rational, int] = {}
            for value, lens in c.table(group).items():
                for sign in c._signs:
                    if 1 + lens[0] < found.get(sign * value, _INF):
                        found[sign * value] = 1 + lens[0]
            return found
        if kind == "c":
            return c.chains(group) if group else {1: 0}
        if kind == "V":
            return {v: 1 + length for v, length in self.values(frames[1:], group).items()}
        index = 1 if kind == "F" else 2
        return {v: lens[index] for v, lens in c.table(group).items() if lens[index] < _INF} if group else {}

    def _point(self, frames: _Frames, kind: str, group: Group, value: _Need, bound: int) -> int:
        if kind == "V":
            return 1 + self.solve(frames[1:], group, value, bound - 1)
        if isinstance(value, _Free):
            nonzero = value is _Free.NONZERO
            return min((length for v, length in self._table(frames, kind, group).items() if v or not nonzero), default=_INF)
        c = self._c
        if kind == "t":
            if not group:
                return 0 if value == 0 else _INF
            return 1 + min(c.point(group, sign * value)[0] for sign in c._signs)
        if kind == "c":
            return c.chain_point(group, value)
        if not group:
            return _INF
        return c.point(group, value)[1 if kind == "F" else 2]

    # -- frames ------------------------------------------------------------------------------------

    def solve(self, frames: _Frames, group: Group, need: _Need, bound: int = _INF, at_least: int = 0) -> int:
        """Fewest tokens finishing ``frames`` (the inner ones closed) over exactly ``group`` so that
        the outer one is worth ``need``: exact when at most ``bound``, else ``_INF`` (none that short).
        ``at_least``: a length the caller knows no completion is shorter than (say, one less than the
        shortest completion of the formula one token shorter). The iterative deepening then starts
        there instead of at the floor, and stops at the first completion that short: no shorter one
        is left to look for."""
        key = (frames, group, need)
        known = self._solved.get(key)
        if known is not None and (known[0] <= known[1] or bound <= known[1]):
            return known[0] if known[0] <= bound else _INF
        total, sign, _, pending = frames[0]
        if self.lower_bound(frames, group) > bound:
            return _INF
        asked = bound
        if len(frames) == 1 and pending is None:  # a term to start: any formula E, S + sign * E
            if not group:
                found = _INF
            elif isinstance(need, _Free):
                nonzero = need is _Free.NONZERO
                found = min((lens[0] for e, lens in self._c.table(group).items() if not nonzero or total + sign * e), default=_INF)
            else:
                found = self._c.point(group, sign * (need - total))[0]
            bound = _INF  # exact whatever was asked
        elif isinstance(need, _Free):
            found = min((length for v, length in self.values(frames, group).items() if v or need is _Free.ANY), default=_INF)
            bound = _INF
        else:
            # Iterative deepening: every completion has the floor's parity (each new pair of
            # parentheses adds two tokens), and a shortest one has no pair around a single card
            # or around another pair, so at most len(group) - 1 new pairs: past that, none exists.
            floor = self.lower_bound(frames, group)
            top = floor + 2 * max(0, len(group) - 1)
            limit = min(bound, top)
            found, depth = _INF, floor
            if at_least > floor:  # start at the first depth of the floor's parity that can hold one
                depth = at_least + (at_least - floor) % 2
            while depth <= limit and found > depth:
                found = self._solve_value(frames, group, need, depth, enough=depth)  # none shorter: the rounds before found none
                depth += 2
            bound = bound if bound < top else _INF  # nothing up to top: nothing at all
        self._solved[key] = (found if found <= bound else _INF, bound)
        return found if found <= asked else _INF

    def _sorted(self, frames: _Frames, kind: str, group: Group) -> tuple[tuple[int, Rational], ...]:
        """A part's ``(length, value)`` pairs, shortest first (memoised: the frame inside for ``V``,
        else the group alone decides them)."""
        key = (frames[1:] if kind == "V" else (), kind, group)
        found = self._sorted_tables.get(key)
        if found is None:
            found = self._sorted_tables[key] = tuple(sorted(((n, v) for v, n in self._table(frames, kind, group).items()), key=_first))
        return found

    def _splits(self, frames: _Frames, group: Group) -> tuple[tuple[tuple[Group, ...], int, int, int, tuple[int, ...]], ...]:
        """The ways to deal ``group`` to the outer frame's parts, fewest tokens first: each as (the
        parts' groups, the fewest tokens of all, of the part solved for, that part, the others).
        The part solved for is the one on the most cards (ties: the frame inside, then the terms),
        the others are enumerated. Memoised by the frames' shape, which alone decides them."""
        shape = (len(frames), frames[0][3], frames[-1][3] != "", group)
        found = self._split_plans.get(shape)
        if found is not None:
            return found
        kinds = (*self._parts_of(frames)[1], ("t", 0))
        plans = []
        for split in _assignments(group, len(kinds)):
            if any(kind in ("F", "g") and not part for (kind, _), part in zip(kinds, split)):
                continue
            bounds = [self._part_bound(frames, kind, part) for (kind, _), part in zip(kinds, split)]
            if max(bounds) >= _INF:
                continue
            solved = max(range(len(kinds)), key=lambda j: (len(split[j]), kinds[j][0] == "V", kinds[j][0] == "t"))
            plans.append((split, sum(bounds), bounds[solved], solved, tuple(j for j in range(len(kinds)) if j != solved)))
        found = self._split_plans[shape] = tuple(sorted(plans, key=lambda plan: plan[1]))
        return found

    def _solve_value(self, frames: _Frames, group: Group, need: Rational, bound: int, enough: int) -> int:
        """The shortest completion of at most ``bound`` tokens (else more), stopping at the first of
        at most ``enough`` (a length none is shorter than)."""
        coeff, mults = self._parts_of(frames)
        kinds = (*mults, ("t", 0))
        best = bound + 1 if bound < _INF else _INF  # only completions shorter than best are looked for
        for split, fewest, solved_fewest, solved, others in self._splits(frames, group):
            if fewest >= best:
                break  # the splits come fewest tokens first
            # Enumerate the other parts, shortest first, as long as they leave room for a shorter completion.
            first = self._sorted(frames, kinds[others[0]][0], split[others[0]])
            second = self._sorted(frames, kinds[others[1]][0], split[others[1]]) if len(others) > 1 else ((0, None),)
            least = second[0][0] if second else _INF
            for length1, value1 in first:
                if length1 + least + solved_fewest >= best:
                    break
                for length2, value2 in second:
                    length = length1 + length2
                    if length + solved_fewest >= best:
                        break
                    found = length + self._deduce(frames, need, coeff, kinds, split, solved, list(others), (value1, value2), best - 1 - length)
                    if found < best:
                        best = found
                        if best <= enough:
                            return best  # no completion is shorter
        return best if best <= bound else _INF

    def _deduce(
        self, frames: _Frames, need: Rational, coeff: Rational, kinds: Any, split: tuple[Group, ...],
        solved: int, others: list[int], values: tuple[Any, Any], bound: int,
    ) -> int:
        """The fewest tokens of the part ``solved`` once the ``others`` take ``values``."""
        total, sign, _, _ = frames[0]
        m: Rational = coeff
        added: Rational = 0
        for j, value in zip(others, values):
            kind, exponent = kinds[j]
            if kind == "t":
                added = value
            elif exponent > 0:
                m = m * value
            elif value:
                m = _divide(m, value)
            else:
                return _INF  # a division by zero
        kind, exponent = kinds[solved]
        want: _Need
        if kind == "t":
            want = need - total - sign * m
        else:
            rest = need - total - added
            if not m:
                if rest:
                    return _INF
                want = _Free.NONZERO if exponent < 0 else _Free.ANY
            else:
                q = _divide(rest, sign * m)
                if exponent > 0:
                    want = q
                elif q:
                    want = _divide(1, q)
                else:
                    return _INF
        return self._point(frames, kind, split[solved], want, bound)

    def values(self, frames: _Frames, group: Group) -> dict[Rational, int]:
        """Every value the outer frame can finish at over exactly ``group``, with the fewest tokens."""
        key = (frames, group)
        found = self._values.get(key)
        if found is not None:
            return found
        total, sign, _, pending = frames[0]
        found = {}
        if len(frames) == 1 and pending is None:
            if group:
                for e, lens in self._c.table(group).items():
                    v = total + sign * e
                    if lens[0] < found.get(v, _INF):
                        found[v] = lens[0]
        else:
            coeff, mults = self._parts_of(frames)
            kinds = (*mults, ("t", 0))
            for split in _assignments(group, len(kinds)):
                if any(kind in ("F", "g") and not part for (kind, _), part in zip(kinds, split)):
                    continue
                tables = [list(self._table(frames, kind, part).items()) for (kind, _), part in zip(kinds, split)]
                for picks in itertools.product(*tables):
                    m: Rational = coeff
                    added: Rational = 0
                    for (kind, exponent), (value, _) in zip(kinds, picks):
                        if kind == "t":
                            added = value
                        elif exponent > 0:
                            m = m * value
                        elif value:
                            m = _divide(m, value)
                        else:
                            break
                    else:
                        v = total + sign * m + added
                        length = sum(length for _, length in picks)
                        if length < found.get(v, _INF):
                            found[v] = length
        self._values[key] = found
        return found


def _completer(ops: str, parentheses: bool) -> _Completer:
    """One completer per rule set, shared by every hand like its solver (and renewed with it)."""
    found = _SHARED_COMPLETERS.get((ops, parentheses))
    if found is None or found._solver is not _shared(ops, parentheses) or len(found._lens) + len(found._chain_points) + found.frames.size > _SHARED_LIMIT:
        found = _SHARED_COMPLETERS[(ops, parentheses)] = _Completer(ops, parentheses)
    return found


_SHARED_COMPLETERS: dict[tuple[str, bool], _Completer] = {}


def _first(pair: tuple[int, Rational]) -> int:
    return pair[0]


@functools.lru_cache(maxsize=4096)
def _assignments(group: Group, n: int) -> list[tuple[Group, ...]]:
    """Every way to deal the multiset ``group`` into ``n`` ordered (possibly empty) parts."""
    if n == 1:
        return [(group,)]
    return [(part, *tail) for part, rest in _parts(group) for tail in _assignments(rest, n - 1)]


_UNKNOWN: Final = object()


# --------------------------------------------------------------------------------------------
# The shipped table: every shortest solution of every four-card hand of Points24
#
# Along a shortest solution the facts need no search: a prefix of a shortest solution (of L tokens)
# has L - len(prefix) tokens still to write, and the next tokens that keep to a shortest completion
# are those that extend it to a prefix of another shortest solution. ``points24_table.py`` lists
# every shortest solution of every hand of four cards worth 1..13 with target 24 (none: no formula
# makes 24), written by ``scripts/make_points24_table.py`` with this module's search; a prefix off
# them is searched as before.
# --------------------------------------------------------------------------------------------

_Trie = dict[Tokens, frozenset[str]]
"""The prefixes of a hand's shortest solutions, each with its next tokens on them (none: a solution)."""
_TABLE_RULES: Final = (4, 24, OPERATORS, True)
"""What the shipped table covers: hands of this many cards, this target, these operators and parentheses."""
_TABLE_TOKENS: Final = {"T": "10", "J": "11", "Q": "12", "K": "13"}
"""A solution is written one character a token: a card 1..9 as its digit, 10..13 as T, J, Q, K."""


@functools.cache
def _table() -> dict[str, str]:
    """The shipped table by hand (``"3,3,8,8"``): its solutions as written. Read on the first hand it covers
    (160 kB: about 2 ms)."""
    from rl4vlm_gym.envs.cards.points24_table import SHORTEST

    return {hand: written for hand, _, written in (line.partition(" ") for line in SHORTEST.splitlines())}


@functools.lru_cache(maxsize=1024)
def _shipped(values: Group, target: int, ops: str, parentheses: bool) -> tuple[int, _Trie] | None:
    """The shortest solutions' length and prefixes for a hand the shipped table covers (length 0 and
    no prefix: no formula makes the target); ``None`` for a hand it does not cover."""
    if (len(values), target, ops, parentheses) != _TABLE_RULES:
        return None
    written = _table().get(",".join(map(str, values)))
    if written is None:
        return None
    trie: dict[Tokens, set[str]] = {}
    length = 0
    for solution in written.split():
        tokens = tuple(_TABLE_TOKENS.get(char, char) for char in solution)
        length = len(tokens)
        for k in range(length):
            trie.setdefault(tokens[:k], set()).add(tokens[k])
        trie.setdefault(tokens, set())
    return length, {prefix: frozenset(nexts) for prefix, nexts in trie.items()}


def shortest_solutions(hand: Sequence[int], target: int = 24, candidates: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """Every formula of the fewest tokens over ``hand`` that makes ``target``, by the search alone
    (:class:`Completions` with ``tabled=False``): a walk from the empty formula along every next token
    that keeps to a shortest completion, in the order of ``candidates`` (default: the cards 1..13, then
    ``+-*/()``). What ``scripts/make_points24_table.py`` writes into the shipped table."""
    tokens = tuple(candidates) if candidates is not None else (*map(str, range(1, 14)), *"+-*/()")
    search = Completions(hand, target, tabled=False)
    found: list[tuple[str, ...]] = []

    def walk(prefix: tuple[str, ...]) -> None:
        left, nexts = search.next_tokens(prefix, tokens)
        if left == 0:
            found.append(prefix)
        for token in nexts:
            walk((*prefix, token))

    walk(())
    return found


class Completions:
    """Shortest completions of partial formulas over one hand: what the points games' decision
    facts need (the fewest tokens still to write from any prefix, and which next tokens keep to it).

    Args:
        numbers: the hand's values.
        target, ops, parentheses: as in :func:`solve`.
        tabled: read a prefix of a shortest solution off the shipped table where it covers the hand
            (Points24's four-card hands), without a search; ``False`` searches every prefix (the
            table's generator and the tests that check the table do).
    """

    def __init__(
        self, numbers: Sequence[int], target: int, ops: str = OPERATORS, parentheses: bool = True, tabled: bool = True
    ) -> None:
        values, self.target, ops, self.parentheses = _normalise(numbers, target, ops, parentheses)
        self._table = _shipped(values, self.target, ops, self.parentheses) if tabled else None
        self.hand = Counter(values)
        self._completer = _completer(ops, self.parentheses)
        self._found: dict[tuple[str, ...], int | None] = {}
        self._parsed: dict[tuple[str, ...], _Parsed | None] = {(): _START}
        self._lefts: dict[tuple[int, ...], Group | None] = {}
        self._cards = len(values)

    def shortest(self, tokens: Sequence[str], at_most: int | None = None) -> int | None:
        """The fewest tokens to append to ``tokens`` for a formula that uses every card exactly once
        and equals the target (0: it already does); ``None`` if no completion does, or (given
        ``at_most``) none of at most that many tokens: a bound makes the search much cheaper."""
        key = tuple(tokens)
        if self._table is not None:
            length, trie = self._table
            if not trie:
                return None  # no formula makes the target: no prefix has a completion
            if key in trie:
                left = length - len(key)
                return left if at_most is None or left <= at_most else None
        if key in self._found:
            known = self._found[key]
            return known if known is None or at_most is None or known <= at_most else None
        parsed = self._parse(key)
        group = None if parsed is None else self._left(parsed[1])
        length = _INF
        if parsed is not None and group is not None:
            length = self._completer.frames.solve(parsed[0], group, self.target, _INF if at_most is None else at_most)
        if length < _INF or at_most is None:
            self._found[key] = None if length >= _INF else length
        return None if length >= _INF or (at_most is not None and length > at_most) else length

    def next_tokens(self, tokens: Sequence[str], candidates: Sequence[str]) -> tuple[int | None, tuple[str, ...]]:
        """The fewest tokens to append to ``tokens`` (as :meth:`shortest`) and the ``candidates`` that
        can come next on such a completion, in their order: those after which one token fewer is left.
        None leaves fewer than that, so each is searched at that length only (no deepening from the
        floor) and the search stops at the first completion found. Nothing comes next once ``tokens``
        is complete (0) or cannot be completed (``None``)."""
        prefix = tuple(tokens)
        if self._table is not None:
            shortest, trie = self._table
            nexts_on = trie.get(prefix)
            if not trie:
                return None, ()
            if nexts_on is not None:
                left = shortest - len(prefix)
                return left, tuple(token for token in candidates if token in nexts_on)
        length = self.shortest(prefix)
        if not length:
            return length, ()
        nexts = tuple(token for token in candidates if self._within((*prefix, token), length - 1))
        return length, nexts

    def _within(self, tokens: tuple[str, ...], length: int) -> bool:
        """Whether ``tokens`` has a completion of exactly ``length`` tokens, knowing it has none shorter."""
        known = self._found.get(tokens, _UNKNOWN)
        if known is not _UNKNOWN:
            return known == length
        parsed = self._parse(tokens)
        group = None if parsed is None else self._left(parsed[1])
        if parsed is None or group is None:
            return False
        found = self._completer.frames.solve(parsed[0], group, self.target, length, at_least=length)
        if found < _INF:
            self._found[tokens] = found
        return found == length

    def _left(self, numbers: tuple[int, ...]) -> Group | None:
        """The cards ``numbers`` leave (sorted), or ``None`` if some number is no card's (memoised)."""
        key = tuple(sorted(numbers))
        if key not in self._lefts:
            left = self.hand - Counter(key)
            self._lefts[key] = tuple(sorted(left.elements())) if sum(left.values()) + len(key) == self._cards else None
        return self._lefts[key]

    def _parse(self, tokens: tuple[str, ...]) -> _Parsed | None:
        """``tokens`` read, one more token than a prefix read before (memoised)."""
        if tokens in self._parsed:
            return self._parsed[tokens]
        before = self._parse(tokens[:-1])
        parsed = self._parsed[tokens] = None if before is None else _read(before, tokens[-1])
        return parsed
