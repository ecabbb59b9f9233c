"""Markdown summary: a table per submission with points and failed-check messages."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.config import load_config
from autograder.reports.common import part_columns
from autograder.reports.markdown import render_markdown, render_submission
from autograder.reports.md_safe import md_text
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts


def fixture(name: str):
    return read_submission_json(FIXTURES / f"{name}.json")


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def cell_count(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row)) - 1


def test_submission_table_has_points_and_failed_check_messages():
    text = render_submission(fixture("partial"), part_columns(PARTS))
    assert text.startswith("### `bob.ipynb`: 66/80 (graded)\n")
    decoder_layer = next(row for row in table_rows(text) if row.startswith("| DecoderLayer |"))
    assert "| 11/20 |" in decoder_layer
    assert "`decoder_layer_eval_output`: Output differs" in decoder_layer
    assert "<br>`decoder_layer_causal`:" in decoder_layer
    assert "| **Total** | **66/80** |" in text


def test_every_row_has_the_same_number_of_cells_even_with_pipes_in_messages():
    text = render_submission(fixture("partial"), part_columns(PARTS))
    assert "change \\| check" in text
    assert {cell_count(row) for row in table_rows(text)} == {3}


def test_skipped_part_says_skipped_and_why():
    text = render_submission(fixture("full_marks"), part_columns(PARTS))
    training = next(row for row in table_rows(text) if row.startswith("| Training run"))
    assert "| skipped |" in training
    assert "training is not enabled" in training


def test_load_problems_and_notes_are_listed():
    text = render_submission(fixture("partial"), part_columns(PARTS))
    assert "**Load problems**\n\n- cell 7, line 3" in text
    assert "**Notes**\n\n- Your notebook printed" in text


def test_batch_summary_has_an_overview_and_a_section_per_submission():
    text = render_markdown(
        [fixture("partial"), fixture("grader_error"), fixture("trained")], PARTS, title="Transformer, Part 2"
    )
    assert text.startswith("## Transformer, Part 2\n")
    overview = [row for row in table_rows(text) if row.startswith("| `")]
    assert [row.split("|")[1].strip() for row in overview] == ["`bob.ipynb`", "`carol.ipynb`", "`erin.py`"]
    assert "| skipped |" in overview[0] and "| 0/20 |" in overview[2]
    assert text.count("\n### ") == 3
    assert "Traceback" not in text


def test_a_table_cell_stays_on_one_line():
    assert md_text("a | b\nc\\d", table=True) == "a \\| b<br>c\\\\d"


def test_a_message_shared_by_many_checks_is_written_once():
    text = render_submission(fixture("unreadable"), part_columns(PARTS))
    assert text.count("the submission could not be read") == 1
    assert "`mask_shape_and_dtype`, `mask_blocks_future`, `mask_blocks_padding`" in text
    assert "| DecoderLayer | 0/20 | `decoder_layer_builds`," in text
