"""Reading a folder someone else wrote (a leaderboard submission): bounded, and refusing links.

Every leaderboard command reads submissions through :class:`UntrustedFolder` and nothing else.

- **Links and special files**: the folder is opened with ``O_NOFOLLOW | O_DIRECTORY`` and each file
  relative to it; before opening, ``lstat`` must show a regular file with one link (a symlink, a
  hard link to a file elsewhere, a device, a FIFO, a socket or a folder where a file belongs is
  refused unopened), and after opening (``O_NOFOLLOW | O_NONBLOCK``) ``fstat`` must show the same
  file, so nothing can be swapped in between.
- **Sizes**: each file has a byte cap, checked before reading and while reading; a ``.gz`` file is
  inflated as a stream that stops at the cap; a JSON Lines file caps the length and number of its
  lines.
- **Structure**: JSON and YAML are checked for nesting depth and number of items *before* they are
  parsed (a parser's recursion is never reached); JSON objects with a repeated key, ``NaN``,
  ``Infinity`` and numbers that overflow to infinity are refused; YAML with anchors, aliases,
  explicit tags, repeated keys or several documents is refused.
- **Messages** name the file, the line and the rule, never the contents of the file refused (a
  link to a secret file must not print the secret).

The limits are the module's ``MAX_*`` constants (documented in ``leaderboards/README.md``); they are
far above what an honest run writes (``benchmarks/leaderboard_validation.py`` measures the margin).
"""

from __future__ import annotations

import errno
import gzip
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import yaml

__all__ = [
    "ITEMS_PER_STEP",
    "LINE_BYTES_PER_STEP",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_GZ_BYTES",
    "MAX_ITEMS",
    "MAX_JSONL_BYTES",
    "MAX_JSON_BYTES",
    "MAX_LINE_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_YAML_BYTES",
    "Refused",
    "UntrustedFolder",
    "episode_limits",
    "parse_json",
    "parse_yaml",
    "shown",
]

KiB, MiB = 1 << 10, 1 << 20

MAX_ENTRIES = 32
"""Entries a submission folder may hold (it holds at most five files)."""
MAX_YAML_BYTES = 64 * KiB
"""``metadata.yaml``."""
MAX_JSON_BYTES = 4 * MiB
"""``run.json`` and ``summary.json``."""
MAX_TEXT_BYTES = 1 * MiB
"""``README.md``."""
MAX_GZ_BYTES = 64 * MiB
"""``episodes.jsonl.gz`` as stored."""
MAX_JSONL_BYTES = 256 * MiB
"""``episodes.jsonl``, or ``episodes.jsonl.gz`` once inflated."""
MAX_LINE_BYTES = 8 * MiB
"""One line of a JSON Lines file (one episode)."""
MAX_DEPTH = 32
"""Nesting of JSON arrays and objects, or of YAML sequences and mappings."""
MAX_ITEMS = 100_000
"""Keys plus array elements of one JSON document (one line of a JSON Lines file), or YAML nodes."""
LINE_BYTES_PER_STEP = 512
ITEMS_PER_STEP = 32
"""An episode's line may grow with its step budget beyond :data:`MAX_LINE_BYTES` and
:data:`MAX_ITEMS` (:func:`episode_limits`): a record holds 10 items a step and its decision facts
about 6 more and one per optimal action, value and feature, about 300 bytes for a one-word output
(BALROG's NetHack allows 100,000 steps; a random agent plays 13,000)."""


def episode_limits(max_steps: int) -> tuple[int, int]:
    """``(line bytes, items)`` allowed in one episode's line when episodes may last ``max_steps``."""
    return max(MAX_LINE_BYTES, LINE_BYTES_PER_STEP * max_steps), max(MAX_ITEMS, ITEMS_PER_STEP * max_steps + 1_000)

_CHUNK = 1 * MiB
_BOM = b"\xef\xbb\xbf"
_JSON_STRING = re.compile(rb'"[^"]*"')
_BRACKETS = re.compile(rb"[\[\]{}]")
_EMPTY = re.compile(rb"[\[{][ \t\n\r]*[\]}]")  # an empty array or object (JSON's four whitespace bytes)
_PLAIN = re.compile(r"[A-Za-z0-9_.+/-]{1,60}")


class Refused(ValueError):
    """A file broke a rule; the message names the file, the line (if any) and the rule."""

    def __init__(self, file: str, rule: str, line: int | None = None) -> None:
        self.file, self.rule, self.line = file, rule, line
        super().__init__(f"{file}:{line}: {rule}" if line is not None else f"{file}: {rule}")


def shown(value: object, limit: int = 60) -> str:
    """``value`` quoted for a message: ASCII only (no terminal escapes, no right-to-left
    overrides, no lone surrogates), and cut at ``limit`` characters."""
    text = str(value)
    return ascii(text[:limit]) + ("..." if len(text) > limit else "")


def _line_rule(limit: int) -> str:
    return f"MAX_LINE_BYTES = {_size(limit)}" if limit == MAX_LINE_BYTES else f"{_size(limit)} (the suite's step budget)"


def _item_rule(limit: int) -> str:
    return f"MAX_ITEMS = {limit:,}" if limit == MAX_ITEMS else f"{limit:,} (the suite's step budget)"


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n >= MiB else f"{n // KiB} KiB" if n >= KiB else f"{n} bytes"


def _kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, if it is not a regular file."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


class UntrustedFolder:
    """One folder of untrusted files, read under the rules of the module docstring.

    Args:
        path: the folder; it must itself be a real folder, not a symbolic link.
        label: how messages name the folder.

    Raises:
        Refused: the path is a link, not a folder, or cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str], label: str | None = None) -> None:
        self.path = os.fspath(path)
        self.label = label or self.path
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            info = os.lstat(self.path)
            kind = _kind(info.st_mode)
            if kind != "a folder":
                raise Refused(self.label, f"is {kind or 'a file'}, not a folder")
            self._fd = os.open(self.path, flags)
        except OSError as err:
            raise Refused(self.label, f"cannot be opened as a folder ({err.strerror})") from None
        if os.fstat(self._fd).st_ino != info.st_ino:
            os.close(self._fd)
            raise Refused(self.label, "changed while it was being opened")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> UntrustedFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def entries(self) -> dict[str, os.stat_result]:
        """The folder's entries (names to their ``lstat``), at most :data:`MAX_ENTRIES`."""
        found: dict[str, os.stat_result] = {}
        with os.scandir(self._fd) as it:
            for entry in it:
                if len(found) >= MAX_ENTRIES:
                    raise Refused(self.label, f"holds more than MAX_ENTRIES = {MAX_ENTRIES} entries")
                found[entry.name] = os.stat(entry.name, dir_fd=self._fd, follow_symlinks=False)
        return found

    def _open(self, name: str, limit: int, rule: str) -> BinaryIO:
        """``name`` opened for reading, after the link and size rules."""
        try:
            before = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except OSError as err:
            raise Refused(name, f"cannot be read ({err.strerror})") from None
        self._check(name, before, limit, rule)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=self._fd)
        except OSError as err:
            why = "is a symbolic link" if err.errno == errno.ELOOP else f"cannot be read ({err.strerror})"
            raise Refused(name, why) from None
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            os.close(fd)
            raise Refused(name, "was replaced while it was being opened")
        try:
            self._check(name, after, limit, rule)
        except Refused:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    @staticmethod
    def _check(name: str, info: os.stat_result, limit: int, rule: str) -> None:
        kind = _kind(info.st_mode)
        if kind is not None:
            raise Refused(name, f"is {kind}, not a regular file: only plain files are read")
        if info.st_nlink != 1:
            raise Refused(name, f"has {info.st_nlink} hard links: a file linked to a file elsewhere is not read")
        if info.st_size > limit:
            raise Refused(name, f"is larger than {rule} = {_size(limit)}")

    def read_bytes(self, name: str, limit: int, rule: str) -> bytes:
        """The bytes of ``name``, at most ``limit`` (named ``rule`` in messages)."""
        with self._open(name, limit, rule) as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise Refused(name, f"is larger than {rule} = {_size(limit)}")
        return data

    def read_text(self, name: str, limit: int = MAX_TEXT_BYTES, rule: str = "MAX_TEXT_BYTES") -> str:
        """``name`` as UTF-8 text."""
        return _decode(self.read_bytes(name, limit, rule), name)

    def read_json(self, name: str) -> Any:
        """``name`` parsed as one JSON document (see :func:`parse_json`)."""
        return parse_json(self.read_bytes(name, MAX_JSON_BYTES, "MAX_JSON_BYTES"), name)

    def read_yaml(self, name: str) -> Any:
        """``name`` parsed as one YAML document (see :func:`parse_yaml`)."""
        return parse_yaml(_decode(self.read_bytes(name, MAX_YAML_BYTES, "MAX_YAML_BYTES"), name, bom=True), name)

    def lines(self, name: str, max_lines: int, max_line_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
        """The lines of a JSON Lines file (``.gz`` inflated on the fly), numbered from 1.

        At most ``max_lines`` lines of at most ``max_line_bytes`` (:data:`MAX_LINE_BYTES`),
        :data:`MAX_JSONL_BYTES` in all; a blank line is refused (the runner never writes one), and
        the last line may lack its newline.
        """
        max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
        gz = name.endswith(".gz")
        limit, rule = (MAX_GZ_BYTES, "MAX_GZ_BYTES") if gz else (MAX_JSONL_BYTES, "MAX_JSONL_BYTES")
        with self._open(name, limit, rule) as raw:
            stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw  # type: ignore[assignment]
            what = "inflates to more" if gz else "holds more"
            buffer = bytearray()
            number = total = 0
            while True:
                try:
                    chunk = stream.read(_CHUNK)
                except (OSError, EOFError, zlib.error) as err:
                    reason = "it ends early" if isinstance(err, EOFError) else "its data is damaged"
                    raise Refused(name, f"is not a valid gzip file ({reason})") from None
                total += len(chunk)
                if total > MAX_JSONL_BYTES:
                    raise Refused(name, f"{what} than MAX_JSONL_BYTES = {_size(MAX_JSONL_BYTES)}", number + 1)
                if chunk:
                    buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", start)) >= 0:
                    number += 1
                    yield number, self._line(name, number, bytes(buffer[start:end]), max_lines, max_line_bytes)
                    start = end + 1
                del buffer[:start]
                if len(buffer) > max_line_bytes:
                    raise Refused(name, f"line longer than {_line_rule(max_line_bytes)}", number + 1)
                if not chunk:
                    break
            if buffer:
                number += 1
                yield number, self._line(name, number, bytes(buffer), max_lines, max_line_bytes)

    @staticmethod
    def _line(name: str, number: int, line: bytes, max_lines: int, max_line_bytes: int) -> bytes:
        if number > max_lines:
            raise Refused(name, f"has more than {max_lines} lines, one per episode of the suite", number)
        if len(line) > max_line_bytes:
            raise Refused(name, f"line longer than {_line_rule(max_line_bytes)}", number)
        if line.endswith(b"\r"):  # a CRLF line end
            line = line[:-1]
        if not line.strip():
            raise Refused(name, "blank line: the runner writes one JSON object per line and nothing else", number)
        if line[:1].isspace() or line[-1:].isspace():
            raise Refused(name, "whitespace around the JSON object: the runner writes none", number)
        return line


def _decode(data: bytes, name: str, line: int | None = None, bom: bool = False) -> str:
    if data.startswith(_BOM) and not bom:
        raise Refused(name, "starts with a byte-order mark: write UTF-8 without one", line)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(name, f"is not UTF-8 text (at byte {err.start})", line) from None


# JSON ---------------------------------------------------------------------------------------------


class _Duplicate(ValueError):
    pass


class _NotFinite(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return result


def _constant(name: str) -> float:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text[:20])
    return value


def parse_json(data: bytes, name: str, line: int | None = None, max_items: int | None = None) -> Any:
    """One JSON document (UTF-8 bytes), checked for depth and size before it is parsed.

    Raises:
        Refused: nesting deeper than :data:`MAX_DEPTH`, more than ``max_items`` keys and
            elements, a repeated key in an object, ``NaN``/``Infinity`` or a number too large
            for a float, a byte-order mark, not UTF-8, or not JSON at all.
    """
    text = _decode(data, name, line)
    # Blank out the strings, whose brackets and commas do not count. A backslash is valid JSON only
    # inside a string, where escapes pair left to right: dropping the escaped backslashes, then the
    # escaped quotes, leaves strings without escapes. On the bytes (no multi-byte UTF-8 sequence
    # holds an ASCII byte): a copy of 1 byte per byte, where the text may take 4 per character.
    # Each string becomes one placeholder byte, so that an array of one string is not empty.
    skeleton = _JSON_STRING.sub(b"0", data.replace(b"\\\\", b"").replace(b'\\"', b""))
    # A container of n > 0 members holds n - 1 commas and opens once: n; an empty one holds nothing.
    items = skeleton.count(b",") + skeleton.count(b"[") + skeleton.count(b"{") - len(_EMPTY.findall(skeleton))
    max_items = MAX_ITEMS if max_items is None else max_items
    if items > max_items:
        raise Refused(name, f"more than {_item_rule(max_items)} keys and array elements", line)
    depth = 0
    for bracket in _BRACKETS.findall(skeleton):
        depth += 1 if bracket in (b"[", b"{") else -1
        if depth > MAX_DEPTH:
            raise Refused(name, f"nested deeper than MAX_DEPTH = {MAX_DEPTH}", line)
    del skeleton
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite)
    except _Duplicate as err:
        key = err.args[0]
        what = shown(key) if _PLAIN.fullmatch(key) else "a key"
        raise Refused(name, f"repeats {what} in one object: parsers disagree on which value wins", line) from None
    except _NotFinite:
        raise Refused(name, "holds NaN, Infinity or a number too large for a float: JSON numbers must be finite", line) from None
    except json.JSONDecodeError as err:
        at = f"line {err.lineno} column {err.colno}" if line is None else f"column {err.colno}"
        raise Refused(name, f"is not valid JSON ({err.msg} at {at})", line) from None
    except (ValueError, RecursionError) as err:  # e.g. an integer of more than 4300 digits
        raise Refused(name, f"is not valid JSON ({type(err).__name__})", line) from None


# YAML ---------------------------------------------------------------------------------------------


def parse_yaml(text: str, name: str) -> Any:
    """One YAML document, read with ``yaml.safe_load`` after its event stream has been checked.

    The events are walked first, without building anything (PyYAML's composer recurses, its
    parser does not): nesting deeper than :data:`MAX_DEPTH`, more than :data:`MAX_ITEMS` nodes,
    anchors and aliases (which multiply a small file into a huge tree), explicit tags, keys that
    are not scalars, repeated keys and a second document are refused.

    Raises:
        Refused: the rule broken, with the line.
    """
    frames: list[tuple[bool, set[str]]] = []  # per open collection: is a mapping, its keys so far
    expect_key: list[bool] = []
    nodes = documents = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            where = event.start_mark.line + 1 if event.start_mark is not None else None
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise Refused(name, "holds more than one YAML document", where)
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                frames.pop()
                expect_key.pop()
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            if isinstance(event, yaml.AliasEvent) or event.anchor is not None:
                raise Refused(name, "YAML anchors and aliases are not accepted", where)
            if getattr(event, "tag", None) is not None and not (isinstance(event, yaml.CollectionStartEvent) and event.implicit):
                raise Refused(name, "explicit YAML tags (!!...) are not accepted", where)
            nodes += 1
            if nodes > MAX_ITEMS:
                raise Refused(name, f"more than MAX_ITEMS = {MAX_ITEMS:,} YAML nodes", where)
            if frames and frames[-1][0]:  # inside a mapping: keys and values alternate
                if expect_key[-1]:
                    if not isinstance(event, yaml.ScalarEvent):
                        raise Refused(name, "a YAML key that is not a plain value", where)
                    if event.value in frames[-1][1]:
                        what = shown(event.value) if _PLAIN.fullmatch(event.value) else "a key"
                        raise Refused(name, f"repeats {what}: YAML readers disagree on which value wins", where)
                    frames[-1][1].add(event.value)
                expect_key[-1] = not expect_key[-1]
            if isinstance(event, yaml.CollectionStartEvent):
                if len(frames) >= MAX_DEPTH:
                    raise Refused(name, f"nested deeper than MAX_DEPTH = {MAX_DEPTH}", where)
                frames.append((isinstance(event, yaml.MappingStartEvent), set()))
                expect_key.append(True)
        return yaml.safe_load(text)
    except Refused:
        raise
    except yaml.MarkedYAMLError as err:  # the problem and where, not the snippet of the file
        mark = err.problem_mark or err.context_mark
        problem = re.sub(r"'[^']*'|\"[^\"]*\"", "a character", str(err.problem or err.context))
        raise Refused(name, f"is not valid YAML ({problem})", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as err:
        raise Refused(name, f"is not valid YAML ({type(err).__name__})") from None
    except (ValueError, TypeError, OverflowError) as err:  # a value that cannot be built: a 30-digit date, a huge int
        raise Refused(name, f"holds a value YAML cannot build ({type(err).__name__})") from None
