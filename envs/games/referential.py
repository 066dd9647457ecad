"""A cooperative referential game: a speaker sees a target among candidates and must describe it so
that a listener, who sees the candidates in another order and not which is the target, picks it.

Lewis's signalling game (1969) in the form of Lazaridou et al.'s referential game (ICLR 2017):
both players are paid when the listener picks the target, so they must communicate. No package
plays it (PettingZoo's and OpenSpiel's games are competitive or have no message channel), so the
rules are ours; they are a few lines. The message channel is bounded: a phrase of one word per
attribute at most, from the level's vocabulary, in the order size, colour, shape.

- :class:`ReferentialAEC` (:func:`referential_env`): both roles behind PettingZoo's AEC API (the
  speaker moves, then the listener: the moves are not simultaneous).
- :class:`ReferentialListener`: you listen, a built-in speaker describes the target;
  :class:`ReferentialSpeaker`: you speak, a built-in listener picks.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from PIL import Image, ImageDraw

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.games.aec import VLMAgentsAEC
from rl4vlm_gym.rendering import font, to_array

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LEVELS", "ReferentialAEC", "ReferentialListener", "ReferentialSpeaker", "referential_env"]

VALUES = {
    "size": ("small", "large"),
    "colour": ("red", "green", "blue", "yellow"),
    "shape": ("circle", "square", "triangle", "diamond"),
}
ORDER = ("size", "colour", "shape")  # the order of words in a phrase
RGB = {"red": (220, 40, 40), "green": (40, 170, 70), "blue": (50, 90, 230), "yellow": (235, 200, 30)}

Thing = tuple[tuple[str, str], ...]  # ((attribute, value), ...) in ORDER


@dataclass(frozen=True)
class Level:
    """``candidates`` objects differing in ``attributes`` (objects are distinct)."""

    candidates: int
    attributes: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.candidates} candidates varying in {', '.join(self.attributes)}"

    def things(self) -> list[Thing]:
        return [
            tuple(zip(self.attributes, values, strict=True))
            for values in itertools.product(*(VALUES[a] for a in self.attributes))
        ]

    def phrases(self) -> tuple[str, ...]:
        """Every message: one value or none per attribute (not all none), in ORDER."""
        choices = [(None, *VALUES[a]) for a in self.attributes]
        return tuple(" ".join(w for w in words if w) for words in itertools.product(*choices) if any(words))


LEVELS = (Level(3, ("colour", "shape")), Level(4, ("size", "colour", "shape")), Level(6, ("size", "colour", "shape")))


@functools.cache
def _phrase_words(level: Level) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each message of ``level`` (in the order of ``Level.phrases``) and its words."""
    return tuple((p, tuple(p.split())) for p in level.phrases())


def name(thing: Thing) -> str:
    return " ".join(v for _, v in thing)


def fits(thing: Thing, phrase: str) -> bool:
    """Whether every word of ``phrase`` is one of ``thing``'s values."""
    values = {v for _, v in thing}
    return all(w in values for w in phrase.split())


def shortest_description(level: Level, target: Thing, candidates: list[Thing]) -> str:
    """The fewest words that single out ``target`` among ``candidates`` (the first in the order of
    ``Level.phrases`` among equals): what a cooperative speaker says."""
    for phrase in sorted(level.phrases(), key=lambda p: len(p.split())):
        if fits(target, phrase) and sum(fits(c, phrase) for c in candidates) == 1:
            return phrase
    raise AssertionError("distinct candidates always have a description")


@dataclass(frozen=True)
class Round:
    """One round: the candidates, the target's index among them, and each role's order."""

    level: int
    candidates: tuple[Thing, ...]
    target: int
    speaker_order: tuple[int, ...]
    listener_order: tuple[int, ...]  # position k (shown as k + 1) holds candidates[listener_order[k]]

    @staticmethod
    def draw(rng: np.random.Generator, level: int) -> Round:
        """The target uniformly; the distractors uniformly among the objects that differ from it
        in exactly one attribute (so telling it apart takes attention to every attribute)."""
        config = LEVELS[level]
        things = config.things()
        target = things[int(rng.integers(len(things)))]
        near = [t for t in things if sum(a != b for a, b in zip(t, target, strict=True)) == 1]
        picked = [near[int(i)] for i in rng.choice(len(near), size=config.candidates - 1, replace=False)]
        n = config.candidates
        candidates = tuple(sorted([target, *picked]))
        return Round(
            level,
            candidates,
            candidates.index(target),
            tuple(int(i) for i in rng.permutation(n)),
            tuple(int(i) for i in rng.permutation(n)),
        )

    @property
    def config(self) -> Level:
        return LEVELS[self.level]

    def target_position(self) -> int:
        """The target's number (1-based) in the listener's order."""
        return self.listener_order.index(self.target) + 1


def information_state(r: Round, role: str, message: str | None, picked: int | None) -> str:
    """What ``role`` may know of round ``r``, as a key: the candidates in its own order, the
    message and the pick; the speaker also which is the target and, after the pick, which
    candidate was chosen; the listener, after its pick, where the target was (its text says so).
    Never the other role's order, nor the target before the listener has picked."""
    order = r.speaker_order if role == "speaker" else r.listener_order
    seen = [role, ", ".join(name(r.candidates[i]) for i in order), f"said {message}"]
    if role == "speaker":
        chosen = None if picked is None else name(r.candidates[r.listener_order[picked - 1]])
        seen += [f"target {order.index(r.target) + 1}", f"picked {chosen}"]
    else:
        seen += [f"picked {picked}", f"target {None if picked is None else r.target_position()}"]
    return "|".join(seen)


def speaker_text(r: Round, message: str | None, picked: int | None) -> str:
    target = r.candidates[r.target]
    others = ", ".join(name(r.candidates[i]) for i in r.speaker_order)
    lines = [
        f"You are the speaker. The target (framed): the {name(target)}. The candidates, which the listener sees in another order: {others}."
    ]
    lines.append(f'You said: "{message}".' if message is not None else "You have not spoken yet.")
    if picked is not None:
        chosen = r.candidates[r.listener_order[picked - 1]]
        lines.append(
            f"The listener picked the {name(chosen)}: {'the target, success' if r.listener_order[picked - 1] == r.target else 'not the target, failure'}."
        )
    return "\n".join(lines)


def listener_text(r: Round, message: str | None, picked: int | None) -> str:
    listed = ", ".join(f"{k + 1} {name(r.candidates[i])}" for k, i in enumerate(r.listener_order))
    lines = [f"You are the listener. The candidates: {listed}."]
    lines.append(f'The speaker said: "{message}".' if message is not None else "The speaker has not spoken yet.")
    if picked is not None:
        right = r.listener_order[picked - 1] == r.target
        lines.append(
            f"You picked {picked}: {'the target, success' if right else f'not the target (it was {r.target_position()}), failure'}."
        )
    return "\n".join(lines)


def _shape(draw: ImageDraw.ImageDraw, thing: Thing, cx: int, cy: int, cell: int) -> None:
    values = dict(thing)
    r = int(cell * (0.22 if values.get("size") == "small" else 0.4))
    colour = RGB[values["colour"]]
    shape = values["shape"]
    if shape == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)
    elif shape == "square":
        draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=colour)
    elif shape == "triangle":
        draw.polygon([(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)], fill=colour)
    else:
        draw.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=colour)


def round_image(size: tuple[int, int], r: Round, role: str, message: str | None, picked: int | None) -> NDArray[np.uint8]:
    """The candidates on a grid (3 a row) in the role's order: the speaker's with the target
    framed in gold, the listener's numbered; the message in a band at the top; after the pick,
    the listener's choice framed in white."""
    height, width = size
    image = Image.new("RGB", (width, height), (235, 235, 228))
    draw = ImageDraw.Draw(image)
    unit = min(width, height)
    band = height // 6
    draw.rectangle((0, 0, width, band), fill=(40, 40, 60))
    said = f'"{message}"' if message is not None else "(no message yet)"
    draw.text((width // 2, band // 2), said, fill=(255, 255, 255), font=font(max(6, band // 3)), anchor="mm")
    order = r.speaker_order if role == "speaker" else r.listener_order
    cols = 3
    rows = (len(order) + cols - 1) // cols
    cell = min(width // cols, (height - band) // rows)
    x0, y0 = (width - cols * cell) // 2, band + (height - band - rows * cell) // 2
    line = max(2, unit // 40)
    for k, index in enumerate(order):
        x, y = x0 + (k % cols) * cell, y0 + (k // cols) * cell
        _shape(draw, r.candidates[index], x + cell // 2, y + cell // 2, cell)
        if role == "speaker" and index == r.target:
            draw.rectangle((x + line, y + line, x + cell - line, y + cell - line), outline=(212, 160, 0), width=line)
        if role == "listener":
            draw.text((x + line * 2, y + line), str(k + 1), fill=(0, 0, 0), font=font(max(6, cell // 5), bold=True))
        if picked is not None and r.listener_order[picked - 1] == index:
            draw.rectangle(
                (x + 3 * line, y + 3 * line, x + cell - 3 * line, y + cell - 3 * line), outline=(90, 90, 90), width=line
            )
    return to_array(image)


MISSIONS = {
    "speaker": (
        "Cooperative referential game: you are the speaker. You see a target (framed) among candidates; the listener sees the "
        "same candidates in another order, without the frame, and picks one after reading your message. You both win if it picks "
        "the target. Write a short description of the target: one word or none for each of {attributes}, in that order, "
        "from: {vocabulary} (for example '{example}')."
    ),
    "listener": (
        "Cooperative referential game: you are the listener. The speaker sees which candidate is the target and describes it "
        "in a few words ({attributes}). You both win if you pick the target. Write the number of the candidate the speaker means."
    ),
}


def mission(role: str, config: Level) -> str:
    words = "; ".join(f"{a}: {', '.join(VALUES[a])}" for a in config.attributes)
    example = config.phrases()[-1]
    return MISSIONS[role].format(attributes=", ".join(config.attributes), vocabulary=words, example=example)


class _ReferentialView(VLMEnv):
    """Base of the single-agent views (see the subclasses)."""

    LEVELS: ClassVar[tuple[Level, ...]] = LEVELS
    REWARDS: ClassVar = {
        # both players are paid 1 when the listener picks the target
        "native": {"success": 1.0, "failure": 0.0, "invalid": 0.0},
        "penalty": {"success": 1.0, "failure": 0.0, "invalid": -0.1},
    }
    REWARD_ALIASES: ClassVar = {"sparse": "native"}
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (256, 256)
    MIN_IMAGE_SIDE: ClassVar[int] = 48
    ROLE: ClassVar[str]

    def _new_episode(self, config: Level) -> None:
        self.round = Round.draw(self.np_random, self.level)
        self.message: str | None = None
        self.picked: int | None = None

    def _render(self) -> NDArray[np.uint8]:
        return round_image(self.image_size, self.round, self.ROLE, self.message, self.picked)

    def _frame_key(self) -> Any:
        return (self._state_key(), self.image_size)  # the picture shows only what our role knows

    def _mission(self) -> str:
        return mission(self.ROLE, self.round.config)

    def _state_key(self) -> str:
        # our information state, never the true round: GiGPO groups steps by the key, and one
        # naming the target or the other role's order would leak it into training
        return information_state(self.round, self.ROLE, self.message, self.picked)

    def _success(self) -> bool:
        return self.picked is not None and self.picked == self.round.target_position()

    def _progress(self) -> float:
        return float(self._success())

    def _optimal_steps(self) -> int | None:
        return 1  # one message (or one pick), and the oracle's always lands

    def _decision(self) -> Decision:
        """One step solves the round; the optimal actions are those that solve it for certain,
        ``values`` each action's expected reward (the chance that the listener ends on the target).
        Features: the candidates, and the words of the shortest description that singles out the
        target (what the built-in speaker says, or the oracle)."""
        table = self.REWARDS[self.reward_variant]
        chances = self._chances()
        success, failure = float(table["success"]), float(table["failure"])
        values = {a: p * success + (1.0 - p) * failure for a, p in chances.items()}
        certain = tuple(a for a, p in chances.items() if p == 1.0)
        # the shortest description: the listener's message, or the speaker's shortest certain phrase
        words = len((self.message or "").split()) if self.ROLE == "listener" else min(len(a.split()) for a in certain)
        features: dict[str, int | str] = {"candidates": len(self.round.candidates), "words_needed": words}
        if self.CHANCE:
            return Decision(certain, None, values=values, reason="chance: the listener draws among the candidates a message fits", features=features)
        return Decision(certain, 1, values=values, features=features)

    def _chances(self) -> dict[str, float]:
        """Each action's chance of ending on the target."""
        raise NotImplementedError

    def _outcome(self, feedback: str) -> StepOutcome:
        won = self._success()
        return StepOutcome(
            "success" if won else "failure", terminated=True, feedback=f"{feedback} {'Success.' if won else 'Failure.'}"
        )


class ReferentialListener(_ReferentialView):
    """Listen in a cooperative referential game: a built-in speaker describes the target; pick it.

    ## Description
    Lewis's signalling game as Lazaridou et al.'s referential game (ICLR 2017): a speaker sees a
    target among candidates (coloured shapes) and describes it; the listener, who sees the same
    candidates in its own order, numbered, and does not know which is the target, picks one. Both
    are paid when it is the target. Here you are the listener and the speaker is built in: it says
    the shortest description that singles out the target among the candidates (one word per
    attribute at most, in the order size, colour, shape; the first such phrase in a fixed order
    among equals). The seed draws the candidates, the target and both orders. The rules are our
    own (no package plays a referential game); the multi-agent version with both roles open is
    :class:`ReferentialAEC`. The oracle picks the one candidate that fits every word, so it always
    wins in one step (``optimal_steps`` 1).

    Decisions: exact. ``steps_to_go`` is 1 until the pick, ``optimal_actions`` the target's number,
    ``values`` each pick's reward; features ``candidates`` and ``words_needed`` (the words of the
    shortest description that singles out the target).

    ## Observation
    - ``image``: the message in a band at the top, the candidates below on a grid of three a row,
      numbered in your order; after the pick your choice is framed.
    - ``text``: the candidates by number and in words, and the speaker's message; in ``image``
      mode only the step's feedback.
    - ``mission``: the game and your role.
    - ``actions``: the candidates' numbers, ``1`` to ``n``.

    ## Actions
    A candidate's number; anything else is invalid (nothing happens).

    ## Rewards
    ``native`` (also ``sparse``): 1 when you pick the target, else 0; ``penalty``: the same with
    -0.1 per invalid action.

    ## Levels
    0: 3 candidates varying in colour and shape; 1: 4 candidates varying in size, colour and
    shape; 2: 6 such candidates.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release.
    """

    ROLE: ClassVar[str] = "listener"

    def _new_episode(self, config: Level) -> None:
        super()._new_episode(config)
        r = self.round
        self.message = shortest_description(config, r.candidates[r.target], list(r.candidates))

    def _actions(self) -> tuple[str, ...]:
        return tuple(str(k + 1) for k in range(len(self.round.candidates)))

    def _apply(self, action: str) -> StepOutcome:
        self.picked = int(action)
        return self._outcome(f"You picked {action}.")

    def _describe(self) -> str:
        return listener_text(self.round, self.message, self.picked)

    def _chances(self) -> dict[str, float]:
        target = str(self.round.target_position())
        return {a: float(a == target) for a in self._actions()}

    def oracle_action(self) -> str:
        fitting = [k + 1 for k, i in enumerate(self.round.listener_order) if fits(self.round.candidates[i], self.message or "")]
        return str(fitting[0])


class ReferentialSpeaker(_ReferentialView):
    """Speak in a cooperative referential game: describe the target so that a built-in listener picks it.

    ## Description
    Lewis's signalling game as Lazaridou et al.'s referential game (ICLR 2017): you see a target
    (framed) among candidates (coloured shapes) and write a message; the listener sees the same
    candidates in its own order, without the frame, reads the message and picks one. Both are paid
    when it is the target. The listener is built in and literal: it picks uniformly, with the
    env's RNG, among the candidates that fit every word of the message (all of them if none
    fits). The message is a phrase of one word or none per attribute, in the order size, colour,
    shape, from the level's vocabulary (listed in the mission and in ``actions``). The seed draws
    the candidates, the target, both orders and the listener's choice. The rules are our own (no
    package plays a referential game); the multi-agent version is :class:`ReferentialAEC`. The
    oracle says the shortest description that singles out the target, so the listener always
    picks it, in one step; a message that fits several candidates leaves the pick to chance, so
    the game is one of chance (``CHANCE``) and ``optimal_steps`` is -1.

    Decisions: exact. ``optimal_actions`` are the phrases that single out the target (the listener
    then picks it for certain), ``values`` each phrase's expected reward (1 over the candidates that
    fit it, when the target does; 1 over all candidates when none fits); ``steps_to_go`` is -1
    (chance); features ``candidates`` and ``words_needed`` (the words of the shortest such phrase).

    ## Observation
    - ``image``: the candidates on a grid of three a row in your order, the target framed in gold;
      after your message, the message in the top band and the listener's choice framed.
    - ``text``: the target and the candidates in words, then your message and the listener's
      choice; in ``image`` mode only the step's feedback.
    - ``mission``: the game, your role and the vocabulary.
    - ``actions``: every phrase of the vocabulary (24 with two attributes, 74 with three).

    ## Actions
    One phrase, e.g. ``red circle`` or ``large square``; words outside the vocabulary, in another
    order or more than one per attribute are invalid (nothing happens).

    ## Rewards
    ``native`` (also ``sparse``): 1 when the listener picks the target, else 0; ``penalty``: the
    same with -0.1 per invalid action.

    ## Levels
    0: 3 candidates varying in colour and shape; 1: 4 candidates varying in size, colour and
    shape; 2: 6 such candidates.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 256x256), ``reward_variant``, ``action_format``, ``action_match``,
    ``render_mode``.

    ## Version History
    - v0: initial release. Issue 38: a game of chance (``CHANCE``; it was not declared), so
      ``optimal_steps`` is -1 (it was 1); the rules and the oracle are unchanged.
    """

    ROLE: ClassVar[str] = "speaker"
    CHANCE: ClassVar[bool] = True  # the listener draws among the candidates an ambiguous message fits

    def _optimal_steps(self) -> int | None:
        return None  # a game of chance (CHANCE): the oracle's message always lands, but a step's outcome may be drawn

    def _actions(self) -> tuple[str, ...]:
        return self.round.config.phrases()

    def _apply(self, action: str) -> StepOutcome:
        self.message = action
        r = self.round
        fitting = [k + 1 for k, i in enumerate(r.listener_order) if fits(r.candidates[i], action)]
        choices = fitting or list(range(1, len(r.candidates) + 1))
        self.picked = choices[int(self.np_random.integers(len(choices)))]
        chosen = name(r.candidates[r.listener_order[self.picked - 1]])
        return self._outcome(f'You said "{action}". The listener picked the {chosen}.')

    def _describe(self) -> str:
        return speaker_text(self.round, self.message, self.picked)

    def _chances(self) -> dict[str, float]:
        """The listener picks uniformly among the candidates that fit the message (all if none does)."""
        r = self.round
        n, full = len(r.candidates), (1 << len(r.candidates)) - 1
        having: dict[str, int] = {}  # each value: the candidates that have it, as bits
        for i, thing in enumerate(r.candidates):
            for _, value in thing:
                having[value] = having.get(value, 0) | 1 << i
        chances = {}
        for phrase, words in _phrase_words(r.config):
            fitting = full
            for word in words:
                fitting &= having.get(word, 0)
            count = fitting.bit_count()
            chances[phrase] = (1.0 / count if fitting >> r.target & 1 else 0.0) if count else 1.0 / n
        return chances

    def oracle_action(self) -> str:
        r = self.round
        return shortest_description(r.config, r.candidates[r.target], list(r.candidates))


class ReferentialAEC(VLMAgentsAEC):
    """The cooperative referential game for two VLM agents behind PettingZoo's AEC API.

    ## Description
    ``speaker`` sees the target (framed) among the candidates and writes a message; then
    ``listener``, who sees the candidates in its own order, numbered, and the message, picks one.
    Both are paid 1 if it is the target, else 0 (see :class:`ReferentialListener`). The seed
    draws the candidates, the target and both orders from the env's RNG.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: its own view of the
    candidates (the speaker's with the frame, the listener's numbered), the message once said,
    the same in words, its role, and its legal moves when it is its turn (the phrases of the
    vocabulary for the speaker, the numbers for the listener).

    ## Action Space
    Free text parsed against the agent's legal moves. An invalid move changes nothing, keeps the
    turn and pays ``penalty``'s invalid reward if chosen; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    ``reward_variant``: ``native``: 1 to both on success, 0 on failure; ``penalty``: the same with
    -0.1 per invalid action.

    ## Arguments
    ``level`` (see ``LEVELS``: 3 candidates in colour and shape; 4, or 6, in size, colour and
    shape); ``obs_mode``, ``image_size`` (a square side), ``reward_variant``, ``action_format``,
    ``action_match`` as in ``VLMEnv``; ``render_mode`` (``rgb_array`` and ``human`` show the view of
    the agent to move, ``ansi`` its text); ``max_cycles``: cycles (one step of each agent, invalid ones included; see
    :meth:`~.aec.VLMAgentsAEC._count_cycle`) after which both are truncated;
    ``render_fps``: the pace of the ``human`` window. ``oracle_action(agent)`` is the exact move:
    the shortest description for the speaker, the one fitting candidate for the listener.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["rgb_array", "ansi", "human"],
        "name": "rl4vlm_referential_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    REWARDS: ClassVar = _ReferentialView.REWARDS
    MIN_IMAGE_SIDE: ClassVar[int] = 48
    reward_variant: str  # always one of REWARDS (the default "native")

    @property
    def title(self) -> str:
        return "Referential game"

    def __init__(
        self,
        *,
        level: int = 0,
        obs_mode: str = "image+text",
        image_size: int = 256,
        reward_variant: str = "native",
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 10,
        render_fps: int = 2,
    ) -> None:
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
            raise ValueError(f"level={level!r} is not valid: give an int in 0..{len(LEVELS) - 1}")
        self.level = level
        super().__init__(
            ["speaker", "listener"],
            obs_mode=obs_mode, image_size=image_size, render_mode=render_mode, max_cycles=max_cycles, render_fps=render_fps,
            action_format=action_format, action_match=action_match, reward_variant=reward_variant, max_actions=128, max_length=32,
        )
        self.reset()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Draw a new round from the env's RNG (``options`` are accepted and unused, as PettingZoo asks)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.round = Round.draw(self.np_random, self.level)
        self.message: str | None = None
        self.picked: int | None = None
        self._new_game()
        self.agent_selection = "speaker"
        self._update_vocabulary()
        self._render_human()

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        if not self._may_move(agent):
            return ()
        if agent == "speaker":
            return self.round.config.phrases()
        return tuple(str(k + 1) for k in range(len(self.round.candidates)))

    def _text(self, agent: str) -> str:
        make = speaker_text if agent == "speaker" else listener_text
        return make(self.round, self.message, self.picked)

    def _image(self, agent: str) -> NDArray[np.uint8]:
        return round_image((self.image_size, self.image_size), self.round, agent, self.message, self.picked)

    def _mission(self, agent: str) -> str:
        return mission(agent, self.round.config)

    def _invalid_reward(self) -> float:
        return self.REWARDS[self.reward_variant]["invalid"]

    def _play(self, agent: str, move: str) -> None:
        if agent == "speaker":
            self.message = move
            self.feedback = {"speaker": f'You said "{move}".', "listener": f'The speaker said "{move}".'}
            self.agent_selection = "listener"
            return
        self.picked = int(move)
        won = self.round.listener_order[self.picked - 1] == self.round.target
        self.feedback = {"speaker": f"The listener picked {self.picked}.", "listener": f"You picked {self.picked}."}
        self.rewards = dict.fromkeys(self.agents, self.REWARDS[self.reward_variant]["success" if won else "failure"])
        self.terminations = dict.fromkeys(self.agents, True)

    def _oracle_move(self, agent: str) -> str:
        """The exact move: the shortest description of the target for the speaker; for the
        listener, the first candidate fitting every word heard."""
        r = self.round
        if agent == "speaker":
            return shortest_description(r.config, r.candidates[r.target], list(r.candidates))
        fitting = [k + 1 for k, i in enumerate(r.listener_order) if fits(r.candidates[i], self.message or "")]
        return str((fitting or [1])[0])

    def __str__(self) -> str:
        return "ReferentialAEC"


def referential_env(**kwargs: Any) -> ReferentialAEC:
    """The cooperative referential game (speaker, then listener) with VLM observations."""
    return ReferentialAEC(**kwargs)
