"""How long the action parser takes on huge and adversarial model outputs (it must stay linear).

Every parser configuration parses each hostile input (1 MB of text, 100k nested brackets, 200k
quotes, ...) against the household, blackjack and number-line actions; the script prints the
median time per parse and per megabyte. A quadratic scan shows up as a per-MB time that grows
with the input size (the ``--scale`` run halves the inputs to compare).

    .venv/bin/python benchmarks/parsing_hostile.py [--repeats 3] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import statistics
import time

from rl4vlm_gym.parsing import ACTION_FORMATS, MATCH_MODES, ActionParser

ACTIONS = (
    "look", "inventory", "go to desk 1", "take pen 1 from desk 1", "open drawer 1",
    "stand", "hit", "-", "+",
)  # fmt: skip


def hostile(scale: float) -> dict[str, str]:
    """The inputs, ``scale`` times their default sizes."""
    n = lambda k: max(1, int(k * scale))  # noqa: E731
    return {
        "1MB-letters": "a" * n(1_000_000),
        "1MB-sentence": "go to desk 1 " * n(80_000),
        "100k-nested-brackets": "[" * n(100_000),
        "100k-nested-braces": "{" * n(100_000) + "}" * n(100_000),
        "nested-action-value": '{"action": ' + "[" * n(100_000),
        "100k-open-tags": "<action>" * n(100_000),
        "100k-close-tags": "</action>" * n(100_000),
        "key-then-200k-spaces": '"action":' + " " * n(200_000),
        "key-quote-then-200k-spaces": '"action": "' + " " * n(200_000),
        "plain-key-then-200k-spaces": "action" + " " * n(200_000),
        "angle-then-200k-spaces": "<" + " " * n(200_000),
        "200k-stars": "*" * n(200_000),
        "100k-keys": '"action": ' * n(100_000),
        "200k-quotes": '"' * n(200_000),
        "1MB-thoughts-then-action": '{"thoughts": "' + "x" * n(1_000_000) + '", "action": "hit"}',
        "200k-newlines-then-action": "\n" * n(200_000) + "Action: hit",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    parsers = [ActionParser(format=f, match=m) for f in ACTION_FORMATS for m in MATCH_MODES]
    parsers.append(ActionParser(numbered=True, synonyms={"stick": "stand"}))
    print(f"{len(parsers)} parser configurations, median of {args.repeats} runs, inputs x{args.scale}")
    print(f"{'input':30} {'chars':>10} {'ms/parse':>10} {'ms/MB':>10}")
    worst = 0.0
    for name, text in hostile(args.scale).items():
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for p in parsers:
                p.parse(text, ACTIONS)
            times.append((time.perf_counter() - start) / len(parsers))
        per_parse = statistics.median(times)
        worst = max(worst, per_parse)
        print(f"{name:30} {len(text):>10} {per_parse * 1e3:>10.2f} {per_parse * 1e3 / (len(text) / 1e6):>10.2f}")
    print(f"slowest parse: {worst * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
