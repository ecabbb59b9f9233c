"""Plain-text terminal report: a summary table of submissions, and per-check details for one."""

from __future__ import annotations

import shutil
import textwrap
import unicodedata
from collections.abc import Sequence

from autograder.i18n import part_title, t
from autograder.reports.common import (
    SKIPPED,
    ConfigParts,
    PartColumn,
    format_score,
    graded_possible,
    ordered_parts,
    part_columns,
    part_score,
    skip_reason,
)
from autograder.reports.late_text import late_lines
from autograder.reports.markdown import score_cell, status_label, summary_cells
from autograder.results import CheckResult, SubmissionResult

GAP = "  "
MIN_SUBMISSION_WIDTH = 12
DEFAULT_WIDTH = 100
MESSAGE_INDENT = " " * 8
SCORE_WIDTH = len(SKIPPED)


def terminal_width(width: int | None = None) -> int:
    """The width to render for: the given one, else the terminal's, else 100 columns.

    Args:
        width: an explicit width, or None.

    Returns:
        A width of at least 40 columns.
    """
    if width is None:
        width = shutil.get_terminal_size(fallback=(DEFAULT_WIDTH, 24)).columns
    return max(40, width)


def columns_of(text: str) -> int:
    """The columns `text` takes on a terminal: East Asian wide characters (Hangul) take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _pad(text: str, width: int, right: bool = False) -> str:
    """`text` padded with spaces to `width` terminal columns (ljust/rjust by columns, not characters)."""
    space = " " * max(0, width - columns_of(text))
    return space + text if right else text + space


def _truncate(text: str, width: int) -> str:
    if columns_of(text) <= width:
        return text
    while text and columns_of(text) > width - 3:
        text = text[:-1]
    return text + "..."


def _layout(rows: list[list[str]], header: list[str]) -> list[int]:
    return [max(columns_of(row[i]) for row in [header, *rows]) for i in range(len(header))]


def _render_rows(header: list[str], rows: list[list[str]], widths: list[int]) -> list[str]:
    def line(cells: list[str]) -> str:
        rest = [_pad(cell, widths[i + 1], right=True) for i, cell in enumerate(cells[1:-1])]
        return GAP.join([_pad(cells[0], widths[0]), *rest, _pad(cells[-1], widths[-1])]).rstrip()

    return [line(header), GAP.join("-" * w for w in widths), *(line(row) for row in rows)]


def render_summary(results: Sequence[SubmissionResult], columns: Sequence[PartColumn], width: int | None = None) -> str:
    """One row per submission: a cell per part ("points/possible" or "skipped"), total, status.

    Part headers are the parts' titles when the table fits the width, else P1..Pn with a legend;
    long submission names are then shortened with "...".

    Args:
        results: the submissions, in the order to show.
        columns: the part columns (see `common.part_columns`).
        width: the available width; None asks the terminal.

    Returns:
        The table as text (no colour, no trailing newline).
    """
    width = terminal_width(width)
    rows = [[result.submission, *summary_cells(result, columns), status_label(result.status)] for result in results]
    titles = [part_title(column.name, column.title) for column in columns]
    ends = [t("report.submission")], [t("report.total"), t("report.status")]
    header = [*ends[0], *titles, *ends[1]]
    widths = _layout(rows, header)
    legend: list[str] = []
    if sum(widths) + len(GAP) * (len(widths) - 1) > width:
        header = [*ends[0], *(f"P{i}" for i in range(1, len(columns) + 1)), *ends[1]]
        legend = [
            t("console.legend", number=i, title=title, name=column.name)
            for i, (column, title) in enumerate(zip(columns, titles, strict=True), 1)
        ]
        widths = _layout(rows, header)
    overflow = sum(widths) + len(GAP) * (len(widths) - 1) - width
    if overflow > 0:
        widths[0] = max(MIN_SUBMISSION_WIDTH, widths[0] - overflow)
        for row in rows:
            row[0] = _truncate(row[0], widths[0])
    return "\n".join(_render_rows(header, rows, widths) + legend)


def _wrap(text: str, width: int, indent: str = MESSAGE_INDENT) -> list[str]:
    lines = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(
            textwrap.wrap(
                paragraph, width=width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
            )
            or [indent.rstrip()]
        )
    return lines


def _check_lines(check: CheckResult, name_width: int, width: int, shown: set[str]) -> list[str]:
    if check.skipped:
        marker, score = t("console.skip"), t("report.skipped")
    else:
        marker = t("console.pass") if check.passed else t("console.fail")
        score = format_score(check.points, check.max_points)
    marker = _pad(marker, max(columns_of(t(f"console.{m}")) for m in ("pass", "fail", "skip")))
    lines = [f"  {marker}  {_pad(check.check_id, name_width)}  {_pad(score, SCORE_WIDTH, right=True)}"]
    # A message shared by many checks (e.g. an unreadable file) is printed only once.
    if check.message and (not check.passed or check.skipped) and check.message not in shown:
        lines.extend(_wrap(check.message, width))
        shown.add(check.message)
    return lines


def render_details(result: SubmissionResult, columns: Sequence[PartColumn] = (), width: int | None = None) -> str:
    """Everything about one submission: per part its checks (PASS/FAIL/SKIP) with the failure
    messages, then load problems (cell/line) and grader notes.

    Args:
        result: one graded submission.
        columns: the part columns, for grader.yml order (parts not listed follow in result order).
        width: the available width; None asks the terminal.

    Returns:
        The details as text (no trailing newline).
    """
    width = terminal_width(width)
    parts = ordered_parts(result, columns)
    total = format_score(result.points, graded_possible(result))
    lines = [f"{result.submission}: {total} ({status_label(result.status)})"]
    check_prefix = 4 + max(columns_of(t(f"console.{m}")) for m in ("pass", "fail", "skip"))
    titles = [part_title(part.part, part.title) for part in parts]
    name_width = max(
        [len(c.check_id) for p in parts for c in p.checks]
        + [columns_of(title) - check_prefix for title in titles]
        + [20]
    )
    title_width = name_width + check_prefix
    shown_messages: set[str] = set()
    for part, title in zip(parts, titles, strict=True):
        lines.extend(["", f"{_pad(title, title_width)}  {_pad(score_cell(part_score(part)), SCORE_WIDTH, right=True)}"])
        if not part.skipped:
            for check in part.checks:
                lines.extend(_check_lines(check, name_width, width, shown_messages))
        elif reason := skip_reason(part):
            lines.extend(_wrap(reason, width, indent="  "))
    for heading, entries in ((t("report.load_problems"), result.load_problems), (t("report.notes"), result.notes)):
        if entries:
            lines.extend(["", f"{heading}:"])
            for entry in entries:
                lines.extend(_wrap(entry, width, indent="  "))
    return "\n".join(lines)


def _late_summary(results: Sequence[SubmissionResult]) -> str:
    """Lines under the table for the submissions a late penalty applied to (the table shows raw points)."""
    penalised = [result for result in results if result.late is not None and result.late["penalty_points"]]
    return "".join(f"\n{result.submission}: {late_lines(result)[-1]}" for result in penalised)


def render_report(
    results: Sequence[SubmissionResult], config_parts: ConfigParts | None = None, width: int | None = None
) -> str:
    """The terminal report: the summary table, plus the details when there is one submission.

    Args:
        results: the graded submissions, in the order to show.
        config_parts: `config.parts`, for column order and titles.
        width: the available width; None asks the terminal.

    Returns:
        The report text, ending with a newline.
    """
    columns = part_columns(config_parts, results)
    text = render_summary(results, columns, width) + _late_summary(results)
    if len(results) == 1:
        text += "\n\n" + render_details(results[0], columns, width)
    return text + "\n"
