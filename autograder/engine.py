"""Grade one submission: load it, run the hidden checks against a sandboxed worker, score."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from autograder.attention_view import collect_mask_picture
from autograder.checks.conftest import GRADER_GLOBALS
from autograder.checks.probes import PROBE_SOURCE
from autograder.checks.support import CheckContext
from autograder.config import TRAINING_PART, GraderConfig
from autograder.notebook import load_submission
from autograder.reports.i18n import t, use_language
from autograder.results import (STATUS_GRADED, STATUS_UNREADABLE, CheckResult, PartResult,
                                SubmissionResult)
from autograder.runner import Verdict, run_checks
from autograder.sandbox import Limits, Worker
from autograder.training_part import MTKIT_DIR, run_training_part


def worker_limits(config: GraderConfig) -> Limits:
    """Map grader.yml's worker section onto the sandbox limits.

    Args:
        config: the validated configuration.

    Returns:
        The limits for every worker of this grading.
    """
    worker = config.worker
    return Limits(timeout_s=worker.timeout_s, startup_timeout_s=worker.startup_timeout_s,
                  memory_mb=worker.memory_mb, output_bytes=worker.output_bytes,
                  threads=worker.threads, isolation=worker.isolation, reply_mb=worker.reply_mb)


def _describe_problem(problem: Any) -> str:
    where = f"cell {problem.cell}, line {problem.line}: " if problem.cell is not None else ""
    return f"{where}{problem.message}"


def _describe_load_error(error: dict[str, Any]) -> str:
    """A worker load error as 'cell 2, line 9: ModuleNotFoundError: ... (statement skipped)'."""
    where = ", ".join(str(x) for x in (error.get("label"), f"line {error['line']}" if error.get("line") else None) if x)
    text = f"{error.get('exc_type', 'Error')}: {error.get('message', '')}".strip()
    return t("engine.statement_skipped", where=where, text=text) if where else text


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
    if not all(v is not None and not v.passed for v in part_verdicts):
        return verdicts
    cause = next((v for v in part_verdicts if v.blocking), None)
    if cause is None:
        return verdicts
    return {**verdicts, **{c: Verdict(False, cause.message, verdicts[c].internal_error, True)
                           for c in check_ids}}


def _score(config: GraderConfig, selected: list[str], verdicts: dict[str, Verdict],
           skipped: dict[str, str]) -> list[PartResult]:
    results = []
    for name, part in config.parts.items():
        verdicts = _one_cause(verdicts, list(part.checks))
        checks = []
        for check_id, max_points in part.checks.items():
            if name not in selected or name in skipped:
                reason = skipped.get(name, t("engine.not_selected"))
                checks.append(CheckResult(check_id, name, max_points, False, 0.0, reason, skipped=True))
                continue
            verdict = verdicts.get(check_id) or Verdict(False, t("engine.no_verdict"), internal_error="no verdict")
            checks.append(CheckResult(check_id, name, max_points, verdict.passed,
                                      max_points if verdict.passed else 0.0, verdict.message))
        results.append(PartResult(name, part.title, part.points,
                                  sum(c.points for c in checks), checks))
    return results


def grade_submission(path: Path, config: GraderConfig, parts: list[str] | None = None) -> SubmissionResult:
    """Grade one notebook (or .py export) against the hidden checks.

    Args:
        path: the submission file.
        config: the validated grader.yml configuration.
        parts: part names to grade; None grades every part (training only when enabled).

    Returns:
        The per-part, per-check result with student-facing messages (in feedback.language).
    """
    with use_language(config.feedback.language):
        return _grade_submission(path, config, parts)


def _grade_submission(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    started = time.monotonic()
    path = Path(path)
    selected = _selected_parts(config, parts)
    loaded = load_submission(path, max_mb=config.grading.max_notebook_mb)
    problems = [_describe_problem(p) for p in loaded.problems if p.kind != "dropped"]
    skipped = config.disabled_parts()
    if not loaded.statements:
        reason = problems[0] if problems else t("engine.no_code")
        message = t("engine.nothing_graded", reason=reason)
        verdicts = {c: Verdict(False, message) for p in selected for c in config.parts[p].checks}
        result = SubmissionResult(path.name, STATUS_UNREADABLE, _score(config, selected, verdicts, skipped),
                                  load_problems=problems)
        result.grading_seconds = time.monotonic() - started
        return result
    unit_checks = [c for p in selected if p not in skipped and p != TRAINING_PART
                   for c in config.parts[p].checks]
    statements = [(f"cell {s.cell}", s.line, s.code) for s in loaded.statements]
    # The unit parts share one budget (restarts replay every top-level statement); the training
    # part below has its own (the profile's time_budget_s).
    budget_s = config.grading.submission_budget_s
    deadline = started + budget_s if budget_s > 0 else None
    # mtkit (public, no solutions) is importable: the student notebook uses it for evaluation.
    with Worker(statements, worker_limits(config), dict(GRADER_GLOBALS),
                helpers_source=PROBE_SOURCE, extra_paths=[MTKIT_DIR], deadline=deadline) as worker:
        report = worker.load_report()
        problems += [_describe_load_error(e) for e in report.get("errors", [])]
        context = CheckContext(student=worker, seed=config.grading.seed,
                               why_missing=loaded.why_missing)
        verdicts = run_checks(context, unit_checks, budget_s)
        # The student's own mask, drawn in the feedback report (never raises).
        mask_picture = collect_mask_picture(worker) if "look_ahead_mask" in selected else None
    extras: dict[str, Any] = {}
    if mask_picture is not None:
        extras["attention_mask"] = mask_picture
    if TRAINING_PART in selected and TRAINING_PART not in skipped:
        outcome = run_training_part(statements, config, dict(GRADER_GLOBALS), submission=path)
        extras["training"] = outcome.details
        for check_id in config.parts[TRAINING_PART].checks:
            verdicts[check_id] = Verdict(outcome.passed, "" if outcome.passed else outcome.message)
        if outcome.passed:
            extras["training"]["message"] = outcome.message
    result = SubmissionResult(path.name, STATUS_GRADED, _score(config, selected, verdicts, skipped),
                              load_problems=problems, extras=extras,
                              isolation=worker.isolation.get("mode", ""))
    if result.isolation == "weak":
        result.notes.append(t("engine.weak_isolation"))
    internal = {c: v.internal_error for c, v in verdicts.items() if v.internal_error}
    if internal:
        result.extras["internal_errors"] = internal
    result.grading_seconds = time.monotonic() - started
    return result
