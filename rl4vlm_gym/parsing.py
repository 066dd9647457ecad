"""Turn whatever a model wrote into one admissible action, or a clear reason why not.

Formats (what the model is asked to write):

- ``json``: RL4VLM / VL-DAC style ``{"thoughts": "...", "action": "+"}``;
- ``tags``: verl-agent style ``<think>...</think><action>...</action>``;
- ``plain``: the action itself (``"move forward"``);
- ``auto``: ``tags`` if an ``<action>`` tag is present, ``json`` if an ``"action":`` key is,
  else ``plain``;
- BALROG's agents (BALROG af7d1f1, ``balrog/agents/*.py``: ``_extract_final_answer``), for its
  protocol. The output is first stripped, as BALROG's clients strip every completion
  (``balrog/client.py``). ``balrog-naive`` (and ``balrog-few-shot``, which parses as it) deletes
  every character that is not a letter, white space or a colon; ``balrog-cot`` does the same and
  takes what follows the last ``ACTION:``, stripped; ``balrog-robust-naive`` takes the text between
  the first ``<|ACTION|>`` and the next ``<|END|>``, stripped, else the whole output;
  ``balrog-robust-cot`` the same, else BALROG's stand-in "Failed to obtain a valid action from the
  reasoning." (invalid, unless an env takes any command). With ``strict`` matching the value must
  then equal an action exactly, case and white space included (BALROG's
  ``EnvWrapper.check_action_validity``): ``"go forward "`` is not ``"go forward"``.

Matching (how the extracted value is compared with the admissible actions):

- ``strict``: the value, trimmed, must equal an admissible action exactly, and the format must
  be well formed (valid JSON object, exactly one ``<action>`` block);
- ``lenient``: tolerant extraction (broken JSON, unclosed tags, ``Action: x`` lines), then
  case-, space- and quote-insensitive equality, declared synonyms, and finally a unique admissible
  action occurring as a whole token in the value (RL4VLM's substring rule, minus its bugs: ``10``
  never matches ``1``, and two different matches are ambiguous, never a coin flip).

Templates: an admissible action ending in ``[...]`` (WebShop's ``search[...]``) stands for every
action that fills the brackets, ``search[red running shoes]``; in lenient mode the name is matched
case-insensitively and spaces before the bracket are allowed.

Unparseable output is never replaced by a random action: the result has ``parsed=None`` and an
``error`` that says what was wrong. Every scan is linear in the input length, so a 1 MB or
adversarial string is safe.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

__all__ = [
    "ACTION_FORMATS",
    "BALROG_NO_ACTION",
    "MATCH_MODES",
    "TEMPLATE_SUFFIX",
    "ActionParser",
    "ParseResult",
    "balrog_extract",
    "balrog_reasoning",
    "fills_template",
]

TEMPLATE_SUFFIX = "[...]"

ActionFormat = Literal[
    "auto", "json", "tags", "plain", "balrog-naive", "balrog-cot", "balrog-robust-naive", "balrog-robust-cot", "balrog-few-shot"
]
MatchMode = Literal["strict", "lenient"]
ACTION_FORMATS: tuple[str, ...] = get_args(ActionFormat)
MATCH_MODES: tuple[str, ...] = get_args(MatchMode)

_QUOTES = "\"'`“”‘’"
# The parser wants the LAST key or tag: the first match of its mirror image in the reversed text, found
# in one scan that stops there (listing every match of "<action>" * 100_000 costs 100,000 objects).
# Matches of these patterns cannot overlap, so the last match and the first mirrored one are one span.
# A JSON key: ["']?\baction\b["']?\s*:  (the leading quote changes no match's end, so it is left out).
_JSON_KEY_BACKWARDS = re.compile(r""":\s*["']?\bnoitca\b""", re.IGNORECASE)
# An "Action:" line: ^[ \t]*(?:\*+[ \t]*)?action[ \t]*(?:\*+[ \t]*)?[:=]  (multiline: $ is a line's start),
# one pattern a separator: re scans fast for a pattern's first character, not for a class like [:=].
# Unambiguous quantifiers only: nested optional whitespace runs would backtrack quadratically.
_PLAIN_KEYS_BACKWARDS = tuple(re.compile(rf"{sep}(?:[ \t]*\*+)?[ \t]*noitca(?:[ \t]*\*+)?[ \t]*$", re.I | re.M) for sep in ":=")
_OPEN_TAG = re.compile(r"<\s*action\s*>", re.IGNORECASE)
_OPEN_TAG_BACKWARDS = re.compile(r">\s*noitca\s*<", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"<\s*/\s*action\s*>", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_WORD = r"(?<!\w){}(?!\w)"
_SYMBOL = r"(?<![^\s\"'`]){}(?![^\s\"'`.,;:!?])"
_BALROG_KEEP = re.compile(r"[^a-zA-Z\s:]")  # BALROG's filter: what it deletes
_BALROG_OPEN, _BALROG_CLOSE = "<|ACTION|>", "<|END|>"
BALROG_NO_ACTION = "Failed to obtain a valid action from the reasoning."
"""What BALROG's robust CoT agent plays when its reply has no ``<|ACTION|>...<|END|>`` block."""
_MAX_FUZZY_CHARS = 1024  # lenient token search is for short action fields, not whole essays


@dataclass(frozen=True)
class ParseResult:
    """The outcome of parsing one model output.

    Attributes:
        raw: the text that was parsed (non-``str`` input is shown as its ``repr``).
        parsed: the admissible action chosen, or ``None``.
        error: why nothing was chosen (``None`` when ``parsed`` is set).
        format_ok: whether the requested output format was well formed.
    """

    raw: str
    parsed: str | None
    error: str | None = None
    format_ok: bool = True

    @property
    def valid(self) -> bool:
        """True when an admissible action was chosen."""
        return self.parsed is not None

    def rejected(self, error: str) -> ParseResult:
        """The same parse, marked invalid by the env's rules (e.g. a card not in the hand)."""
        return ParseResult(self.raw, None, error, self.format_ok)

    def as_info(self) -> dict[str, Any]:
        """The ``info["action"]`` dict of the environment contract."""
        return {"raw": self.raw, "parsed": self.parsed, "valid": self.valid, "error": self.error}


@dataclass(frozen=True)
class ActionParser:
    """Parses model output into admissible actions.

    Args:
        format: the output format the model was asked for (see module docstring).
        match: ``strict`` or ``lenient`` matching.
        numbered: also accept the index of an action in the admissible list (VL-DAC's
            ``{"action": 2}``). Only for envs whose actions are not themselves numbers.
        synonyms: lower-case aliases accepted in lenient mode, e.g. ``{"stick": "stand"}``.

    Example:
        >>> parser = ActionParser()
        >>> parser.parse('{"thoughts": "closer", "action": "+"}', ("-", "+")).parsed
        '+'
        >>> parser.parse("I give up", ("-", "+")).error
        "'I give up' is not an admissible action; choose one of '-', '+'"
    """

    format: ActionFormat = "auto"
    match: MatchMode = "lenient"
    numbered: bool = False
    synonyms: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.format not in ACTION_FORMATS:
            raise ValueError(f"action_format={self.format!r} is unknown; choose one of {ACTION_FORMATS}")
        if self.match not in MATCH_MODES:
            raise ValueError(f"action_match={self.match!r} is unknown; choose one of {MATCH_MODES}")

    def parse(self, output: object, actions: Sequence[str]) -> ParseResult:
        """Parse ``output`` against the admissible ``actions``. Never raises."""
        if isinstance(output, bytes):
            output = output.decode("utf-8", errors="replace")
        if not isinstance(output, str):
            return ParseResult(repr(output), None, f"the action must be a str, got {type(output).__name__}", False)
        if not output.strip() and not self.format.startswith("balrog-"):  # BALROG's agents read "" too
            return ParseResult(output, None, "the output is empty", False)
        extracted = self._extract(output)
        if isinstance(extracted, _Failure):
            return ParseResult(output, None, extracted.error, False)
        value, format_ok = extracted
        action, error = self._match(value, actions)
        if action is None and not format_ok and self.format == "balrog-robust-cot":
            error = f"no {_BALROG_OPEN}...{_BALROG_CLOSE} block in the output, so BALROG's agent answers {BALROG_NO_ACTION!r}: {error}"
        return ParseResult(output, action, error, format_ok)

    def format_action(self, action: str, thoughts: str = "") -> str:
        """Write ``action`` the way this parser's format expects (``auto`` writes it plain)."""
        if self.format == "json":
            return json.dumps({"thoughts": thoughts, "action": action}, ensure_ascii=False)
        if self.format == "tags":
            return f"<think>{thoughts}</think><action>{action}</action>"
        if self.format == "balrog-cot":
            return f"{thoughts}\nACTION: {action}".lstrip()
        if self.format.startswith("balrog-robust"):
            return f"{thoughts}\n{_BALROG_OPEN}{action}{_BALROG_CLOSE}".lstrip()
        return action

    # -- extraction -------------------------------------------------------------------------------

    def _extract(self, text: str) -> tuple[Any, bool] | _Failure:
        fmt = self.format
        if fmt.startswith("balrog-"):
            return _extract_balrog(fmt, text)
        backwards = text[::-1]  # where the last key or tag is the first (see _JSON_KEY_BACKWARDS)
        if fmt == "auto":
            fmt = "tags" if _OPEN_TAG.search(text) else "json" if _JSON_KEY_BACKWARDS.search(backwards) else "plain"
        if fmt == "json":
            return self._extract_json(text, backwards)
        if fmt == "tags":
            return self._extract_tags(text, backwards)
        return self._extract_plain(text, backwards)

    def _extract_json(self, text: str, backwards: str) -> tuple[Any, bool] | _Failure:
        obj = _load_json_object(text)
        if isinstance(obj, dict):
            keys = {k.lower(): k for k in obj if isinstance(k, str)}
            key = "action" if "action" in obj else keys.get("action") if self.match == "lenient" else None
            if key is not None:
                return obj[key], True
        if self.match == "strict":
            what = "is not a JSON object" if obj is None else 'has no "action" key'
            return _Failure(f'the output {what}; write {{"thoughts": "...", "action": "..."}}')
        value = _value_after_last_key(text, backwards)
        if value is None:
            return _Failure('no "action": field found in the output')
        return value, False

    def _extract_tags(self, text: str, backwards: str) -> tuple[Any, bool] | _Failure:
        if self.match == "strict":
            opens = [m.end() for m in _OPEN_TAG.finditer(text)]
            closes = [m.start() for m in _CLOSE_TAG.finditer(text)]
            if len(opens) != 1 or len(closes) != 1 or closes[0] < opens[0]:
                return _Failure(
                    f"expected exactly one <action>...</action> block, found {len(opens)} opening "
                    f"and {len(closes)} closing tags"
                )
            return text[opens[0] : closes[0]], True
        last_open = _OPEN_TAG_BACKWARDS.search(backwards)
        if last_open is None:
            return _Failure("no <action>...</action> block found in the output")
        start = len(text) - last_open.start()
        close = _CLOSE_TAG.search(text, start)  # the block ends at the first closing tag after it, or never
        return (text[start:], False) if close is None else (text[start : close.start()], True)

    def _extract_plain(self, text: str, backwards: str) -> tuple[Any, bool] | _Failure:
        if self.match == "lenient":
            keys = [key.start() for pattern in _PLAIN_KEYS_BACKWARDS if (key := pattern.search(backwards))]
            if keys:  # the last "Action:" line
                line = text[len(text) - min(keys) :].split("\n", 1)[0]
                return line, True
        return text, True

    # -- matching ---------------------------------------------------------------------------------

    def _match(self, value: Any, actions: Sequence[str]) -> tuple[str | None, str | None]:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None, f"the action field must be a string, got {_json_type(value)}"
        if self.format.startswith("balrog-") and self.match == "strict" and isinstance(value, str):
            # BALROG's check_action_validity: the agent's text itself must be an action, spaces included.
            if value in actions:
                return value, None
            filled = _fill_template(value, actions, False)
            return (filled, None) if filled is not None else (None, _not_admissible(value, actions))
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int):
            if self.numbered and 0 <= value < len(actions):
                return actions[value], None
            value = str(value)
        elif isinstance(value, float):
            value = str(value)
        text = value.strip()
        if text in actions:
            return text, None
        # isascii: str.isdigit also accepts "²", which int() rejects.
        if self.numbered and text.isascii() and text.isdigit() and int(text) < len(actions):
            return actions[int(text)], None
        filled = _fill_template(text, actions, self.match == "lenient")
        if filled is not None:
            return filled, None
        if self.match == "strict" or not actions:
            return None, _not_admissible(value, actions)
        return _lenient_match(text, tuple(actions), tuple(sorted(self.synonyms.items())))


def balrog_extract(agent: str, text: str) -> str:
    """The text BALROG's ``agent`` (a ``balrog-*`` format) takes from the completion ``text``, as its
    evaluator then checks it and its history keeps it (robust CoT without tags:
    :data:`BALROG_NO_ACTION`)."""
    return _extract_balrog(agent, text)[0]


def balrog_reasoning(agent: str, text: str) -> str | None:
    """What BALROG's ``agent`` keeps of the completion ``text`` as its plan (``update_reasoning``):
    the stripped completion for the CoT agent, nothing for the others (the robust CoT agent never
    calls it)."""
    return text.strip() if agent == "balrog-cot" else None


def _extract_balrog(fmt: str, text: str) -> tuple[str, bool]:
    """BALROG's agents' ``_extract_final_answer`` on the completion as its client returns it (stripped)."""
    text = text.strip()
    if fmt.startswith("balrog-robust"):
        start = text.find(_BALROG_OPEN)
        end = text.find(_BALROG_CLOSE, start + len(_BALROG_OPEN)) if start >= 0 else -1
        if end >= 0:
            return text[start + len(_BALROG_OPEN) : end].strip(), True
        return (BALROG_NO_ACTION if fmt == "balrog-robust-cot" else text), False
    kept = _BALROG_KEEP.sub("", text)
    if fmt == "balrog-cot":
        return kept.rsplit("ACTION:", 1)[-1].strip(), "ACTION:" in kept
    return kept, True


def _fill_template(text: str, actions: Sequence[str], lenient: bool) -> str | None:
    """``search[red shoes]`` if ``search[...]`` is admissible (``None`` if no template fits)."""
    if not text.endswith("]"):
        return None
    for action in actions:
        if not action.endswith(TEMPLATE_SUFFIX):
            continue
        name = action[: -len(TEMPLATE_SUFFIX)]
        head, bracket, rest = text.partition("[")
        if not bracket:
            return None
        if head == name or (lenient and head.strip().casefold() == name.casefold()):
            argument = rest[:-1].strip()
            if argument:
                return f"{name}[{argument}]"
    return None


def fills_template(action: str, actions: Sequence[str]) -> bool:
    """Whether ``action`` is admissible by filling one of the ``[...]`` templates in ``actions``."""
    return _fill_template(action, actions, lenient=False) == action


@dataclass(frozen=True)
class _Failure:
    error: str


def _lenient_match(
    text: str, actions: tuple[str, ...], synonyms: tuple[tuple[str, str], ...]
) -> tuple[str | None, str | None]:
    if len(text) > _MAX_FUZZY_CHARS:
        return None, (
            f"{_quote(text)} is not an admissible action, and at {len(text)} characters it is too "
            f"long to search for one (limit {_MAX_FUZZY_CHARS})"
        )
    table = _normalized_table(actions, synonyms)
    key = _normalize(text)
    if key in table:
        return table[key], None
    found = _token_matches(key, actions, synonyms)
    if len(found) == 1:
        return found[0], None
    if found:
        return None, f"{_quote(text)} is ambiguous: it mentions {_choices(found)}"
    return None, _not_admissible(text, actions)


def _normalize(text: str) -> str:
    text = _SPACES.sub(" ", text).strip().casefold()
    # Strip wrapping quotes and trailing sentence punctuation, but never a lone symbol action.
    while len(text) > 1 and text[0] in _QUOTES + "[(" and text[-1] in _QUOTES + "])":
        text = text[1:-1].strip()
    while len(text) > 1 and text[-1] in ".!;,":
        text = text[:-1].rstrip()
    return text


@functools.lru_cache(maxsize=256)
def _normalized_table(
    actions: tuple[str, ...], synonyms: tuple[tuple[str, str], ...]
) -> dict[str, str]:
    table = {_normalize(a): a for a in actions}
    table.update((_normalize(alias), a) for alias, a in synonyms if a in actions)
    return table


@functools.lru_cache(maxsize=256)
def _token_patterns(
    actions: tuple[str, ...], synonyms: tuple[tuple[str, str], ...]
) -> tuple[tuple[re.Pattern[str], str], ...]:
    names = [(_normalize(a), a) for a in actions]
    names += [(_normalize(alias), a) for alias, a in synonyms if a in actions]
    # Word-like names need word boundaries ("10" must not match "1"). Symbols must stand alone,
    # between spaces, quotes or sentence punctuation: the "/" of "</think>" or "N/A" is no action.
    patterns = []
    for name, action in names:
        if name:
            template = _WORD if name[:1].isalnum() or name[-1:].isalnum() else _SYMBOL
            patterns.append((re.compile(template.format(re.escape(name))), action))
    return tuple(patterns)


def _token_matches(
    key: str, actions: tuple[str, ...], synonyms: tuple[tuple[str, str], ...]
) -> list[str]:
    spans: list[tuple[int, int, str]] = []
    for pattern, action in _token_patterns(actions, synonyms):
        spans.extend((m.start(), m.end(), action) for m in pattern.finditer(key))
    # A match inside a longer match ("look" inside "look at desk 1") is not a separate mention.
    spans.sort(key=lambda span: (span[0], -span[1]))
    outer: list[tuple[int, int, str]] = []
    reach = -1
    for start, end, action in spans:
        if end > reach or (start, end) == outer[-1][:2]:
            outer.append((start, end, action))
            reach = max(reach, end)
    return list(dict.fromkeys(action for _, _, action in outer))


def _load_json_object(text: str) -> Any:
    """The JSON value of ``text``, or of its outermost ``{...}`` (e.g. inside a code fence)."""
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        if candidate:
            try:
                return json.loads(candidate)
            except (ValueError, RecursionError):
                continue
    return None


def _value_after_last_key(text: str, backwards: str | None = None) -> str | None:
    """Lenient JSON: the value written after the last ``"action":`` key, quoted or not
    (``backwards``: ``text`` reversed, if the caller has it)."""
    last = _JSON_KEY_BACKWARDS.search(text[::-1] if backwards is None else backwards)
    if last is None:
        return None
    rest = text[len(text) - last.start() :].lstrip()
    if rest and rest[0] in "\"'":
        end = rest.find(rest[0], 1)
        if end < 0:
            return rest[1:].split("\n", 1)[0]
        after = rest[end + 1 :].split("\n", 1)[0].strip()
        if not after or after[0] in ",}":
            return rest[1:end]
        return rest.split("\n", 1)[0]  # '"+" or "-"': the whole line, for the ambiguity check
    cut = min((i for i in (rest.find(","), rest.find("}"), rest.find("\n")) if i >= 0), default=len(rest))
    return rest[:cut]


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _quote(text: str, limit: int = 60) -> str:
    text = text if len(text) <= limit else f"{text[:limit]}...({len(text)} chars)"
    return repr(text)


def _choices(actions: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(repr(a) for a in actions[:limit])
    return shown if len(actions) <= limit else f"{shown}, ... ({len(actions) - limit} more)"


def _not_admissible(value: str, actions: Sequence[str]) -> str:
    if not actions:
        return f"{_quote(value)} is not an admissible action; no action is admissible now"
    return f"{_quote(value)} is not an admissible action; choose one of {_choices(actions)}"
