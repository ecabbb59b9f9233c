"""grader.yml's `late` section: the deadline, the late-work policy and where submission times come from."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from autograder.config.base import KeyProblem, Section
from autograder.i18n import t

LateUnit = Literal["day", "hour"]


def parse_moment(text: str) -> datetime:
    """Parse an ISO 8601 instant that names its time zone (a bare local time is ambiguous).

    Args:
        text: e.g. "2026-12-01T23:59:59+09:00" or "2026-12-01T14:59:59Z".

    Returns:
        The aware datetime.

    Raises:
        ValueError: not ISO 8601, or no time zone.
    """
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(t("config.no_time_zone", text=repr(text)))
    return moment


class LateConfig(Section):
    """late: when work is due and what a late submission loses (nothing when `deadline` is null)."""

    deadline: str | None = None
    """When the assignment is due: ISO 8601 with a time zone, e.g. 2026-12-01T23:59:59+09:00. null:
    no deadline (no submission is late). A due date the submission route knows (Gradescope's,
    extensions included) replaces it when route_due_dates is true."""
    unit: LateUnit = "day"
    """What a penalty is counted in: day | hour; every started unit after the deadline counts."""
    penalty_per_unit: float = Field(default=0.0, ge=0, le=1)
    """Fraction of the earned points lost per started unit late (0.1 = 10% per day)."""
    max_penalty: float = Field(default=1.0, ge=0, le=1)
    """Cap on the fraction lost by penalty_per_unit (0.5: never more than half)."""
    zero_after: str | None = None
    """ISO 8601 instant with a time zone after which a submission earns 0 whatever the cap; null:
    none."""
    grace_minutes: float = Field(default=0, ge=0)
    """Minutes after the deadline that still count as on time (clock skew, uploads)."""
    route_due_dates: bool = True
    """Use the due date the submission route reports (Gradescope's submission_metadata.json, per
    student, extensions included) instead of `deadline` when there is one."""
    times_file: str | None = None
    """CSV giving each submission's time (e.g. the manifest.csv of
    autograder.integrations.collect_submissions: its commit times); null: none. A submission
    whose time no source knows is graded as on time and its report says the time was unknown."""
    times_file_column: str = "file"
    """The times_file column naming the submission file (matched by file name)."""
    time_column: str = "commit_date"
    """The times_file column holding the time (ISO 8601 with a time zone)."""
    use_file_mtime: bool = False
    """When no other source knows a submission's time, use the file's modification time (reports
    name it as such: copying a file changes it, so it proves nothing)."""

    @field_validator("deadline", "zero_after", mode="before")
    @classmethod
    def _moment_with_time_zone(cls, value: Any) -> Any:
        # YAML reads an unquoted timestamp as a datetime; keep the key a string either way.
        value = value.isoformat() if isinstance(value, datetime) else value
        if isinstance(value, str):
            parse_moment(value)  # ValueError names the problem
        return value

    @model_validator(mode="after")
    def _zero_after_follows_deadline(self) -> LateConfig:
        both = self.zero_after is not None and self.deadline is not None
        if both and parse_moment(str(self.zero_after)) < parse_moment(str(self.deadline)):
            raise KeyProblem("zero_after", t("config.zero_after_early"))
        return self
