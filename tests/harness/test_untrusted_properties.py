"""Properties of the untrusted JSON and YAML readers on seeded random documents.

Every document is written by hand here, token by token, so that its strings use every escape the
format has (``\\\\``, ``\\"``, ``\\/``, ``\\uXXXX`` with surrogate pairs; YAML's ``\\xXX``, ``\\UXXXXXXXX``
and single-quoted ``''``), with quotes, backslashes and brackets in keys and values, and whose
depth, item count and size are set at, just below and just above each limit. For every document:

- the reader accepts it exactly when it is within the limits, and then returns what the plain
  parser (``json.loads``, ``yaml.safe_load``) and the generator agree it holds;
- otherwise it raises :class:`Refused` naming the limit broken, never another exception;
- random damage (a byte inserted, removed or cut) gives a Refused or the plain parser's value,
  never a traceback and never a value nested deeper than the limit.

The generators draw from ``random.Random(seed)`` with fixed seeds: the same documents every run.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
import yaml

from rl4vlm_gym.harness import untrusted
from rl4vlm_gym.harness.untrusted import MAX_DEPTH, MAX_ITEMS, Refused, UntrustedFolder, parse_json, parse_yaml

# Characters that matter to a scanner of strings, and a few that need \u escapes or surrogate pairs.
TRICKY = "\\\"/[]{},:'# -\n\t\b\f\r\x00\x1f\u00e9\u2028\u202e\U0001f600ab"


def _text(rng: random.Random, longest: int = 6) -> str:
    return "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, longest)))


def _json_char(rng: random.Random, ch: str) -> str:
    """``ch`` inside a JSON string, written one of the ways JSON allows."""
    short = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    ways = []
    if ch not in '"\\' and ord(ch) >= 0x20:
        ways.append(ch)
    if ch in short:
        ways.append(short[ch])
    if ord(ch) > 0xFFFF:  # a surrogate pair
        hi, lo = divmod(ord(ch) - 0x10000, 0x400)
        ways.append(f"\\u{0xD800 + hi:04x}\\u{0xDC00 + lo:04X}")
    else:
        ways.append(f"\\u{ord(ch):04x}")
    return rng.choice(ways)


def _json_string(rng: random.Random, s: str) -> str:
    return '"' + "".join(_json_char(rng, ch) for ch in s) + '"'


def _ws(rng: random.Random) -> str:
    return rng.choice(["", "", " ", "\n", " \t\r\n "])


def _value(rng: random.Random, depth: int, width: int = 3) -> Any:
    """A random value nested exactly ``depth`` deep (0: a scalar), with up to ``width`` siblings at each level."""
    if depth == 0:
        kind = rng.randrange(5)
        return [None, rng.random() < 0.5, rng.randint(-(10**12), 10**12), rng.uniform(-1e6, 1e6), _text(rng)][kind]
    deep = _value(rng, depth - 1, width)
    siblings = [_value(rng, rng.randint(0, min(depth - 1, 2)), width) for _ in range(rng.randint(0, width))]
    siblings.insert(rng.randint(0, len(siblings)), deep)
    if rng.random() < 0.5:
        return siblings
    keys: list[str] = []
    while len(keys) < len(siblings):  # distinct keys: a repeated key is refused for its own reason
        key = _text(rng)
        if key not in keys:
            keys.append(key)
    return dict(zip(keys, siblings, strict=True))


def _empty_padded(rng: random.Random, value: Any) -> Any:
    """``value`` with some empty lists and objects added beside it (they nest, but hold nothing)."""
    if isinstance(value, list):
        return [_empty_padded(rng, v) for v in value] + ([[] if rng.random() < 0.5 else {}] if rng.random() < 0.3 else [])
    if isinstance(value, dict):
        return {k: _empty_padded(rng, v) for k, v in value.items()}
    return value


def _write_json(rng: random.Random, value: Any) -> str:
    if isinstance(value, list):
        return "[" + _ws(rng) + ",".join(_ws(rng) + _write_json(rng, v) + _ws(rng) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (
            _ws(rng) + _json_string(rng, k) + _ws(rng) + ":" + _ws(rng) + _write_json(rng, v) + _ws(rng) for k, v in value.items()
        )
        return "{" + _ws(rng) + ",".join(pairs) + "}"
    if isinstance(value, str):
        return _json_string(rng, value)
    return json.dumps(value)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def _items(value: Any) -> int:
    """Keys plus array elements (:data:`MAX_ITEMS`'s definition)."""
    if isinstance(value, list):
        return len(value) + sum(map(_items, value))
    if isinstance(value, dict):
        return len(value) + sum(map(_items, value.values()))
    return 0


def _nodes(value: Any) -> int:
    """YAML nodes: every scalar, key, sequence and mapping."""
    if isinstance(value, list):
        return 1 + sum(map(_nodes, value))
    if isinstance(value, dict):
        return 1 + len(value) + sum(map(_nodes, value.values()))
    return 1


def _never_a_traceback(read, *args: Any) -> Any:
    """``read(*args)``: a value, or the Refused returned; anything else fails the test."""
    try:
        return read(*args)
    except Refused as refused:
        return refused
    except Exception as err:  # noqa: BLE001 - the property under test is that nothing else escapes
        pytest.fail(f"{read.__name__} raised {type(err).__name__}: {err} on {args[0]!r:.300}")


# The crafted document of issue 36 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "string",
    [rb"\\", rb"a\\", rb"\\\\", rb"\"\\", rb"\\\"\\", rb"\u005c\\"],
    ids=["backslash", "a-backslash", "two-backslashes", "quote-backslash", "mixed", "u-escape-then-backslash"],
)
def test_a_string_ending_in_an_escaped_backslash_does_not_hide_depth(string):
    # ["\\", [[...41 deep...]], "y"]: the string ends in an escaped backslash. Dropping the escaped
    # quotes first would take the \" that the backslash pair's second half makes with the closing
    # quote, so that string would run on to the opening quote of "y" and hide every bracket between.
    deep = b"[" * (MAX_DEPTH + 8) + b"]" * (MAX_DEPTH + 8)
    document = b'["' + string + b'", ' + deep + b', "y"]'
    assert json.loads(document)[2] == "y"  # valid JSON, 41 deep
    with pytest.raises(Refused, match=f"x.json: nested deeper than MAX_DEPTH = {MAX_DEPTH}"):
        parse_json(document, "x.json")
    # at the limit the same document is read, and the string is what json reads
    at = b'["' + string + b'", ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b', "y"]'
    assert parse_json(at, "x.json") == json.loads(at)


# Random JSON -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_random_json_is_read_exactly_within_the_depth_and_items_limits(seed):
    rng = random.Random(seed)
    for depth in (0, 1, 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 1, MAX_DEPTH + 5):
        value = _value(rng, depth)
        if rng.random() < 0.5:
            value = _empty_padded(rng, value)
        document = _write_json(rng, value).encode()
        assert json.loads(document) == value  # the generator writes what it means
        items = _items(value)
        for limit in (items - 1, items, items + 1):  # the items limit just below, at and just above the count
            if limit < 0:
                continue
            got = _never_a_traceback(parse_json, document, "x.json", None, limit)
            deep = f"nested deeper than MAX_DEPTH = {MAX_DEPTH}"
            many = f"more than {limit:,} (the suite's step budget) keys and array elements"
            if _depth(value) > MAX_DEPTH and items > limit:  # either limit may be named
                assert isinstance(got, Refused) and got.rule in (deep, many), f"{got!r:.200}"
            elif _depth(value) > MAX_DEPTH:
                assert isinstance(got, Refused), f"{_depth(value)} deep, read"
                assert got.rule == deep
            elif items > limit:
                assert isinstance(got, Refused), f"{items} items read under a limit of {limit}"
                assert got.rule == many
            else:
                assert not isinstance(got, Refused), (
                    f"{got} for a document within the limits ({_depth(value)} deep, {items} items)"
                )
                assert got == value


def test_random_json_at_max_items_itself():
    rng = random.Random(7)
    for extra in (-1, 0, 1):
        value = {"steps": [_empty_padded(rng, _value(rng, rng.randint(0, 2))) for _ in range(40)] + [[], {}]}
        pad = [0] * (MAX_ITEMS - _items(value) - 1 + extra)  # "pad" is one key more
        document = (_write_json(rng, value)[:-1] + ', "pad": ' + json.dumps(pad) + "}").encode()
        value["pad"] = pad
        got = _never_a_traceback(parse_json, document, "x.json")
        if extra > 0:
            assert isinstance(got, Refused) and got.rule == f"more than MAX_ITEMS = {MAX_ITEMS:,} keys and array elements"
        else:
            assert got == value


def _damaged(rng: random.Random, document: bytes) -> bytes:
    at = rng.randrange(len(document) + 1)
    how = rng.randrange(3)
    if how == 0:
        return document[:at] + rng.choice([b"\\", b'"', b"[", b"]", b"{", b"}", b",", b"\\\\", b'\\"', b"\xff"]) + document[at:]
    if how == 1:
        return document[:at] + document[at + 1 :]
    return document[:at]


@pytest.mark.parametrize("seed", range(2))
def test_damaged_json_is_refused_or_read_as_json_reads_it(seed):
    rng = random.Random(100 + seed)
    for _ in range(50):
        document = _write_json(rng, _value(rng, rng.choice([2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1]))).encode()
        for _ in range(3):
            document = _damaged(rng, document)
        got = _never_a_traceback(parse_json, document, "x.json")
        if not isinstance(got, Refused):
            assert got == json.loads(document) and _depth(got) <= MAX_DEPTH


# Random YAML -------------------------------------------------------------------------------------


def _yaml_string(rng: random.Random, s: str) -> str:
    """``s`` as a YAML scalar: double-quoted with escapes, single-quoted, or plain where that is safe."""
    if (
        s.isalpha()
        and s.isascii()
        and s.lower() not in ("y", "n", "yes", "no", "on", "off", "true", "false", "null")
        and rng.random() < 0.3
    ):
        return s
    if rng.random() < 0.3 and all(ch >= " " and ch not in "\u2028\u202e" and ord(ch) < 0x10000 for ch in s):
        return "'" + s.replace("'", "''") + "'"
    out = []
    for ch in s:
        short = {
            '"': '\\"',
            "\\": "\\\\",
            "\n": "\\n",
            "\t": "\\t",
            "\b": "\\b",
            "\f": "\\f",
            "\r": "\\r",
            "\x00": "\\0",
            "/": "\\/",
        }
        ways = [f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}", f"\\U{ord(ch):08X}"]
        if ord(ch) < 0x100:
            ways.append(f"\\x{ord(ch):02x}")
        if ch in short:
            ways.append(short[ch])
        if ch >= " " and ch not in '"\\\u2028' and ord(ch) != 0x7F:
            ways.append(ch)
        out.append(rng.choice(ways))
    return '"' + "".join(out) + '"'


def _write_yaml_flow(rng: random.Random, value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_write_yaml_flow(rng, v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(_yaml_string(rng, k) + ": " + _write_yaml_flow(rng, v) for k, v in value.items()) + "}"
    if isinstance(value, str):
        return _yaml_string(rng, value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return repr(value)  # an int, or a float as 123.25 (PyYAML, YAML 1.1, reads 1e6 as a string; repr gives no exponent here)


def _write_yaml(rng: random.Random, value: Any, indent: int = 0) -> str:
    """Block style for the outer levels (a few at random), flow style inside."""
    pad = " " * indent
    if isinstance(value, list) and value and rng.random() < 0.6:
        return "".join(f"{pad}-\n{_write_yaml(rng, v, indent + 2)}" for v in value)
    if isinstance(value, dict) and value and rng.random() < 0.6:
        return "".join(f"{pad}{_yaml_string(rng, k)}:\n{_write_yaml(rng, v, indent + 2)}" for k, v in value.items())
    return pad + _write_yaml_flow(rng, value) + "\n"


def _yaml_value(rng: random.Random, depth: int) -> Any:
    value = _value(rng, depth, width=1)  # PyYAML's parser is pure Python: fewer nodes, the same depths
    return json.loads(json.dumps(value, allow_nan=False), parse_float=lambda s: float(s))  # plain lists and dicts


@pytest.mark.parametrize("seed", range(3))
def test_random_yaml_is_read_exactly_within_the_depth_and_node_limits(seed):
    rng = random.Random(200 + seed)
    for depth in (0, 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 3):
        value = _yaml_value(rng, depth)
        if rng.random() < 0.3:
            value = _empty_padded(rng, value)
        text = _write_yaml(rng, value)
        assert yaml.safe_load(text) == value  # the generator writes what it means
        nodes = _nodes(value)
        for limit in (nodes - 1, nodes, nodes + 1):  # MAX_ITEMS just below, at and just above the count
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(untrusted, "MAX_ITEMS", limit)
                got = _never_a_traceback(parse_yaml, text, "m.yaml")
            if _depth(value) > MAX_DEPTH and nodes <= limit:
                assert isinstance(got, Refused) and got.rule == f"nested deeper than MAX_DEPTH = {MAX_DEPTH}", f"{got!r:.200}"
            elif _depth(value) > MAX_DEPTH:
                assert isinstance(got, Refused) and ("MAX_DEPTH" in got.rule or "MAX_ITEMS" in got.rule)
            elif nodes > limit:
                assert isinstance(got, Refused) and got.rule == f"more than MAX_ITEMS = {limit:,} YAML nodes"
            else:
                assert not isinstance(got, Refused), (
                    f"{got} for a document within the limits ({_depth(value)} deep, {nodes} nodes)"
                )
                assert got == value == yaml.safe_load(text)


@pytest.mark.parametrize("seed", range(2))
def test_damaged_yaml_is_refused_or_read_as_safe_load_reads_it(seed):
    rng = random.Random(300 + seed)
    for _ in range(25):
        text = _write_yaml(rng, _yaml_value(rng, rng.choice([2, MAX_DEPTH, MAX_DEPTH + 1])))
        for _ in range(2):
            at = rng.randrange(len(text) + 1)
            text = (
                text[:at] + rng.choice(['"', "\\", "'", "[", "]", "{", "}", ":", "\n", "- ", "&a ", "*a", "!!str "]) + text[at:]
            )
        got = _never_a_traceback(parse_yaml, text, "m.yaml")
        if not isinstance(got, Refused):
            assert got == yaml.safe_load(text) and _depth(got) <= MAX_DEPTH


# Files at their byte limits ----------------------------------------------------------------------


def _padded(rng: random.Random, kind: str, value: Any, size: int) -> str:
    """A document of exactly ``size`` bytes: ``value`` beside a string of x's as long as needed."""
    if kind == "json":
        head, tail = '{"doc": ' + _write_json(rng, value) + ', "pad": "', '"}'
    else:
        head, tail = "doc: " + _write_yaml_flow(rng, value) + '\npad: "', '"\n'
    missing = size - len((head + tail).encode())
    assert missing >= 0
    return head + "x" * missing + tail


@pytest.mark.parametrize("kind", ["json", "yaml"])
def test_files_at_their_byte_limit(kind, tmp_path, monkeypatch):
    rng = random.Random(400)
    if kind == "json":
        limit, rule = untrusted.MAX_JSON_BYTES, "MAX_JSON_BYTES = 4 MiB"
    else:  # PyYAML's scanner is pure Python (64 KiB of padding: ~1 s to read): the same check at 4 KiB
        limit, rule = 4 * untrusted.KiB, "MAX_YAML_BYTES = 4 KiB"
        monkeypatch.setattr(untrusted, "MAX_YAML_BYTES", limit)
    for size in (limit - 1, limit, limit + 1):
        value = _yaml_value(rng, 3)
        text = _padded(rng, kind, value, size)
        assert len(text.encode()) == size
        name = f"x.{kind}"
        (tmp_path / name).write_text(text, encoding="utf-8")
        with UntrustedFolder(tmp_path) as files:
            got = _never_a_traceback(files.read_json if kind == "json" else files.read_yaml, name)
        if size > limit:
            assert isinstance(got, Refused) and got.rule == f"is larger than {rule}"
        else:
            assert isinstance(got, dict) and got["doc"] == value and set(got["pad"]) <= {"x"}, f"{got!r:.200}"
