"""How each kind of grader.yml part is graded: one strategy class per kind, in one table."""

# The engine loads the submission once, then hands each kind the parts of that kind it grades.
# The unit parts share one sandboxed worker and one pytest run of the hidden checks (and one time
# budget); the training part trains in a worker of its own with the profile's budget. A new kind
# of part is one PartKind subclass added to PART_KINDS.

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from autograder.assignment import Assignment
from autograder.checks.support import CheckContext
from autograder.config import GraderConfig
from autograder.i18n import student_line, t
from autograder.runner import Verdict, run_checks
from autograder.sandbox import Limits, Worker


@dataclass
class LoadedForGrading:
    """The submission as every kind grades it."""

    path: Path
    statements: list[tuple[str, int, str]]  # (label, line, code), as the worker takes them
    why_missing: Callable[[str], str | None]  # LoadedSubmission.why_missing ("not defined" messages)
    config: GraderConfig
    started: float  # time.monotonic() when grading began
    assignment: Assignment  # the assignment graded, loaded once by the front end and passed down


@dataclass
class KindOutcome:
    """What one kind found: a verdict per check, report extras, load problems, the worker's isolation."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    isolation: str | None = None


class PartKind(ABC):
    """A kind of part; `grade` runs every check of the given parts (possibly none) of this kind."""

    name: ClassVar[str]

    def claims(self, part: str, assignment: Assignment) -> bool:
        """Whether a part is of this kind (`part_kind` gives the default kind the parts no kind claims).

        Args:
            part: a grader.yml part name.
            assignment: the assignment graded.

        Returns:
            True when this kind grades it.
        """
        return False

    @abstractmethod
    def grade(self, submission: LoadedForGrading, parts: list[str]) -> KindOutcome:
        """Grade the parts of this kind.

        Args:
            submission: the loaded submission.
            parts: the selected, enabled parts of this kind (in grader.yml order); may be empty.

        Returns:
            The verdicts of those parts' checks, and what the report shows besides.
        """


def worker_limits(config: GraderConfig, preload: Sequence[str] = ()) -> Limits:
    """Map grader.yml's worker section onto the sandbox limits.

    Args:
        config: the validated configuration.
        preload: the graded assignment's `worker_preload`, for a grader.yml whose
            `worker.warm_preload` is null.

    Returns:
        The limits for every worker of this grading.
    """
    worker = config.worker
    # Every key of grader.yml's worker section is the sandbox limit of the same name.
    warm_preload = tuple(preload if worker.warm_preload is None else worker.warm_preload)
    return Limits(**{**worker.model_dump(), "warm_preload": warm_preload})


def _load_error(error: dict[str, Any]) -> str:
    """A worker load error as '2번 셀 9번째 줄: ModuleNotFoundError: ... (statement skipped)', the cell
    and line worded as the other load problems and the checks' exceptions (`student_line`)."""
    label = str(error.get("label") or "")
    where = student_line(f"{label}, line {error['line']}") if label and error.get("line") else label
    text = f"{error.get('exc_type', 'Error')}: {error.get('message', '')}".strip()
    if where:
        return t("engine.statement_skipped", where=where, text=text)
    return t("engine.statement_skipped_somewhere", text=text)


class UnitParts(PartKind):
    """The hidden pytest checks, all unit parts in one worker under grading.submission_budget_s.

    It always runs, even with no unit part selected: its worker reports the submission's load
    errors and the isolation the sandbox reached.
    """

    name = "unit"

    def grade(self, submission: LoadedForGrading, parts: list[str]) -> KindOutcome:
        config = submission.config
        assignment = submission.assignment
        check_ids = [c for p in parts for c in config.parts[p].checks]
        # The unit parts share one budget (restarts replay every top-level statement); the training
        # part has its own (the profile's time_budget_s).
        budget_s = config.grading.submission_budget_s
        deadline = submission.started + budget_s if budget_s > 0 else None
        with Worker(
            submission.statements,
            worker_limits(config, assignment.worker_preload),
            dict(assignment.grader_globals),
            helpers_source=assignment.worker_helpers,
            extra_paths=list(assignment.worker_paths),
            deadline=deadline,
            watch=list(dict.fromkeys(name for part in parts for name in config.parts[part].forbidden_calls)),
        ) as worker:
            report = worker.load_report()
            outcome = KindOutcome(problems=[_load_error(e) for e in report.get("errors", [])])
            context = CheckContext(student=worker, seed=config.grading.seed, why_missing=submission.why_missing)
            outcome.verdicts = run_checks(assignment.checks_dir, context, check_ids, budget_s)
            # What the assignment shows besides the verdicts (never raises), read while the worker lives.
            if assignment.report_extras is not None:
                outcome.extras.update(assignment.report_extras(worker, parts))
        outcome.isolation = worker.isolation.get("mode", "")
        return outcome


class TrainingPart(PartKind):
    """The assignment's training part (`Assignment.training`): one verdict for all of its checks."""

    name = "training"

    def claims(self, part: str, assignment: Assignment) -> bool:
        return assignment.training is not None and part == assignment.training_part

    def grade(self, submission: LoadedForGrading, parts: list[str]) -> KindOutcome:
        outcome = KindOutcome()
        config = submission.config
        assignment = submission.assignment
        for part in parts:
            if assignment.training is None:  # claims() gives this kind no part then
                continue
            trained = assignment.training(
                submission.statements, config, dict(assignment.grader_globals), submission.path
            )
            outcome.extras["training"] = trained.details
            for check_id in config.parts[part].checks:
                outcome.verdicts[check_id] = Verdict(trained.passed, "" if trained.passed else trained.message)
            if trained.passed:
                outcome.extras["training"]["message"] = trained.message
        return outcome


DEFAULT_KIND = "unit"
# Grading order: the unit parts' worker is closed before training starts its own.
PART_KINDS: dict[str, PartKind] = {kind.name: kind for kind in (UnitParts(), TrainingPart())}


def part_kind(part: str, assignment: Assignment) -> PartKind:
    """The kind of a grader.yml part.

    Args:
        part: the part's name.
        assignment: the assignment graded.

    Returns:
        The first kind in `PART_KINDS` that claims it, else the default (unit) kind.
    """
    return next((kind for kind in PART_KINDS.values() if kind.claims(part, assignment)), PART_KINDS[DEFAULT_KIND])
