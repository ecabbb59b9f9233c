"""The late policy: units late, grace, cap, zero-after, unknown times, route due dates; its grader.yml keys."""

from __future__ import annotations

import pytest

from autograder.config import ConfigError, LateConfig, describe, validate
from autograder.late import (
    DEADLINE_FROM_CONFIG,
    DEADLINE_FROM_ROUTE,
    SOURCE_GIT_COMMIT,
    LateRecord,
    SubmissionTime,
    apply_late_policy,
    assess,
)
from autograder.results import STATUS_GRADED, CheckResult, PartResult, SubmissionResult

DEADLINE = "2026-12-01T23:59:59+09:00"


def policy(**keys) -> LateConfig:
    return LateConfig(**{"deadline": DEADLINE, "penalty_per_unit": 0.1, **keys})


def at(moment: str) -> SubmissionTime:
    return SubmissionTime(moment, SOURCE_GIT_COMMIT, "manifest.csv: commit_date")


def assessed(points: float, time: SubmissionTime, late: LateConfig) -> LateRecord:
    record = assess(points, time, late)
    assert record is not None
    return record


def test_no_deadline_assesses_nothing():
    assert assess(8, at("2030-01-01T00:00:00+00:00"), LateConfig()) is None


def test_on_time_keeps_every_point():
    record = assessed(8, at("2026-12-01T23:00:00+09:00"), policy())
    assert (record.units_late, record.penalty_points, record.final_points) == (0, 0, 8)
    assert record.deadline_source == DEADLINE_FROM_CONFIG


def test_every_started_day_costs_a_unit_and_time_zones_are_compared_as_instants():
    # One second late, written in UTC: 2026-12-01T15:00:00Z is 00:00:00 +09:00.
    record = assessed(8, at("2026-12-01T15:00:00Z"), policy())
    assert (record.units_late, record.penalty_fraction, record.penalty_points, record.final_points) == (
        1,
        0.1,
        0.8,
        7.2,
    )
    record = assessed(10, at("2026-12-04T12:00:00+09:00"), policy())  # 2.5 days late
    assert (record.units_late, record.penalty_points, record.final_points) == (3, 3, 7)


def test_hours_grace_and_cap():
    hourly = policy(unit="hour", penalty_per_unit=0.05, max_penalty=0.2, grace_minutes=10)
    assert assessed(10, at("2026-12-02T00:09:00+09:00"), hourly).units_late == 0  # within the grace
    record = assessed(10, at("2026-12-02T02:30:00+09:00"), hourly)
    assert (record.units_late, record.penalty_points) == (3, 1.5)
    assert assessed(10, at("2026-12-03T00:00:00+09:00"), hourly).penalty_fraction == 0.2  # capped


def test_zero_after_takes_everything_whatever_the_cap():
    late = policy(max_penalty=0.3, zero_after="2026-12-05T00:00:00+09:00")
    record = assessed(9, at("2026-12-05T00:00:01+09:00"), late)
    assert record.zeroed and record.final_points == 0 and record.penalty_points == 9
    assert not assessed(9, at("2026-12-04T23:00:00+09:00"), late).zeroed


def test_unknown_time_is_on_time_and_recorded_as_unknown():
    record = assessed(8, SubmissionTime(), policy())
    assert record.submitted_at == "" and record.time_source == "unknown"
    assert record.final_points == 8


def test_route_due_date_replaces_the_deadline_unless_turned_off():
    extended = SubmissionTime("2026-12-03T12:00:00+09:00", "gradescope", "", due="2026-12-04T00:00:00+09:00")
    record = assessed(10, extended, policy())
    assert (record.deadline_source, record.units_late) == (DEADLINE_FROM_ROUTE, 0)
    record = assessed(10, extended, policy(route_due_dates=False))
    assert (record.deadline_source, record.units_late) == (DEADLINE_FROM_CONFIG, 2)


def test_apply_stores_the_record_in_the_result_and_says_when_it_changed():
    result = SubmissionResult(
        "a.ipynb", STATUS_GRADED, [PartResult("p", "P", 4, 4, [CheckResult("c", "p", 4, True, 4)])]
    )
    assert apply_late_policy(result, at("2026-12-02T01:00:00+09:00"), policy())
    assert result.late is not None and result.late["final_points"] == 3.6
    assert SubmissionResult.from_json(result.to_json()).late == result.late  # survives the store
    assert not apply_late_policy(result, at("2026-12-02T01:00:00+09:00"), policy())
    assert apply_late_policy(result, at("2026-12-02T01:00:00+09:00"), LateConfig())
    assert result.late is None and "late" not in result.to_json()


@pytest.mark.parametrize(
    ("late", "message"),
    [
        ({"deadline": "2026-12-01T23:59:59"}, "late.deadline: "),
        ({"deadline": "next friday"}, "late.deadline: "),
        ({"deadline": DEADLINE, "zero_after": "2026-11-30T00:00:00+09:00"}, "late.zero_after: must not be before"),
        ({"penalty_per_unit": 1.5}, "late.penalty_per_unit: must be at most 1"),
        ({"unit": "week"}, "late.unit: must be one of"),
    ],
)
def test_bad_late_keys_are_refused_naming_the_key(late, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        validate({"assignment": {"name": "transformer_mt"}, "late": late})


def test_an_unquoted_yaml_timestamp_is_accepted():
    import yaml

    raw = yaml.safe_load("assignment: {name: transformer_mt}\nlate:\n  deadline: 2026-12-01T23:59:59+09:00\n")
    assert validate(raw).late.deadline == "2026-12-01T23:59:59+09:00"


def test_the_config_command_describes_every_late_key():
    text = describe("transformer_mt")
    for key in LateConfig.model_fields:
        assert f"late.{key}" in text
