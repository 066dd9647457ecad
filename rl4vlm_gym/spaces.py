"""String spaces for free-text observations and actions.

Gymnasium's ``Text`` space checks every character against a charset (alphanumeric by default)
and its shared-memory path indexes characters through that charset, so natural language with
spaces, punctuation or emoji fails ``contains`` or crashes ``AsyncVectorEnv``. ``Unicode`` accepts
any string up to ``max_length`` code points and ``UnicodeTuple`` any tuple of such strings.

Both register themselves with Gymnasium's vector utilities, so they work in ``SyncVectorEnv`` and in
``AsyncVectorEnv`` with or without shared memory. In shared memory a string is stored as UTF-32
code points behind a length prefix; a value longer than the space allows raises an error that says
which space and which limit.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.spaces import Tuple as TupleSpace
from gymnasium.vector.utils import (
    batch_space,
    concatenate,
    create_empty_array,
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = ["SharedStrings", "Unicode", "UnicodeTuple"]

_SAMPLE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 +-*/()=.,:;!?\"'{}[]<>_éßλ中文🙂"


class Unicode(Space[str]):
    """Any Python ``str`` of at most ``max_length`` code points (full Unicode, no charset).

    ``sample()`` draws from ``vocabulary`` when one is set (envs keep it equal to the admissible
    actions, so ``check_env`` steps with meaningful actions) and from a mixed alphabet otherwise.

    Example:
        >>> space = Unicode(max_length=16)
        >>> space.contains("Hello, wörld! 🙂"), space.contains("x" * 17), space.contains(3)
        (True, False, False)
    """

    def __init__(
        self,
        max_length: int = 4096,
        *,
        vocabulary: Sequence[str] = (),
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        self.max_length = max_length
        self.vocabulary: tuple[str, ...] = tuple(vocabulary)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Strings have no fixed-size numeric form."""
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random member of ``vocabulary``, or a random short string when it is empty."""
        if mask is not None or probability is not None:
            raise NotImplementedError("Unicode.sample does not support mask or probability")
        if self.vocabulary:
            return self.vocabulary[int(self.np_random.integers(len(self.vocabulary)))]
        length = int(self.np_random.integers(0, min(self.max_length, 32) + 1))
        picks = self.np_random.integers(len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def contains(self, x: Any) -> bool:
        """True for a ``str`` of at most ``max_length`` code points."""
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Unicode(max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unicode) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("Unicode", self.max_length))

    def to_jsonable(self, sample_n: Iterable[str]) -> list[str]:
        """Strings are already JSON-able."""
        return list(sample_n)

    def from_jsonable(self, sample_n: Sequence[str]) -> list[str]:
        """Strings are already JSON-able."""
        return list(sample_n)


class UnicodeTuple(Space[tuple[str, ...]]):
    """A tuple of at most ``max_items`` strings, each at most ``max_length`` code points.

    Used for the admissible ``actions`` of an observation. Items may not contain NUL, which
    separates items in shared memory.

    Example:
        >>> UnicodeTuple(max_items=2).contains(("go to desk 1", "look"))
        True
    """

    def __init__(
        self,
        max_items: int = 256,
        max_length: int = 256,
        *,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 0:
            raise ValueError(f"max_items must be a non-negative int, got {max_items!r}")
        self.max_items = max_items
        self.item_space = Unicode(max_length)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def max_length(self) -> int:
        """Longest allowed item."""
        return self.item_space.max_length

    @property
    def is_np_flattenable(self) -> bool:
        """Tuples of strings have no fixed-size numeric form."""
        return False

    def seed(self, seed: int | None = None) -> int | list[int]:
        """Seed this space and its item space."""
        return [super().seed(seed), self.item_space.seed(seed)]

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[str, ...]:
        """A random tuple of random strings."""
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeTuple.sample does not support mask or probability")
        n = int(self.np_random.integers(0, min(self.max_items, 8) + 1))
        return tuple(self.item_space.sample().replace("\0", "") for _ in range(n))

    def contains(self, x: Any) -> bool:
        """True for a tuple of at most ``max_items`` NUL-free strings within ``max_length``."""
        return (
            isinstance(x, tuple)
            and len(x) <= self.max_items
            and all(self.item_space.contains(item) and "\0" not in item for item in x)
        )

    def __repr__(self) -> str:
        return f"UnicodeTuple(max_items={self.max_items}, max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeTuple)
            and other.max_items == self.max_items
            and other.max_length == self.max_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeTuple", self.max_items, self.max_length))

    def to_jsonable(self, sample_n: Iterable[tuple[str, ...]]) -> list[list[str]]:
        """Tuples become lists."""
        return [list(x) for x in sample_n]

    def from_jsonable(self, sample_n: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        """Lists become tuples."""
        return [tuple(x) for x in sample_n]


# --- Vector-env support --------------------------------------------------------------------------
# Each env's value goes in a row of `1 + capacity` uint32: the length, then UTF-32 code points.
# A tuple is stored as its items, each ended by NUL (which `UnicodeTuple.contains` forbids
# inside items), so () and ("",) stay distinct.

_StringSpace = Unicode | UnicodeTuple


def _capacity(space: _StringSpace) -> int:
    if isinstance(space, Unicode):
        return space.max_length
    return space.max_items * (space.max_length + 1)


def _encode(space: _StringSpace, value: Any) -> str:
    if not space.contains(value):
        raise ValueError(
            f"observation {_short(value)} does not fit {space!r}: raise the limit when you "
            "build the env, or use AsyncVectorEnv(..., shared_memory=False)"
        )
    return value if isinstance(space, Unicode) else "".join(item + "\0" for item in value)


def _decode(space: _StringSpace, text: str) -> str | tuple[str, ...]:
    if isinstance(space, Unicode):
        return text
    return tuple(text.split("\0")[:-1])


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _rows(space: _StringSpace, shared_memory: Any) -> np.ndarray:
    return np.frombuffer(shared_memory.get_obj(), dtype=np.uint32).reshape(-1, _capacity(space) + 1)


@create_shared_memory.register(Unicode)
@create_shared_memory.register(UnicodeTuple)
def _create_string_shared_memory(space: _StringSpace, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array("I", n * (_capacity(space) + 1))


@write_to_shared_memory.register(Unicode)
@write_to_shared_memory.register(UnicodeTuple)
def _write_string_to_shared_memory(
    space: _StringSpace, index: int, value: Any, shared_memory: Any
) -> None:
    # surrogatepass keeps lone surrogates (possible in model output) round-trippable.
    codes = np.frombuffer(
        _encode(space, value).encode("utf-32-le", "surrogatepass"), dtype=np.uint32
    )
    row = _rows(space, shared_memory)[index]
    row[0] = len(codes)
    row[1 : 1 + len(codes)] = codes


class SharedStrings(Sequence):
    """A live, read-only view of the strings one batch of envs wrote to shared memory.

    ``AsyncVectorEnv`` reads its shared memory once, at start-up, and relies on the result being
    a view that later writes show through (true of numpy arrays, not of a tuple of str). This
    view decodes on access; ``copy.deepcopy`` (which ``AsyncVectorEnv`` applies by default) turns
    it into a plain tuple.
    """

    def __init__(self, space: _StringSpace, rows: np.ndarray) -> None:
        self._space = space
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._rows[index]
        text = row[1 : 1 + int(row[0])].tobytes().decode("utf-32-le", "surrogatepass")
        return _decode(self._space, text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # mutable view

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[Any, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"SharedStrings({tuple(self)!r})"


@read_from_shared_memory.register(Unicode)
@read_from_shared_memory.register(UnicodeTuple)
def _read_string_from_shared_memory(space: _StringSpace, shared_memory: Any, n: int = 1) -> SharedStrings:
    return SharedStrings(space, _rows(space, shared_memory)[:n])


# No `iterate` registration on purpose: Gymnasium's Tuple iterates items itself only when its
# subspaces have none, and registering one would make it iterate each string's characters.


@batch_space.register(Unicode)
@batch_space.register(UnicodeTuple)
def _batch_string_space(space: _StringSpace, n: int = 1) -> TupleSpace:
    # Same layout as Gymnasium's Text: a Tuple of independent copies.
    return TupleSpace(_copies(space, n))


def _copies(space: _StringSpace, n: int) -> list[_StringSpace]:
    if isinstance(space, Unicode):
        return [Unicode(space.max_length, vocabulary=space.vocabulary) for _ in range(n)]
    return [UnicodeTuple(space.max_items, space.max_length) for _ in range(n)]


@create_empty_array.register(Unicode)
@create_empty_array.register(UnicodeTuple)
def _empty_strings(space: _StringSpace, n: int = 1, fn: Any = np.zeros) -> tuple:
    return tuple("" if isinstance(space, Unicode) else () for _ in range(n))


@concatenate.register(Unicode)
@concatenate.register(UnicodeTuple)
def _concatenate_strings(space: _StringSpace, items: Iterable[Any], out: Any) -> tuple:
    return tuple(items)
