"""Student text cannot forge reports: no heading, table row, image, link or HTML in Markdown; no CSV formula."""

from __future__ import annotations

import copy
import csv
import io
import re
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.i18n import use_language
from autograder.reports.common import part_columns
from autograder.reports.files import render_feedback_markdown
from autograder.reports.gradebook import render_gradebook
from autograder.reports.markdown import render_markdown, render_submission
from autograder.reports.md_safe import csv_cell, md_code, md_text
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PARTS = load_config(FIXTURES / "results" / "grader.yml").parts
VIEW = load_assignment("transformer_mt").report_sections  # draws the poisoned mask and training extras
NASTY: list[str] = yaml.safe_load((FIXTURES / "reports" / "nasty_strings.yml").read_text(encoding="utf-8"))
MARKDOWN = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _poisoned(text: str, name: str):
    """partial.json with `text` in every student-derived field, submitted as `name`."""
    result = read_submission_json(FIXTURES / "results" / "partial.json")
    result = copy.deepcopy(result)
    result.submission = name
    result.load_problems = [text]
    result.notes = [text]
    for part in result.parts:
        for check in part.checks:
            if not check.passed:
                check.message = text
    result.extras = {
        "attention_mask": {"error": text},
        "training": {"method": text, "evaluation": {"bleu": 0.1}, "bleu": 0.1},
    }
    return result


def _structure(markdown: str) -> dict[str, int]:
    """What the Markdown renders to: headings, table rows, images, links, raw HTML blocks/inline."""
    counts = {"heading": 0, "tr": 0, "image": 0, "link": 0, "html": 0, "code_block": 0}
    for token in MARKDOWN.parse(markdown):
        if token.type == "heading_open":
            counts["heading"] += 1
        elif token.type == "tr_open":
            counts["tr"] += 1
        elif token.type in ("html_block", "fence", "code_block"):
            counts["html" if token.type == "html_block" else "code_block"] += 1
        for child in token.children or []:
            if child.type == "image":
                counts["image"] += 1
            elif child.type == "link_open":
                counts["link"] += 1
            elif child.type == "html_inline" and child.content.lower() not in ("<br>",):
                counts["html"] += 1
    return counts


def _baseline(language: str) -> tuple[dict[str, int], dict[str, int]]:
    with use_language(language):
        clean = _poisoned("a plain message", "clean.ipynb")
        summary = render_markdown([clean, clean], PARTS)
        feedback = render_feedback_markdown(clean, part_columns(PARTS), VIEW)
    return _structure(summary), _structure(feedback)


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("index", range(len(NASTY)))
def test_nasty_text_adds_no_structure_to_the_summary_or_the_feedback(index: int, language: str) -> None:
    text = NASTY[index]
    expected_summary, expected_feedback = _baseline(language)
    with use_language(language):
        poisoned = _poisoned(text, f"{text}.ipynb")
        summary = render_markdown([poisoned, _poisoned("a plain message", "clean.ipynb")], PARTS)
        feedback = render_feedback_markdown(poisoned, part_columns(PARTS), VIEW)
    assert _structure(summary) == expected_summary, summary
    assert _structure(feedback) == expected_feedback, feedback
    for markdown in (summary, feedback):  # no line of the student's starts a block of its own
        assert not any(
            line.lstrip().startswith(("## `victim", "| Total | **100", "![", "<img", "<script"))
            for line in markdown.splitlines()
        )


def test_the_forged_heading_of_the_attack_is_shown_as_text() -> None:
    with use_language("en"):
        summary = render_submission(_poisoned(NASTY[0], "attacker.ipynb"), part_columns(PARTS))
    html = MARKDOWN.render(summary)
    assert html.count("<h3>") == 1 and "attacker.ipynb" in html.split("</h3>")[0]
    assert "victim.ipynb" in html and "<h2>" not in html  # visible, but as text inside a cell


def test_gradebook_cells_never_start_a_formula() -> None:
    results = [_poisoned("note", f"{text}.ipynb") for text in NASTY]
    for result, text in zip(results, NASTY, strict=True):
        result.status = "grader-error"
        result.notes = [text]
    rows = list(csv.reader(io.StringIO(render_gradebook(results, PARTS), newline="")))
    for row in rows[2:]:  # after the header and Otter's points row ("--" is its own marker)
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or re.fullmatch(r"-?\d+(\.\d+)?", cell), row
    files = {row[0] for row in rows}
    assert '\'=HYPERLINK("https://attacker.example","grade").ipynb' in files


def test_helpers_keep_ordinary_text_readable() -> None:
    assert md_text("`Decoder` is not defined") == "`Decoder` is not defined"
    assert md_text("Validation BLEU 0.1234; the bar is 0.2.") == "Validation BLEU 0.1234; the bar is 0.2."
    assert md_text("line one\nline two") == "line one<br>line two"
    assert md_code("a`b") == "`` a`b ``"
    assert csv_cell("-1.5") == "-1.5" and csv_cell("-x") == "'-x" and csv_cell("alice.ipynb") == "alice.ipynb"
