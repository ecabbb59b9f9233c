"""Gradescope results.json: one test per check, the total score, and a student-facing summary."""

# Decisions (see gradescope_results): skipped checks (a part not graded in this run, e.g.
# training not enabled) are left out of `tests`, so that Gradescope never shows them as 0/max;
# the top-level `output` lists the skipped parts and why. `score` is the sum of the parts'
# points. A graded part without checks (a grader error zeroes every part) appears as one failed
# test for the whole part, so the maximum stays comparable between submissions. With a late
# penalty `score` is the final points (the tests keep the checks' points) and `output` says why.

from __future__ import annotations

import json
from functools import cache
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

SCHEMA_PATH = Path(__file__).with_name("schemas") / "gradescope_results.schema.json"


@cache
def load_schema() -> dict[str, Any]:
    """The JSON Schema of Gradescope's results.json (written from Gradescope's documentation).

    Returns:
        The schema as a dict (for `jsonschema.validate`).
    """
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def _part_tests(part: PartResult, part_number: int, visibility: str) -> list[dict[str, Any]]:
    if not part.checks:
        return [
            {
                "name": part_title(part.part, part.title),
                "number": str(part_number),
                "score": part.points,
                "max_score": part.max_points,
                "status": "failed",
                "visibility": visibility,
                "output": t("gradescope.part_not_graded"),
                "tags": [part.part],
            }
        ]
    tests = []
    for index, check in enumerate(part.checks, 1):
        if check.skipped:
            continue
        failed_output = check.message or t("gradescope.check_failed")
        tests.append(
            {
                "name": f"{part_title(part.part, part.title)}: {check.check_id}",
                "number": f"{part_number}.{index}",
                "score": check.points,
                "max_score": check.max_points,
                "status": "passed" if check.passed else "failed",
                "output": "" if check.passed else failed_output,
                "visibility": visibility,
                "tags": [part.part],
            }
        )
    return tests


def _summary(result: SubmissionResult, assignment: str) -> str:
    score = format_score(result.points, graded_possible(result))
    lines = [assignment] if assignment else []
    lines.append(t("gradescope.score", score=score, status=status_label(result.status)))
    lines.extend(late_lines(result))
    skipped = [part for part in result.parts if part.skipped]
    sections: list[tuple[str, list[str]]] = [
        (
            t("gradescope.not_graded_heading"),
            [
                f"{part_title(part.part, part.title)}: {skip_reason(part)}"
                if skip_reason(part)
                else part_title(part.part, part.title)
                for part in skipped
            ],
        ),
        (t("gradescope.load_problems_heading"), result.load_problems),
        (t("gradescope.notes_heading"), result.notes),
    ]
    for heading, entries in sections:
        if entries:
            lines.extend(["", heading, *(f"  - {entry}" for entry in entries)])
    return "\n".join(lines)


def gradescope_results(
    result: SubmissionResult,
    config_parts: ConfigParts | None = None,
    *,
    assignment: str = "",
    visibility: str = "visible",
    stdout_visibility: str = "hidden",
    test_visibility: str = "visible",
) -> dict[str, Any]:
    """Build the results.json document of one submission.

    Tests are the checks, named "<part title>: <check id>" and numbered "<part>.<check>" in
    grader.yml order. Skipped checks are omitted (explained in `output`, never shown as 0/max).

    Args:
        result: one graded submission.
        config_parts: `config.parts`, giving test numbers "<part>.<check>" in grader.yml order.
        assignment: the assignment's name, first line of the top-level output.
        visibility: of the whole result (Gradescope: hidden, after_due_date, after_published,
            visible).
        stdout_visibility: of the autograder's stdout (grader logs; hidden by default).
        test_visibility: of each test; messages are student-facing, so visible by default.

    Returns:
        A dict valid against `load_schema()`.
    """
    columns = part_columns(config_parts, [result])
    number = {column.name: index for index, column in enumerate(columns, 1)}
    tests = [
        test
        for part in ordered_parts(result, columns)
        if not part.skipped
        for test in _part_tests(part, number[part.part], test_visibility)
    ]
    return {
        "score": final_total(result),  # less the late penalty, when one was assessed
        "execution_time": round(result.grading_seconds),
        "output": _summary(result, assignment),
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
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
