"""The class at a glance as plain data: score distributions, statuses, failed checks, training figures."""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autograder.reports.common import ConfigParts, graded_part, part_columns, part_possible
from autograder.results import STATUS_ERROR, STATUS_GRADED, STATUS_UNREADABLE, SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import FiguresHook, TrainingFigures

# The statuses the page counts, in the order shown. "missing": in the batch, no current stored
# result; "late": a result whose extras say it was submitted after the deadline (counted apart,
# a late submission is also graded/unreadable).
STATUS_MISSING = "missing"
STATUS_LATE = "late"
CLASS_STATUSES = (STATUS_GRADED, STATUS_UNREADABLE, STATUS_ERROR, STATUS_MISSING, STATUS_LATE)
HISTOGRAM_BINS = 10
# A row of `failed_checks` (and of class_checks.csv).
CHECK_COLUMNS = ("part", "check_id", "failed", "graded", "share", "discrimination", "message")
# The discrimination index compares the top and the bottom GROUP_SHARE of the graded submissions
# (by their total's fraction of the possible points); below MIN_FOR_GROUPS submissions it is not given.
GROUP_SHARE = 0.27
MIN_FOR_GROUPS = 4
SECONDS_PER_DAY = 86400.0


def is_late(result: SubmissionResult) -> bool:
    """Whether the late policy found the submission after its deadline (and grace).

    Args:
        result: one result; its `late` record (autograder.late.LateRecord, stored by the batch)
            is read, nothing else is guessed: no record, or an unknown time, is on time.

    Returns:
        True for a late submission.
    """
    late = result.late
    return isinstance(late, Mapping) and float(late.get("late_seconds") or 0) > 0


def histogram(
    values: Sequence[float], high: float, low: float = 0.0, bins: int = HISTOGRAM_BINS
) -> list[dict[str, float]]:
    """Counts of values in equal-width bins over [low, high] (the last bin includes `high`).

    Args:
        values: the numbers; those outside [low, high] go to the nearest end bin.
        high: the upper end (e.g. a part's points); when not above low, one bin holds everything.
        low: the lower end.
        bins: number of bins.

    Returns:
        [{"low", "high", "count"}] per bin, in order.
    """
    if not high > low:
        return [{"low": low, "high": high, "count": len(values)}]
    width = (high - low) / bins
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, math.floor((value - low) / width)))] += 1
    return [
        {"low": round(low + i * width, 6), "high": round(low + (i + 1) * width, 6), "count": count}
        for i, count in enumerate(counts)
    ]


def describe(values: Sequence[float], high: float) -> dict[str, Any]:
    """Summary figures and histogram of one series.

    Args:
        values: the numbers (one per student).
        high: the series' maximum (points possible, or the metric's top).

    Returns:
        {"count", "mean", "median", "min", "max", "possible", "values", "histogram"}.
    """
    return {
        "count": len(values),
        "mean": round(statistics.fmean(values), 4) if values else None,
        "median": round(statistics.median(values), 4) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "possible": high,
        "values": sorted(values),
        "histogram": histogram(values, high),
    }


def _groups(results: Sequence[SubmissionResult]) -> tuple[list[SubmissionResult], list[SubmissionResult]] | None:
    """The top and bottom GROUP_SHARE of the graded submissions by total fraction (None: too few)."""
    graded = sorted(
        (r for r in results if r.status == STATUS_GRADED and r.max_points), key=lambda r: r.points / r.max_points
    )
    size = max(1, round(GROUP_SHARE * len(graded)))
    return (graded[-size:], graded[:size]) if len(graded) >= MIN_FOR_GROUPS else None


def _discrimination(groups: tuple[list[SubmissionResult], ...] | None, scores: Mapping[str, float]) -> float | None:
    """The discrimination index: the top group's mean score on an item (submission -> 0-1; absent:
    not graded for it) minus the bottom group's; near 0 or below, the item does not tell strong from weak."""
    means = [[scores[r.submission] for r in group if r.submission in scores] for group in groups or ()]
    return round(statistics.fmean(means[0]) - statistics.fmean(means[1]), 4) if means and all(means) else None


def _score_series(results: Sequence[SubmissionResult], config_parts: ConfigParts) -> list[dict[str, Any]]:
    """One series per part and one for the total; a part not graded for a student is left out of it."""
    # Grader errors hold no verdict on the student's work: they are counted, not scored.
    scored = [r for r in results if r.status != STATUS_ERROR]
    groups = _groups(results)
    series = []
    for column in part_columns(config_parts, scored):
        parts = [p for r in scored if (p := graded_part(r, column.name))]
        high = max((part_possible(p) for p in parts), default=column.points or 0.0)
        fractions = {r.submission: p.points / high for r in scored if high and (p := graded_part(r, column.name))}
        figures = describe([p.points for p in parts], high)
        index = _discrimination(groups, fractions)
        series.append({"part": column.name, "title": column.title, **figures, "discrimination": index})
    totals = [r.points for r in scored]
    series.append({"part": "total", "title": "", **describe(totals, max((r.max_points for r in scored), default=0.0))})
    return series


def failed_checks(results: Sequence[SubmissionResult]) -> list[dict[str, Any]]:
    """Per check, how many graded submissions failed it and the message they were given most often.

    Args:
        results: the batch's results; only status `graded` counts (an unreadable notebook fails
            every check for one reason, which says nothing about a check).

    Returns:
        [{"part", "check_id", "failed", "graded", "share", "discrimination", "message", "failed_by"}],
        most failed first (ties: part, then check, in first-seen order); checks nobody failed are
        included with 0. `failed_by` names the submissions that failed it.
    """
    graded: Counter[tuple[str, str]] = Counter()  # keys in first-seen order
    failures: defaultdict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # key -> messages given
    failed_by: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    # key -> submission -> 1.0 passed / 0.0 failed (the discrimination index's item scores)
    outcomes: defaultdict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for result in results:
        if result.status != STATUS_GRADED:
            continue
        for part in result.parts:
            for check in part.checks:
                if not check.skipped:
                    key = part.part, check.check_id
                    graded[key] += 1
                    outcomes[key][result.submission] = float(check.passed)
                    if not check.passed:
                        failures[key][check.message] += 1
                        failed_by[key].append(result.submission)
    groups = _groups(results)
    rows = []
    for key, count in graded.items():
        messages = failures[key]
        failed = messages.total()
        top = messages.most_common(1)[0][0] if failed else ""
        index = _discrimination(groups, outcomes[key])
        row = (*key, failed, count, round(failed / count, 4), index, top)
        rows.append({**dict(zip(CHECK_COLUMNS, row, strict=True)), "failed_by": failed_by[key]})
    return sorted(rows, key=lambda row: -row["failed"])  # stable: ties stay in first-seen order


def _student_rows(
    results: Sequence[SubmissionResult],
    config_parts: ConfigParts,
    training_part: str | None,
    figures_of: FiguresHook | None,
    links: Sequence[str],
) -> list[dict[str, Any]]:
    """One row per student for the page's table; `links`: each result's report file (may be empty)."""
    columns = part_columns(config_parts, results)
    rows = []
    for index, result in enumerate(results):
        training = result.extras.get("training")
        graded_training = training_part is not None and graded_part(result, training_part) is not None
        figures = figures_of(training) if figures_of and graded_training and isinstance(training, Mapping) else None
        late = result.late if isinstance(result.late, Mapping) else {}
        parts = {c.name: p.points if (p := graded_part(result, c.name)) else None for c in columns}
        rows.append(
            {
                "name": result.submission,
                "report": links[index] if links else "",
                "status": result.status,
                "parts": parts,
                "total": result.points,
                "possible": result.max_points,
                "late_days": round(float(late.get("late_seconds") or 0) / SECONDS_PER_DAY, 2),
                "metric": figures.value if figures is not None else None,
            }
        )
    return rows


def _steps_to_bar(figures: TrainingFigures, threshold: float | None, passed: bool) -> float | None:
    """The first step whose evaluation reached the bar (a run with a curve), else the run's step
    count when it passed (an assignment that reports only its steps), else None."""
    if threshold is not None and figures.curve is not None:
        return next((step for step, value in figures.curve if value >= threshold), None)
    return figures.steps if passed else None


def training_summary(
    results: Sequence[SubmissionResult], part: str | None, figures_of: FiguresHook | None
) -> dict[str, Any] | None:
    """The training part across the class: its metric, steps to the bar, how runs stopped.

    Args:
        results: the batch's results.
        part: the assignment's training part (`GraderConfig.training_part()`), or None.
        figures_of: the assignment's reader of a run's figures (`Assignment.training_figures`), or None.

    Returns:
        {"part", "metric", "threshold", "metric_series", "steps_series", "reached", "trained",
        "stop_reasons": {reason: n}, "early_stops"}, or None when no result graded the part (or the
        assignment reads no figures).
    """
    if part is None or figures_of is None:
        return None
    metric_name, threshold, values, steps = "", None, [], []
    stops: Counter[str] = Counter()
    early_stops = trained = 0
    for result in results:
        graded = graded_part(result, part)
        training = result.extras.get("training")
        if graded is None or not isinstance(training, Mapping):
            continue
        trained += 1
        figures = figures_of(training)
        metric_name = figures.metric
        if figures.value is not None:
            values.append(figures.value)
        threshold = figures.threshold if figures.threshold is not None else threshold
        passed = graded.points >= part_possible(graded) > 0
        step = _steps_to_bar(figures, threshold, passed)
        if step is not None:
            steps.append(step)
        if figures.stop_reason:
            stops[figures.stop_reason] += 1
            early_stops += figures.stopped_early
    if not trained:
        return None
    return {
        "part": part,
        "metric": metric_name,
        "threshold": threshold,
        # 0 to the bar's or the best value's next tenth (the assignments' figures are 0-1 fractions)
        "metric_series": describe(values, math.ceil(10 * max([*values, threshold or 0.0, 0.1])) / 10),
        "steps_series": describe(steps, max(steps, default=0.0)),
        "reached": len(steps),
        "trained": trained,
        "stop_reasons": dict(stops.most_common()),
        "early_stops": early_stops,
    }


def class_data(
    results: Sequence[SubmissionResult],
    config_parts: ConfigParts,
    training_part: str | None,
    figures_of: FiguresHook | None,
    assignment: str,
    missing: Sequence[str] = (),
    links: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything the class page shows, as JSON-ready data.

    Args:
        results: the batch's results (those with a current stored result).
        config_parts: `config.parts`.
        training_part: `config.training_part()`.
        figures_of: `Assignment.training_figures` (None: no training figures shown).
        assignment: the assignment's title.
        missing: labels of the batch's submissions without a current stored result.
        links: each result's report file, relative to the page (same order; empty: no links).

    Returns:
        {"assignment", "submissions", "statuses", "missing", "scores", "checks", "training",
        "students", "lateness"} (`lateness`: the days late of the late submissions, as a series).
    """
    statuses = Counter(result.status for result in results)
    counted = {status: statuses.get(status, 0) for status in CLASS_STATUSES}
    counted[STATUS_MISSING] = len(missing)
    counted[STATUS_LATE] = sum(is_late(result) for result in results)
    counted.update({status: n for status, n in statuses.items() if status not in counted})  # a newer status
    students = _student_rows(results, config_parts, training_part, figures_of, links)
    days_late = [row["late_days"] for row in students if row["late_days"] > 0]
    return {
        "assignment": assignment,
        "submissions": len(results) + len(missing),
        "statuses": counted,
        "missing": list(missing),
        "scores": _score_series(results, config_parts),
        "checks": failed_checks(results),
        "training": training_summary(results, training_part, figures_of),
        "students": students,
        "lateness": describe(days_late, math.ceil(max(days_late, default=1.0))),
    }
