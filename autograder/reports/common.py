"""Shared rules of every report: part columns, skipped parts, graded totals and number formatting."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.results import PartResult, SubmissionResult

if TYPE_CHECKING:
    from autograder.config import PartConfig

# grader.yml's `parts` (the loaded configuration's `.parts`): part name -> title, points, checks.
ConfigParts = Mapping[str, "PartConfig"]

SKIPPED = "skipped"  # shown for a part that was not graded in this run (never as 0)
NOT_PRESENT = "-"  # shown for a part the result does not mention at all
ASSETS_DIR = Path(__file__).resolve().parent / "assets"  # the pages' inline CSS and script


@dataclass(frozen=True)
class PartColumn:
    """One part as a report column: its key in grader.yml, its title and configured points."""

    name: str
    title: str
    points: float | None


def part_columns(config_parts: ConfigParts | None, results: Iterable[SubmissionResult] = ()) -> list[PartColumn]:
    """The report's part columns: grader.yml order first, then unknown parts in first-seen order.

    Args:
        config_parts: `config.parts` (name -> title, points, checks); None uses only results.
        results: the results to render (parts missing from the config are appended).

    Returns:
        One column per part, without duplicates.
    """
    columns = [PartColumn(name, part.title or name, part.points) for name, part in (config_parts or {}).items()]
    known = {column.name for column in columns}
    for result in results:
        for part in result.parts:
            if part.part not in known:
                known.add(part.part)
                columns.append(PartColumn(part.part, part.title, part.max_points))
    return columns


def find_part(result: SubmissionResult, name: str) -> PartResult | None:
    """The result's part called `name`, or None when the result does not contain it.

    Args:
        result: one graded submission.
        name: the part's key in grader.yml.

    Returns:
        The PartResult, or None.
    """
    return next((part for part in result.parts if part.part == name), None)


def graded_part(result: SubmissionResult, name: str) -> PartResult | None:
    """The result's part called `name` (its key in grader.yml) if graded in this run; None if absent or skipped."""
    part = find_part(result, name)
    return None if part is None or part.skipped else part


def ordered_parts(result: SubmissionResult, columns: Sequence[PartColumn]) -> list[PartResult]:
    """The result's parts in the columns' (grader.yml) order; parts without a column follow in result order."""
    order = {column.name: index for index, column in enumerate(columns)}
    return sorted(result.parts, key=lambda part: order.get(part.part, len(order)))


def part_possible(part: PartResult) -> float:
    """Points a part could earn in this run: the sum of its checks that were not skipped.

    Args:
        part: one part of a result.

    Returns:
        Its possible points (0 for a skipped part; `max_points` for a part without checks,
        e.g. the zeroed parts of a grader error).
    """
    if not part.checks:
        return part.max_points
    return sum(check.max_points for check in part.checks if not check.skipped)


def final_total(result: SubmissionResult) -> float:
    """The points the student ends with: the graded total less the late penalty, when one was assessed.

    Args:
        result: one graded submission.

    Returns:
        `result.late["final_points"]`, else `result.points`.
    """
    if result.late is not None:
        return float(result.late["final_points"])
    return result.points


def graded_possible(result: SubmissionResult) -> float:
    """Points possible over the parts graded in this run (skipped parts excluded).

    Args:
        result: one graded submission.

    Returns:
        The sum of `part_possible` over its parts.
    """
    return sum(part_possible(part) for part in result.parts)


def format_points(value: float) -> str:
    """Points for humans: whole numbers without decimals, others with at most two.

    Args:
        value: a number of points.

    Returns:
        e.g. "6", "2.5", "0.33".
    """
    if math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def format_score(points: float, possible: float) -> str:
    """A compact "points/possible" pair.

    Args:
        points: points earned.
        possible: points possible.

    Returns:
        e.g. "17/20".
    """
    return f"{format_points(points)}/{format_points(possible)}"


def part_score(part: PartResult) -> str:
    """A part's score as reports show it: "points/possible", or "skipped" when not graded in this run."""
    return SKIPPED if part.skipped else format_score(part.points, part_possible(part))


def part_cell(result: SubmissionResult, name: str) -> str:
    """The text of one part cell in a summary table.

    Args:
        result: one graded submission.
        name: the part's key in grader.yml.

    Returns:
        "points/possible", "skipped", or "-" when the result lacks the part.
    """
    part = find_part(result, name)
    return NOT_PRESENT if part is None else part_score(part)


def csv_text(rows: Iterable[Sequence[object]]) -> str:
    """Rows (header first; student-derived cells already through `md_safe.csv_cell`) as CSV text, "\\n" line ends."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def write_csv(path: Path, text: str) -> None:
    """Write CSV text with a UTF-8 BOM: Excel, what Korean staff open the tables with, then reads their Hangul.

    Args:
        path: the destination.
        text: the table, e.g. from `csv_text`.
    """
    path.write_text(text, encoding="utf-8-sig", newline="")


def skip_reason(part: PartResult) -> str:
    """Why a skipped part was not graded, from its checks' messages (may be empty).

    Args:
        part: a skipped part.

    Returns:
        The first non-empty check message, or "".
    """
    return next((check.message for check in part.checks if check.message), "")


def page_asset(name: str) -> str:
    """A style sheet or script that report pages inline (a page holds its own: no request leaves it).

    Args:
        name: its file name in autograder/reports/assets/, e.g. "feedback.css".

    Returns:
        The file's text.
    """
    return (ASSETS_DIR / name).read_text(encoding="utf-8")
