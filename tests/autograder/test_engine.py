"""The engine on the bundled examples: full marks, exact losses, one clear cause per part."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.config import GraderConfig, load_config
from autograder.engine import grade_submission as engine_grade_submission
from autograder.i18n import t
from autograder.reports.submission_json import submission_json
from autograder.results import SubmissionResult

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOK_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
UNIT_PARTS = ["look_ahead_mask", "decoder_layer", "decoder", "transformer_forward", "masked_loss"]


@pytest.fixture(scope="module")
def config() -> GraderConfig:
    return load_config()


@pytest.fixture(scope="module")
def graded(config: GraderConfig) -> dict[str, SubmissionResult]:
    names = ["correct_original_format", "buggy_original_format", "template_untouched"]
    return {name: grade_submission(EXAMPLES / f"{name}.ipynb", config) for name in names}


def _points(result: SubmissionResult) -> dict[str, float]:
    return {p.part: p.points for p in result.parts}


def test_correct_example_gets_full_marks_on_every_unit_part(graded, config) -> None:
    result = graded["correct_original_format"]
    assert result.status == "graded"
    assert _points(result) == {**{p: config.parts[p].points for p in UNIT_PARTS}, "training": 0}
    failed = [c.check_id for p in result.parts for c in p.checks if not c.passed and not c.skipped]
    assert failed == []


def test_buggy_example_loses_points_exactly_on_its_two_bugged_parts(graded, config) -> None:
    points = _points(graded["buggy_original_format"])
    full = {p: config.parts[p].points for p in UNIT_PARTS}
    lost = sorted(p for p in UNIT_PARTS if points[p] < full[p])
    assert lost == ["look_ahead_mask", "masked_loss"]
    # Every failed check has a student-facing reason, none is a grader error (in either language).
    assert "internal_errors" not in graded["buggy_original_format"].extras
    assert points["look_ahead_mask"] < full["look_ahead_mask"]


def test_untouched_template_scores_zero_with_one_message_per_part(graded) -> None:
    result = graded["template_untouched"]
    assert result.status == "graded"
    for part in result.parts:
        if part.skipped:
            continue
        assert part.points == 0, part.part
        assert len(part.messages) == 1, (part.part, part.messages)
        assert "Traceback" not in part.messages[0]
    mask_message = next(p for p in result.parts if p.part == "look_ahead_mask").messages[0]
    # grader.yml's feedback language is Korean: "`...` is in cell 13, ..., which did not parse"
    assert "13번 셀" in mask_message and "파싱되지 않았습니다" in mask_message


def test_training_part_is_reported_as_skipped_when_not_enabled(graded) -> None:
    training = next(p for p in graded["correct_original_format"].parts if p.part == "training")
    message = training.checks[0].message
    # Korean (grader.yml feedback.language), and never the TA's --train flag.
    assert training.skipped and message == t("training.disabled", language="ko") and "--train" not in message


def test_a_lone_surrogate_in_an_exception_costs_only_its_statement(config, tmp_path: Path) -> None:
    notebook = json.loads((EXAMPLES / "correct_original_format.ipynb").read_text())
    broken = json.loads((NOTEBOOK_FIXTURES / "surrogate.ipynb").read_text())["cells"][1]  # raises '\ud800'
    notebook["cells"].insert(3, broken)
    path = tmp_path / "surrogate.ipynb"
    path.write_text(json.dumps(notebook))
    result = grade_submission(path, config, parts=["look_ahead_mask"])
    assert result.points == config.parts["look_ahead_mask"].points
    assert any("ValueError: bad ? text" in problem for problem in result.load_problems), result.load_problems


def test_a_notebook_above_the_size_limit_is_refused_before_reading(config) -> None:
    small = load_config(overrides={"grading.max_notebook_mb": 0.01, "feedback.language": "en"})
    result = grade_submission(EXAMPLES / "correct_original_format.ipynb", small, parts=["masked_loss"])
    assert result.status == "unreadable" and result.points == 0
    assert "above the grader's limit of 0.01 MB (grader.yml grading.max_notebook_mb)" in result.load_problems[0]
    assert "Clear the outputs" in result.load_problems[0]


def test_grading_twice_gives_byte_identical_json_apart_from_timing(graded, config) -> None:
    again = grade_submission(EXAMPLES / "buggy_original_format.ipynb", config)
    first = json.loads(submission_json(graded["buggy_original_format"]))
    second = json.loads(submission_json(again))
    first.pop("grading_seconds"), second.pop("grading_seconds")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_selecting_parts_grades_only_those(config) -> None:
    result = grade_submission(EXAMPLES / "buggy_original_format.ipynb", config, parts=["masked_loss"])
    graded_parts = [p.part for p in result.parts if not p.skipped]
    assert graded_parts == ["masked_loss"]
    assert result.max_points == config.parts["masked_loss"].points
