"""Rules shared by the points games (EZPoints, Points24): build a formula from the cards.

Each step appends one token (a number or an operator) to the formula; ``=`` submits it. A number
is refused (an invalid action: the formula is unchanged) when no unused card is worth it. The
submitted formula is evaluated with exact rational arithmetic, so ``8 / (3 - 8 / 3)`` is 24 (RL4VLM
uses float ``eval``, which misses such answers), and it must use every card exactly once.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.cards import layout, points_oracle, renderer, wording
from rl4vlm_gym.envs.cards.deck import RANKS, Card, random_card
from rl4vlm_gym.envs.cards.levels import PointsLevel

if TYPE_CHECKING:
    from numpy.typing import NDArray

_REWARDS = {
    "rl4vlm": {"win": 10.0, "wrong": -1.0, "token": 0.0, "invalid": -1.0, "timeout": -1.0},
    # verl-agent turns every -1 of the points games into 0.
    "verl-agent": {"win": 10.0, "wrong": 0.0, "token": 0.0, "invalid": 0.0, "timeout": 0.0},
}
_MAX_DEAL_TRIES = 10_000
_OPERAND_NEXT = frozenset("(+-*/")
"""After these tokens (or at the start) an operand comes next: a number or "("."""
_OPERATOR_NEXT = frozenset("+-*/)")
"""Else an operator, or ")" inside parentheses (the rules' own operators only: the vocabulary filters)."""
_OPERATOR_NEXT_TOP = _OPERATOR_NEXT - {")"}


class PointsGame(VLMEnv):
    """Base of EZPoints and Points24; subclasses set the operators and the drawing layout."""

    REWARDS: ClassVar = _REWARDS
    MIN_IMAGE_SIDE: ClassVar[int] = 128  # smaller, four or five cards are no longer legible
    OPERATORS: ClassVar[tuple[str, ...]]
    PARENTHESES: ClassVar[bool]
    CARD_WIDTH: ClassVar[float]
    """Card width as a fraction of the image width (RL4VLM's layout at 300x300)."""
    FORMULA_Y: ClassVar[float]
    FONT_SIZE: ClassVar[int]
    """Formula font size at 300x300."""
    LABEL_ON_OWN_LINE: ClassVar[bool] = False
    APPEARANCES: ClassVar[tuple[str, ...]] = tuple(layout.LOOKS)
    WORDINGS: ClassVar[tuple[str, ...]] = wording.WORDINGS
    PHRASES: ClassVar = wording.PHRASES["points"]

    # -- episode --------------------------------------------------------------------------------

    def _new_episode(self, config: PointsLevel) -> None:
        self.config = config
        self.cards, self.target = self._deal(config)
        self.formula: list[str] = []
        self.submitted = False
        self.won = False
        self._hand_cache: tuple[tuple[Card, ...], NDArray[np.uint8]] | None = None
        self._plan = points_oracle.solve(self.values, self.target, self._arithmetic(), self.PARENTHESES)
        # The facts' caches for this hand: (cards, target, level, the hand's facts table, its values, its completions).
        self._decided: tuple[tuple[Card, ...], int, PointsLevel, dict[tuple[str, ...], Decision], tuple[int, ...], points_oracle.Completions] | None = None

    @classmethod
    def _arithmetic(cls) -> str:
        """The operators as the solver takes them (parentheses are a separate switch)."""
        return "".join(op for op in cls.OPERATORS if op not in "()")

    def _deal(self, config: PointsLevel) -> tuple[tuple[Card, ...], int]:
        rng, ops = self.np_random, self._arithmetic()
        for _ in range(_MAX_DEAL_TRIES):
            cards = tuple(random_card(rng) for _ in range(config.n_cards))
            values = [c.value(config.face_values) for c in cards]
            if config.target is not None:
                target = config.target
            else:
                low, high = config.target_range
                target = int(rng.integers(low, high + 1))
            if not config.solvable_only or points_oracle.solvable(values, target, ops, self.PARENTHESES):
                return cards, target
        raise RuntimeError(f"no solvable deal for {config} in {_MAX_DEAL_TRIES} tries")  # pragma: no cover

    @property
    def values(self) -> list[int]:
        """The cards' values under this level's face-card rule."""
        return [c.value(self.config.face_values) for c in self.cards]

    # -- rules ------------------------------------------------------------------------------------

    def _actions(self) -> tuple[str, ...]:
        return _vocabulary(self.config.face_values, self.OPERATORS)

    def _apply(self, action: str) -> StepOutcome:
        if action == "=":
            return self._submit()
        if action.isdigit():
            number = int(action)
            used = Counter(points_oracle.numbers_in(self.formula))[number]
            if used >= self.values.count(number):
                error = f"no unused card is worth {number}"
                feedback = self._say("no_card", f"Invalid action: {error}. Nothing happened.", number=number)
                return StepOutcome("invalid", error=error, feedback=feedback)
        self.formula.append(action)
        return StepOutcome("token")

    def _submit(self) -> StepOutcome:
        self.submitted = True
        shown = "".join(self.formula) or "(empty)"
        value = points_oracle.evaluate(self.formula)
        if sorted(points_oracle.numbers_in(self.formula)) != sorted(self.values):
            feedback = self._say("wrong_cards", f"Wrong: {shown} does not use every card exactly once.", shown=shown)
            return StepOutcome("wrong", terminated=True, feedback=feedback)
        if value is None:
            return StepOutcome(
                "wrong",
                terminated=True,
                feedback=self._say("not_formula", f"Wrong: {shown} is not a valid formula.", shown=shown),
            )
        if value != self.target:
            train = f"Wrong: {shown} = {_show(value)}, not {self.target}."
            feedback = self._say("wrong_value", train, shown=shown, value=_show(value), target=self.target)
            return StepOutcome("wrong", terminated=True, feedback=feedback)
        self.won = True
        return StepOutcome(
            "win",
            terminated=True,
            feedback=self._say("correct", f"Correct: {shown} = {self.target}.", shown=shown, target=self.target),
        )

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        # RL4VLM truncates with -1 at the first step that finds the formula longer than its limit
        # (EZPoints 5 tokens, Points24 20); every step appends to its formula (invalid ones a
        # blank), so it applies limit + 1 steps, and here the episode ends after them.
        if outcome.terminated or self.elapsed_steps < self.config.max_steps:
            return outcome
        feedback = " ".join(filter(None, [outcome.feedback, self._say("too_long", "The formula is too long: out of steps.")]))
        return StepOutcome("timeout", truncated=True, feedback=feedback)

    # -- observation ------------------------------------------------------------------------------

    def _describe(self) -> str:
        cards = ", ".join(str(c) for c in self.cards)
        return f"Cards: {cards}\nFormula: {''.join(self.formula)}"

    def _mission(self) -> str:
        faces = "10" if self.config.face_values == 10 else "11, 12 and 13"
        ops = " ".join(op for op in self.OPERATORS)
        train = (
            f"Make a formula that equals {self.target} using every card exactly once and the "
            f"operators {ops}. J, Q and K count as {faces}. Append one number or operator per "
            "step, then '=' to submit."
        )
        return self._say("mission", train, target=self.target, ops=ops, faces=faces)

    def _render(self) -> NDArray[np.uint8]:
        height, width = self.image_size
        frame = self._hand_frame(tuple(self.cards))
        font_size, band = self._text_band()
        text = "".join(self.formula) if self.LABEL_ON_OWN_LINE else f"Formula: {''.join(self.formula)}"
        look = layout.LOOKS[self.appearance]
        layout.blit(frame, layout.text_tile(text, band, font_size, look=look), (0, round(self.FORMULA_Y * height - band[1] / 2)))
        return frame

    def _hand_frame(self, cards: tuple[Card, ...]) -> NDArray[np.uint8]:
        """The table with the cards (and the formula label) laid out; cached for the current hand."""
        if self._hand_cache is not None and self._hand_cache[0] == cards:
            return self._hand_cache[1].copy()
        height, width = self.image_size
        n = len(cards)
        gap = max(2, round(0.02 * width))
        card_w = max(renderer.MIN_SIZE, min(round(self.CARD_WIDTH * width), (width - (n + 1) * gap) // n))
        card_h = min(round(card_w * 1.4), round(0.62 * height))
        card_w = min(card_w, round(card_h / 1.4))
        look = layout.LOOKS[self.appearance]
        frame = renderer.table((width, height), look.felt)
        if self.LABEL_ON_OWN_LINE:
            font_size, band = self._text_band()
            label = layout.text_tile("Formula:", band, font_size, look=look)
            layout.blit(frame, label, (0, round((self.FORMULA_Y - 0.10) * height - band[1] / 2)))
        left = (width - n * card_w - (n - 1) * gap) // 2
        top = round(0.06 * height)
        for i, card in enumerate(cards):
            layout.blit(frame, layout.card_tile(card.rank, card.suit, (card_w, card_h), look), (left + i * (card_w + gap), top))
        self._hand_cache = (cards, frame)
        return frame.copy()

    def _text_band(self) -> tuple[int, tuple[int, int]]:
        """Font size and (width, height) of a full-width text line, scaled from 300x300."""
        height, width = self.image_size
        font_size = max(8, round(self.FONT_SIZE * min(height, width) / 300))
        return font_size, (width, min(height, 2 * font_size))

    def _frame_key(self) -> tuple[tuple[Card, ...], tuple[str, ...]]:
        return tuple(self.cards), tuple(self.formula)

    def _state_key(self) -> str:
        # Suits and J/Q/K faces don't change the game: the key holds card values only.
        values = ",".join(str(v) for v in sorted(self.values))
        submitted = ("|won" if self.won else "|submitted") if self.submitted else ""  # a submission ends the game
        return f"values={values}|target={self.target}|formula={' '.join(self.formula)}{submitted}"

    # -- scoring and oracle -------------------------------------------------------------------------

    def _success(self) -> bool:
        return self.won  # only a submitted formula counts

    def _progress(self) -> float:
        if self.won:
            return 1.0
        used = Counter(points_oracle.numbers_in(self.formula)) & Counter(self.values)
        return sum(used.values()) / (len(self.cards) + 1)

    def _optimal_steps(self) -> int | None:
        return None if self._plan is None else len(self._plan) + 1

    def _decision(self) -> Decision:
        # Exact: points_oracle.Completions gives the fewest tokens still to write from any prefix (on
        # the oracle's plan or off it) and which next tokens keep to it. A formula's facts depend on
        # the hand's values, the target and the rules only, so they are kept in a table per hand that
        # every episode (and env) dealing it shares (_facts_table); only the budget is checked per call.
        cards, target, config = self.cards, self.target, self.config
        cached = self._decided
        if cached is None or cached[0] is not cards or cached[1] != target or cached[2] is not config:
            values = tuple(sorted(c.value(config.face_values) for c in cards))
            ops = self._arithmetic()
            table = _facts_table(values, target, ops, self.PARENTHESES, self._actions())
            cached = self._decided = (cards, target, config, table, values, _completions(values, target, ops, self.PARENTHESES))
        facts = cached[3]
        formula = tuple(self.formula)
        found = facts.get(formula)
        if found is None:
            found = facts[formula] = self._formula_facts(formula, cached[5], cached[4])
        if found.steps_to_go is None:
            return found
        left = config.max_steps - self.elapsed_steps
        if found.steps_to_go > left:
            reason = f"unsolvable from here: {found.steps_to_go} steps to go, {left} left"
            return Decision(None, None, reason=reason, features=found.features)
        return found

    def _formula_facts(self, formula: tuple[str, ...], completions: points_oracle.Completions, values: tuple[int, ...]) -> Decision:
        """The facts of ``formula`` over the hand ``values`` with the whole step budget ahead (the caller
        checks the budget)."""
        used = [int(token) for token in formula if token.isdigit()]  # actions' numbers, each a card's (others are refused)
        depth = formula.count("(") - formula.count(")")
        features = {"cards_used": len(used), "cards_left": len(values) - len(used), "open_parens": max(depth, 0)}  # shared: never changed
        # Only tokens that can stand next: an operand (a card still unused, or "(") after an operator
        # or at the start, else an operator (or ")" closing an open one). Any other is refused or
        # makes no formula, so it is never optimal: the same set as asking every action.
        if not formula or formula[-1] in _OPERAND_NEXT:
            left = list(values)
            for number in used:
                if number in left:
                    left.remove(number)
            allowed = frozenset({str(v) for v in left} | {"("})
        else:
            allowed = _OPERATOR_NEXT if depth > 0 else _OPERATOR_NEXT_TOP
        to_write, optimal = completions.next_tokens(formula, [a for a in self._actions() if a in allowed])
        if to_write is None:
            return Decision(None, None, reason="unsolvable from here: no completion of the formula makes the target", features=features)
        return Decision(optimal if to_write else ("=",), to_write + 1, features=features)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_decided"] = None  # a cache that holds the shared facts table: rebuilt on demand
        return state

    def oracle_action(self) -> str:
        """The next token of the shortest solution; off it, the first token that keeps to a shortest
        completion of the formula (the decision facts'); ``=`` when it is complete or none exists."""
        plan = self._plan
        done = len(self.formula)
        if plan is not None and tuple(self.formula) == plan[:done]:
            return "=" if done == len(plan) else plan[done]
        optimal = self._decision().optimal_actions
        return optimal[0] if optimal else "="


@functools.cache
def _vocabulary(face_values: int, operators: tuple[str, ...]) -> tuple[str, ...]:
    top = 10 if face_values == 10 else len(RANKS)
    return tuple(str(n) for n in range(1, top + 1)) + operators + ("=",)


@functools.lru_cache(maxsize=32)
def _completions(values: tuple[int, ...], target: int, ops: str, parentheses: bool) -> points_oracle.Completions:
    """The completions of one hand, shared by the episodes that deal it (kept for the last 32)."""
    return points_oracle.Completions(values, target, ops, parentheses)


@functools.lru_cache(maxsize=1024)
def _facts_table(values: tuple[int, ...], target: int, ops: str, parentheses: bool, actions: tuple[str, ...]) -> dict[tuple[str, ...], Decision]:
    """The decision facts of each formula asked so far over one hand (sorted values), target and rule
    set, with the whole step budget ahead: shared by every episode and env that deals the hand, so a
    hand seen before costs a look-up per step (kept for the last 1,024 hands)."""
    return {}


def _show(value: object) -> str:
    text = str(value)
    return text if "/" not in text else f"{text} ({float(value):.4g})"  # type: ignore[arg-type]
