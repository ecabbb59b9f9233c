"""Terminal table: part columns, skipped parts, single-submission details, width handling."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from autograder.config import load_config
from autograder.reports.common import part_columns
from autograder.reports.submission_json import read_submission_json
from autograder.reports.table import render_details, render_report, render_summary

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts


def fixture(name: str):
    return read_submission_json(FIXTURES / f"{name}.json")


def rows_by_submission(text: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in text.splitlines()[2:] if line.strip()}


def test_summary_has_a_row_per_submission_in_given_order_and_parts_in_config_order():
    results = [fixture("partial"), fixture("full_marks"), fixture("trained")]
    text = render_summary(results, part_columns(PARTS, results), width=250)
    header, rule, *rows = text.splitlines()
    assert [row.split()[0] for row in rows] == ["bob.ipynb", "alice.ipynb", "erin.py"]
    titles = [part.title for part in PARTS.values()]
    positions = [header.index(title) for title in titles]
    assert positions == sorted(positions)
    assert header.split()[-2:] == ["Total", "Status"]
    assert set(rule) <= {"-", " "}


def test_skipped_part_reads_skipped_and_is_left_out_of_the_total():
    results = [fixture("full_marks"), fixture("trained")]
    rows = rows_by_submission(render_summary(results, part_columns(PARTS, results), width=250))
    assert rows["alice.ipynb"][-3:] == ["skipped", "80/80", "graded"]
    assert rows["erin.py"][-3:] == ["0/20", "80/100", "graded"]


def test_grader_error_row_shows_zero_for_graded_parts_and_its_status():
    rows = rows_by_submission(render_summary([fixture("grader_error")], part_columns(PARTS), 250))
    assert rows["carol.ipynb"][1:] == [
        "0/10",
        "0/20",
        "0/20",
        "0/20",
        "0/10",
        "skipped",
        "0/80",
        "grader",
        "error",
    ]  # "grader error", the catalogue's word


def test_single_submission_report_adds_checks_messages_load_problems_and_notes():
    text = render_report([fixture("partial")], PARTS, width=100)
    assert "  FAIL  mask_blocks_future" in text
    assert "  PASS  mask_shape_and_dtype" in text
    assert "diagonal offset of torch.triu" in text
    assert "cell 7, line 3: NameError" in text
    assert "only the first 200000 bytes were kept" in text
    training = next(line for line in text.splitlines() if line.startswith("Training run"))
    assert training.split()[-1] == "skipped"


def test_batch_report_has_no_details():
    text = render_report([fixture("partial"), fixture("full_marks")], PARTS, width=200)
    assert "FAIL" not in text


def test_details_never_show_the_staff_traceback():
    text = render_details(fixture("grader_error"), part_columns(PARTS), width=100)
    assert "The autograder failed on this submission" in text
    assert "Traceback" not in text


def test_details_wrap_messages_to_the_width():
    width = 60
    text = render_details(fixture("partial"), part_columns(PARTS), width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "torch.triu" in text


def test_narrow_terminal_gets_numbered_part_headers_and_a_legend():
    results = [fixture("partial"), fixture("full_marks")]
    text = render_summary(results, part_columns(PARTS, results), width=80)
    assert text.splitlines()[0].split()[1:7] == ["P1", "P2", "P3", "P4", "P5", "P6"]
    assert "P1 = Look-ahead mask (look_ahead_mask)" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_long_submission_names_are_shortened_to_fit():
    long_name = dataclasses.replace(fixture("partial"), submission="x" * 120 + ".ipynb")
    text = render_summary([long_name], part_columns(PARTS), width=90)
    assert max(len(line) for line in text.splitlines()) <= 90
    assert "..." in text


def test_output_is_plain_text():
    text = render_report([fixture(name) for name in ("partial", "grader_error", "unreadable")], PARTS)
    assert "\x1b" not in text
    assert text.isascii()


def test_a_message_shared_by_many_checks_is_printed_once():
    text = render_details(fixture("unreadable"), part_columns(PARTS), width=100)
    assert text.count("the submission could not be read") == 1
    assert text.count("  FAIL  ") == 25


def test_korean_console_has_korean_headers_part_titles_and_aligns_hangul_names():
    """feedback.language ko: the catalogue's words and the assignment's Korean part titles; a Hangul
    name takes two columns per syllable, so every row's cells start at the header's columns."""
    from autograder.assignment import load_assignment
    from autograder.i18n import use_language
    from autograder.reports.table import columns_of

    results = [dataclasses.replace(fixture("partial"), submission="김민준_과제.ipynb"), fixture("full_marks")]
    with use_language("ko", load_assignment("transformer_mt").messages_dir):
        text = render_summary(results, part_columns(PARTS, results), width=250)
        details = render_details(results[0], part_columns(PARTS, results), width=250)
    header, _, *rows = text.splitlines()
    assert header.startswith("제출물") and header.split()[-2:] == ["합계", "상태"] and "마스크" in header
    assert all(row.split()[-1] == "채점" or row.endswith("채점 완료") for row in rows)
    ends = {columns_of(line[: line.index("/")]) for line in rows}  # where the first score's slash sits
    assert len(ends) == 1, text
    assert "  실패  " in details and "  통과  " in details and "FAIL" not in details
    assert not [line for line in text.splitlines() if line.strip() and not re.search(r"[가-힣]|^[-\s]+$", line)]
