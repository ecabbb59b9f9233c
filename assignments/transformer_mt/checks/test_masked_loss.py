"""Hidden checks of part 5: calculate_loss(decoder_output, tgt_batch, criterion)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

import assignments.transformer_mt.reference.loss
from assignments.transformer_mt.checks.token_batches import token_batch
from assignments.transformer_mt.messages import t
from autograder.checks.support import CheckContext, all_close, expect_tensor, fail, max_difference, require
from autograder.sandbox import TorchObject

FUNCTION = "calculate_loss"
# (batch, length, vocab, pad_idx, label smoothing): includes a length-2 batch and a pad_idx other
# than 3. A loss that builds a criterion of its own instead of the given one (the training recipe's
# is label-smoothed) gives another value where the given criterion smooths.
CASES = [(2, 6, 11, 3, 0.0), (4, 9, 17, 3, 0.1), (3, 2, 11, 3, 0.0), (5, 8, 13, 0, 0.1)]


Case = tuple[Tensor, Tensor, int, int, float]  # logits (B, T, V), tgt (B, T), vocab, pad_idx, smoothing


def _cases(ctx: CheckContext) -> list[Case]:
    gen = torch.Generator().manual_seed(ctx.seed + 23)
    cases = []
    for batch, length, vocab, pad_idx, smoothing in CASES:
        tgt = token_batch(gen, batch, length, vocab, pad_idx, ragged=True)
        logits = torch.randn(batch, length, vocab, generator=gen) * 2
        cases.append((logits, tgt, vocab, pad_idx, smoothing))
    return cases


def _student_loss(ctx: CheckContext, case: Case, logits: Tensor | None = None, grad: bool = False) -> Any:
    """The student's loss on a case (with other logits if given): a tensor, or with grad its gradients."""
    require(ctx, FUNCTION)
    given, tgt, vocab, pad_idx, smoothing = case
    criterion = TorchObject("CrossEntropyLoss", {"reduction": "none", "label_smoothing": smoothing})
    # The template's calculate_loss reads these globals; they must describe this batch.
    set_globals = {"pad_idx": pad_idx, "vocab_size": {"de": vocab, "en": vocab}}
    args = [given if logits is None else logits, tgt, criterion]
    result = ctx.student.call(FUNCTION, args, set_globals=set_globals, grad_wrt=[0] if grad else None)
    return result if grad else expect_tensor(result, "calculate_loss's result", floating=True)


def _reference_loss(logits: Tensor, tgt: Tensor, pad_idx: int, smoothing: float) -> Tensor:
    criterion = nn.CrossEntropyLoss(reduction="none", label_smoothing=smoothing)
    return assignments.transformer_mt.reference.loss.calculate_loss(logits, tgt, criterion, pad_idx)


def test_loss_is_scalar(ctx: CheckContext) -> None:
    loss = _student_loss(ctx, _cases(ctx)[0])
    if loss.numel() != 1:
        fail(t("checks.loss.shape", shape=tuple(loss.shape)))


def test_loss_value(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        logits, tgt, _, pad_idx, smoothing = case
        got = _student_loss(ctx, case)
        want = _reference_loss(logits, tgt, pad_idx, smoothing)
        if got.numel() != 1 or not all_close(got.reshape(()), want):
            value = float(got.reshape(-1)[0]) if got.numel() else float("nan")
            used = 0.1 - smoothing  # the other criterion of the cases
            if got.numel() == 1 and all_close(got.reshape(()), _reference_loss(logits, tgt, pad_idx, used)):
                fail(t("checks.loss.criterion_ignored", smoothing=smoothing, used=used))
            fail(t("checks.loss.value", shape=tuple(logits.shape), pad_idx=pad_idx, value=value, want=float(want)))


def test_loss_ignores_padding(ctx: CheckContext) -> None:
    gen = torch.Generator().manual_seed(ctx.seed + 29)
    for case in _cases(ctx):
        logits, tgt, _, pad_idx, _ = case
        next_is_pad = tgt[:, 1:] == pad_idx  # (B, T-1): predictions scored against pad
        if not bool(next_is_pad.any()):
            continue
        changed = logits.clone()
        noise = torch.randn(changed[:, :-1][next_is_pad].shape, generator=gen) * 5
        changed[:, :-1][next_is_pad] = noise
        if not all_close(_student_loss(ctx, case), _student_loss(ctx, case, changed)):
            fail(t("checks.loss.padding_counts"))
    _require_scoring(ctx)


def _require_scoring(ctx: CheckContext) -> None:
    """Ignoring padding is only credited to a loss that scores the other predictions: changing
    them changes it, and raising every right next-token logit lowers it."""
    gen = torch.Generator().manual_seed(ctx.seed + 31)
    case = _cases(ctx)[0]  # plain cross-entropy
    logits, tgt, _, pad_idx, _ = case
    scored = tgt[:, 1:] != pad_idx  # (B, T-1): predictions with a real target
    changed = logits.clone()
    changed[:, :-1][scored] = torch.randn(changed[:, :-1][scored].shape, generator=gen) * 5
    better = logits.clone()
    rows, cols = scored.nonzero(as_tuple=True)
    better[rows, cols, tgt[rows, cols + 1]] += 6.0
    base, moved, improved = (_student_loss(ctx, case, x) for x in (logits, changed, better))
    if base.numel() != 1 or all_close(base, moved):
        fail(t("checks.loss.not_scored"))
    if not float(improved.reshape(())) < float(base.reshape(())):
        fail(t("checks.loss.not_shifted"))


def test_loss_gradient(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        logits, tgt, _, pad_idx, smoothing = case
        got = _student_loss(ctx, case, grad=True)["grads"][0]
        leaf = logits.clone().requires_grad_(True)
        (want,) = torch.autograd.grad(_reference_loss(leaf, tgt, pad_idx, smoothing), leaf)
        if got is None:
            fail(t("checks.loss.no_gradient"))
        if not all_close(got, want):
            fail(t("checks.loss.gradient", difference=max_difference(got, want), shape=tuple(logits.shape)))
