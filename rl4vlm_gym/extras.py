"""The pip extras: what each one installs, which are installed, and the one error for a missing one.

A module that needs an extra calls :func:`require` before it imports the extra's packages, so that
making one of its ids on an install without the extra raises :class:`MissingExtraError`, which names
the extra and the command that installs it, instead of a ``ModuleNotFoundError`` from deep inside an
import. ``tests/test_extras.py`` makes every id that declares an extra with that extra's modules
hidden and expects this error, and checks :data:`MODULES` against setup.cfg's extras.
"""

from __future__ import annotations

import importlib.util

__all__ = ["MODULES", "MissingExtraError", "install_command", "installed", "missing_modules", "require"]

MODULES: dict[str, tuple[str, ...]] = {
    "nav": ("miniworld", "pyglet"),
    "household": ("alfworld", "textworld"),
    "webshop": ("flask", "selenium", "psutil"),
    "eval": ("matplotlib", "openai"),
    "hf": ("torch", "transformers", "tokenizers", "safetensors", "accelerate", "flask"),
    "train": ("torch", "transformers", "peft", "tensorboard"),
    "balrog": ("minigrid", "crafter", "textworld", "jericho"),
    "nethack": ("nle",),
    "games": ("pettingzoo", "pyspiel", "openskill"),
    "marl": ("pettingzoo", "pyspiel", "tianshou", "torch"),
    "ray": ("ray",),
    "trl": ("trl", "torch", "transformers"),
    "server": ("openenv", "fastapi", "uvicorn", "websockets"),
}
"""The top-level modules each extra of setup.cfg installs (import names, not distribution names)."""


class MissingExtraError(ImportError):
    """What needs a pip extra was used on an install without it. ``extra`` names it."""

    def __init__(self, extra: str, what: str, missing: tuple[str, ...]) -> None:
        super().__init__(
            f"{what} needs the `{extra}` extra (missing: {', '.join(missing)}). Install it with "
            f"{install_command(extra)}",
            name=missing[0] if missing else None,
        )
        self.extra = extra


def install_command(extra: str) -> str:
    """How to install ``extra``: into one's own venv, or into ours with the set-up script (which also
    installs the Debian packages some extras need)."""
    return f"`pip install 'rl4vlm-gym[{extra}]'` (from a clone: `pip install -e '.[{extra}]'`, or `bash scripts/setup.sh {extra}`)"


def missing_modules(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` this interpreter cannot import (found without importing them)."""
    if extra not in MODULES:
        raise ValueError(f"unknown extra {extra!r}; the extras are {sorted(MODULES)}")
    return tuple(module for module in MODULES[extra] if _absent(module))


def _absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a parent package that fails, or a module set to None
        return True


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` for ``what`` (e.g. ``"rl4vlm/KuhnPoker-vs-CFR-v0"`` or
    ``"the games family"``) unless every module of ``extra`` can be imported."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtraError(extra, what, missing)


def installed() -> dict[str, bool]:
    """Each extra, and whether all its modules can be imported here."""
    return {extra: not missing_modules(extra) for extra in MODULES}
