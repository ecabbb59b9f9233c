"""The training part: train (or load) the submission's model in the sandbox, measure BLEU on the trusted side.

Modes (grader.yml training.mode):
- recipe: the worker builds the student's `Transformer` with the profile's sizes and trains it
  with the grader's recipe, using the student's own masks and loss (so a leaky look-ahead mask
  gets the honest, low BLEU it earns). It receives training pairs and vocabulary sizes, never
  validation targets.
- student_hparams: the same, with the notebook's hyperparameter cell (checked against
  training.hparam_bounds) in place of the profile's sizes, batch size, dropout, learning rate and
  epochs.
- checkpoint: no training; the worker loads the weights submitted next to the notebook into the
  student's model, built with the sizes of the hyperparameter cell.
Each mode is a strategy class in assignments.transformer_mt.training_modes.
In every mode the trusted side scores the weights itself (assignments.transformer_mt.training_eval): weights that
do not fit the reference architecture earn no training points, and weights whose validation BLEU
is far above their test BLEU (training.memorisation_gap) are held for a TA's review with no points.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import mtkit
from assignments.transformer_mt.checkpoint_file import CheckpointRefused
from assignments.transformer_mt.reference.train import model_arguments
from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.training_eval import (
    NOT_FITTED,
    load_data,
    map_onto_reference,
    memorisation_gap,
    probe_batch,
)
from assignments.transformer_mt.training_loop import TrainingBudgetSpent
from assignments.transformer_mt.training_modes import TRAINING_MODES
from autograder.assignment import TrainingOutcome
from autograder.config import GraderConfig
from autograder.i18n import t
from autograder.part_kinds import worker_limits
from autograder.progress import training_progress_shown
from autograder.sandbox import Limits, StudentError, Worker, WorkerFailure
from mtkit.corpus import CorpusError

MTKIT_DIR = Path(mtkit.__file__).resolve().parent  # copied into the training worker's sandbox


def training_limits(config: GraderConfig, budget_s: float) -> Limits:
    """Limits of the training worker: the profile's time budget, more memory and threads."""
    training = training_settings(config)
    return dataclasses.replace(
        worker_limits(config),
        timeout_s=budget_s,
        memory_mb=training.memory_mb,
        threads=training.threads,
        # the trusted side fetches the trained weights: a checkpoint's size, not reply_mb
        reply_mb=max(config.worker.reply_mb, int(training.checkpoint_max_mb) + 64),
        warm_start=False,  # one long worker with its own thread count: the cold start, as before
        warm_preload=(),
    )


def _reason(error: StudentError | WorkerFailure) -> str:
    if isinstance(error, WorkerFailure):
        return error.reason
    return f"{error.exc_type}: {error.message}"


def _verdict(evaluation: dict[str, Any], config: GraderConfig, details: dict[str, Any]) -> TrainingOutcome:
    """Points only for BLEU the trusted side measured, at or above the bar, without a memorisation flag."""
    threshold = training_settings(config).threshold_bleu
    details["evaluated_by"] = evaluation.pop("evaluated_by")
    details["evaluation"] = evaluation
    if details["evaluated_by"] == NOT_FITTED:
        return TrainingOutcome(False, t("training.not_fitted", reason=evaluation["not_fitted"]), details)
    bleu = float(evaluation["bleu"])
    verdict = t(
        "training.verdict",
        bleu=bleu,
        n=evaluation["n_sentences"],
        sacrebleu=evaluation["sacrebleu"],
        threshold=threshold,
    )
    if "test" in evaluation:
        check = memorisation_gap(bleu, evaluation["test"]["bleu"], training_settings(config).memorisation_gap)
        details["memorisation"] = check
        if check["flagged"] and bleu >= threshold:  # below the bar there are no points to hold
            return TrainingOutcome(
                False,
                t(
                    "training.memorised",
                    validation=check["validation_bleu"],
                    test=check["test_bleu"],
                    gap=check["gap"],
                    threshold=check["threshold"],
                ),
                details,
            )
    if bleu >= threshold:
        return TrainingOutcome(True, verdict, details)
    return TrainingOutcome(False, f"{verdict} {t('training.low_bleu_hint.' + details['mode'])}", details)


def run_training_part(
    statements: list[tuple[str, int, str]],
    config: GraderConfig,
    grader_globals: dict[str, Any],
    submission: Path | None = None,
) -> TrainingOutcome:
    """Train (or load) the submission's model as training.mode says and grade the BLEU it reaches.

    Args:
        statements: the submission's loaded statements, as the worker takes them.
        config: the validated configuration.
        grader_globals: the globals the template's functions read (vocab_size is set here).
        submission: the submitted notebook (checkpoint mode looks for the weights beside it).

    Returns:
        The verdict, with BLEU, sacreBLEU, the curves and examples in `details`.
    """
    started = time.monotonic()
    training = training_settings(config)
    mode = TRAINING_MODES[training.mode]
    profile_name = training.profile_name()
    profile = training.profile_hparams(profile_name)
    details: dict[str, Any] = {
        "mode": mode.name,
        "profile_name": profile_name,
        "threshold_bleu": training.threshold_bleu,
    }
    try:
        checkpoint = mode.find_checkpoint(Path(submission or "."), training)
    except CheckpointRefused as refused:
        return TrainingOutcome(False, t("training.not_graded", reason=refused), details)
    if checkpoint is not None:
        details["checkpoint"] = {"file": checkpoint.name, "bytes": len(checkpoint.data), "sha256": checkpoint.sha256}
    label = Path(submission).name if submission is not None else mode.name
    if config.grading.progress:  # from the first second: preparing the data takes a while the first time
        print(t("training.progress.preparing", label=label), file=sys.stderr, flush=True)
    try:
        data = load_data(config)
    except CorpusError as error:  # the grader's data, not the submission: the other parts keep their points
        return TrainingOutcome(False, t("training.data_missing", reason=error), details)
    vocab_sizes = {lang: len(v) for lang, v in data.vocabs.items()}
    budget = float(profile["time_budget_s"])
    globals_ = {**grader_globals, "vocab_size": dict(vocab_sizes)}
    with Worker(statements, training_limits(config, budget), globals_, extra_paths=[MTKIT_DIR]) as worker:
        missing = [n for n in mode.needed if not worker.has(n)]
        if missing:
            return TrainingOutcome(False, t("training.skipped.missing", name=missing[0]), details)
        try:
            settings = mode.settings(worker, profile, config)
        except (StudentError, WorkerFailure) as error:
            return TrainingOutcome(False, t("training.skipped.cell_unreadable", reason=_reason(error)), details)
        if settings.values:
            details["hyperparameters"] = {
                n: {"value": settings.values[n], "source": settings.sources[n]} for n in settings.values
            }
        if settings.problem:
            return TrainingOutcome(False, t("training.skipped.problem", problem=settings.problem), details)
        hparams = settings.hparams
        if mode.shows_recipe:
            details["profile"] = {k: hparams[k] for k in sorted(hparams)}
        details["method"] = mode.method(profile_name, settings, checkpoint)
        try:
            session = mode.start_session(
                worker, hparams, model_arguments(hparams, vocab_sizes, data.max_length), data, config, checkpoint
            )
            worker.run(session, "logits", probe_batch(data, 4), mode="eval")
        except (StudentError, WorkerFailure) as error:
            refusal = mode.refusal(error)
            if refusal is not None:
                return TrainingOutcome(False, t("training.not_graded", reason=refusal), details)
            return TrainingOutcome(False, t("training.skipped.no_forward", reason=_reason(error)), details)
        try:
            # Weights that cannot be scored by the trusted side earn nothing: say so before training.
            fit = map_onto_reference(worker, session, hparams, data)
            if fit.model is None:
                details["evaluated_by"] = NOT_FITTED
                details["not_fitted_detail"] = fit.detail or {}
                return TrainingOutcome(False, t("training.not_fitted", reason=fit.problem), details)
            with training_progress_shown(label, budget, config.grading.progress):
                evaluation = mode.evaluate(worker, session, hparams, data, budget, details)
        except (StudentError, WorkerFailure) as error:
            return TrainingOutcome(False, t(mode.failure_key, reason=_reason(error)), details)
        except TrainingBudgetSpent as spent:  # the trusted side's own limit: the worker cannot extend it
            details["wall_s"] = round(time.monotonic() - started, 1)
            return TrainingOutcome(
                False, t("training.over_budget", seconds=spent.seconds, evaluations=spent.evaluations), details
            )
    details["wall_s"] = round(time.monotonic() - started, 1)
    return _verdict(evaluation, config, details)
