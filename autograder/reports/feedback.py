"""Per-submission feedback files: HTML page, Markdown version (job summaries), reporter payloads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import assignment_title, use_language
from autograder.reports.common import PartColumn, graded_possible, part_columns
from autograder.reports.files import check_stems
from autograder.reports.html import render_html
from autograder.reports.markdown import render_submission
from autograder.reports.reporter_payload import encode_payload, part_payloads, reporter_env_name
from autograder.reports.sections import ReportView, extra_sections
from autograder.reports.submission_json import dumps_stable
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.config import GraderConfig


def render_feedback_markdown(
    result: SubmissionResult, columns: Sequence[PartColumn] = (), view: ReportView | None = None
) -> str:
    """The Markdown version of the HTML feedback: the parts table, then the extras' sections.

    Args:
        result: one graded submission.
        columns: the part columns (grader.yml order).
        view: the graded assignment's `report_sections` hook (None: generic sections only).

    Returns:
        Markdown text.
    """
    sections = [render_submission(result, columns), *(s.markdown() for s in extra_sections(result.extras, view))]
    return "\n".join(section for section in sections if section)


def reporter_document(result: SubmissionResult) -> dict[str, Any]:
    """Everything a workflow needs to feed `autograding-grading-reporter` for one submission.

    Args:
        result: one graded submission.

    Returns:
        {"submission", "total", "possible", "runners": "a,b", "payloads": {runner: payload},
        "env": {"<RUNNER>_RESULTS": base64}}.
    """
    payloads = part_payloads(result)
    return {
        "submission": result.submission,
        "total": result.points,
        "possible": graded_possible(result),
        "runners": ",".join(payloads),
        "payloads": payloads,
        "env": {reporter_env_name(runner): encode_payload(p) for runner, p in payloads.items()},
    }


def write_feedback(
    results: Sequence[SubmissionResult],
    stems: Sequence[str],
    config: GraderConfig,
    assignment: Assignment,
    out_dir: Path,
    html: bool = False,
    reporter: bool = False,
) -> list[Path]:
    """Write, per submission, `<stem>.html` and `<stem>.feedback.md` (html) and
    `<stem>.reporter.json` (reporter), next to the reports of `write_reports`.

    Args:
        results: the graded submissions.
        stems: their file-name stems (same order).
        config: the validated configuration.
        assignment: the graded assignment (its message catalogue and report sections).
        out_dir: the report folder.
        html: write the HTML page and its Markdown version.
        reporter: write the reporter payloads.

    Returns:
        The paths written.
    """
    check_stems(stems)
    view, written = assignment.report_sections, []
    # What the assignment's extras mean, in its words.
    with use_language(config.feedback.language, assignment.messages_dir):
        columns = part_columns(config.parts, results)
        out_dir.mkdir(parents=True, exist_ok=True)
        for result, stem in zip(results, stems, strict=True):
            if html:
                page = out_dir / f"{stem}.html"
                page.write_text(
                    render_html(result, config.parts, assignment_title(config.assignment.title), view), encoding="utf-8"
                )
                markdown = out_dir / f"{stem}.feedback.md"
                markdown.write_text(render_feedback_markdown(result, columns, view), encoding="utf-8")
                written += [page, markdown]
            if reporter:
                path = out_dir / f"{stem}.reporter.json"
                path.write_text(dumps_stable(reporter_document(result)), encoding="utf-8")
                written.append(path)
    return written
