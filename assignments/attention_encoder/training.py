"""Trusted side of Part 1's training part: draw the test set, ask the worker to train, score.

The worker (worker_training.train_and_predict, run in the sandbox as a grader helper) trains the
student's Encoder with the grader's head on reversal batches it draws itself, and returns its
predictions for test inputs the grader drew with its own seed, with the trained parameters. The
targets never leave this process. The accuracy is computed here: the trained parameters are
loaded into the reference Encoder (structural mapping, as the unit checks' transplant) and the
trusted side predicts the test set itself; the returned predictions must agree with those. So an
Encoder that behaves one way under the unit checks and computes the reversal by hand in training
(no attention at all) earns nothing: its weights do not make the reference architecture reverse.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

import assignments.attention_encoder.reference as part1
from assignments.attention_encoder import worker_training
from assignments.attention_encoder.checks.helpers import TRAIN_HELPER
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.settings import TrainingConfig
from autograder.assignment import TrainingOutcome
from autograder.transplant import candidate_mappings

# The recipe (measured on the 2-core development machine, see README.md): the reference reaches
# 100% test accuracy after 400 steps. Sizes are the assignment's kind of model, scaled down.
SETTINGS: dict[str, Any] = {
    "vocab_size": 14,  # 4 special ids (never inputs) + 10 ordinary tokens
    "max_length": 10,
    "min_length": 3,
    "embedding_dim": 64,
    "feed_forward_dim": 128,
    "num_heads": 4,
    "num_layers": 2,
    "drop_prob": 0.0,
    "batch_size": 64,
    "learning_rate": 3e-3,
    "steps": 400,
    "seed": 0,
    "time_budget_s": 120.0,
}
TEST_ROWS = 500
TEST_SEED_OFFSET = 10_007  # the test set's seed is the grading seed plus this; training uses its own
# Share of the test positions where the reference architecture, with the returned weights, must
# predict what the worker returned (float differences can flip a near tie, nothing more).
MIN_AGREEMENT = 0.99


def test_set(seed: int) -> tuple[Tensor, Tensor]:
    """The grader's test inputs and targets for a grading seed.

    Args:
        seed: the grading seed.

    Returns:
        (inputs, targets), LongTensors (TEST_ROWS, max_length).
    """
    generator = torch.Generator().manual_seed(seed + TEST_SEED_OFFSET)
    return worker_training.reversal_batch(
        generator, TEST_ROWS, SETTINGS["max_length"], SETTINGS["min_length"], SETTINGS["vocab_size"]
    )


def accuracy(predictions: Tensor, targets: Tensor) -> float:
    """Share of the non-padding positions whose predicted token is the target.

    Args:
        predictions: (N, L) predicted ids.
        targets: (N, L) target ids, padding = worker_training.REVERSAL_PAD.

    Returns:
        The accuracy in [0, 1].
    """
    real = targets != worker_training.REVERSAL_PAD
    return float(((predictions == targets) & real).sum()) / float(real.sum())


def run_training_part(student: Any, seed: int = 0, training: TrainingConfig | None = None) -> TrainingOutcome:
    """Train the student's Encoder in the worker and grade the predictions on the trusted side.

    Args:
        student: the worker client (or an in-process stand-in), started with the helpers source
            of checks/helpers.py.
        seed: the grading seed (draws the test set).
        training: grader.yml's training section (threshold and budget; None: its defaults).

    Returns:
        The verdict, with the accuracy, steps and seconds in `details`.
    """
    from autograder.sandbox import Global, StudentError, WorkerFailure

    training = training if training is not None else TrainingConfig()
    threshold, budget = training.threshold_accuracy, training.time_budget_s
    if not student.has("Encoder"):
        return TrainingOutcome(False, t("ae.training.missing", name="Encoder"))
    inputs, targets = test_set(seed)
    settings = {**SETTINGS, "time_budget_s": budget}
    try:
        # a margin over the training budget for building the model and predicting
        reply = student.call(TRAIN_HELPER, [Global("Encoder"), settings, inputs], timeout_s=budget + 30)
    except (StudentError, WorkerFailure) as error:
        reason = error.reason if isinstance(error, WorkerFailure) else f"{error.exc_type}: {error.message}"
        return TrainingOutcome(False, t("ae.training.failed", reason=reason))
    predictions = reply.get("predictions") if isinstance(reply, dict) else None
    if not isinstance(predictions, Tensor) or tuple(predictions.shape) != tuple(targets.shape):
        got = tuple(predictions.shape) if isinstance(predictions, Tensor) else type(predictions).__name__
        return TrainingOutcome(False, t("ae.training.bad_predictions", got=got, want=tuple(targets.shape)))
    trusted = trusted_predictions(reply.get("parameters"), inputs, predictions.to(torch.long))
    if trusted is None:
        return TrainingOutcome(False, t("ae.training.not_fitted"))
    score = accuracy(trusted, targets)
    details = {
        "accuracy": score,
        "threshold": threshold,
        "steps": int(reply.get("steps", 0)),
        "seconds": float(reply.get("seconds", 0.0)),
        "test_rows": TEST_ROWS,
    }
    message = t(
        "ae.training.verdict",
        accuracy=score,
        count=TEST_ROWS,
        threshold=threshold,
        steps=details["steps"],
        seconds=details["seconds"],
    )
    if score >= threshold:
        return TrainingOutcome(True, message, details)
    return TrainingOutcome(False, f"{message} {t('ae.training.low_hint')}", details)


def reference_model() -> torch.nn.Module:
    """The reference Encoder with the grader's head, in the training settings."""
    encoder = part1.Encoder(*(SETTINGS[name] for name in worker_training.ENCODER_ARGS))
    model: torch.nn.Module = worker_training.ReversalModel(encoder, SETTINGS["embedding_dim"], SETTINGS["vocab_size"])
    return model.eval()


def trusted_predictions(parameters: Any, inputs: Tensor, returned: Tensor) -> Tensor | None:
    """The reference architecture's predictions with the trained parameters.

    Args:
        parameters: what the worker returned as the trained parameters ({name: tensor}).
        inputs: the grader's test inputs.
        returned: the predictions the worker returned for them.

    Returns:
        (N, L) predictions made on the trusted side, or None when no mapping of the parameters
        onto the reference reproduces the returned predictions (the weights do not fit).
    """
    if not isinstance(parameters, dict) or not all(
        isinstance(k, str) and isinstance(v, Tensor) and v.is_floating_point() for k, v in parameters.items()
    ):
        return None
    model = reference_model()
    reference = [(name, list(p.shape)) for name, p in model.named_parameters()]
    student = [(name, list(v.shape)) for name, v in parameters.items()]
    for mapping in candidate_mappings(reference, student):
        state = {name: parameters[mapping[name]].to(torch.float32) for name, _ in reference}
        model.load_state_dict(state, strict=True)
        with torch.no_grad():
            predictions = model(inputs).argmax(dim=-1)
        if float((predictions == returned).to(torch.float32).mean()) >= MIN_AGREEMENT:
            return predictions
    return None
