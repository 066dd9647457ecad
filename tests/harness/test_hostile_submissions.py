"""Hostile submissions: each is the honest smoke run damaged one way, as an attacker would, and each is
rejected with its named reason, without following a link, echoing a file or exhausting memory.

The classes of issue 19 (links, size, structure, types, values replay can check, maintainer fields,
the submitter's own suite) and more: names, encodings, special files, many files, empty files. The
bombs are also run through the command in a subprocess, whose peak memory is measured. A seeded
fuzz mutates the honest submission at random and asserts every mutation gets a verdict.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import socket
import stat
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from rl4vlm_gym.harness.leaderboard import ValidationReport, validate_submission
from rl4vlm_gym.harness.suite import SUITES_DIR, load_suite

MiB = 1 << 20
EPISODES = len(load_suite("smoke").episodes)  # lines of the honest smoke run's log
SECRET = "s3cr3t-T0KEN-do-not-print"


def gzip_repeat(prefix: bytes, block: bytes, times: int) -> bytes:
    """A gzip file of ``prefix + block * times`` made without compressing all of it: ``block`` is
    deflated once after a full flush (no reference to earlier data), and those bytes repeated. The
    trailer's checksum is left zero: a reader that stops at its cap never reaches it."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    body = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush(zlib.Z_FINISH)
    header = b"\x1f\x8b\x08\x00" + b"\x00" * 4 + b"\x02\xff"
    return header + head + body * times + tail + struct.pack("<II", 0, 0)


def _gz(s, data: bytes) -> None:
    s.episodes.unlink()
    (s.folder / "episodes.jsonl.gz").write_bytes(data)


def _outside(tmp: Path, text: str = SECRET + "\n") -> Path:
    path = tmp / "outside" / "secret.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def _replace_with_link(path: Path, target: Path | str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    os.symlink(target, path)


def _line(s, number: int, text: str) -> None:
    lines = s.episodes.read_text().splitlines()
    lines[number - 1] = text
    s.episodes.write_text("\n".join(lines) + "\n")


def _first_record(s, edit: Callable[[dict[str, Any]], None]) -> None:
    records = s.records()
    edit(records[0])
    s.write_records(records, resummarize=False)


def _metadata(s, text: str) -> None:
    (s.folder / "metadata.yaml").write_text(text)


def _honest_metadata(s) -> str:
    return (s.folder / "metadata.yaml").read_text()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _mknod(path: Path) -> None:
    path.unlink(missing_ok=True)
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        pytest.skip("creating a device file needs CAP_MKNOD")


def _socket(path: Path) -> None:
    path.unlink(missing_ok=True)
    here = os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to ~100 bytes: bind the short relative name
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path.name)
        sock.close()
    finally:
        os.chdir(here)


def _suite_of_my_own(s, tmp: Path) -> None:
    """Issue 19's attack: filed under ``easy.yaml/``, with an ``easy.yaml`` in the working directory
    that calls itself smoke and keeps only the won seeds."""
    target = s.folder.parents[1] / "easy.yaml" / s.folder.name
    shutil.move(s.folder, target)
    s.folder, s.episodes = target, target / "episodes.jsonl"
    suite = yaml.safe_load((SUITES_DIR / "smoke.yaml").read_text())
    (tmp / "easy.yaml").write_text(yaml.safe_dump(suite))
    os.chdir(tmp)


def _rename_suite(s, name: str) -> None:
    target = s.folder.parents[1] / name / s.folder.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(s.folder, target)
    s.folder, s.episodes = target, target / "episodes.jsonl"


def _rename_id(s, name: str) -> None:
    target = s.folder.parent / name
    shutil.move(s.folder, target)
    s.folder, s.episodes = target, target / "episodes.jsonl"


def _link_folder(s, tmp: Path) -> None:
    real = tmp / "elsewhere" / s.folder.name
    shutil.move(s.folder, real)
    os.symlink(real, s.folder, target_is_directory=True)


def _link_suite_folder(s, tmp: Path) -> None:
    suite = s.folder.parent
    real = tmp / "elsewhere-suite"
    shutil.move(suite, real)
    os.symlink(real, suite, target_is_directory=True)


# (id, damage(submission, tmp_path), the reason the verdict must name)
HOSTILE: list[tuple[str, Callable[[Any, Path], object], str]] = [
    # -- links and special files (issue 19: followed, read, crashed, echoed)
    ("episodes-link-outside", lambda s, t: _replace_with_link(s.episodes, _outside(t, s.episodes.read_text())), "episodes.jsonl: is a symbolic link"),
    ("readme-link-outside", lambda s, t: _replace_with_link(s.folder / "README.md", _outside(t)), "README.md: is a symbolic link"),
    ("episodes-link-dev-zero", lambda s, t: _replace_with_link(s.episodes, "/dev/zero"), "episodes.jsonl: is a symbolic link"),
    ("metadata-link-secret", lambda s, t: _replace_with_link(s.folder / "metadata.yaml", _outside(t)), "metadata.yaml: is a symbolic link"),
    ("readme-hard-link", lambda s, t: os.link(_outside(t), s.folder / "README.md"), "README.md: has 2 hard links"),
    ("metadata-is-a-folder", lambda s, t: (s.folder / "metadata.yaml").unlink() or (s.folder / "metadata.yaml").mkdir(), "metadata.yaml: is a folder, not a regular file"),
    ("episodes-is-a-folder", lambda s, t: s.episodes.unlink() or s.episodes.mkdir(), "episodes.jsonl: is a folder, not a regular file"),
    ("episodes-is-a-fifo", lambda s, t: s.episodes.unlink() or os.mkfifo(s.episodes), "episodes.jsonl: is a FIFO"),
    ("readme-is-a-device", lambda s, t: _mknod(s.folder / "README.md"), "README.md: is a character device"),
    ("readme-is-a-socket", lambda s, t: _socket(s.folder / "README.md"), "README.md: is a socket"),
    ("folder-is-a-link", _link_folder, "is a symbolic link, not a folder"),
    ("suite-folder-is-a-link", _link_suite_folder, "submissions/smoke is a link or a file, not a folder"),
    # -- sizes (issue 19: a 2 GiB gzip bomb crashed; honest records plus 1.1 GiB of blanks passed)
    ("gzip-bomb-2-gib-of-zeros", lambda s, t: _gz(s, gzip_repeat(b"", bytes(MiB), 2048)), "episodes.jsonl.gz:1: line longer than MAX_LINE_BYTES = 8 MiB"),
    ("gzip-honest-plus-blank-lines", lambda s, t: _gz(s, gzip_repeat(s.episodes.read_bytes(), b"\n" * MiB, 1100)), f"episodes.jsonl.gz:{EPISODES + 1}: has more than {EPISODES} lines"),
    ("gzip-honest-plus-spaces", lambda s, t: _gz(s, gzip_repeat(s.episodes.read_bytes(), b" " * MiB, 1100)), f"episodes.jsonl.gz:{EPISODES + 1}: line longer than MAX_LINE_BYTES"),
    ("gzip-stored-too-large", lambda s, t: _gz(s, b"") or os.truncate(s.folder / "episodes.jsonl.gz", 65 * MiB), "episodes.jsonl.gz: is larger than MAX_GZ_BYTES = 64 MiB"),
    ("episodes-too-large", lambda s, t: os.truncate(s.episodes, 257 * MiB), "episodes.jsonl: is larger than MAX_JSONL_BYTES = 256 MiB"),
    ("line-too-long", lambda s, t: _line(s, 1, '{"task":"' + "x" * (8 * MiB) + '"}'), "episodes.jsonl:1: line longer than MAX_LINE_BYTES"),
    ("metadata-too-large", lambda s, t: _metadata(s, _honest_metadata(s) + "#" * (64 << 10)), "metadata.yaml: is larger than MAX_YAML_BYTES = 64 KiB"),
    ("run-json-too-large", lambda s, t: os.truncate(s.folder / "run.json", 5 * MiB), "run.json: is larger than MAX_JSON_BYTES = 4 MiB"),
    ("readme-too-large", lambda s, t: (s.folder / "README.md").write_text("x" * (MiB + 1)), "README.md: is larger than MAX_TEXT_BYTES = 1 MiB"),
    ("many-files", lambda s, t: [(s.folder / f"f{i}").touch() for i in range(100)], "holds more than MAX_ENTRIES = 32 entries"),
    # -- structure (issue 19: RecursionError tracebacks)
    ("metadata-deep-yaml", lambda s, t: _metadata(s, "name: " + _nested(5000) + "\n"), "metadata.yaml:1: nested deeper than MAX_DEPTH = 32"),
    ("metadata-deep-yaml-blocks", lambda s, t: _metadata(s, "".join("  " * i + "a:\n" for i in range(200))), "nested deeper than MAX_DEPTH = 32"),
    ("run-json-deep", lambda s, t: (s.folder / "run.json").write_text(_nested(50_000)), "run.json: nested deeper than MAX_DEPTH = 32"),
    ("episode-line-deep", lambda s, t: _line(s, 1, '{"task":' + _nested(50_000) + "}"), "episodes.jsonl:1: nested deeper than MAX_DEPTH = 32"),
    ("episode-line-many-items", lambda s, t: _line(s, 1, json.dumps({"steps": [0] * 100_001})), "episodes.jsonl:1: more than MAX_ITEMS = 100,000"),
    ("metadata-alias-bomb", lambda s, t: _metadata(s, "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))), "metadata.yaml:1: YAML anchors and aliases are not accepted"),
    ("metadata-python-tag", lambda s, t: _metadata(s, "name: !!python/object/apply:os.system [echo hi]\n"), "metadata.yaml:1: explicit YAML tags"),
    ("metadata-duplicate-key", lambda s, t: _metadata(s, _honest_metadata(s) + "name: Someone Else\n"), "metadata.yaml:10: repeats 'name'"),
    ("metadata-two-documents", lambda s, t: _metadata(s, _honest_metadata(s) + "---\nname: x\n"), "metadata.yaml:10: holds more than one YAML document"),
    # -- types (issue 19: TypeError tracebacks)
    ("seed-is-a-list", lambda s, t: _first_record(s, lambda r: r.update(seed=[1835504127])), "episodes.jsonl:1: seed: Input should be a valid integer"),
    ("seed-is-a-string", lambda s, t: _first_record(s, lambda r: r.update(seed="1835504127")), "episodes.jsonl:1: seed: Input should be a valid integer"),
    ("task-is-null", lambda s, t: _first_record(s, lambda r: r.update(task=None)), "episodes.jsonl:1: task: Input should be a valid string"),
    ("success-is-a-string", lambda s, t: _first_record(s, lambda r: r.update(success="yes")), "episodes.jsonl:1: success: Input should be a valid boolean"),
    ("record-is-a-list", lambda s, t: _line(s, 1, "[1, 2]"), "episodes.jsonl:1: an episode record is a JSON object, not list"),
    ("run-json-is-a-list", lambda s, t: (s.folder / "run.json").write_text("[]"), "run.json: (top level): Input should be a valid dictionary"),
    ("summary-is-a-string", lambda s, t: (s.folder / "summary.json").write_text('"all good"'), "summary.json: (top level) is 'all good'"),
    ("prompt-unknown-key", lambda s, t: s.edit_json("run.json", lambda d: d["prompt"].update(temperature=0)), "run.json: prompt is not a valid prompt config"),
    ("prompt-history-string", lambda s, t: s.edit_json("run.json", lambda d: d["prompt"].update(history="3")), "run.json: prompt is not a valid prompt config"),
    ("agent-kwargs-a-list", lambda s, t: s.edit_json("run.json", lambda d: d["agent"].update(kwargs=[])), "run.json: agent.kwargs: Input should be a valid dictionary"),
    ("metadata-is-a-list", lambda s, t: _metadata(s, "- name\n- agent\n"), "metadata.yaml: must be a mapping"),
    ("seed-out-of-range", lambda s, t: _first_record(s, lambda r: r.update(seed=10**30)), "episodes.jsonl:1: seed: Input should be less than 4294967296"),
    ("integer-of-5000-digits", lambda s, t: _line(s, 1, '{"seed":' + "9" * 5000 + "}"), "episodes.jsonl:1: is not valid JSON (ValueError)"),
    ("float-overflows", lambda s, t: _line(s, 1, s.episodes.read_text().splitlines()[0].replace('"return":-8.0', '"return":-1e999')), "episodes.jsonl:1: holds NaN, Infinity or a number too large"),
    ("nan-literal", lambda s, t: _line(s, 1, s.episodes.read_text().splitlines()[0].replace('"agent_ms":', '"agent_ms":NaN,"x":', 1)), "episodes.jsonl:1: holds NaN"),
    ("infinity-literal", lambda s, t: (s.folder / "summary.json").write_text('{"x": Infinity}'), "summary.json: holds NaN, Infinity"),
    # -- values only the replay or a range can check (issue 19: accepted)
    ("negative-timing", lambda s, t: _first_record(s, lambda r: r["steps"][0].update(agent_ms=-5.0)), "episodes.jsonl:1: steps.0.agent_ms: Input should be greater than or equal to 0"),
    ("huge-timing", lambda s, t: _first_record(s, lambda r: r["steps"][0].update(env_ms=1e12)), "episodes.jsonl:1: steps.0.env_ms: Input should be less than or equal to 86400000"),
    ("negative-tokens", lambda s, t: _first_record(s, lambda r: r["steps"][0].update(input_tokens=-1)), "steps.0.input_tokens: Input should be greater than or equal to 0"),
    ("progress-above-one", lambda s, t: _first_record(s, lambda r: r.update(progress=1.5)), "episodes.jsonl:1: progress: Input should be less than or equal to 1"),
    ("duplicate-key-success", lambda s, t: _line(s, 1, '{"success":true,' + s.episodes.read_text().splitlines()[0][1:]), "episodes.jsonl:1: repeats 'success' in one object"),
    ("unknown-record-field", lambda s, t: _first_record(s, lambda r: r.update(verified=True)), "episodes.jsonl:1: verified: Extra inputs are not permitted"),
    # -- fields reserved to maintainers
    ("metadata-key-with-escape", lambda s, t: _metadata(s, _honest_metadata(s) + '"\\e[2J\\u202e": 1\n'), "metadata.yaml: '\\x1b[2J\\u202e': Extra inputs are not permitted"),
    ("verified-self-set", lambda s, t: _metadata(s, _honest_metadata(s) + "verified: true\n"), "metadata.yaml: verified is set by the maintainers"),
    # -- the suite (issue 19: a suite of the submitter's own, resolved from the working directory)
    ("suite-of-my-own", _suite_of_my_own, "filed under 'easy.yaml', which is not a built-in suite"),
    ("suite-homoglyph", lambda s, t: _rename_suite(s, "sm\u043eke"), "filed under 'sm\\u043eke', which is not a built-in suite"),
    ("suite-with-dots", lambda s, t: _rename_suite(s, "..smoke"), "filed under '..smoke', which is not a built-in suite"),
    ("suite-case", lambda s, t: _rename_suite(s, "Smoke"), "filed under 'Smoke', which is not a built-in suite"),
    # -- names, encodings and files an attacker would try
    ("id-with-rtl-override", lambda s, t: _rename_id(s, "20261122_\u202eelcaro"), "submissions/smoke/'20261122_\\u202eelcaro': the folder's name must be ASCII"),
    ("id-with-newline", lambda s, t: _rename_id(s, "x\nok smoke 20261122_oracle"), "submissions/smoke/'x\\nok smoke 20261122_oracle': the folder's name must be"),
    ("file-with-terminal-escape", lambda s, t: (s.folder / "\x1b[2Jnotes.md").write_text("x"), "unexpected file '\\x1b[2Jnotes.md'"),
    ("file-zip-slip-name", lambda s, t: (s.folder / "..\\..\\run.json").write_text("{}"), "unexpected file '..\\\\..\\\\run.json'"),
    ("file-case-variant", lambda s, t: (s.folder / "Metadata.yaml").write_text("name: x\n"), "unexpected file 'Metadata.yaml'"),
    ("pickle", lambda s, t: (s.folder / "model.pkl").write_bytes(b"\x80\x04."), "unexpected file 'model.pkl'"),
    ("hook", lambda s, t: (s.folder / "conftest.py").write_text("import os"), "unexpected file 'conftest.py'"),
    ("subfolder", lambda s, t: (s.folder / "extra").mkdir(), "unexpected file 'extra'"),
    ("missing-summary", lambda s, t: (s.folder / "summary.json").unlink(), "missing summary.json"),
    ("run-json-with-bom", lambda s, t: (s.folder / "run.json").write_bytes(b"\xef\xbb\xbf" + (s.folder / "run.json").read_bytes()), "run.json: starts with a byte-order mark"),
    ("summary-not-utf8", lambda s, t: (s.folder / "summary.json").write_bytes(b'{"suite": "\xff\xfe"}'), "summary.json: is not UTF-8 text (at byte 11)"),
    ("readme-not-utf8", lambda s, t: (s.folder / "README.md").write_bytes(b"caf\xe9"), "README.md: is not UTF-8 text"),
    ("episode-line-not-utf8", lambda s, t: s.episodes.write_bytes(b'{"task":"\xc0\xaf"}\n'), "episodes.jsonl:1: is not UTF-8 text"),
    ("empty-metadata", lambda s, t: _metadata(s, ""), "metadata.yaml: must be a mapping of name, agent, ... (see leaderboards/README.md), not NoneType"),
    ("empty-run-json", lambda s, t: (s.folder / "run.json").write_text(""), "run.json: is not valid JSON (Expecting value at line 1 column 1)"),
    ("empty-episodes", lambda s, t: s.episodes.write_text(""), f"episodes.jsonl: lacks {EPISODES} of the suite's episodes"),
    ("blank-line-inside", lambda s, t: s.episodes.write_text(s.episodes.read_text().replace("\n", "\n\n", 1)), "episodes.jsonl:2: blank line"),
    ("padded-line", lambda s, t: _line(s, 1, "   " + s.episodes.read_text().splitlines()[0]), "episodes.jsonl:1: whitespace around the JSON object"),
    ("gzip-of-a-gzip", lambda s, t: _gz(s, gzip.compress(gzip.compress(s.episodes.read_bytes()))), "episodes.jsonl.gz:1: is not UTF-8 text"),
    ("gzip-truncated", lambda s, t: _gz(s, gzip.compress(s.episodes.read_bytes())[:-20]), "episodes.jsonl.gz: is not a valid gzip file (it ends early)"),
    ("gzip-trailing-garbage", lambda s, t: _gz(s, gzip.compress(s.episodes.read_bytes()) + b"garbage!"), "episodes.jsonl.gz: is not a valid gzip file"),
    ("gzip-not-gzip", lambda s, t: _gz(s, b"not gzip at all"), "episodes.jsonl.gz: is not a valid gzip file"),
    ("json-with-comment", lambda s, t: (s.folder / "run.json").write_text("// hi\n{}"), "run.json: is not valid JSON"),
    ("task-with-rtl", lambda s, t: _first_record(s, lambda r: r.update(task="numberline\u202e/text")), "episodes.jsonl:1: ('numberline\\u202e/text', 1835504127) is not an episode"),
    ("task-lone-surrogate", lambda s, t: _line(s, 1, s.episodes.read_text().splitlines()[0].replace('"task":"numberline/image+text"', '"task":"\\ud800"')), "episodes.jsonl:1: task: Input should be a valid string, unable to parse raw data as a unicode string"),
]


@pytest.mark.parametrize(("damage", "reason"), [(d, r) for _, d, r in HOSTILE], ids=[i for i, _, _ in HOSTILE])
def test_hostile_submission_is_rejected_with_its_reason(submission, tmp_path, monkeypatch, damage, reason):
    monkeypatch.chdir(tmp_path)  # some damage changes the working directory: restore it after
    damage(submission, tmp_path)
    report = validate_submission(submission.folder)
    assert not report.ok, "the hostile submission passed"
    assert report.problems == [report.problems[0]]  # one message
    assert reason in report.problems[0]
    assert SECRET not in report.problems[0]  # a file it refused is never echoed
    assert report.problems[0].isascii() and report.problems[0].isprintable()  # no escapes, overrides or surrogates
    assert report.summary is None and report.metadata is None


def test_symlinked_submission_folder_is_listed_and_rejected(submission, tmp_path):
    from rl4vlm_gym.harness.leaderboard import find_submissions

    _link_folder(submission, tmp_path)
    (submission.folder.parent / "notes.txt").write_text("x")  # a stray file: listed, and rejected
    root = submission.folder.parents[2]
    found = find_submissions(root)
    assert found == sorted([submission.folder, submission.folder.parent / "notes.txt"])
    assert all(not validate_submission(f, replay=False).ok for f in found)


def test_crlf_line_ends_are_accepted(submission):
    """What an honest submission may look like after a Windows checkout."""
    submission.episodes.write_bytes(submission.episodes.read_bytes().replace(b"\n", b"\r\n"))
    assert validate_submission(submission.folder, replay=False).ok


# -- memory: the bombs through the command, in a process of their own --------------------------------


def test_bombs_are_rejected_by_the_command_in_bounded_memory(new_submission, tmp_path, monkeypatch):
    """The submissions that took 2-4 GB before (and a few more) are rejected by `rl4vlm-gym
    leaderboard validate` with exit code 1, each with its reason, in under 1 GiB of memory."""
    monkeypatch.chdir(tmp_path)
    table = {i: (d, r) for i, d, r in HOSTILE}
    bombs = [
        "gzip-bomb-2-gib-of-zeros",
        "gzip-honest-plus-blank-lines",
        "gzip-honest-plus-spaces",
        "episodes-link-dev-zero",
        "episodes-too-large",
        "line-too-long",
        "episode-line-deep",
        "episode-line-many-items",
        "run-json-deep",
        "metadata-deep-yaml",
        "metadata-alias-bomb",
    ]
    folders = []
    for bomb in bombs:
        s = new_submission(bomb)
        table[bomb][0](s, tmp_path)
        folders.append(str(s.folder))
    command = Path(sys.executable).with_name("rl4vlm-gym")
    # A small launcher process starts the command and reports its peak memory: measured from this
    # (large) pytest worker, the peak would count the worker's pages copied at the fork.
    launcher = (
        "import json, resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdout=open(sys.argv[0] + '.out', 'wb'), stderr=subprocess.STDOUT, timeout=600)\n"
        "print(json.dumps([done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
    )
    script = tmp_path / "launch.py"
    script.write_text(launcher)
    done = subprocess.run(
        [sys.executable, str(script), str(command), "leaderboard", "validate", *folders],
        capture_output=True, text=True, timeout=660, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    returncode, maxrss = json.loads(done.stdout)
    output = (tmp_path / "launch.py.out").read_text()
    assert returncode == 1, output
    assert "Traceback" not in output and len(re.findall(r"^rejected ", output, re.MULTILINE)) == len(bombs)
    flat = " ".join(output.split())
    for bomb in bombs:
        assert table[bomb][1] in flat, bomb
    peak = maxrss * 1024  # KiB
    assert peak < 1 << 30, f"validating the bombs peaked at {peak / 2**20:.0f} MiB"


# -- fuzz: any mutation of an honest submission gets a verdict ---------------------------------------

_FILES = ("metadata.yaml", "run.json", "summary.json", "episodes.jsonl")
_FAST_LINES = 8  # NumberLine, EZPoints and Blackjack: the replay reaches no slow env before them


def _random_value(rng: np.random.Generator) -> Any:
    return [
        None,
        True,
        False,
        0,
        -1,
        2**64,
        -(2**70),
        1e308,
        -0.0,
        0.5,
        "",
        "x" * int(rng.integers(1, 300)),
        "\u202e\u0000\ud7ff\U0001f600",
        [],
        [1, "a", None],
        {},
        {"k": [{"k": {}}]},
        "2026-11-22",
        "numberline/text",
    ][int(rng.integers(19))]


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            found += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _paths(v, (*path, i))
    return found


def _mutate_tree(data: Any, rng: np.random.Generator) -> Any:
    """Change one node: a depth first, uniformly, then a node at that depth (the root and the
    top-level fields, which every check reads, are hit as often as the deep ones)."""
    by_depth: dict[int, list[tuple]] = {}
    for path in _paths(data):
        by_depth.setdefault(len(path), []).append(path)
    level = by_depth[sorted(by_depth)[int(rng.integers(len(by_depth)))]]
    path = level[int(rng.integers(len(level)))]
    if not path:
        return _random_value(rng)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    kind = int(rng.integers(4))
    if kind == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == 1 and isinstance(parent, dict):
        parent[["verified", "extra", "steps", "success", "seed"][int(rng.integers(5))]] = _random_value(rng)
    elif kind == 2 and isinstance(parent, list):
        parent.insert(int(rng.integers(len(parent) + 1)), _random_value(rng))
    else:
        parent[path[-1]] = _random_value(rng)
    return data


def _mutate(s, rng: np.random.Generator) -> bool:
    """One random mutation; returns whether the replay reaches only fast envs."""
    name = _FILES[int(rng.integers(len(_FILES)))]
    path = s.folder / name
    if rng.random() < 0.4:  # bytes: flip, insert or delete a few
        data = bytearray(path.read_bytes())
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(len(data)))
            op = int(rng.integers(3))
            if op == 0:
                data[at] = int(rng.integers(256))
            elif op == 1:
                data[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8))
            else:
                del data[at : at + int(rng.integers(1, 8))]
        path.write_bytes(bytes(data))
        return name != "episodes.jsonl" or at < sum(len(x) + 1 for x in path.read_bytes().split(b"\n")[:_FAST_LINES])
    if name == "episodes.jsonl":  # fields and types of one record
        lines = path.read_text().splitlines()
        i = int(rng.integers(len(lines)))
        lines[i] = json.dumps(_mutate_tree(json.loads(lines[i]), rng))
        path.write_text("\n".join(lines) + "\n")
        return i < _FAST_LINES
    if name == "metadata.yaml":
        path.write_text(yaml.safe_dump(_mutate_tree(yaml.safe_load(path.read_text()), rng), allow_unicode=True))
    else:
        path.write_text(json.dumps(_mutate_tree(json.loads(path.read_text()), rng)))
    return True


@pytest.mark.parametrize("chunk", range(4))
def test_fuzz_every_mutation_gets_a_verdict(new_submission, chunk):
    """Seeded random mutations of bytes, fields and types: ``validate`` returns a report every time
    (a traceback here is a bug), and rejects all but the mutations that change nothing it checks."""
    rng = np.random.default_rng(20261124 + chunk)
    for case in range(50):
        s = new_submission(f"fuzz{case}")
        fast = _mutate(s, rng)
        report = validate_submission(s.folder, replay=fast)  # replaying slow envs is left to the honest tests
        assert isinstance(report, ValidationReport)
        assert report.ok or (len(report.problems) == 1 and report.problems[0])
        shutil.rmtree(s.folder)
