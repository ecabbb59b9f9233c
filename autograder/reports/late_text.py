"""What a student's report says about the deadline: when the work came in, how late, the penalty."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from autograder.config import parse_moment
from autograder.i18n import t
from autograder.reports.common import format_points
from autograder.results import SubmissionResult


def _shown(moment: str, zone_of: str) -> str:
    """An instant as "YYYY-MM-DD HH:MM (UTC+09:00)", in the deadline's time zone (so both compare at a glance)."""
    value: datetime = parse_moment(moment).astimezone(parse_moment(zone_of).tzinfo)
    offset = value.strftime("%z")
    return f"{value:%Y-%m-%d %H:%M} (UTC{offset[:3]}:{offset[3:]})"


def late_lines(result: SubmissionResult) -> list[str]:
    """The report's sentences about lateness, in the current feedback language.

    Args:
        result: one graded submission.

    Returns:
        [] when no deadline applied; else one or two sentences (when, and the penalty if any).
    """
    late: dict[str, Any] | None = result.late
    if late is None:
        return []
    deadline = _shown(late["deadline"], late["deadline"])
    if not late["submitted_at"]:
        return [t("late.time_unknown", deadline=deadline)]
    fields = {
        "submitted": _shown(late["submitted_at"], late["deadline"]),
        "deadline": deadline,
        "source": t(f"late.source.{late['time_source']}"),
    }
    if late["late_seconds"] <= 0:
        return [t("late.on_time", **fields)]
    lines = [t("late.late", units=late["units_late"], unit=t(f"late.unit.{late['unit']}"), **fields)]
    points = {
        "raw": format_points(late["raw_points"]),
        "penalty": format_points(late["penalty_points"]),
        "final": format_points(late["final_points"]),
        "percent": format_points(late["penalty_fraction"] * 100),
    }
    lines.append(t("late.zeroed" if late["zeroed"] else "late.penalty", **points))
    return lines
