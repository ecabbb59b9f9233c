"""Part 1 (scaled dot-product attention, multi-head attention and the encoder) as the engine loads it."""

# The engine reads this one object (autograder.assignment.load_assignment). The training driver is
# imported only when its hook runs, so reading the configuration stays light.

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from assignments.attention_encoder.checks.helpers import HELPERS_SOURCE
from autograder.assignment import Assignment, TrainingFigures, TrainingOutcome, reported_number

if TYPE_CHECKING:
    from autograder.config import GraderConfig

FOLDER = Path(__file__).resolve().parent
# Margin over the training budget for starting the worker, building the model and predicting.
TRAINING_MARGIN_S = 30.0


def reference_student() -> Any:
    """The reference solution behind the worker's request interface (checks run on their own).

    Returns:
        A fresh answerer over assignments.attention_encoder.reference, with the checks' probes and helpers.
    """
    import assignments.attention_encoder.reference as part1
    from assignments.attention_encoder.checks.helpers import helpers_namespace
    from assignments.attention_encoder.checks.module_checks import CHECKS
    from autograder.checks.inprocess import ReferenceModuleStudent

    # Part 1's classes are Part 2's given code, re-exported: built with the probes the checks substitute.
    return ReferenceModuleStudent(part1, GRADER_GLOBALS, helpers_namespace(), stand_ins=CHECKS.reference_with_probes)


def run_training(
    statements: list[tuple[str, int, str]],
    config: GraderConfig,
    grader_globals: dict[str, Any],
    submission: Path | None,
) -> TrainingOutcome:
    """The training part: train the student's Encoder on sequence reversal in a worker of its own.

    Args:
        statements: the submission's definitions, as the worker takes them.
        config: the validated configuration (worker limits, grading seed, training threshold and budget).
        grader_globals: the names the grader provides.
        submission: the notebook (unused: Part 1 reads nothing beside it).

    Returns:
        The verdict with the report's details (accuracy, steps, seconds).
    """
    from assignments.attention_encoder.settings import training_settings
    from assignments.attention_encoder.training import run_training_part
    from autograder.part_kinds import worker_limits
    from autograder.sandbox import Worker

    training = training_settings(config)
    # One request trains for up to the assignment's budget: the per-request limit must cover it.
    limits = worker_limits(config, ASSIGNMENT.worker_preload)
    limits = dataclasses.replace(limits, timeout_s=max(limits.timeout_s, training.time_budget_s + TRAINING_MARGIN_S))
    with Worker(statements, limits, grader_globals, helpers_source=HELPERS_SOURCE) as worker:
        return run_training_part(worker, seed=config.grading.seed, training=training)


def training_figures(training: Mapping[str, Any]) -> TrainingFigures:
    """A graded run's figures for the class view: its test accuracy, bar and steps (no curve is kept).

    Args:
        training: the training part's report extras (assignments.attention_encoder.training).

    Returns:
        The run's figures.
    """
    return TrainingFigures(
        metric="accuracy",
        value=reported_number(training.get("accuracy")),
        threshold=reported_number(training.get("threshold")),
        curve=None,
        steps=reported_number(training.get("steps")),
    )


ASSIGNMENT = Assignment.in_folder(
    FOLDER,
    grader_globals=GRADER_GLOBALS,
    reference_student=reference_student,
    # The probes and the worker side of the training part run in the worker as `grader_helpers`.
    worker_helpers=HELPERS_SOURCE,
    training=run_training,
    training_figures=training_figures,
)
