"""Regrade diff: the students whose points changed between two gradings, by part and check, as CSV."""

# One row per changed figure, grouped by submission: first its total (the final points, after
# any late penalty), then each changed part followed by its changed checks. A submission graded
# on one side only appears with the other side empty. Column names come from the catalogue
# (`regrade.column.*`): the table is what an instructor publishes with a regrade announcement.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autograder.i18n import t
from autograder.reports.common import csv_text, final_total, find_part, format_points
from autograder.reports.md_safe import csv_cell
from autograder.results import SubmissionResult

REGRADE_NAME = "regrade.csv"
LEVEL_TOTAL, LEVEL_PART, LEVEL_CHECK = "total", "part", "check"
TOLERANCE = 1e-9  # points are sums of grader.yml's numbers; closer than this is no change


@dataclass(frozen=True)
class PointsChange:
    """One figure that differs between the old and the new grading (None: not graded on that side)."""

    submission: str
    level: str  # LEVEL_TOTAL | LEVEL_PART | LEVEL_CHECK
    part: str  # "" for the total
    check: str  # "" for a total or part row
    old: float | None
    new: float | None

    @property
    def change(self) -> float | None:
        """new - old (None when either side is missing)."""
        return None if self.old is None or self.new is None else self.new - self.old


def _differs(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return old is not new
    return abs(old - new) > TOLERANCE


def _points(result: SubmissionResult | None, part_name: str) -> tuple[float | None, dict[str, float | None]]:
    """One side's points of a part (None: not graded) and of its checks (None: skipped)."""
    part = find_part(result, part_name) if result is not None else None
    if part is None:
        return None, {}
    return None if part.skipped else part.points, {c.check_id: None if c.skipped else c.points for c in part.checks}


def diff_submission(label: str, old: SubmissionResult | None, new: SubmissionResult | None) -> list[PointsChange]:
    """The changed figures of one submission (none when its points are the same everywhere).

    Args:
        label: the submission's label.
        old: its earlier result (None: not graded then).
        new: its new result (None: not graded now).

    Returns:
        The total row, then per changed part its row and its changed checks' rows; [] when nothing changed.
    """
    rows: list[PointsChange] = []
    for part_name in dict.fromkeys(part.part for result in (new, old) if result is not None for part in result.parts):
        (old_part, old_checks), (new_part, new_checks) = _points(old, part_name), _points(new, part_name)
        checks = [
            PointsChange(label, LEVEL_CHECK, part_name, check, old_checks.get(check), new_checks.get(check))
            for check in dict.fromkeys([*new_checks, *old_checks])
            if _differs(old_checks.get(check), new_checks.get(check))
        ]
        if checks or _differs(old_part, new_part):
            rows.append(PointsChange(label, LEVEL_PART, part_name, "", old_part, new_part))
            rows.extend(checks)
    old_total = None if old is None else final_total(old)
    new_total = None if new is None else final_total(new)
    if rows or _differs(old_total, new_total):
        rows.insert(0, PointsChange(label, LEVEL_TOTAL, "", "", old_total, new_total))
    return rows


def diff_results(old: Mapping[str, SubmissionResult], new: Mapping[str, SubmissionResult]) -> list[PointsChange]:
    """Every changed figure between two gradings of a class, submissions in label order.

    Args:
        old: label -> earlier result.
        new: label -> new result.

    Returns:
        The rows of `diff_submission` for every label on either side.
    """
    return [row for label in sorted({*old, *new}) for row in diff_submission(label, old.get(label), new.get(label))]


def _cell(points: float | None) -> str:
    return "" if points is None else format_points(points)


def render_regrade_csv(changes: Sequence[PointsChange]) -> str:
    """The regrade table as CSV text (header in the feedback language).

    Args:
        changes: from `diff_results`.

    Returns:
        CSV text with "\\n" line endings.
    """
    header = [t(f"regrade.column.{key}") for key in ("submission", "level", "part", "check", "old", "new", "change")]
    rows = [
        [
            change.submission,
            t(f"regrade.level.{change.level}"),
            change.part,
            change.check,
            _cell(change.old),
            _cell(change.new),
            _cell(change.change),  # no "+": a spreadsheet would read a formula
        ]
        for change in changes
    ]
    # labels are student-chosen file names
    return csv_text([header, *([csv_cell(cell) for cell in row] for row in rows)])
