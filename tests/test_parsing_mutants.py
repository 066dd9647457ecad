"""Tests that kill the mutants of ``rl4vlm_gym.parsing`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors)."""

from __future__ import annotations

import pytest

from rl4vlm_gym.parsing import ParseResult, _normalize, _token_matches, _value_after_last_key, fills_template


def test_fills_template_is_strict_about_the_template_name():
    # With two templates differing in case, "search[x]" fills the second one exactly; a lenient fill
    # would take the first ("Search[x]") and no longer be the action itself.
    assert fills_template("search[x]", ["Search[...]", "search[...]"])
    assert not fills_template("SEARCH[x]", ["search[...]"])
    assert not fills_template("search [x]", ["search[...]"])


def test_rejected_keeps_the_format_verdict():
    for format_ok in (True, False):
        rejected = ParseResult("raw", "a", None, format_ok).rejected("not in the hand")
        assert rejected == ParseResult("raw", None, "not in the hand", format_ok)


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"action": "a", "action": "b"', "b"),  # the last key
        ('{"action": "hit", "x', "hit"),
        ('{"action": "hit","x": 1', "hit"),  # a comma right after the closing quote
        ('{"action": "", "x', ""),
        ('{"action": "hit", "x": "y', "hit"),
        ('"action": "+" or "-"\n}', '"+" or "-"'),  # the whole line, for the ambiguity check
        ('"action": "+" or "-"\nmore\n}', '"+" or "-"'),  # the first line only, however many follow
        ('"action": "stand\nmore', "stand"),  # an unclosed quote: the rest of the line
        ('"action": "stand\nmore\nlines', "stand"),  # ... its first line, however many follow
        ('"action": hit, x, y', "hit"),
        ('"action": hit} x, y', "hit"),
        ('{"action": ,}', ""),
        ('"action": hit', "hit"),
    ],
)
def test_value_after_last_key(text, value):
    assert _value_after_last_key(text) == value


def test_normalize_strips_wrapping_and_trailing_punctuation_but_never_a_lone_symbol():
    cases = {
        '"': '"',
        "'": "'",
        "[": "[",
        "!": "!",
        '"look"': "look",
        "(look)": "look",
        "[look": "[look",
        "a.": "a",
        "look.!": "look",
    }
    assert {t: _normalize(t) for t in cases} == cases


def test_token_matches_keeps_two_actions_named_alike_at_one_place():
    # Two actions that normalise alike, mentioned once: both are candidates (an ambiguity), not the first.
    assert _token_matches("i go north", ("go north", "Go North"), ()) == ["go north", "Go North"]
    assert _token_matches("look at desk 1", ("look", "look at desk 1"), ()) == ["look at desk 1"]


def test_balrog_strict_matching_fills_a_template_exactly():
    # BALROG's strict check: a value that is no listed action may still fill a "[...]" template, exactly.
    from rl4vlm_gym.parsing import ActionParser

    parser = ActionParser(format="balrog-robust-naive", match="strict")
    actions = ("search[...]", "click[back]")
    assert parser.parse("<|ACTION|>search[red shoes]<|END|>", actions).parsed == "search[red shoes]"
    assert parser.parse("<|ACTION|>search [red shoes]<|END|>", actions).parsed is None


def test_balrog_formats_write_an_action_as_their_agents_answer():
    from rl4vlm_gym.parsing import ActionParser

    assert (
        ActionParser(format="balrog-cot").format_action("go north", "the door is north") == "the door is north\nACTION: go north"
    )
    assert ActionParser(format="balrog-cot").format_action("go north") == "ACTION: go north"
    assert ActionParser(format="balrog-robust-cot").format_action("go north", "t") == "t\n<|ACTION|>go north<|END|>"


def test_balrog_robust_cot_without_a_block_says_what_balrogs_agent_answers():
    from rl4vlm_gym.parsing import BALROG_NO_ACTION, ActionParser

    result = ActionParser(format="balrog-robust-cot").parse("go north", ("go north", "go south"))
    assert result.parsed is None and not result.format_ok
    assert result.error.startswith(
        f"no <|ACTION|>...<|END|> block in the output, so BALROG's agent answers {BALROG_NO_ACTION!r}: "
    )


def test_balrog_robust_reads_from_the_open_tag_to_the_next_close_tag():
    # A close tag before the block is not its end; a close tag without an open one is no block.
    from rl4vlm_gym.parsing import ActionParser

    parser, actions = ActionParser(format="balrog-robust-naive"), ("go north", "go south")
    result = parser.parse("<|END|> first <|ACTION|>go north<|END|>", actions)
    assert result.parsed == "go north" and result.format_ok
    assert not parser.parse("I go south<|END|>", actions).format_ok


def test_balrog_cot_is_well_formed_with_an_action_line_only():
    from rl4vlm_gym.parsing import ActionParser

    parser, actions = ActionParser(format="balrog-cot"), ("go north", "go south")
    result = parser.parse("The door is north.\nACTION: go north", actions)
    assert result.parsed == "go north" and result.format_ok
    assert not parser.parse("go north", actions).format_ok


def test_balrog_naive_takes_any_output_as_well_formed():
    from rl4vlm_gym.parsing import ActionParser

    result = ActionParser(format="balrog-naive").parse("go north!", ("go north", "go south"))
    assert result.parsed == "go north" and result.format_ok
