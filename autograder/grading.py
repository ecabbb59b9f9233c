"""One submission's grading as every executor runs it: the submission, the grade function, the
"grader-error" result that stands in for a failed grading."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.config import GraderConfig
from autograder.results import STATUS_ERROR, CheckResult, PartResult, SubmissionResult

# The engine's `grade_submission(path, config, parts)`, bound to the assignment and passed down by
# the front end that grades.
GradeFunction = Callable[[Path, GraderConfig, "list[str] | None"], SubmissionResult]


@dataclass(frozen=True)
class Submission:
    """One file to grade, with the unique names its reports use."""

    path: Path
    label: str  # SubmissionResult.submission and the gradebook's `file`: the name, or a path
    stem: str  # file-system-safe stem of `<stem>.json`, `<stem>.results.json`, `<stem>.md`
    # The files beside `path` that its grading reads (`results_store.sidecar_files`, found by the
    # batch from the assignment's `sidecar_names`); an executor that grades elsewhere ships them.
    sidecars: tuple[Path, ...] = ()


def _skip_reason(part: str, config: GraderConfig, parts: Sequence[str] | None) -> str:
    # Same wording as the engine's skipped checks.
    if parts is not None and part not in parts:
        return "not selected for this grading run"
    return config.disabled_parts().get(part, "")


def grader_error_result(
    label: str, config: GraderConfig, parts: Sequence[str] | None, error: BaseException | str, traceback_text: str = ""
) -> SubmissionResult:
    """The result recorded when grading a submission failed: status "grader-error", zero points
    for every part that was to be graded (other parts skipped), the error in `notes` and the
    traceback in `extras["traceback"]` (for staff; reports do not show it).

    Args:
        label: the submission's label.
        config: the validated configuration.
        parts: the selected parts (None: all).
        error: the exception, or a description of what went wrong.
        traceback_text: the formatted traceback, if any.

    Returns:
        A SubmissionResult with status STATUS_ERROR.
    """
    results = []
    for name, part in config.parts.items():
        reason = _skip_reason(name, config, parts)  # "": a part to grade, which scores 0 without checks
        skipped = [CheckResult(check, name, points, False, 0, reason, True) for check, points in part.checks.items()]
        results.append(PartResult(name, part.title, part.points, 0, skipped if reason else []))
    described = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    note = (
        f"The autograder failed on this submission ({described}), so it was not graded; "
        "the course staff have the details."
    )
    extras = {"traceback": traceback_text} if traceback_text else {}
    return SubmissionResult(label, STATUS_ERROR, results, notes=[note], extras=extras)


def grade_one(
    grade_function: GradeFunction, submission: Submission, config: GraderConfig, parts: list[str] | None
) -> SubmissionResult:
    """Grade one submission; any failure becomes a "grader-error" result (never raises).

    Args:
        grade_function: the engine's `grade_submission`.
        submission: what to grade.
        config: the validated configuration.
        parts: the selected parts (None: all).

    Returns:
        The result, labelled with `submission.label` and timed.
    """
    start = time.perf_counter()
    try:
        result = grade_function(submission.path, config, parts)
        if not isinstance(result, SubmissionResult):
            raise TypeError(f"grade_submission returned {type(result).__name__}, not a SubmissionResult")
    except (Exception, SystemExit) as error:  # one failing submission must not stop the batch
        result = grader_error_result(submission.label, config, parts, error, traceback.format_exc())
    result.submission = submission.label
    result.grading_seconds = time.perf_counter() - start
    return result
