"""Markdown summary (e.g. for $GITHUB_STEP_SUMMARY): an overview table, then a table per submission.

Every student-derived string (file names, messages, notes) passes through `reports.md_safe`, so
it cannot add headings, table rows, images, links or HTML. Labels come from the message
catalogue (`autograder.i18n`) in the current feedback language.
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.i18n import part_title, t
from autograder.reports.common import (
    SKIPPED,
    ConfigParts,
    PartColumn,
    format_points,
    format_score,
    graded_possible,
    ordered_parts,
    part_cell,
    part_columns,
    part_score,
    skip_reason,
)
from autograder.reports.late_text import late_lines
from autograder.reports.md_safe import md_code, md_text
from autograder.results import PartResult, SubmissionResult


def status_label(status: str) -> str:
    """A result status ("graded", "unreadable", "grader-error") in the feedback language."""
    return t(f"report.status.{status}") if status in ("graded", "unreadable", "grader-error") else status


def score_cell(cell: str) -> str:
    """A part cell of `common.part_cell` in the feedback language (numbers stay as they are)."""
    return t("report.skipped") if cell == SKIPPED else cell


def summary_cells(result: SubmissionResult, columns: Sequence[PartColumn]) -> list[str]:
    """A submission's cells in a summary table: one per part (`score_cell`), then its total."""
    return [
        *(score_cell(part_cell(result, c.name)) for c in columns),
        format_score(result.points, graded_possible(result)),
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> list[str]:
    """A GFM table; the cells must already be Markdown-safe (see `md_safe.md_text`)."""
    align = ["---:" if is_number else "---" for is_number in numeric]
    return [f"| {' | '.join(header)} |", f"|{'|'.join(align)}|", *(f"| {' | '.join(row)} |" for row in rows)]


def _failed_checks(part: PartResult, shown: set[str]) -> str:
    """The cell of failed-check messages (Markdown-safe)."""
    if part.skipped:
        return md_text(skip_reason(part), table=True)
    by_message: dict[str, list[str]] = {}
    for check in part.checks:
        if not check.passed and not check.skipped:
            by_message.setdefault(check.message or t("report.failed"), []).append(md_code(check.check_id, table=True))
    lines = []
    for message, checks in by_message.items():
        # A message shared by many checks (e.g. an unreadable file) is written once.
        text = t("report.same_message") if message in shown else message
        lines.append(f"{', '.join(checks)}: {md_text(text, table=True)}")
        shown.add(message)
    return "<br>".join(lines)


def render_submission(result: SubmissionResult, columns: Sequence[PartColumn] = (), heading_level: int = 3) -> str:
    """One submission: a heading with the total, a table of parts with points and failed-check
    messages, then load problems and notes as lists.

    Args:
        result: one graded submission.
        columns: the part columns, for grader.yml order.
        heading_level: Markdown heading level of the submission's title.

    Returns:
        Markdown text ending with a newline.
    """
    total = format_score(result.points, graded_possible(result))
    if (record := result.late) is not None and record["penalty_points"]:  # the graded points, then what counts
        total = t("late.total", raw=total, final=format_points(record["final_points"]))
    shown: set[str] = set()
    rows = [
        [
            md_text(part_title(part.part, part.title), table=True),
            score_cell(part_score(part)),
            _failed_checks(part, shown),
        ]
        for part in ordered_parts(result, columns)
    ]
    rows.append([f"**{t('report.total')}**", f"**{total}**", ""])
    header = [t("report.part"), t("report.points"), t("report.failed_checks")]
    status = md_text(status_label(result.status), table=True)
    lines = [
        f"{'#' * heading_level} {md_code(result.submission)}: {total} ({status})",
        "",
        *_table(header, rows, [False, True, False]),
    ]
    late = late_lines(result)
    if late:  # grader-made sentences (times, numbers, catalogue text): nothing student-written
        lines.extend(["", f"**{t('late.heading')}**", "", *(f"- {md_text(line)}" for line in late)])
    for key, entries in (("report.load_problems", result.load_problems), ("report.notes", result.notes)):
        if entries:
            lines.extend(["", f"**{t(key)}**", "", *(f"- {md_text(entry)}" for entry in entries)])
    return "\n".join(lines) + "\n"


def render_markdown(
    results: Sequence[SubmissionResult], config_parts: ConfigParts | None = None, title: str | None = None
) -> str:
    """The Markdown report of a batch (or a single submission).

    Args:
        results: the graded submissions, in the order to show.
        config_parts: `config.parts`, for column order and titles.
        title: the top-level heading, e.g. the assignment's name (default: "Grading summary" in
            the feedback language).

    Returns:
        Markdown text: a heading, an overview table when there are several submissions, and one
        section per submission.
    """
    columns = part_columns(config_parts, results)
    lines = [f"## {md_text(title or t('report.summary_title'), table=True)}", ""]
    if len(results) > 1:
        header = [
            t("report.submission"),
            *(md_text(part_title(column.name, column.title), table=True) for column in columns),
            t("report.total"),
            t("report.status"),
        ]
        rows = [
            [md_code(r.submission, table=True), *summary_cells(r, columns), md_text(status_label(r.status), table=True)]
            for r in results
        ]
        numeric = [False, *([True] * (len(columns) + 1)), False]
        lines.extend([*_table(header, rows, numeric), ""])
    sections = [render_submission(result, columns) for result in results]
    return "\n".join(lines) + "\n" + "\n".join(sections)
