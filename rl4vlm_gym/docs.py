"""Docs generated from code: one Markdown page per env id, from its card and class docstring.

An env class docstring has the sections in ``SECTIONS`` as ``## Name`` headings; the page adds the
card's facts, the reward table (from ``REWARDS``), the level table (from the card), and the image
and text of a fixed seed, so the docs can never drift from what the env does.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator
from PIL import Image

from rl4vlm_gym.extras import MissingExtraError
from rl4vlm_gym.registry import EnvCard, env_card, list_envs

__all__ = [
    "DOC_SEED",
    "SECTIONS",
    "class_sections",
    "env_page",
    "missing_sections",
    "page_path",
    "parse_sections",
    "write_docs",
    "write_page",
]

SECTIONS = ("Description", "Observation", "Actions", "Rewards", "Levels", "Arguments", "Version History")
DOC_SEED = 0
_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)


def parse_sections(doc: str | None) -> dict[str, str]:
    """``{heading: body}`` of the ``## heading`` sections of a docstring."""
    text = inspect.cleandoc(doc or "")
    matches = list(_HEADING.finditer(text))
    return {
        m.group(1): text[m.end() : matches[i + 1].start() if i + 1 < len(matches) else len(text)].strip()
        for i, m in enumerate(matches)
    }


def class_sections(cls: type) -> dict[str, str]:
    """The ``## heading`` sections documenting ``cls``: each section from the nearest class of its
    MRO that has it, so a subclass documents only what it changes (a task fixed by a class
    attribute, a test variant) and inherits the rest of its family's docstring."""
    sections: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        sections.update({name: body for name, body in parse_sections(klass.__doc__).items() if body})
    return sections


def missing_sections(cls: type) -> list[str]:
    """The required sections that ``cls``'s docstrings (see :func:`class_sections`) lack or leave empty."""
    sections = class_sections(cls)
    return [name for name in SECTIONS if not sections.get(name)]


def _safe(part: str) -> str:
    # Gymnasium allows ':' in ids (not a file name everywhere); '.' and '..' must not climb folders.
    text = re.sub(r"[^A-Za-z0-9._-]", lambda m: f"_{ord(m.group()):x}_", part)
    return text if text.strip(".") else text.replace(".", "_2e_")


def page_path(env_id: str) -> str:
    """The page of ``env_id`` relative to the docs folder, keyed by the full id:
    ``"<namespace>/<Name>-vN.md"`` (``"<Name>-vN.md"`` for an id without a namespace), so two
    families with an env of the same name never share a page."""
    namespace, _, name = env_id.rpartition("/")
    return f"{_safe(namespace)}/{_safe(name)}.md" if namespace else f"{_safe(name)}.md"


def _facts(card: EnvCard) -> str:
    seeds = card.seed_ranges
    install = f'`pip install "rl4vlm-gym[{card.extra}]"`' if card.extra else "core install"
    rows = [
        ("Family", card.family),
        ("Skills", ", ".join(card.skills)),
        ("Observation modes", ", ".join(f"`{m}`" for m in card.obs_modes)),
        ("Actions", card.action_grammar),
        ("Reward variants", ", ".join(f"`{v}`" for v in card.reward_variants) + " (first is the default)"),
        ("Success", card.success),
        ("Levels", f"0..{card.max_level}, default {card.default_level}"),
        ("Max episode steps", str(card.max_episode_steps)),
        ("Seeds", ", ".join(f"{k} [{r.start}, {r.stop})" for k, r in seeds.items())),
        ("Install", install),
        ("Entry point", f"`{card.entry_point}`"),
    ]
    return "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)


def _reward_table(rewards: dict[str, dict[str, float]]) -> str:
    variants = list(rewards)
    events = list(dict.fromkeys(e for table in rewards.values() for e in table))
    head = "| event | " + " | ".join(f"`{v}`" for v in variants) + " |"
    rule = "|---" * (len(variants) + 1) + "|"
    rows = [f"| {e} | " + " | ".join(f"{rewards[v].get(e, 0.0):+g}" for v in variants) + " |" for e in events]
    return "\n".join([head, rule, *rows])


def env_page(env_id: str, image_dir: Path | None = None) -> str:
    """The Markdown page of ``env_id``; saves its example image into ``image_dir`` if given."""
    card = env_card(env_id)
    cls: Any = load_env_creator(card.entry_point)
    sections = class_sections(cls)
    if cls.NEEDS_DATA:  # the example would depend on which data the machine has
        example = "(This env plays data files users download, so this page shows no example.)"
    else:
        env = gym.make(env_id)
        obs, _ = env.reset(seed=DOC_SEED)
        env.close()
        example = f"```text\nmission: {obs['mission']}\ntext:\n{obs['text']}\nactions: {', '.join(obs['actions'])}\n```"
        if image_dir is not None:
            image = Path(page_path(env_id)).with_suffix(".png").name
            image_dir.mkdir(parents=True, exist_ok=True)
            Image.fromarray(obs["image"]).save(image_dir / image)
            example = f"![{env_id}, seed {DOC_SEED}](img/{image})\n\n{example}"
    levels = "| level | what it is |\n|---|---|\n" + "\n".join(
        f"| {i}{' (default)' if i == card.default_level else ''} | {d} |" for i, d in enumerate(card.levels)
    )
    examples = "\n".join(f"- `{e}`" for e in card.action_examples)
    parts = [
        f"# {env_id}\n\n{card.summary}\n\n{_facts(card)}",
        f"## Description\n\n{sections.get('Description', '')}",
        f"## Observation\n\n{sections.get('Observation', '')}\n\nSeed {DOC_SEED}, level {card.default_level}, `image+text`:\n\n{example}",
        f"## Actions\n\n{sections.get('Actions', '')}\n\nOutputs that parse:\n\n{examples}",
        f"## Rewards\n\n{sections.get('Rewards', '')}\n\n{_reward_table(cls.REWARDS)}",
        f"## Levels\n\n{sections.get('Levels', '')}\n\n{levels}",
        f"## Arguments\n\n{sections.get('Arguments', '')}",
        f"## Version History\n\n{sections.get('Version History', '')}",
    ]
    if card.references:
        parts.append("## References\n\n" + "\n".join(f"- {r}" for r in card.references))
    return "\n\n".join(parts) + "\n"


def write_page(env_id: str, out_dir: str | Path) -> Path:
    """Write the page of ``env_id`` (and its image, beside it in ``img/``) under ``out_dir``."""
    page = Path(out_dir) / page_path(env_id)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(env_page(env_id, page.parent / "img"), encoding="utf-8")
    return page


def write_docs(
    out_dir: str | Path,
    ids: Iterable[str] | None = None,
    index_ids: Iterable[str] | None = None,
    missing: dict[str, list[str]] | None = None,
) -> list[Path]:
    """Write one page per id (every registered id by default) with their images, and ``index.md``
    listing ``index_ids`` (default: the same ids); return the pages, the index first.

    An id whose pip extra is not installed raises :class:`~rl4vlm_gym.extras.MissingExtraError`, or,
    given a ``missing`` dict, is left as it is (its page, if any, untouched) and recorded there under
    its extra, so that a core install regenerates what it can."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cards = list_envs() if ids is None else sorted((env_card(i) for i in set(ids)), key=lambda c: c.id)
    listed = cards if index_ids is None else sorted((env_card(i) for i in set(index_ids)), key=lambda c: c.id)
    pages = []
    for card in cards:
        try:
            pages.append(write_page(card.id, out))
        except MissingExtraError as err:
            if missing is None:
                raise
            missing.setdefault(err.extra, []).append(card.id)
    # An id is linked only where its page is in ``out`` (a plugin's docs folder holds its own pages, not ours)
    rows = [
        f"| {f'[{card.id}]({page_path(card.id)})' if (out / page_path(card.id)).is_file() else card.id} | {card.family} | "
        f"{card.summary} | {len(card.levels)} |"
        for card in listed
    ]
    index = out / "index.md"
    index.write_text(
        "# RL4VLM Gym environments\n\nGenerated by `rl4vlm-gym docs` from the env cards and docstrings.\n\n"
        "| id | family | task | levels |\n|---|---|---|---|\n" + "\n".join(rows) + "\n",
        encoding="utf-8",
    )
    return [index, *pages]
