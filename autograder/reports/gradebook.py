"""CSV gradebook, one row per submission, laid out like Otter Grader's final_grades.csv."""

# Otter 7 (otter/grade/utils.py, `merge_scores_to_df`) writes the columns `file`, one column per
# question, `total_points_earned`, `percent_correct` (earned/possible rounded to 4 digits, 0 when
# nothing is possible) and `grading_status` ("Completed", or the error that stopped grading),
# after a first row `file=points-per-question` holding the points possible. This gradebook has
# every one of those columns and adds `possible`, `status` and `grading_seconds`: `file, <parts
# in grader.yml order>, total_points_earned, possible, percent_correct, grading_status, status,
# grading_seconds`. A part skipped in this run (e.g. training not enabled) is an empty cell,
# never 0, and is not counted in `possible`. When a deadline applied (grader.yml `late`), LATE_COLUMNS
# follow: when the work was submitted and by which source, the raw points (= total_points_earned),
# the late penalty in points and the final points.

from __future__ import annotations

from collections.abc import Sequence

from autograder.reports.common import (
    ConfigParts,
    PartColumn,
    csv_text,
    format_points,
    graded_part,
    graded_possible,
    part_columns,
    part_possible,
)
from autograder.reports.md_safe import csv_cell
from autograder.results import STATUS_ERROR, SubmissionResult

FILE_COLUMN = "file"
POINTS_ROW_LABEL = "points-per-question"  # Otter's label of the points-possible row
TOTAL_COLUMNS = ["total_points_earned", "possible", "percent_correct", "grading_status", "status", "grading_seconds"]
LATE_COLUMNS = ["submitted_at", "time_source", "raw_points", "late_penalty", "final_points"]
OTTER_COMPLETED = "Completed"  # Otter's grading_status of a submission that was graded


def grading_status(result: SubmissionResult) -> str:
    """Otter's `grading_status`: "Completed", or what stopped the grader (a grader error).

    Args:
        result: one graded submission.

    Returns:
        The cell's text.
    """
    if result.status != STATUS_ERROR:
        return OTTER_COMPLETED  # an unreadable notebook was graded too: zero points, with reasons
    return result.notes[0] if result.notes else result.status


def _late_cells(result: SubmissionResult) -> list[str]:
    late = result.late
    if late is None:  # graded before a deadline was set: no penalty assessed
        total = format_points(result.points)
        return ["", "", total, "0", total]
    points = (format_points(late[key]) for key in ("raw_points", "penalty_points", "final_points"))
    return [late["submitted_at"], late["time_source"], *points]


def _submission_row(result: SubmissionResult, columns: Sequence[PartColumn], late: bool) -> list[str]:
    total, possible = result.points, graded_possible(result)
    return [
        result.submission,
        *("" if (part := graded_part(result, c.name)) is None else format_points(part.points) for c in columns),
        format_points(total),
        format_points(possible),
        str(round(total / possible, 4) if possible else 0),  # percent_correct
        grading_status(result),
        result.status,
        f"{result.grading_seconds:.2f}",
        *(_late_cells(result) if late else []),
    ]


def _points_row(results: Sequence[SubmissionResult], columns: Sequence[PartColumn], late: bool) -> list[str]:
    cells = []
    possible_total = 0.0
    for column in columns:
        points = max((part_possible(p) for r in results if (p := graded_part(r, column.name))), default=None)
        possible_total += points or 0
        cells.append("" if points is None else format_points(points))
    total = format_points(possible_total)
    late_cells = ["", "", total, "", total] if late else []
    return [POINTS_ROW_LABEL, *cells, total, total, "1", "--", "--", "", *late_cells]


def render_gradebook(
    results: Sequence[SubmissionResult], config_parts: ConfigParts | None = None, points_row: bool = True
) -> str:
    """The gradebook as CSV text; submission rows sorted by file name.

    Args:
        results: the graded submissions (any order).
        config_parts: `config.parts`, for the part columns and their order.
        points_row: start with Otter's "points-per-question" row (the points possible per part
            among the parts graded in this run).

    Returns:
        CSV text with "\\n" line endings.
    """
    columns = part_columns(config_parts, results)
    late = any(result.late is not None for result in results)  # a deadline applied to this batch
    points = [_points_row(results, columns, late)] if points_row and results else []
    # Student-derived cells (file names, error notes) must not run as spreadsheet formulas.
    rows = [
        [csv_cell(cell) for cell in _submission_row(result, columns, late)]
        for result in sorted(results, key=lambda result: result.submission)
    ]
    header = [FILE_COLUMN, *(column.name for column in columns), *TOTAL_COLUMNS, *(LATE_COLUMNS if late else [])]
    return csv_text([header, *points, *rows])
