"""Part 2 (the Transformer decoder, German-English translation on Multi30k) as the engine loads it."""

# The engine reads this one object (autograder.assignment.load_assignment). Its heavy parts (the
# reference package, the training driver) are imported only when a hook runs, so reading the
# configuration stays light.

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import mtkit
from assignments.transformer_mt.checks.probes import PROBE_SOURCE
from assignments.transformer_mt.report_view import report_sections, training_figures
from autograder.assignment import Assignment, TrainingOutcome
from autograder.i18n import current_language, t, use_language

if TYPE_CHECKING:
    from autograder.config import GraderConfig

FOLDER = Path(__file__).resolve().parent
MASK_PART = "look_ahead_mask"  # the part whose function the feedback report draws


def reference_student() -> Any:
    """The reference solution behind the worker's request interface (checks run on their own).

    Returns:
        A fresh `ReferenceStudent`.
    """
    from assignments.transformer_mt.checks.reference_student import ReferenceStudent

    return ReferenceStudent(dict(ASSIGNMENT.grader_globals))


def run_training(
    statements: list[tuple[str, int, str]],
    config: GraderConfig,
    grader_globals: dict[str, Any],
    submission: Path | None,
) -> TrainingOutcome:
    """The training part: train (or load) the student's model, then score BLEU on the trusted side.

    Args:
        statements: the submission's definitions, as the worker takes them.
        config: the validated configuration (its training and data sections).
        grader_globals: the names the grader provides.
        submission: the notebook (checkpoint mode looks beside it).

    Returns:
        The verdict with the report's details.
    """
    from assignments.transformer_mt.training_part import run_training_part

    # The training modules ask the engine's `t`, which knows this catalogue while the engine grades
    # this assignment; naming it here keeps the hook whole when a tool calls it on its own.
    with use_language(current_language(), ASSIGNMENT.messages_dir):
        return run_training_part(statements, config, grader_globals, submission=submission)


def data_preflight(config: GraderConfig) -> str | None:
    """Before a `--train` grading, the staff's warning when its Multi30k data will not be found here
    (None: a complete local folder). Args: config, the validated configuration. Returns: the text."""
    from assignments.transformer_mt.settings import part2_settings
    from mtkit.corpus import local_data_problem

    problem = local_data_problem(part2_settings(config).data.local_dir)
    with use_language(current_language(), ASSIGNMENT.messages_dir):
        return None if problem is None else t("training.data_preflight", reason=problem or t("training.data_no_folder"))


def sidecar_names(config: GraderConfig, stem: str) -> list[str]:
    """The checkpoint files checkpoint mode reads beside the notebook (none in the other modes).

    Args:
        config: the validated configuration (training.mode, training.checkpoint_names).
        stem: the notebook's file name without suffix.

    Returns:
        Candidate file names, in training.checkpoint_names order.
    """
    from assignments.transformer_mt.settings import training_settings
    from assignments.transformer_mt.training_modes import TRAINING_MODES

    training = training_settings(config)
    if not TRAINING_MODES[training.mode].submits_checkpoint:  # the config admits only known modes
        return []
    return [name.format(stem=stem) for name in training.checkpoint_names]


def report_extras(worker: Any, parts: list[str]) -> dict[str, Any]:
    """The student's own look-ahead mask, drawn in the feedback report (never raises).

    Args:
        worker: the unit parts' worker, still open.
        parts: the unit parts graded.

    Returns:
        {"attention_mask": picture} when the mask part is graded, else nothing.
    """
    if MASK_PART not in parts:
        return {}
    from assignments.transformer_mt.attention_view import collect_mask_picture

    return {"attention_mask": collect_mask_picture(worker)}


ASSIGNMENT = Assignment.in_folder(
    FOLDER,
    reference_student=reference_student,
    # The probes (stand-in classes, the train-step driver) run in the worker as `grader_helpers`;
    # mtkit (public, no solutions) is importable there: the student notebook uses it.
    worker_helpers=PROBE_SOURCE,
    worker_paths=(Path(mtkit.__file__).resolve().parent,),
    training=run_training,
    training_preflight=data_preflight,
    sidecar_names=sidecar_names,
    training_figures=training_figures,
    report_extras=report_extras,
    report_sections=report_sections,
)
