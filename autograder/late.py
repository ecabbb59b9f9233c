"""Late work: how late a submission was, and what grader.yml's late policy takes off its points."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from autograder.config import LateConfig, parse_moment
from autograder.results import SubmissionResult

# Where a submission time came from (the `time_source` of a record; reports name it).
SOURCE_GIT_COMMIT = "git-commit"  # a commit's committer date (collect_submissions' manifest)
SOURCE_GRADESCOPE = "gradescope"  # submission_metadata.json's created_at
SOURCE_TIMES_FILE = "times-file"  # a time column of a CSV the course supplies
SOURCE_FILE_MTIME = "file-mtime"  # the file's modification time (only with late.use_file_mtime)
SOURCE_UNKNOWN = "unknown"  # no source knew it: graded as on time, and the report says so

DEADLINE_FROM_CONFIG = "grader.yml"
DEADLINE_FROM_ROUTE = "route"  # the submission route's own due date (Gradescope's)
UNIT_SECONDS = {"day": 86_400, "hour": 3_600}
POINTS_DIGITS = 4  # penalties are rounded so that reruns give byte-identical results


@dataclass(frozen=True)
class SubmissionTime:
    """When a submission was made, as the route that delivered it knows it."""

    submitted_at: str = ""  # ISO 8601 with a time zone; "" when unknown
    source: str = SOURCE_UNKNOWN  # one of the SOURCE_* constants above
    detail: str = ""  # e.g. "manifest.csv: commit_date", the commit id, the metadata file
    due: str = ""  # the route's due date for this submission (ISO 8601), "" when it knows none


@dataclass(frozen=True)
class LateRecord:
    """What the late policy found for one submission (stored in `SubmissionResult.late`)."""

    submitted_at: str  # "" when unknown
    time_source: str
    time_detail: str
    deadline: str
    deadline_source: str  # DEADLINE_FROM_CONFIG | DEADLINE_FROM_ROUTE
    late_seconds: float  # 0 when on time (grace included) or unknown
    units_late: int  # started units after the deadline and grace
    unit: str
    zeroed: bool  # submitted after late.zero_after
    penalty_fraction: float
    raw_points: float
    penalty_points: float
    final_points: float


def assess(raw_points: float, time: SubmissionTime, late: LateConfig) -> LateRecord | None:
    """Apply the late policy to a submission's points.

    Every started unit (day or hour) after the deadline plus the grace period costs
    `penalty_per_unit` of the earned points, at most `max_penalty`; after `zero_after` the
    submission earns nothing. An unknown time is on time. The deadline is the route's due date when
    `route_due_dates` allows it, else grader.yml's `deadline`, else `zero_after`.

    Args:
        raw_points: the points the checks gave (all graded parts).
        time: when the submission was made.
        late: grader.yml's late section.

    Returns:
        The record, or None when no deadline applies (nothing to report).
    """
    if late.route_due_dates and time.due:  # the route's own due date (extensions included), when allowed
        due_text, due_source = time.due, DEADLINE_FROM_ROUTE
    elif late.deadline is not None:
        due_text, due_source = late.deadline, DEADLINE_FROM_CONFIG
    elif late.zero_after is not None:  # no deadline, only the moment after which work earns nothing
        due_text, due_source = late.zero_after, DEADLINE_FROM_CONFIG
    else:
        return None
    late_seconds, units, zeroed = 0.0, 0, False
    if time.submitted_at:
        submitted = parse_moment(time.submitted_at)
        late_seconds = (submitted - parse_moment(due_text)).total_seconds() - late.grace_minutes * 60
        units = math.ceil(late_seconds / UNIT_SECONDS[late.unit]) if late_seconds > 0 else 0
        zeroed = late.zero_after is not None and submitted > parse_moment(late.zero_after)
    fraction = 1.0 if zeroed else min(units * late.penalty_per_unit, late.max_penalty)
    penalty = round(raw_points * fraction, POINTS_DIGITS)
    return LateRecord(
        submitted_at=time.submitted_at,
        time_source=time.source,
        time_detail=time.detail,
        deadline=due_text,
        deadline_source=due_source,
        late_seconds=round(late_seconds, 3),
        units_late=units,
        unit=late.unit,
        zeroed=zeroed,
        penalty_fraction=round(fraction, POINTS_DIGITS),
        raw_points=raw_points,
        penalty_points=penalty,
        final_points=round(raw_points - penalty, POINTS_DIGITS),
    )


def apply_late_policy(result: SubmissionResult, time: SubmissionTime, late: LateConfig) -> bool:
    """Set `result.late` from the policy (None when no deadline applies).

    Args:
        result: one graded submission; its part points are the raw points.
        time: when it was made.
        late: grader.yml's late section.

    Returns:
        Whether `result.late` changed (the stored record must then be written again).
    """
    record = assess(result.points, time, late)
    new = None if record is None else asdict(record)
    changed = new != result.late
    result.late = new
    return changed
