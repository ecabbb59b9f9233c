"""Grade one submission: load it, run the hidden checks against a sandboxed worker, score."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from autograder import credit
from autograder.assignment import Assignment
from autograder.config import GraderConfig
from autograder.i18n import t, use_language
from autograder.notebook import load_submission
from autograder.part_kinds import PART_KINDS, LoadedForGrading, part_kind
from autograder.results import STATUS_GRADED, STATUS_UNREADABLE, CheckResult, PartResult, SubmissionResult
from autograder.runner import Verdict


def _selected_parts(config: GraderConfig, parts: list[str] | None) -> list[str]:
    known = list(config.parts)
    if parts is None:
        return known
    unknown = [p for p in parts if p not in known]
    if unknown:
        raise ValueError(f"unknown part {unknown[0]!r} (parts: {', '.join(known)})")
    return [p for p in known if p in parts]


def _one_cause(verdicts: dict[str, Verdict], check_ids: list[str]) -> dict[str, Verdict]:
    """When every check of a part failed and one failure says the code cannot run at all (not
    defined, a stub returning nothing, an exception), report that cause for the whole part
    instead of a list of consequences."""
    part_verdicts = [verdicts.get(c) for c in check_ids]
    cause = next((v for v in part_verdicts if v is not None and v.blocking), None)
    if cause is None or not all(v is not None and not v.passed for v in part_verdicts):
        return verdicts
    return {**verdicts, **{c: Verdict(False, cause.message, verdicts[c].internal_error, True) for c in check_ids}}


def _score(
    config: GraderConfig, selected: list[str], verdicts: dict[str, Verdict], skipped: dict[str, str]
) -> list[PartResult]:
    results = []
    for name, part in config.parts.items():
        verdicts = credit.credited(part, _one_cause(verdicts, list(part.checks)))
        checks = []
        for check_id, max_points in part.checks.items():
            if name not in selected or name in skipped:
                reason = skipped.get(name, t("engine.not_selected"))
                checks.append(CheckResult(check_id, name, max_points, False, 0.0, reason, skipped=True))
                continue
            verdict = verdicts.get(check_id) or Verdict(False, t("engine.no_verdict"), internal_error="no verdict")
            points = max_points if verdict.passed else 0.0
            checks.append(CheckResult(check_id, name, max_points, verdict.passed, points, verdict.message))
        results.append(PartResult(name, part.title, part.points, sum(c.points for c in checks), checks))
    return results


def grade_submission(
    path: Path, config: GraderConfig, parts: list[str] | None = None, *, assignment: Assignment
) -> SubmissionResult:
    """Grade one notebook (or .py export) against the hidden checks.

    A front end binds `assignment` (`functools.partial`) and passes the result down as the batch's
    grade function; it reaches pool processes and Ray nodes by name (`Assignment.__reduce__`).

    Args:
        path: the submission file.
        config: the validated grader.yml configuration.
        parts: part names to grade; None grades every part (training only when enabled).
        assignment: the assignment `config` names, loaded once by the front end.

    Returns:
        The per-part, per-check result with student-facing messages (in feedback.language).
    """
    with use_language(config.feedback.language, assignment.messages_dir):
        return _grade_submission(path, config, assignment, parts)


def _grade_submission(
    path: Path, config: GraderConfig, assignment: Assignment, parts: list[str] | None
) -> SubmissionResult:
    started = time.monotonic()
    path = Path(path)
    selected = _selected_parts(config, parts)
    loaded = load_submission(
        path,
        provided_names=assignment.provided_names,
        max_mb=config.grading.max_notebook_mb,
        assignment=assignment.name,
    )
    problems = [p.describe() for p in loaded.problems]
    skipped = config.disabled_parts()
    if not loaded.statements:
        reason = problems[0] if problems else t("engine.no_code")
        message = t("engine.nothing_graded", reason=reason)
        verdicts = {c: Verdict(False, message) for p in selected for c in config.parts[p].checks}
        scored = _score(config, selected, verdicts, skipped)
        elapsed = time.monotonic() - started
        return SubmissionResult(path.name, STATUS_UNREADABLE, scored, load_problems=problems, grading_seconds=elapsed)
    statements = [(f"cell {s.cell}", s.line, s.code) for s in loaded.statements]
    submission = LoadedForGrading(path, statements, loaded.why_missing, config, started, assignment)
    verdicts = {}
    extras: dict[str, Any] = {}
    isolation = ""
    graded = [p for p in selected if p not in skipped]
    # The parts a graded part requires are graded for their gates even when not selected (a training
    # run of its own, `--parts training`); only the selected parts are scored.
    run = list(dict.fromkeys(r for p in graded for r in [*config.parts[p].requires_parts, p] if r not in skipped))
    for kind in PART_KINDS.values():  # each kind grades its selected, enabled parts (unit parts first)
        mine = []
        for name in (p for p in run if part_kind(p, assignment) is kind):
            unmet = credit.unmet_requirements(name, config.parts, run, verdicts)
            if unmet:  # e.g. training: never run for modules that are not the student's working code
                blocked = credit.requirement_verdict(unmet, config.parts)
                verdicts.update({check: blocked for check in config.parts[name].checks})
            else:
                mine.append(name)
        outcome = kind.grade(submission, mine)
        verdicts.update(outcome.verdicts)
        extras.update(outcome.extras)
        problems += outcome.problems
        isolation = outcome.isolation if outcome.isolation is not None else isolation
    scored = _score(config, selected, verdicts, skipped)
    result = SubmissionResult(path.name, STATUS_GRADED, scored, problems, extras=extras, isolation=isolation)
    if result.isolation == "weak":
        result.notes.append(t("engine.weak_isolation"))
    internal = {c: v.internal_error for c, v in verdicts.items() if v.internal_error}
    if internal:
        result.extras["internal_errors"] = internal
    # Checks whose property held but earned nothing behind a failed gate (for TAs and the corpus figures).
    held = [
        c
        for name in graded
        for c in credit.withheld(config.parts[name], _one_cause(verdicts, list(config.parts[name].checks)))
    ]
    if held:
        result.extras[credit.WITHHELD_EXTRA] = held
    result.grading_seconds = time.monotonic() - started
    return result
