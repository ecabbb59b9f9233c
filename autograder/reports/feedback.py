"""Per-submission feedback beside the HTML page: its Markdown version (job summaries) and the reporter payloads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autograder.reports.common import PartColumn, graded_possible
from autograder.reports.markdown import render_submission
from autograder.reports.reporter_payload import encode_payload, part_payloads, reporter_env_name
from autograder.reports.sections import ReportView, extra_sections
from autograder.results import SubmissionResult


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
