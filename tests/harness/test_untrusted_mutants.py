"""Tests that kill the mutants of ``rl4vlm_gym.harness.untrusted`` that the other fast tests let live
(benchmarks/mutation/: mutmut's survivors): exact messages, limits at and just past each threshold,
and the bounded inflation of a ``.gz`` stream."""

from __future__ import annotations

import gzip
import os
import stat
import tracemalloc

import pytest

from rl4vlm_gym.harness import untrusted
from rl4vlm_gym.harness.untrusted import (
    MAX_ENTRIES,
    MAX_GZ_BYTES,
    MAX_JSONL_BYTES,
    KiB,
    MiB,
    Refused,
    UntrustedFolder,
    _kind,
    _size,
    parse_json,
    parse_yaml,
    shown,
)


def _refusal(call) -> str:  # noqa: ANN001
    with pytest.raises(Refused) as err:
        call()
    return str(err.value)


def test_shown_cuts_past_the_limit_only():
    assert shown("a" * 60) == "'" + "a" * 60 + "'"
    assert shown("a" * 61) == "'" + "a" * 60 + "'..."
    assert shown("abc", limit=2) == "'ab'..."


def test_entries_at_and_past_max_entries(tmp_path):
    for i in range(MAX_ENTRIES):
        (tmp_path / f"f{i}").write_text("x")
    with UntrustedFolder(tmp_path, label="sub") as folder:
        assert len(folder.entries()) == MAX_ENTRIES
    (tmp_path / "one_more").write_text("x")
    with UntrustedFolder(tmp_path, label="sub") as folder:
        assert _refusal(folder.entries) == f"sub: holds more than MAX_ENTRIES = {MAX_ENTRIES} entries"


def test_entries_lstat_a_link_without_following_it(tmp_path):
    (tmp_path / "target").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with UntrustedFolder(tmp_path) as folder:
        entries = folder.entries()
    assert stat.S_ISLNK(entries["link"].st_mode) and stat.S_ISLNK(entries["dangling"].st_mode)
    assert stat.S_ISREG(entries["target"].st_mode)


def test_read_yaml_accepts_a_byte_order_mark_and_names_the_file(tmp_path):
    (tmp_path / "metadata.yaml").write_bytes(b"\xef\xbb\xbfa: 1\n")
    (tmp_path / "bad.yaml").write_bytes(b"a: \xff\n")
    (tmp_path / "alias.yaml").write_bytes(b"a: &x 1\nb: *x\n")
    with UntrustedFolder(tmp_path) as folder:
        assert folder.read_yaml("metadata.yaml") == {"a": 1}
        assert _refusal(lambda: folder.read_yaml("bad.yaml")) == "bad.yaml: is not UTF-8 text (at byte 3)"
        assert _refusal(lambda: folder.read_yaml("alias.yaml")) == "alias.yaml:1: YAML anchors and aliases are not accepted"


def _sparse(path, size):  # noqa: ANN001, ANN202
    with open(path, "wb") as f:
        f.truncate(size)


def test_lines_size_caps_of_a_gz_and_a_plain_file(tmp_path):
    # Sparse files: the size rule is read from lstat/fstat before anything is read.
    _sparse(tmp_path / "big.jsonl.gz", MAX_GZ_BYTES + 1)
    _sparse(tmp_path / "cap.jsonl.gz", MAX_GZ_BYTES)
    _sparse(tmp_path / "big.jsonl", MAX_JSONL_BYTES + 1)
    _sparse(tmp_path / "mid.jsonl", MAX_GZ_BYTES + 1)  # over the gz cap, under the plain one
    with UntrustedFolder(tmp_path) as folder:
        assert _refusal(lambda: list(folder.lines("big.jsonl.gz", 10))) == "big.jsonl.gz: is larger than MAX_GZ_BYTES = 64 MiB"
        # at the cap the size passes, and zeros are no gzip stream
        assert (
            _refusal(lambda: list(folder.lines("cap.jsonl.gz", 10)))
            == "cap.jsonl.gz: is not a valid gzip file (its data is damaged)"
        )
        assert _refusal(lambda: list(folder.lines("big.jsonl", 10))) == "big.jsonl: is larger than MAX_JSONL_BYTES = 256 MiB"
        assert (
            _refusal(lambda: list(folder.lines("mid.jsonl", 10, 1000)))
            == "mid.jsonl:1: line longer than 1000 bytes (the suite's step budget)"
        )


def test_lines_of_a_truncated_gz_end_early(tmp_path):
    data = gzip.compress(b'{"a": 1}\n' * 1000)
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    with UntrustedFolder(tmp_path) as folder:
        assert (
            _refusal(lambda: list(folder.lines("cut.jsonl.gz", 10_000)))
            == "cut.jsonl.gz: is not a valid gzip file (it ends early)"
        )


def test_lines_a_blank_first_line_is_refused_as_blank(tmp_path):
    (tmp_path / "e.jsonl").write_bytes(b'\n{"a": 1}\n')
    with UntrustedFolder(tmp_path) as folder:
        assert _refusal(lambda: list(folder.lines("e.jsonl", 10))) == (
            "e.jsonl:1: blank line: the runner writes one JSON object per line and nothing else"
        )


@pytest.mark.parametrize("extra, refused", [(0, False), (1, True)])
def test_lines_inflate_a_gz_stream_chunk_by_chunk_and_stop_past_the_cap(tmp_path, monkeypatch, extra, refused):
    # The cap lowered to 8 MiB (the rule reads the module's constant): 4 KiB lines inflating to exactly
    # the cap are all read; one line more is refused at that line, found in the 9th 1 MiB chunk, after
    # a few MiB held at once (reading the stream whole would hold all of it).
    monkeypatch.setattr(untrusted, "MAX_JSONL_BYTES", 8 * MiB)
    line = b"x" * 4095 + b"\n"
    (tmp_path / "bomb.jsonl.gz").write_bytes(gzip.compress(line * (8 * 256) + line * extra, compresslevel=1))
    tracemalloc.start()
    try:
        with UntrustedFolder(tmp_path) as folder:
            if refused:
                result = _refusal(lambda: [n for n, _ in folder.lines("bomb.jsonl.gz", 10**6)])
            else:
                result = str(sum(1 for _ in folder.lines("bomb.jsonl.gz", 10**6)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result == ("bomb.jsonl.gz:2049: inflates to more than MAX_JSONL_BYTES = 8 MiB" if refused else "2048")
    assert peak < 5 * MiB, f"{peak / MiB:.1f} MiB held while inflating"


def test_size_names_each_unit_from_its_first_value():
    assert [_size(n) for n in (KiB - 1, KiB, MiB - 1, MiB)] == ["1023 bytes", "1 KiB", "1023 KiB", "1 MiB"]


def test_read_json_names_the_file(tmp_path):
    (tmp_path / "run.json").write_bytes(b"{oops")
    with UntrustedFolder(tmp_path) as folder:
        assert _refusal(lambda: folder.read_json("run.json")).startswith("run.json: is not valid JSON (")


def _lines(tmp_path, data: bytes, max_lines: int = 10, max_line_bytes: int | None = None):  # noqa: ANN001, ANN202
    (tmp_path / "e.jsonl").write_bytes(data)
    with UntrustedFolder(tmp_path) as folder:
        return list(folder.lines("e.jsonl", max_lines, max_line_bytes))


def test_lines_length_at_and_past_the_limit(tmp_path):
    ok, long = b"1" * 1000, b"1" * 1001
    assert _lines(tmp_path, b"{}\n" + ok, max_line_bytes=1000) == [(1, b"{}"), (2, ok)]  # the unterminated last line
    assert _lines(tmp_path, ok + b"\n", max_line_bytes=1000) == [(1, ok)]
    rule = "line longer than 1000 bytes (the suite's step budget)"
    # unterminated: refused while buffering, at the line being read; terminated: when the line is cut
    assert _refusal(lambda: _lines(tmp_path, b"{}\n{}\n" + long, max_line_bytes=1000)) == f"e.jsonl:3: {rule}"
    assert _refusal(lambda: _lines(tmp_path, b"{}\n" + long + b"\n", max_line_bytes=1000)) == f"e.jsonl:2: {rule}"
    assert (
        _refusal(lambda: _lines(tmp_path, b"{}\n" + b"1" * (MiB * 8 + 1))) == "e.jsonl:2: line longer than MAX_LINE_BYTES = 8 MiB"
    )


def test_lines_count_at_and_past_max_lines(tmp_path):
    assert [n for n, _ in _lines(tmp_path, b"{}\n" * 2, max_lines=2)] == [1, 2]
    assert (
        _refusal(lambda: _lines(tmp_path, b"{}\n" * 3, max_lines=2))
        == "e.jsonl:3: has more than 2 lines, one per episode of the suite"
    )


def test_lines_drop_a_crlf_line_end(tmp_path):
    assert _lines(tmp_path, b'{"a": 1}\r\n{"b": 2}\r\n') == [(1, b'{"a": 1}'), (2, b'{"b": 2}')]


@pytest.mark.parametrize("data, number", [(b' {"a": 1}\n', 1), (b'{}\n{"a": 1} \n', 2), (b"{}\n\t{}", 2)])
def test_lines_whitespace_on_either_side_is_refused(tmp_path, data, number):
    rule = "whitespace around the JSON object: the runner writes none"
    assert _refusal(lambda: _lines(tmp_path, data)) == f"e.jsonl:{number}: {rule}"


def test_lines_a_blank_last_line_is_refused_with_its_number(tmp_path):
    rule = "blank line: the runner writes one JSON object per line and nothing else"
    assert _refusal(lambda: _lines(tmp_path, b"{}\n{}\n  ")) == f"e.jsonl:3: {rule}"


def test_kind_names_every_file_type():
    kinds = {
        stat.S_IFLNK: "a symbolic link",
        stat.S_IFDIR: "a folder",
        stat.S_IFIFO: "a FIFO",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFSOCK: "a socket",
        0: "not a regular file",
        stat.S_IFREG: None,
    }
    assert {mode: _kind(mode | 0o644) for mode in kinds} == kinds


def test_a_folder_is_named_by_its_label_or_else_its_path(tmp_path):
    (tmp_path / "file").write_text("x")
    assert _refusal(lambda: UntrustedFolder(tmp_path / "file")) == f"{tmp_path / 'file'}: is a file, not a folder"
    assert _refusal(lambda: UntrustedFolder(tmp_path / "file", label="sub")) == "sub: is a file, not a folder"
    assert (
        _refusal(lambda: UntrustedFolder(tmp_path / "none", label="sub"))
        == "sub: cannot be opened as a folder (No such file or directory)"
    )
    with UntrustedFolder(tmp_path) as folder:
        assert folder.label == str(tmp_path)


def test_close_twice_closes_once(tmp_path):
    folder = UntrustedFolder(tmp_path)
    folder.close()
    assert folder._fd < 0
    folder.close()


def test_links_and_special_files_are_refused_with_their_kind(tmp_path):
    (tmp_path / "real").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    os.link(tmp_path / "real", tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    with UntrustedFolder(tmp_path) as folder:
        read = folder.read_text
        assert _refusal(lambda: read("link")) == "link: is a symbolic link, not a regular file: only plain files are read"
        assert _refusal(lambda: read("fifo")) == "fifo: is a FIFO, not a regular file: only plain files are read"
        assert _refusal(lambda: read("hard")) == "hard: has 2 hard links: a file linked to a file elsewhere is not read"
        assert _refusal(lambda: read("none")) == "none: cannot be read (No such file or directory)"


@pytest.mark.parametrize(
    "text, message",
    [
        ("{[a]: 1}\n", "m.yaml:1: a YAML key that is not a plain value"),
        ("a: 1\nb c!: 2\nb c!: 3\n", "m.yaml:3: repeats a key: YAML readers disagree on which value wins"),
        (
            "a: 1\nb: [\n",
            "m.yaml:3: is not valid YAML (expected the node content, but found a character)",
        ),
        ("a: \x07\n", "m.yaml: is not valid YAML (ReaderError)"),
        ("a: 2024-99-99\n", "m.yaml: holds a value YAML cannot build (ValueError)"),
    ],
)
def test_parse_yaml_refusals_name_the_file_the_line_and_the_rule(text, message):
    assert _refusal(lambda: parse_yaml(text, "m.yaml")) == message


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xef\xbb\xbf{}", "e.jsonl:3: starts with a byte-order mark: write UTF-8 without one"),
        (b'{"a": "\xff"}', "e.jsonl:3: is not UTF-8 text (at byte 7)"),
        (b"[" * 33 + b"]" * 33, "e.jsonl:3: nested deeper than MAX_DEPTH = 32"),
        (b'{"a": 1, "b": 2, "b": 3}', "e.jsonl:3: repeats 'b' in one object: parsers disagree on which value wins"),
        (b'{"a": 1, "b c": 2, "b c": 3}', "e.jsonl:3: repeats a key in one object: parsers disagree on which value wins"),
        (b"{oops}", "e.jsonl:3: is not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
        (b"1" * 5000, "e.jsonl:3: is not valid JSON (ValueError)"),
        (b"[NaN]", "e.jsonl:3: holds NaN, Infinity or a number too large for a float: JSON numbers must be finite"),
    ],
)
def test_parse_json_refusals_name_the_file_the_line_and_the_rule(data, message):
    assert _refusal(lambda: parse_json(data, "e.jsonl", 3)) == message
    assert _refusal(lambda: parse_json(data, "run.json")) == message.replace("e.jsonl:3", "run.json").replace(
        "at column", "at line 1 column"
    )
