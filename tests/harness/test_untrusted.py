"""The untrusted-folder reader: each limit holds at, just below and just above its value; files swapped
between the check and the open are caught; JSON and YAML rules hold before anything is parsed."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from rl4vlm_gym.harness import untrusted
from rl4vlm_gym.harness.untrusted import MAX_DEPTH, MAX_ITEMS, Refused, UntrustedFolder, parse_json, parse_yaml


def _folder(tmp_path: Path, **files: bytes) -> UntrustedFolder:
    for name, data in files.items():
        (tmp_path / name.replace("_", ".")).write_bytes(data)
    return UntrustedFolder(tmp_path)


@pytest.mark.parametrize(("depth", "ok"), [(MAX_DEPTH - 1, True), (MAX_DEPTH, True), (MAX_DEPTH + 1, False)])
def test_json_depth_limit(depth, ok):
    text = "[" * depth + "]" * depth
    if ok:
        assert parse_json(text.encode(), "x.json") is not None
    else:
        with pytest.raises(Refused, match=f"x.json: nested deeper than MAX_DEPTH = {MAX_DEPTH}"):
            parse_json(text.encode(), "x.json")


@pytest.mark.parametrize(("items", "ok"), [(MAX_ITEMS - 1, True), (MAX_ITEMS, True), (MAX_ITEMS + 1, False)])
def test_json_items_limit(items, ok):
    text = "[" + ",".join(['"a,[{"'] * items) + "]"  # brackets and commas inside strings do not count
    if ok:
        assert len(parse_json(text.encode(), "x.json")) == items
    else:
        with pytest.raises(Refused, match="more than MAX_ITEMS"):
            parse_json(text.encode(), "x.json")


def test_json_strings_with_escapes_do_not_hide_structure():
    tricky = rb'{"a": "\\", "b": "\"[[[[", "c": "\\\"{{", "d": "\u00e9[\u20ac"}'
    assert parse_json(tricky, "x.json") == {"a": "\\", "b": '"[[[[', "c": '\\"{{', "d": "\u00e9[\u20ac"}
    assert parse_json('["\u00e9\u20ac\U0001f600[{"]'.encode(), "x.json") == ["\u00e9\u20ac\U0001f600[{"]
    with pytest.raises(Refused, match="nested deeper"):
        # The string after the nesting pairs with the first one if escaped quotes go before escaped backslashes.
        parse_json(b'["\\\\"' + b", " + b"[" * 40 + b"]" * 40 + b', "y"]', "x.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": 1, "a": 2}', "repeats 'a' in one object"),
        ('{"a": {"b": 1, "b": 1}}', "repeats 'b'"),
        ('{"\\u202e": 1, "\\u202e": 2}', "repeats a key in one object"),  # an odd key is not echoed
        ("[NaN]", "NaN, Infinity"),
        ("[-Infinity]", "NaN, Infinity"),
        ("[1e309]", "too large for a float"),
        ("\ufeff{}", "byte-order mark"),
        ("\ud800", "is not UTF-8"),
        ("{'a': 1}", "is not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ],
)
def test_json_rules(text, reason):
    with pytest.raises(Refused, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_json(text.encode("utf-8", "surrogatepass"), "x.json")
    assert parse_json(b"[1e308, -0.0]", "x.json") == [1e308, -0.0]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: &x 1\nb: *x\n", "anchors and aliases"),
        ("a: !!binary aGk=\n", "explicit YAML tags"),
        ("? [a, b]\n: 1\n", "a YAML key that is not a plain value"),
        ("a: 1\nb: {c: 1, c: 2}\n", "repeats 'c'"),
        ("a: [\n", "is not valid YAML"),
        ("a: 1\n---\nb: 2\n", "more than one YAML document"),
        ("a: 2026-02-30\n", "holds a value YAML cannot build"),
    ],
)
def test_yaml_rules(text, reason):
    with pytest.raises(Refused, match=reason):
        parse_yaml(text, "m.yaml")


@pytest.mark.parametrize(("depth", "ok"), [(MAX_DEPTH - 1, True), (MAX_DEPTH, True), (MAX_DEPTH + 1, False)])
def test_yaml_depth_limit(depth, ok):
    text = "[" * depth + "]" * depth
    if ok:
        assert parse_yaml(text, "m.yaml") is not None
    else:
        with pytest.raises(Refused, match="nested deeper than MAX_DEPTH"):
            parse_yaml(text, "m.yaml")


def test_yaml_node_limit(monkeypatch):
    monkeypatch.setattr(untrusted, "MAX_ITEMS", 10)
    assert parse_yaml("[" + ", ".join("x" * 9) + "]", "m.yaml") == ["x"] * 9  # 9 scalars and the list
    with pytest.raises(Refused, match="more than MAX_ITEMS = 10 YAML nodes"):
        parse_yaml("[" + ", ".join("x" * 10) + "]", "m.yaml")


def test_yaml_error_does_not_echo_the_file():
    with pytest.raises(Refused) as caught:
        parse_yaml("key: value\n\tsecret-password: x\n", "m.yaml")
    assert "secret" not in str(caught.value) and "m.yaml:2: is not valid YAML" in str(caught.value)


@pytest.mark.parametrize(("size", "ok"), [(99, True), (100, True), (101, False)])
def test_file_size_limit(tmp_path, monkeypatch, size, ok):
    monkeypatch.setattr(untrusted, "MAX_YAML_BYTES", 100)
    with _folder(tmp_path, m_yaml=b"a: " + b"x" * (size - 4) + b"\n") as folder:
        if ok:
            assert folder.read_yaml("m.yaml") == {"a": "x" * (size - 4)}
        else:
            with pytest.raises(Refused, match="m.yaml: is larger than MAX_YAML_BYTES"):
                folder.read_yaml("m.yaml")


@pytest.mark.parametrize(("length", "ok"), [(99, True), (100, True), (101, False)])
@pytest.mark.parametrize("gz", [False, True])
def test_line_length_limit(tmp_path, monkeypatch, length, ok, gz):
    monkeypatch.setattr(untrusted, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(untrusted, "_CHUNK", 7)  # lines cross chunk boundaries
    data = b"{}\n" + b"[" + b"0" * (length - 2) + b"]" + b"\n{}"
    name = "e.jsonl.gz" if gz else "e.jsonl"
    (tmp_path / name).write_bytes(gzip.compress(data) if gz else data)
    with UntrustedFolder(tmp_path) as folder:
        if ok:
            assert [n for n, _ in folder.lines(name, 3)] == [1, 2, 3]
        else:
            with pytest.raises(Refused, match=f"{name}:2: line longer than MAX_LINE_BYTES"):
                list(folder.lines(name, 3))


@pytest.mark.parametrize(("total", "ok"), [(999, True), (1000, True), (1001, False)])
def test_inflated_size_limit(tmp_path, monkeypatch, total, ok):
    monkeypatch.setattr(untrusted, "MAX_JSONL_BYTES", 1000)
    monkeypatch.setattr(untrusted, "_CHUNK", 64)
    lines = (b"[" + b"0" * 97 + b"]\n") * 10  # ten lines of 100 bytes
    data = lines[:total] + b"1" * (total - len(lines))
    assert len(data) == total
    (tmp_path / "e.jsonl.gz").write_bytes(gzip.compress(data))
    with UntrustedFolder(tmp_path) as folder:
        if ok:
            assert len(list(folder.lines("e.jsonl.gz", 20))) == 10
        else:
            with pytest.raises(Refused, match=r"e.jsonl.gz:\d+: inflates to more than MAX_JSONL_BYTES = 1000 bytes"):
                list(folder.lines("e.jsonl.gz", 20))


@pytest.mark.parametrize(("count", "ok"), [(31, True), (32, True), (33, False)])
def test_entries_limit(tmp_path, count, ok):
    for i in range(count):
        (tmp_path / f"f{i}").touch()
    with UntrustedFolder(tmp_path) as folder:
        if ok:
            assert len(folder.entries()) == count
        else:
            with pytest.raises(Refused, match="more than MAX_ENTRIES = 32"):
                folder.entries()


def test_a_file_swapped_between_the_check_and_the_open_is_refused(tmp_path, monkeypatch):
    """``lstat`` said a plain file; by the ``open`` it is a link, or another file: both caught."""
    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "secret").write_text('{"password": 1}')
    real_open = os.open

    def swap_to(kind):
        def opener(path, flags, *args, dir_fd=None, **kw):
            if path == "run.json" and dir_fd is not None:
                if kind == "link":
                    os.unlink(tmp_path / "run.json")
                if kind == "link":
                    os.symlink(tmp_path / "secret", tmp_path / "run.json")
                else:  # made before the old file is gone, so it cannot reuse its inode number
                    (tmp_path / "other").write_text('{"other": 1}')
                    os.replace(tmp_path / "other", tmp_path / "run.json")
            return real_open(path, flags, *args, dir_fd=dir_fd, **kw)

        return opener

    with UntrustedFolder(tmp_path) as folder:
        monkeypatch.setattr(untrusted.os, "open", swap_to("link"))
        with pytest.raises(Refused, match="run.json: is a symbolic link"):
            folder.read_json("run.json")
    (tmp_path / "run.json").unlink()
    (tmp_path / "run.json").write_text("{}")
    with UntrustedFolder(tmp_path) as folder:
        monkeypatch.setattr(untrusted.os, "open", swap_to("file"))
        with pytest.raises(Refused, match="run.json: was replaced while it was being opened"):
            folder.read_json("run.json")


def test_folder_rules(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    with pytest.raises(Refused, match="link: is a symbolic link, not a folder"):
        UntrustedFolder(tmp_path / "link", "link")
    with pytest.raises(Refused, match="is a file, not a folder"):
        UntrustedFolder(tmp_path / "file")
    with pytest.raises(Refused, match="cannot be opened as a folder"):
        UntrustedFolder(tmp_path / "missing")


@pytest.mark.parametrize(
    ("steps", "limits"),
    [
        (300, (8_388_608, 100_000)),
        (3_093, (8_388_608, 100_000)),  # 32 items a step + 1,000 reach MAX_ITEMS
        (3_094, (8_388_608, 100_008)),
        (16_384, (8_388_608, 525_288)),  # 512 bytes a step reach MAX_LINE_BYTES
        (16_385, (8_389_120, 525_320)),
        (100_000, (51_200_000, 3_201_000)),  # BALROG's NetHack
    ],
)
def test_an_episode_line_may_grow_with_the_suites_step_budget(steps, limits):
    # A record holds 10 items and ~150 bytes a step for a one-word output, and its decision facts ~6 items and ~150 bytes more.
    assert untrusted.episode_limits(steps) == limits


@pytest.mark.parametrize(("items", "ok"), [(1_999, True), (2_000, True), (2_001, False)])
def test_json_items_limit_of_a_long_suite(items, ok):
    text = "[" + ",".join(["0"] * items) + "]"
    if ok:
        assert len(parse_json(text.encode(), "e.jsonl", 1, max_items=2_000)) == items
    else:
        with pytest.raises(Refused, match=r"e.jsonl:1: more than 2,000 \(the suite's step budget\) keys"):
            parse_json(text.encode(), "e.jsonl", 1, max_items=2_000)


@pytest.mark.parametrize(("length", "ok"), [(199, True), (200, True), (201, False)])
def test_line_length_limit_of_a_long_suite(tmp_path, monkeypatch, length, ok):
    monkeypatch.setattr(untrusted, "MAX_LINE_BYTES", 100)
    (tmp_path / "e.jsonl").write_bytes(b"{}\n[" + b"0" * (length - 2) + b"]\n{}")
    with UntrustedFolder(tmp_path) as folder:
        if ok:
            assert [n for n, _ in folder.lines("e.jsonl", 3, max_line_bytes=200)] == [1, 2, 3]
        else:
            with pytest.raises(Refused, match=r"e.jsonl:2: line longer than 200 bytes \(the suite's step budget\)"):
                list(folder.lines("e.jsonl", 3, max_line_bytes=200))
