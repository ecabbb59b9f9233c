"""Hidden checks of part 1: create_look_ahead_mask_for_attention(tgt_batch, pad_idx)."""

from __future__ import annotations

import torch
from torch import Tensor

import assignments.transformer_mt.reference.masks
from assignments.transformer_mt.checks.token_batches import token_batch
from assignments.transformer_mt.messages import t
from autograder.checks.support import CheckContext, expect_tensor, fail, first_mismatch, require

FUNCTION = "create_look_ahead_mask_for_attention"

# (batch, length, pad_idx, ragged): includes T=1, no padding, and a pad_idx other than 3.
CASES = [(1, 1, 3, False), (2, 6, 3, False), (3, 5, 3, True), (8, 12, 3, True), (4, 7, 0, True), (5, 9, 3, True)]


def _student_mask(ctx: CheckContext, batch: Tensor, pad_idx: int) -> Tensor:
    require(ctx, FUNCTION)
    # The student's function may read the global pad_idx; keep it consistent with the argument.
    mask = ctx.student.call(FUNCTION, [batch, pad_idx], set_globals={"pad_idx": pad_idx})
    B, T = batch.shape
    return expect_tensor(mask, t("checks.mask.what", shape=f"`{(B, T)}`"), shape=(B, 1, T, T))


def _cases(ctx: CheckContext, vocab: int = 20) -> list[tuple[Tensor, int]]:
    gen = torch.Generator().manual_seed(ctx.seed + 101)
    return [(token_batch(gen, b, t, vocab, pad, ragged), pad) for b, t, pad, ragged in CASES]


def test_mask_shape_and_dtype(ctx: CheckContext) -> None:
    for batch, pad_idx in _cases(ctx):
        mask = _student_mask(ctx, batch, pad_idx)
        if mask.dtype.is_complex or (mask.is_floating_point() and not bool(((mask == 0) | (mask == 1)).all())):
            fail(t("checks.mask.float_values", dtype=f"`{mask.dtype}`"))
        if mask.dtype != torch.bool and not bool(((mask == 0) | (mask == 1)).all()):
            fail(t("checks.mask.values"))


def test_mask_blocks_future(ctx: CheckContext) -> None:
    gen = torch.Generator().manual_seed(ctx.seed + 102)
    for batch_size, length in [(2, 6), (1, 4), (3, 11)]:
        batch = token_batch(gen, batch_size, length, 20, ragged=False)
        mask = _student_mask(ctx, batch, 3) != 0
        causal = torch.ones(length, length).tril().bool()
        where = first_mismatch(mask[:, 0], causal.expand(batch_size, -1, -1), close=False)
        if where is not None:
            b, i, j = where
            if j > i:
                fail(t("checks.mask.sees_later", i=i, j=j, row=b, length=length))
            if j == i:
                fail(t("checks.mask.hides_itself", i=i, row=b, length=length))
            fail(t("checks.mask.hides_earlier", i=i, j=j, row=b, length=length))


# A mask that blocks padding only earns the point when it also opens (query, non-padding key) pairs
# at least half as often as a correct mask does: blocking (almost) everything blocks padding for
# free. Which pairs it opens is the other checks' business (a triangle the wrong way round still
# does this work).
MIN_OPEN_FRACTION = 0.5


def test_mask_blocks_padding(ctx: CheckContext) -> None:
    must_open = opened = 0
    for batch, pad_idx in _cases(ctx):
        mask = _student_mask(ctx, batch, pad_idx) != 0
        allowed = assignments.transformer_mt.reference.masks.create_look_ahead_mask_for_attention(batch, pad_idx) != 0
        key_is_real = (batch != pad_idx)[:, None, None, :]
        must_open += int(allowed.sum())
        opened += int((mask & key_is_real).sum())
        leaks = mask & ~key_is_real
        if bool(leaks.any()):
            b, _, i, j = (int(x) for x in leaks.nonzero()[0])
            fail(t("checks.mask.sees_padding", i=i, j=j, pad_idx=pad_idx, row=b))
    if opened < MIN_OPEN_FRACTION * must_open:
        fail(t("checks.mask.too_closed", opened=opened, must_open=must_open))


def test_mask_matches_reference(ctx: CheckContext) -> None:
    for batch, pad_idx in _cases(ctx):
        mask = _student_mask(ctx, batch, pad_idx) != 0
        expected = assignments.transformer_mt.reference.masks.create_look_ahead_mask_for_attention(batch, pad_idx) != 0
        where = first_mismatch(mask, expected, close=False)
        if where is not None:
            row, _, query, key = where
            key_name = "checks.mask.differs_open" if bool(mask[where]) else "checks.mask.differs_blocked"
            fail(t(key_name, shape=tuple(batch.shape), pad_idx=pad_idx, row=row, query=query, key=key))
