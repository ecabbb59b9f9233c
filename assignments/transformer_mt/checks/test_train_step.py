"""Hidden check of part 4's training step: the model call in process_batch_for_train.

The student's step runs once inside the worker with a recording stand-in model and stand-ins for
the mask and loss functions (`probes.run_train_step`), so only the step's own work is graded: the
model gets the source, the whole target (the loss does the shift) and the two masks in their
places, the loss gets the model's output with that target, and the optimiser takes a step.
Both the template's signature and other spellings (names bound by role, globals for the model,
criterion and optimiser) are accepted.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from torch import Tensor, nn

import assignments.transformer_mt.reference.loss
import assignments.transformer_mt.reference.masks
from assignments.transformer_mt.checks.probes import TRAIN_STEP_HELPER
from assignments.transformer_mt.checks.token_batches import token_batch
from assignments.transformer_mt.messages import t
from autograder.checks.support import CheckContext, all_close, fail, require
from autograder.sandbox import Global

FUNCTION = "process_batch_for_train"
SRC_VOCAB, TGT_VOCAB = 29, 23


def _mask_is(mask: Any, want: Tensor) -> bool:
    """Whether a mask, read as booleans broadcast to `want`'s shape, equals `want` (bool)."""
    if not isinstance(mask, Tensor):
        return False
    try:
        return torch.equal((mask != 0).expand(want.shape), want)
    except RuntimeError:  # not broadcastable to that shape
        return False


def _same(value: Any, expected: Tensor) -> bool:
    return isinstance(value, Tensor) and value.shape == expected.shape and bool((value == expected).all())


def test_transformer_train_step(ctx: CheckContext) -> None:
    require(ctx, FUNCTION)
    gen = torch.Generator().manual_seed(ctx.seed + 41)
    src, tgt = token_batch(gen, 3, 7, SRC_VOCAB), token_batch(gen, 3, 6, TGT_VOCAB)  # ragged
    src_mask = assignments.transformer_mt.reference.masks.create_padding_mask_for_attention(src, 3)
    tgt_mask = assignments.transformer_mt.reference.masks.create_look_ahead_mask_for_attention(tgt, 3)
    report = ctx.student.call(
        TRAIN_STEP_HELPER, [Global(FUNCTION), src, tgt, src_mask, tgt_mask, SRC_VOCAB, TGT_VOCAB, ctx.seed]
    )
    if not isinstance(report, dict):
        fail(t("checks.train_step.not_run"))
    calls = report.get("calls")
    if calls == 0:
        fail(t("checks.train_step.no_model_call"))
    if calls != 1:
        fail(t("checks.train_step.model_calls", calls=calls))
    if not _same(report.get("src"), src):
        fail(t("checks.train_step.first_argument"))
    dec = report.get("dec")
    if not _same(dec, tgt):
        shifted = isinstance(dec, Tensor) and dec.dim() == 2 and dec.shape[1] == tgt.shape[1] - 1
        fail(t("checks.train_step.second_argument_shifted" if shifted else "checks.train_step.second_argument"))
    want_src = src_mask.expand(src.shape[0], 1, src.shape[1], src.shape[1]) != 0
    want_tgt = tgt_mask != 0
    if not _mask_is(report.get("src_mask"), want_src):
        masks_swapped = _mask_is(report.get("src_mask"), want_tgt)
        fail(t("checks.train_step.third_argument_swapped" if masks_swapped else "checks.train_step.third_argument"))
    if not _mask_is(report.get("tgt_mask"), want_tgt):
        fail(t("checks.train_step.fourth_argument"))
    logits = report.get("logits")
    if report.get("loss_calls"):
        if not (
            isinstance(logits, Tensor)
            and isinstance(report.get("loss_output"), Tensor)
            and all_close(report["loss_output"], logits)
        ):
            fail(t("checks.train_step.loss_input"))
        if not _same(report.get("loss_target"), tgt):
            fail(t("checks.train_step.loss_target"))
        expected_loss = float(logits.float().square().mean())
    else:
        # A step that computes the loss itself must compute the masked loss of the assignment.
        # The mask checks above passed, so the model ran and its output was recorded.
        expected_loss = float(
            assignments.transformer_mt.reference.loss.calculate_loss(
                cast(Tensor, logits), tgt, nn.CrossEntropyLoss(reduction="none"), pad_idx=3
            )
        )
    returned = report.get("returned")
    if not isinstance(returned, float):
        fail(t("checks.train_step.returns", returned=f"`{repr(returned)[:60]}`"))
    if abs(returned - expected_loss) > 1e-4 * max(1.0, abs(expected_loss)):
        fail(t("checks.train_step.wrong_loss"))
    initial, final = report.get("initial"), report.get("final")
    if not (
        isinstance(initial, list)
        and isinstance(final, list)
        and len(initial) == len(final)
        and all(isinstance(tensor, Tensor) for tensor in initial + final)
    ):
        fail(t("checks.train_step.not_judged"))
    if all(a.shape == b.shape and bool((a == b).all()) for a, b in zip(initial, final, strict=False)):
        fail(t("checks.train_step.unchanged"))
