"""Result records of one grading: checks, parts, submission; JSON round trip for reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Submission status values (the gradebook's `status` column).
STATUS_GRADED = "graded"  # every selected part was graded (whatever the score)
STATUS_UNREADABLE = "unreadable"  # the file is not a Python notebook/script we can read
STATUS_ERROR = "grader-error"  # the grader itself failed; the row exists so nothing is lost


@dataclass
class CheckResult:
    """One hidden check: its points and what the student should look at when it failed."""

    check_id: str
    part: str
    max_points: float
    passed: bool
    points: float
    message: str = ""  # student-facing: what was observed and where to look
    skipped: bool = False  # not run (e.g. part not selected, training disabled)


@dataclass
class PartResult:
    """A graded part: the sum of its passed checks."""

    part: str
    title: str
    max_points: float
    points: float
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        """Distinct messages of the failed checks, in check order."""
        return list(dict.fromkeys(c.message for c in self.checks if not c.passed and c.message))

    @property
    def skipped(self) -> bool:
        """True when the part was not graded in this run (it counts toward no total)."""
        return bool(self.checks) and all(c.skipped for c in self.checks)


@dataclass
class SubmissionResult:
    """Everything reported about one submission."""

    submission: str  # file name as given (reports key on it)
    status: str
    parts: list[PartResult]
    load_problems: list[str] = field(default_factory=list)  # syntax errors etc., with cell/line
    notes: list[str] = field(default_factory=list)  # grader notes for the student
    extras: dict[str, Any] = field(default_factory=dict)  # e.g. a training run's figures (drawn by the assignment)
    grading_seconds: float = 0.0
    # How the student code was confined: "namespace" (root jail), "userns" (jail without root),
    # "weak" (audit hook only, best effort), "" (no code ran).
    isolation: str = ""
    # Lateness, the fields of an autograder.late.LateRecord; None when no deadline applied (the
    # key is then left out of the JSON, so results graded without a deadline read as before).
    late: dict[str, Any] | None = None

    @property
    def points(self) -> float:
        """Total points over the graded parts."""
        return sum(p.points for p in self.parts if not p.skipped)

    @property
    def max_points(self) -> float:
        """Maximum points over the graded parts (skipped parts excluded)."""
        return sum(p.max_points for p in self.parts if not p.skipped)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (timing kept under its own key so it can be ignored when diffing).

        Returns:
            The result as plain data, including totals.
        """
        data = asdict(self)
        data["points"] = self.points
        data["max_points"] = self.max_points
        if self.late is None:
            del data["late"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubmissionResult:
        """Rebuild a result written by `to_json`.

        Args:
            data: the dict produced by `to_json` (extra total keys are ignored).

        Returns:
            The equivalent SubmissionResult.
        """
        parts = [
            PartResult(p["part"], p["title"], p["max_points"], p["points"], [CheckResult(**c) for c in p["checks"]])
            for p in data["parts"]
        ]
        return cls(
            submission=data["submission"],
            status=data["status"],
            parts=parts,
            load_problems=list(data.get("load_problems", [])),
            notes=list(data.get("notes", [])),
            extras=dict(data.get("extras", {})),
            grading_seconds=data.get("grading_seconds", 0.0),
            isolation=str(data.get("isolation", "")),
            late=dict(data["late"]) if isinstance(data.get("late"), dict) else None,
        )
