"""Behaviour of ActionParser: formats, strict vs lenient matching, real model outputs, safety."""

from __future__ import annotations

import pytest

from rl4vlm_gym.parsing import ACTION_FORMATS, MATCH_MODES, ActionParser, ParseResult

NUMBERLINE = ("-", "+")
EZPOINTS = tuple(str(n) for n in range(1, 11)) + ("+", "*", "=")
BLACKJACK = ("stand", "hit")
HOUSEHOLD = ("look", "go to desk 1", "go to desk 10", "take mug from desk 1")
UNICODE_ACTIONS = ("向左走", "🙂", 'say "hi"', "naïve café")

ALL_PARSERS = [
    ActionParser(format=fmt, match=match)  # type: ignore[arg-type]
    for fmt in ("auto", "json", "tags", "plain")
    for match in ("strict", "lenient")
]


def _id(parser: ActionParser) -> str:
    return f"{parser.format}-{parser.match}"


# --------------------------------------------------------------------------------------------
# RL4VLM's real outputs
# --------------------------------------------------------------------------------------------

RL4VLM_NUMBERLINE_OUTPUT = (
    '{\n "current number": "3", \n"target number": "5", \n'
    '"thoughts": "The current number 3 is smaller than the target 5, so I should add one.", \n'
    '"action": "+" \n}'
)


@pytest.mark.parametrize(
    "parser",
    [ActionParser(), ActionParser(format="json", match="strict"), ActionParser(format="json", match="lenient")],
    ids=_id,
)
def test_rl4vlm_numberline_json_output_parses_to_plus(parser: ActionParser) -> None:
    result = parser.parse(RL4VLM_NUMBERLINE_OUTPUT, NUMBERLINE)
    assert result.parsed == "+"
    assert result.valid
    assert result.error is None
    assert result.format_ok is True
    assert result.raw == RL4VLM_NUMBERLINE_OUTPUT


EZPOINTS_BROKEN = '"cards": [5, 7], "current formula": 5+, "thoughts": "5 + 7 = 12, so I add 7", "action": "7"'


def test_rl4vlm_ezpoints_broken_json_parses_leniently_and_reports_bad_format() -> None:
    result = ActionParser().parse(EZPOINTS_BROKEN, EZPOINTS)
    assert result.parsed == "7"
    assert result.format_ok is False  # not a JSON object, but the "action": field was readable


def test_rl4vlm_ezpoints_broken_json_is_rejected_by_strict_json() -> None:
    result = ActionParser(format="json", match="strict").parse(EZPOINTS_BROKEN, EZPOINTS)
    assert result.parsed is None
    assert result.format_ok is False
    assert "not a JSON object" in result.error


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('"cards": [10, 2], "current formula": 10*, "thoughts": "10 + 2", "action": "+"', "+"),
        ('"cards": [J, 2], "current formula": , "thoughts": "J is 10", "action": 10,', "10"),
        ('"cards": [6, 2], "current formula": 6*2, "thoughts": "done", "action": "=" }', "="),
        # unclosed quote at the end of the output
        ('"thoughts": "start with ten", "action": "10', "10"),
    ],
)
def test_broken_json_outputs_from_ezpoints(output: str, expected: str) -> None:
    assert ActionParser().parse(output, EZPOINTS).parsed == expected


# --------------------------------------------------------------------------------------------
# 10 never matches 1 (RL4VLM's substring bug)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        '"action": "10"',
        '{"action": "10"}',
        '{"thoughts": "one card is 10", "action": "10"}',
        '{"action": 10}',
        '"action": 10',
        "<action>10</action>",
        "10",
        "Action: 10",
        "I will play 10.",
    ],
)
def test_ten_parses_to_ten_not_one(output: str) -> None:
    assert ActionParser().parse(output, EZPOINTS).parsed == "10"


@pytest.mark.parametrize("output", ['"action": "1"', '{"action": "1"}', "<action>1</action>", "I will play 1."])
def test_one_parses_to_one(output: str) -> None:
    assert ActionParser().parse(output, EZPOINTS).parsed == "1"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("go to desk 10", "go to desk 10"),
        ("I will go to desk 10 now", "go to desk 10"),
        ("I will go to desk 1 now", "go to desk 1"),
        ("then take mug from desk 1", "take mug from desk 1"),
    ],
)
def test_longer_action_is_not_confused_with_its_prefix(output: str, expected: str) -> None:
    assert ActionParser().parse(output, HOUSEHOLD).parsed == expected


@pytest.mark.parametrize(
    ("output", "actions"),
    [
        ("I choose 11", EZPOINTS),  # "1" is not a token of "11"
        ("21 is too much", EZPOINTS),
        ("a whitewash", BLACKJACK),  # "hit" is not a token of "whitewash"
        ("standard play", BLACKJACK),
    ],
)
def test_word_like_actions_match_whole_tokens_only(output: str, actions: tuple[str, ...]) -> None:
    result = ActionParser().parse(output, actions)
    assert result.parsed is None
    assert "not an admissible action" in result.error


def test_action_nested_inside_a_longer_one_is_not_a_second_mention() -> None:
    result = ActionParser().parse("I look at desk 1 carefully", ("look", "look at desk 1"))
    assert result.parsed == "look at desk 1"


POINTS24 = tuple(str(n) for n in range(1, 11)) + ("+", "-", "*", "/", "(", ")", "=")


@pytest.mark.parametrize("output", ["<think>I am not sure yet</think>", "<think>Let me look at the cards again.</think>"])
def test_think_block_without_action_is_invalid_not_division(output: str) -> None:
    result = ActionParser().parse(output, POINTS24)
    assert result.parsed is None


# --------------------------------------------------------------------------------------------
# Ambiguity
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "actions", "mentioned"),
    [
        ('{"thoughts": "not sure", "action": "+ or -"}', NUMBERLINE, ("'+'", "'-'")),
        ("+ or -", NUMBERLINE, ("'+'", "'-'")),
        ("<action>hit or stand</action>", BLACKJACK, ("'hit'", "'stand'")),
        ("go to desk 1 or go to desk 10", HOUSEHOLD, ("'go to desk 1'", "'go to desk 10'")),
    ],
)
def test_ambiguous_output_is_invalid_and_names_both_actions(
    output: str, actions: tuple[str, ...], mentioned: tuple[str, str]
) -> None:
    result = ActionParser().parse(output, actions)
    assert result.parsed is None
    assert not result.valid
    assert "ambiguous" in result.error
    for action in mentioned:
        assert action in result.error


def test_same_action_mentioned_twice_is_not_ambiguous() -> None:
    assert ActionParser().parse("hit, definitely hit", BLACKJACK).parsed == "hit"


@pytest.mark.parametrize("output", ["+ or -", "hit or stand"])
def test_strict_never_guesses_from_free_text(output: str) -> None:
    result = ActionParser(match="strict").parse(output, NUMBERLINE + BLACKJACK)
    assert result.parsed is None
    assert "not an admissible action" in result.error


# --------------------------------------------------------------------------------------------
# Lenient normalisation, synonyms
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["  HIT  ", '"hit"', "'Hit'", "`hit`", "Hit.", "hit!", "[hit]", "HIT\n"])
def test_lenient_ignores_case_space_quotes_and_final_punctuation(output: str) -> None:
    assert ActionParser().parse(output, BLACKJACK).parsed == "hit"


@pytest.mark.parametrize(("output", "expected"), [("  hit  ", "hit"), ("HIT", None), ('"hit"', None), ("hit.", None)])
def test_strict_only_trims_whitespace(output: str, expected: str | None) -> None:
    assert ActionParser(format="plain", match="strict").parse(output, BLACKJACK).parsed == expected


def test_lone_symbol_action_is_not_stripped_as_punctuation() -> None:
    assert ActionParser().parse("!", ("!", "?")).parsed == "!"
    assert ActionParser().parse('"', ('"', "'")).parsed == '"'


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("stick", "stand"),
        ("Stick", "stand"),
        ('{"thoughts": "19 is enough", "action": "stick"}', "stand"),
        ("<action>STICK</action>", "stand"),
        ("I stick with 19", "stand"),
        ("stand or stick", "stand"),  # both mentions mean the same action
        ("hit", "hit"),
    ],
)
def test_synonyms_map_to_their_action(output: str, expected: str) -> None:
    parser = ActionParser(synonyms={"stick": "stand"})
    assert parser.parse(output, BLACKJACK).parsed == expected


def test_synonym_and_other_action_together_are_ambiguous() -> None:
    result = ActionParser(synonyms={"stick": "stand"}).parse("stick or hit", BLACKJACK)
    assert result.parsed is None
    assert "'stand'" in result.error and "'hit'" in result.error


def test_synonyms_are_ignored_in_strict_mode() -> None:
    result = ActionParser(match="strict", synonyms={"stick": "stand"}).parse("stick", BLACKJACK)
    assert result.parsed is None


def test_synonym_for_an_action_that_is_not_admissible_is_ignored() -> None:
    result = ActionParser(synonyms={"stick": "fold"}).parse("stick", BLACKJACK)
    assert result.parsed is None
    assert "not an admissible action" in result.error


def test_no_synonyms_by_default() -> None:
    assert ActionParser().parse("plus", NUMBERLINE).parsed is None


# --------------------------------------------------------------------------------------------
# Numbered actions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"thoughts": "desk ten", "action": 2}', "go to desk 10"),
        ('{"action": "2"}', "go to desk 10"),
        ("2", "go to desk 10"),
        ("<action>0</action>", "look"),
        ('{"action": 1.0}', "go to desk 1"),
        ('{"action": 3}', "take mug from desk 1"),
        ('{"action": "look"}', "look"),  # names still work
    ],
)
def test_numbered_accepts_an_index(output: str, expected: str) -> None:
    assert ActionParser(numbered=True).parse(output, HOUSEHOLD).parsed == expected


@pytest.mark.parametrize("output", ['{"action": 4}', '{"action": -1}', '{"action": 1.5}', "7"])
def test_numbered_out_of_range_or_fractional_index_is_invalid(output: str) -> None:
    result = ActionParser(numbered=True).parse(output, HOUSEHOLD)
    assert result.parsed is None
    assert "not an admissible action" in result.error


def test_index_is_not_accepted_unless_numbered() -> None:
    result = ActionParser().parse('{"action": 2}', HOUSEHOLD)
    assert result.parsed is None
    assert result.error == (
        "'2' is not an admissible action; choose one of 'look', 'go to desk 1', 'go to desk 10', "
        "'take mug from desk 1'"
    )


def test_numbered_prefers_an_action_named_like_the_number() -> None:
    # If the action list is itself numeric, "2" is the action "2", not the index.
    assert ActionParser(numbered=True).parse("2", ("1", "2", "3")).parsed == "2"


@pytest.mark.parametrize("output", ["²", '{"action": "²"}', "<action>³</action>"])
def test_numbered_with_superscript_digit_is_a_clean_invalid_result(output: str) -> None:
    result = ActionParser(numbered=True).parse(output, HOUSEHOLD)
    assert result.parsed is None
    assert result.error


@pytest.mark.parametrize("parser", [ActionParser(), ActionParser(format="json", match="strict"), ActionParser(numbered=True)], ids=_id)
def test_huge_json_integer_action_is_a_clean_invalid_result(parser: ActionParser) -> None:
    result = parser.parse('{"action": 1' + "0" * 400 + "}", EZPOINTS)
    assert result.parsed is None
    assert "not an admissible action" in result.error


# --------------------------------------------------------------------------------------------
# JSON details
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("parser", [ActionParser(), ActionParser(format="json", match="strict")], ids=_id)
@pytest.mark.parametrize(
    "output",
    [
        '```json\n{"thoughts": "3 > 2", "action": "-"}\n```',
        '```\n{"thoughts": "3 > 2", "action": "-"}\n```',
        'Sure! Here is my answer:\n{"thoughts": "3 > 2", "action": "-"}\nGood luck.',
    ],
)
def test_code_fenced_or_wrapped_json_parses(parser: ActionParser, output: str) -> None:
    result = parser.parse(output, NUMBERLINE)
    assert result.parsed == "-"
    assert result.format_ok is True


def test_json_key_case_is_tolerated_only_leniently() -> None:
    output = '{"thoughts": "x", "Action": "hit"}'
    assert ActionParser(format="json").parse(output, BLACKJACK).parsed == "hit"
    strict = ActionParser(format="json", match="strict").parse(output, BLACKJACK)
    assert strict.parsed is None
    assert 'has no "action" key' in strict.error


@pytest.mark.parametrize(
    ("output", "type_name"),
    [
        ('{"action": ["hit"]}', "a list"),
        ('{"action": {"name": "hit"}}', "an object"),
        ('{"action": true}', "a boolean"),
        ('{"action": null}', "null"),
    ],
)
def test_json_action_of_wrong_type_is_invalid_and_named(output: str, type_name: str) -> None:
    result = ActionParser().parse(output, BLACKJACK)
    assert result.parsed is None
    assert result.error == f"the action field must be a string, got {type_name}"


# --------------------------------------------------------------------------------------------
# Tags (verl-agent)
# --------------------------------------------------------------------------------------------

VERL_AGENT_OUTPUT = "<think>The mug should be on the desk. I will go there first.</think><action>go to desk 1</action>"


@pytest.mark.parametrize(
    "parser",
    [ActionParser(), ActionParser(format="tags", match="strict"), ActionParser(format="tags", match="lenient")],
    ids=_id,
)
def test_verl_agent_tags_output(parser: ActionParser) -> None:
    result = parser.parse(VERL_AGENT_OUTPUT, HOUSEHOLD)
    assert result.parsed == "go to desk 1"
    assert result.format_ok is True


def test_tags_tolerate_case_and_spaces_in_the_tag() -> None:
    output = "<think>x</think>< Action >go to desk 10</ACTION >"
    assert ActionParser(format="tags", match="strict").parse(output, HOUSEHOLD).parsed == "go to desk 10"


@pytest.mark.parametrize(
    ("output", "opening", "closing"),
    [
        ("<action>hit</action><action>stand</action>", 2, 2),
        ("<think>x</think><action>hit", 1, 0),
        ("<think>x</think>hit", 0, 0),
        ("</action>hit<action>", 1, 1),
    ],
)
def test_strict_tags_require_exactly_one_block(output: str, opening: int, closing: int) -> None:
    result = ActionParser(format="tags", match="strict").parse(output, BLACKJACK)
    assert result.parsed is None
    assert result.format_ok is False
    assert "exactly one <action>...</action> block" in result.error
    assert f"found {opening} opening and {closing} closing tags" in result.error


@pytest.mark.parametrize(
    ("output", "expected", "format_ok"),
    [
        ("<action>hit</action> on second thought <action>stand</action>", "stand", True),
        ("<think>maybe <action>stand</action>?</think><action>hit</action>", "hit", True),
        ("<think>I need a card</think><action>hit", "hit", False),
        ("<action>hit</action><action>stand", "stand", False),
    ],
)
def test_lenient_tags_take_the_last_block(output: str, expected: str, format_ok: bool) -> None:
    result = ActionParser(format="tags").parse(output, BLACKJACK)
    assert result.parsed == expected
    assert result.format_ok is format_ok


def test_lenient_tags_without_a_block_is_invalid() -> None:
    result = ActionParser(format="tags").parse("hit", BLACKJACK)
    assert result.parsed is None
    assert result.error == "no <action>...</action> block found in the output"


# --------------------------------------------------------------------------------------------
# Plain and auto
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Action: hit", "hit"),
        ("**Action:** stand", "stand"),
        ("Thoughts: stand would lose, hit is better.\nAction: hit", "hit"),
        ("action = stand", "stand"),
        ("Action = stand\nAction: hit", "hit"),  # the last line, whichever separator each uses
        ("Action: hit\nAction = stand", "stand"),
    ],
)
def test_plain_lenient_reads_the_last_action_line(output: str, expected: str) -> None:
    assert ActionParser(format="plain").parse(output, BLACKJACK).parsed == expected


def test_plain_strict_needs_the_action_itself() -> None:
    result = ActionParser(format="plain", match="strict").parse("Action: hit", BLACKJACK)
    assert result.parsed is None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"thoughts": "a", "action": "stand"}', "stand"),  # json
        ("<think>a</think><action>stand</action>", "stand"),  # tags
        ("stand", "stand"),  # plain
        # tags win over json when both are present
        ('{"action": "hit"} <action>stand</action>', "stand"),
    ],
)
def test_auto_detects_the_format(output: str, expected: str) -> None:
    assert ActionParser().parse(output, BLACKJACK).parsed == expected


def test_fixed_format_does_not_read_other_formats() -> None:
    assert ActionParser(format="json").parse("<action>hit</action>", BLACKJACK).parsed is None
    assert ActionParser(format="tags").parse('{"action": "hit"}', BLACKJACK).parsed is None


# --------------------------------------------------------------------------------------------
# Non-str input, empty input, error messages
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("parser", ALL_PARSERS, ids=_id)
@pytest.mark.parametrize(
    ("value", "type_name"),
    [(None, "NoneType"), (3, "int"), (2.5, "float"), (["hit"], "list"), ({"action": "hit"}, "dict")],
)
def test_non_str_input_is_a_clean_invalid_result(parser: ActionParser, value: object, type_name: str) -> None:
    result = parser.parse(value, BLACKJACK)
    assert isinstance(result, ParseResult)
    assert result.parsed is None
    assert result.valid is False
    assert result.format_ok is False
    assert result.raw == repr(value)
    assert result.error == f"the action must be a str, got {type_name}"


@pytest.mark.parametrize("parser", ALL_PARSERS, ids=_id)
def test_undecodable_bytes_are_a_clean_invalid_result(parser: ActionParser) -> None:
    result = parser.parse(b"\xff\xfe\x00\x81", BLACKJACK)
    assert result.parsed is None
    assert isinstance(result.raw, str)
    assert isinstance(result.error, str) and result.error


def test_utf8_bytes_are_decoded() -> None:
    result = ActionParser().parse(b"<action>hit</action>", BLACKJACK)
    assert result.parsed == "hit"
    assert result.raw == "<action>hit</action>"


@pytest.mark.parametrize("parser", ALL_PARSERS, ids=_id)
@pytest.mark.parametrize("output", ["", "   ", "\n\t \n"])
def test_empty_output_is_invalid(parser: ActionParser, output: str) -> None:
    result = parser.parse(output, BLACKJACK)
    assert result.parsed is None
    assert result.error == "the output is empty"
    assert result.raw == output


@pytest.mark.parametrize(
    ("parser", "output", "actions", "expected"),
    [
        (ActionParser(), "I give up", NUMBERLINE, "'I give up' is not an admissible action; choose one of '-', '+'"),
        (ActionParser(), "hit", (), "'hit' is not an admissible action; no action is admissible now"),
        (
            ActionParser(format="json", match="strict"),
            "hit",
            BLACKJACK,
            'the output is not a JSON object; write {"thoughts": "...", "action": "..."}',
        ),
        (
            ActionParser(format="json", match="strict"),
            '{"thoughts": "hit"}',
            BLACKJACK,
            'the output has no "action" key; write {"thoughts": "...", "action": "..."}',
        ),
        (ActionParser(format="json"), "just hit", BLACKJACK, 'no "action": field found in the output'),
    ],
)
def test_error_messages_name_the_problem(
    parser: ActionParser, output: str, actions: tuple[str, ...], expected: str
) -> None:
    result = parser.parse(output, actions)
    assert result.parsed is None
    assert result.error == expected


def test_error_for_a_long_value_is_short_and_says_why() -> None:
    output = "z" * 5000
    result = ActionParser().parse(output, BLACKJACK)
    assert result.parsed is None
    assert "5000 characters" in result.error
    assert "too long" in result.error
    assert len(result.error) < 300  # the raw text is quoted truncated, not in full
    assert result.raw == output


def test_error_lists_at_most_twenty_actions() -> None:
    actions = tuple(f"a{i}" for i in range(25))
    result = ActionParser(match="strict").parse("zzz", actions)
    assert "'a19'" in result.error
    assert "'a20'" not in result.error
    assert "5 more" in result.error


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"format": "xml"}, "action_format='xml'"), ({"match": "fuzzy"}, "action_match='fuzzy'")],
)
def test_unknown_format_or_match_raises_with_the_choices(kwargs: dict[str, str], fragment: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        ActionParser(**kwargs)  # type: ignore[arg-type]
    message = str(excinfo.value)
    assert fragment in message
    choices = ACTION_FORMATS if "format" in kwargs else MATCH_MODES
    for choice in choices:
        assert repr(choice) in message


# --------------------------------------------------------------------------------------------
# format_action round trip
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("json", '{"thoughts": "closer", "action": "+"}'),
        ("tags", "<think>closer</think><action>+</action>"),
        ("plain", "+"),
        ("auto", "+"),
    ],
)
def test_format_action_writes_the_format(fmt: str, expected: str) -> None:
    assert ActionParser(format=fmt).format_action("+", thoughts="closer") == expected  # type: ignore[arg-type]


def test_format_action_json_keeps_unicode_readable() -> None:
    assert ActionParser(format="json").format_action("向左走") == '{"thoughts": "", "action": "向左走"}'


@pytest.mark.parametrize("parser", ALL_PARSERS, ids=_id)
@pytest.mark.parametrize("actions", [NUMBERLINE, EZPOINTS, BLACKJACK, HOUSEHOLD, UNICODE_ACTIONS], ids=str)
@pytest.mark.parametrize("thoughts", ["", "maybe stand, maybe hit, maybe + or -"])
def test_format_action_round_trips(parser: ActionParser, actions: tuple[str, ...], thoughts: str) -> None:
    for action in actions:
        text = parser.format_action(action, thoughts=thoughts)
        result = parser.parse(text, actions)
        assert result.parsed == action, (text, result)
        assert result.format_ok is True
        # and an "auto" parser reads every format
        assert ActionParser(match=parser.match).parse(text, actions).parsed == action


# --------------------------------------------------------------------------------------------
# Safety: huge and adversarial inputs get a clean invalid result (their parse times are measured
# by benchmarks/parsing_hostile.py)
# --------------------------------------------------------------------------------------------

HOSTILE = {
    "1MB-letters": "a" * 1_000_000,
    "1MB-sentence": "go to desk 1 " * 80_000,
    "100k-nested-brackets": "[" * 100_000,
    "100k-nested-braces": "{" * 100_000 + "}" * 100_000,
    "nested-action-value": '{"action": ' + "[" * 100_000,
    "100k-open-tags": "<action>" * 100_000,
    "100k-close-tags": "</action>" * 100_000,
    "key-then-200k-spaces": '"action":' + " " * 200_000,
    "key-quote-then-200k-spaces": '"action": "' + " " * 200_000,
    "plain-key-then-200k-spaces": "action" + " " * 200_000,
    "angle-then-200k-spaces": "<" + " " * 200_000,
    "200k-stars": "*" * 200_000,
    "100k-keys": '"action": ' * 100_000,
    "200k-quotes": '"' * 200_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_parse_cleanly(name: str) -> None:
    text = HOSTILE[name]
    parsers = ALL_PARSERS + [ActionParser(numbered=True, synonyms={"stick": "stand"})]
    for parser in parsers:
        result = parser.parse(text, HOUSEHOLD + BLACKJACK + NUMBERLINE)
        assert isinstance(result, ParseResult)
        assert result.parsed is None
        assert isinstance(result.error, str) and len(result.error) < 500


def test_one_megabyte_of_thoughts_still_parses_the_action() -> None:
    text = '{"thoughts": "' + "x" * 1_000_000 + '", "action": "hit"}'
    result = ActionParser(format="json", match="strict").parse(text, BLACKJACK)
    assert result.parsed == "hit"


def test_action_after_200k_newlines_is_found() -> None:
    text = "\n" * 200_000 + "Action: hit"
    result = ActionParser(format="plain").parse(text, BLACKJACK)
    assert result.parsed == "hit"


# --------------------------------------------------------------------------------------------
# ParseResult
# --------------------------------------------------------------------------------------------


def test_as_info_has_the_contract_keys() -> None:
    valid = ActionParser().parse("<action>hit</action>", BLACKJACK)
    assert valid.as_info() == {"raw": "<action>hit</action>", "parsed": "hit", "valid": True, "error": None}
    invalid = ActionParser().parse("fold", BLACKJACK)
    assert invalid.as_info() == {
        "raw": "fold",
        "parsed": None,
        "valid": False,
        "error": "'fold' is not an admissible action; choose one of 'stand', 'hit'",
    }


def test_rejected_keeps_raw_and_format_and_sets_the_error() -> None:
    result = ActionParser().parse('{"action": "7"}', EZPOINTS).rejected("no unused card is worth 7")
    assert result == ParseResult('{"action": "7"}', None, "no unused card is worth 7", True)
    assert result.as_info() == {
        "raw": '{"action": "7"}',
        "parsed": None,
        "valid": False,
        "error": "no unused card is worth 7",
    }


def test_parse_result_is_frozen() -> None:
    result = ActionParser().parse("hit", BLACKJACK)
    with pytest.raises(AttributeError):
        result.parsed = "stand"  # type: ignore[misc]


def test_template_actions_take_any_argument() -> None:
    from rl4vlm_gym.parsing import fills_template

    actions = ("search[...]", "click[buy now]")
    lenient, strict = ActionParser(), ActionParser(match="strict")
    assert lenient.parse("Search [Red Shoes]", actions).parsed == "search[Red Shoes]"
    assert lenient.parse('{"action": "search[a [b] c]"}', actions).parsed == "search[a [b] c]"
    assert strict.parse("search[red shoes]", actions).parsed == "search[red shoes]"
    assert strict.parse("Search[red shoes]", actions).parsed is None
    for empty in ("search[]", "search[  ]", "search", "search[x"):
        assert lenient.parse(empty, actions).parsed is None, empty
    assert lenient.parse("search[x]", ("click[buy now]",)).parsed is None  # no template, no search
    assert fills_template("search[x]", actions) and not fills_template("click[x]", actions)


# --------------------------------------------------------------------------------------------
# Thresholds: at, just below and just above each limit of the parser
# --------------------------------------------------------------------------------------------


def _padded(action: str, length: int) -> str:
    """``action`` mentioned once in a lenient value of exactly ``length`` characters."""
    text = f"I choose {action} now"
    pad = length - len(text)
    return text + " z" * (pad // 2) + "z" * (pad % 2)  # no trailing space: the parser strips it


@pytest.mark.parametrize(("length", "found"), [(1023, True), (1024, True), (1025, False)])
def test_lenient_token_search_stops_above_1024_characters(length: int, found: bool) -> None:
    text = _padded("hit", length)
    assert len(text) == length
    result = ActionParser(format="plain").parse(text, BLACKJACK)
    if found:
        assert result.parsed == "hit", f"a {length}-character value is within the 1024 limit: {result.error}"
    else:
        assert result.parsed is None and "limit 1024" in result.error and f"{length} characters" in result.error


@pytest.mark.parametrize(("length", "shown_whole"), [(59, True), (60, True), (61, False)])
def test_error_messages_quote_values_up_to_60_characters(length: int, shown_whole: bool) -> None:
    value = "q" * length
    error = ActionParser(format="plain", match="strict").parse(value, BLACKJACK).error
    if shown_whole:
        assert repr(value) in error and "chars)" not in error
    else:
        assert repr(value) not in error and f"{'q' * 60}...({length} chars)" in error


@pytest.mark.parametrize(("count", "listed_whole"), [(19, True), (20, True), (21, False)])
def test_error_messages_list_up_to_20_admissible_actions(count: int, listed_whole: bool) -> None:
    actions = tuple(f"go to shelf {i}" for i in range(count))
    error = ActionParser(format="plain", match="strict").parse("fly", actions).error
    assert all(repr(a) in error for a in actions[:20])
    if listed_whole:
        assert "more)" not in error
    else:
        assert repr(actions[20]) not in error and error.endswith("... (1 more)")


@pytest.mark.parametrize(
    ("output", "expected"),
    [('{"action": 3}', "take mug from desk 1"), ('{"action": "3"}', "take mug from desk 1"), ("3", "take mug from desk 1"),
     ('{"action": 4}', None), ('{"action": "4"}', None), ("4", None),
     ('{"action": 0}', "look"), ('{"action": -1}', None), ("-1", None)],
)  # fmt: skip
def test_numbered_index_is_admissible_from_0_to_one_below_the_count(output: str, expected: str | None) -> None:
    assert ActionParser(numbered=True).parse(output, HOUSEHOLD).parsed == expected


@pytest.mark.parametrize(("output", "expected"), [("search[a]", "search[a]"), ("search[ ]", None), ("search[]", None)])
def test_template_needs_a_non_empty_argument(output: str, expected: str | None) -> None:
    for match in MATCH_MODES:
        assert ActionParser(format="plain", match=match).parse(output, ("search[...]", "click[back]")).parsed == expected  # type: ignore[arg-type]
