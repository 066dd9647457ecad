"""Tests that kill the mutants of ``rl4vlm_gym.parsing`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors)."""

from __future__ import annotations

from rl4vlm_gym.parsing import ParseResult, fills_template


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
