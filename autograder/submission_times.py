"""Submission times from what a route knows: a times CSV (collect_submissions' manifest), Gradescope's
metadata, or, only when asked, the file's modification time."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.config import LateConfig, parse_moment
from autograder.late import SOURCE_FILE_MTIME, SOURCE_GIT_COMMIT, SOURCE_GRADESCOPE, SOURCE_TIMES_FILE, SubmissionTime

# collect_submissions' manifest.csv: its time column is a commit's committer date.
COMMIT_TIME_COLUMN = "commit_date"


class TimesError(ValueError):
    """A times file or metadata file cannot be used; the message names the file and the problem."""


def read_times_file(
    path: Path, file_column: str = "file", time_column: str = COMMIT_TIME_COLUMN
) -> dict[str, SubmissionTime]:
    """Read submission times from a CSV, keyed by file name (the submission's name, without folders).

    Rows with an empty file or time cell are skipped (e.g. a repository with no commit before the
    deadline). A time without a time zone, or one file name on two rows, is an error: guessing
    either would misjudge lateness.

    Args:
        path: the CSV (UTF-8, a header row).
        file_column: the column naming the submission file (a path; only its last part counts).
        time_column: the column holding the ISO 8601 time.

    Returns:
        File name -> time (source git-commit for the manifest's commit_date, else times-file).

    Raises:
        TimesError: a column is missing, a time is not ISO 8601 with a zone, or a name repeats.
    """
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
            header = rows[0].keys() if rows else []
    except OSError as error:
        raise TimesError(f"{path}: cannot read ({error.strerror})") from None
    if rows and (file_column not in header or time_column not in header):
        raise TimesError(f"{path}: needs the columns {file_column!r} and {time_column!r} (has: {', '.join(header)})")
    source = SOURCE_GIT_COMMIT if time_column == COMMIT_TIME_COLUMN else SOURCE_TIMES_FILE
    times: dict[str, SubmissionTime] = {}
    for line, row in enumerate(rows, start=2):
        name, when = Path(row.get(file_column) or "").name, (row.get(time_column) or "").strip()
        if not name or not when:
            continue
        try:
            parse_moment(when)
        except ValueError as error:
            raise TimesError(f"{path}, line {line}: {time_column}: {error}") from None
        if name in times:
            raise TimesError(f"{path}, line {line}: {name!r} appears twice; which time counts is unclear")
        times[name] = SubmissionTime(when, source, f"{path.name}: {time_column}")
    return times


def mtime_of(path: Path) -> SubmissionTime:
    """The file's modification time, labelled as such (copying or unzipping a file changes it).

    Args:
        path: the submission file.

    Returns:
        The time in UTC, source file-mtime.
    """
    moment = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return SubmissionTime(moment.isoformat(timespec="seconds"), SOURCE_FILE_MTIME, path.name)


def submission_times(paths: Mapping[str, Path], late: LateConfig) -> dict[str, SubmissionTime]:
    """Each submission's time from the sources grader.yml's late section names, in order: the
    times file, then (only with use_file_mtime) the modification time; else unknown.

    Args:
        paths: a key of your choice (e.g. the report stem) -> the submission file.
        late: grader.yml's late section.

    Returns:
        The same keys -> time (SubmissionTime() when unknown).

    Raises:
        TimesError: the times file cannot be used.
    """
    known = read_times_file(Path(late.times_file), late.times_file_column, late.time_column) if late.times_file else {}
    times = {}
    for key, path in paths.items():
        if path.name in known:
            times[key] = known[path.name]
        elif late.use_file_mtime and path.is_file():
            times[key] = mtime_of(path)
        else:
            times[key] = SubmissionTime()
    return times


def gradescope_time(metadata_path: Path) -> SubmissionTime:
    """The submission time and due date in Gradescope's submission_metadata.json.

    `created_at` is the submission time; the due date is the first user's own
    `assignment.due_date` when the file has one (an extension), else the assignment's `due_date`.

    Args:
        metadata_path: /autograder/submission_metadata.json.

    Returns:
        The time (unknown when the file is missing).

    Raises:
        TimesError: the file exists but is not the JSON Gradescope documents, or a time is not
            ISO 8601 with a zone.
    """
    if not metadata_path.is_file():
        return SubmissionTime()
    try:
        metadata: Any = json.loads(metadata_path.read_text(encoding="utf-8"))
        created = str(metadata.get("created_at") or "")
        due = _due_date(metadata)
        for moment in (created, due):
            if moment:
                parse_moment(moment)
    except (OSError, ValueError, AttributeError) as error:
        raise TimesError(f"{metadata_path}: {error}") from None
    source = SOURCE_GRADESCOPE if created else SubmissionTime().source
    return SubmissionTime(created, source, metadata_path.name if created else "", due)


def _due_date(metadata: dict[str, Any]) -> str:
    users = metadata.get("users") or []
    own = users[0].get("assignment") if users and isinstance(users[0], dict) else None
    if isinstance(own, dict) and own.get("due_date"):
        return str(own["due_date"])
    assignment = metadata.get("assignment")
    return str(assignment.get("due_date") or "") if isinstance(assignment, dict) else ""
