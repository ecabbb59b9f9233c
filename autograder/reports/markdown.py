"""Markdown summary (e.g. for $GITHUB_STEP_SUMMARY): an overview table, then a table per submission."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autograder.reports.common import (
    SKIPPED, PartColumn, format_score, graded_possible, graded_total, is_skipped, part_cell,
    part_columns, part_possible, skip_reason,
)
from autograder.results import PartResult, SubmissionResult


def escape_cell(text: str) -> str:
    """Make text safe inside a Markdown table cell (pipes escaped, line breaks as <br>).

    Args:
        text: any text.

    Returns:
        The text on one line.
    """
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return "<br>".join(line.strip() for line in text.strip().splitlines())


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> list[str]:
    align = ["---:" if is_number else "---" for is_number in numeric]
    return [f"| {' | '.join(escape_cell(h) for h in header)} |", f"|{'|'.join(align)}|",
            *(f"| {' | '.join(escape_cell(c) for c in row)} |" for row in rows)]


def _failed_checks(part: PartResult, shown: set[str]) -> str:
    if is_skipped(part):
        return skip_reason(part)
    by_message: dict[str, list[str]] = {}
    for check in part.checks:
        if not check.passed and not check.skipped:
            by_message.setdefault(check.message or "failed", []).append(f"`{check.check_id}`")
    lines = []
    for message, checks in by_message.items():
        # A message shared by many checks (e.g. an unreadable file) is written once.
        lines.append(f"{', '.join(checks)}: "
                     f"{'(same message as above)' if message in shown else message}")
        shown.add(message)
    return "\n".join(lines)


def render_submission(result: SubmissionResult, columns: Sequence[PartColumn] = (),
                      heading_level: int = 3) -> str:
    """One submission: a heading with the total, a table of parts with points and failed-check
    messages, then load problems and notes as lists.

    Args:
        result: one graded submission.
        columns: the part columns, for grader.yml order.
        heading_level: Markdown heading level of the submission's title.

    Returns:
        Markdown text ending with a newline.
    """
    order = {column.name: index for index, column in enumerate(columns)}
    parts = sorted(result.parts, key=lambda part: order.get(part.part, len(order)))
    total = format_score(graded_total(result), graded_possible(result))
    shown: set[str] = set()
    rows = [[part.title,
             SKIPPED if is_skipped(part) else format_score(part.points, part_possible(part)),
             _failed_checks(part, shown)]
            for part in parts]
    rows.append(["**Total**", f"**{total}**", ""])
    lines = [f"{'#' * heading_level} `{result.submission}`: {total} ({result.status})", "",
             *_table(["Part", "Points", "Failed checks"], rows, [False, True, False])]
    for heading, entries in (("Load problems", result.load_problems), ("Notes", result.notes)):
        if entries:
            lines.extend(["", f"**{heading}**", "", *(f"- {entry}" for entry in entries)])
    return "\n".join(lines) + "\n"


def render_markdown(results: Sequence[SubmissionResult],
                    config_parts: Mapping[str, Mapping[str, Any]] | None = None,
                    title: str = "Grading summary") -> str:
    """The Markdown report of a batch (or a single submission).

    Args:
        results: the graded submissions, in the order to show.
        config_parts: `config["parts"]`, for column order and titles.
        title: the top-level heading, e.g. the assignment's name.

    Returns:
        Markdown text: a heading, an overview table when there are several submissions, and one
        section per submission.
    """
    columns = part_columns(config_parts, results)
    lines = [f"## {title}", ""]
    if len(results) > 1:
        header = ["Submission", *(column.title for column in columns), "Total", "Status"]
        rows = [[f"`{result.submission}`", *(part_cell(result, c.name) for c in columns),
                 format_score(graded_total(result), graded_possible(result)), result.status]
                for result in results]
        numeric = [False, *([True] * (len(columns) + 1)), False]
        lines.extend([*_table(header, rows, numeric), ""])
    sections = [render_submission(result, columns) for result in results]
    return "\n".join(lines) + "\n" + "\n".join(sections)
