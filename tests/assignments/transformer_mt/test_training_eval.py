"""Trusted scoring rules that need no worker: unfitted weights named, the memorisation flag and its verdict."""

from __future__ import annotations

import html
from collections.abc import Iterator

import pytest

from assignments.transformer_mt.messages import MESSAGES_DIR, t
from assignments.transformer_mt.report_view import training_markdown, training_section
from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.training_eval import NOT_FITTED, describe_unfitted, memorisation_gap
from assignments.transformer_mt.training_part import _verdict
from autograder.config import load_config
from autograder.i18n import use_language

CONFIG = load_config(overrides={"feedback.language": "en"})


@pytest.fixture(autouse=True)
def _graded_as_part_2() -> Iterator[None]:
    """The context the engine grades Part 2 in: its catalogue serves the training modules' messages."""
    with use_language("en", MESSAGES_DIR):
        yield


def _evaluation(validation: float, test: float) -> dict:
    return {
        "bleu": validation,
        "sacrebleu": validation,
        "n_sentences": 1014,
        "split": "validation",
        "examples": [],
        "evaluated_by": "reference architecture with the submission's weights",
        "test": {"bleu": test, "sacrebleu": test, "n_sentences": 1000, "decode_s": 1.0},
    }


def test_describe_unfitted_names_the_parameters_without_a_counterpart() -> None:
    reference = [("embed.weight", [10, 4]), ("ff.weight", [8, 4]), ("ff.bias", [8]), ("norm.weight", [4])]
    student = [("embed.weight", [10, 4]), ("ff.weight", [8, 4]), ("extra.weight", [4, 4]), ("norm.weight", [4])]
    assert describe_unfitted(reference, student) == {
        "reference_only": [("ff.bias", "(8)")],
        "student_only": [("extra.weight", "(4, 4)")],
    }
    assert describe_unfitted(reference, reference) == {"reference_only": [], "student_only": []}


def test_a_gap_above_the_threshold_withholds_the_points_for_review() -> None:
    threshold = training_settings(CONFIG).memorisation_gap
    assert memorisation_gap(0.60, 0.10, threshold)["flagged"]
    assert not memorisation_gap(0.25, 0.25 - threshold + 0.01, threshold)["flagged"]
    outcome = _verdict(_evaluation(0.62, 0.08), CONFIG, {"mode": "checkpoint"})
    assert not outcome.passed and outcome.message.startswith("Training points withheld for a TA's review")
    assert outcome.details["memorisation"]["flagged"] and outcome.details["memorisation"]["gap"] == 0.54
    honest = _verdict(_evaluation(0.25, 0.26), CONFIG, {"mode": "checkpoint"})
    assert honest.passed and not honest.details["memorisation"]["flagged"]


def test_the_flag_is_loud_in_both_feedback_formats_and_languages() -> None:
    details = _verdict(_evaluation(0.62, 0.08), CONFIG, {"mode": "recipe"}).details
    details["bleu"] = 0.62
    for language in ("en", "ko"):
        with use_language(language, MESSAGES_DIR):
            banner = t("report.memorised_banner")
            assert banner in training_markdown(details)
            assert html.escape(banner) in training_section(details)


def test_weights_that_do_not_fit_earn_nothing_and_say_why() -> None:
    evaluation = {
        "bleu": 0.0,
        "sacrebleu": 0.0,
        "n_sentences": 1014,
        "split": "validation",
        "examples": [],
        "evaluated_by": NOT_FITTED,
        "not_fitted": "the reason",
        "not_fitted_detail": {},
    }
    outcome = _verdict(evaluation, CONFIG, {"mode": "recipe"})
    assert not outcome.passed and outcome.message.endswith("fit it: the reason")
