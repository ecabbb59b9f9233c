"""Hidden checks of ScaledDotProductAttention(embedding_dim, attention_dim).forward(q, k, v, mask)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

import assignments.attention_encoder.reference as part1
from assignments.attention_encoder.checks.cases import key_mask, padded_ids
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.checks.module_checks import expect_tensor
from autograder.checks.support import CheckContext, all_close, fail, max_difference, require

CLASS = "ScaledDotProductAttention"
EMBEDDING_DIM, ATTENTION_DIM = 16, 4  # a wrong scale (sqrt(embedding_dim)) differs from the right one
TOLERANCE = 1e-4


def _cases(ctx: CheckContext) -> list[list[Tensor]]:
    """[query, key, value, mask] cases: padding (bool), a random int mask with Lq != Lk and
    dv != dk, and a causal mask broadcast over the batch. Every query row sees some key."""
    gen = torch.Generator().manual_seed(ctx.seed + 201)
    dk = ATTENTION_DIM
    ids = padded_ids(gen, [5, 3], 5, 20)
    first = [torch.randn(2, 2, 5, dk, generator=gen) * 1.5 for _ in range(3)] + [key_mask(ids)]
    random_mask = (torch.rand(1, 1, 4, 6, generator=gen) > 0.4).to(torch.int)
    random_mask[..., 0] = 1
    second = [
        torch.randn(1, 3, 4, dk, generator=gen) * 1.5,
        torch.randn(1, 3, 6, dk, generator=gen) * 1.5,
        torch.randn(1, 3, 6, 5, generator=gen),
        random_mask,
    ]
    causal = torch.ones(7, 7, dtype=torch.bool).tril()[None, None]
    third = [torch.randn(3, 1, 7, dk, generator=gen) * 2.0 for _ in range(3)] + [causal]
    return [first, second, third]


def _module(ctx: CheckContext) -> int:
    if "sdpa" not in ctx.cache:
        require(ctx, CLASS)
        ctx.cache["sdpa"] = ctx.student.new(CLASS, [EMBEDDING_DIM, ATTENTION_DIM], seed=ctx.seed)
    handle: int = ctx.cache["sdpa"]
    return handle


def _run(ctx: CheckContext, case: list[Any]) -> Tensor:
    query, key, value, mask = case
    out = ctx.student.run(_module(ctx), "forward", [query, key, value, mask], mode="eval")
    want = (*torch.broadcast_shapes(query.shape[:-2], key.shape[:-2]), query.shape[-2], value.shape[-1])
    return expect_tensor(out, t("ae.module.output_name", cls=CLASS), shape=want, floating=True)


def _weights(ctx: CheckContext, case: list[Any]) -> Tensor:
    """The student's attention weights: the output when the values are the identity matrix."""
    query, key, _, mask = case
    lk = key.shape[-2]
    identity = torch.eye(lk).expand(*key.shape[:-2], lk, lk).contiguous()
    return _run(ctx, [query, key, identity, mask])


def test_attention_output_shape(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        _run(ctx, case)


def test_attention_masking(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        weights = _weights(ctx, case)
        visible = (case[3] != 0).expand_as(weights)
        if bool((weights < -TOLERANCE).any()) or not torch.allclose(
            weights.sum(-1), torch.ones(weights.shape[:-1]), atol=TOLERANCE
        ):
            fail(t("ae.attention.not_distribution"))
        leaked = weights.masked_select(~visible)
        if leaked.numel() and float(leaked.abs().max()) > 1e-6:
            fail(t("ae.attention.mask_leaks", weight=f"{float(leaked.abs().max()):.3g}"))
        # Evidence of work: within a row, the visible keys get different weights (the scores
        # depend on query and key). Uniform weights over the visible keys earn nothing here.
        spread = (weights.masked_fill(~visible, 0).amax(-1) - weights.masked_fill(~visible, 2).amin(-1)).amax()
        if float(spread) < 1e-3:
            fail(t("ae.attention.uniform"))


def test_attention_scaling(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        query, key, _, mask = case
        weights = _weights(ctx, case)
        want = part1.attention_weights(query, key, mask, ATTENTION_DIM)
        if all_close(weights, want):
            continue
        alternatives = {"none": 1.0, "embedding_dim": math.sqrt(EMBEDDING_DIM), "attention_dim": float(ATTENTION_DIM)}
        for name, scale in alternatives.items():
            wrong = part1.attention_weights(query * math.sqrt(ATTENTION_DIM) / scale, key, mask, ATTENTION_DIM)
            if all_close(weights, wrong):
                fail(t(f"ae.attention.scale_{name}"))
        fail(t("ae.attention.weights", difference=f"{max_difference(weights, want):.3g}"))


def test_attention_values(ctx: CheckContext) -> None:
    for case in _cases(ctx):
        got = _run(ctx, case)
        query, key, value, mask = case
        want = part1.ScaledDotProductAttention(EMBEDDING_DIM, ATTENTION_DIM)(query, key, value, mask)
        if not all_close(got, want):
            fail(t("ae.attention.values", difference=f"{max_difference(got, want):.3g}"))


def test_attention_gradients(ctx: CheckContext) -> None:
    case = _cases(ctx)[0]
    query, key, value, mask = (x.clone() for x in case)
    leaves = [x.requires_grad_(True) for x in (query, key, value)]
    want = part1.ScaledDotProductAttention(EMBEDDING_DIM, ATTENTION_DIM)(*leaves, mask)
    upstream = torch.randn(want.shape, generator=torch.Generator().manual_seed(ctx.seed + 202))
    want.backward(upstream)
    result = ctx.student.run(_module(ctx), "forward", list(case), mode="eval", grad=upstream, grad_wrt=[0, 1, 2])
    for name, leaf, got in zip(("query", "key", "value"), leaves, result["grads"], strict=True):
        if got is None or not bool(got.abs().sum() > 0):
            fail(t("ae.attention.no_gradient", name=name))
        assert leaf.grad is not None
        if not all_close(got, leaf.grad):
            fail(t("ae.attention.gradient", name=name, difference=f"{max_difference(got, leaf.grad):.3g}"))
