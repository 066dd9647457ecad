"""Package a finished evaluation run as a leaderboard submission, and validate it as the board does.

``rl4vlm-gym submit RUN_DIR OUT_DIR --name NAME --contact EMAIL`` (:func:`make_submission`) turns
the folder ``rl4vlm-gym eval`` wrote into ``submissions/<suite>/<id>/`` (see
:mod:`rl4vlm_gym.harness.leaderboard` for what one holds):

- it copies only what a submission holds: ``run.json`` and ``summary.json`` byte for byte, and
  the episodes, gzipped (deterministically: the same run gives the same bytes) or as they are;
  the report, its plots and anything else in the run folder stay behind;
- it writes ``metadata.yaml`` from the given fields, checked by the board's own schema
  (:class:`~rl4vlm_gym.harness.leaderboard.Metadata`) before anything is written, with ``agent``
  taken from ``run.json``, and an optional ``README.md``;
- it refuses, before writing anything and saying what to do, a run that a board would reject
  for what it is: not of a built-in suite, cut (``eval --task/--limit/--seeds``), unfinished,
  or of another version of the suite;
- it validates the folder with :func:`~rl4vlm_gym.harness.leaderboard.validate_submission`, the
  board's validator (replaying every episode unless told not to), and removes what it wrote if
  the folder is rejected.

The run folder is read through :class:`~rl4vlm_gym.harness.untrusted.UntrustedFolder`: a link
(the folder itself or any file read) is refused unfollowed, and every file is read within the
board's size limits, so what is copied is what the validator will accept to read.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rl4vlm_gym.harness.leaderboard import Metadata, ValidationReport, validate_submission
from rl4vlm_gym.harness.suite import Suite, SuiteError, builtin_suites, load_suite
from rl4vlm_gym.harness.untrusted import MAX_GZ_BYTES, MAX_JSON_BYTES, MAX_JSONL_BYTES, MAX_TEXT_BYTES, Refused, UntrustedFolder
from rl4vlm_gym.prompts import PromptConfig

__all__ = ["SubmitError", "make_submission"]

_EPISODES = ("episodes.jsonl", "episodes.jsonl.gz")


class SubmitError(ValueError):
    """The run cannot become a submission, or the submission was rejected; the message says what to do."""


def make_submission(
    run: str | os.PathLike[str],
    out: str | os.PathLike[str],
    metadata: Mapping[str, Any],
    *,
    readme: str | None = None,
    replay: bool = True,
    compress: bool = True,
) -> ValidationReport:
    """Write the submission of the finished run ``run`` into ``out`` and validate it.

    Args:
        run: a run folder written by ``rl4vlm-gym eval`` (:func:`~rl4vlm_gym.harness.runner.run_suite`).
        out: the submission's folder, ``.../submissions/<suite>/<id>``: ``<suite>`` is the run's
            suite; it must not exist, or be empty.
        metadata: the fields of ``metadata.yaml`` but ``agent`` (read from ``run.json``); ``date``
            defaults to today (UTC).
        readme: the text of an optional ``README.md``.
        replay: replay every episode while validating, as the board's CI does (minutes for large
            suites); ``False`` checks everything else.
        compress: write ``episodes.jsonl.gz`` (as the committed rows are) rather than ``episodes.jsonl``.

    Returns:
        The validator's report (``ok``; its ``summary`` is the board's row).

    Raises:
        SubmitError: the run is not a finished run of a built-in suite (cut, unfinished, another
            version), the metadata or ``out`` is unusable, or the validator rejected the folder
            (which is then removed); the message says what to do.
    """
    run_dir, out_dir = Path(run), Path(out)
    try:
        with UntrustedFolder(run_dir, str(run_dir)) as files:
            manifest, suite = _check_run(files, run_dir)
            fields = _metadata(metadata, manifest["agent"]["name"])
            _check_out(out_dir, suite)
            episodes = next(name for name in _EPISODES if _exists(files, name))
            blobs = {name: files.read_bytes(name, MAX_JSON_BYTES, "MAX_JSON_BYTES") for name in ("run.json", "summary.json")}
            written = _write(out_dir, files, episodes, len(suite.episodes), blobs, fields, readme, compress)
    except Refused as err:
        raise SubmitError(f"{run_dir}: {err}" if not str(err).startswith(str(run_dir)) else str(err)) from None
    try:
        report = validate_submission(out_dir, replay=replay)
    except BaseException:  # Ctrl-C during a long replay: leave no half-checked folder that blocks the next try
        _remove(out_dir, written)
        raise
    if not report.ok:
        _remove(out_dir, written)
        raise SubmitError(f"the board's validator rejected the submission (removed from {out_dir}): {report.problems[0]}")
    return report


def _exists(files: UntrustedFolder, name: str) -> bool:
    """Whether the run folder has an entry ``name`` (a link counts: reading it is then refused)."""
    return os.path.lexists(os.path.join(files.path, name))


def _check_run(files: UntrustedFolder, run: Path) -> tuple[dict[str, Any], Suite]:
    """``run.json`` and the built-in suite of a finished, whole run, or a :class:`SubmitError` saying what to do."""
    if not _exists(files, "run.json"):
        raise SubmitError(f"{run} holds no run.json: give the folder rl4vlm-gym eval wrote (its --out, by default runs/SUITE-AGENT)")
    manifest = files.read_json("run.json")
    try:
        name, prompt, agent = manifest["suite"], PromptConfig(**manifest["prompt"]), manifest["agent"]["name"]
        run_hash = manifest["protocol_hash"]
        run_tasks = {str(t["name"]): [int(seed) for seed in t["seeds"]] for t in manifest["protocol"]["tasks"]}
    except (KeyError, TypeError, ValueError) as err:
        raise SubmitError(f"{run}/run.json is not the manifest rl4vlm-gym eval writes ({type(err).__name__}: {err})") from None
    if name not in builtin_suites():
        raise SubmitError(f"{run} is a run of suite {name!r}, which is not a built-in suite: a board takes only those ({', '.join(builtin_suites())})")
    try:
        suite = load_suite(name)
    except SuiteError as err:
        raise SubmitError(str(err)) from None
    again = f"rl4vlm-gym eval --suite {name} --agent {agent} ... --out NEW_FOLDER"
    if run_hash != suite.protocol_hash(prompt):
        whole = {t.name: t.seeds for t in suite.tasks}
        played = sum(map(len, run_tasks.values()))
        within = run_tasks.keys() <= whole.keys() and all(set(seeds) <= set(whole[t]) for t, seeds in run_tasks.items())
        if within and played < len(suite.episodes):  # some of the suite's own episodes: a cut
            raise SubmitError(
                f"{run} is a cut run (eval --task, --limit or --seeds): it plays {played} of the {len(suite.episodes)} episodes of suite {name!r}, "
                f"and a board takes the whole suite. Run it whole, without those options, into another folder "
                f"({again}), and submit that run"
            )
        raise SubmitError(
            f"{run} was run with another version of suite {name!r} or of rl4vlm-gym (its protocol hash is not the suite's as "
            f"committed here, with the run's prompt): run it again with this version ({again})"
        )
    _check_finished(files, run, suite, again.replace("... --out NEW_FOLDER", f"... --out {run}"))
    return manifest, suite


def _check_finished(files: UntrustedFolder, run: Path, suite: Suite, again: str) -> None:
    """Every episode of ``suite`` is in the run's log, and its summary says so."""
    present = [name for name in _EPISODES if _exists(files, name)]
    if len(present) > 1:
        raise SubmitError(f"{run} holds both episodes.jsonl and episodes.jsonl.gz: keep the one the run wrote")
    wanted, seen = set(suite.episodes), set()
    for number, line in files.lines(present[0], max_lines=len(wanted), max_line_bytes=MAX_JSONL_BYTES) if present else ():
        try:
            record = json.loads(line)
            seen.add((record["task"], record["seed"]))
        except (ValueError, RecursionError, KeyError, TypeError):
            raise SubmitError(
                f"{run}/{present[0]}:{number} is not an episode record (a line cut short by a crash?): run the same eval command "
                f"again ({again}): it drops a cut last line, plays what is missing and writes the summary"
            ) from None
    missing = len(wanted - seen)
    if missing:
        raise SubmitError(
            f"{run} is unfinished: {len(wanted) - missing} of the {len(wanted)} episodes of suite {suite.name!r} are in. Run the same "
            f"eval command again ({again}): it resumes, plays the {missing} missing, and writes the summary; then submit"
        )
    summary = files.read_json("summary.json") if _exists(files, "summary.json") else None
    if not isinstance(summary, dict) or summary.get("complete") is not True:
        raise SubmitError(f"{run} has every episode but no summary of them all: run the same eval command again ({again}) to write it")


def _metadata(metadata: Mapping[str, Any], agent: str) -> dict[str, Any]:
    """``metadata.yaml``'s fields, checked by the board's schema (``agent`` from ``run.json``)."""
    given = {k: v for k, v in metadata.items() if v is not None}
    if "agent" in given and given["agent"] != agent:
        raise SubmitError(f"metadata: agent {given['agent']!r} is not the run's agent {agent!r} (leave it out: it is read from run.json)")
    given.setdefault("date", datetime.datetime.now(datetime.UTC).date())
    try:
        checked = Metadata.model_validate({**given, "agent": agent})
    except ValidationError as err:
        e = err.errors()[0]
        raise SubmitError(f"metadata: {'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}") from None
    return checked.model_dump(mode="json", exclude_none=True)


def _check_out(out: Path, suite: Suite) -> None:
    example = f"leaderboards/submissions/{suite.name}/{datetime.datetime.now(datetime.UTC):%Y%m%d}_NAME"
    if Path(os.path.abspath(out)).parent.name != suite.name:  # where the validator finds the suite
        raise SubmitError(f"{out}: a submission's folder is .../submissions/{suite.name}/<id> for a run of suite {suite.name!r}, e.g. {example}")
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise SubmitError(f"{out} already exists: give a new folder (e.g. {example})")


def _write(
    out: Path,
    files: UntrustedFolder,
    episodes: str,
    max_lines: int,
    blobs: Mapping[str, bytes],
    metadata: Mapping[str, Any],
    readme: str | None,
    compress: bool,
) -> list[Path]:
    """Write the submission's files (each created, never overwritten); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def create(name: str) -> Any:
        written.append(out / name)
        return open(out / name, "xb")  # noqa: SIM115 (closed by the caller's with)

    try:
        for name, data in blobs.items():
            with create(name) as f:
                f.write(data)
        with create("metadata.yaml") as f:
            f.write(yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True).encode())
        if readme is not None:
            if len(readme.encode()) > MAX_TEXT_BYTES:
                raise SubmitError(f"the README is larger than the board takes (MAX_TEXT_BYTES = {MAX_TEXT_BYTES // 1024} KiB)")
            with create("README.md") as f:
                f.write(readme.encode())
        if episodes.endswith(".gz") or not compress:  # a run compressed already, or copied as it is
            with create(episodes) as f:
                limit, rule = (MAX_GZ_BYTES, "MAX_GZ_BYTES") if episodes.endswith(".gz") else (MAX_JSONL_BYTES, "MAX_JSONL_BYTES")
                f.write(files.read_bytes(episodes, limit, rule))
        else:  # mtime 0 and no file name in the header: the same run gives the same bytes
            with create("episodes.jsonl.gz") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
                for _, line in files.lines(episodes, max_lines=max_lines, max_line_bytes=MAX_JSONL_BYTES):
                    f.write(line + b"\n")
    except BaseException:
        _remove(out, written)
        raise
    return written


def _remove(out: Path, written: list[Path]) -> None:
    """Remove the files this module wrote, and ``out`` if that leaves it empty."""
    for path in written:
        path.unlink(missing_ok=True)
    try:
        out.rmdir()
    except OSError:  # not empty (someone else's file) or gone: leave it
        pass
