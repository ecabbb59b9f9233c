"""CSV gradebook: Otter-compatible column names, part order, sorting, skipped cells."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.config import load_config
from autograder.reports.common import write_csv
from autograder.reports.gradebook import render_gradebook
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts
PART_NAMES = list(PARTS)


def results(*names: str):
    return [read_submission_json(FIXTURES / f"{name}.json") for name in names]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_header_follows_otter_then_adds_possible_status_and_timing():
    header = render_gradebook(results("partial"), PARTS).splitlines()[0].split(",")
    assert header == [
        "file",
        *PART_NAMES,
        "total_points_earned",
        "possible",
        "percent_correct",
        "grading_status",
        "status",
        "grading_seconds",
    ]


def test_every_otter_final_grades_column_is_present_with_otters_values():
    table = {row["file"]: row for row in rows(render_gradebook(results("partial", "grader_error"), PARTS))}
    assert table["points-per-question"]["grading_status"] == "--"  # Otter's points row
    assert table["bob.ipynb"]["grading_status"] == "Completed"
    assert table["carol.ipynb"]["grading_status"].startswith("The autograder failed")


def test_first_row_is_otters_points_per_question_then_files_sorted():
    text = render_gradebook(results("trained", "partial", "grader_error", "full_marks", "unreadable"), PARTS)
    table = rows(text)
    assert [row["file"] for row in table] == [
        "points-per-question",
        "alice.ipynb",
        "bob.ipynb",
        "carol.ipynb",
        "dave.ipynb",
        "erin.py",
    ]
    points = table[0]
    assert [points[name] for name in PART_NAMES] == ["10", "20", "20", "20", "10", "20"]
    assert (points["total_points_earned"], points["percent_correct"]) == ("100", "1")


def test_points_row_leaves_a_part_nobody_was_graded_on_empty():
    points = rows(render_gradebook(results("partial", "full_marks"), PARTS))[0]
    assert points["training"] == ""
    assert points["possible"] == "80"


def test_scores_percent_and_skipped_parts():
    table = {row["file"]: row for row in rows(render_gradebook(results("partial", "trained"), PARTS))}
    bob = table["bob.ipynb"]
    assert [bob[name] for name in PART_NAMES] == ["7", "11", "20", "20", "8", ""]
    assert (bob["total_points_earned"], bob["possible"], bob["percent_correct"]) == ("66", "80", "0.825")
    assert (bob["status"], bob["grading_seconds"]) == ("graded", "20.50")
    assert table["erin.py"]["training"] == "0"
    assert table["erin.py"]["percent_correct"] == "0.8"


def test_grader_error_row_is_kept_with_zeros():
    carol = rows(render_gradebook(results("grader_error"), PARTS, points_row=False))[0]
    assert carol["file"] == "carol.ipynb"
    assert [carol[name] for name in PART_NAMES] == ["0", "0", "0", "0", "0", ""]
    assert (carol["percent_correct"], carol["status"]) == ("0.0", "grader-error")


def test_written_file_uses_newline_line_endings(tmp_path):
    path = tmp_path / "gradebook.csv"
    write_csv(path, render_gradebook(results("partial", "full_marks"), PARTS))
    data = path.read_bytes()
    assert b"\r" not in data
    assert data.count(b"\n") == 4
