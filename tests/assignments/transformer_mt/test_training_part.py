"""The training part: trained in the sandbox with the submission's own masks and loss, scored honestly."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from assignments.transformer_mt.settings import training_settings
from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.engine import grade_submission as engine_grade_submission
from autograder.i18n import use_language
from autograder.results import SubmissionResult

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

ROOT = Path(__file__).resolve().parents[3]
CORRECT = ROOT / "examples" / "correct_original_format.ipynb"
ENGLISH = {"feedback.language": "en"}


def _training(result: SubmissionResult) -> tuple[float, dict]:
    part = next(p for p in result.parts if p.part == "training")
    assert not part.skipped
    return part.points, result.extras["training"]


def test_a_model_copying_the_next_target_token_scores_no_bleu_and_no_points(
    tiny_training_config, notebook_variant
) -> None:
    result = grade_submission(notebook_variant("copy_next_token"), tiny_training_config(**ENGLISH), parts=["training"])
    points, details = _training(result)
    assert points == 0
    # Its logits are not what its weights compute: nothing is scored, and nothing is trained.
    assert details["evaluated_by"].startswith("not scored")
    assert details["not_fitted_detail"]["max_logit_difference"] > 1
    assert "training" not in details and "evaluation" not in details
    message = next(p for p in result.parts if p.part == "training").checks[0].message
    assert message.startswith("No training points: the grader translates with the assignment's")
    assert "computes different outputs from the same weights" in message


def test_a_future_visible_mask_is_trained_as_is_and_gets_its_honest_bleu(
    tiny_training_config, notebook_variant
) -> None:
    result = grade_submission(
        notebook_variant("future_visible_mask"), tiny_training_config(**ENGLISH), parts=["training"]
    )
    points, details = _training(result)
    assert points == 0
    assert details["evaluation"]["bleu"] < 0.05
    message = next(p for p in result.parts if p.part == "training").checks[0].message
    assert "Validation BLEU" in message and "look-ahead mask" in message
    assert details["history"]["losses"], "the loss curve is reported"
    assert details["method"] == "Trained by the grader with the `cpu` profile."


def test_same_notebook_same_profile_same_seed_gives_identical_bleu_and_losses(tiny_training_config) -> None:
    first = _training(grade_submission(CORRECT, tiny_training_config(), parts=["training"]))[1]
    second = _training(grade_submission(CORRECT, tiny_training_config(), parts=["training"]))[1]
    assert first["evaluated_by"].startswith("reference architecture")
    assert first["evaluation"]["bleu"] == second["evaluation"]["bleu"]
    assert first["bleu_curve"] == second["bleu_curve"]
    assert [w["loss"] for w in first["history"]["losses"]] == [w["loss"] for w in second["history"]["losses"]]


def test_training_is_skipped_with_a_reason_when_the_model_cannot_run(tiny_training_config) -> None:
    template = ROOT / "examples" / "template_untouched.ipynb"
    result = grade_submission(template, tiny_training_config(**ENGLISH), parts=["training"])
    part = next(p for p in result.parts if p.part == "training")
    assert part.points == 0
    assert part.checks[0].message.startswith("Training was skipped")
    korean = grade_submission(template, tiny_training_config(), parts=["training"])  # grader.yml: ko
    assert next(p for p in korean.parts if p.part == "training").checks[0].message.startswith("학습을 건너뛰었습니다")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_correct_notebook_earns_the_training_points_with_the_cpu_profile() -> None:
    budget_s = training_settings(load_config()).profiles["cpu"].time_budget_s
    # The budget is the quiet machine's; CI shares its cores, so the run gets three times as long
    # (tests/reference/test_train_slow.py checks the profile's budget itself, in CPU seconds).
    overrides = {
        "training.enabled": True,
        "training.profile": "cpu",
        "training.profiles.cpu.time_budget_s": 3 * budget_s,
    }
    config = load_config(overrides=overrides)
    points, details = _training(grade_submission(CORRECT, config, parts=["training"]))
    assert points == config.parts["training"].points
    assert details["evaluation"]["bleu"] >= training_settings(config).threshold_bleu
    assert details["training"]["stop_reason"] == "target"


def test_missing_training_data_fails_only_the_training_part_and_says_so_in_korean(
    tiny_training_config, tmp_path, monkeypatch
) -> None:
    """The grader's own data missing is no reason to take the unit parts' points away."""
    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    config = tiny_training_config(**{"data.local_dir": str(tmp_path / "nowhere")})  # grader.yml: ko
    result = grade_submission(CORRECT, config)
    assert result.status == "graded"
    units = [p for p in result.parts if p.part != "training"]
    assert units and all(p.points == p.max_points for p in units)
    training = next(p for p in result.parts if p.part == "training")
    assert training.points == 0 and not training.skipped
    message = training.checks[0].message
    assert message.startswith("학습 파트를 채점하지 못했습니다: 채점 컴퓨터에 학습에 쓸 Multi30k 데이터가 없습니다")
    assert "다른 파트의 점수는 그대로입니다" in message


def test_the_cli_is_told_before_grading_when_the_training_data_is_missing(tmp_path, monkeypatch) -> None:
    from assignments.transformer_mt.assignment import data_preflight

    assignment = load_assignment("transformer_mt")
    assert assignment.training_preflight is data_preflight
    complete = os.environ.get("MULTI30K_DIR")  # the Makefile's (and CI's) data folder
    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    with use_language("ko"):  # the CLI's, from feedback.language
        warning = data_preflight(load_config(overrides={"data.local_dir": str(tmp_path)}))
        hub = data_preflight(load_config())  # no folder at all: the hub, unreachable offline
    assert warning is not None and warning.startswith("경고: 학습 파트에는 Multi30k 데이터가 필요한데")
    assert "MULTI30K_DIR" in warning and str(tmp_path) in warning
    assert hub is not None and "Hugging Face" in hub
    if complete:
        monkeypatch.setenv("MULTI30K_DIR", complete)
        assert data_preflight(load_config()) is None
