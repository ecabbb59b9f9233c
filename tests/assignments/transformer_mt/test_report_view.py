"""Part 2's feedback sections: the look-ahead mask picture and the training run's BLEU, in its own words."""

from __future__ import annotations

import json
import re
from pathlib import Path

from assignments.transformer_mt.report_view import mask_markdown, report_sections, training_series
from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.i18n import t, use_language
from autograder.reports.files import render_feedback_markdown
from autograder.reports.html import render_html
from autograder.reports.submission_json import read_submission_json
from autograder.results import SubmissionResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RESULTS = FIXTURES / "results"
INTEGRATIONS = FIXTURES / "integrations"
PARTS = load_config(RESULTS / "grader.yml").parts
ASSIGNMENT = load_assignment("transformer_mt")
VIEW = ASSIGNMENT.report_sections


def fixture_json(name: str) -> dict:
    return json.loads((INTEGRATIONS / name).read_text(encoding="utf-8"))


def result_with(name: str, mask: str | None = None, training: str | None = None) -> SubmissionResult:
    result = read_submission_json(RESULTS / f"{name}.json")
    if mask:
        result.extras["attention_mask"] = fixture_json(mask)
    if training:
        result.extras["training"] = fixture_json(training)
    return result


def test_the_assignment_hands_the_engine_its_view_and_catalogue() -> None:
    assert VIEW is not None and ASSIGNMENT.messages_dir is not None
    extras = result_with("partial", "mask_triu.json", "training_history.json").extras
    assert [section.key for section in VIEW(extras)] == ["attention_mask", "training"]
    assert VIEW({}) == [] and report_sections({"other": 1}) == []


def test_attention_section_for_correct_buggy_and_missing_masks() -> None:
    correct = render_html(result_with("full_marks", "mask_correct.json"), PARTS, view=VIEW)
    buggy = render_html(result_with("partial", "mask_triu.json"), PARTS, view=VIEW)
    missing = render_html(result_with("unreadable", "mask_missing.json"), PARTS, view=VIEW)
    assert "matches the correct mask" in correct and "differs from the correct mask" in buggy
    assert "LATER tokens" in buggy and "is not defined" in missing


def test_training_section_from_history_and_compact_curve() -> None:
    page = render_html(result_with("partial", training="training_history.json"), PARTS, view=VIEW)
    assert "<b>0.268</b>" in page and "the bar is 0.2" in page  # the bar the training hook wrote
    assert "Example translations" in page and "Two young white men are outside" in page
    compact = render_html(result_with("trained"), PARTS, view=VIEW)  # {"curve", "bleu"}, no bar
    assert "<b>0.143</b>" in compact and 'alt="training curve"' in compact and "the bar is" not in compact
    series = training_series(fixture_json("training_history.json"))
    assert len(series["bleu"]) == 4 and series["x_label"] == "step"
    assert 'src="data:image/svg+xml;base64,' in page


def test_markdown_version_draws_the_mask_as_text() -> None:
    text = mask_markdown(fixture_json("mask_triu.json"))
    rows = re.findall(r"^\s*<sos> (.*)$", text, re.M)
    assert rows[0].split() == ["■", "✗", "✗", "✗", "✗", "·"]  # the first query sees the future
    correct_rows = re.findall(r"^\s*<sos> (.*)$", mask_markdown(fixture_json("mask_correct.json")), re.M)
    assert correct_rows[0].split() == ["■", "·", "·", "·", "·", "·"]
    result = result_with("partial", "mask_triu.json", "training_history.json")
    full = render_feedback_markdown(result, view=VIEW)
    assert "| Part | Points | Failed checks |" in full and "validation BLEU 0.268 (bar 0.2)" in full


def test_a_checkpoint_grading_says_how_it_was_graded_and_draws_no_curve() -> None:
    result = result_with("trained", training="training_checkpoint.json")
    page = render_html(result, PARTS, view=VIEW)
    assert "Your checkpoint <code>checkpoint.pt</code> (57.8 MB) was evaluated without training" in page
    assert "<b>0.205</b>" in page and 'alt="training curve"' not in page  # nothing was trained
    assert "A man is sleeping on a couch in a green room ." in page
    text = render_feedback_markdown(result, view=VIEW)
    assert "validation BLEU 0.205 (bar 0.2). Your checkpoint `checkpoint.pt` (57.8 MB)" in text


def test_the_sections_speak_the_feedback_language_from_this_assignments_catalogue() -> None:
    result = result_with("partial", "mask_triu.json", "training_history.json")
    with use_language("ko", ASSIGNMENT.messages_dir):
        page = render_html(result, PARTS, view=VIEW)
        title, examples = t("report.mask.title"), t("report.examples_title")
    assert title == "디코더 self-attention이 볼 수 있는 위치" and title in page and examples in page
    with use_language("ko"):  # no assignment catalogue in the context: the view asks its own
        assert [section.key for section in report_sections(result.extras)] == ["attention_mask", "training"]
        assert "디코더 self-attention이 볼 수 있는 위치" in report_sections(result.extras)[0].html()


def test_training_figures_read_bleu_curve_bar_and_how_each_run_ended() -> None:
    figures_of = ASSIGNMENT.training_figures
    assert figures_of is not None
    target, hopeless, old_format, malformed = (
        figures_of(run)
        for run in json.loads((FIXTURES / "reports" / "class_view" / "part2_runs.json").read_text(encoding="utf-8"))
    )
    assert target.metric == "BLEU" and target.value == 0.2031 and target.threshold == 0.2 and target.steps == 600
    assert target.curve == ((480.0, 0.171), (560.0, 0.2031), (600.0, 0.2104))
    assert target.stop_reason == "target" and target.stopped_early
    # the history's evaluations stand in for a missing bleu_curve; a point without a BLEU never crosses
    assert hopeless.curve == ((480.0, 0.0), (600.0, -1.0)) and hopeless.stopped_early and hopeless.value == 0.0
    # a run that ran its schedule out did not stop early; a boolean is not a step count
    assert old_format.threshold == 0.2 and old_format.steps is None and old_format.curve is None
    assert old_format.stop_reason == "max_epochs" and not old_format.stopped_early
    assert (malformed.value, malformed.curve, malformed.stop_reason) == (None, None, "")
