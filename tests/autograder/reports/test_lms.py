"""LMS export: Canvas's gradebook import CSV through the course's roster, and the long CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from autograder.config import LateConfig
from autograder.late import SOURCE_GIT_COMMIT, SubmissionTime, apply_late_policy
from autograder.reports.lms import (
    CANVAS_ID_COLUMNS,
    RosterError,
    match,
    read_roster,
    render_canvas_csv,
    render_long_csv,
)
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def named(result_name: str, label: str):
    result = read_submission_json(FIXTURES / "results" / f"{result_name}.json")
    result.submission = label
    return result


def test_the_roster_drops_canvas_points_possible_row_and_needs_the_five_columns(tmp_path):
    roster = read_roster(FIXTURES / "late" / "roster.csv")
    assert [row["Student"] for row in roster.rows] == ["Kim, Alice", "Lee, Bob", "Park, Dana"]
    bad = tmp_path / "r.csv"
    bad.write_text("Student,ID\nx,1\n", encoding="utf-8")
    with pytest.raises(RosterError, match="missing column"):
        read_roster(bad)


def test_canvas_csv_has_canvas_columns_every_roster_student_and_final_points():
    alice, bob = named("full_marks", "alice.ipynb"), named("partial", "Bob.ipynb")
    apply_late_policy(
        bob,
        SubmissionTime("2026-12-03T10:00:00+09:00", SOURCE_GIT_COMMIT),
        LateConfig(deadline="2026-12-01T23:59:59+09:00", penalty_per_unit=0.1),
    )
    stray = named("partial", "mallory.ipynb")
    roster = read_roster(FIXTURES / "late" / "roster.csv")
    matching = match(roster, [alice, bob, stray])
    assert matching.unmatched == ["mallory.ipynb"] and not matching.ambiguous
    rows = list(csv.reader(io.StringIO(render_canvas_csv(roster, matching, "Transformer, Part 2 (1234)"))))
    assert rows[0] == [*CANVAS_ID_COLUMNS, "Transformer, Part 2 (1234)"]
    assert rows[1] == ["Kim, Alice", "5001", "20260001", "alice", "Transformers 01", f"{alice.points:g}"]
    assert rows[2][:5] == ["Lee, Bob", "5002", "20260002", "bob", "Transformers 01"]
    assert float(rows[2][5]) == pytest.approx(bob.late["final_points"], abs=0.01)
    assert rows[3][5] == ""  # Dana submitted nothing: Canvas leaves her grade as it is


def test_two_submissions_of_one_student_are_left_blank():
    roster = read_roster(FIXTURES / "late" / "roster.csv")
    matching = match(roster, [named("partial", "alice.ipynb"), named("full_marks", "sub/alice.py")])
    assert matching.ambiguous == ["Kim, Alice"] and not matching.by_row


def test_the_long_csv_rows_sum_to_the_final_points():
    bob = named("partial", "bob.ipynb")
    apply_late_policy(
        bob,
        SubmissionTime("2026-12-03T10:00:00+09:00", SOURCE_GIT_COMMIT),
        LateConfig(deadline="2026-12-01T23:59:59+09:00", penalty_per_unit=0.1),
    )
    rows = list(csv.DictReader(io.StringIO(render_long_csv([bob], "Transformer, Part 2", {"bob.ipynb": "Lee, Bob"}))))
    assert {row["student"] for row in rows} == {"Lee, Bob"}
    assert rows[-1]["part"] == "late_penalty"
    assert sum(float(row["points"]) for row in rows) == pytest.approx(bob.late["final_points"], abs=0.02)
