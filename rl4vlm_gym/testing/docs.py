"""``docs``: the docstring has the docs generator's sections; the card matches the class."""

from __future__ import annotations

from typing import Any

from rl4vlm_gym.testing.remote import _card, _rules


def check_docs(env_id: str, /, **kwargs: Any) -> str:
    """The env class docstring (its own or inherited) has every section the docs generator needs;
    the card matches the class, and every reward variant has the same events, ``"invalid"`` among them."""
    from rl4vlm_gym.docs import SECTIONS

    rules = _rules(env_id, kwargs)  # remotely: the served class's docstring sections and card, from the server
    missing = rules["missing_sections"]
    assert not missing, f"{rules['name']}'s docstring lacks the sections {missing}"
    card = _card(env_id, kwargs)
    rewards = rules["REWARDS"]
    assert tuple(rewards) == card.reward_variants, f"card reward variants {card.reward_variants} != {tuple(rewards)}"
    assert rules["levels"] == len(card.levels), f"card lists {len(card.levels)} levels, the env has {rules['levels']}"
    assert rules["DEFAULT_LEVEL"] == card.default_level, "card and env disagree on the default level"
    variants = list(rewards.items())
    default, events = variants[0][0], set(variants[0][1])
    assert "invalid" in events, f"REWARDS[{default!r}] has no 'invalid' event"
    for variant, table in variants[1:]:
        assert set(table) == events, (
            f"REWARDS[{variant!r}] misses events {sorted(events - set(table))} (or adds {sorted(set(table) - events)}) "
            f"against the default variant {default!r}"
        )
    return f"docstring has {', '.join(SECTIONS)}; card matches the class; {len(variants)} reward variant(s) with the same events"
