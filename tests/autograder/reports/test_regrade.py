"""Regrade diff: only changed students, by total, part and check, old -> new; its CSV."""

from __future__ import annotations

import copy
import csv
import io
from pathlib import Path

from autograder.i18n import use_language
from autograder.reports.regrade import diff_results, render_regrade_csv
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def test_only_changed_figures_are_listed_total_first():
    old = read_submission_json(FIXTURES / "partial.json")
    new = copy.deepcopy(old)
    part = next(p for p in new.parts if any(c.passed for c in p.checks))
    check = next(c for c in part.checks if c.passed)
    check.points += 1
    check.max_points += 1
    part.points += 1
    unchanged = read_submission_json(FIXTURES / "full_marks.json")
    changes = diff_results(
        {old.submission: old, "same.ipynb": unchanged}, {old.submission: new, "same.ipynb": unchanged}
    )
    assert [(c.level, c.part, c.check, c.change) for c in changes] == [
        ("total", "", "", 1),
        ("part", part.part, "", 1),
        ("check", part.part, check.check_id, 1),
    ]
    assert changes[0].old == old.points and changes[0].new == old.points + 1


def test_a_submission_on_one_side_only_has_an_empty_other_side():
    result = read_submission_json(FIXTURES / "partial.json")
    changes = diff_results({}, {result.submission: result})
    assert changes[0].level == "total" and changes[0].old is None and changes[0].change is None


def test_the_csv_header_is_korean_by_default_and_cells_cannot_be_formulas():
    old = read_submission_json(FIXTURES / "partial.json")
    new = copy.deepcopy(old)
    new.parts[0].points -= 1
    new.submission = old.submission = "=cmd.ipynb"
    with use_language("ko"):
        text = render_regrade_csv(diff_results({old.submission: old}, {new.submission: new}))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["제출물", "구분", "파트", "검사", "이전 점수", "새 점수", "변화"]
    assert rows[1][0] == "'=cmd.ipynb" and rows[1][1] == "최종 합계" and rows[1][6] == "-1"


def test_the_csv_files_start_with_a_utf8_bom_so_that_excel_reads_their_hangul(tmp_path):
    """Excel on Windows takes a CSV without a BOM for the local code page and garbles Hangul; a
    reader that honours the BOM (Python's utf-8-sig, as Excel and LibreOffice do) gets the text."""
    from autograder.reports.class_view import CLASS_CHECKS_CSV
    from autograder.reports.common import write_csv
    from autograder.reports.gradebook import render_gradebook
    from autograder.reports.regrade import render_regrade_csv

    old = read_submission_json(FIXTURES / "partial.json")
    new = copy.deepcopy(old)
    new.parts[0].points -= 1
    old.submission = new.submission = "김민준.ipynb"
    with use_language("ko"):
        write_csv(
            tmp_path / "regrade.csv", render_regrade_csv(diff_results({old.submission: old}, {new.submission: new}))
        )
        write_csv(tmp_path / "gradebook.csv", render_gradebook([new]))
    for name in ("regrade.csv", "gradebook.csv"):
        raw = (tmp_path / name).read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf") and raw.count(b"\xef\xbb\xbf") == 1, name
    with open(tmp_path / "regrade.csv", encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == "제출물" and rows[1][0] == "김민준.ipynb"
    with open(tmp_path / "gradebook.csv", encoding="utf-8-sig", newline="") as handle:
        assert any(row and row[0] == "김민준.ipynb" for row in csv.reader(handle))
    assert CLASS_CHECKS_CSV.endswith(".csv")  # class_view writes every .csv of its own the same way
