"""Grades for a learning management system: Canvas's gradebook import CSV and a plain long CSV."""

# Canvas imports a CSV laid out like its own gradebook export: the columns Student, ID, SIS User
# ID, SIS Login ID and Section identify the student (rows are matched to the course's students by
# them), and every further column is an assignment whose cells are the points. A header naming an
# existing assignment as Canvas exports it ("Title (1234)") updates that assignment; another name
# creates a new one. The roster the course exports from Canvas (Grades > Export) already has the
# five columns; it is read here and its rows are copied as they are, so matching stays Canvas's.

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.reports.common import csv_text, final_total, format_points
from autograder.reports.md_safe import csv_cell
from autograder.results import SubmissionResult

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_NAME = "canvas_import.csv"
LONG_NAME = "grades_long.csv"
LONG_COLUMNS = ("student", "assignment", "part", "points")
LATE_PENALTY_PART = "late_penalty"  # the long CSV's row of the penalty (negative points)
# Canvas's export has a row of points possible (and sometimes a muted row) under the header.
NON_STUDENT_ROWS = frozenset({"points possible", ""})


class RosterError(ValueError):
    """The roster cannot be used; the message names the file and the problem."""


@dataclass
class Roster:
    """The course's students as Canvas exports them."""

    rows: list[dict[str, str]]
    match_column: str

    def key_of(self, row: dict[str, str]) -> str:
        """The value a submission's name is matched against (case-folded, trimmed)."""
        return row.get(self.match_column, "").strip().casefold()


@dataclass
class Matching:
    """Which submission belongs to which roster row."""

    by_row: dict[int, SubmissionResult] = field(default_factory=dict)  # roster row index -> result
    unmatched: list[str] = field(default_factory=list)  # submissions matching no roster row
    ambiguous: list[str] = field(default_factory=list)  # students with several submissions (left blank)


def read_roster(path: Path, match_column: str = "SIS Login ID") -> Roster:
    """Read a Canvas gradebook export (or any CSV with its five student columns).

    Args:
        path: the CSV the course exported.
        match_column: the column holding the name each submission file is called by (its stem).

    Returns:
        The student rows (Canvas's "Points Possible" row left out).

    Raises:
        RosterError: the file cannot be read or lacks a needed column.
    """
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:  # Canvas writes a BOM
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            rows = [dict(row) for row in reader]
    except OSError as error:
        raise RosterError(f"{path}: cannot read ({error.strerror})") from None
    needed = [column for column in (*CANVAS_ID_COLUMNS, match_column) if column not in header]
    if needed:
        raise RosterError(f"{path}: missing column(s) {', '.join(needed)} (has: {', '.join(header)})")
    students = [row for row in rows if (row.get("Student") or "").strip().casefold() not in NON_STUDENT_ROWS]
    return Roster(students, match_column)


def match(roster: Roster, results: Sequence[SubmissionResult]) -> Matching:
    """Pair submissions with roster rows: a submission's file name without folders and extension
    (case-folded) = the roster's match column.

    Args:
        roster: from `read_roster`.
        results: the graded submissions.

    Returns:
        The matching; a student with several submissions is left unmatched (listed as ambiguous).
    """
    rows_by_key: dict[str, int] = {}
    for index, row in enumerate(roster.rows):
        if roster.key_of(row):
            rows_by_key.setdefault(roster.key_of(row), index)
    matching = Matching()
    claimed: dict[int, list[SubmissionResult]] = {}
    for result in sorted(results, key=lambda result: result.submission):
        row_index = rows_by_key.get(Path(result.submission).stem.strip().casefold())
        if row_index is None:
            matching.unmatched.append(result.submission)
        else:
            claimed.setdefault(row_index, []).append(result)
    for index, owned in claimed.items():
        if len(owned) == 1:
            matching.by_row[index] = owned[0]
        else:
            matching.ambiguous.append(roster.rows[index].get("Student", ""))
    return matching


def render_canvas_csv(roster: Roster, matching: Matching, column: str) -> str:
    """Canvas's import CSV: every roster student, the assignment column holding their final points.

    Args:
        roster: from `read_roster`.
        matching: from `match`.
        column: the assignment column's header (e.g. "Transformer, Part 2 (1234)").

    Returns:
        CSV text; a student without a (single) graded submission has an empty cell.
    """
    rows = []
    for index, row in enumerate(roster.rows):
        result = matching.by_row.get(index)
        points = "" if result is None else format_points(final_total(result))
        rows.append([csv_cell(row.get(name, "")) for name in CANVAS_ID_COLUMNS] + [points])
    return csv_text([[*CANVAS_ID_COLUMNS, column], *rows])


def render_long_csv(
    results: Sequence[SubmissionResult], assignment: str, students: dict[str, str] | None = None
) -> str:
    """One row per graded part (and one for a late penalty, negative): the rows of a student sum
    to their final points.

    Args:
        results: the graded submissions.
        assignment: the assignment's name for the `assignment` column.
        students: submission label -> the student's name in the LMS (default: the file's stem).

    Returns:
        CSV text with the columns student, assignment, part, points.
    """
    lines: list[Sequence[str]] = [LONG_COLUMNS]
    for result in sorted(results, key=lambda result: result.submission):
        student = (students or {}).get(result.submission) or Path(result.submission).stem
        rows = [(part.part, format_points(part.points)) for part in result.parts if not part.skipped]
        if result.late is not None and result.late["penalty_points"]:
            rows.append((LATE_PENALTY_PART, format_points(-result.late["penalty_points"])))
        lines += [[csv_cell(student), csv_cell(assignment), part_name, points] for part_name, points in rows]
    return csv_text(lines)
