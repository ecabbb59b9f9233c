"""Trusted BLEU of a submission's weights held in a worker session (trained there or loaded there).

The trusted side reads the weights, maps them onto the reference architecture (the same
structural mapping as the unit checks, confirmed by matching logits), translates the whole
validation split with its own greedy decoder and computes NLTK corpus BLEU. Nothing the worker
translates or reports is scored: student code can replace anything inside the worker.

Weights that do not fit the reference architecture earn no BLEU: the result says which
parameters did not fit (or that the logits differ) and what to do.

The final weights are also scored on the test split (test_2016_flickr) with the same decoder: a
validation BLEU far above the test BLEU means the weights memorised the public validation split
(see `memorisation_gap`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from assignments.transformer_mt.reference.evaluate import evaluate_model
from assignments.transformer_mt.reference.masks import (
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.model import Transformer
from assignments.transformer_mt.reference.train import build_model
from assignments.transformer_mt.settings import part2_settings
from autograder.config import GraderConfig
from autograder.i18n import t  # student-facing text, in the configured language
from autograder.sandbox import Worker
from autograder.transplant import candidate_mappings
from mtkit.batching import pad_pair_batch
from mtkit.constants import PAD_IDX
from mtkit.dataset import PreparedData, prepare_data

BY_REFERENCE = "reference architecture with the submission's weights"
NOT_FITTED = "not scored: the weights do not fit the reference architecture"
TEST_SPLIT = "test"  # mtkit's name for test_2016_flickr (1,000 pairs)
MAX_NAMED = 3  # parameters named in a "does not fit" message
# A pause of the training run first scores the first ESTIMATE_SENTENCES validation sentences; below
# ESTIMATE_GATE x the bar that estimate stands for the pause (the whole split is not decoded). A
# correct run's estimate near the bar is far above it; a broken run pays ~1/8 of an evaluation.
ESTIMATE_SENTENCES = 128
ESTIMATE_GATE = 0.5


@dataclass
class Fit:
    """The reference model carrying the weights, or why the weights do not fit it."""

    model: Transformer | None  # the reference architecture, built by the reference's train.build_model
    problem: str = ""  # student-facing, names the parameters (empty when it fits)
    detail: dict[str, Any] | None = None


def load_data(config: GraderConfig) -> PreparedData:
    """Prepared Multi30k as grader.yml's data section describes it.

    Args:
        config: the validated configuration.

    Returns:
        The prepared splits and vocabularies.
    """
    data = part2_settings(config).data
    return prepare_data(
        local_dir=data.local_dir, tokenizer=data.tokenizer, max_length=data.max_length, cache_dir=data.cache_dir
    )


def probe_batch(data: PreparedData, count: int = 8) -> list[Tensor]:
    """A few training pairs with the reference masks: [src (B, S), tgt (B, T), src mask, tgt mask]."""
    train = data.splits["train"]
    src, tgt = pad_pair_batch(train.src[:count], train.tgt[:count], PAD_IDX)
    return [
        src,
        tgt,
        create_padding_mask_for_attention(src, PAD_IDX),
        create_look_ahead_mask_for_attention(tgt, PAD_IDX),
    ]


def describe_unfitted(reference: list[tuple[str, list[int]]], student: list[tuple[str, list[int]]]) -> dict[str, Any]:
    """Which parameters keep two parameter lists from corresponding, by shape.

    Args:
        reference: the reference model's (name, shape) pairs.
        student: the submission's floating-point (name, shape) pairs.

    Returns:
        {"reference_only": [(name, shape)], "student_only": [(name, shape)]}: the parameters whose
        shape has no counterpart on the other side (in registration order).
    """

    def left_over(params: list[tuple[str, list[int]]], others: list[tuple[str, list[int]]]) -> list[tuple[str, str]]:
        # Per shape, the first parameters beyond the number of that shape in `others`.
        spare = Counter(tuple(s) for _, s in params) - Counter(tuple(s) for _, s in others)
        found = []
        for name, shape in params:
            if spare[tuple(shape)] > 0:
                spare[tuple(shape)] -= 1
                found.append((name, "(" + ", ".join(str(int(s)) for s in shape) + ")"))  # e.g. "(512, 256)"
        return found

    return {"reference_only": left_over(reference, student), "student_only": left_over(student, reference)}


def _named(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"`{name}` {shape}" for name, shape in pairs[:MAX_NAMED])
    return shown + (f" and {len(pairs) - MAX_NAMED} more" if len(pairs) > MAX_NAMED else "")


def map_onto_reference(worker: Worker, session: int, hparams: dict[str, Any], data: PreparedData) -> Fit:
    """Load the session's weights into the reference Transformer, if some mapping reproduces them.

    Args:
        worker: the worker holding the session.
        session: a handle whose `.model` is the submission's Transformer, with a `logits` method.
        hparams: the model sizes (embedding_dim, feed_forward_dim, num_heads, num_layers, drop_prob).
        data: prepared data (vocabularies and the probe batch).

    Returns:
        A Fit: the reference model carrying the student's weights, or the reason none fits.
    """
    state = {
        name.removeprefix("model."): tensor
        for name, tensor in worker.state(session).items()
        if name.startswith("model.")
    }
    vocab_sizes = {lang: len(v) for lang, v in data.vocabs.items()}
    model = build_model(hparams, vocab_sizes, data.max_length).eval()
    reference_params = [(n, list(p.shape)) for n, p in model.named_parameters()]
    student_params = [(n, list(tensor.shape)) for n, tensor in state.items() if tensor.is_floating_point()]
    unfitted = describe_unfitted(reference_params, student_params)
    if unfitted["reference_only"] or unfitted["student_only"]:
        # One sentence per side with left-over parameters (its message key: training.unfit.<side>).
        sides = "; ".join(t(f"training.unfit.{side}", names=_named(pairs)) for side, pairs in unfitted.items() if pairs)
        counts: dict[str, Any] = {"ref_count": len(reference_params), "stu_count": len(student_params)}
        return Fit(None, t("training.unfit.shapes", details=sides, **counts), unfitted)
    batch = probe_batch(data)
    student_logits = worker.run(session, "logits", batch, mode="eval")
    closest, expected_shape = None, None
    for mapping in candidate_mappings(reference_params, student_params):
        model.load_state_dict({ref: state[stu] for ref, stu in mapping.items()}, strict=False)
        with torch.no_grad():
            logits = model(*batch)
        expected_shape = tuple(logits.shape)
        if not isinstance(student_logits, Tensor) or logits.shape != student_logits.shape:
            continue
        if torch.allclose(logits, student_logits, rtol=1e-3, atol=1e-4):
            return Fit(model)
        difference = float((logits - student_logits).abs().max())
        closest = difference if closest is None else min(closest, difference)
    if closest is None and expected_shape is not None:  # not even the output's shape matches
        got = tuple(student_logits.shape) if isinstance(student_logits, Tensor) else type(student_logits).__name__
        return Fit(
            None,
            t("training.unfit.logits_shape", got=got, expected=expected_shape),
            {"student_output": str(got), "expected_shape": list(expected_shape)},
        )
    return Fit(
        None,
        t("training.unfit.logits", difference=f"{closest:.3g}" if closest is not None else "?"),
        {"max_logit_difference": closest},
    )


def memorisation_gap(validation_bleu: float, test_bleu: float, threshold: float) -> dict[str, Any]:
    """Compare validation and test BLEU of the same weights.

    Honest runs score the two splits alike (docs/TRAINING_MODES.md records the measured gaps); weights
    that saw the public validation pairs score far higher there.

    Args:
        validation_bleu: corpus BLEU on the validation split.
        test_bleu: corpus BLEU on the test split, same decoder.
        threshold: the largest validation - test gap accepted.

    Returns:
        {"validation_bleu", "test_bleu", "gap", "threshold", "flagged"}.
    """
    gap = float(validation_bleu) - float(test_bleu)
    return {
        "validation_bleu": round(float(validation_bleu), 4),
        "test_bleu": round(float(test_bleu), 4),
        "gap": round(gap, 4),
        "threshold": float(threshold),
        "flagged": gap > float(threshold),
    }


def evaluate_weights(
    worker: Worker,
    session: int,
    hparams: dict[str, Any],
    data: PreparedData,
    *,
    with_test: bool = False,
    gate_bar: float | None = None,
    teacher_forced: bool = True,
) -> dict[str, Any]:
    """BLEU of the session's current weights, decoded by the trusted side only.

    The original notebook's teacher-forced figure rides along, labelled as not graded, unless
    `teacher_forced` is False.

    Args:
        worker: the worker holding the session.
        session: the session's handle.
        hparams: the model sizes.
        data: prepared data.
        with_test: also score the test split (result key "test": bleu, sacrebleu, n_sentences).
        gate_bar: the pass bar, for a pause of training: score the first ESTIMATE_SENTENCES
            sentences first, and return that estimate ("estimate": True) when it is below
            ESTIMATE_GATE x gate_bar. None: the whole split.
        teacher_forced: add the teacher-forced figure (a forward pass over the whole split with the
            references as decoder input: about 10 CPU-s for the cpu profile's model, more than the
            greedy decoding itself). The training loop's pauses leave it out: only the final
            weights' figure is reported.

    Returns:
        `evaluate_model`'s result plus "evaluated_by"; when the weights do not fit, BLEU 0 with
        "not_fitted" (the student-facing reason) and "not_fitted_detail".
    """
    fit = map_onto_reference(worker, session, hparams, data)
    if fit.model is None:
        return {
            "bleu": 0.0,
            "sacrebleu": 0.0,
            "n_sentences": len(data.splits["validation"]),
            "split": "validation",
            "examples": [],
            "evaluated_by": NOT_FITTED,
            "not_fitted": fit.problem,
            "not_fitted_detail": fit.detail or {},
        }
    if gate_bar is not None:
        estimate = evaluate_model(fit.model, data, n_examples=0, limit=ESTIMATE_SENTENCES)
        if estimate["bleu"] < ESTIMATE_GATE * gate_bar:
            return {**estimate, "estimate": True, "evaluated_by": BY_REFERENCE}
    result = evaluate_model(fit.model, data, teacher_forced=teacher_forced)
    result["evaluated_by"] = BY_REFERENCE
    if with_test:
        test = evaluate_model(fit.model, data, split=TEST_SPLIT, n_examples=0)
        result["test"] = {k: test[k] for k in ("bleu", "sacrebleu", "n_sentences", "decode_s")}
    return result
