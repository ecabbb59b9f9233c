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
In every mode the trusted side scores the weights itself (autograder.training_eval): weights that
do not fit the reference architecture earn no training points, and weights whose validation BLEU
is far above their test BLEU (training.memorisation_gap) are held for a TA's review with no points.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import mtkit
from autograder.checkpoint_file import CheckpointRefused, SubmittedCheckpoint, find_checkpoint
from autograder.config import GraderConfig
from autograder.sandbox import Global, Limits, StudentError, Worker, WorkerFailure
from autograder.student_hparams import CELL_NAMES, MODEL_NAMES, CellSettings, apply_cell, read_cell, student_recipe
from autograder.reports.i18n import t
from autograder.training_eval import (NOT_FITTED, evaluate_weights, load_data, map_onto_reference,
                                     memorisation_gap, probe_batch)
from mtkit.constants import PAD_IDX
from mtkit.dataset import PreparedData
from mtkit.training import recipe_from_profile
from mtkit.worker_training import flatten

TRAINING_SESSION = "mtkit.worker_training:TrainingSession"
CHECKPOINT_SESSION = "mtkit.worker_checkpoint:CheckpointSession"
MTKIT_DIR = Path(mtkit.__file__).resolve().parent   # copied into the training worker's sandbox
NEEDED = ("Transformer", "create_padding_mask_for_attention", "create_look_ahead_mask_for_attention")


@dataclass
class TrainingOutcome:
    """What the training part found: the verdict and everything the report shows."""

    passed: bool
    message: str
    details: dict[str, Any] = field(default_factory=dict)


def training_limits(config: GraderConfig, budget_s: float) -> Limits:
    """Limits of the training worker: the profile's time budget, more memory and threads."""
    worker, training = config.worker, config.training
    return Limits(timeout_s=budget_s, startup_timeout_s=worker.startup_timeout_s,
                  memory_mb=training.memory_mb, output_bytes=worker.output_bytes,
                  threads=training.threads, isolation=worker.isolation,
                  # the trusted side fetches the trained weights: a checkpoint's size, not reply_mb
                  reply_mb=max(worker.reply_mb, int(training.checkpoint_max_mb) + 64))


def _model_args(hparams: dict[str, Any], vocab_sizes: dict[str, int], max_length: int) -> list[Any]:
    return [dict(vocab_sizes), max_length, int(hparams["embedding_dim"]), int(hparams["feed_forward_dim"]),
            int(hparams["num_heads"]), int(hparams["num_layers"]), float(hparams["drop_prob"])]


def _reason(error: StudentError | WorkerFailure) -> str:
    return getattr(error, "reason", None) or f"{error.exc_type}: {error.message}"


def _train_and_evaluate(worker: Worker, session: int, hparams: dict[str, Any], data: PreparedData,
                        timeout_s: float) -> tuple[dict[str, Any], list[dict], dict | None]:
    """Drive the worker's training: at every pause measure BLEU and report it back.

    Training stops at the first pause whose weights do not fit the reference architecture (no
    later step can earn points, see autograder.training_eval).

    Returns:
        (evaluation of the final weights with the test split, BLEU curve [{step, epochs, bleu}],
        training summary, or None when training was stopped because the weights do not fit).
    """
    curve: list[dict[str, Any]] = []
    while True:
        event = worker.run(session, "forward", [], mode="train", timeout_s=timeout_s)
        if event["done"]:
            break
        measured = evaluate_weights(worker, session, hparams, data)
        curve.append({"step": event["step"], "epochs": event["epochs"], "bleu": measured["bleu"]})
        if measured["evaluated_by"] == NOT_FITTED:
            return measured, curve, None
        worker.run(session, "report_bleu", [float(measured["bleu"])], mode="train")
    final = evaluate_weights(worker, session, hparams, data, with_test=True)
    if not (curve and curve[-1]["step"] == event["step"]):   # else the last pause measured these weights
        curve.append({"step": event["step"], "epochs": event["epochs"], "bleu": final["bleu"]})
    return final, curve, event


def _verdict(evaluation: dict[str, Any], config: GraderConfig, details: dict[str, Any]) -> TrainingOutcome:
    """Points only for BLEU the trusted side measured, at or above the bar, without a memorisation flag."""
    threshold = config.training.threshold_bleu
    details["evaluated_by"] = evaluation.pop("evaluated_by")
    details["evaluation"] = evaluation
    if details["evaluated_by"] == NOT_FITTED:
        return TrainingOutcome(False, t("training.not_fitted", reason=evaluation["not_fitted"]), details)
    bleu = float(evaluation["bleu"])
    verdict = t("training.verdict", bleu=bleu, n=evaluation["n_sentences"], sacrebleu=evaluation["sacrebleu"],
                threshold=threshold)
    if "test" in evaluation:
        check = memorisation_gap(bleu, evaluation["test"]["bleu"], config.training.memorisation_gap)
        details["memorisation"] = check
        if check["flagged"] and bleu >= threshold:   # below the bar there are no points to hold
            return TrainingOutcome(False, t("training.memorised", validation=check["validation_bleu"],
                                            test=check["test_bleu"], gap=check["gap"],
                                            threshold=check["threshold"]), details)
    if bleu >= threshold:
        return TrainingOutcome(True, verdict, details)
    return TrainingOutcome(False, f"{verdict} {t('training.low_bleu_hint.' + details['mode'])}", details)


def _cell_settings(worker: Worker, mode: str, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
    """The hyperparameters of this run: the profile's, or the notebook's where the mode reads them."""
    if mode == "recipe":
        return CellSettings(dict(profile))
    names = CELL_NAMES if mode == "student_hparams" else MODEL_NAMES
    described = read_cell(worker, names, timeout_s=config.worker.timeout_s)
    return apply_cell(profile, described, config.training.hparam_bounds, names)


def _method(mode: str, profile_name: str, settings: CellSettings,
            checkpoint: SubmittedCheckpoint | None = None) -> str:
    if mode == "checkpoint":
        return t("training.method.checkpoint", name=checkpoint.name, size_mb=checkpoint.size_mb,
                 settings=settings.summary())
    if mode == "student_hparams":
        return t("training.method.student_hparams", settings=settings.summary(), profile=profile_name)
    return t("training.method.recipe", profile=profile_name)


def run_training_part(statements: list[tuple[str, int, str]], config: GraderConfig,
                      grader_globals: dict[str, Any], submission: Path | None = None) -> TrainingOutcome:
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
    training = config.training
    mode = training.mode
    profile_name = training.profile_name()
    profile = training.profile_hparams(profile_name)
    details: dict[str, Any] = {"mode": mode, "profile_name": profile_name,
                               "threshold_bleu": training.threshold_bleu}
    checkpoint = None
    if mode == "checkpoint":
        try:
            checkpoint = find_checkpoint(Path(submission or "."), training.checkpoint_names,
                                         training.checkpoint_max_mb)
        except CheckpointRefused as refused:
            return TrainingOutcome(False, t("training.not_graded", reason=refused), details)
        details["checkpoint"] = {"file": checkpoint.name, "bytes": len(checkpoint.data),
                                 "sha256": checkpoint.sha256}
    data = load_data(config)
    vocab_sizes = {lang: len(v) for lang, v in data.vocabs.items()}
    budget = float(profile["time_budget_s"])
    globals_ = {**grader_globals, "vocab_size": dict(vocab_sizes)}
    needed = NEEDED if mode == "checkpoint" else (*NEEDED, "calculate_loss")
    with Worker(statements, training_limits(config, budget), globals_, extra_paths=[MTKIT_DIR]) as worker:
        missing = [n for n in needed if not worker.has(n)]
        if missing:
            return TrainingOutcome(False, t("training.skipped.missing", name=missing[0]), details)
        try:
            settings = _cell_settings(worker, mode, profile, config)
        except (StudentError, WorkerFailure) as error:
            return TrainingOutcome(False, t("training.skipped.cell_unreadable", reason=_reason(error)), details)
        if settings.values:
            details["hyperparameters"] = {n: {"value": settings.values[n], "source": settings.sources[n]}
                                          for n in settings.values}
        if settings.problem:
            return TrainingOutcome(False, t("training.skipped.problem", problem=settings.problem), details)
        hparams = student_recipe(settings) if mode == "student_hparams" else settings.hparams
        if mode != "checkpoint":   # a checkpoint only uses the model sizes (hyperparameters)
            details["profile"] = {k: hparams[k] for k in sorted(hparams)}
        details["method"] = _method(mode, profile_name, settings, checkpoint)
        try:
            session = _start_session(worker, hparams, _model_args(hparams, vocab_sizes, data.max_length),
                                     data, config, checkpoint)
            worker.run(session, "logits", probe_batch(data, 4), mode="eval")
        except (StudentError, WorkerFailure) as error:
            if mode == "checkpoint" and getattr(error, "exc_type", "") == "CheckpointError":
                return TrainingOutcome(False, t("training.not_graded", reason=error.message), details)
            return TrainingOutcome(False, t("training.skipped.no_forward", reason=_reason(error)), details)
        try:
            # Weights that cannot be scored by the trusted side earn nothing: say so before training.
            fit = map_onto_reference(worker, session, hparams, data)
            if fit.model is None:
                details["evaluated_by"] = NOT_FITTED
                details["not_fitted_detail"] = fit.detail or {}
                return TrainingOutcome(False, t("training.not_fitted", reason=fit.problem), details)
            if mode == "checkpoint":
                evaluation = evaluate_weights(worker, session, hparams, data, with_test=True)
            else:
                evaluation, curve, summary = _train_and_evaluate(worker, session, hparams, data,
                                                                 timeout_s=budget * 1.25 + 60)
                details["bleu_curve"] = curve
                if summary is not None:
                    details["training"] = {k: summary[k] for k in ("step", "epochs", "stop_reason", "wall_s")}
                    details["history"] = json.loads(summary["history"])
        except (StudentError, WorkerFailure) as error:
            key = "training.failed.evaluation" if mode == "checkpoint" else "training.failed.training"
            return TrainingOutcome(False, t(key, reason=_reason(error)), details)
    details["wall_s"] = round(time.monotonic() - started, 1)
    return _verdict(evaluation, config, details)


def _start_session(worker: Worker, hparams: dict[str, Any], model_args: list[Any], data: PreparedData,
                   config: GraderConfig, checkpoint: SubmittedCheckpoint | None) -> int:
    """Build the student's model in the worker: loaded from the checkpoint when there is one,
    else in a TrainingSession holding their masks and loss under the recipe.

    Returns:
        The session's handle.
    """
    seed, threads = config.grading.seed, config.training.threads
    masks = [Global("Transformer"), Global("create_padding_mask_for_attention"),
             Global("create_look_ahead_mask_for_attention")]
    if checkpoint is not None:
        data_bytes = torch.frombuffer(bytearray(checkpoint.data), dtype=torch.uint8)   # (N,) the file
        return worker.new(CHECKPOINT_SESSION, [*masks, model_args, data_bytes, checkpoint.name, threads,
                                               PAD_IDX], seed=seed)
    recipe = recipe_from_profile(hparams, seed=seed, target_bleu=config.training.threshold_bleu)
    src_flat, src_len = flatten(data.splits["train"].src)
    tgt_flat, tgt_len = flatten(data.splits["train"].tgt)
    return worker.new(TRAINING_SESSION, [
        *masks, Global("calculate_loss"), model_args, dict(vars(recipe)), float(hparams["label_smoothing"]),
        src_flat, src_len, tgt_flat, tgt_len, threads, PAD_IDX], seed=seed)
