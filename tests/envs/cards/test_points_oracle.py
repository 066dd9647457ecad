"""Tests for the points games' exact formula arithmetic: evaluate, numbers_in, solve."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from collections.abc import Iterator, Sequence
from fractions import Fraction

import numpy as np
import pytest

from rl4vlm_gym.envs.cards import points_oracle


def toks(text: str) -> list[str]:
    """Split a space-separated formula into tokens."""
    return text.split()


# --------------------------------------------------------------------------------------------
# evaluate
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("13", Fraction(13)),
        ("1 + 2 * 3", Fraction(7)),
        ("( 1 + 2 ) * 3", Fraction(9)),
        ("8 - 3 - 2", Fraction(3)),  # left associative, not 8 - (3 - 2)
        ("8 / 4 / 2", Fraction(1)),  # left associative, not 8 / (4 / 2)
        ("2 * 3 / 4", Fraction(3, 2)),
        ("1 - 5", Fraction(-4)),
        ("8 / ( 3 - 8 / 3 )", Fraction(24)),  # 8 / (1/3), exactly: floats give 23.99999999999999
        ("1 / 3 + 1 / 3 + 1 / 3", Fraction(1)),
        ("( ( ( 5 ) ) )", Fraction(5)),
        ("10 - ( 2 + 3 ) * ( 4 - 2 ) / 5", Fraction(8)),
        ("0 / 7", Fraction(0)),
        ("2 * ( 3 + 4 * ( 5 - 1 ) ) - 6 / ( 1 + 2 )", Fraction(36)),
    ],
)
def test_evaluate_hand_worked(text: str, expected: Fraction) -> None:
    value = points_oracle.evaluate(toks(text))
    assert value == expected
    assert type(value) is Fraction


@pytest.mark.parametrize(
    "tokens",
    [
        [],
        ["+"],
        ["1", "+"],
        ["1", "2"],  # two numbers are never one number 12
        ["-", "1"],  # no unary minus
        ["1", "*", "-", "2"],
        ["1", "+", "*", "2"],
        ["(", "1"],
        ["1", ")"],
        ["(", "1", "+", "2", ")", ")"],
        ["(", ")"],
        ["1", "(", "2", ")"],
        ["(", "1", ")", "(", "2", ")"],
        ["x"],
        ["1.5"],
        ["-1"],
        [" 1"],
        ["²"],  # str.isdigit says yes, int() says no
        ["١", "+", "2"],  # an Arabic-Indic one: int() would read it, but tokens are ASCII
        ["１２"],  # full-width digits
        ["1", "/", "0"],
        ["1", "/", "(", "2", "-", "2", ")"],
        ["2", "+", "3", "/", "(", "1", "-", "1", ")", "*", "4"],
        ["1", "+", 2],  # a non-string token
        ["1", None],
    ],
)
def test_evaluate_rejects_malformed(tokens: list[object]) -> None:
    assert points_oracle.evaluate(tokens) is None  # type: ignore[arg-type]


def test_evaluate_rejects_a_plain_string() -> None:
    with pytest.raises(TypeError, match="tokens"):
        points_oracle.evaluate("1+2")


def test_evaluate_accepts_any_sequence_and_deep_nesting() -> None:
    assert points_oracle.evaluate(("6", "*", "4")) == 24
    deep = ["("] * 5000 + ["7"] + [")"] * 5000
    assert points_oracle.evaluate(deep) == 7  # iterative: no RecursionError
    assert points_oracle.evaluate(deep[:-1]) is None


Tree = int | tuple[str, "Tree", "Tree"]  # a number, or (operator, left, right)
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def random_tree(rng: random.Random, leaves: int) -> Tree:
    if leaves == 1:
        return rng.randint(0, 13)
    split = rng.randint(1, leaves - 1)
    return rng.choice("+-*/"), random_tree(rng, split), random_tree(rng, leaves - split)


def tree_value(tree: Tree) -> Fraction | None:
    """The exact value of a tree, computed on the tree itself (None on division by zero)."""
    if isinstance(tree, int):
        return Fraction(tree)
    op, left, right = tree
    a, b = tree_value(left), tree_value(right)
    if a is None or b is None or (op == "/" and b == 0):
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    return a * b if op == "*" else a / b


def print_tree(tree: Tree, rng: random.Random) -> list[str]:
    """Tokens of a tree: parentheses where precedence needs them, elsewhere at random."""
    if isinstance(tree, int):
        return [str(tree)]
    op, left, right = tree
    left_tokens, right_tokens = print_tree(left, rng), print_tree(right, rng)
    if isinstance(left, tuple) and (PRECEDENCE[left[0]] < PRECEDENCE[op] or rng.random() < 0.2):
        left_tokens = ["(", *left_tokens, ")"]
    if isinstance(right, tuple) and (
        PRECEDENCE[right[0]] < PRECEDENCE[op]
        or (PRECEDENCE[right[0]] == PRECEDENCE[op] and op in "-/")
        or rng.random() < 0.2
    ):
        right_tokens = ["(", *right_tokens, ")"]
    return [*left_tokens, op, *right_tokens]


def test_evaluate_matches_independent_tree_values() -> None:
    rng = random.Random(1)
    for _ in range(3000):
        tree = random_tree(rng, rng.randint(1, 8))
        assert points_oracle.evaluate(print_tree(tree, rng)) == tree_value(tree)


def test_evaluate_a_long_formula() -> None:
    # Its speed is measured by benchmarks/cards_formula.py.
    tokens = toks("( 1 + 2 ) * 3 - 4 / ( 5 + 6 ) * 7 + 8 - 9 / 10")
    assert len(tokens) == 23
    assert points_oracle.evaluate(tokens) == 9 - Fraction(28, 11) + 8 - Fraction(9, 10)


def test_numbers_in() -> None:
    assert points_oracle.numbers_in(toks("( 10 + 3 ) * 13 - 1")) == [10, 3, 13, 1]
    assert points_oracle.numbers_in(["x", "+", "07", ")", "-1", "²"]) == [7]
    assert points_oracle.numbers_in([]) == []


# --------------------------------------------------------------------------------------------
# solve: examples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("numbers", "target", "ops", "parentheses", "expected"),
    [
        ([3, 3, 8, 8], 24, "+-*/", True, "8 / ( 3 - 8 / 3 )"),
        ([5, 5, 5, 1], 24, "+-*/", True, "( 5 - 1 / 5 ) * 5"),
        ([4, 3, 2, 1], 24, "+-*/", True, "1 * 2 * 3 * 4"),
        ([10, 10, 4, 4], 24, "+-*/", True, "( 10 * 10 - 4 ) / 4"),
        ([2, 5, 2], 12, "+*", False, "2 * 5 + 2"),  # EZPoints: precedence, no parentheses
        ([3, 4], 12, "+*", False, "3 * 4"),
        ([1, 2, 3], 9, "+*", True, "( 1 + 2 ) * 3"),
        ([1, 5], -4, "+-*/", True, "1 - 5"),
        ([0, 5], 0, "+-*/", True, "0 * 5"),
        ([7], 7, "+-*/", True, "7"),
    ],
)
def test_solve_examples(
    numbers: list[int], target: int, ops: str, parentheses: bool, expected: str
) -> None:
    assert points_oracle.solve(numbers, target, ops, parentheses) == tuple(toks(expected))


@pytest.mark.parametrize(
    ("numbers", "target", "ops", "parentheses"),
    [
        ([1, 1, 1, 1], 24, "+-*/", True),
        ([13, 13, 13, 13], 24, "+-*/", True),
        ([5, 5, 5, 1], 24, "+-*/", False),  # needs its parentheses
        ([1, 2, 3], 9, "+*", False),  # needs (1 + 2) * 3
        ([2, 3, 4], 12, "+*", True),
        ([1, 1, 1], 12, "+*", False),
        ([7], 8, "+-*/", True),
        ([6, 6, 6, 6], 24, "/", True),
    ],
)
def test_unsolvable_hands(numbers: list[int], target: int, ops: str, parentheses: bool) -> None:
    assert points_oracle.solve(numbers, target, ops, parentheses) is None
    assert not points_oracle.solvable(numbers, target, ops, parentheses)


def test_solvable() -> None:
    assert points_oracle.solvable([3, 3, 8, 8], 24)
    assert points_oracle.solvable([2, 2, 5], 12, ops="+*", parentheses=False)


# --------------------------------------------------------------------------------------------
# solve: properties
# --------------------------------------------------------------------------------------------


def paren_pairs(tokens: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Index pairs of matching parentheses."""
    opened: list[int] = []
    for index, token in enumerate(tokens):
        if token == "(":
            opened.append(index)
        elif token == ")":
            yield opened.pop(), index


def assert_valid_solution(
    solution: tuple[str, ...], numbers: Sequence[int], target: int, ops: str, parentheses: bool
) -> None:
    assert points_oracle.evaluate(solution) == target
    assert sorted(points_oracle.numbers_in(solution)) == sorted(numbers)
    assert {t for t in solution if t in "+-*/"} <= set(ops)
    if not parentheses:
        assert "(" not in solution
    for start, end in paren_pairs(solution):  # every pair is needed
        lighter = [t for i, t in enumerate(solution) if i not in (start, end)]
        assert points_oracle.evaluate(lighter) != target, (solution, lighter)


@pytest.mark.parametrize(
    ("size", "high", "ops", "parentheses", "target"),
    [
        (4, 13, "+-*/", True, 24),  # Points24
        (4, 13, "+-*/", False, 24),
        (2, 10, "+*", False, 12),  # EZPoints
        (3, 6, "+*", False, 12),
        (3, 6, "+*", True, 12),
        (4, 13, "-/", True, 2),
    ],
)
def test_solutions_are_valid_and_order_independent(
    size: int, high: int, ops: str, parentheses: bool, target: int
) -> None:
    rng = random.Random(f"{size}{ops}{parentheses}{target}")
    solved = 0
    for _ in range(150):
        numbers = [rng.randint(1, high) for _ in range(size)]
        solution = points_oracle.solve(numbers, target, ops, parentheses)
        assert points_oracle.solve(rng.sample(numbers, size), target, ops, parentheses) == solution
        if solution is not None:
            solved += 1
            assert_valid_solution(solution, numbers, target, ops, parentheses)
    assert solved >= 10  # the property checks ran on real solutions


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to write ``total`` as an ordered sum of ``parts`` non-negative integers."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def all_formulas(numbers: Sequence[int], ops: str, max_pairs: int) -> Iterator[tuple[str, ...]]:
    """Every token sequence over ``numbers`` with at most ``max_pairs`` "(" (some malformed).

    A "(" can only precede a number (after any "(" before it) and a ")" only follow one, so
    a formula is a number order, an operator sequence and the counts of each around each number.
    """
    for order in set(itertools.permutations(numbers)):
        for operators in itertools.product(ops, repeat=len(numbers) - 1):
            for pairs in range(max_pairs + 1):
                for opens in compositions(pairs, len(numbers)):
                    for closes in compositions(pairs, len(numbers)):
                        tokens: list[str] = []
                        for index, number in enumerate(order):
                            if index:
                                tokens.append(operators[index - 1])
                            tokens += ["("] * opens[index] + [str(number)] + [")"] * closes[index]
                        yield tuple(tokens)


def brute_force(numbers: Sequence[int], ops: str, parentheses: bool) -> dict[Fraction, tuple]:
    """The canonical (shortest, then smallest) formula for every reachable value."""
    # A binary tree with n leaves never needs more than n - 2 pairs: its root needs none.
    max_pairs = max(len(numbers) - 2, 0) if parentheses else 0
    best: dict[Fraction, tuple[str, ...]] = {}
    for tokens in all_formulas(numbers, ops, max_pairs):
        value = points_oracle.evaluate(tokens)
        if value is None:
            continue
        if value not in best or (len(tokens), tokens) < (len(best[value]), best[value]):
            best[value] = tokens
    return best


@pytest.mark.parametrize(
    ("numbers", "ops", "parentheses"),
    [
        *(
            (hand, ops, parentheses)
            for hand in ([1, 2, 3], [2, 2, 5], [3, 8, 8], [0, 4, 10], [13, 1, 13], [6, 9, 12])
            for ops, parentheses in (("+-*/", True), ("+-*/", False), ("+*", False), ("-/", True))
        ),
        ([1, 5, 5, 5], "+-*/", True),
        ([3, 3, 8, 8], "+-*/", True),
        ([0, 2, 2, 7], "*/-", True),
    ],
)
def test_solve_is_shortest_and_canonical(numbers: list[int], ops: str, parentheses: bool) -> None:
    best = brute_force(numbers, ops, parentheses)
    integers = {int(value) for value in best if value.denominator == 1}
    for target in sorted(integers | set(range(-15, 40))):
        expected = best.get(Fraction(target))
        assert points_oracle.solve(numbers, target, ops, parentheses) == expected, target


def test_solve_is_deterministic_across_processes() -> None:
    hands = [[3, 3, 8, 8], [1, 5, 5, 5], [2, 7, 9, 12], [1, 2, 3, 4, 5]]
    here = [points_oracle.solve(hand, 24) for hand in hands]
    code = (
        "from rl4vlm_gym.envs.cards import points_oracle\n"
        f"print([points_oracle.solve(hand, 24) for hand in {hands!r}])"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": hash_seed}
        output = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert output.strip() == repr(here)


def test_results_are_cached_on_the_sorted_hand() -> None:
    first = points_oracle.solve([2, 7, 9, 11], 24)
    assert first is not None
    assert points_oracle.solve([11, 9, 7, 2], 24, ops="/*-+") is first


def test_accepts_numpy_integers() -> None:
    numbers = np.array([8, 3, 8, 3])
    assert points_oracle.solve(numbers, np.int64(24)) == tuple(toks("8 / ( 3 - 8 / 3 )"))


def test_five_and_six_numbers() -> None:
    five = points_oracle.solve([1, 2, 3, 4, 5], 24)
    assert five is not None and len(five) == 9  # no parentheses needed
    assert_valid_solution(five, [1, 2, 3, 4, 5], 24, "+-*/", True)
    six = points_oracle.solve([13, 13, 13, 13, 13, 11], 24)
    assert six is not None
    assert_valid_solution(six, [13, 13, 13, 13, 13, 11], 24, "+-*/", True)


def test_solve_finds_nothing_for_unreachable_targets() -> None:
    # Its speed (the whole search runs) is measured by benchmarks/cards_formula.py.
    for hand in ([3, 3, 8, 8], [1, 5, 5, 5], [4, 7, 9, 13], [2, 2, 11, 13]):
        assert points_oracle.solve(hand, 1009) is None, hand
    assert points_oracle.solve([7, 9, 10, 11, 13], 100_003) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"numbers": []}, "numbers must hold 1 to 6"),
        ({"numbers": [1] * 7}, "numbers must hold 1 to 6"),
        ({"numbers": [3, -1]}, "numbers must be non-negative integers"),
        ({"numbers": [1.5, 2]}, "numbers must be non-negative integers"),
        ({"numbers": ["3", "4"]}, "numbers must be non-negative integers"),
        ({"target": 24.0}, "target must be an integer"),
        ({"ops": ""}, r"ops must be a non-empty string of characters from '\+-\*/'"),
        ({"ops": "+x"}, "ops must be"),
        ({"ops": ["+"]}, "ops must be"),
    ],
)
def test_solve_rejects_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"numbers": [1, 2, 3, 4], "target": 24, **kwargs}
    with pytest.raises(ValueError, match=message):
        points_oracle.solve(**arguments)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The shipped table of Points24's shortest solutions (points24_table.py): facts off it, else the search
# --------------------------------------------------------------------------------------------

_VOCABULARY = [str(n) for n in range(1, 14)] + list("+-*/()")


def test_the_shipped_table_lists_every_hand_and_what_the_search_finds_on_a_sample() -> None:
    # A seeded sample (the whole table: scripts/make_points24_table.py --check, minutes); 3,3,8,8 and 1,1,1,1
    # (no formula) always. 0.5 s.
    hands = list(itertools.combinations_with_replacement(range(1, 14), 4))
    assert sorted(points_oracle._table()) == sorted(",".join(map(str, hand)) for hand in hands)
    for hand in [(3, 3, 8, 8), (1, 1, 1, 1), *random.Random(38).sample(hands, 5)]:
        length, trie = points_oracle._shipped(hand, 24, "+-*/", True)
        solutions = [prefix for prefix, nexts in trie.items() if not nexts]
        assert sorted(solutions) == sorted(points_oracle.shortest_solutions(hand, 24, _VOCABULARY)), hand
        assert all(len(solution) == length for solution in solutions)


def test_facts_off_the_table_equal_the_search_on_seeded_random_prefixes() -> None:
    # Walks that keep to a shortest solution, leave it (an extra pair of parentheses, another order), go
    # back or write nonsense, on seeded hands of four cards (the table) and five (no table): the tabled
    # Completions must answer every prefix as the search does. 1 s.
    rng = random.Random(2024)
    hands = [tuple(sorted(rng.randint(1, 13) for _ in range(4))) for _ in range(10)] + [(3, 3, 8, 8), (1, 1, 1, 1), (1, 2, 3, 4, 5)]
    tabled_prefixes = 0
    for hand in hands:
        tabled = points_oracle.Completions(hand, 24)
        search = points_oracle.Completions(hand, 24, tabled=False)
        table = points_oracle._shipped(tuple(sorted(hand)), 24, "+-*/", True)
        for _ in range(4):
            prefix: tuple[str, ...] = ()
            for _ in range(rng.randint(1, 9)):
                got = tabled.next_tokens(prefix, _VOCABULARY)
                assert got == search.next_tokens(prefix, _VOCABULARY), (hand, prefix)
                assert tabled.shortest(prefix) == search.shortest(prefix), (hand, prefix)
                tabled_prefixes += table is not None and prefix in table[1]
                cards = [str(n) for n in hand]
                pool = got[1] if got[1] and rng.random() < 0.7 else cards + list("+-*/()")
                prefix = (*prefix, rng.choice(pool))
    assert tabled_prefixes > 50  # 79: a good share of the prefixes are read off the table
