"""Shared report rules: number formatting, skipped parts, graded totals, part columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.assignment import assignment_of
from autograder.config import load_config
from autograder.reports.common import format_points, graded_possible, part_cell, part_columns
from autograder.reports.files import write_reports
from autograder.reports.submission_json import read_submission_json
from autograder.results import PartResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
CONFIG = load_config(FIXTURES / "grader.yml")


@pytest.mark.parametrize("value, text", [(6, "6"), (6.0, "6"), (2.5, "2.5"), (1 / 3, "0.33"), (0.0, "0")])
def test_format_points(value, text):
    assert format_points(value) == text


def test_totals_leave_skipped_parts_out_of_the_possible_points():
    result = read_submission_json(FIXTURES / "full_marks.json")
    assert result.parts[-1].skipped
    assert (result.points, graded_possible(result), result.max_points) == (80, 80, 80)


def test_a_part_without_checks_is_graded_out_of_its_max_points():
    part = PartResult("decoder", "Decoder", 20, 0, [])
    assert not part.skipped


def test_columns_follow_the_config_then_append_unknown_parts():
    result = read_submission_json(FIXTURES / "partial.json")
    result.parts.append(PartResult("bonus", "Bonus", 5, 5, []))
    columns = part_columns(CONFIG.parts, [result])
    assert [c.name for c in columns] == [*CONFIG.parts, "bonus"]
    assert part_cell(result, "bonus") == "5/5"
    assert part_cell(read_submission_json(FIXTURES / "full_marks.json"), "bonus") == "-"


def test_write_reports_refuses_names_that_would_overwrite_each_other(tmp_path):
    result = read_submission_json(FIXTURES / "partial.json")
    with pytest.raises(ValueError, match="unique"):
        write_reports([result, result], ["bob", "bob"], CONFIG, assignment_of(CONFIG), tmp_path)
    with pytest.raises(ValueError, match="summary"):
        write_reports([result], ["summary"], CONFIG, assignment_of(CONFIG), tmp_path)
