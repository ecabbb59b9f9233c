"""Hidden checks of MultiHeadAttention(embedding_dim, num_heads).forward(query, key, value, mask).

Built with a probe standing in for the student's ScaledDotProductAttention (when the class uses
it), so these checks grade the splitting, projections and merging whatever the state of the
student's attention. Query and key always have the same length (the given code's convention).
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.attention_encoder.checks import module_checks as mc
from assignments.attention_encoder.checks.cases import key_mask, padded_ids
from assignments.attention_encoder.checks.messages import t
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks
from autograder.checks.support import CheckContext, all_close, fail

D_MODEL, HEADS = 16, 4


def _case(gen: torch.Generator, lengths: list[int], width: int, self_attention: bool = True) -> list[Any]:
    mask = key_mask(padded_ids(gen, lengths, width, 20))
    x = torch.randn(len(lengths), width, D_MODEL, generator=gen)
    if self_attention:
        return [x, x, x, mask]
    return [x, torch.randn(x.shape, generator=gen), torch.randn(x.shape, generator=gen), mask.to(torch.int)]


def _cases(gen: torch.Generator) -> list[Any]:
    return [_case(gen, [5, 3], 5), _case(gen, [1], 1), _case(gen, [6, 6, 4], 6, self_attention=False)]


def _padding_pair(gen: torch.Generator) -> mc.CasePair:
    before = _case(gen, [4, 4, 7], 7, self_attention=False)
    after = list(before)
    for index in (1, 2):  # key and value change where the first rows are padding
        after[index] = before[index].clone()
        after[index][:2, 4:] = torch.randn(2, 3, D_MODEL, generator=gen) * 3
    return before, after, list(range(7))


def _context_change(gen: torch.Generator) -> tuple[list[Any], list[Any], int]:
    before = _case(gen, [6, 6], 6)
    x = before[0].clone()
    x[:, 2] = torch.randn(2, D_MODEL, generator=gen) * 3
    return before, [x, x, x, before[3]], 2


PART = mc.ModulePart(
    cls="MultiHeadAttention",
    ctor_args=lambda p: [D_MODEL, HEADS],
    make_cases=_cases,
    output_shape=lambda case: tuple(case[0].shape),
    layout_key="ae.layout.multi_head_attention",
    substitute={"ScaledDotProductAttention": "ProbeScaledDotProductAttention"},
    padding_pair=_padding_pair,
    context_change=_context_change,
    deviations=variants.HEADS,
)


def test_mha_permutation(ctx: CheckContext) -> None:
    """Reordering the positions (and the mask with them) reorders the output the same way: no
    position is tied to a head or to another position by the splitting. Credited only when the
    output at a position depends on the other positions."""
    handle = mc.CHECKS.student_module(ctx, PART, PART.drop_prob)
    gen = torch.Generator().manual_seed(ctx.seed + 23)
    query, key, value, mask = _case(gen, [6, 4], 6, self_attention=False)
    order = torch.randperm(6, generator=gen)
    permuted = [query[:, order], key[:, order], value[:, order], mask[:, :, order][:, :, :, order]]
    name = t("ae.module.output_name", cls=PART.cls)
    out = mc.expect_tensor(mc.CHECKS.run(ctx, PART, handle, [query, key, value, mask], "eval"), name)
    out_permuted = mc.expect_tensor(mc.CHECKS.run(ctx, PART, handle, permuted, "eval"), name)
    if out.shape != out_permuted.shape or not all_close(out[:, order], out_permuted):
        fail(mc.CHECKS.deviation_shown(ctx, PART) or t("ae.mha.permutation"))
    mc.CHECKS.require_context_use(ctx, PART)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "multi_head_attention"))
