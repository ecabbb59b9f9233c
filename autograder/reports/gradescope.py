"""Gradescope results.json: one test per check, the total score, and a student-facing summary."""

# Decisions (see gradescope_results): skipped checks (a part not graded in this run, e.g.
# training not enabled) are left out of `tests`, so that Gradescope never shows them as 0/max;
# the top-level `output` lists the skipped parts and why. `score` is the sum of the parts'
# points. A graded part without checks (a grader error zeroes every part) appears as one failed
# test for the whole part, so the maximum stays comparable between submissions. With a late
# penalty `score` is the final points (the tests keep the checks' points) and `output` says why.

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograder.i18n import current_language, part_title, t, use_language
from autograder.reports.common import (
    ConfigParts,
    final_total,
    format_score,
    graded_possible,
    ordered_parts,
    part_columns,
    skip_reason,
)
from autograder.reports.late_text import late_lines
from autograder.reports.markdown import status_label
from autograder.reports.submission_json import dumps_stable
from autograder.results import PartResult, SubmissionResult

# Gradescope's visibility values: hidden, after_due_date, after_published, visible. The result and its
# tests (student-facing messages) are visible; the autograder's stdout (grader logs) is hidden.
VISIBILITY, STDOUT_VISIBILITY, TEST_VISIBILITY = "visible", "hidden", "visible"


def _part_tests(part: PartResult, part_number: int) -> list[dict[str, Any]]:
    title = part_title(part.part, part.title)

    def test(name: str, number: str, score: float, max_score: float, passed: bool, output: str) -> dict[str, Any]:
        status = "passed" if passed else "failed"
        fields = {"name": name, "number": number, "score": score, "max_score": max_score, "output": output}
        return {**fields, "status": status, "visibility": TEST_VISIBILITY, "tags": [part.part]}

    if not part.checks:
        return [test(title, str(part_number), part.points, part.max_points, False, t("gradescope.part_not_graded"))]
    return [
        test(
            f"{title}: {check.check_id}",
            f"{part_number}.{index}",
            check.points,
            check.max_points,
            check.passed,
            "" if check.passed else check.message or t("gradescope.check_failed"),
        )
        for index, check in enumerate(part.checks, 1)
        if not check.skipped
    ]


def _summary(result: SubmissionResult, assignment: str) -> str:
    score = format_score(result.points, graded_possible(result))
    lines = [assignment] if assignment else []
    lines.append(t("gradescope.score", score=score, status=status_label(result.status)))
    lines.extend(late_lines(result))
    not_graded = [
        part_title(part.part, part.title) + (f": {reason}" if (reason := skip_reason(part)) else "")
        for part in result.parts
        if part.skipped
    ]
    sections: list[tuple[str, list[str]]] = [
        (t("gradescope.not_graded_heading"), not_graded),
        (t("gradescope.load_problems_heading"), result.load_problems),
        (t("gradescope.notes_heading"), result.notes),
    ]
    for heading, entries in sections:
        if entries:
            lines.extend(["", heading, *(f"  - {entry}" for entry in entries)])
    return "\n".join(lines)


def gradescope_results(
    result: SubmissionResult, config_parts: ConfigParts | None = None, *, assignment: str = ""
) -> dict[str, Any]:
    """Build the results.json document of one submission.

    Tests are the checks, named "<part title>: <check id>" and numbered "<part>.<check>" in
    grader.yml order. Skipped checks are omitted (explained in `output`, never shown as 0/max).

    Args:
        result: one graded submission.
        config_parts: `config.parts`, giving test numbers "<part>.<check>" in grader.yml order.
        assignment: the assignment's name, first line of the top-level output.

    Returns:
        A dict valid against schemas/gradescope_results.schema.json (Gradescope's documented format).
    """
    columns = part_columns(config_parts, [result])
    number = {column.name: index for index, column in enumerate(columns, 1)}
    tests = [
        test
        for part in ordered_parts(result, columns)
        if not part.skipped
        for test in _part_tests(part, number[part.part])
    ]
    return {
        "score": final_total(result),  # less the late penalty, when one was assessed
        "execution_time": round(result.grading_seconds),
        "output": _summary(result, assignment),
        "visibility": VISIBILITY,
        "stdout_visibility": STDOUT_VISIBILITY,
        "extra_data": {"submission": result.submission, "status": result.status, "possible": graded_possible(result)},
        "tests": tests,
    }


def write_gradescope_results(
    result: SubmissionResult,
    path: Path,
    config_parts: ConfigParts | None = None,
    assignment: str = "",
    language: str | None = None,
) -> None:
    """Write `gradescope_results(...)` as stable JSON.

    Args:
        result: one graded submission.
        path: the destination, e.g. `<out>/<stem>.results.json` or /autograder/results/results.json.
        config_parts: `config.parts`, for test numbering.
        assignment: the assignment's name for the summary.
        language: the feedback language (None: the current one).
    """
    with use_language(language or current_language()):
        document = gradescope_results(result, config_parts, assignment=assignment)
    path.write_text(dumps_stable(document), encoding="utf-8")
