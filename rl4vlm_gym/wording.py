"""Wordings: the same episodes told in other sentences, the ``wording`` transfer axis.

An env's ``wording`` argument picks one of its ``WORDINGS`` (the first, ``"train"``, is the
env's own text). Another wording changes only words: the mission and the env's feedback sentences
come from that wording's templates (a family's ``PHRASES[wording][key]``), while the episode, the
images, the rewards, the state and the action vocabulary stay exactly those of ``"train"``.

Each template has several independent phrasings (other sentence structures, not synonym swaps).
Which one an episode reads is decided by the episode's seed without drawing from the env's RNG:
:func:`salt` hashes the RNG's state at reset (reading it consumes nothing), and :func:`choose`
hashes the salt with the template's key. So one episode reads one phrasing of each template, the
same in any process, and different seeds read different phrasings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["HELD_OUT", "INVALID", "TRAIN", "Phrasebook", "choose", "salt", "say"]

TRAIN = "train"
"""The env's own words: byte for byte the text every seed has always had."""
HELD_OUT = "held-out"
"""Templates no training wording uses, for evaluating what training never read."""

Phrasebook = Mapping[str, Sequence[str]]
"""A wording's templates: key -> its phrasings (``str.format`` strings over the key's fields)."""

INVALID: Sequence[str] = (
    "That did not work ({error}), so the state is unchanged.",
    "Refused, because {error}. Everything stays as it was.",
    "The step was not carried out; the reason: {error}. No change.",
)
"""The base class's held-out feedback for an invalid action (``key="invalid"``), unless a family's
phrasebook has its own."""


def salt(rng: np.random.Generator) -> int:
    """A number fixed by ``rng``'s state, read without drawing from it (the episode stays the same);
    0 for a stand-in generator without a bit generator (a test's scripted draws)."""
    state = repr(getattr(getattr(rng, "bit_generator", None), "state", None)).encode()
    return int.from_bytes(hashlib.sha256(state).digest()[:8], "big")


def choose(phrasings: Sequence[str], seed: int, key: str) -> str:
    """The phrasing an episode with salt ``seed`` reads for the template ``key`` (SHA-256, unlike
    ``hash()``, is the same in every process)."""
    digest = hashlib.sha256(f"{seed}|{key}".encode()).digest()
    return phrasings[int.from_bytes(digest[:8], "big") % len(phrasings)]


def say(book: Phrasebook, key: str, seed: int, **fields: Any) -> str:
    """Template ``key`` of ``book`` in the episode's phrasing, filled with ``fields``."""
    try:
        phrasings = book[key]
    except KeyError:
        raise KeyError(f"the wording has no template {key!r} (it has {sorted(book)})") from None
    return choose(phrasings, seed, key).format(**fields)
